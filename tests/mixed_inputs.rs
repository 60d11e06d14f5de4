//! Issue 33, defects 1 and 2: a diff of inputs of different kinds says on its first
//! screen what it can and cannot compare, and reports no change that only one input's
//! lack made: a raw BTF blob without addresses compares structs only, and sizes a
//! symbol list inferred (each symbol runs to the next address) are not compared.
//! Sizes and addresses are nm's (testdata/EXPECTED.md, testdata/btf/old.map).

mod common;

use common::{json, run, testdata};

/// The lines of a text report before the summary table.
fn first_screen(out: &str) -> Vec<&str> {
    out.lines().take_while(|l| !l.is_empty()).collect()
}

#[test]
fn a_raw_btf_blob_without_addresses_is_compared_on_structs_and_per_cpu_only() {
    let (code, out, err) = run(&[&testdata("old.elf"), &testdata("btf/old.btf")]);
    assert_eq!(code, 0, "{err}");
    let head = first_screen(&out);
    assert!(
        head.contains(
            &"note: inputs of different kinds: OLD DWARF, ELF symbols, NEW BTF, no symbols"
        ),
        "{head:?}"
    );
    assert!(
        head.iter()
            .any(|l| l.starts_with("note: NEW has no addresses but its per-CPU")),
        "{head:?}"
    );
    // Nothing is "removed" for lack of addresses; the per-CPU variables, placed from
    // the DATASEC alone, are those of the same build: unchanged.
    let (_, v) = json(&[&testdata("old.elf"), &testdata("btf/old.btf")]);
    for k in ["data", "percpu", "functions"] {
        for f in ["changed", "added", "removed"] {
            assert_eq!(v["summary"][k][f], 0, "{k}.{f}");
        }
    }
    assert_eq!(v["inputs"].as_array().map(Vec::len), Some(3));
}

#[test]
fn sizes_a_symbol_list_inferred_are_not_compared() {
    let dir = std::env::temp_dir().join(format!("layout-diff-mixed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let snap = dir.join("old-btf.snap");
    let snap = snap.to_str().unwrap();
    let (code, _, err) = run(&[
        "snapshot",
        &testdata("btf/old.btf"),
        "--symbols",
        &testdata("btf/old.map"),
        "-o",
        snap,
    ]);
    assert_eq!(code, 0, "{err}");
    // old.map has no sizes: root_user (136 B in the ELF) runs to init_user_ns, 160 B.
    let (code, v) = json(&[&testdata("old.elf"), snap]);
    assert_eq!(code, 0);
    let inputs: Vec<&str> = v["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        inputs
            .iter()
            .any(|n| n.starts_with("NEW's sizes are inferred")),
        "{inputs:?}"
    );
    // Same build: no size change (root_user is not 136 -> 160), no invented root cause.
    // (The list names symbols an ELF table leaves out, `__bss_start`: those are added.)
    for k in ["data", "percpu"] {
        for c in v[k].as_array().unwrap() {
            assert_eq!(c["size"]["old"], c["size"]["new"], "{}", c["name"]);
        }
    }
    assert_eq!(v["causes"].as_array().map(Vec::len), Some(0));
    // The text says so before the summary.
    let (_, out, _) = run(&[&testdata("old.elf"), snap]);
    assert!(
        first_screen(&out)
            .iter()
            .any(|l| l.starts_with("note: NEW's sizes are inferred")),
        "{out}"
    );
    // show names where its sizes came from.
    let (_, shown, _) = run(&["show", snap, "--symbol", "root_user"]);
    assert!(
        shown.lines().any(|l| l.starts_with("note: sizes inferred")),
        "{shown}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A snapshot of an ELF whose table a symbol list replaced keeps that its sizes are
/// inferred, as the ELF read with the list says. (Such a snapshot was refused before:
/// a list's last symbol in a section ran to the next address, past the section's end;
/// the list's symbols are now bounded by the sections that hold them.)
#[test]
fn a_snapshot_keeps_that_its_sizes_are_inferred() {
    let dir = std::env::temp_dir().join(format!("layout-diff-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let snap = dir.join("elf-map.snap");
    let snap = snap.to_str().unwrap();
    let (elf, map) = (testdata("btf/old-btf.elf"), testdata("btf/old.map"));
    let (code, _, err) = run(&["snapshot", &elf, "--symbols", &map, "-o", snap]);
    assert_eq!(code, 0, "{err}");
    let note = |out: &str| {
        out.lines()
            .filter(|l| l.starts_with("note: sizes inferred"))
            .count()
    };
    let (_, direct, _) = run(&["show", &elf, "--symbols", &map, "--symbol", "root_user"]);
    let (_, kept, _) = run(&["show", snap, "--symbol", "root_user"]);
    assert_eq!((note(&direct), note(&kept)), (1, 1), "{kept}");
    std::fs::remove_dir_all(&dir).unwrap();
}
