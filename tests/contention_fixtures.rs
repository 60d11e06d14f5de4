//! `show --contention` on the fixtures: the global line of `testdata/frequency` where
//! a counter the tick writes meets one its callee writes (and none of the lines where
//! the other side is rare, unknown or co-written), and on `testdata/typed`, with the
//! functions of `testdata/contention/typed-hot.toml` frequent, a line of each kind:
//! `struct file`, `struct task` and the per-CPU `runqueues` read from another CPU.
//! Expected values are derived by hand from the fixtures' sources and FACTS.md.

mod common;

use common::{run, testdata};
use serde_json::Value;

/// `show FILE --contention --no-cache ARGS`, which must exit 0: its stdout.
fn audit(file: &str, args: &[&str]) -> String {
    let path = testdata(file);
    let mut all = vec!["show", path.as_str(), "--contention", "--no-cache"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{all:?}: {err}");
    out
}

/// The text from the summary on (the header names the file's path).
fn body(text: &str) -> String {
    text.lines()
        .skip_while(|l| !l.starts_with("contention audit"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// testdata/frequency/new.elf: of its seven hot counters' lines, only hot_f's holds a
/// neighbour that frequent code writes and the hot writer does not (tick_stat, by
/// tick_helper, called by scheduler_tick); the others' neighbours are written by boot,
/// registration, rare-caller, once-only, unknown or `.cold` code, or by fork_path
/// together with hot_e (co-written). The same with the fixture's hot list, which adds
/// fork_path (frequent, and co-writing).
#[test]
fn the_frequency_fixtures_hot_f_and_tick_stat_are_one_path_and_do_not_contend() {
    // tick_helper() is called by scheduler_tick(), which writes hot_f: one path on one
    // CPU, so the line that holds both is not contended (contention::meet::related).
    let want = "contention audit: 0 lines where a frequently written member meets one other frequent code touches
  global data 0, per-CPU reached from other CPUs 0, struct types 0 (instances line-aligned)
  frequent functions: 0 measured, 1 known hot, 1 called by them; unknown never counts
  ranked by the weaker side's evidence, the stronger's, then the functions that meet";
    assert_eq!(body(&audit("frequency/new.elf", &[])), want);
    let list = testdata("frequency/hot-list.toml");
    let with_list = body(&audit("frequency/new.elf", &["--hot-list", &list]));
    assert_eq!(with_list, want.replace("1 known hot", "2 known hot"));
}

/// testdata/typed/typed.elf with typed-hot.toml: the three lines, ranked (all known
/// beside known; 4, 3 and 2 functions), each named by its strongest pair.
#[test]
fn the_typed_fixtures_lines_of_each_kind_are_ranked() {
    let list = testdata("contention/typed-hot.toml");
    let text = audit("typed/typed.elf", &["--hot-list", &list]);
    assert_eq!(
        body(&text),
        "contention audit: 2 lines where a frequently written member meets one other frequent code touches
  global data 0, per-CPU reached from other CPUs 1, struct types 1 (instances line-aligned)
  frequent functions: 0 measured, 8 known hot, 1 called by them; unknown never counts
  ranked by the weaker side's evidence, the stronger's, then the functions that meet

  1. struct file line 0: refcnt.counter 0x4..0x8 written by fget_pos() (known)
     beside f_dentry 0x8..0x10 read by file_isize() (known); 2 pairs, 4 functions
  2. percpu+0x40: runqueues.clock 0x8..0x10 written by rq_enqueue() (known)
     beside runqueues.stat.bytes 0x20..0x28 read from another CPU by rq_load() (known); 4 pairs, 2
         functions"
    );
    assert!(text.lines().all(|l| l.len() <= 100), "{text}");
}

/// Each pair of a JSON line as `written writer basis | other toucher basis writes
/// remote`.
fn pairs(line: &Value) -> Vec<String> {
    line["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let side = |s: &Value| {
                format!(
                    "{} {}..{} {} {}",
                    s["member"].as_str().unwrap(),
                    s["from"],
                    s["to"],
                    s["function"].as_str().unwrap(),
                    s["basis"].as_str().unwrap()
                )
            };
            let o = &p["other"];
            format!(
                "{} | {} {} {}",
                side(&p["written"]),
                side(o),
                if o["writes"] == true { "w" } else { "r" },
                if o["remote"] == true {
                    "remote"
                } else {
                    "local"
                }
            )
        })
        .collect()
}

/// The JSON document lists every pair of each line, strongest first: struct file's 8
/// (the co-written pairs f_flags/f_dentry, written by __fput, and refcnt/f_pos, by
/// fget_pos, left out), struct task's 2, and runqueues' 4, each written member by
/// rq_enqueue on its CPU beside stat.bytes, which rq_load reads from another CPU (the
/// members rq_enqueue writes together never meet).
#[test]
fn the_json_document_lists_every_pair() {
    let list = testdata("contention/typed-hot.toml");
    let text = audit(
        "typed/typed.elf",
        &["--hot-list", &list, "--format", "json"],
    );
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["format"], "layout-diff-contention");
    let c = &doc["contention"];
    // struct task's prio is written with plain stores only (task_set_prio): no other
    // CPU writes it by design, so struct task has no contended line.
    assert_eq!(c["counts"]["structs"], 1);
    assert_eq!(c["frequent"]["called_by"], 1);
    let lines = c["lines"].as_array().unwrap();
    let head: Vec<String> = lines
        .iter()
        .map(|l| {
            format!(
                "{} {} {} {} {}",
                l["kind"].as_str().unwrap(),
                l["type_name"].as_str().unwrap_or("-"),
                l["index"],
                l["start"].as_str().unwrap(),
                l["functions"]
            )
        })
        .collect();
    assert_eq!(head, ["struct file 0 0x0 4", "percpu - 1 0x40 2"]);
    assert_eq!(
        pairs(&lines[0]),
        [
            // Only refcnt (atomic) is written as other CPUs write: f_pos and f_flags
            // are plain stores.
            "refcnt.counter 4..8 fget_pos known | f_dentry 8..16 file_isize known r local",
            "refcnt.counter 4..8 fget_pos known | f_flags 0..4 __fput called_by w local",
        ]
    );
    let rq = "runqueues.stat.bytes 32..40 rq_load known r remote";
    assert_eq!(
        pairs(&lines[1]),
        [
            format!("runqueues.clock 8..16 rq_enqueue known | {rq}"),
            format!("runqueues.curr 16..24 rq_enqueue known | {rq}"),
            format!("runqueues.nr_running 0..4 rq_enqueue known | {rq}"),
            format!("runqueues.stat.count 24..32 rq_enqueue known | {rq}"),
        ]
    );
}

/// `--struct NAME` keeps that type's lines and the lines of objects of that type:
/// `file` its struct line, `rq` the per-CPU `runqueues` (its struct lines are reached
/// only through the per-CPU object); a name no build has exits 1 saying so.
#[test]
fn struct_restricts_the_audit_to_one_type() {
    let list = testdata("contention/typed-hot.toml");
    let entries = |name: &str| -> Vec<String> {
        audit("typed/typed.elf", &["--hot-list", &list, "--struct", name])
            .lines()
            .filter(|l| l.starts_with("  1.") || l.starts_with("  2."))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        entries("file"),
        ["  1. struct file line 0: refcnt.counter 0x4..0x8 written by fget_pos() (known)"]
    );
    assert_eq!(
        entries("rq"),
        ["  1. percpu+0x40: runqueues.clock 0x8..0x10 written by rq_enqueue() (known)"]
    );
    let path = testdata("typed/typed.elf");
    let (code, _, err) = run(&[
        "show",
        &path,
        "--contention",
        "--no-cache",
        "--struct",
        "no_such_struct",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no struct matches no_such_struct"), "{err}");
}

/// The same JSON with one thread as with many.
#[test]
fn the_audit_does_not_depend_on_the_thread_count() {
    let list = testdata("contention/typed-hot.toml");
    let path = testdata("typed/typed.elf");
    let args = [
        "show",
        path.as_str(),
        "--contention",
        "--no-cache",
        "--hot-list",
        list.as_str(),
        "--format",
        "json",
    ];
    let (_, many, _) = common::run_env(&args, &[("RAYON_NUM_THREADS", "4")]);
    let (_, one, _) = common::run_env(&args, &[("RAYON_NUM_THREADS", "1")]);
    assert_eq!(one, many);
    assert!(many.contains("\"percpu\""));
}

/// `--all` needs `--contention`; `--contention` does not combine with `--symbol`,
/// `--line` or `--access`, nor with HTML.
#[test]
fn contention_flags_are_checked() {
    let path = testdata("typed/typed.elf");
    for args in [
        vec!["show", path.as_str(), "--all"],
        vec!["show", path.as_str(), "--contention", "--symbol", "sink"],
        vec!["show", path.as_str(), "--contention", "--access"],
        vec!["show", path.as_str(), "--contention", "--format", "html"],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
}
