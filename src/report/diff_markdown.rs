//! Markdown report of a diff, sized for a code-review comment: a summary table, then
//! the same ranked sections as the text report in a fenced block.

use std::fmt::Write;

use super::diff_text::{View, closing, sections, summary_rows};
use crate::diff::Report;

pub fn render(r: &Report, view: View) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### layout-diff: `{}` -> `{}`\n\nline {} B ({}), pair {} B\n",
        r.old.file,
        r.new.file,
        r.line_size,
        r.new.line_size_from,
        2 * r.line_size
    );
    if r.flagged == 0 && r.pinned_symbols.is_empty() && r.pinned_structs.is_empty() {
        let _ = writeln!(out, "no changes");
        return out;
    }
    let _ = writeln!(
        out,
        "| | changed | flagged | moved in line | shift runs | added | removed |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for (name, c) in summary_rows(r) {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            c.changed, c.flagged, c.line_offset_changed, c.runs, c.added, c.removed
        );
    }
    let (sections, cut) = sections(r, view);
    for (title, lines) in sections {
        let _ = writeln!(out, "\n**{title}**\n\n```");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        let _ = writeln!(out, "```");
    }
    let _ = writeln!(out, "\n{}", closing(r, cut));
    out
}
