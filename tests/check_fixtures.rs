//! End-to-end tests of `layout-diff check`, cache-line groups in `show` and the diff,
//! on the fixtures in testdata/check/ (facts in testdata/check/FACTS.md, measured with
//! nm, readelf and pahole).

mod common;

use common::{json, run, testdata};
use serde_json::Value;

fn elf(name: &str) -> String {
    testdata(&format!("check/{name}.elf"))
}

fn rules(name: &str) -> String {
    testdata(&format!("check/rules/{name}.toml"))
}

/// The outcome of `key` for `target` in a check JSON document.
fn outcome<'a>(v: &'a Value, target: &str, key: &str) -> &'a Value {
    v["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["target"] == target && o["key"] == key)
        .unwrap_or_else(|| panic!("no outcome {target} {key} in {v}"))
}

/// A number, or a hex string for values above 2^53 (addresses; docs/json.md).
fn number(v: &Value) -> u64 {
    match v.as_str() {
        Some(h) => u64::from_str_radix(h.trim_start_matches("0x"), 16).unwrap(),
        None => v.as_u64().unwrap(),
    }
}

fn offenders(o: &Value) -> Vec<(String, u64, Vec<u64>)> {
    o["offenders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                number(&f["offset"]),
                f["lines"].as_array().unwrap().iter().map(number).collect(),
            )
        })
        .collect()
}

// nm: types__ptrace ffffffff82a510c0 (32 B), root_user ffffffff82a510e0 (56 B),
// uidhash_lock ffffffff82a51118 in base.elf; root_user ffffffff82a51140 (64 B) in
// patched.elf, types__ptrace ends at ...120 and uidhash_lock starts at ...180.
#[test]
fn root_user_fails_aligned_and_alone_without_the_patch_text() {
    let (code, out, _) = run(&["check", "--rules", &rules("root_user"), &elf("base")]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "FAIL symbol root_user: aligned = 64: ffffffff82a510e0 is +0x20 in its 64 B line\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("       types__ptrace (ffffffff82a510c0, 32 B) on line ffffffff82a510c0\n"),
        "{out}"
    );
    assert!(
        out.contains("FAIL symbol root_user: alone = true: 2 other objects on its lines\n"),
        "{out}"
    );
    assert!(
        out.contains("       uidhash_lock (ffffffff82a51118, 8 B) on line ffffffff82a51100\n"),
        "{out}"
    );
    assert!(
        out.contains("       why: root_user.__count is written on every fork\n"),
        "{out}"
    );
    assert!(out.ends_with("\n2 of 2 rules fail (exit 1)\n"), "{out}");
}

#[test]
fn root_user_fails_aligned_and_alone_without_the_patch_json() {
    let (code, v) = json(&["check", "--rules", &rules("root_user"), &elf("base")]);
    assert_eq!(code, 1);
    assert_eq!(v["format"], "layout-diff-check");
    assert_eq!(
        (v["passed"].as_u64(), v["failed"].as_u64()),
        (Some(0), Some(2))
    );
    let a = outcome(&v, "root_user", "aligned");
    assert_eq!(a["pass"], false);
    assert_eq!(
        common::json_hex(&a["measured"]["value"]),
        0xffffffff82a510e0
    );
    assert_eq!(a["measured"]["remainder"].as_u64(), Some(0x20));
    assert_eq!(
        offenders(a),
        [(
            "types__ptrace".to_string(),
            0xffffffff82a510c0,
            vec![0xffffffff82a510c0]
        )]
    );
    let alone = outcome(&v, "root_user", "alone");
    assert_eq!(alone["pass"], false);
    assert_eq!(alone["measured"]["count"].as_u64(), Some(2));
    assert_eq!(
        offenders(alone),
        [
            (
                "types__ptrace".to_string(),
                0xffffffff82a510c0,
                vec![0xffffffff82a510c0]
            ),
            (
                "uidhash_lock".to_string(),
                0xffffffff82a51118,
                vec![0xffffffff82a51100]
            ),
        ]
    );
    assert_eq!(alone["why"], "root_user.__count is written on every fork");
}

