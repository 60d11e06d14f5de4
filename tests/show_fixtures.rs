//! End-to-end tests of `layout-diff show` on the committed fixtures. Expected values
//! come from testdata/EXPECTED.md, which was measured with pahole and readelf.

mod common;

use std::collections::BTreeSet;

use common::{
    Listing, json, json_hex, listing_of, pahole_listings, parse_listing, run, run_env, testdata,
    xorshift,
};

fn sorted(mut l: Listing) -> Listing {
    l.holes.sort();
    l.bit_holes.sort();
    l
}

/// Every pahole listing recorded for `heading` has an identical layout in our JSON.
fn assert_agrees_with_pahole(file: &str, expected: &[Listing]) {
    let (code, v) = json(&["show", &testdata(file), "--struct", "*"]);
    assert_eq!(code, 0);
    let ours: Vec<Listing> = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .map(listing_of)
        .collect();
    for want in expected {
        let want = sorted(Listing {
            ..clone_listing(want)
        });
        let candidates: Vec<Listing> = ours
            .iter()
            .filter(|l| l.name == want.name)
            .map(|l| sorted(clone_listing(l)))
            .collect();
        assert!(!candidates.is_empty(), "{file}: no struct {}", want.name);
        let found = candidates.iter().any(|c| {
            c.positions == want.positions
                && c.holes == want.holes
                && c.bit_holes == want.bit_holes
                && (want.size.is_none() || c.size == want.size)
                && (want.size.is_none() || c.padding == want.padding)
        });
        assert!(
            found,
            "{file}: {} differs\npahole: {want:?}\nours:   {candidates:?}",
            want.name
        );
    }
}

fn clone_listing(l: &Listing) -> Listing {
    Listing {
        name: l.name.clone(),
        size: l.size,
        positions: l.positions.clone(),
        holes: l.holes.clone(),
        bit_holes: l.bit_holes.clone(),
        padding: l.padding,
    }
}

#[test]
fn old_structs_agree_with_pahole() {
    let expected = pahole_listings("### `old.elf`");
    assert_eq!(expected.len(), 22);
    assert_agrees_with_pahole("old.elf", &expected);
}

#[test]
fn new_structs_agree_with_pahole() {
    let expected = pahole_listings("### `new.elf`");
    assert_eq!(expected.len(), 22);
    assert_agrees_with_pahole("new.elf", &expected);
}

#[test]
fn compressed_and_clang_builds_give_the_same_layouts() {
    // pahole 1.24 cannot read zstd sections; the source is the same as old.elf.
    let expected = pahole_listings("### `old.elf`");
    for f in ["old-zlib.elf", "old-zstd.elf", "old-clang.elf", "old.o"] {
        assert_agrees_with_pahole(f, &expected);
    }
}

#[test]
fn dwarf4_bitfields_agree_with_pahole() {
    let text = std::fs::read_to_string(testdata("EXPECTED.md")).unwrap();
    let at = text
        .find("`pahole -F dwarf -C task_struct old-dwarf4.elf`")
        .unwrap();
    let want = parse_listing("task_struct".into(), &text[at..]);
    assert_eq!(want.bit_holes, vec![29, 9, 2]);
    assert_agrees_with_pahole("old-dwarf4.elf", &[want]);
}

#[test]
fn user_struct_text_reads_like_pahole() {
    let (code, out, _) = run(&["show", &testdata("old.elf"), "--struct", "user_struct"]);
    assert_eq!(code, 0);
    assert!(out.contains("line 64 B (target)"), "{out}");
    for line in [
        "\trefcount_t                 __count;              /*     0     4 */",
        "\t/* XXX 4 bytes hole, try to pack */",
        "\t/* --- cacheline 1 boundary (64 bytes) --- */",
        "\t/* size: 136, cachelines: 3, members: 8 */",
        "\t/* sum members: 128, holes: 2, sum holes: 8 */",
        "\t/* last cacheline: 8 bytes */",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in\n{out}");
    }
}

/// One row of EXPECTED.md's "Data objects and their cache lines" table.
struct Row {
    name: String,
    file: Option<String>,
    place: u64,
    size: u64,
    lines: u64,
    in_line: u64,
    in_pair: u64,
    co_tenants: BTreeSet<String>,
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap()
}

