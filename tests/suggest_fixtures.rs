//! `suggest` on testdata/suggest (see its README.md): fixes for a function that changed
//! phase, for cache-line groups, for an object that lost `__read_mostly`, and, on one
//! build, for failing rules and measured-hot objects on shared lines. Every expected
//! number comes from testdata/suggest/FACTS.md (nm and pahole of the real builds,
//! the fixed variants included), or is computed from it in a comment.

mod common;

use common::{run, testdata};
use serde_json::Value;

fn json(args: &[&str]) -> (i32, Value) {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (code, out, err) = run(&a);
    assert!(code == 0 || code == 1, "{args:?}: exit {code}: {err}");
    (code, serde_json::from_str(&out).expect("JSON"))
}

/// `nm -n -S` lines of `file` as FACTS.md records them: (address, name), functions
/// and data, without the linker-script symbols that have no size.
fn facts_nm(file: &str) -> Vec<(String, String)> {
    let facts = std::fs::read_to_string(testdata("suggest/FACTS.md")).expect("FACTS.md");
    let head = format!("## {file}: nm -n -S");
    let at = facts.find(&head).expect("section in FACTS.md");
    facts[at..]
        .lines()
        .skip(3)
        .take_while(|l| !l.starts_with("```"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4).then(|| (f[0].to_string(), f[3].to_string()))
        })
        .collect()
}

/// `whatif --nm` of new.elf with `change`: (address, name) of every symbol.
fn predicted_nm(change: &[&str]) -> Vec<(String, String)> {
    let new = testdata("suggest/new.elf");
    let mut args = vec!["whatif", new.as_str()];
    args.extend(change);
    args.push("--nm");
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4).then(|| (f[0].to_string(), f[3].to_string()))
        })
        .collect()
}

fn pair() -> (String, String) {
    (testdata("suggest/old.elf"), testdata("suggest/new.elf"))
}

/// futex_wait starts +0x00 into its line in OLD (ffffffff81000040) and +0x10 in NEW
/// (ffffffff81000050) behind grow_fn, 0x30 -> 0x40 B. `__aligned(64)` on it gives
/// fn-fixed.elf: futex_wait at ffffffff81000080, and .text ends at read_data's end,
/// 0xe0 + 0x42 against 0xb0 + 0x42: +0x30 = 48 B, with futex_wake, tail_fn and read_data
/// moved by 0x30. `-falign-functions=64` for fn.c gives fn-file.elf: read_data at
/// 0x120, +0x70 = 112 B, five functions moved (all but start, at 0). futex_wake (phase
/// 0x20 in OLD) cannot get its phase back by aligning it to a line (0x00).
#[test]
fn a_hot_function_is_aligned_alone_or_with_its_file() {
    let (old, new) = pair();
    let hot = testdata("suggest/hot-fn.txt");
    let (code, doc) = json(&["suggest", &old, &new, "--hot", &hot]);
    assert_eq!(code, 1, "tx_hot has no fix, futex_wake cannot restore");
    let f = &doc["functions"];
    assert_eq!(f.as_array().unwrap().len(), 2);
    let wait = &f[0];
    assert_eq!(wait["function"], "futex_wait");
    assert_eq!(wait["unit"], "fn.c");
    assert_eq!(wait["address_old"], "0xffffffff81000040");
    assert_eq!(wait["address_new"], "0xffffffff81000050");
    assert_eq!(
        (wait["phase_old"].as_u64(), wait["phase_new"].as_u64()),
        (Some(0), Some(0x10))
    );
    let fixes = wait["fixes"].as_array().unwrap();
    assert_eq!(fixes[0]["change"], "--symbol futex_wait --align 64");
    assert_eq!(fixes[0]["restores"], true);
    assert_eq!(fixes[0]["section_bytes"], 48);
    assert_eq!(fixes[0]["shifted"], 3);
    assert_eq!(fixes[0]["max_shift"], 48);
    assert_eq!(fixes[1]["change"], "--align-functions fn.c=64");
    assert_eq!(fixes[1]["restores"], true);
    assert_eq!(fixes[1]["section_bytes"], 112);
    assert_eq!(fixes[1]["shifted"], 5);
    assert_eq!(
        fixes[1]["declaration"],
        "CFLAGS_fn.o += -falign-functions=64  /* in Makefile */"
    );
    assert_eq!(
        wait["rule"],
        "[function.\"futex_wait\"]\nalign = 64\nwhy = \"a hot function kept at the start of a line (layout-diff suggest)\"\n"
    );
    let wake = &f[1];
    assert_eq!(wake["function"], "futex_wake");
    assert_eq!(wake["fixes"][0]["restores"], false);
    assert_eq!(wake["fixes"][0]["phase"], 0);
    // The predictions are the real builds, function by function.
    let text = |nm: Vec<(String, String)>| -> Vec<(String, String)> {
        nm.into_iter()
            .filter(|(_, n)| {
                [
                    "start",
                    "grow_fn",
                    "futex_wait",
                    "futex_wake",
                    "tail_fn",
                    "read_data",
                ]
                .contains(&n.as_str())
            })
            .collect()
    };
    assert_eq!(
        text(predicted_nm(&["--symbol", "futex_wait", "--align", "64"])),
        text(facts_nm("fn-fixed.elf"))
    );
    assert_eq!(
        text(predicted_nm(&["--align-functions", "fn.c=64"])),
        text(facts_nm("fn-file.elf"))
    );
}

