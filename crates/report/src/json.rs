//! JSON output: a versioned envelope around the serializable results, so scripts can
//! check `format` and `version` before reading.

use serde::Serialize;

use layout_diff_core::show::Header;

/// Version of the JSON documents; bumped on any incompatible change (CHANGELOG.md's
/// preamble says which), with a `JSON version: N` line under its `[Unreleased]`
/// (tests/changelog.rs checks that the newest such line is this number).
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

/// `{"format": kind, "version": 1, <header fields>, <body fields>}`, indented.
pub fn render<T: Serialize>(kind: &str, header: &Header, body: T) -> serde_json::Result<String> {
    let env = Envelope {
        format: kind,
        version: VERSION,
        header,
        body,
    };
    serde_json::to_string_pretty(&env)
}

#[derive(Serialize)]
struct Document<'a, T: Serialize> {
    format: &'a str,
    version: u32,
    #[serde(flatten)]
    body: T,
}

/// `{"format": kind, "version": 1, <body fields>}` on one line, for bodies that carry
/// their own headers (a diff of two vmlinux files holds tens of thousands of changes).
pub fn document<T: Serialize>(kind: &str, body: T) -> serde_json::Result<String> {
    let doc = Document {
        format: kind,
        version: VERSION,
        body,
    };
    serde_json::to_string(&doc)
}
