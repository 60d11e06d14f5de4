//! Markdown report of a diff, sized for a code-review comment: a summary table, then
//! the same ranked sections as the text report in a fenced block.

use std::fmt::Write;

use super::diff_text::{
    View, closing, improvements_line, legend, nothing_changed, quiet_line, sections, summary_rows,
};
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
    if nothing_changed(r) && r.pinned_symbols.is_empty() && r.pinned_structs.is_empty() {
        let _ = writeln!(out, "no changes");
        return out;
    }
    let _ = writeln!(
        out,
        "| | changed | flagged | moved in line | shift runs | whole-line runs | added | removed |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, c) in summary_rows(r) {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            c.changed,
            c.flagged,
            c.line_offset_changed,
            c.runs,
            c.whole_line_runs,
            c.added,
            c.removed
        );
    }
    let _ = writeln!(out, "\n{}\n", legend().replace('\n', " "));
    if let Some(l) = improvements_line(r) {
        let _ = writeln!(out, "{l}\n");
    }
    let _ = writeln!(out, "{}", quiet_line(r));
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
