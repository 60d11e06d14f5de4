//! End-to-end tests of judgement by evidence on testdata/evidence/{old,new,cold}.elf:
//! every address below is read from testdata/evidence/FACTS.md (nm), and the perf
//! report from testdata/evidence/perf-type.txt (see testdata/evidence/README.md).

mod common;

use common::{data_change, json, run, testdata};
use serde_json::Value;

fn flagged(v: &Value) -> Vec<(String, String, String)> {
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["flagged"] == true)
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["decision"]["category"].as_str().unwrap().to_string(),
                c["evidence"]["strength"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn known_and_declared_objects_with_a_new_written_neighbour_exit_1() {
    // nm: nr_threads 0x...30 -> 0x...38 behind total_forks (known hot) at 0x...30 in
    // NEW; hot_stat (aligned 64) at 0x...80 with calc_load_tasks (known) at 0x...a0.
    let (code, v) = json(&[&testdata("evidence/old.elf"), &testdata("evidence/new.elf")]);
    assert_eq!(code, 1);
    assert_eq!(
        flagged(&v),
        vec![
            ("nr_threads".into(), "neighbour".into(), "known".into()),
            ("hot_stat".into(), "neighbour".into(), "declared".into()),
            (
                "sysctl_rm_knob".into(),
                "neighbour".into(),
                "declared".into()
            ),
        ]
    );
    // sysctl_rm_knob was __read_mostly in OLD (0x...e40, after __stop_last_bounded and
    // before _edata); NEW dropped the attribute and put it beside jiffies_64 (0x...e70).
    let rm = data_change(&v, "sysctl_rm_knob");
    assert_eq!(rm["evidence"]["what"], "declared: __read_mostly (read hot)");
    assert_eq!(rm["written_neighbours"], serde_json::json!(["jiffies_64"]));
    // rm_other stays in the read-mostly data and lost its neighbour: nothing to say.
    let other = data_change(&v, "rm_other");
    assert_eq!(
        (
            other["severity"].as_str(),
            other["decision"]["rule"].as_str()
        ),
        (
            Some("info"),
            Some("read-mostly: only a written member on its lines would matter, and none came")
        )
    );
    let n = data_change(&v, "nr_threads");
    assert_eq!(n["written_neighbours"], serde_json::json!(["total_forks"]));
    assert_eq!(
        n["decision"]["rule"],
        "a hot member now shares a line with a member of another object that frequent code writes (known or measured hot, or called directly by such code), code that does not write the hot member"
    );
    // pidmap_lock (known) gained evil_lock, a spinlock nothing says is hot: listed
    // as possible, not flagged.
    let p = data_change(&v, "pidmap_lock");
    assert_eq!(
        (p["severity"].as_str(), p["flagged"].as_bool()),
        (Some("possible"), Some(false))
    );
    assert_eq!(p["written_neighbours"], serde_json::json!(["evil_lock"]));
    assert_eq!(
        data_change(&v, "hot_stat")["evidence"]["what"],
        "declared: aligned to 64 B"
    );
    // mstat gained a hot neighbour too, but nothing says it is hot without the profile.
    assert_eq!(data_change(&v, "mstat")["flagged"], false);
    let (_, text, _) = run(&[&testdata("evidence/old.elf"), &testdata("evidence/new.elf")]);
    assert!(
        text.contains("      evidence: known: thread count, incremented in copy_process()"),
        "{text}"
    );
}

#[test]
fn a_perf_data_type_profile_flags_measured_objects_and_members() {
    let (code, v) = json(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--hot",
        &testdata("evidence/perf-type.txt"),
    ]);
    assert_eq!(code, 1);
    // mstat 0x...f0 -> 0x...f8 behind tcp_memory_allocated (known); mq's tail (sampled
    // at +0x38) moves from offset 56 (line 0) to 72 (line 1): information, not a flag.
    let mut got = flagged(&v);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("hot_stat".into(), "neighbour".into(), "declared".into()),
            ("mstat".into(), "neighbour".into(), "measured".into()),
            ("nr_threads".into(), "neighbour".into(), "known".into()),
            (
                "sysctl_rm_knob".into(),
                "neighbour".into(),
                "declared".into()
            ),
        ]
    );
    assert_eq!(
        data_change(&v, "mstat")["evidence"]["what"],
        "measured: perf data-type profile (25.00% of samples, long int)"
    );
    assert_eq!(
        data_change(&v, "mq")["decision"]["rule"],
        "a hot member moved to another line: information, not a flag; what matters is who shares its new line"
    );
    let tail = data_change(&v, "mq")["member_lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "tail")
        .unwrap()
        .clone();
    assert_eq!(
        (
            tail["offset"]["old"].as_u64(),
            tail["offset"]["new"].as_u64()
        ),
        (Some(56), Some(72))
    );
    assert_eq!(
        (tail["line"]["old"].as_u64(), tail["line"]["new"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(tail["evidence"]["strength"], "measured");
    let s = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "msg_queue")
        .unwrap();
    // The struct: a measured member moved line, which is information; who shares its
    // new line is judged only with the typed access map (--access).
    assert_eq!(s["severity"], "struct_with_instance");
    assert_eq!(s["decision"]["verdict"], "changed");
}

#[test]
fn show_hot_ranks_sampled_members_with_their_lines() {
    let (code, out, _) = run(&[
        "show",
        &testdata("evidence/new.elf"),
        "--hot",
        &testdata("evidence/perf-type.txt"),
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("  struct msg_queue (80 B, 2 lines; instances: mq)  62.50%\n       +0x48  tail                     line 1  62.50%\n"),
        "{out}"
    );
    assert!(
        out.contains("  mstat  offset in line 0x38, 1 line(s)  25.00%"),
        "{out}"
    );
}

#[test]
fn moving_only_cold_objects_exits_0_with_one_root_cause() {
    // cold.elf: grow_me 16 -> 24 B moves print_fmt_ev00..ev99 by 0x10 (nm: 0x...110 ->
    // 0x...120 for the first).
    let (code, out, _) = run(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/cold.elf"),
    ]);
    assert_eq!(code, 0, "{out}");
    let causes: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("root causes"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(
        causes,
        vec!["  grow_me +8 B: 100 objects moved across lines (data, 1 run), 0 hot"]
    );
    let (_, v) = json(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/cold.elf"),
    ]);
    assert_eq!(v["flagged"], 0);
    assert_eq!(
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["cold"] == "tracing")
            .count(),
        100
    );
}

#[test]
fn explain_prints_the_evidence_the_cause_and_the_rule() {
    let (code, out, _) = run(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--explain",
        "nr_threads",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "nr_threads (int, 4 B) in .data\n\
         \x20 place 0xffffffff82a00030 -> 0xffffffff82a00038; offset in line 0x30 -> 0x38; lines 1 -> 1\n\
         \x20 neighbours: pad_a  ->  pad_a, total_forks\n\
         \x20 hot members: the whole object: the evidence names the object, and it has no write-type member\n\
         \x20 hot members before: nr_threads 0x0..0x4 on line ffffffff82a00000 (shared)\n\
         \x20 lines shared before:\n\
         \x20   line ffffffff82a00000\n\
         \x20     nr_threads 0x0..0x4: nr_threads 0x0..0x4 (hot: the whole object)\n\
         \x20     pad_a 0x0..0x30: pad_a 0x0..0x30; none written\n\
         \x20     pidmap_lock 0x0..0x4: pidmap_lock 0x0..0x4 (written: known hot)\n\
         \x20   meets before: line ffffffff82a00000 (pair of ffffffff82a00040): hot nr_threads 0x0..0x4 with pidmap_lock's pidmap_lock 0x0..0x4, written: known hot\n\
         \x20 hot members after: nr_threads 0x0..0x4 on line ffffffff82a00000 (shared)\n\
         \x20 lines shared after:\n\
         \x20   line ffffffff82a00000\n\
         \x20     nr_threads 0x0..0x4: nr_threads 0x0..0x4 (hot: the whole object)\n\
         \x20     pad_a 0x0..0x30: pad_a 0x0..0x30; none written\n\
         \x20     total_forks 0x0..0x8: total_forks 0x0..0x8 (written: known hot)\n\
         \x20   meets after: line ffffffff82a00000: hot nr_threads 0x0..0x4 with total_forks's total_forks 0x0..0x8, written: known hot\n\
         \x20   meets after: line ffffffff82a00000 (pair of ffffffff82a00040): hot nr_threads 0x0..0x4 with evil_lock's evil_lock 0x0..0x4, written by its type only\n\
         \x20   meets after: line ffffffff82a00000 (pair of ffffffff82a00040): hot nr_threads 0x0..0x4 with pidmap_lock's pidmap_lock 0x0..0x4, written: known hot\n\
         \x20 new meeting: line ffffffff82a00000: hot nr_threads 0x0..0x4 with total_forks's total_forks 0x0..0x8, written: known hot\n\
         \x20 new meeting: line ffffffff82a00000 (pair of ffffffff82a00040): hot nr_threads 0x0..0x4 with evil_lock's evil_lock 0x0..0x4, written by its type only\n\
         \x20 evidence: known: thread count, incremented in copy_process() and decremented at exit for every thread [kernel/fork.c: int nr_threads]\n\
         \x20 root cause: total_forks added (8 B)\n\
         \x20 in run ffffffff82a00030 .. ffffffff82a00034  1 object nr_threads  +0x8  cause: +total_forks (8 B) = +8 B after pad_a\n\
         \x20 the run moved 1 object by 8 bytes\n\
         \x20 decided: neighbour by rule \"a hot member now shares a line with a member of another object that frequent code writes (known or measured hot, or called directly by such code), code that does not write the hot member\"; flagged, and its category is in --fail-on: the diff without --explain exits 1\n"
    );
    let (code, _, err) = run(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--explain",
        "no_such_thing",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "layout-diff: --explain no_such_thing: no change of an object, struct or function of that name\n"
    );
}

#[test]
fn a_hot_list_adds_evidence_and_a_bad_one_is_refused() {
    let dir = std::env::temp_dir().join(format!("layout-diff-hl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("hot.toml");
    std::fs::write(
        &list,
        "[[object]]\nname = \"mstat\"\nreason = \"our counter\"\nsource = \"bench run 12\"\n",
    )
    .unwrap();
    let (code, v) = json(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--hot-list",
        list.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        data_change(&v, "mstat")["evidence"]["what"],
        "known: our counter [bench run 12]"
    );
    std::fs::write(&list, "[[object]]\nname = \"mstat\"\nreason = \"r\"\n").unwrap();
    let (code, out, err) = run(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--hot-list",
        list.to_str().unwrap(),
    ]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        format!(
            "layout-diff: {}: line 1: missing field `source`\n",
            list.display()
        )
    );
}

/// entry.S's entry_SYSCALL_64 (readelf: ffffffff81000040, 12 B, NOTYPE, no DWARF) is a
/// function everywhere: show --symbol, show --line, a [function] rule.
#[test]
fn assembly_entry_code_is_a_function() {
    let old = testdata("evidence/old.elf");
    let (code, v) = json(&["show", &old, "--symbol", "entry_SYSCALL_64"]);
    assert_eq!(code, 0);
    let s = &v["symbols"][0]["symbol"];
    assert_eq!(
        (s["name"].as_str(), s["kind"].as_str(), s["size"].as_u64()),
        (Some("entry_SYSCALL_64"), Some("function"), Some(12))
    );
    assert_eq!(common::json_hex(&s["address"]), 0xffffffff81000040);
    let (code, out, _) = run(&["show", &old, "--line", "ffffffff81000040"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(" entry_SYSCALL_64  function  ffffffff81000040    12  0x0..0xc "),
        "{out}"
    );
    let dir = std::env::temp_dir().join(format!("layout-diff-asm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("entry.toml");
    std::fs::write(&rules, "[function.entry_SYSCALL_64]\nalign = 64\n").unwrap();
    let (code, out, _) = run(&["check", "--rules", rules.to_str().unwrap(), &old]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(
        "PASS function entry_SYSCALL_64: align = 64: ffffffff81000040 is a multiple of 64\n"
    ));
}
