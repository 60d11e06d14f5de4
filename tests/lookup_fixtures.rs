//! `show --struct NAME` with a plain name takes the sparse lookup (src/load/lookup.rs)
//! instead of decoding every unit. Asserted here: for each struct pahole 1.24 listed in
//! the committed fixtures' text (testdata/pahole-text/, testdata/types/), asking for
//! its name alone prints exactly pahole's blocks of that name (every distinct layout,
//! from whichever unit defines it), and the JSON equals that of the full read (a glob
//! pattern that matches the same one name) on every fixture build.

mod common;

use std::collections::BTreeMap;

use common::{json, pahole_blocks, run, testdata, xorshift};

/// pahole-style blocks (`common::pahole_blocks`) keyed by name, sorted within a name
/// (pahole prints in DWARF order).
fn blocks(text: &str) -> BTreeMap<String, Vec<Vec<String>>> {
    let mut out: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for b in pahole_blocks(text) {
        out.entry(block_name(&b)).or_default().push(b);
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

/// `stats` of `struct stats {`; `atomic_t` of a typedef block's `} atomic_t;`.
fn block_name(block: &[String]) -> String {
    let first = block.first().map(String::as_str).unwrap_or("");
    if first.starts_with("typedef ") {
        let last = block.last().map(String::as_str).unwrap_or("");
        return last
            .trim_start_matches("} ")
            .trim_end_matches(';')
            .to_string();
    }
    first.split(' ').nth(1).unwrap_or("").to_string()
}

/// Each name of `listing` shown alone on `elf` prints pahole's blocks of that name.
fn assert_each_name_is_paholes(elf: &str, listing: &str, line_size: Option<&str>) -> usize {
    let file = testdata(elf);
    let want = blocks(&std::fs::read_to_string(testdata(listing)).expect("committed listing"));
    for (name, want) in &want {
        let mut args = vec!["show", file.as_str(), "--struct", name.as_str()];
        if let Some(ls) = line_size {
            args.extend(["--line-size", ls]);
        }
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{elf} {name}: {err}");
        let got = blocks(&out);
        assert_eq!(got.len(), 1, "{elf} {name}: {out}");
        assert_eq!(got.get(name), Some(want), "{elf} {name}");
    }
    want.values().map(Vec::len).sum()
}

#[test]
fn each_name_alone_is_paholes_text() {
    // Block counts: pahole's listings (23 per build: 22 names, `stats` twice).
    for (elf, line_size) in [
        ("old", None),
        ("new", None),
        ("old-dwarf4", None),
        ("old-clang", None),
        ("old-s390x", Some("64")),
    ] {
        let n = assert_each_name_is_paholes(
            &format!("{elf}.elf"),
            &format!("pahole-text/{elf}.txt"),
            line_size,
        );
        assert_eq!(n, 23, "{elf}");
    }
    assert_eq!(
        assert_each_name_is_paholes("types/types.elf", "types/pahole.txt", None),
        13
    );
    assert_eq!(
        assert_each_name_is_paholes("types/types.elf", "types/pahole-atomic_t.txt", None),
        1
    );
}

#[test]
fn a_name_with_two_layouts_in_two_units_gives_both() {
    // testdata/EXPECTED.md: kernel.c's `struct stats` is 16 bytes, other.c's 12
    // (hits, misses, drops); pahole -C stops at the first.
    for elf in ["old.elf", "new.elf", "old-clang.elf", "old-dwarf4.elf"] {
        let (code, v) = json(&["show", &testdata(elf), "--struct", "stats"]);
        assert_eq!(code, 0, "{elf}");
        let mut got: Vec<(u64, Vec<String>)> = v["structs"]
            .as_array()
            .expect("structs")
            .iter()
            .map(|s| {
                let members = s["members"].as_array().expect("members");
                let names = members
                    .iter()
                    .map(|m| m["name"].as_str().unwrap_or("").to_string())
                    .collect();
                (s["size"].as_u64().expect("size"), names)
            })
            .collect();
        got.sort();
        assert_eq!(got.len(), 2, "{elf}: {got:?}");
        assert_eq!(got[0].0, 12, "{elf}");
        assert_eq!(got[0].1, ["hits", "misses", "drops"], "{elf}");
        assert_eq!(got[1].0, 16, "{elf}");
    }
}

/// The JSON of `show --struct NAME` (sparse lookup) and of the same name beside a glob
/// that matches nothing (which takes the full read) are the same.
#[test]
fn sparse_and_full_reads_agree_on_every_fixture() {
    let names = [
        "list_head",
        "stats",
        "user_struct",
        "task_struct",
        "page",
        "mce",
        "rq",
        "atomic_t",
        "refcount_t",
        "sigval",
        "sk_buff",
        "no_such_struct",
    ];
    for elf in [
        "old.elf",
        "new.elf",
        "old-clang.elf",
        "old-dwarf4.elf",
        "old-zlib.elf",
        "old-zstd.elf",
        "old-s390x.elf",
        "old.o",
    ] {
        let file = testdata(elf);
        let mut found = 0;
        for name in names {
            let (code_a, a) = json(&["show", &file, "--struct", name]);
            let (code_b, b) = json(&["show", &file, "--struct", name, "--struct", "[z]z"]);
            assert_eq!(code_a, code_b, "{elf} {name}");
            assert_eq!(a["structs"], b["structs"], "{elf} {name}");
            found += a["structs"].as_array().map_or(0, Vec::len);
        }
        // One layout per name but `no_such_struct` (none) and `stats` (two, one per
        // unit; old.o is kernel.c alone).
        let want = if elf == "old.o" { 11 } else { 12 };
        assert_eq!(found, want, "{elf}");
    }
}

#[test]
fn corrupted_debug_info_never_panics_or_hangs_the_lookup() {
    // Deterministic byte flips inside old.elf's .debug_info, where the sparse reader
    // follows references. Every run ends with 0, 1 or 2, an error is one line.
    use object::{Object, ObjectSection};
    let data = std::fs::read(testdata("old.elf")).expect("fixture");
    let (start, len) = {
        let file = object::File::parse(&*data).expect("elf");
        let info = file.section_by_name(".debug_info").expect(".debug_info");
        let (s, l) = info.file_range().expect("in file");
        (s as usize, l as usize)
    };
    let dir = std::env::temp_dir().join(format!("layout-diff-lookup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("fz.elf");
    let p = path.to_str().expect("utf-8 path").to_string();
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    for i in 0..32 {
        let mut b = data.clone();
        for _ in 0..4 {
            let j = start + (next() as usize) % len;
            b[j] = next() as u8;
        }
        std::fs::write(&path, &b).expect("write");
        for name in ["user_struct", "stats", "atomic_t", "task_struct"] {
            let args = ["show", p.as_str(), "--struct", name];
            let (code, _, err) = common::run_timed(&args, 60);
            assert!(matches!(code, 0..=2), "case {i} {name}: exit {code}: {err}");
            if code == 2 {
                assert_eq!(err.lines().count(), 1, "case {i} {name}: {err}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