/// `counter (kernel.c)` -> ("counter", Some("kernel.c")), as our `kernel.c:counter`.
fn split_name(s: &str) -> (String, Option<String>) {
    let s = s.trim().trim_matches('`');
    match s.split_once(" (") {
        Some((n, f)) => (n.to_string(), Some(f.trim_end_matches(')').to_string())),
        None => (s.to_string(), None),
    }
}

fn qualified(name: &str, file: &Option<String>) -> String {
    match file {
        Some(f) => format!("{f}:{name}"),
        None => name.to_string(),
    }
}

fn data_rows(file: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(testdata("EXPECTED.md")).unwrap();
    let start = text.find(&format!("## `{file}`")).unwrap();
    let table = &text[start..];
    let table = &table[table
        .find("### Data objects and their cache lines")
        .unwrap()..];
    let table = &table[..table.find("\n### ").unwrap()];
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            let (name, f) = split_name(c[1]);
            Row {
                name,
                file: f,
                place: hex(c[3]),
                size: hex(c[4]),
                lines: c[6].parse().unwrap(),
                in_line: hex(c[7]),
                in_pair: hex(c[8]),
                co_tenants: if c[9] == "-" {
                    BTreeSet::new()
                } else {
                    c[9].split(", ")
                        .map(|t| {
                            let (n, f) = split_name(t);
                            qualified(&n, &f)
                        })
                        .collect()
                },
            }
        })
        .collect()
}

fn assert_data_objects(file: &str) {
    let rows = data_rows(file);
    assert!(rows.len() > 40, "{} rows", rows.len());
    let (code, v) = json(&["show", &testdata(file), "--symbol", "*"]);
    assert_eq!(code, 0);
    let views = v["symbols"].as_array().unwrap();
    // EXPECTED.md lists nm's zero-byte symbols (uidhash_lock_key) among the
    // co-tenants; they are never tenants (`SpaceIndex::tenants`).
    let zero: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.size == 0)
        .map(|r| qualified(&r.name, &r.file))
        .collect();
    assert_eq!(zero, BTreeSet::from(["uidhash_lock_key".to_string()]));
    for r in &rows {
        let q = qualified(&r.name, &r.file);
        let view = views
            .iter()
            .find(|x| x["qualified_name"] == q.as_str())
            .unwrap_or_else(|| panic!("{file}: no symbol {q}"));
        let p = &view["placement"];
        let got = (
            json_hex(&view["symbol"]["place"]),
            view["symbol"]["size"].as_u64().unwrap(),
            p["lines"].as_u64().unwrap(),
            p["offset_in_line"].as_u64().unwrap(),
            p["offset_in_pair"].as_u64().unwrap(),
        );
        assert_eq!(
            got,
            (r.place, r.size, r.lines, r.in_line, r.in_pair),
            "{file}: {q}"
        );
        let tenants: BTreeSet<String> = view["co_tenants"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|l| l["symbols"].as_array().unwrap().iter())
            .map(|s| match (s["binding"].as_str(), s["file"].as_str()) {
                (Some("local"), Some(f)) => format!("{f}:{}", s["name"].as_str().unwrap()),
                _ => s["name"].as_str().unwrap().to_string(),
            })
            .collect();
        let want: BTreeSet<String> = r.co_tenants.difference(&zero).cloned().collect();
        assert_eq!(tenants, want, "{file}: co-tenants of {q}");
    }
}

#[test]
fn old_data_objects_lines_and_co_tenants() {
    assert_data_objects("old.elf");
}

#[test]
fn new_data_objects_lines_and_co_tenants() {
    assert_data_objects("new.elf");
}

