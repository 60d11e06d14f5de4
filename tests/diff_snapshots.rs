//! Snapshot tests of the three diff renderers (text, JSON, Markdown) on the committed
//! fixture pair testdata/old.elf -> new.elf, paths redacted. A change in any renderer
//! or in what the diff decides shows up here as a reviewed snapshot update.

mod common;

use common::{run, testdata};

/// The report for `format`, with the fixture directory replaced by `[testdata]`.
fn report(format: &str) -> String {
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    let (code, out, err) = run(&[&old, &new, "--format", format]);
    // Nothing on the fixture pair is flagged on evidence.
    assert_eq!(code, 0, "{err}");
    let dir = testdata("");
    out.replace(&dir, "[testdata]/")
        .replace("[testdata]//", "[testdata]/")
}

#[test]
fn text_report() {
    insta::assert_snapshot!(report("text"));
}

#[test]
fn markdown_report() {
    insta::assert_snapshot!(report("markdown"));
}

#[test]
fn json_report() {
    let v: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    insta::assert_json_snapshot!(v);
}
