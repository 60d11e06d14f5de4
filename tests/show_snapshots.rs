//! Snapshots of `show`'s text and JSON on testdata/old.elf, paths redacted. The
//! numbers in them are checked against pahole/nm elsewhere (show_fixtures.rs,
//! types_fixtures.rs); these pin the whole rendering so a change is seen in review.

mod common;

use common::{run, testdata};

/// Runs `show` on old.elf and replaces the fixture's path with `[testdata]`.
fn show(args: &[&str]) -> String {
    let file = testdata("old.elf");
    let mut all = vec!["show", file.as_str()];
    all.extend(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{err}");
    let dir = testdata("");
    out.replace(dir.trim_end_matches('/'), "[testdata]")
}

#[test]
fn summary_text() {
    insta::assert_snapshot!(show(&[]));
}

#[test]
fn structs_text() {
    insta::assert_snapshot!(show(&["--struct", "*"]));
}

#[test]
fn structs_annotated_text() {
    insta::assert_snapshot!(show(&["--struct", "task_struct", "--annotate"]));
}

#[test]
fn symbols_text() {
    insta::assert_snapshot!(show(&["--symbol", "root_user", "--symbol", "init_task"]));
}

#[test]
fn structs_json() {
    insta::assert_snapshot!(show(&["--struct", "task_struct", "--format", "json"]));
}

#[test]
fn symbols_json() {
    insta::assert_snapshot!(show(&["--symbol", "root_user", "--format", "json"]));
}

#[test]
fn summary_json() {
    insta::assert_snapshot!(show(&["--format", "json"]));
}