#[test]
fn root_user_laid_at_its_address() {
    let (code, v) = json(&["show", &testdata("old.elf"), "--symbol", "root_user"]);
    assert_eq!(code, 0);
    let view = &v["symbols"][0];
    assert_eq!(view["symbol"]["address"], "0xffffffff82a51260");
    assert_eq!(view["variable"]["type"], "struct user_struct");
    let laid = &view["laid"];
    assert_eq!(laid["base"], "0xffffffff82a51260");
    assert_eq!(laid["cachelines"], 3);
    // At offset 0x20 in its line: epoll_watches (8..48) crosses the first boundary,
    // ratelimit (96..136) starts on the third line.
    let lines: Vec<(String, u64, u64)> = laid["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["first_line"].as_u64().unwrap(),
                m["last_line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(lines[1], ("epoll_watches".to_string(), 0, 1));
    assert_eq!(lines[7], ("ratelimit".to_string(), 2, 2));
    let (_, text, _) = run(&["show", &testdata("old.elf"), "--symbol", "root_user"]);
    assert!(
        text.contains("cacheline 1 boundary at 0xffffffff82a51280 (struct offset 32)"),
        "{text}"
    );
}

/// Names of the symbols in a `show --line` JSON document.
fn line_symbol_names(v: &serde_json::Value) -> Vec<&str> {
    v["line"]["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

#[test]
fn percpu_line_lists_its_tenants() {
    let (code, v) = json(&["show", &testdata("old.elf"), "--line", "11c0", "--percpu"]);
    assert_eq!(code, 0);
    let names = line_symbol_names(&v);
    assert_eq!(
        names,
        [
            "injectm",
            "mce_exception_count",
            "mce_poll_count",
            "tsc_adjust"
        ]
    );
    assert_eq!(v["line"]["start"], "0x11c0");
}

#[test]
fn summary_counts() {
    let (code, v) = json(&["show", &testdata("old.elf")]);
    assert_eq!(code, 0);
    let s = &v["summary"];
    assert_eq!(s["percpu_variables"], 19);
    assert_eq!(s["percpu_base"], "0x0");
    assert_eq!(v["line_size"], 64);
    assert_eq!(v["arch"], "x86_64");
}

#[test]
fn line_size_override_is_used_and_reported() {
    let (_, v) = json(&[
        "show",
        &testdata("old.elf"),
        "--symbol",
        "root_user",
        "--line-size",
        "128",
    ]);
    assert_eq!(v["line_size"], 128);
    assert_eq!(v["line_size_from"], "--line-size");
    assert_eq!(v["symbols"][0]["placement"]["offset_in_line"], 0x60);
    assert_eq!(v["symbols"][0]["placement"]["offset_in_pair"], 0x60);
}

#[test]
fn big_endian_s390x_places_root_user() {
    let (code, v) = json(&["show", &testdata("old-s390x.elf"), "--symbol", "root_user"]);
    assert_eq!(code, 0);
    assert_eq!(v["arch"], "s390x");
    assert_eq!(v["symbols"][0]["variable"]["type"], "struct user_struct");
    assert_eq!(v["symbols"][0]["laid"]["size"], 136);
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    let cases = [
        ("bad/not-elf.txt", "not an ELF file"),
        // The first 1000 bytes of old.elf (47880 bytes; section headers at 46280,
        // 25 of 64 bytes: readelf -h).
        (
            "bad/truncated.elf",
            "truncated: the file has 1000 bytes, its section headers end at byte 47880",
        ),
        ("bad/empty", "empty file"),
        ("bad", "is a directory"),
        ("no-such-file", "No such file"),
    ];
    for (f, msg) in cases {
        let path = testdata(f);
        let (code, out, err) = run(&["show", &path, "--struct", "mce"]);
        assert_eq!(code, 2, "{f}");
        assert!(out.is_empty(), "{f}: {out}");
        assert_eq!(err.lines().count(), 1, "{f}: {err}");
        assert!(err.contains(&path) && err.contains(msg), "{f}: {err}");
    }
}

/// A section whose bytes run past the end of the file is named. readelf -SW
/// old.elf: section 8, .debug_info, at offset 0x52d8; its header is at 46280 + 8 * 64,
/// sh_size (8 bytes, little-endian) at +32. Made 0x10000 long, it ends at 0x152d8.
#[test]
fn a_section_past_the_end_of_the_file_is_named() {
    let mut bytes = std::fs::read(testdata("old.elf")).unwrap();
    let at = 46280 + 8 * 64 + 32;
    bytes[at..at + 8].copy_from_slice(&0x10000u64.to_le_bytes());
    let path = std::env::temp_dir().join(format!(
        "layout-diff-long-section-{}.elf",
        std::process::id()
    ));
    std::fs::write(&path, &bytes).unwrap();
    let (code, out, err) = run(&["show", path.to_str().unwrap(), "--struct", "mce"]);
    std::fs::remove_file(&path).ok();
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(
        err.trim_end(),
        format!(
            "layout-diff: {}: truncated: the file has 47880 bytes, section .debug_info ends at byte {}",
            path.display(),
            0x52d8 + 0x10000
        )
    );
}

#[test]
fn no_debug_info_symbols_work_structs_exit_2() {
    let f = testdata("old-nodebug.elf");
    let (code, v) = json(&["show", &f, "--symbol", "root_user"]);
    assert_eq!(code, 0);
    assert_eq!(v["symbols"][0]["placement"]["offset_in_line"], 0x20);
    let (code, _, err) = run(&["show", &f, "--struct", "mce"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("has no debug info") && err.contains(&f),
        "{err}"
    );
}

#[test]
fn no_match_exits_1() {
    let (code, _, err) = run(&["show", &testdata("old.elf"), "--struct", "no_such_struct"]);
    assert_eq!(code, 1);
    assert!(err.contains("no struct matches no_such_struct"), "{err}");
}

#[test]
fn output_is_the_same_with_one_or_two_threads() {
    let f = testdata("old.elf");
    let args = ["show", f.as_str(), "--struct", "*", "--format", "json"];
    let (_, one, _) = run_env(&args, &[("RAYON_NUM_THREADS", "1")]);
    let (_, two, _) = run_env(&args, &[("RAYON_NUM_THREADS", "2")]);
    assert!(one.len() > 1000);
    assert_eq!(one, two);
}

#[test]
fn same_name_different_layouts_are_kept_apart() {
    let (_, v) = json(&["show", &testdata("old.elf"), "--struct", "stats"]);
    let sizes: Vec<(u64, String)> = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["size"].as_u64().unwrap(),
                s["decl_file"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(sizes.len(), 2);
    assert!(
        sizes
            .iter()
            .any(|(s, f)| *s == 16 && f.ends_with("kernel.c")),
        "{sizes:?}"
    );
    assert!(
        sizes
            .iter()
            .any(|(s, f)| *s == 12 && f.ends_with("other.c")),
        "{sizes:?}"
    );
}

#[test]
fn text_line_lists_functions_with_source_lines() {
    // Source lines as binutils' addr2line gives them for these addresses.
    let (code, v) = json(&["show", &testdata("old.elf"), "--line", "ffffffff81000040"]);
    assert_eq!(code, 0);
    let names = line_symbol_names(&v);
    assert_eq!(names, ["mce_timer_fn", "grow_me"]);
    let sources: Vec<(u64, String)> = v["line"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                json_hex(&s["address"]),
                s["location"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        sources,
        vec![
            (0xffff_ffff_8100_0040, "./src/kernel.c:481".to_string()),
            (0xffff_ffff_8100_0070, "./src/kernel.c:488".to_string())
        ]
    );
}

#[test]
fn corrupted_inputs_never_panic_or_hang() {
    // Deterministic corruptions of old.elf: truncations and byte flips. Every run must
    // end with 0, 1 or 2, and an error is one line.
    let data = std::fs::read(testdata("old.elf")).unwrap();
    let dir = std::env::temp_dir().join(format!("layout-diff-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fz.elf");
    let p = path.to_str().unwrap().to_string();
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    for i in 0..24 {
        let mut b = data.clone();
        if i % 2 == 0 {
            b.truncate(64 + (next() as usize) % (data.len() - 64));
        } else {
            for _ in 0..8 {
                let j = 64 + (next() as usize) % (b.len() - 64);
                b[j] = next() as u8;
            }
        }
        std::fs::write(&path, &b).unwrap();
        let new = testdata("new.elf");
        for args in [
            vec!["show", &p, "--struct", "*"],
            vec!["show", &p, "--symbol", "*"],
            vec![&p, &new],
        ] {
            let (code, _, err) = common::run_timed(&args, 60);
            assert!(
                matches!(code, 0..=2),
                "case {i} {args:?}: exit {code}: {err}"
            );
            if code == 2 {
                assert_eq!(err.lines().count(), 1, "case {i}: {err}");
            }
        }
    }
}

/// A fuzzer's find (fuzz/README.md): a unit whose `DW_AT_low_pc` plus its
/// `DW_AT_high_pc` (a size) overflows, which gimli adds unchecked. Its code ranges are
/// dropped, the rest reads; in a build with overflow checks (`cargo test`) this
/// panicked before.
#[test]
fn a_unit_whose_pc_range_overflows_loads_without_its_ranges() {
    let f = testdata("bad/pc-overflow.elf");
    let (code, _, err) = run(&[f.as_str(), f.as_str()]);
    assert_eq!((code, err.as_str()), (0, ""));
}

/// A relocatable object (old.o) whose first `.rela.debug_info` entry is moved to
/// offset 0xfffffffffffffffe: the end of its 4-byte slot is past 2^64. One line, exit
/// 2; in a build with overflow checks (`cargo test`) the sum panicked before.
#[test]
fn a_relocation_past_the_address_space_is_one_line_and_exit_2() {
    let f = testdata("bad/reloc-overflow.o");
    let (code, out, err) = run(&["show", f.as_str(), "--struct", "*"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        format!(
            "layout-diff: {f}: section .debug_info: relocation at 0xfffffffffffffffe is \
             outside the section\n"
        )
    );
}

/// `bad/anon-dag.o` (valid C, testdata/README.md): at each of 30 levels an anonymous
/// struct declared `struct { ... } x, y;`, so expanding every member lists 2^31 - 2 of
/// them. Fingerprinting the struct's copies visited each one (over 60 s); now the
/// listing stops expanding at the loader's 4,096 members per struct, and lists the
/// direct members of the structs open at that point (at most 2 on each of 30 levels).
#[test]
fn anonymous_structs_declared_twice_per_level_are_bounded() {
    let f = testdata("bad/anon-dag.o");
    let (code, out, err) = common::run_timed(&["show", f.as_str(), "--struct", "S"], 10);
    assert_eq!((code, err.as_str()), (0, ""));
    let members = out
        .lines()
        .filter(|l| l.trim_end().ends_with(" */") && l.contains(';') && !l.contains("/* XXX"))
        .count();
    assert!((4096..=4096 + 60).contains(&members), "{members} members");
    assert!(out.contains("/* XXX layout-diff: members not listed:"));
}

/// A fuzzer's find: function types whose parameters are the function type again, so
/// that spelling a type branched at every level (more than 30 s before; the spelling
/// of one declaration is now bounded). The time bound is ten times what it takes.
#[test]
fn self_referencing_function_types_are_spelled_in_bounded_time() {
    let f = testdata("bad/self-typed-fn.elf");
    let out = common::command()
        .args([f.as_str(), f.as_str()])
        .timeout(std::time::Duration::from_secs(5))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// `show --symbol NAME` reads only the variables its view needs (src/load/around.rs);
/// the same name as a one-character class (`[r]oot_user`) goes through the whole read.
/// Both print the same, for every data object of the fixtures (locals of one name in
/// two files among them, and per-CPU variables), in text and JSON.
#[test]
fn show_symbol_by_name_prints_what_the_whole_read_prints() {
    for file in ["old.elf", "evidence/new.elf"] {
        let f = testdata(file);
        let (code, v) = json(&["show", &f, "--symbol", "*"]);
        assert_eq!(code, 0, "{file}");
        let names: BTreeSet<String> = v["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["symbol"]["kind"] != "function")
            .map(|s| s["symbol"]["name"].as_str().unwrap().to_string())
            .filter(|n| n.starts_with(|c: char| c.is_ascii_alphabetic()))
            .collect();
        assert!(names.len() >= 10, "{file}: {names:?}");
        for name in &names {
            let glob = format!("[{}]{}", &name[..1], &name[1..]);
            let sparse = run(&["show", &f, "--symbol", name]);
            let whole = run(&["show", &f, "--symbol", &glob]);
            assert_eq!(sparse, whole, "{file} {name}");
            // In JSON, one field may differ: the declaring file of the type laid at the
            // object. Layouts equal in all but that file are one (`load::dwarf::finish`,
            // the lowest unit's kept); the whole read keeps the first unit's of all,
            // the sparse read the first of those it read. old.elf's `struct list_head`
            // is defined alike in kernel.c and other.c: other.c's net_namespace_list
            // has it from other.c read alone, from kernel.c read whole.
            let (mut sparse, mut whole) = (
                json(&["show", &f, "--symbol", name]),
                json(&["show", &f, "--symbol", &glob]),
            );
            for v in [&mut sparse.1, &mut whole.1] {
                for s in v["symbols"].as_array_mut().unwrap() {
                    if let Some(laid) = s.get_mut("laid").and_then(|l| l.as_object_mut()) {
                        laid.remove("decl_file");
                    }
                }
            }
            assert_eq!(sparse, whole, "{file} {name} json");
        }
    }
}
