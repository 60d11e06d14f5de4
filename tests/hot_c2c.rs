//! End-to-end tests of `--hot` with a perf c2c report (testdata/check/c2c.txt, written
//! by hand in perf's format for base.elf with a KASLR offset of 0x1a400000) and with a
//! plain name list. Addresses from testdata/check/FACTS.md (nm, pahole).

mod common;

use common::{json, run, testdata};
use serde_json::Value;

fn elf(name: &str) -> String {
    testdata(&format!("check/{name}.elf"))
}

fn c2c() -> String {
    testdata("check/c2c.txt")
}

/// (index, link-time line, HITM) of each mapped line, in report order.
fn ranked(v: &Value) -> Vec<(u64, Option<u64>, u64)> {
    v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["index"].as_u64().unwrap(),
                l["address"]
                    .as_str()
                    .map(|_| common::json_hex(&l["address"])),
                l["hitm"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// (offset, object, member) of a mapped line's accesses.
fn accesses(l: &Value) -> Vec<(u64, String, Option<String>)> {
    l["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["offset"].as_u64().unwrap(),
                a["object"].as_str().unwrap_or("").to_string(),
                a["member"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn assert_base_mapping(v: &Value) {
    assert_eq!(v["outside"].as_u64(), Some(2));
    assert_eq!(
        ranked(v),
        [
            (0, Some(0xffffffff82a510c0), 412),
            (1, None, 120),
            (2, Some(0xffffffff82a51080), 90),
            (3, Some(0xffffffff82a51100), 28),
            (4, None, 17),
        ]
    );
    let l0 = &v["lines"][0];
    let objects: Vec<&str> = l0["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(objects, ["types__ptrace", "root_user"]);
    assert_eq!(
        accesses(l0),
        [
            (0x20, "root_user".into(), Some("__count".into())),
            (0x24, "root_user".into(), Some("sigpending".into())),
            (0x0, "types__ptrace".into(), None),
        ]
    );
    assert_eq!(l0["accesses"][0]["code"], "hot_path");
    assert_eq!(l0["accesses"][0]["source"], "check.c:135");
    assert_eq!(
        accesses(&v["lines"][2]),
        [(0x18, "loopback_dev".into(), Some("rx_packets".into()))]
    );
    assert_eq!(
        accesses(&v["lines"][3]),
        [(0x18, "uidhash_lock".into(), None)]
    );
    assert_eq!(
        common::json_hex(&v["lines"][1]["runtime"]),
        0xffff8c4a01234500
    );
    assert_eq!(v["lines"][1]["region"], "heap");
    assert_eq!(v["lines"][4]["region"], "modules");
    assert!(v["lines"][0].get("region").is_none());
}

#[test]
fn c2c_maps_with_the_given_kaslr_offset() {
    let (code, v) = json(&[
        "show",
        &elf("base"),
        "--hot",
        &c2c(),
        "--kaslr-offset",
        "0x1a400000",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["format"], "layout-diff-hot");
    let hot = &v["hot"];
    assert_eq!(
        hot["kaslr"],
        serde_json::json!({"from": "given", "offset": 0x1a400000})
    );
    assert_base_mapping(hot);
}

#[test]
fn c2c_maps_with_the_inferred_kaslr_offset() {
    let (code, v) = json(&["show", &elf("base"), "--hot", &c2c()]);
    assert_eq!(code, 0);
    // hot_path twice, cold_path three times and the cut a_long_function_name_cut_by_pe
    // (a prefix of a_long_function_name_cut_by_perf_c2c) name functions of base.elf;
    // the module's mod_tick does not.
    assert_eq!(
        v["hot"]["kaslr"],
        serde_json::json!({"from": "inferred", "offset": 0x1a400000, "agreeing": 6, "of": 6})
    );
    assert_base_mapping(&v["hot"]);
}

#[test]
fn c2c_show_text() {
    let (code, out, _) = run(&["show", &elf("base"), "--hot", &c2c()]);
    assert_eq!(code, 0);
    assert!(
        out.contains("(KASLR offset 0x1a400000 (inferred: 6 of 6 code addresses agree))"),
        "{out}"
    );
    assert!(out.contains(
        "  #0  ffffffff82a510c0 (run-time ffffffff9ce510c0)  HITM 412 (61.80%)\n\
         \x20     objects: types__ptrace (ffffffff82a510c0, 32 B), root_user (ffffffff82a510e0, 56 B)\n\
         \x20     +0x20  root_user.__count             100.00% 70.00%  hot_path  check.c:135\n\
         \x20     +0x24  root_user.sigpending          0.00% 25.00%  hot_path  check.c:136\n"
    ), "{out}");
    assert!(
        out.contains("  #1  0xffff8c4a01234500  HITM 120 (18.00%): outside the image (heap: direct map, vmalloc; per-CPU copies)\n"),
        "{out}"
    );
    assert!(
        out.contains("  #4  0xffffffffc0a01000  HITM 17 (2.50%): outside the image (modules)\n"),
        "{out}"
    );
    assert!(
        out.ends_with("2 hot lines are outside the image (heap, modules)\n"),
        "{out}"
    );
}

#[test]
fn a_wrong_kaslr_offset_puts_every_line_outside() {
    let (code, v) = json(&[
        "show",
        &elf("base"),
        "--hot",
        &c2c(),
        "--kaslr-offset",
        "0x200000",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["hot"]["outside"].as_u64(), Some(5));
}

#[test]
fn diff_follows_hot_lines_into_new() {
    let args = ["diff", &elf("base"), &elf("patched"), "--hot", &c2c()];
    let (code, out, _) = run(&args);
    assert_eq!(code, 1);
    assert!(out.contains(
        "\nhot lines from perf c2c (recorded on OLD, KASLR offset 0x1a400000 (inferred: 6 of 6 code addresses agree)), followed into NEW\n\
         \x20 #0  ffffffff82a510c0  HITM 412\n\
         \x20     types__ptrace  ffffffff82a510c0 -> ffffffff82a51100, line ffffffff82a51100: alone\n\
         \x20     root_user  ffffffff82a510e0 -> ffffffff82a51140, line ffffffff82a51140: alone\n\
         \x20     root_user.__count  ffffffff82a510e0 -> ffffffff82a51140, line ffffffff82a51140: shares with .sigpending, .pipe_bufs, .unix_inflight, .uidhash_node, .uid, .locked_vm\n"
    ), "{out}");
    assert!(out.contains(
        "      loopback_dev.rx_packets  ffffffff82a51098 -> ffffffff82a51090, line ffffffff82a51080: shares with .tx_queue, .tx_bytes, .rx_bytes, .rx_dropped\n"
    ), "{out}");
    assert!(out.contains(
        "      loopback_dev  ffffffff82a51080 -> ffffffff82a51080, lines ffffffff82a51080..ffffffff82a510c0 (2): alone\n"
    ), "{out}");
    let (_, v) = json(&args);
    let hot = &v["hot"];
    assert_eq!(hot["outside"].as_u64(), Some(2));
    let lines = hot["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 3);
    let count = lines[0]["followed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["member"] == "__count")
        .unwrap();
    assert_eq!(count["object"], "root_user");
    assert_eq!(common::json_hex(&count["old_address"]), 0xffffffff82a510e0);
    assert_eq!(common::json_hex(&count["new_address"]), 0xffffffff82a51140);
    assert_eq!(
        common::json_hex(&count["new_first_line"]),
        0xffffffff82a51140
    );
    assert_eq!(
        common::json_hex(&count["new_last_line"]),
        0xffffffff82a51140
    );
    assert_eq!(count["new_line_count"].as_u64(), Some(1));
    assert_eq!(count["new_neighbours"], serde_json::json!([]));
    assert_eq!(count["new_members"][0], "sigpending");
    let uid = lines[2]["followed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["object"] == "uidhash_lock")
        .unwrap();
    assert_eq!(common::json_hex(&uid["new_address"]), 0xffffffff82a51180);
    // Markdown carries the same section in a fenced block.
    let (_, md, _) = run(&[
        "diff",
        &elf("base"),
        &elf("patched"),
        "--hot",
        &c2c(),
        "--format",
        "markdown",
    ]);
    assert!(
        md.contains("```\n\nhot lines from perf c2c (recorded on OLD"),
        "{md}"
    );
}

#[test]
fn plain_hot_lists_and_sym_offsets_keep_working() {
    let list = testdata("check/hot-names.txt");
    let (code, v) = json(&["show", &elf("base"), "--hot", &list]);
    assert_eq!(code, 0);
    let names: Vec<&str> = v["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["qualified_name"].as_str().unwrap())
        .collect();
    // Model order: global data, then per-CPU.
    assert_eq!(names, ["root_user", "pcpu_hot_count"]);
    let (_, v) = json(&["diff", &elf("base"), &elf("patched"), "--hot", &list]);
    assert_eq!(
        v["pinned_symbols"],
        serde_json::json!(["root_user", "pcpu_hot_count"])
    );
}

#[test]
fn unusable_c2c_reports_exit_2() {
    let empty = testdata("check/c2c-empty.txt");
    let (code, out, err) = run(&["show", &elf("base"), "--hot", &empty]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        format!(
            "layout-diff: {empty}: not a usable perf c2c report: \"Shared Data Cache Line Table\" has no rows\n"
        )
    );
    // Inference needs functions: patched.elf has them, but old.elf (the main fixture)
    // has no hot_path or cold_path.
    let (code, _, err) = run(&["show", &testdata("old.elf"), "--hot", &c2c()]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(&format!(
            "layout-diff: {}: cannot infer the KASLR offset",
            c2c()
        )),
        "{err}"
    );
}
