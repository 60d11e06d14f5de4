//! End-to-end tests of the diff's signal rules on testdata/signal/{old,new}.elf: every
//! expected address and size below is read from testdata/signal/FACTS.md (nm, readelf),
//! never from layout-diff's own output.

mod common;

use common::{data_change, json, run, testdata};
use serde_json::Value;

fn pair() -> (String, String) {
    (testdata("signal/old.elf"), testdata("signal/new.elf"))
}

fn diff(extra: &[&str]) -> (i32, Value) {
    let (old, new) = pair();
    let mut args = vec![old.as_str(), new.as_str()];
    args.extend_from_slice(extra);
    json(&args)
}

fn run_starting_at<'a>(v: &'a Value, first: &str) -> &'a Value {
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["first"] == first)
        .unwrap_or_else(|| panic!("no run starting at {first}"))
}

#[test]
fn phase_changes_alone_exit_0() {
    // f_alpha 0x10 -> 0x20, f_beta 0x40 -> 0x10, f_tail 0x70 -> 0xa0 and b/dup.c:touch
    // 0x90 -> 0xb0 change their start mod 64 (nm); no data change is flagged.
    let (code, v) = diff(&[]);
    assert_eq!(code, 0);
    assert_eq!(v["flagged"], 0);
    assert_eq!(v["failing"], 0);
    assert_eq!(v["summary"]["functions"]["line_offset_changed"], 4);
    assert_eq!(v["summary"]["functions"]["flagged"], 0);
    let (code, out, _) = run(&[&pair().0, &pair().1]);
    assert_eq!(code, 0);
    // The closing lines: the exit status, then where to look further.
    let lines: Vec<&str> = out.lines().collect();
    let exit = lines[lines.len() - 2];
    assert!(
        exit.starts_with("exit 0: 0 changes flagged on evidence"),
        "{exit}"
    );
    assert_eq!(
        lines[lines.len() - 1],
        "(--explain NAME says why; --format json for all data)"
    );
}

