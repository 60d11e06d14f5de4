//! The type model and pahole's struct text on testdata/types/ (see FACTS.md there):
//! `show --struct` must print what pahole 1.24 printed into the committed listings,
//! whitespace runs collapsed; type spellings, write-hot and const-ness come from the
//! structured type model.

mod common;

use common::{json, pahole_blocks, run, testdata};
use layout_diff_core::model::TypeKind;
use layout_diff_core::{InputFile, LoadOptions};

/// pahole-style blocks (`common::pahole_blocks`), sorted: pahole prints in DWARF order,
/// layout-diff by name.
fn blocks(text: &str) -> Vec<Vec<String>> {
    let mut out = pahole_blocks(text);
    out.sort();
    out
}

fn pahole(name: &str) -> String {
    std::fs::read_to_string(testdata(&format!("types/{name}"))).expect("committed listing")
}

#[test]
fn show_struct_is_paholes_text_x86_64_dwarf5() {
    let (code, out, err) = run(&["show", &testdata("types/types.elf"), "--struct", "*"]);
    assert_eq!(code, 0, "{err}");
    let want = blocks(&pahole("pahole.txt"));
    assert_eq!(want.len(), 13);
    assert_eq!(blocks(&out), want);
}

#[test]
fn show_struct_is_paholes_text_s390x_big_endian_dwarf4() {
    // pahole draws boundaries at the host's 64-byte lines; s390x's own are 256.
    let (code, out, err) = run(&[
        "show",
        &testdata("types/types-s390x.elf"),
        "--struct",
        "*",
        "--line-size",
        "64",
    ]);
    assert_eq!(code, 0, "{err}");
    // Built from types.c before its member-gaps structs were added (no s390x
    // compiler here since): the first 7 structs.
    let want = blocks(&pahole("pahole-s390x.txt"));
    assert_eq!(want.len(), 7);
    assert_eq!(blocks(&out), want);
}

#[test]
fn show_struct_is_paholes_text_on_every_fixture() {
    for (elf, extra) in [
        ("old", None),
        ("new", None),
        ("old-dwarf4", None),
        ("old-clang", None),
        ("old-s390x", Some("64")),
    ] {
        let file = testdata(&format!("{elf}.elf"));
        let mut args = vec!["show", file.as_str(), "--struct", "*"];
        if let Some(ls) = extra {
            args.extend(["--line-size", ls]);
        }
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{elf}: {err}");
        let listing = std::fs::read_to_string(testdata(&format!("pahole-text/{elf}.txt")))
            .expect("committed listing");
        let want = blocks(&listing);
        assert_eq!(want.len(), 23, "{elf}");
        assert_eq!(blocks(&out), want, "{elf}");
    }
}

#[test]
fn struct_atomic_t_follows_the_typedef_like_pahole_c() {
    let (code, out, err) = run(&["show", &testdata("types/types.elf"), "--struct", "atomic_t"]);
    assert_eq!(code, 0, "{err}");
    let got = blocks(&out);
    assert_eq!(got, blocks(&pahole("pahole-atomic_t.txt")));
    assert_eq!(got[0].last().map(String::as_str), Some("} atomic_t;"));
}

#[test]
fn annotate_adds_straddles_and_own_alignment_only_on_request() {
    let f = testdata("types/types.elf");
    let (_, plain, _) = run(&["show", &f, "--struct", "aligned_member"]);
    let (_, annotated, _) = run(&["show", &f, "--struct", "aligned_member", "--annotate"]);
    assert!(!plain.contains("forced alignment: 64 */"));
    assert!(annotated.contains("\t/* forced alignment: 64 */\n"));
}

