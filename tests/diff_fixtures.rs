//! End-to-end tests of `layout-diff OLD NEW` on the committed fixture pair. Expected
//! moves, phases and co-tenant changes are read from testdata/EXPECTED.md (measured
//! with readelf), struct facts from the pahole listings there.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{json, run, run_env, testdata};
use serde_json::Value;

fn diff_json(extra: &[&str]) -> (i32, Value) {
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    let mut args = vec![old.as_str(), new.as_str()];
    args.extend_from_slice(extra);
    json(&args)
}

/// The rows of the EXPECTED.md table that follows `heading`.
fn table(heading: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(testdata("EXPECTED.md")).unwrap();
    let at = text.find(heading).unwrap_or_else(|| panic!("{heading}"));
    text[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.split('|')
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect()
        })
        .collect()
}

/// `counter (kernel.c)` -> `kernel.c:counter`.
fn qualified(s: &str) -> String {
    match s.split_once(" (") {
        Some((n, f)) => format!("{}:{n}", f.trim_end_matches(')')),
        None => s.to_string(),
    }
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn exit_0_and_every_moved_object_with_its_new_place() {
    let (code, v) = diff_json(&[]);
    // The fixture pair flags nothing on evidence (process_counts' new neighbours hold no lock, atomic or evidence).
    assert_eq!(code, 0);
    let mut ours: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for c in v["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["percpu"].as_array().unwrap())
    {
        if c["delta"].as_i64().unwrap() != 0 {
            ours.insert(
                c["name"].as_str().unwrap().to_string(),
                (
                    hex(c["place"]["old"].as_str().unwrap()),
                    hex(c["place"]["new"].as_str().unwrap()),
                ),
            );
        }
    }
    let mut want: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for row in table("### Data and per-CPU objects whose address changed") {
        if row[3] == "(new)" {
            continue;
        }
        want.insert(qualified(&row[1]), (hex(&row[3]), hex(&row[4])));
    }
    assert_eq!(want.len(), 18);
    assert_eq!(ours, want);
}

#[test]
fn co_tenant_changes_match_readelf() {
    let (_, v) = diff_json(&[]);
    let names = |list: &Value| -> BTreeSet<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut ours: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    for c in v["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["percpu"].as_array().unwrap())
    {
        if c["co_tenants_changed"] == true {
            let (o, n) = (
                names(&c["co_tenants"]["old"]),
                names(&c["co_tenants"]["new"]),
            );
            let gained = n.difference(&o).cloned().collect();
            let lost = o.difference(&n).cloned().collect();
            ours.insert(c["name"].as_str().unwrap().to_string(), (gained, lost));
        }
    }
    let set = |s: &str| -> BTreeSet<String> {
        if s == "-" {
            BTreeSet::new()
        } else {
            s.split(", ")
                .map(|x| x.trim_matches('`').to_string())
                .collect()
        }
    };
    let mut want = BTreeMap::new();
    for row in table("### Co-tenants that changed") {
        want.insert(row[1].clone(), (set(&row[2]), set(&row[3])));
    }
    assert_eq!(want.len(), 11);
    assert_eq!(ours, want);
}

#[test]
fn functions_that_changed_phase_and_their_runs() {
    let (_, v) = diff_json(&[]);
    let ours: BTreeMap<String, (u64, u64)> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["phase"]["old"] != f["phase"]["new"])
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                (
                    f["phase"]["old"].as_u64().unwrap(),
                    f["phase"]["new"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let want: BTreeMap<String, (u64, u64)> =
        table("### Functions whose start address mod 64 changed")
            .iter()
            .map(|r| (r[1].clone(), (hex(&r[5]), hex(&r[6]))))
            .collect();
    assert_eq!(ours, want);
    let runs: Vec<(String, String, i64, Value)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["functions"] == true && r["whole_lines"] == false)
        .map(|r| {
            (
                r["first"].as_str().unwrap().into(),
                r["last"].as_str().unwrap().into(),
                r["delta"].as_i64().unwrap(),
                r["cause"].clone(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        vec![
            (
                "mce_timer_fn".into(),
                "grow_me".into(),
                0x10,
                serde_json::json!({"kind": "changes", "previous": "do_machine_check", "items": [{"symbol": "do_machine_check", "change": "resized", "size": {"old": 41, "new": 52}, "bytes": 11}], "bytes": 11, "padding": 5, "alignment": 16})
            ),
            (
                "futex_hash".into(),
                "scheduler_tick".into(),
                0x60,
                serde_json::json!({"kind": "changes", "previous": "grow_me", "items": [{"symbol": "grow_me", "change": "resized", "size": {"old": 39, "new": 127}, "bytes": 88}], "bytes": 88, "padding": -8, "alignment": 32})
            ),
        ]
    );
}

#[test]
fn percpu_shift_runs_name_their_causes() {
    let (_, v) = diff_json(&[]);
    let runs: Vec<(String, i64, bool, Value)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["space"] == "percpu")
        .map(|r| {
            (
                r["first"].as_str().unwrap().into(),
                r["delta"].as_i64().unwrap(),
                r["whole_lines"].as_bool().unwrap(),
                r["cause"].clone(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        vec![
            (
                "mce_exception_count".into(),
                8,
                false,
                serde_json::json!({"kind": "changes", "previous": "injectm", "items": [{"symbol": "injectm", "change": "resized", "size": {"old": 120, "new": 128}, "bytes": 8}], "bytes": 8, "padding": 0, "alignment": 8})
            ),
            (
                "tsc_adjust".into(),
                0x20,
                false,
                serde_json::json!({"kind": "padding", "previous": "mce_poll_count", "bytes": 0, "padding": 24, "alignment": 32})
            ),
            (
                "xen_vcpu_id".into(),
                0x24,
                false,
                serde_json::json!({"kind": "changes", "previous": "arch_freq_scale", "items": [{"symbol": "vclock_new_counter", "change": "added", "size": {"old": 0, "new": 4}, "bytes": 4}], "bytes": 4, "padding": 0, "alignment": 4})
            ),
            (
                "process_counts".into(),
                0x20,
                false,
                serde_json::json!({"kind": "padding", "previous": "xen_vcpu_id", "bytes": 0, "padding": -4, "alignment": 16})
            ),
            (
                "runqueues".into(),
                0x40,
                true,
                serde_json::json!({"kind": "padding", "previous": "hardirq_stack_ptr", "bytes": 0, "padding": 32, "alignment": 64})
            ),
        ]
    );
}

#[test]
fn root_user_realigned_with_offsets_and_neighbours() {
    let (_, v) = diff_json(&[]);
    let r = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "root_user")
        .unwrap();
    assert_eq!(
        (
            r["old"]["offset_in_line"].as_u64(),
            r["new"]["offset_in_line"].as_u64()
        ),
        (Some(0x20), Some(0))
    );
    assert_eq!(
        (
            r["old"]["offset_in_pair"].as_u64(),
            r["new"]["offset_in_pair"].as_u64()
        ),
        (Some(0x60), Some(0))
    );
    assert_eq!(r["co_tenants"]["old"][0]["name"], "types__ptrace");
    assert_eq!(r["co_tenants"]["new"], serde_json::json!([]));
    assert_eq!(r["write_hot_type"], true);
    assert_eq!(r["explicit_alignment"], 64);
    // Alone on its lines and starting one now: the patch's purpose, an improvement.
    assert_eq!(r["severity"], "improvement");
    assert_eq!(r["evidence"]["strength"], "known");
    assert_eq!(r["decision"]["verdict"], "improvement");
    let run = &v["runs"][r["run"].as_u64().unwrap() as usize];
    assert_eq!(
        run["cause"],
        serde_json::json!({"kind": "changes", "previous": "types__ptrace", "items": [{"symbol": "root_user", "change": "realigned", "size": {"old": 136, "new": 192}, "bytes": 0}], "bytes": 0, "padding": 32, "alignment": 64})
    );
}

#[test]
fn struct_changes_agree_with_pahole_sizes() {
    let (_, v) = diff_json(&[]);
    let structs: BTreeMap<String, &Value> = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_string(), s))
        .collect();
    assert_eq!(
        structs.keys().cloned().collect::<Vec<_>>(),
        ["mce", "task_struct", "user_struct"]
    );
    let mce = structs["mce"];
    assert_eq!(
        (mce["size"]["old"].as_u64(), mce["size"]["new"].as_u64()),
        (Some(120), Some(128))
    );
    assert_eq!(mce["members"][0]["name"], "kflags");
    assert_eq!(mce["members"][0]["kinds"], serde_json::json!(["added"]));
    assert_eq!(mce["members"][0]["offset"]["new"], 120);
    assert_eq!(
        mce["instances"],
        serde_json::json!(["mces_seen", "injectm"])
    );
    let us = structs["user_struct"];
    assert_eq!(
        (
            us["size"]["new"].as_u64(),
            us["alignment"]["old"].as_u64(),
            us["alignment"]["new"].as_u64()
        ),
        (Some(192), Some(8), Some(64))
    );
    assert_eq!(us["padding"]["new"], 56);
    let ts = structs["task_struct"];
    assert_eq!(
        (ts["size"]["old"].as_u64(), ts["size"]["new"].as_u64()),
        (Some(88), Some(96))
    );
    let moved: Vec<(String, Option<u64>, Option<u64>)> = ts["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] == "atomic_flags" || m["name"] == "kstack_offset")
        .map(|m| {
            (
                m["name"].as_str().unwrap().into(),
                m["offset"]["old"].as_u64(),
                m["offset"]["new"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        moved,
        vec![
            ("kstack_offset".into(), None, Some(40)),
            ("atomic_flags".into(), Some(56), Some(64))
        ]
    );
}

#[test]
fn same_file_twice_is_no_change() {
    let f = testdata("old.elf");
    let (code, out, _) = run(&[&f, &f]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l == "no changes"), "{out}");
    let (code, v) = json(&[&f, &f]);
    assert_eq!(code, 0);
    assert_eq!(v["flagged"], 0);
    assert_eq!(v["structs"], serde_json::json!([]));
}

#[test]
fn text_report_names_the_signal() {
    let (code, out, _) = run(&["diff", &testdata("old.elf"), &testdata("new.elf")]);
    // process_counts (known hot) gained tsc_adjust and vclock_new_counter (nm: 0x1230
    // in NEW, their line 0x1200-0x123f): plain data without a lock, an atomic or
    // evidence of its own, so not a written neighbour.
    assert_eq!(code, 0);
    for needle in [
        "line 64 B (target), pair 128 B",
        "  vclock_new_counter added (4 B): 4 objects moved across lines, 2 by whole lines (per-CPU, 3 runs),\n      3 hot",
        "      hot: process_counts, runqueues, cpu_tlbstate",
        "  struct mce +8 B (via injectm): 4 objects moved across lines (per-CPU, 2 runs), 0 hot",
        "  root_user now aligned: 1 object moved across lines (data, 1 run), 1 hot",
        "  process_counts (long unsigned int, 8 B)  percpu+0x1210 -> percpu+0x1230 (+0x20)  [improvement]\n",
        "  root_user (struct user_struct, 192 B)  ffffffff82a51260 -> ffffffff82a51280 (+0x20)  [improvement]",
        "      offset in line 0x20 -> 0x00, in pair 0x60 -> 0x00, lines 3 -> 3, size 136 -> 192",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert!(out.lines().count() <= 80);
    let (_, all, _) = run(&["diff", &testdata("old.elf"), &testdata("new.elf"), "--all"]);
    for needle in [
        "run percpu+0x11d8 .. percpu+0x11e0  2 objects mce_exception_count..mce_poll_count  +0x8  cause:\n      injectm 120 -> 128 B = +8 B after injectm",
        "run percpu+0x1208 .. percpu+0x120c  1 object xen_vcpu_id  +0x24  cause: +vclock_new_counter (4 B)\n      = +4 B after arch_freq_scale",
        "cause: root_user now aligned\n      = +0 B +32 B padding (align 64) after types__ptrace",
    ] {
        assert!(all.contains(needle), "missing {needle:?} in\n{all}");
    }
    assert!(
        all.contains("      + kflags  __u64 at 120 size 8 (line 1)"),
        "{all}"
    );
    assert!(
        all.contains(
            "  grow_me  ffffffff81000070 -> ffffffff81000080  mod 64 0x30 -> 0x00, lines 2 -> 2"
        ),
        "{all}"
    );
}

#[test]
fn markdown_has_a_summary_table() {
    let (code, out, _) = run(&[
        &testdata("old.elf"),
        &testdata("new.elf"),
        "--format",
        "markdown",
    ]);
    // The fixture pair flags nothing on evidence (process_counts' new neighbours hold no lock, atomic or evidence).
    assert_eq!(code, 0);
    assert!(out.contains(
        "| | changed | flagged | moved in line | shift runs | whole-line runs | added | removed |"
    ));
    // None of the 12 per-CPU changes is flagged: process_counts (known hot) gained only
    // plain neighbours; injectm
    // only lost its neighbour tsc_adjust (nm: injectm 0x1160+0x80, tsc_adjust 0x11e0 ->
    // 0x1200): not flagged.
    assert!(
        out.contains("| per-CPU | 12 | 0 | 8 | 4 | 1 | 1 | 0 |"),
        "{out}"
    );
}

#[test]
fn pinned_symbols_are_shown_even_unchanged() {
    let dir = std::env::temp_dir().join(format!("layout-diff-hot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hot = dir.join("hot.txt");
    std::fs::write(&hot, "# hot list\nfixed_percpu_data\n").unwrap();
    let (_, out, _) = run(&[
        &testdata("old.elf"),
        &testdata("new.elf"),
        "--hot",
        hot.to_str().unwrap(),
    ]);
    assert!(
        out.contains(
            "  fixed_percpu_data (struct fixed_percpu_data, 48 B)  percpu+0x0 -> percpu+0x0 (+0x0)"
        ),
        "{out}"
    );
    let (_, v) = diff_json(&["--symbol", "gdt_page"]);
    assert_eq!(v["pinned_symbols"], serde_json::json!(["gdt_page"]));
    // A function keeps its phase (64-aligned) but is asked for: shown with its run.
    let (_, out, _) = run(&[
        &testdata("old.elf"),
        &testdata("new.elf"),
        "--symbol",
        "do_syscall_64",
    ]);
    assert!(
        out.contains("  do_syscall_64  ffffffff81000140 -> ffffffff810001c0  mod 64 0x00 -> 0x00, lines 1 -> 1  [known,\n      not flagged]\n      in a run of 9 moved +0x80"),
        "{out}"
    );
}

#[test]
fn diff_output_is_the_same_with_one_or_two_threads() {
    let (o, n) = (testdata("old.elf"), testdata("new.elf"));
    let args = [o.as_str(), n.as_str(), "--format", "json"];
    let (_, one, _) = run_env(&args, &[("RAYON_NUM_THREADS", "1")]);
    let (_, two, _) = run_env(&args, &[("RAYON_NUM_THREADS", "2")]);
    assert!(one.len() > 1000);
    assert_eq!(one, two);
}

#[test]
fn diff_bad_input_exits_2() {
    let bad = testdata("bad/not-elf.txt");
    let (code, out, err) = run(&[&testdata("old.elf"), &bad]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains(&bad) && err.contains("not an ELF file"),
        "{err}"
    );
    let nodebug = testdata("old-nodebug.elf");
    let (code, _, err) = run(&[&testdata("old.elf"), &nodebug]);
    assert_eq!(code, 2);
    assert!(err.contains("has no debug info"), "{err}");
}

#[test]
fn pinned_struct_is_laid_out_with_old_and_new_offsets() {
    let (code, out, _) = run(&[
        &testdata("old.elf"),
        &testdata("new.elf"),
        "--struct",
        "task_struct",
        "--struct",
        "list_head",
    ]);
    // The fixture pair flags nothing on evidence (process_counts' new neighbours hold no lock, atomic or evidence).
    assert_eq!(code, 0);
    for needle in [
        "\tu32                        kstack_offset;         /*       - ->      40     4 */  + added",
        "\tunsigned int               sched_reset_on_fork:1; /*    40:0 ->    44:0     4 */  ~ changed",
        "\tlong unsigned int          atomic_flags;          /*      56 ->      64     8 */  ~ changed",
        "\tchar                       comm[16];              /*      72 ->      80    16 */  ~ changed",
        // Unchanged, but asked for: shown in full.
        "\tstruct list_head *         next;                  /*       0 ->       0     8 */",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let (_, v) = diff_json(&["--struct", "list_head"]);
    let lh = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "list_head")
        .unwrap();
    assert_eq!(lh["severity"], "info");
    assert_eq!(lh["layout"].as_array().unwrap().len(), 2);
    assert_eq!(v["summary"]["structs"]["changed"], 3);
}
