//! Every command reads `--hot` through one `evidence::gather`: a file is never ignored
//! without a word. A file of no kind `--hot` reads, or one of which nothing matches the
//! builds, exits 2 naming it; a partial match is counted in the report. Fixtures:
//! testdata/check (base.elf and patched.elf have root_user and pcpu_hot_count, c2c.txt
//! has 5 hot lines of which 3 fall in base.elf with its inferred KASLR offset:
//! tests/hot_c2c.rs) and testdata/old.elf, which has neither the functions c2c.txt
//! names nor those objects.

mod common;

use common::{json, run, testdata};
use serde_json::json;

fn elf(name: &str) -> String {
    testdata(&format!("check/{name}.elf"))
}

/// Writes `text` to a file of its own for one test; returns its path.
fn hot_file(name: &str, text: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hot-files");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Runs each command line; each must exit 2 with nothing on stdout and exactly
/// `err` on stderr.
fn all_exit_2<S: AsRef<str>>(runs: &[Vec<S>], err: &str) {
    for args in runs {
        let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        let (code, out, stderr) = run(&args);
        assert_eq!(
            (code, out.as_str(), stderr.as_str()),
            (2, "", err),
            "{args:?}"
        );
    }
}

/// The diff, `suggest` on the pair and on one build, and `show`, each with `--hot
/// path`, on the testdata/check builds.
fn every_command(path: &str) -> Vec<Vec<String>> {
    let (base, patched) = (elf("base"), elf("patched"));
    let (b, p) = (base.as_str(), patched.as_str());
    [
        vec![b, p, "--hot", path],
        vec!["suggest", b, p, "--hot", path],
        vec!["suggest", b, "--hot", path],
        vec!["show", b, "--hot", path],
    ]
    .iter()
    .map(|args| args.iter().map(|a| a.to_string()).collect())
    .collect()
}

#[test]
fn suggest_refuses_a_c2c_report_it_cannot_place_as_the_diff_does() {
    let (old, new, c2c) = (
        testdata("old.elf"),
        testdata("new.elf"),
        testdata("check/c2c.txt"),
    );
    let err = format!(
        "layout-diff: {c2c}: cannot infer the KASLR offset: no code address in the report falls in a function of the image it names; give --kaslr-offset HEX\n"
    );
    all_exit_2(
        &[
            vec![&old, &new, "--hot", &c2c],
            vec!["suggest", &old, &new, "--hot", &c2c],
        ],
        &err,
    );
}

#[test]
fn a_file_of_no_kind_hot_reads_exits_2_naming_it() {
    let passwd = hot_file(
        "passwd",
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
    );
    all_exit_2(
        &every_command(&passwd),
        &format!(
            "layout-diff: {passwd}: not a perf report or a list of names: line 1 is not a symbol name, glob or sym+0xOFF: \"root:x:0:0:root:/root:/bin/bash\"\n"
        ),
    );
    let garbage = hot_file(
        "garbage",
        "# two lines of prose\nsome garbage\nmore of it\n",
    );
    all_exit_2(
        &every_command(&garbage),
        &format!(
            "layout-diff: {garbage}: not a perf report or a list of names: line 2 is not a symbol name, glob or sym+0xOFF: \"some garbage\"\n"
        ),
    );
    let empty = hot_file("empty", "# nothing but a comment\n\n");
    all_exit_2(
        &every_command(&empty),
        &format!(
            "layout-diff: {empty}: no entries: neither a perf report nor a name, glob or sym+0xOFF on a line\n"
        ),
    );
}

#[test]
fn a_list_or_profile_of_which_nothing_matches_exits_2_naming_it() {
    let names = hot_file("unknown-names", "garbage_one\nfoo_bar_*\n");
    let runs = every_command(&names);
    let either = format!(
        "layout-diff: {names}: none of the 2 entries of this list of names matches either build\n"
    );
    all_exit_2(&runs[..2], &either);
    all_exit_2(
        &runs[2..],
        &format!(
            "layout-diff: {names}: none of the 2 entries of this list of names matches the build\n"
        ),
    );
    let profile = hot_file(
        "unknown-types",
        "# Overhead  Data Type  Data Type Offset\n\
         # ........  .........  ................\n\
         #\n\
         \x20   10.81%  struct no_such_type  struct no_such_type +0 (first)\n\
         \x20    4.80%  struct no_such_type  struct no_such_type +8 (second)\n\
         \x20    1.43%  long unsigned int  long unsigned int +0 (no_such_counter)\n",
    );
    all_exit_2(
        &every_command(&profile)[..2],
        &format!(
            "layout-diff: {profile}: none of the 2 entries of this perf data-type profile matches either build\n"
        ),
    );
}

#[test]
fn a_partial_match_is_counted_in_every_report() {
    let list = hot_file("partial", "root_user+0x20\nno_such_object\npcpu_hot_*\n");
    let (base, patched) = (elf("base"), elf("patched"));
    let note = format!("--hot {list}: 2 of 3 entries matched");
    let counted = json!([{"path": list, "format": "list of names", "entries": 3, "matched": 2}]);
    // root_user, measured by the list, gained a written neighbour: exit 1.
    let (code, out, _) = run(&[&base, &patched, "--hot", &list]);
    assert_eq!(code, 1);
    assert_eq!(
        out.lines().take(7).collect::<Vec<_>>(),
        [
            format!("layout-diff  old  {base}"),
            "                  no build-id".to_string(),
            format!("             new  {patched}"),
            "                  no build-id".to_string(),
            "note: the lines of the 3 changed structs are not judged by who shares them: --access"
                .to_string(),
            format!("note: {note}"),
            "line 64 B (target), pair 128 B".to_string(),
        ]
    );
    let (_, v) = json(&[&base, &patched, "--hot", &list]);
    assert_eq!(v["hot_files"], counted);
    let (code, out, _) = run(&["suggest", &base, &patched, "--hot", &list]);
    assert_eq!(code, 0);
    assert_eq!(
        out.lines().take(3).collect::<Vec<_>>(),
        [
            format!("layout-diff suggest  {base}  ->  {patched}"),
            String::new(),
            note.clone(),
        ]
    );
    let (_, v) = json(&["suggest", &base, &patched, "--hot", &list]);
    assert_eq!(v["hot_files"], counted);
    let (code, _, err) = run(&["show", &base, "--hot", &list]);
    assert_eq!((code, err), (0, format!("layout-diff: {note}\n")));
    // A c2c report counts its hot lines in the build; a full match is counted too.
    let c2c = testdata("check/c2c.txt");
    let names = testdata("check/hot-names.txt");
    let (_, v) = json(&[&base, &patched, "--hot", &c2c, "--hot", &names]);
    assert_eq!(
        v["hot_files"],
        json!([
            {"path": c2c, "format": "perf c2c report", "entries": 5, "matched": 3},
            {"path": names, "format": "list of names", "entries": 2, "matched": 2},
        ])
    );
}

/// One build, a c2c report recorded on it: the objects on its hot lines are measured
/// hot, as in the diff (root_user and uidhash_lock share line ...100 of base.elf, both
/// written: tests/hot_c2c.rs, testdata/check/FACTS.md).
#[test]
fn suggest_on_one_build_reads_a_c2c_report() {
    let c2c = testdata("check/c2c.txt");
    let (code, v) = json(&["suggest", &elf("base"), "--hot", &c2c]);
    assert_eq!(code, 0);
    let rules: Vec<(&str, &str, &serde_json::Value)> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap(),
                r["key"].as_str().unwrap(),
                &r["offenders"],
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            ("root_user", "not_with", &json!(["uidhash_lock"])),
            ("uidhash_lock", "not_with", &json!(["root_user"])),
        ]
    );
    let (code, out, err) = run(&[
        "suggest",
        &elf("base"),
        "--hot",
        &testdata("check/hot-names.txt"),
        "--kaslr-offset",
        "0x1a400000",
    ]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            2,
            "",
            "layout-diff: --kaslr-offset applies to a perf c2c report given with --hot\n"
        )
    );
}
