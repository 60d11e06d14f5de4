//! The first screen (issue 49): every flagged item is on it, at least one line each,
//! before any part of the report that has no flag; when even one line each does not
//! fit, the closing line says how many flagged items were left out. On
//! testdata/evidence (3 flagged data objects: `nr_threads` +0x8, `hot_stat` +0x0 and
//! `sysctl_rm_knob` +0x38, places from FACTS.md's nm; 4 root causes and 2 hot objects
//! not flagged), `--limit N` gives the items N lines exactly.

mod common;

use common::{run, testdata};

/// The report of the evidence pair with `--limit limit`: its exit status and its
/// lines from the first titled section on (the header and summary left out).
fn report(limit: &str) -> (i32, Vec<String>) {
    let (code, out, err) = run(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--limit",
        limit,
    ]);
    assert_eq!(err, "");
    let lines = out
        .lines()
        .skip_while(|l| !l.starts_with("hot objects"))
        .map(str::to_string)
        .collect();
    (code, lines)
}

const FUNCTIONS: [&str; 3] = [
    "functions",
    "  0 functions changed their start mod 64 (none measured hot or asked for); 0 runs change line",
    "      membership, 0 shift by whole lines",
];

#[test]
fn two_lines_for_three_flagged_items_show_two_and_count_the_third() {
    let (code, lines) = report("2");
    assert_eq!(code, 1);
    let mut want = vec![
        "hot objects whose lines changed (flagged first)",
        "  nr_threads (int, 4 B)  +0x8  [flagged: neighbour]",
        "  hot_stat (long int[4], 32 B)  +0x0  [flagged: neighbour]",
        "",
    ];
    want.extend(FUNCTIONS);
    want.extend([
        "",
        "exit 1: 3 changes flagged on evidence, 3 in --fail-on (neighbour,member,aligned,group,text)",
        "1 more flagged: --all; 2 flagged items on one line each; 6 more items cut, --all prints them",
        "  (--explain NAME says why; --format json for all data)",
    ]);
    assert_eq!(lines, want);
}

#[test]
fn ten_lines_show_the_first_flagged_item_in_full_and_the_others_on_one_line() {
    let (code, lines) = report("10");
    assert_eq!(code, 1);
    // nr_threads in full is 6 lines (8 fitted to 100 columns): 3 first lines and its 5
    // more fill 8 of the 10; hot_stat and sysctl_rm_knob would need 5 and 4 more. The 2
    // left are too few for a root cause (2 lines) or another hot object.
    let mut want = vec![
        "hot objects whose lines changed (flagged first)",
        "  nr_threads (int, 4 B)  ffffffff82a00030 -> ffffffff82a00038 (+0x8)  [flagged: neighbour]",
        "      offset in line 0x30 -> 0x38, in pair 0x30 -> 0x38, lines 1 -> 1",
        "      shares lines with: pad_a  ->  pad_a, total_forks (written: total_forks)",
        "      line ffffffff82a00000: hot nr_threads 0x0..0x4 with total_forks's total_forks 0x0..0x8,",
        "          written: known hot",
        "      line ffffffff82a00000 (pair of ffffffff82a00040): hot nr_threads 0x0..0x4 with evil_lock's",
        "          evil_lock 0x0..0x4, written by its type only",
        "      evidence: known: thread count, incremented in copy_process() and decremented at exit for every",
        "          thread [kernel/fork.c: int nr_threads]",
        "  hot_stat (long int[4], 32 B)  +0x0  [flagged: neighbour]",
        "  sysctl_rm_knob (int, 4 B)  +0x38  [flagged: neighbour]",
        "",
    ];
    want.extend(FUNCTIONS);
    want.extend([
        "",
        "exit 1: 3 changes flagged on evidence, 3 in --fail-on (neighbour,member,aligned,group,text)",
        "2 flagged items on one line each; 6 more items cut, --all prints them (--explain NAME says why;",
        "  --format json for all data)",
    ]);
    assert_eq!(lines, want);
}

/// With room for everything, the part with flagged items still comes first: the hot
/// objects, then the root causes (which lead a report that flags nothing), then the
/// functions.
#[test]
fn the_flagged_part_comes_before_the_root_causes() {
    let (code, out, _) = run(&[&testdata("evidence/old.elf"), &testdata("evidence/new.elf")]);
    assert_eq!(code, 1);
    let titles: Vec<&str> = out
        .split("\n\n")
        .filter_map(|block| block.lines().next())
        .filter(|l| !l.starts_with(' ') && !l.starts_with("exit") && !l.starts_with("layout-diff"))
        .collect();
    assert_eq!(
        titles,
        [
            "hot objects whose lines changed (flagged first)",
            "root causes (each change once, with what it moved across lines)",
            "functions"
        ]
    );
    assert!(out.ends_with("(--explain NAME says why; --format json for all data)\n"));
}
