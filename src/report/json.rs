//! JSON output: a versioned envelope around the serializable results, so scripts can
//! check `format` and `version` before reading.

use serde::Serialize;

use crate::show::Header;

/// Version of the JSON documents; bumped on any incompatible change.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    format: &'a str,
    version: u32,
    #[serde(flatten)]
    header: &'a Header,
    #[serde(flatten)]
    body: T,
}

/// `{"format": kind, "version": 1, <header fields>, <body fields>}`.
pub fn render<T: Serialize>(kind: &str, header: &Header, body: T) -> String {
    let env = Envelope {
        format: kind,
        version: VERSION,
        header,
        body,
    };
    serde_json::to_string_pretty(&env).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

#[derive(Serialize)]
struct Document<'a, T: Serialize> {
    format: &'a str,
    version: u32,
    #[serde(flatten)]
    body: T,
}

/// `{"format": kind, "version": 1, <body fields>}`, for bodies that carry their own headers.
pub fn document<T: Serialize>(kind: &str, body: T) -> String {
    let doc = Document {
        format: kind,
        version: VERSION,
        body,
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