/// pahole: rx_hot is 16+40 B on line 0 in OLD and 32+40 B over lines 0-1 in NEW
/// (behind `added[2]`); 40 B need one line, and group-fixed.elf
/// (`__cacheline_group_begin_aligned(rx_hot)`) has it at 64+40 B with the struct still
/// 256 B: +0 B per instance, one instance (sk0). tx_hot is 64+52 B (one line) in OLD and
/// 128+72 B in NEW: 72 - 64 = 8 B more than its one line holds, with tx_flags grown
/// (4 -> 8 B) and tx_extra added.
#[test]
fn a_group_is_aligned_when_it_fits_and_measured_when_it_outgrew_its_lines() {
    let (old, new) = pair();
    let (_, doc) = json(&["suggest", &old, &new]);
    let g = doc["groups"].as_array().unwrap();
    assert_eq!(g.len(), 2);
    assert_eq!(g[0]["group"], "rx_hot");
    assert_eq!(
        (
            g[0]["offset_old"].as_u64(),
            g[0]["offset_new"].as_u64(),
            g[0]["size_new"].as_u64()
        ),
        (Some(16), Some(32), Some(40))
    );
    assert_eq!(
        (g[0]["lines_old"].as_u64(), g[0]["lines_new"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(g[0]["lines_needed"], 1);
    assert_eq!(g[0]["exceeds_by"], Value::Null);
    let fix = &g[0]["fixes"][0];
    assert_eq!(
        fix["change"],
        "--struct sk_like --member __cacheline_group_begin__rx_hot --align 64"
    );
    assert_eq!(
        fix["declaration"],
        "/* struct sk_like */ __cacheline_group_begin_aligned(rx_hot);"
    );
    assert_eq!(fix["restores"], true);
    assert_eq!(fix["lines"], 1);
    assert_eq!(fix["instance_bytes"], 0);
    assert_eq!(fix["instances"], 1);
    assert_eq!(g[1]["group"], "tx_hot");
    assert_eq!(g[1]["exceeds_by"], 8);
    assert_eq!(
        g[1]["added_or_grown"],
        serde_json::json!(["tx_flags", "tx_extra"])
    );
    assert_eq!(g[1]["fixes"], serde_json::json!([]));
    assert_eq!(
        g[1]["rule"],
        "[group.\"sk_like.tx_hot\"]\nmax_size = 64\nwhy = \"the group fit 1 line before (layout-diff suggest); fails until it shrinks\"\n"
    );
}

/// rm_lost is `__read_mostly` in OLD (ffffffff82a000c4, after rm_other at ...c0) and in
/// .data beside known-hot jiffies_64 in NEW (...b8). Putting it back is the first fix:
/// predicted, every data object is where rm-fixed.elf (that rebuild) has it, and
/// `.data`'s objects end 4 B later (...c8 against ...c4). NEW defines it before
/// rm_other and this unit's objects are emitted in definition order
/// (`-fno-toplevel-reorder`), so it goes first there (...c0) and rm_other moves to
/// ...c4: the one object shifted.
#[test]
fn an_object_that_lost_read_mostly_gets_it_back_first() {
    let (old, new) = pair();
    let (_, doc) = json(&["suggest", &old, &new]);
    let s = doc["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["object"] == "rm_lost")
        .expect("rm_lost flagged");
    let first = &s["fixes"][0];
    assert_eq!(first["change"], "--read-mostly rm_lost");
    assert_eq!(first["declaration"], "int rm_lost __read_mostly ...;");
    assert_eq!(first["restores"], true);
    assert_eq!(first["section_bytes"], 4);
    assert_eq!(first["shifted"], 1);
    let data = |nm: Vec<(String, String)>| -> Vec<(String, String)> {
        nm.into_iter()
            .filter(|(a, n)| {
                a.starts_with("ffffffff82a00") && !n.starts_with("__stop") && n != "_edata"
            })
            .collect()
    };
    assert_eq!(
        data(predicted_nm(&["--read-mostly", "rm_lost"])),
        data(facts_nm("rm-fixed.elf"))
    );
}

/// On new.elf alone (FACTS.md): sysctl_x at ...48 (+0x8), nr_threads (...08) on
/// total_forks' line, jiffies_64 (...b0) between pad_rm (...80, 48 B) and rm_lost
/// (...b8), futex_wait +0x10, rx_hot over two lines, tx_hot 72 B. Every rule but
/// tx_hot's max_size gets a fix that makes it pass when checked again.
#[test]
fn on_one_build_each_failing_rule_gets_the_fix_that_makes_it_pass() {
    let new = testdata("suggest/new.elf");
    let rules = testdata("suggest/rules.toml");
    let (code, doc) = json(&["suggest", &new, "--rules", &rules]);
    assert_eq!(code, 1, "tx_hot's max_size has no fix");
    let r = doc["rules"].as_array().unwrap();
    let best = |target: &str, key: &str| -> (String, bool) {
        let x = r
            .iter()
            .find(|x| x["target"] == target && x["key"] == key)
            .unwrap_or_else(|| panic!("{target} {key}"));
        let f = &x["fixes"][0];
        (
            f["change"].as_str().unwrap_or("").to_string(),
            f["passes"] == true,
        )
    };
    assert_eq!(r.len(), 6);
    assert_eq!(
        best("sysctl_x", "aligned"),
        ("--symbol sysctl_x --align 64".into(), true)
    );
    assert_eq!(
        best("nr_threads", "not_with"),
        ("--symbol nr_threads --align 64".into(), true)
    );
    // Aligning jiffies_64 alone leaves rm_lost on its line: it and rm_lost both.
    assert_eq!(
        best("jiffies_64", "alone"),
        (
            "--symbol jiffies_64 --align 64 --symbol rm_lost --align 64".into(),
            true
        )
    );
    assert_eq!(
        best("futex_wait", "align"),
        ("--symbol futex_wait --align 64".into(), true)
    );
    assert_eq!(
        best("sk_like.rx_hot", "max_lines"),
        (
            "--struct sk_like --member __cacheline_group_begin__rx_hot --align 64".into(),
            true
        )
    );
    let tx = r.iter().find(|x| x["target"] == "sk_like.tx_hot").unwrap();
    assert_eq!(tx["fixes"], serde_json::json!([]));
    assert_eq!(tx["measured"]["value"], 72);
}

/// With a `--hot` list naming nr_threads (measured), its written neighbour total_forks
/// (same line, ffffffff82a00000 and ...08) makes a not_with rule; aligning nr_threads
/// passes it (exit 0); aligning total_forks does not (it is already at a line start).
#[test]
fn on_one_build_a_measured_hot_object_is_kept_off_written_neighbours() {
    let new = testdata("suggest/new.elf");
    let hot = testdata("suggest/hot.txt");
    let (code, doc) = json(&["suggest", &new, "--hot", &hot]);
    assert_eq!(code, 0);
    let r = doc["rules"].as_array().unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["target"], "nr_threads");
    assert_eq!(r[0]["offenders"], serde_json::json!(["total_forks"]));
    assert_eq!(r[0]["fixes"][0]["change"], "--symbol nr_threads --align 64");
    assert_eq!(r[0]["fixes"][0]["passes"], true);
    assert_eq!(
        r[0]["fixes"][1]["change"],
        "--symbol total_forks --align 64"
    );
    assert_eq!(r[0]["fixes"][1]["passes"], false);
    assert_eq!(
        r[0]["rule"],
        "[symbol.\"nr_threads\"]\nnot_with = [\"total_forks\"]\nwhy = \"measured hot and written: kept off other written objects' lines (layout-diff suggest --hot)\"\n"
    );
}

/// One build without rules or evidence is an error, exit 2 with one line.
#[test]
fn one_build_needs_rules_or_evidence() {
    let new = testdata("suggest/new.elf");
    let (code, out, err) = run(&["suggest", &new]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(
        err.trim_end(),
        "layout-diff: suggest on one build needs --rules FILE or --hot FILE (or give OLD NEW)"
    );
}
