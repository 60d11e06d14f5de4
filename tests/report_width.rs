//! The default text report fits a terminal (issue 33): on every fixture pair no line is
//! over 100 columns and no report over 80 lines (pinned names are shown in full, so
//! only the width is checked with them). `bench/report-width.sh` checks the same on real pairs.

mod common;

use common::{run, testdata};

const COLUMNS: usize = 100;
const LINES: usize = 80;

/// The widest line of the report of `args`, asserted within the width and, unless
/// names were pinned (always shown in full, however long), within the height.
fn fits(args: &[&str]) -> usize {
    let (code, out, err) = run(args);
    assert!(code <= 1, "{args:?}: {err}");
    let widest = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let lines = out.lines().count();
    assert!(
        widest <= COLUMNS,
        "{args:?}: a line of {widest} columns\n{out}"
    );
    if !args.contains(&"--symbol") {
        assert!(lines <= LINES, "{args:?}: {lines} lines\n{out}");
    }
    widest
}

#[test]
fn every_fixture_pair_report_fits_100_columns_and_80_lines() {
    let pairs = [
        ("old.elf", "new.elf"),
        ("evidence/old.elf", "evidence/new.elf"),
        ("lines/old.elf", "lines/new.elf"),
        ("signal/old.elf", "signal/new.elf"),
        ("old.elf", "btf/old-btf.elf"),
        ("old.elf", "btf/old.btf"),
    ];
    let mut widest = 0;
    for (a, b) in pairs {
        let (a, b) = (testdata(a), testdata(b));
        widest = widest.max(fits(&[&a, &b]));
        widest = widest.max(fits(&[&a, &b, "--symbol", "*", "--struct", "*"]));
    }
    let hot = testdata("evidence/perf-type.txt");
    let (a, b) = (testdata("evidence/old.elf"), testdata("evidence/new.elf"));
    widest = widest.max(fits(&[&a, &b, "--hot", &hot]));
    // The fixtures do reach the width: the fitting is exercised, not vacuous.
    assert_eq!(widest, COLUMNS);
}

/// With everything asked for, the report is longer than a screen: --all and an
/// explicit --limit are not cut to 80 lines, only fitted to the width.
#[test]
fn all_is_fitted_to_the_width_but_not_cut() {
    let (a, b) = (testdata("old.elf"), testdata("new.elf"));
    let (code, out, _) = run(&[&a, &b, "--all"]);
    assert_eq!(code, 0);
    assert!(out.lines().all(|l| l.chars().count() <= COLUMNS));
    assert!(out.lines().count() > LINES, "{}", out.lines().count());
}
