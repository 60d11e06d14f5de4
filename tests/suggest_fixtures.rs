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
/// 0x20 in OLD, 1 line; 0x30 in NEW, 2 lines) cannot get its phase back by aligning
/// it to a line (0x00), but then covers 1 line again: the best an alignment does.
#[test]
fn a_hot_function_is_aligned_alone_or_with_its_file() {
    let (old, new) = pair();
    let hot = testdata("suggest/hot-fn.txt");
    let (code, doc) = json(&["suggest", &old, &new, "--hot", &hot]);
    assert_eq!(
        code, 0,
        "tx_hot's members leave it, futex_wake starts a line on no more lines than in OLD"
    );
    let f = &doc["functions"];
    assert_eq!(f.as_array().unwrap().len(), 2);
    assert_eq!(
        (
            f[1]["function"].as_str(),
            f[1]["lines_old"].as_u64(),
            f[1]["lines_new"].as_u64(),
            f[1]["fixes"][0]["restores"].as_bool(),
            f[1]["fixes"][0]["no_more_lines"].as_bool(),
            f[1]["fixes"][0]["lines"].as_u64(),
        ),
        (
            Some("futex_wake"),
            Some(1),
            Some(2),
            Some(false),
            Some(true),
            Some(1)
        )
    );
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
fn a_group_is_aligned_when_it_fits_and_emptied_when_it_outgrew_its_lines() {
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
    // It outgrew its line: the members added or grown in it leave (both restore; one
    // member moved comes first), declared after its end marker. tx-fixed.elf is the
    // first built: pahole has tx_hot at 128+64 B (one line), tx_flags at 192, the
    // struct still 256 B (+0 B per instance).
    let fixes: Vec<(&str, bool, u64, i64)> = g[1]["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["change"].as_str().unwrap(),
                f["restores"].as_bool().unwrap(),
                f["lines"].as_u64().unwrap(),
                f["instance_bytes"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fixes,
        vec![
            (
                "--struct sk_like --member tx_flags --after __cacheline_group_end__tx_hot",
                true,
                1,
                0
            ),
            (
                "--struct sk_like --member tx_flags --after __cacheline_group_end__tx_hot --struct sk_like --member tx_extra --after tx_flags",
                true,
                1,
                0
            ),
        ]
    );
    assert_eq!(
        g[1]["fixes"][0]["declaration"],
        "/* struct sk_like: declare after __cacheline_group_end(tx_hot) */ long int tx_flags;"
    );
    let change = [
        "--struct",
        "sk_like",
        "--member",
        "tx_flags",
        "--after",
        "__cacheline_group_end__tx_hot",
    ];
    assert_eq!(
        predicted_layout(&new, "new.elf", "sk_like", &change),
        sorted(facts_pahole("tx-fixed.elf", "sk_like"))
    );
    assert_eq!(predicted_nm(&change), facts_nm("tx-fixed.elf"));
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
    assert_eq!(
        first["declaration"],
        "int rm_lost __read_mostly;  /* with its initializer, if it has one */"
    );
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
/// (...b8), futex_wait +0x10, rx_hot over two lines, tx_hot 72 B. Every rule gets a
/// fix that makes it pass when checked again, so the exit is 0. tx_hot (128 .. 200,
/// pahole) is 8 B over 64: the smallest of its members of 8 B or more, the last
/// declared, is tx_flags (176, 8 B); declared after the end marker, the group is tx1..
/// tx6 and tx_extra, 128 .. 192 = 64 B, and the struct stays 256 B.
#[test]
fn on_one_build_each_failing_rule_gets_the_fix_that_makes_it_pass() {
    let new = testdata("suggest/new.elf");
    let rules = testdata("suggest/rules.toml");
    let (code, doc) = json(&["suggest", &new, "--rules", &rules]);
    assert_eq!(code, 0, "every rule has a fix that passes");
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
    assert_eq!(
        best("sk_like.tx_hot", "max_size"),
        (
            "--struct sk_like --member tx_flags --after __cacheline_group_end__tx_hot".into(),
            true
        )
    );
    let tx = r.iter().find(|x| x["target"] == "sk_like.tx_hot").unwrap();
    assert_eq!(tx["measured"]["value"], 72);
    assert_eq!(tx["fixes"].as_array().map(Vec::len), Some(1));
    assert_eq!(tx["fixes"][0]["instance_bytes"], 0);
    assert_eq!(tx["fixes"][0]["instances"], 1);
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

/// pahole's listing of struct `t` in `file` as FACTS.md records it: each member's
/// (name, offset, size), and the struct's size.
fn facts_pahole(file: &str, t: &str) -> (Vec<(String, u64, u64)>, u64) {
    let facts = std::fs::read_to_string(testdata("suggest/FACTS.md")).expect("FACTS.md");
    let head = format!("## {file}: pahole -C {t}\n");
    let at = facts.find(&head).expect("section in FACTS.md");
    let mut members = Vec::new();
    let mut size = 0;
    for l in facts[at..]
        .lines()
        .skip(3)
        .take_while(|l| !l.starts_with("```"))
    {
        if let Some(rest) = l.trim().strip_prefix("/* size: ") {
            size = rest.split(',').next().unwrap().parse().unwrap();
            continue;
        }
        let Some((decl, comment)) = l.split_once(';') else {
            continue;
        };
        let Some(comment) = comment.trim().strip_prefix("/*") else {
            continue;
        };
        let decl = decl.split(" __attribute__").next().unwrap();
        let name = decl.split_whitespace().last().unwrap();
        let name = name.split('[').next().unwrap().trim_start_matches('*');
        let n: Vec<u64> = comment
            .trim_end_matches("*/")
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        members.push((name.to_string(), n[0], n[1]));
    }
    (members, size)
}

/// Struct `t` as `whatif FILE CHANGES` predicts it: pahole's listing of `base` (the
/// build predicted from) with the offsets and size the predicted diff reports.
fn predicted_layout(
    file: &str,
    base: &str,
    t: &str,
    changes: &[&str],
) -> (Vec<(String, u64, u64)>, u64) {
    let mut args = vec!["whatif", file];
    args.extend(changes);
    args.extend(["--all", "--format", "json"]);
    let (_, out, err) = run(&args);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let (mut members, mut size) = facts_pahole(base, t);
    if let Some(s) = doc["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == t)
    {
        size = s["size"]["new"].as_u64().unwrap();
        for m in s["members"].as_array().unwrap() {
            let at = members
                .iter_mut()
                .find(|x| m["name"] == x.0.as_str())
                .unwrap();
            at.1 = m["offset"]["new"].as_u64().unwrap();
        }
    }
    members.sort_by_key(|m| (m.1, m.2 > 0));
    (members, size)
}

fn sorted(mut l: (Vec<(String, u64, u64)>, u64)) -> (Vec<(String, u64, u64)>, u64) {
    l.0.sort_by_key(|m| (m.1, m.2 > 0));
    l
}

/// The first fix of each rule of structs.toml (offsets and sizes by pahole on
/// structs.elf, FACTS.md; the fixed sizes by hand, then by pahole on structs-fixed.elf):
/// - ls_like: hot_lock (40) aligned: 80 -> 128 B, +48;
/// - tg_like: tail (72) declared after head: 8, 88 B either way; head declared after
///   mid (mid 0..64, head 64, tail 72) passes too, second by order;
/// - sp_like: count (8) declared after x (16..96): x 8..88, count 88 on line 1, 96 B;
///   count aligned instead: 64, x 72..152, 192 B, +96;
/// - mh_like: c2 (44) after c1 and i2 (40) after i1: holes 7 + 4 -> 6, 48 -> 40 B, -8;
/// - mc_like: c2 (128) after c1: 136 -> 128 B (2 lines), -8;
/// - ms_like: i2 (16) after i1: 24 -> 16 B, -8;
/// - gs_like.hot (8 .. 52 = 44 B, max 40: 4 B over): h3 and h5 are the smallest of at
///   least 4 B; h5, the last declared, after the end marker: 8 .. 48 = 40 B, 64 B.
///
/// Every one passes, one instance each, so the exit is 0.
#[test]
fn struct_rules_on_one_build_get_a_fix_that_passes() {
    let file = testdata("suggest/structs.elf");
    let rules = testdata("suggest/structs.toml");
    let (code, doc) = json(&["suggest", &file, "--rules", &rules]);
    assert_eq!(code, 0);
    let r = doc["rules"].as_array().unwrap();
    assert_eq!(r.len(), 7);
    let fixes = |target: &str, key: &str| -> Vec<(String, bool, i64, u64)> {
        let x = r
            .iter()
            .find(|x| x["target"] == target && x["key"] == key)
            .unwrap_or_else(|| panic!("{target} {key}"));
        x["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["change"].as_str().unwrap().to_string(),
                    f["passes"] == true,
                    f["instance_bytes"].as_i64().unwrap(),
                    f["instances"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let fix = |c: &str, pass: bool, bytes: i64| (c.to_string(), pass, bytes, 1);
    assert_eq!(
        fixes("ls_like", "line_start"),
        [fix(
            "--struct ls_like --member hot_lock --align 64",
            true,
            48
        )]
    );
    assert_eq!(
        fixes("tg_like", "together"),
        [
            fix("--struct tg_like --member tail --after head", true, 0),
            fix("--struct tg_like --member head --after mid", true, 0)
        ]
    );
    assert_eq!(
        fixes("sp_like", "separate"),
        [
            fix("--struct sp_like --member count --after x", true, 0),
            fix("--struct sp_like --member count --align 64", true, 96)
        ]
    );
    // Alone, i2 into the 4 B hole leaves 7 B (passes, 48 B); c2 alone leaves 6 + 4.
    assert_eq!(
        fixes("mh_like", "max_holes"),
        [
            fix(
                "--struct mh_like --member c2 --after c1 --struct mh_like --member i2 --after i1",
                true,
                -8
            ),
            fix("--struct mh_like --member i2 --after i1", true, 0),
            fix("--struct mh_like --member c2 --after c1", false, 0)
        ]
    );
    assert_eq!(
        fixes("mc_like", "max_cachelines"),
        [fix("--struct mc_like --member c2 --after c1", true, -8)]
    );
    assert_eq!(
        fixes("ms_like", "max_size"),
        [fix("--struct ms_like --member i2 --after i1", true, -8)]
    );
    assert_eq!(
        fixes("gs_like.hot", "max_size"),
        [fix(
            "--struct gs_like --member h5 --after __cacheline_group_end__hot",
            true,
            0
        )]
    );
    let tg = r.iter().find(|x| x["target"] == "tg_like").unwrap();
    assert_eq!(
        tg["fixes"][0]["declaration"],
        "/* struct tg_like: declare after head */ long int tail;"
    );
    let gs = r.iter().find(|x| x["target"] == "gs_like.hot").unwrap();
    assert_eq!(
        gs["fixes"][0]["declaration"],
        "/* struct gs_like: declare after __cacheline_group_end(hot) */ int h5;"
    );
}

/// The first fixes, predicted together on structs.elf, against structs-fixed.elf (the
/// same fixes built): every symbol at its nm address, and each struct's members at
/// pahole's offsets with pahole's size.
#[test]
fn the_first_struct_fixes_predicted_equal_the_real_build() {
    let file = testdata("suggest/structs.elf");
    let rules = testdata("suggest/structs.toml");
    let (_, doc) = json(&["suggest", &file, "--rules", &rules]);
    let all: Vec<String> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["fixes"][0]["change"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let changes: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut args = vec![file.as_str()];
    args.extend(&changes);
    let nm = {
        let mut a = vec!["whatif"];
        a.extend(&args);
        a.push("--nm");
        let (code, out, err) = run(&a);
        assert_eq!(code, 0, "{err}");
        out.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 4).then(|| (f[0].to_string(), f[3].to_string()))
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(nm, facts_nm("structs-fixed.elf"));
    for t in [
        "ls_like", "tg_like", "sp_like", "mh_like", "mc_like", "ms_like", "gs_like",
    ] {
        assert_eq!(
            predicted_layout(&file, "structs.elf", t, &changes),
            sorted(facts_pahole("structs-fixed.elf", t)),
            "{t}"
        );
    }
}

/// nf_like (FACTS.md: c 0, a 7 B hole, l 8..16): l is too large for the hole, and
/// max_growth has no OLD on one build; neither gets a fix, so the exit is 1.
#[test]
fn struct_rules_without_a_fix_say_why() {
    let file = testdata("suggest/structs.elf");
    let rules = testdata("suggest/nothing-fits.toml");
    let (code, doc) = json(&["suggest", &file, "--rules", &rules]);
    assert_eq!(code, 1);
    let notes: Vec<(&str, &str)> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"].as_str().unwrap(), r["note"].as_str().unwrap()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                "max_growth",
                "max_growth compares with OLD: give both builds to `check OLD NEW`; on one build there is nothing to compare"
            ),
            (
                "max_holes",
                "no member declared after a hole fits in it (its size and alignment)"
            )
        ]
    );
}

/// With hot-members.txt (gs_like +0x30: h5, measured), h5 stays in the group: h3
/// (24, 4 B), the other smallest, leaves instead. By hand: h1 8, h2 16, h4 24..40,
/// h5 40..44, the end marker at 44, h3 44..48, z 48..56: the group 8 .. 44 = 36 B, the
/// struct 64 -> 56 B, -8 per instance. No fix moving h5 is listed.
#[test]
fn a_hot_member_stays_in_a_group_over_its_max_size_when_another_can_leave() {
    let file = testdata("suggest/structs.elf");
    let rules = testdata("suggest/structs.toml");
    let hot = testdata("suggest/hot-members.txt");
    let (code, doc) = json(&["suggest", &file, "--rules", &rules, "--hot", &hot]);
    assert_eq!(code, 0);
    let gs = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["target"] == "gs_like.hot")
        .unwrap();
    let f = gs["fixes"].as_array().unwrap();
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0]["change"],
        "--struct gs_like --member h3 --after __cacheline_group_end__hot"
    );
    assert_eq!(f[0]["passes"], true);
    assert_eq!(f[0]["instance_bytes"], -8);
    assert_eq!(
        predicted_layout(
            &file,
            "structs.elf",
            "gs_like",
            &[
                "--struct",
                "gs_like",
                "--member",
                "h3",
                "--after",
                "__cacheline_group_end__hot"
            ]
        ),
        (
            vec![
                ("a".to_string(), 0, 8),
                ("__cacheline_group_begin__hot".to_string(), 8, 0),
                ("h1".to_string(), 8, 8),
                ("h2".to_string(), 16, 8),
                ("h4".to_string(), 24, 16),
                ("h5".to_string(), 40, 4),
                ("__cacheline_group_end__hot".to_string(), 44, 0),
                ("h3".to_string(), 44, 4),
                ("z".to_string(), 48, 8),
            ],
            56
        )
    );
}

/// ig_like's hot_cnt (measured, hot-members.txt) is at 48 in structs.elf, on line 0
/// with group rx (r1..r4, 0 .. 32), and at 64 in structs-new.elf behind added[2]. It is
/// offered a place inside rx, after r4: predicted at 32 (line 0), restoring, 104 B
/// either way; structs-into.elf is that change built: every nm address and pahole
/// offset as predicted.
#[test]
fn a_hot_member_pushed_off_its_groups_line_is_offered_a_place_in_the_group() {
    let old = testdata("suggest/structs.elf");
    let new = testdata("suggest/structs-new.elf");
    let hot = testdata("suggest/hot-members.txt");
    let (code, doc) = json(&["suggest", &old, &new, "--hot", &hot]);
    assert_eq!(code, 0);
    let m = &doc["members"][0];
    assert_eq!(
        (&m["struct"], &m["member"]),
        (&"ig_like".into(), &"hot_cnt".into())
    );
    let into = m["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["change"] == "--struct ig_like --member hot_cnt --after r4")
        .expect("the fix inside the group");
    assert_eq!(
        into["declaration"],
        "/* struct ig_like: declare inside group rx, after r4 (before __cacheline_group_end(rx)) */ long int hot_cnt;"
    );
    assert_eq!(into["restores"], true);
    assert_eq!(into["line"], 0);
    assert_eq!(into["instance_bytes"], 0);
    assert_eq!(into["instances"], 1);
    let change = [
        "--struct", "ig_like", "--member", "hot_cnt", "--after", "r4",
    ];
    let mut args = vec!["whatif", new.as_str()];
    args.extend(change);
    args.push("--nm");
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let nm: Vec<(String, String)> = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4).then(|| (f[0].to_string(), f[3].to_string()))
        })
        .collect();
    assert_eq!(nm, facts_nm("structs-into.elf"));
    assert_eq!(
        predicted_layout(&new, "structs-new.elf", "ig_like", &change),
        sorted(facts_pahole("structs-into.elf", "ig_like"))
    );
}

/// The same report as Markdown and as one HTML page: a heading (a section) per item,
/// in the text's order, the fixes numbered with their C in code blocks. On
/// testdata/suggest the items are groups rx_hot and tx_hot, then rm_lost (the text's
/// three headings after the title).
#[test]
fn suggest_is_drawn_as_markdown_and_html_from_the_texts_sentences() {
    let (old, new) = pair();
    let (code, text, _) = run(&["suggest", &old, &new]);
    assert_eq!(code, 0);
    let headings: Vec<&str> = text
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty() && !l.starts_with(' '))
        .collect();
    assert_eq!(headings.len(), 3, "{text}");
    let (code, md, _) = run(&["suggest", &old, &new, "--format", "markdown"]);
    assert_eq!(code, 0);
    let md_headings: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        md_headings,
        vec![
            "## struct sk_like group rx_hot: 16+40 B, 1 line -> 32+40 B, 2 lines (its size needs 1)",
            "## struct sk_like group tx_hot: 64+52 B, 1 line -> 128+72 B, 2 lines (its size needs 2)",
            "## rm_lost (int)  flagged: neighbour",
        ]
    );
    // The first fix of rm_lost, its C in a fenced block under the list item.
    assert!(
        md.contains(
            "1. --read-mostly rm_lost: restores; section end +4 B, 1 other object moved (at most +4 B); 1 line; 1 flag in the predicted diff\n\n   ```c\n   int rm_lost __read_mostly;  /* with its initializer, if it has one */\n   ```\n"
        ),
        "{md}"
    );
    assert!(md.contains("Check rule:\n\n```toml\n[group.\"sk_like.tx_hot\"]\nmax_size = 64\n"));
    let (code, html, _) = run(&["suggest", &old, &new, "--format", "html"]);
    assert_eq!(code, 0);
    assert_eq!(html.matches("<section class=\"suggestion\">").count(), 3);
    assert!(html.contains(
        "<li><p>--read-mostly rm_lost: restores; section end +4 B, 1 other object moved (at most +4 B); 1 line; 1 flag in the predicted diff</p><pre class=\"code\">int rm_lost __read_mostly;  /* with its initializer, if it has one */</pre></li>"
    ));
    // Four fixes for rm_lost (its one written neighbour on its line is jiffies_64),
    // one for rx_hot, two for tx_hot (members leave it).
    assert_eq!(html.matches("<pre class=\"code\">").count() - 3, 7);
}

/// A `line_start` rule on a member declared inside an anonymous struct in a union
/// (`pkt.hash`, at 24 in anon-base.elf) gets it aligned: anon-align.elf is that fix
/// built, where pahole has `hash` at 64 and `struct pkt` at 192 B against 56 B
/// (+136 B per instance, FACTS.md).
#[test]
fn a_line_start_rule_on_a_member_inside_an_anonymous_struct_gets_it_aligned() {
    let base = testdata("whatif/anon-base.elf");
    let rules = testdata("whatif/anon-rules.toml");
    let (code, doc) = json(&["suggest", &base, "--rules", &rules]);
    assert_eq!(code, 0);
    let fix = &doc["rules"][0]["fixes"][0];
    assert_eq!(
        (
            fix["change"].as_str(),
            fix["passes"].as_bool(),
            fix["instance_bytes"].as_i64(),
        ),
        (
            Some("--struct pkt --member hash --align 64"),
            Some(true),
            Some(136)
        )
    );
}