#[test]
fn member_types_are_spelled_in_c() {
    let (code, v) = json(&["show", &testdata("types/types.elf"), "--struct", "fnptrs"]);
    assert_eq!(code, 0);
    let members = v["structs"][0]["members"].as_array().expect("members");
    let types: Vec<(&str, &str)> = members
        .iter()
        .map(|m| (m["name"].as_str().unwrap(), m["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        types,
        vec![
            ("handlers", "void (*[4])(int)"),
            ("one", "int (*)(const char *, ...)"),
            ("cvals", "const int[4]"),
            ("regs", "volatile unsigned char[8]"),
            ("msg", "const char *"),
            ("fixed", "char *const"),
            ("refs", "atomic_t"),
        ]
    );
}

#[test]
fn pahole_facts_in_json() {
    let f = testdata("types/types.elf");
    let (_, v) = json(&["show", &f, "--struct", "aligned_member"]);
    let s = &v["structs"][0];
    assert_eq!(s["explicit_alignment"], 64);
    assert_eq!(s["members"][0]["hole"], 63);
    assert_eq!(s["members"][1]["alignment"], 64);
    assert_eq!(s["packed"], serde_json::Value::Null);
    let (_, v) = json(&["show", &f, "--struct", "packed_one"]);
    assert_eq!(v["structs"][0]["packed"], true);
    let (_, v) = json(&["show", &f, "--struct", "atomic_t"]);
    assert_eq!(v["structs"][0]["typedef"], true);
    assert_eq!(v["structs"][0]["name"], "atomic_t");
}

#[test]
fn nested_anonymous_members_in_json() {
    let (_, v) = json(&[
        "show",
        &testdata("types/types.elf"),
        "--struct",
        "with_anon",
    ]);
    let m = &v["structs"][0]["members"];
    // kind, the anonymous union (pt, the unnamed struct, raw), meta[2], tail[].
    assert_eq!(m[1]["name"], serde_json::Value::Null);
    let union_members: Vec<&str> = m[1]["members"]
        .as_array()
        .expect("nested members")
        .iter()
        .map(|n| n["name"].as_str().unwrap_or("(anonymous)"))
        .collect();
    assert_eq!(union_members, vec!["pt", "(anonymous)", "raw"]);
    assert_eq!(m[2]["name"], "meta");
    assert_eq!(m[2]["members"][1]["offset"], 28);
}

#[test]
fn variables_carry_their_type_as_data() {
    let file = InputFile::open(testdata("types/types.elf").as_ref()).expect("open");
    let image = file.load(&LoadOptions::default()).expect("load");
    let var = |n: &str| {
        image
            .variables
            .iter()
            .find(|v| v.name == n)
            .unwrap_or_else(|| panic!("no variable {n}"))
    };
    // `const char *`: the object is a writable pointer; `char *const` is const.
    assert_eq!(var("greeting").type_name(), "const char *");
    assert!(!var("greeting").ctype.is_const);
    assert_eq!(var("fixed_ptr").type_name(), "char *const");
    assert!(var("fixed_ptr").ctype.is_const);
    assert_eq!(var("callbacks").type_name(), "void (*[4])(int)");
    assert_eq!(var("callbacks").ctype.dims, vec![4]);
    assert_eq!(var("callbacks").ctype.element, TypeKind::Pointer);
    assert_eq!(var("lock_ptr").ctype.kind, TypeKind::Pointer);
    // The anonymous struct holding a lock gets a layout of its own.
    let anon = var("anon_locked");
    assert_eq!(anon.type_name(), "struct {...}");
    let layout = image.struct_by_id(anon.layout.expect("anonymous struct laid out"));
    assert_eq!(layout.size, 8);
    assert_eq!(layout.members[0].type_name(), "spinlock_t");
}

#[test]
fn options_before_the_files() {
    let (code, out, err) = run(&[
        "--format",
        "json",
        &testdata("old.elf"),
        &testdata("new.elf"),
    ]);
    // The fixture pair flags nothing on evidence (process_counts' new neighbours hold no lock, atomic or evidence).
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["format"], "layout-diff-diff");
}

#[test]
fn all_before_the_files() {
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    let (code, out, err) = run(&["--all", &old, &new]);
    // The fixture pair flags nothing on evidence (process_counts' new neighbours hold no lock, atomic or evidence).
    assert_eq!(code, 0, "{err}");
    let head: Vec<&str> = out.lines().take(4).collect();
    assert_eq!(
        head,
        [
            format!("layout-diff  old  {old}"),
            "                  Linux 6.1.0-layout-diff, no build-id".to_string(),
            format!("             new  {new}"),
            "                  Linux 6.1.0-layout-diff, no build-id".to_string(),
        ]
    );
}

#[test]
fn show_markdown_is_refused_with_one_line() {
    let (code, out, err) = run(&["show", &testdata("old.elf"), "--format", "markdown"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(
        err,
        "layout-diff: show has no Markdown output; use --format text or --format json\n"
    );
}

#[test]
fn empty_line_exits_1_and_suggests_percpu() {
    // old.elf links .data..percpu at 0: address 0x40 is a per-CPU offset, not a global.
    let (code, _, err) = run(&["show", &testdata("old.elf"), "--line", "0x40"]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "layout-diff: nothing on the line at 0x40; it is in .data..percpu: per-CPU objects are found by offset, try --percpu\n"
    );
}

#[test]
fn diff_patterns_that_match_nothing_are_reported() {
    let (code, _, err) = run(&[
        &testdata("old.elf"),
        &testdata("new.elf"),
        "--struct",
        "no_such_struct",
        "--symbol",
        "no_such_*",
    ]);
    // The fixture pair flags nothing on evidence (process_counts' new neighbours hold no lock, atomic or evidence).
    assert_eq!(code, 0);
    assert_eq!(
        err,
        "layout-diff: --struct no_such_struct: no struct of that name in either build\n\
         layout-diff: --symbol no_such_*: no symbol of that name in either build\n"
    );
}
