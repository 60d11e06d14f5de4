//! Text report of a diff: header, summary table, then the planned sections (see
//! `plan`), each item spelled by `diff_lines`.

use std::fmt::Write;

use prettytable::{Table, format, row};

use super::diff_lines::{blocks, build, closing, improvements_line, legend, quiet_line};
use super::plan::Plan;

/// The planned report as text.
pub fn render(p: &Plan<'_>) -> String {
    let r = p.report;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "layout-diff  {} ({})  ->  {} ({})",
        r.old.file,
        build(&r.old.build_id),
        r.new.file,
        build(&r.new.build_id)
    );
    let _ = writeln!(
        out,
        "line {} B ({}), pair {} B",
        r.line_size,
        r.new.line_size_from,
        2 * r.line_size
    );
    if p.empty {
        let _ = writeln!(out, "\nno changes");
        return out;
    }
    let mut t = Table::new();
    t.set_format(*format::consts::FORMAT_CLEAN);
    t.set_titles(row!["", r->"changed", r->"flagged", r->"moved in line", r->"shift runs", r->"whole-line runs", r->"added", r->"removed"]);
    for (name, c) in p.summary {
        t.add_row(row![name, r->c.changed, r->c.flagged, r->c.line_offset_changed, r->c.runs, r->c.whole_line_runs, r->c.added, r->c.removed]);
    }
    let _ = write!(out, "\n{t}");
    let _ = writeln!(out, "{}", legend());
    if let Some(l) = improvements_line(r) {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "{}", quiet_line(r));
    for (title, lines) in blocks(p) {
        let _ = writeln!(out, "\n{title}");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
    }
    let _ = writeln!(out, "\n{}", closing(r, p.cut));
    out
}
