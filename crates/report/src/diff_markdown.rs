//! Markdown report of a diff, sized for a code-review comment: a summary table, then
//! the planned sections (see `plan`) in fenced blocks, spelled as in the text report.

use std::fmt::{self, Write};

use super::diff_lines::{blocks, closing, improvements_line, legend, quiet_line};
use super::plan::Plan;

/// Writes the planned report as Markdown.
pub fn render(out: &mut impl Write, p: &Plan<'_>) -> fmt::Result {
    let r = p.report;
    writeln!(
        out,
        "### layout-diff: `{}` -> `{}`\n\nline {} B ({}), pair {} B\n",
        r.old.file,
        r.new.file,
        r.line_size,
        r.new.line_size_from,
        2 * r.line_size
    )?;
    if p.empty {
        return writeln!(out, "no changes");
    }
    p.summary_table().markdown(out)?;
    writeln!(out, "\n{}\n", legend().replace('\n', " "))?;
    if let Some(l) = improvements_line(r) {
        writeln!(out, "{l}\n")?;
    }
    writeln!(out, "{}", quiet_line(r))?;
    for (title, lines) in blocks(p) {
        writeln!(out, "\n**{title}**\n\n```")?;
        for l in lines {
            writeln!(out, "{l}")?;
        }
        writeln!(out, "```")?;
    }
    writeln!(out, "\n{}", closing(p))
}
