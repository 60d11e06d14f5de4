//! Markdown report of a diff, sized for a code-review comment: a summary table, then
//! the planned sections (see `plan`) in fenced blocks, spelled as in the text report.

use std::fmt::Write;

use super::diff_lines::{blocks, closing, improvements_line, legend, quiet_line};
use super::plan::Plan;

pub fn render(p: &Plan<'_>) -> String {
    let r = p.report;
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
    if p.empty {
        let _ = writeln!(out, "no changes");
        return out;
    }
    let _ = writeln!(
        out,
        "| | changed | flagged | moved in line | shift runs | whole-line runs | added | removed |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, c) in p.summary {
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
    for (title, lines) in blocks(p) {
        let _ = writeln!(out, "\n**{title}**\n\n```");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        let _ = writeln!(out, "```");
    }
    let _ = writeln!(out, "\n{}", closing(r, p.cut));
    out
}
