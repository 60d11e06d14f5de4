//! Text report of a diff: header, summary table, then the planned sections (see
//! `plan`), each item spelled by `diff_lines`.

use std::fmt::{self, Write};

use super::diff_lines::{blocks, build, closing, improvements_line, legend, quiet_line};
use super::plan::Plan;

/// Writes the planned report as text.
pub fn render(out: &mut impl Write, p: &Plan<'_>) -> fmt::Result {
    let r = p.report;
    writeln!(
        out,
        "layout-diff  {} ({})  ->  {} ({})",
        r.old.file,
        build(&r.old.build_id),
        r.new.file,
        build(&r.new.build_id)
    )?;
    writeln!(
        out,
        "line {} B ({}), pair {} B",
        r.line_size,
        r.new.line_size_from,
        2 * r.line_size
    )?;
    if p.empty {
        return writeln!(out, "\nno changes");
    }
    out.write_char('\n')?;
    p.summary_table().text(out)?;
    writeln!(out, "{}", legend())?;
    if let Some(l) = improvements_line(r) {
        writeln!(out, "{l}")?;
    }
    writeln!(out, "{}", quiet_line(r))?;
    for (title, lines) in blocks(p) {
        writeln!(out, "\n{title}")?;
        for l in lines {
            writeln!(out, "{l}")?;
        }
    }
    writeln!(out, "\n{}", closing(r, p.cut))
}