#[test]
fn root_user_passes_with_the_patch() {
    let (code, out, _) = run(&["check", "--rules", &rules("root_user"), &elf("patched")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("PASS symbol root_user: aligned = 64: ffffffff82a51140 is a multiple of 64\n"),
        "{out}"
    );
    assert!(
        out.contains("PASS symbol root_user: alone = true: no other object on its lines\n"),
        "{out}"
    );
    assert!(out.ends_with("\nall 2 rules pass\n"), "{out}");
    let (code, v) = json(&["check", "--rules", &rules("root_user"), &elf("patched")]);
    assert_eq!(code, 0);
    assert_eq!(
        (v["passed"].as_u64(), v["failed"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(
        outcome(&v, "root_user", "aligned")["measured"]["remainder"].as_u64(),
        Some(0)
    );
    assert_eq!(
        outcome(&v, "root_user", "alone")["measured"]["count"].as_u64(),
        Some(0)
    );
    assert!(
        outcome(&v, "root_user", "alone")["offenders"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // With OLD NEW, rules are evaluated on NEW; OLD is read only for growth rules.
    let (code, v) = json(&[
        "check",
        "--rules",
        &rules("root_user"),
        &elf("base"),
        &elf("patched"),
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["image"]["file"], elf("patched"));
    assert_eq!(v["old"], Value::Null);
}

// pahole: __count at 0 and sigpending at 4 in base and patched; sigpending at 64 in split.
#[test]
fn separate_fails_on_both_builds_and_passes_when_split() {
    for build in ["base", "patched"] {
        let (code, out, _) = run(&["check", "--rules", &rules("separate"), &elf(build)]);
        assert_eq!(code, 1, "{build}");
        assert!(
            out.contains(
                "FAIL struct user_struct: separate = [\"__count\", \"sigpending\"]: share line 0\n\
                 \x20      __count (offset 0, 4 B) shares line 0\n\
                 \x20      sigpending (offset 4, 4 B) shares line 0\n"
            ),
            "{build}: {out}"
        );
        let (code, v) = json(&["check", "--rules", &rules("separate"), &elf(build)]);
        assert_eq!(code, 1);
        let o = outcome(&v, "user_struct", "separate");
        assert_eq!(o["measured"]["lines"], serde_json::json!([0]));
        assert_eq!(
            offenders(o),
            [
                ("__count".to_string(), 0, vec![0]),
                ("sigpending".to_string(), 4, vec![0])
            ]
        );
    }
    let (code, out, _) = run(&["check", "--rules", &rules("separate"), &elf("split")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(
        "PASS struct user_struct: separate = [\"__count\", \"sigpending\"]: no line shared\n"
    ));
    let (code, v) = json(&["check", "--rules", &rules("separate"), &elf("split")]);
    assert_eq!(code, 0);
    assert_eq!(
        outcome(&v, "user_struct", "separate")["measured"]["lines"],
        serde_json::json!([])
    );
}

// pahole: struct mce is 120 bytes (2 cachelines) in base, 128 (2 cachelines) in patched.
#[test]
fn mce_growth_fails_size_and_growth_passes_cachelines() {
    let args = [
        "check",
        "--rules",
        &rules("mce"),
        &elf("base"),
        &elf("patched"),
    ];
    let (code, out, _) = run(&args);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAIL struct mce: max_size = 120: 128 B\n"),
        "{out}"
    );
    assert!(
        out.contains("FAIL struct mce: max_growth = 0: 120 -> 128 B (+8)\n"),
        "{out}"
    );
    assert!(
        out.contains("PASS struct mce: max_cachelines = 2: 2 lines\n"),
        "{out}"
    );
    assert!(
        out.contains("why: mce records are copied in the #MC handler"),
        "{out}"
    );
    let (code, v) = json(&args);
    assert_eq!(code, 1);
    let size = outcome(&v, "mce", "max_size");
    assert_eq!(
        (size["pass"].as_bool(), size["measured"]["value"].as_u64()),
        (Some(false), Some(128))
    );
    let growth = outcome(&v, "mce", "max_growth");
    assert_eq!(growth["pass"], false);
    assert_eq!(
        (
            growth["measured"]["old"].as_u64(),
            growth["measured"]["new"].as_u64()
        ),
        (Some(120), Some(128))
    );
    assert_eq!(growth["measured"]["growth"].as_i64(), Some(8));
    assert_eq!(offenders(growth), [("kflags".to_string(), 120, vec![64])]);
    assert_eq!(offenders(size), [("kflags".to_string(), 120, vec![64])]);
    let lines = outcome(&v, "mce", "max_cachelines");
    assert_eq!(
        (lines["pass"].as_bool(), lines["measured"]["value"].as_u64()),
        (Some(true), Some(2))
    );
    assert_eq!(v["old"]["file"], elf("base"));
    // On the unchanged build, all three pass.
    let (code, _, _) = run(&[
        "check",
        "--rules",
        &rules("mce"),
        &elf("base"),
        &elf("base"),
    ]);
    assert_eq!(code, 0);
}

#[test]
fn growth_rule_on_one_build_is_an_error() {
    let (code, out, err) = run(&["check", "--rules", &rules("mce"), &elf("base")]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        format!(
            "layout-diff: {}:1: key `max_growth` needs the old build: check --rules FILE OLD NEW\n",
            rules("mce")
        )
    );
}

// nm: pcpu_hot_count at percpu 0x0 (8 B), pcpu_other at 0x40 in base; patched adds
// pcpu_intruder at 0x8.
#[test]
fn percpu_variable_fails_alone_when_a_neighbour_is_inserted() {
    let (code, out, _) = run(&["check", "--rules", &rules("percpu"), &elf("base")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("PASS symbol pcpu_hot_count: alone = true: no other object on its lines\n")
    );
    let (code, out, _) = run(&["check", "--rules", &rules("percpu"), &elf("patched")]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "FAIL symbol pcpu_hot_count: alone = true: 1 other object on its lines\n\
             \x20      pcpu_intruder (percpu+0x8, 8 B) on line percpu+0x0\n"
        ),
        "{out}"
    );
    let (code, v) = json(&["check", "--rules", &rules("percpu"), &elf("patched")]);
    assert_eq!(code, 1);
    let o = outcome(&v, "pcpu_hot_count", "alone");
    assert_eq!(o["positions"], "percpu_offset");
    assert_eq!(offenders(o), [("pcpu_intruder".to_string(), 8, vec![0])]);
}

// nm: hot_path at ffffffff81000000, cold_path at ffffffff81000020.
#[test]
fn function_alignment() {
    let (code, out, _) = run(&["check", "--rules", &rules("functions"), &elf("base")]);
    assert_eq!(code, 1);
    assert!(out.contains(
        "FAIL function cold_path: align = 64: ffffffff81000020 is +0x20 in its 64 B line\n"
    ));
    assert!(
        out.contains("PASS function hot_path: align = 64: ffffffff81000000 is a multiple of 64\n")
    );
    let (_, v) = json(&["check", "--rules", &rules("functions"), &elf("base")]);
    assert_eq!(
        outcome(&v, "cold_path", "align")["measured"]["remainder"].as_u64(),
        Some(0x20)
    );
    assert_eq!(outcome(&v, "hot_path", "align")["pass"], true);
    // The HTML draws the failing function's start on its line (the line of hot_path,
    // ffffffff81000000, where cold_path starts +0x20 in); a passing rule draws nothing.
    let (code, html, _) = run(&[
        "check",
        "--rules",
        &rules("functions"),
        &elf("base"),
        "--format",
        "html",
    ]);
    assert_eq!(code, 1);
    let row = |name: &str| {
        let at = html.find(&format!("function {name}: align = 64")).unwrap();
        let rest = &html[at..];
        rest[..rest.find("</tr>").unwrap()].to_string()
    };
    let cold = row("cold_path");
    assert_eq!(cold.matches("<figure class=\"map\">").count(), 1, "{cold}");
    assert!(cold.contains("data-line=\"ffffffff81000000\""), "{cold}");
    assert_eq!(cold.matches("class=\"cell item focus").count(), 1, "{cold}");
    assert!(!row("hot_path").contains("<figure"));
}

#[test]
fn rules_naming_nothing_fail_and_say_so() {
    let (code, out, _) = run(&["check", "--rules", &rules("missing"), &elf("base")]);
    assert_eq!(code, 1);
    assert!(out.contains("FAIL symbol no_such_object: alone = true: no data or per-CPU object named no_such_object in this build\n"));
    assert!(out.contains(
        "FAIL struct no_such_struct: max_size = 64: no struct named no_such_struct in this build\n"
    ));
    assert!(out.contains("FAIL group netdev_like.no_such_group: max_lines = 1: no group named netdev_like.no_such_group in this build\n"));
    let (_, v) = json(&["check", "--rules", &rules("missing"), &elf("base")]);
    assert_eq!(v["failed"].as_u64(), Some(3));
    for o in v["outcomes"].as_array().unwrap() {
        assert_eq!(o["measured"]["kind"], "not_found");
        assert_eq!(o["target"], Value::Null);
    }
}

#[test]
fn malformed_rules_exit_2_with_file_line_and_key() {
    let cases = [
        ("bad-key", "3: unknown field `allone`"),
        (
            "bad-type",
            "3: key `max_size`: invalid type: string \"120\", expected u64",
        ),
        ("bad-table", "1: unknown field `variable`"),
    ];
    for (name, want) in cases {
        let (code, out, err) = run(&["check", "--rules", &rules(name), &elf("base")]);
        assert_eq!((code, out.as_str()), (2, ""), "{name}");
        let prefix = format!("layout-diff: {}:{want}", rules(name));
        assert!(err.starts_with(&prefix), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        if name == "bad-key" {
            assert!(err.trim_end().ends_with("; did you mean `alone`?"), "{err}");
        }
    }
    let (code, _, err) = run(&[
        "check",
        "--rules",
        &testdata("check/none.toml"),
        &elf("base"),
    ]);
    assert_eq!(code, 2);
    assert!(err.starts_with(&format!(
        "layout-diff: {}: cannot read rules file",
        testdata("check/none.toml")
    )));
}

#[test]
fn markdown_lists_every_rule_and_the_failures() {
    let (code, out, _) = run(&[
        "check",
        "--rules",
        &rules("groups"),
        &elf("base"),
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains("| **FAIL** | `[group.\"netdev_like.rx\"] aligned = true` | offset 20 is +20 in its 64 B line |\n"),
        "{out}"
    );
    assert!(
        out.contains("| PASS | `[group.\"netdev_like.tx_read\"] max_size = 24` | 20 B |\n"),
        "{out}"
    );
    assert!(out.ends_with("\n1 of 6 rules fail (exit 1)\n"), "{out}");
    let (code, out, _) = run(&[
        "check",
        "--rules",
        &rules("root_user"),
        &elf("base"),
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("| **FAIL** | `[symbol.root_user] aligned = 64` | ffffffff82a510e0 is +0x20 in its 64 B line |\n"), "{out}");
    assert!(
        out.contains(
            "| **FAIL** | `[symbol.root_user] alone = true` | 2 other objects on its lines |\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("    types__ptrace (ffffffff82a510c0, 32 B) on line ffffffff82a510c0\n"),
        "{out}"
    );
}

// pahole (FACTS.md): base netdev_like: begin__tx_read 0, end__tx_read 20, begin__rx 20,
// end__rx 40; patched: end__tx_read 16, begin__rx 16, rx_dropped 32 (56 B), end__rx 88.
#[test]
fn groups_are_shown_text_and_json() {
    let (code, out, _) = run(&["show", &elf("base"), "--struct", "netdev_like"]);
    assert_eq!(code, 0);
    let groups = "/* group tx_read: offset 0, size 20, lines 1 (from line 0), starts a line */\n\
                  /* group rx: offset 20, size 20, lines 1 (from line 0) */\n";
    let at = out.find(groups).unwrap_or_else(|| panic!("{out}"));
    // Right after the struct's block (`};`, or `} __attribute__((...));`), never in it.
    let before = out[..at].trim_end_matches('\n');
    let last = before.rsplit('\n').next().unwrap();
    assert!(last.starts_with('}') && last.ends_with(';'), "{out}");
    assert!(out[at..].lines().skip(2).all(|l| l.is_empty()), "{out}");
    let (code, v) = json(&["show", &elf("patched"), "--struct", "netdev_like"]);
    assert_eq!(code, 0);
    let g = &v["structs"][0]["groups"];
    let got: Vec<(&str, u64, u64, u64)> = g
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["name"].as_str().unwrap(),
                g["offset"].as_u64().unwrap(),
                g["size"].as_u64().unwrap(),
                g["lines"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [("tx_read", 0, 16, 1), ("rx", 16, 72, 2)]);
    assert_eq!(
        g[1]["members"],
        serde_json::json!(["rx_packets", "rx_bytes", "rx_dropped"])
    );
    // A struct without markers has no "groups" key.
    let (_, v) = json(&["show", &elf("base"), "--struct", "mce"]);
    assert!(v["structs"][0].get("groups").is_none());
}

#[test]
fn groups_are_diffed_text_and_json() {
    let (code, out, _) = run(&["diff", &elf("base"), &elf("patched")]);
    assert_eq!(code, 1);
    assert!(out.contains(
        "      group tx_read: 0+20 B, 1 line (starts a line) -> 0+16 B, 1 line (starts a line), -tx_flags\n\
         \x20     group rx: 20+20 B, 1 line -> 16+72 B, 2 lines, +rx_dropped\n"
    ), "{out}");
    let (_, v) = json(&["diff", &elf("base"), &elf("patched")]);
    let s = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "netdev_like")
        .unwrap();
    let rx = &s["groups"][1];
    assert_eq!(rx["name"], "rx");
    assert_eq!(
        (rx["size"]["old"].as_u64(), rx["size"]["new"].as_u64()),
        (Some(20), Some(72))
    );
    assert_eq!(
        (rx["lines"]["old"].as_u64(), rx["lines"]["new"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(rx["added_members"], serde_json::json!(["rx_dropped"]));
    assert_eq!(rx["flagged"], true);
    let tx = &s["groups"][0];
    assert_eq!(tx["removed_members"], serde_json::json!(["tx_flags"]));
    // tx_read lost a member but still touches one line and starts it: recorded only.
    assert_eq!(tx["flagged"], false);
    assert_eq!(s["severity"], "group");
    // The struct has an instance (loopback_dev), and the change still counts as a
    // group: `--fail-on group` fails on it, a list without `group` does not.
    assert_eq!(s["instances"], serde_json::json!(["loopback_dev"]));
    let code =
        |fail_on: &str| run(&["diff", &elf("base"), &elf("patched"), "--fail-on", fail_on]).0;
    assert_eq!(code("group"), 1);
    assert_eq!(code("neighbour,member,aligned,text"), 0);
    // A self-diff has no group changes.
    let (code, _, _) = run(&["diff", &elf("patched"), &elf("patched")]);
    assert_eq!(code, 0);
}

#[test]
fn groups_are_checked_text_and_json() {
    let (code, out, _) = run(&["check", "--rules", &rules("groups"), &elf("base")]);
    assert_eq!(code, 1);
    assert!(out.contains(
        "PASS group netdev_like.tx_read: aligned = true: offset 0 is a multiple of 64\n"
    ));
    assert!(out.contains("PASS group netdev_like.rx: max_size = 24: 20 B\n"));
    assert!(out.contains(
        "FAIL group netdev_like.rx: aligned = true: offset 20 is +20 in its 64 B line\n"
    ));
    let (code, v) = json(&["check", "--rules", &rules("groups"), &elf("patched")]);
    assert_eq!(code, 1);
    let size = outcome(&v, "netdev_like.rx", "max_size");
    assert_eq!(
        (size["pass"].as_bool(), size["measured"]["value"].as_u64()),
        (Some(false), Some(72))
    );
    let lines = outcome(&v, "netdev_like.rx", "max_lines");
    assert_eq!(
        (lines["pass"].as_bool(), lines["measured"]["value"].as_u64()),
        (Some(false), Some(2))
    );
    assert_eq!(offenders(lines), [("rx".to_string(), 16, vec![0, 64])]);
    assert_eq!(
        outcome(&v, "netdev_like.tx_read", "max_size")["measured"]["value"].as_u64(),
        Some(16)
    );
    assert_eq!(outcome(&v, "netdev_like.tx_read", "aligned")["pass"], true);
}

#[test]
fn struct_rules_need_debug_info_symbol_rules_do_not() {
    let nodebug = testdata("old-nodebug.elf");
    let (code, out, err) = run(&["check", "--rules", &rules("separate"), &nodebug]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        format!(
            "layout-diff: {nodebug}: has no debug info (.debug_info); struct queries need DWARF\n"
        )
    );
    // root_user in old-nodebug.elf: ffffffff82a51260, +0x20 (testdata/EXPECTED.md).
    let (code, out, _) = run(&["check", "--rules", &rules("root_user"), &nodebug]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "FAIL symbol root_user: aligned = 64: ffffffff82a51260 is +0x20 in its 64 B line\n"
        ),
        "{out}"
    );
}

// testdata/EXPECTED.md: kernel.c's struct stats is 16 bytes, other.c's 12.
#[test]
fn two_layouts_under_one_name_are_both_checked() {
    let r = std::env::temp_dir().join(format!("layout-diff-stats-{}.toml", std::process::id()));
    std::fs::write(&r, "[struct.stats]\nmax_size = 12\n").unwrap();
    let (code, out, _) = run(&[
        "check",
        "--rules",
        r.to_str().unwrap(),
        &testdata("old.elf"),
    ]);
    std::fs::remove_file(&r).unwrap();
    assert_eq!(code, 1);
    assert!(
        out.contains("FAIL struct stats (src/kernel.c): max_size = 12: 16 B\n"),
        "{out}"
    );
    assert!(
        out.contains("PASS struct stats (src/other.c): max_size = 12: 12 B\n"),
        "{out}"
    );
}

// pahole: base.elf's struct mce has 12 members from cs (64) to microcode (112).
#[test]
fn long_offender_lists_are_cut_and_counted() {
    let r = std::env::temp_dir().join(format!("layout-diff-mce1-{}.toml", std::process::id()));
    std::fs::write(&r, "[struct.mce]\nmax_cachelines = 1\n").unwrap();
    let path = r.to_str().unwrap().to_string();
    let (code, out, _) = run(&["check", "--rules", &path, &elf("base")]);
    let (_, v) = json(&["check", "--rules", &path, &elf("base")]);
    std::fs::remove_file(&r).unwrap();
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "FAIL struct mce: max_cachelines = 1: 2 lines\n       cs (offset 64, 1 B) on line 1\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("       extcpu (offset 68, 4 B) on line 1\n"),
        "{out}"
    );
    assert!(out.contains("       (+4 more)\n"), "{out}");
    let o = outcome(&v, "mce", "max_cachelines");
    assert_eq!(o["offenders"].as_array().unwrap().len(), 8);
    assert_eq!(o["more_offenders"].as_u64(), Some(4));
}

// With 128-byte lines, patched.elf's root_user (ffffffff82a51140) shares the line at
// ffffffff82a51100 with types__ptrace (ffffffff82a51100, 32 B).
#[test]
fn line_size_is_a_parameter_of_the_rules() {
    let args = [
        "check",
        "--rules",
        &rules("root_user"),
        &elf("patched"),
        "--line-size",
        "128",
    ];
    let (code, out, _) = run(&args);
    assert_eq!(code, 1);
    assert!(out.contains("line 128 B (--line-size)\n"), "{out}");
    assert!(
        out.contains("PASS symbol root_user: aligned = 64: ffffffff82a51140 is a multiple of 64\n")
    );
    assert!(
        out.contains(
            "FAIL symbol root_user: alone = true: 1 other object on its lines\n\
         \x20      types__ptrace (ffffffff82a51100, 32 B) on line ffffffff82a51100\n"
        ),
        "{out}"
    );
}

/// Issue 33, defect 4: under a failing `alone = true`, the HTML map's caption names the
/// objects at fault (nm: types__ptrace and uidhash_lock share root_user's lines in
/// base.elf), not the object checked.
#[test]
fn the_check_page_names_the_objects_at_fault() {
    let (code, html, err) = run(&[
        "check",
        "--rules",
        &testdata("check/rules/root_user.toml"),
        &testdata("check/base.elf"),
        "--format",
        "html",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        html.contains(
            "at fault: types__ptrace, uidhash_lock (beside root_user, the object checked)"
        ),
        "{html}"
    );
    assert!(!html.contains("at fault: root_user"), "{html}");
}

/// Issue 33, defect 10: a rule naming an object or a member the build lacks says the
/// closest name it has (base.elf: root_user, user_struct.__count, as nm and pahole show).
#[test]
fn a_misspelled_name_gets_a_did_you_mean() {
    let dir = std::env::temp_dir().join(format!("layout-diff-dym-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("r.toml");
    std::fs::write(
        &rules,
        "[symbol.root_usr]\naligned = 64\n\n[struct.user_struct]\nline_start = [\"__cout\"]\n",
    )
    .unwrap();
    let (code, out, err) = run(&[
        "check",
        "--rules",
        rules.to_str().unwrap(),
        &testdata("check/base.elf"),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("FAIL symbol root_usr: aligned = 64: no data or per-CPU object named root_usr in this build; did you mean `root_user`?"),
        "{out}"
    );
    assert!(
        out.contains("FAIL struct user_struct: line_start = \"__cout\": member not found; did you mean `__count`?"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
