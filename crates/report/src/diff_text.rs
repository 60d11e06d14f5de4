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
    writeln!(out, "\n{}", closing(p))
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
/// fitted report is longer, the plan is made again with fewer lines of items, first
/// with a compact functions section and, when that leaves a flagged item on one line
/// or out, with the parts that have no flag at their least (`View::bare`): flagged
/// items get the lines before anything without a flag. The header, summary and
/// closing lines are never cut. `--all` and an explicit limit keep their items,
/// fitted to the width.
pub fn render_fitted<'r>(
    report: &'r Report<'r>,
    view: View,
    max_lines: Option<usize>,
) -> Result<String, fmt::Error> {
    let text = fitted(report, view)?.0;
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
    let (text, short) = largest_fitting(report, compact, limit, max)?;
    if short == 0 {
        return Ok(text);
    }
    let bare = View {
        bare: true,
        ..compact
    };
    Ok(largest_fitting(report, bare, limit, max)?.0)
}

/// The report of `view` fitted to the width, with how many flagged items it shows on
/// one line or leaves out (`Plan::flagged_short`).
fn fitted<'r>(report: &'r Report<'r>, view: View) -> Result<(String, usize), fmt::Error> {
    let p = plan(report, view);
    let mut raw = String::new();
    render(&mut raw, &p)?;
    Ok((fit_text(&raw, WIDTH), p.flagged_short()))
}

/// The fitted report of `view` with the largest limit up to `limit` whose report is at
/// most `max` lines (lines grow with the limit: a binary search between none and
/// `limit`), with its `Plan::flagged_short`.
fn largest_fitting<'r>(
    report: &'r Report<'r>,
    view: View,
    limit: usize,
    max: usize,
) -> Result<(String, usize), fmt::Error> {
    let at = |l: usize| {
        fitted(
            report,
            View {
                limit: Some(l),
                ..view
            },
        )
    };
    let (mut lo, mut hi) = (0, limit);
    let mut best = at(0)?;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let t = at(mid)?;
        if t.0.lines().count() <= max {
            (lo, best) = (mid, t);
        } else {
            hi = mid - 1;
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout_diff_core::diff::{DiffOptions, diff};
    use layout_diff_core::input::InputFile;
    use layout_diff_core::load::LoadOptions;

    /// The default report fitted to fewer and fewer lines on testdata/suggest (2 flagged:
    /// `rm_lost` 5 lines in full and `struct sk_like` 4; a functions section with a run
    /// and 2 known-hot functions, 6 lines compact; 2 hot objects and a cause not flagged).
    /// The flagged items keep their lines longest: the functions section is cut to its
    /// counts before a flagged item is cut to one line, and they are cut to one line
    /// each before one is left out, which the closing line then counts.
    #[test]
    fn the_parts_without_a_flag_give_up_their_lines_first() {
        let testdata = testdata!();
        let open = |n: &str| InputFile::open(&testdata.join(n)).expect("fixture");
        let (old, new) = (open("suggest/old.elf"), open("suggest/new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let report = diff(&old, &new, &DiffOptions::default());
        assert_eq!(report.flagged, 2);
        let view = View {
            limit: Some(54),
            ..View::default()
        };
        let fitted = |max: usize| render_fitted(&report, view, Some(max)).unwrap();
        let has = |t: &str, line: &str| t.lines().any(|l| l == line);
        let rm_lost_full = "      evidence: declared: __read_mostly (read hot)";
        let sk_like_full = "      group rx_hot: 16+40 B, 1 line -> 32+40 B, 2 lines";
        let runs = "  largest runs:";
        // What the closing says after the exit status, as fitted to the width.
        let closing = |t: &str| {
            let after = t.lines().skip_while(|l| !l.starts_with("exit 1: "));
            after.skip(1).collect::<Vec<_>>().join("\n")
        };
        // 44 lines: the compact functions section (its run and known functions) and both
        // flagged items in full.
        let t = fitted(44);
        assert_eq!(t.lines().count(), 44);
        assert!(has(&t, rm_lost_full) && has(&t, sk_like_full) && has(&t, runs));
        // 42: the compact view would cut a flagged item to one line; the functions
        // section keeps only its counts instead, and both stay in full.
        let t = fitted(42);
        assert_eq!(t.lines().count(), 42);
        assert!(has(&t, rm_lost_full) && has(&t, sk_like_full) && !has(&t, runs));
        assert_eq!(
            closing(&t),
            "3 more items cut, --all prints them (--explain NAME says why; --format json for all data)"
        );
        // 30: one line each, said so.
        let t = fitted(30);
        assert_eq!(t.lines().count(), 30);
        assert!(has(&t, "  rm_lost (int, 4 B)  -0xc  [flagged: neighbour]"));
        assert!(has(
            &t,
            "  struct sk_like (128 -> 256 B, 2 -> 4 lines)  [flagged: group]"
        ));
        assert_eq!(
            closing(&t),
            "2 flagged items on one line each; 4 more items cut, --all prints them (--explain NAME says why;\n  --format json for all data)"
        );
        // 20, fewer than the header, summary and closing take (24): no item at all, and
        // the flagged ones are counted as such.
        let t = fitted(20);
        assert_eq!(t.lines().count(), 24);
        assert!(!t.contains("[flagged"));
        assert_eq!(
            closing(&t),
            "2 more flagged: --all; 4 more items cut, --all prints them (--explain NAME says why; --format json\n  for all data)"
        );
    }
}
