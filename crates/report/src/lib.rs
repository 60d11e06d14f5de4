//! Renderers: turn query and diff results into text, JSON, Markdown or HTML. They compute
//! nothing; every number they print was computed by `show`, `layout` or `diff`.

#![warn(missing_docs)]

#[cfg(test)]
#[macro_use]
mod fixtures;

pub mod access_text;
pub mod check_markdown;
pub mod check_text;
pub mod contention_text;
pub mod diff_lines;
pub mod diff_markdown;
pub mod diff_text;
pub mod explain;
pub mod history_text;
pub mod hot_text;
pub mod html;
pub mod json;
pub mod pahole;
pub mod plan;
pub mod show_text;
pub mod suggest_doc;
pub mod suggest_markdown;
pub mod suggest_text;
pub mod table;
pub mod wrap;

/// Output format chosen with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text for a terminal.
    Text,
    /// JSON (docs/json.md).
    Json,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained HTML page.
    Html,
}

/// `ffffffff82a51be0` for addresses, `0x233e0` for per-CPU offsets.
pub fn place_str(space: layout_diff_core::model::Space, place: u64) -> String {
    match space {
        layout_diff_core::model::Space::Global => format!("{place:016x}"),
        layout_diff_core::model::Space::Percpu => format!("percpu+{place:#x}"),
    }
}

/// Runs a renderer into a new String: for the binary, which writes the String to
/// stdout, and for text a page embeds. Writing into a String fails only when a value
/// fails to format itself; that error is passed on.
pub fn string(
    render: impl FnOnce(&mut String) -> std::fmt::Result,
) -> Result<String, std::fmt::Error> {
    let mut out = String::new();
    render(&mut out)?;
    Ok(out)
}