#[test]
fn fail_on_text_exits_1_only_for_measured_functions() {
    // The 4 phase changes plus f_grow (line count 1 -> 2, size 4 -> 0x35 at 0x60) have
    // no evidence of hotness: not flagged, even with --fail-on text.
    let (code, v) = diff(&["--fail-on", "text"]);
    assert_eq!(code, 0);
    assert_eq!(v["summary"]["functions"]["flagged"], 0);
    assert_eq!(v["fail_on"], serde_json::json!(["text"]));
    // A perf symbol profile that saw f_tail (0x70 -> 0xa0: mod 64 0x30 -> 0x20) hot.
    let dir = std::env::temp_dir().join(format!("layout-diff-sym-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = dir.join("perf-sym.txt");
    std::fs::write(
        &profile,
        "# Overhead  Command  Shared Object      Symbol\n\
         # ........  .......  .................  ......\n\
         #\n\
         \x20   41.10%  bench    [kernel.kallsyms]  [k] f_tail\n\
         \x20    3.00%  bench    libc.so.6          [.] f_gamma\n",
    )
    .unwrap();
    let (code, v) = diff(&["--fail-on", "text", "--hot", profile.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(v["summary"]["functions"]["flagged"], 1);
    let f = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "f_tail")
        .unwrap();
    assert_eq!(f["evidence"]["strength"], "measured");
    assert_eq!(
        f["evidence"]["what"],
        "measured: perf symbol profile (41.10% of samples, f_tail)"
    );
    let (code, _, err) = run(&[&pair().0, &pair().1, "--fail-on", "txt"]);
    assert_eq!(code, 2);
    assert!(err.contains("--fail-on: unknown category \"txt\""), "{err}");
}

#[test]
fn a_pinned_function_that_changed_phase_exits_1() {
    // f_tail 0xffffffff81000070 -> 0xffffffff810000a0: mod 64 0x30 -> 0x20.
    let (code, v) = diff(&["--symbol", "f_tail"]);
    assert_eq!(code, 1);
    assert_eq!(v["summary"]["functions"]["flagged"], 1);
    // f_gamma stays at 0xffffffff81000050: asked for, shown, not flagged.
    let (code, v) = diff(&["--symbol", "f_gamma"]);
    assert_eq!(code, 0);
    assert_eq!(v["pinned_symbols"], serde_json::json!(["f_gamma"]));
    // Pinning does not change the counts.
    let (_, plain) = diff(&[]);
    assert_eq!(v["summary"], plain["summary"]);
}

#[test]
fn reordered_functions_are_said_to_be_reordered() {
    // Old: f_lead 0x00, f_alpha 0x10 (0x2e B), f_beta 0x40 (4 B); new: f_beta 0x10,
    // f_alpha 0x20. f_lead, f_alpha's old neighbour, did not change: not the cause.
    let (_, v) = diff(&[]);
    let alpha = run_starting_at(&v, "f_alpha");
    assert_eq!(alpha["delta"], 0x10);
    assert_eq!(
        alpha["cause"],
        // f_lead ends at 0x05 (FACTS.md): 11 bytes of padding before f_beta in NEW,
        // and 12 before f_alpha instead of 11.
        serde_json::json!({"kind": "reordered", "previous": "f_lead", "items": [
            {"symbol": "f_beta", "change": "moved_in", "size": {"old": 0, "new": 4}, "bytes": 4},
            {"symbol": "padding between them", "change": "padding", "size": {"old": 0, "new": 11}, "bytes": 11}
        ], "bytes": 15, "padding": 1, "alignment": 16})
    );
    let beta = run_starting_at(&v, "f_beta");
    assert_eq!(beta["delta"], -0x30);
    assert_eq!(beta["cause"]["kind"], "reordered");
    // f_alpha (0x2e B) and the 11 bytes of padding before it left the gap.
    assert_eq!(beta["cause"]["bytes"], -0x2e - 11);
    // f_tail: f_grow grew 4 -> 0x35 B, f_tail moved 0x70 -> 0xa0.
    let tail = run_starting_at(&v, "f_tail");
    assert_eq!(tail["cause"]["bytes"], 0x31);
    assert_eq!(tail["cause"]["padding"], -1);
}

#[test]
fn locals_of_two_dup_c_files_pair_by_path() {
    // Old: a/dup.c:dup_counter at 0xffffffff82a00010 and b/dup.c:dup_counter at
    // 0x...18 (two STT_FILE "dup.c"); new: only b/dup.c's, at 0x...8c.
    let (_, v) = diff(&[]);
    let b = data_change(&v, "dup.c:dup_counter");
    assert_eq!(common::json_hex(&b["place"]["old"]), 0xffffffff82a00018);
    assert_eq!(common::json_hex(&b["place"]["new"]), 0xffffffff82a0008c);
    assert_eq!(v["summary"]["data"]["removed"], 1);
    assert_eq!(v["summary"]["functions"]["removed"], 1);
    let a_run = run_starting_at(&v, "a_marker");
    assert_eq!(a_run["cause"]["items"][0]["symbol"], "a/dup.c:dup_counter");
    assert_eq!(a_run["cause"]["items"][0]["change"], "removed");
    // The printed names are accepted back.
    let (code, out, _) = run(&[
        "show",
        &testdata("signal/old.elf"),
        "--symbol",
        "a/dup.c:dup_counter",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let s: Value = serde_json::from_str(&out).unwrap();
    let syms = s["symbols"].as_array().unwrap();
    assert_eq!(syms.len(), 1);
    assert_eq!(syms[0]["qualified_name"], "a/dup.c:dup_counter");
    assert_eq!(
        common::json_hex(&syms[0]["symbol"]["address"]),
        0xffffffff82a00010
    );
    assert_eq!(syms[0]["symbol"]["unit"], "a/dup.c");
    let (code, v) = diff(&["--symbol", "b/dup.c:dup_counter"]);
    assert_eq!(code, 0);
    assert_eq!(
        v["pinned_symbols"],
        serde_json::json!(["dup.c:dup_counter"])
    );
}

#[test]
fn lost_neighbours_are_an_improvement() {
    // lonely_count (atomic_t) at 0xffffffff82a00000 shared its line with busy_lock
    // (0x...20) and others; new: spacer_a at 0x...40 pushes them to 0x...80 and later.
    let (_, v) = diff(&[]);
    let c = data_change(&v, "lonely_count");
    assert_eq!(c["severity"], "improvement");
    assert_eq!(c["flagged"], false);
    // lonely_count, and the six objects (zcount and its alias, a_marker, dup_counter,
    // b_marker, busy_lock) that went from 6 neighbours to 4 in FACTS.md's layout.
    assert_eq!(v["summary"]["data"]["improvements"], 7);
    assert_eq!(c["co_tenants"]["new"], serde_json::json!([]));
    assert!(
        c["co_tenants"]["old"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "busy_lock")
    );
}

#[test]
fn zero_size_symbols_and_aliases_are_not_co_tenants() {
    // __key_zero (size 0) and zcount_alias (zcount's address and size) share zcount's
    // line in both builds (0x...04/0x...08 old, 0x...80 new).
    let (_, v) = diff(&[]);
    for c in v["data"].as_array().unwrap() {
        for side in ["old", "new"] {
            for t in c["co_tenants"][side].as_array().unwrap() {
                assert_ne!(t["size"], 0, "{} has a zero-size co-tenant", c["name"]);
                assert_ne!(t["name"], "zcount_alias", "{} lists an alias", c["name"]);
            }
        }
        assert_ne!(c["name"], "__key_zero");
    }
    let z = data_change(&v, "zcount");
    let names: Vec<&str> = z["co_tenants"]["new"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["a_marker", "dup.c:dup_counter", "b_marker", "busy_lock"]
    );
}

#[test]
fn boot_only_and_ro_after_init_straddlers_are_not_flagged() {
    // boot_copy (.init.data, 48 B) 0x...02000 -> 0x...02028: crosses 0x...02040.
    // roai_table (merged into .data, between __start_ro_after_init and
    // __end_ro_after_init) 0x...01000 -> 0x...01028: crosses 0x...01040.
    let (_, v) = diff(&[]);
    let boot = data_change(&v, "boot_copy");
    assert_eq!(boot["new"]["straddles"], true);
    assert_eq!(boot["quiet"], "boot-only");
    assert_eq!(boot["flagged"], false);
    let roai = data_change(&v, "roai_table");
    assert_eq!(roai["section"], ".data");
    assert_eq!(roai["new"]["straddles"], true);
    assert_eq!(roai["quiet"], "read-only after init");
    assert_eq!(roai["flagged"], false);
    let regions: Vec<&str> = v["quiet_regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["from"].as_str().unwrap())
        .collect();
    assert!(regions.contains(&"__init_begin..__init_end"));
    assert!(regions.contains(&"__start_ro_after_init..__end_ro_after_init"));
}
