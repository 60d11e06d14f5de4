//! The typed access map on its fixture (`testdata/typed`, built at -O2 and -Os): every
//! member access that FACTS.md derives from the source, at the instruction it names,
//! has the type, member path, kind and per-CPU placement the source says; the map's
//! coverage of the fixture's base-register operands; and `show --struct --access`.

use std::path::Path;

use assert_cmd::Command;
use layout_diff_core::model::access::AccessKind;
use layout_diff_core::typed::{NONE, TypedAccess, TypedMap};
use layout_diff_core::{Image, InputFile, LoadOptions, StructFilter};

/// Where `_text` is: FACTS.md gives addresses as offsets from it.
const TEXT: u64 = 0xffff_ffff_8100_0000;

/// One row of FACTS.md's table, at one instruction of one build.
#[derive(Debug)]
struct Fact {
    row: String,
    /// The (type, member path) pairs that name the access.
    accepted: Vec<(String, String)>,
    kind: AccessKind,
    insn: u64,
    remote: Option<bool>,
}

/// The standard output of `layout-diff ARGS`, which must exit 0.
fn stdout_of(args: &[&str]) -> String {
    let out = Command::cargo_bin("layout-diff")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn kind(word: &str) -> AccessKind {
    match word {
        "read" => AccessKind::Read,
        "write" => AccessKind::Write,
        "read_write" => AccessKind::ReadWrite,
        "atomic" => AccessKind::Atomic,
        other => panic!("FACTS.md: unknown kind {other}"),
    }
}

/// The names between backticks in `cell`.
fn ticked(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// FACTS.md's rows for build column `column` (6: -O2, 7: -Os) that name an instruction
/// with a base register.
fn facts(column: usize) -> Vec<Fact> {
    let text = std::fs::read_to_string("testdata/typed/FACTS.md").unwrap();
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| #"))
    {
        let cells: Vec<&str> = line.split(" | ").collect();
        if cells.len() < 8 || cells[5].contains("not a base register") {
            continue;
        }
        let row = cells[0].trim_start_matches("| ").to_string();
        let struct_cell = cells[2];
        let ty = struct_cell.split_whitespace().next().unwrap().to_string();
        let names = ticked(cells[3]);
        let member = names[0].replace("[i]", "[*]");
        let mut accepted = vec![(ty.clone(), member.clone())];
        // A `slot` row also names the outer struct's path: `x` (task `slots[i].x`).
        if let Some(outer) = names.get(1) {
            accepted.push(("task".into(), outer.replace("[i]", "[*]")));
        }
        // A list_head that is a task's `tasks` (container_of in the same function) is
        // named as the task's member.
        if ty == "list_head" {
            accepted.push(("task".into(), format!("tasks.{member}")));
        }
        let remote = match cells[5] {
            _ if ty != "rq" => None,
            c if c.contains("remote per-cpu") => Some(true),
            c if c.contains("per-cpu local") => Some(false),
            _ => None,
        };
        let default = kind(cells[4]);
        let at = cells[column].trim_end_matches(" |");
        for (i, piece) in at.split(", ").enumerate() {
            let Some(hex) = ticked(piece).first().and_then(|t| t.strip_prefix("0x")) else {
                continue;
            };
            let Ok(offset) = u64::from_str_radix(hex, 16) else {
                continue;
            };
            let kind = match piece {
                p if p.contains("(read)") => AccessKind::Read,
                p if p.contains("(write)") => AccessKind::Write,
                _ => default,
            };
            out.push(Fact {
                row: format!("#{row}.{i}"),
                accepted: accepted.clone(),
                kind,
                insn: TEXT + offset,
                remote,
            });
        }
    }
    out
}

fn load(path: &str) -> (InputFile, LoadOptions) {
    let file = InputFile::open(Path::new(path)).unwrap();
    let options = LoadOptions {
        structs: StructFilter::None,
        variables: false,
        pahole_text: false,
        typed: true,
        ..LoadOptions::default()
    };
    (file, options)
}

/// The path of `a`, and whether `want` is it or one of its alternatives or parts, as
/// the member path of a `slot` row read from the outer `task` (`slots[*].x`).
fn names(map: &TypedMap, a: &TypedAccess, want: &str) -> bool {
    let Some(path) = map.member(a) else {
        return false;
    };
    path.split([' ', '|', '+'])
        .filter(|p| !p.is_empty())
        .any(|p| p == want || p.ends_with(&format!("].{want}")))
}

fn check(path: &str, column: usize) {
    let (file, options) = load(path);
    let image: Image<'_> = file.load(&options).unwrap();
    let map = &image.typed;
    assert!(map.supported);
    let mut failures = Vec::new();
    let facts = facts(column);
    assert!(facts.len() >= 70, "{path}: {} rows read", facts.len());
    for f in &facts {
        let at: Vec<&TypedAccess> = map.accesses.iter().filter(|a| a.insn == f.insn).collect();
        let ok = at.iter().any(|a| {
            let ty = &map.types[a.ty as usize];
            f.accepted.iter().any(|(t, m)| t == ty && names(map, a, m))
                && a.kind == f.kind
                && f.remote.is_none_or(|r| {
                    a.percpu != NONE
                        && a.remote == r
                        && image.symbols[a.percpu as usize].name == "runqueues"
                })
        });
        if !ok {
            let seen: Vec<String> = at
                .iter()
                .map(|a| {
                    format!(
                        "{}.{} {:?} remote {}",
                        map.types[a.ty as usize],
                        map.member(a).unwrap_or("-"),
                        a.kind,
                        a.remote
                    )
                })
                .collect();
            failures.push(format!(
                "{} {:#x}: want {:?} {:?}, got {seen:?}",
                f.row, f.insn, f.accepted, f.kind
            ));
        }
    }
    assert!(failures.is_empty(), "{path}:\n{}", failures.join("\n"));
}

#[test]
fn every_source_access_of_the_o2_build_is_typed_as_the_source_says() {
    check("testdata/typed/typed.elf", 6);
}

#[test]
fn every_source_access_of_the_os_build_is_typed_as_the_source_says() {
    check("testdata/typed/typed-os.elf", 7);
}

#[test]
fn the_fixtures_base_register_operands_are_typed_and_the_rest_have_reasons() {
    for (path, operands, typed) in [
        ("testdata/typed/typed.elf", 75, 75),
        ("testdata/typed/typed-os.elf", 75, 75),
    ] {
        let (file, options) = load(path);
        let image = file.load(&options).unwrap();
        let c = image.typed.coverage;
        assert_eq!((c.operands, c.typed()), (operands, typed), "{path}: {c:?}");
        assert_eq!(
            c.typed() + c.untyped.iter().sum::<u64>(),
            c.operands,
            "{path}"
        );
        assert!(
            c.typed() * 100 >= 95 * c.operands,
            "{path}: {} of {} typed",
            c.typed(),
            c.operands
        );
    }
}

#[test]
fn show_access_names_the_remote_readers_and_the_local_writer_of_runqueues() {
    let text = stdout_of(&[
        "show",
        "testdata/typed/typed.elf",
        "--struct",
        "rq",
        "--access",
        "--no-cache",
    ]);
    let access: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("rq: who touches"))
        .collect();
    assert_eq!(
        access[1..].join("\n"),
        "  3 functions touch it; the build's code is 100.0% typed (75 of 75 operands)
line 0 (+0x0..+0x3f): 1 writers, 2 readers that do not write it
  +0x0 nr_running (4 B): 0 writers, 1 readers
      r rq_load                        read   remote runqueues ./typed.c:266
  +0x4 cpu (4 B): no access seen
  +0x8 clock (8 B): 1 writers, 1 readers
      w rq_enqueue                     rmw    ./typed.c:260
      r rq_curr_pid                    read   remote runqueues ./typed.c:274
  +0x10 curr (8 B): 0 writers, 1 readers
      r rq_curr_pid                    read   remote runqueues ./typed.c:274
  +0x18 stat.count (8 B): 1 writers, 0 readers
      w rq_enqueue                     rmw    ./typed.c:261
  +0x20 stat.bytes (8 B): 0 writers, 1 readers
      r rq_load                        read   remote runqueues ./typed.c:266"
    );
}

/// The text of `show FILE --struct rq --access` from its `rq:` line on, without the
/// source lines (a snapshot keeps none).
fn rq_access(file: &str, extra: &[&str]) -> String {
    let mut args = vec!["show", file, "--struct", "rq", "--access"];
    args.extend_from_slice(extra);
    stdout_of(&args)
        .lines()
        .skip_while(|l| !l.starts_with("rq: who touches"))
        .map(|l| l.split(" ./typed.c").next().unwrap().trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_snapshot_and_the_cache_carry_the_typed_map() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("typed-snapshot");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let snap = dir.join("typed.lds").display().to_string();
    let status = Command::cargo_bin("layout-diff")
        .unwrap()
        .args(["snapshot", "testdata/typed/typed.elf", "-o", &snap])
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let direct = rq_access("testdata/typed/typed.elf", &["--no-cache"]);
    assert_eq!(direct.lines().count(), 15, "{direct}");
    assert_eq!(rq_access(&snap, &[]), direct);
    // A diff writes cache entries without the map; `show --access` writes its build's
    // again with it, and prints what it prints without the cache.
    let cache = dir.join("cache");
    let run = |args: &[&str]| {
        Command::cargo_bin("layout-diff")
            .unwrap()
            .env("XDG_CACHE_HOME", &cache)
            .args(args)
            .output()
            .unwrap()
    };
    let (old, new) = ("testdata/cache/old.elf", "testdata/cache/new.elf");
    assert_eq!(run(&[old, new]).status.code(), Some(0));
    let size = || -> Vec<u64> {
        let mut sizes: Vec<u64> = std::fs::read_dir(cache.join("layout-diff"))
            .unwrap()
            .filter_map(|e| e.ok()?.metadata().ok())
            .map(|m| m.len())
            .collect();
        sizes.sort_unstable();
        sizes
    };
    let before = size();
    assert_eq!(before.len(), 2, "{before:?}");
    let access = ["show", old, "--struct", "user_struct", "--access"];
    let through_cache = run(&access);
    let after = size();
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(
        after.iter().sum::<u64>() > before.iter().sum::<u64>(),
        "{before:?} -> {after:?}"
    );
    let mut direct = access.to_vec();
    direct.push("--no-cache");
    assert_eq!(
        String::from_utf8(through_cache.stdout).unwrap(),
        String::from_utf8(run(&direct).stdout).unwrap()
    );
    // Read from the entry now: the same again, and the entry stays.
    assert_eq!(run(&access).status.code(), Some(0));
    assert_eq!(size(), after);
}

#[test]
fn show_access_alone_gives_the_coverage_by_reason_and_by_function() {
    let text = stdout_of(&[
        "show",
        "testdata/typed/typed-os.elf",
        "--access",
        "--no-cache",
    ]);
    let coverage: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("typed access map"))
        .take(12)
        .collect();
    assert_eq!(
        coverage.join("\n"),
        "typed access map: 75 memory operands through a register other than the stack's
  typed 75 (100.0%): struct or union members 75 (100.0%), pointers to others 0 (0.0%)
  untyped, no location: 0 (0.0%)
  untyped, lost across a call: 0 (0.0%)
  untyped, indirect: 0 (0.0%)
  untyped, lost at a join: 0 (0.0%)
  untyped, other: 0 (0.0%)
  untyped, no DWARF: 0 (0.0%)
  on the stack (not counted above): 14
functions with the most untyped operands (--format json lists all):
  __fput                                                2 of      2 typed
  __mmput                                               2 of      2 typed"
    );
}

#[test]
fn show_symbol_access_gives_type_level_evidence_and_the_remote_readers() {
    let text = stdout_of(&[
        "show",
        "testdata/typed/typed.elf",
        "--symbol",
        "runqueues",
        "--access",
        "--no-cache",
    ]);
    let level: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("type-level"))
        .take_while(|l| !l.starts_with("laid at"))
        .collect();
    assert_eq!(
        level.join("\n"),
        "  type-level (every struct rq, through pointers; not this instance alone):
    +0x0 nr_running
      read by rq_load
    +0x8 clock
      written by rq_enqueue
      read by rq_curr_pid
    +0x10 curr
      read by rq_curr_pid
    +0x18 stat.count
      written by rq_enqueue
    +0x20 stat.bytes
      read by rq_load
  reached from other CPUs (per_cpu()): rq_curr_pid, rq_load"
    );
}
