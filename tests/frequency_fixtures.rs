//! End-to-end tests of the frequency classes (`evidence::frequency`) on
//! testdata/frequency/{old,new}.elf (built by testdata/frequency/build.sh from freq.c;
//! hot-list.toml makes hot_a..hot_h known hot and fork_path a known-hot function). In
//! NEW each hot object gains a neighbour whose writer is of one class; every address
//! and writer below is read from testdata/frequency/FACTS.md (nm, objdump).

mod common;

use common::{json, testdata};
use serde_json::Value;

fn diff() -> (i32, Value) {
    json(&[
        &testdata("frequency/old.elf"),
        &testdata("frequency/new.elf"),
        "--hot-list",
        &testdata("frequency/hot-list.toml"),
    ])
}

/// Each new meeting on one line (not across a 128-byte pair): the hot object, the
/// neighbour, its writer, the writer's class and why, and what the meeting weighs.
fn same_line(v: &Value) -> Vec<(String, String, String, String, String, String)> {
    let mut out = Vec::new();
    for o in v["data"].as_array().unwrap() {
        for m in o["sharing"]["new_meetings"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if m["adjacent"] == true {
                continue;
            }
            let w = &m["written"]["written"];
            let s = |x: &Value| x.as_str().unwrap_or("").to_string();
            out.push((
                s(&o["name"]),
                s(&m["neighbour"]),
                s(&w["function"]),
                s(&w["freq"]["class"]),
                s(&w["freq"]["why"]),
                s(&m["tie"]),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn each_neighbour_is_weighed_by_the_class_of_its_writer() {
    let (code, v) = diff();
    let row = |a: &str, b: &str, c: &str, d: &str, e: &str, f: &str| {
        (a.into(), b.into(), c.into(), d.into(), e.into(), f.into())
    };
    assert_eq!(
        same_line(&v),
        vec![
            // warn_path() tests and clears its static `done` (cmpb/movb on done.0).
            row(
                "hot_b",
                "done.0",
                "warn_path",
                "rare",
                "once",
                "rare-writer"
            ),
            // foo_register matches rare.toml's `*register*`.
            row(
                "hot_c",
                "reg_count",
                "foo_register",
                "rare",
                "convention",
                "rare-writer"
            ),
            // helper() is called only by foo_register() and its address is never taken.
            row(
                "hot_d",
                "helper_stat",
                "helper",
                "rare",
                "rare_callers",
                "rare-writer"
            ),
            // fork_path() writes hot_e too: true sharing.
            row(
                "hot_e",
                "fork_stat",
                "fork_path",
                "frequent",
                "evidence",
                "co-written"
            ),
            // tick_helper() is called by scheduler_tick(), known hot (built in).
            row(
                "hot_f",
                "tick_stat",
                "tick_helper",
                "frequent",
                "called_by",
                "frequent"
            ),
            // plain_update() is called by _start only: nothing says how often.
            row(
                "hot_g",
                "plain_stat",
                "plain_update",
                "unknown",
                "",
                "unknown"
            ),
            // slow_stat is stored in cold_path.cold, GCC's unlikely part.
            row(
                "hot_h",
                "slow_stat",
                "cold_path.cold",
                "rare",
                "cold",
                "rare-writer"
            ),
        ]
    );
    // Only the frequent writer flags; boot_stat (written only by setup_boot() in
    // .init.text) is no written member at all.
    let verdict = |name: &str| {
        let o = v["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == name)
            .unwrap();
        o["decision"]["verdict"].as_str().unwrap().to_string()
    };
    let verdicts: Vec<String> = [
        "hot_a", "hot_b", "hot_c", "hot_d", "hot_e", "hot_f", "hot_g", "hot_h",
    ]
    .iter()
    .map(|n| verdict(n))
    .collect();
    assert_eq!(
        verdicts,
        [
            "changed", "changed", "changed", "changed", "changed", "flag", "changed", "changed"
        ]
    );
    assert_eq!((code, v["failing"].as_u64()), (1, Some(1)));
}

#[test]
fn the_rule_says_why_a_meeting_is_not_flagged() {
    let (_, v) = diff();
    let rule = |name: &str| {
        let o = v["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == name)
            .unwrap();
        o["decision"]["rule"].as_str().unwrap().to_string()
    };
    assert_eq!(
        rule("hot_e"),
        "a hot member now shares a line with a member the same code writes (co-written): true sharing, cheaper on one line than on two"
    );
    assert_eq!(
        rule("hot_c"),
        "a hot member now shares a line with a written member of another object, but its writers run rarely (rare writer): not contended"
    );
    assert_eq!(
        rule("hot_g"),
        "a hot member now shares a line with a written member of another object whose writers' frequency is unknown: listed, not flagged"
    );
}
