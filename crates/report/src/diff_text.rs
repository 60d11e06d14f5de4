//! Text report of a diff: header, summary table, then the planned sections (see
//! `plan`), each item spelled by `diff_lines`.

use std::fmt::{self, Write};

use layout_diff_core::diff::Report;

use super::diff_lines::{blocks, build, closing, improvements_line, legend, quiet_line};
use super::plan::{Plan, View, plan};
use super::wrap::{WIDTH, fit_text};

/// Writes the planned report as text, every line as the plan spells it (see
/// `render_fitted` for the terminal's width and height).
pub fn render(out: &mut impl Write, p: &Plan<'_>) -> fmt::Result {
    let r = p.report;
    header(out, r)?;
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

/// Lines of the header before the line size: each build's path on one line and what
/// it is (kernel release, build-id) on the next, so that no path's length moves
/// anything else.
fn header(out: &mut impl Write, r: &Report<'_>) -> fmt::Result {
    for (i, (side, h)) in [("old", &r.old), ("new", &r.new)].into_iter().enumerate() {
        let lead = if i == 0 { "layout-diff" } else { "" };
        let facts = match &h.kernel_version {
            Some(v) => format!("Linux {v}, {}", build(&h.build_id)),
            None => build(&h.build_id),
        };
        writeln!(out, "{lead:<11}  {side}  {}", h.file)?;
        writeln!(out, "{:<11}       {facts}", "")?;
    }
    for note in &r.inputs {
        writeln!(out, "note: {note}")?;
    }
    for f in r.hot_files.iter().filter(|f| f.is_partial()) {
        writeln!(out, "note: {}", f.note())?;
    }
    writeln!(
        out,
        "line {} B ({}), pair {} B",
        r.line_size,
        r.new.line_size_from,
        2 * r.line_size
    )
}

/// The planned report for a terminal: every line fitted to `WIDTH` columns
/// (`wrap::fit`) and, for the default view, at most `max_lines` lines: while the
/// fitted report is longer, the plan is made again, first with a compact functions
/// section, then with fewer lines of items (the header, summary and closing lines are
/// never cut). `--all` and an explicit limit
/// keep their items, fitted to the width.
pub fn render_fitted<'r>(
    report: &'r Report<'r>,
    view: View,
    max_lines: Option<usize>,
) -> Result<String, fmt::Error> {
    let fitted = |view: View| -> Result<String, fmt::Error> {
        let mut raw = String::new();
        render(&mut raw, &plan(report, view))?;
        Ok(fit_text(&raw, WIDTH))
    };
    let text = fitted(view)?;
    let (Some(max), Some(limit)) = (max_lines, view.limit) else {
        return Ok(text);
    };
    if text.lines().count() <= max {
        return Ok(text);
    }
    let compact = View {
        compact: true,
        ..view
    };
    // The largest limit whose fitted report fits (lines grow with the limit): a
    // binary search between none and the limit asked for.
    let (mut lo, mut hi) = (0, limit);
    let mut best = fitted(View {
        limit: Some(0),
        ..compact
    })?;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let t = fitted(View {
            limit: Some(mid),
            ..compact
        })?;
        if t.lines().count() <= max {
            (lo, best) = (mid, t);
        } else {
            hi = mid - 1;
        }
    }
    Ok(best)
}
