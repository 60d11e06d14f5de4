//! End-to-end tests of struct lines judged by who shares them (`diff::struct_lines`,
//! `--access`) on testdata/structlines/{old,new}.elf (built by
//! testdata/structlines/build.sh from sl.c). Offsets are pahole's and the accesses
//! objdump's, in testdata/structlines/FACTS.md.

mod common;

use common::{json, run, testdata};
use serde_json::{Value, json};

fn diff(extra: &[&str]) -> (i32, Value) {
    let (old, new) = (
        testdata("structlines/old.elf"),
        testdata("structlines/new.elf"),
    );
    let mut args = vec![old.as_str(), new.as_str()];
    args.extend_from_slice(extra);
    json(&args)
}

fn change<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no struct change {name}"))
}

/// struct sk: refcnt moves from 64 (line 1) to 8 (line 0), beside key, which
/// sk_lookup() reads; sk_hold() writes refcnt atomically (`lock addq $0x1,0x8(%rdi)`)
/// and seq plainly (`addq $0x1,0x10(%rdi)`): refcnt meets key; seq, which no other CPU
/// writes by design, meets nothing (and beside refcnt it is co-written).
#[test]
fn a_struct_line_that_gains_a_frequently_written_member_is_flagged() {
    let (code, v) = diff(&["--access"]);
    assert_eq!(code, 1);
    let sk = change(&v, "sk");
    assert_eq!(sk["decision"]["verdict"], "flag");
    assert_eq!(sk["decision"]["category"], "member");
    let (why, why_r) = (
        "frequent: called by scheduler_tick()",
        "frequent: called by tcp_v4_rcv()",
    );
    assert_eq!(
        sk["sharing"]["new_meetings"],
        json!([
            {"line": 0, "written": "refcnt", "written_from": 8, "written_to": 16,
             "writer": "sk_hold", "writer_why": why, "other": "key", "other_from": 0,
             "other_to": 8, "toucher": "sk_lookup", "toucher_why": why_r, "toucher_writes": false},
        ])
    );
    assert_eq!(sk["sharing"]["ended"], json!([]));
}

/// struct dq: count (written by dq_inc()) leaves cfg's line (read by dq_check()) for a
/// line of its own: the meeting ends, an improvement, listed on the first screen.
#[test]
fn a_member_moved_to_a_line_of_its_own_is_an_improvement() {
    let (_, v) = diff(&["--access"]);
    let dq = change(&v, "dq");
    assert_eq!(dq["decision"]["verdict"], "improvement");
    assert_eq!(dq["sharing"]["new_meetings"], json!([]));
    assert_eq!(
        (
            &dq["sharing"]["ended"][0]["written"],
            &dq["sharing"]["ended"][0]["other"],
            &dq["sharing"]["ended"][0]["line"]
        ),
        (&json!("count"), &json!("cfg"), &json!(0))
    );
    let (old, new) = (
        testdata("structlines/old.elf"),
        testdata("structlines/new.elf"),
    );
    let (_, out, _) = run(&[&old, &new, "--access"]);
    assert!(
        out.contains(
            "      ended on line 0: count 0x8..0x10 (written by dq_inc(), frequent: called by scheduler_tick())\n          with cfg 0x0..0x8 (read by dq_check(), frequent: called by tcp_v4_rcv())\n"
        ),
        "{out}"
    );
}

/// Without --access there is no typed access map: nothing is judged on struct lines,
/// and the report says so.
#[test]
fn without_access_struct_lines_are_not_judged_and_the_report_says_so() {
    let (_, v) = diff(&[]);
    assert_eq!(v["summary"]["structs"]["flagged"], 0);
    assert_eq!(change(&v, "sk")["sharing"], Value::Null);
    assert_eq!(change(&v, "sk")["decision"]["verdict"], "changed");
    let (old, new) = (
        testdata("structlines/old.elf"),
        testdata("structlines/new.elf"),
    );
    let (_, out, _) = run(&[&old, &new]);
    assert!(out.contains(
        "note: the lines of the 2 changed structs are not judged by who shares them: --access\n"
    ));
}
