//! Snapshot files (`layout-diff snapshot`) and `history`: output from snapshots equals
//! output from the ELF files they were written from (paths aside), damaged snapshots
//! exit 2 with one line and never panic, and `history` rows match nm facts of the
//! fixtures (testdata/EXPECTED.md and `nm -S`: root_user is 0x88 bytes at
//! ffffffff82a51260 in old.elf, 0xc0 bytes at ...280 in new.elf, 0x88 bytes at ...220
//! in old-clang.elf, where init_user_ns follows it at ...2a8).

mod common;

use std::path::PathBuf;

use common::{run, testdata};
use layout_diff_core::InputFile;
use layout_diff_core::load::LoadOptions;

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("snapshot-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the snapshot of fixture `elf` (a name in testdata/, or a path) into `dir`;
/// returns its path.
fn snap(dir: &std::path::Path, elf: &str) -> String {
    snap_as(dir, elf, false)
}

/// As `snap`, with `--with-lines` when `lines` (into a file of its own name).
fn snap_as(dir: &std::path::Path, elf: &str, lines: bool) -> String {
    let path = if elf.contains('/') {
        elf.to_string()
    } else {
        testdata(elf)
    };
    let name = PathBuf::from(&path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace(".elf", if lines { "-lines.snap" } else { ".snap" });
    let out = dir.join(name).display().to_string();
    let mut args = vec!["snapshot", path.as_str(), "-o", &out];
    if lines {
        args.push("--with-lines");
    }
    let (code, stdout, err) = run(&args);
    assert_eq!((code, stdout.as_str()), (0, ""), "{err}");
    out
}

/// Runs `args` on the ELF fixtures and again with each fixture replaced by its
/// snapshot, and asserts equal exit codes, stdout and stderr once the snapshot paths
/// are written back as the ELF paths.
fn same_output(dir: &std::path::Path, args: &[&str]) {
    same_output_as(dir, args, false)
}

/// As `same_output`, the snapshots written `--with-lines` when `lines`: the source
/// lines of the code's references (`show --symbol`'s writers and readers) are kept
/// only then.
fn same_output_as(dir: &std::path::Path, args: &[&str], lines: bool) {
    let expected = run(args);
    let mut swapped = Vec::new();
    let mut back = Vec::new();
    for a in args {
        if a.ends_with(".elf") {
            let s = snap_as(dir, a, lines);
            back.push((s.clone(), a.to_string()));
            swapped.push(s);
        } else {
            swapped.push(a.to_string());
        }
    }
    let refs: Vec<&str> = swapped.iter().map(String::as_str).collect();
    let (code, mut out, mut err) = run(&refs);
    for (s, e) in &back {
        out = out.replace(s, e);
        err = err.replace(s, e);
    }
    assert_eq!((code, out, err), expected, "{args:?}");
}

#[test]
fn diff_from_snapshots_equals_diff_from_elf_files() {
    let dir = scratch("diff");
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    for format in ["text", "json", "markdown"] {
        same_output(&dir, &[&old, &new, "--all", "--format", format]);
        same_output(&dir, &[&old, &new, "--format", format]);
    }
    same_output(
        &dir,
        &[
            &old,
            &new,
            "--struct",
            "user_struct",
            "--symbol",
            "root_user",
        ],
    );
    // The diff reports changes: it is not trivially equal.
    let (code, out, _) = run(&[&old, &new, "--format", "json"]);
    // The fixture pair flags nothing on evidence (process_counts' new neighbours hold no lock, atomic or evidence).
    assert_eq!(code, 0);
    assert!(out.contains("\"root_user\""), "{out}");
}

#[test]
fn a_snapshot_and_an_elf_file_mix() {
    let dir = scratch("mix");
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    let new_snap = snap(&dir, "new.elf");
    let expected = run(&[&old, &new, "--all", "--format", "json"]);
    let (code, out, err) = run(&[&old, &new_snap, "--all", "--format", "json"]);
    assert_eq!((code, out.replace(&new_snap, &new), err), expected);
}

#[test]
fn show_and_check_from_a_snapshot_equal_the_elf_output() {
    let dir = scratch("show");
    let old = testdata("old.elf");
    let (types, types_btf) = (testdata("types/types.elf"), testdata("btf/types-btf.elf"));
    for args in [
        vec!["show", old.as_str()],
        vec!["show", &old, "--format", "json"],
        vec!["show", &old, "--struct", "*"],
        vec!["show", &old, "--struct", "*", "--annotate"],
        vec!["show", &old, "--struct", "*", "--format", "json"],
        // A typedef-named anonymous struct, as pahole -C atomic_t.
        vec!["show", &old, "--struct", "atomic_t"],
        vec!["show", &old, "--line", "0", "--percpu"],
        // Member struct types with holes, bit holes, bit padding and flexible arrays
        // (testdata/types/FACTS.md): the notes after such members survive a snapshot.
        vec!["show", &types, "--struct", "*"],
        vec!["show", &types_btf, "--struct", "*"],
    ] {
        same_output(&dir, &args);
    }
    // Who writes and reads each symbol, with the source lines of those instructions,
    // which a snapshot keeps `--with-lines`.
    for args in [
        vec!["show", old.as_str(), "--symbol", "*", "--format", "json"],
        vec![
            "show",
            &old,
            "--symbol",
            "root_user",
            "--struct",
            "user_struct",
        ],
    ] {
        same_output_as(&dir, &args, true);
    }
    // Rules on one build and growth rules on a pair (testdata/check, FACTS.md there);
    // their exit codes (1: some rule fails, 0: all pass) show they were evaluated.
    let (base, patched) = (testdata("check/base.elf"), testdata("check/patched.elf"));
    for (rules, code) in [
        ("functions", 1),
        ("groups", 1),
        ("mce", 1),
        ("missing", 1),
        ("percpu", 1),
        ("root_user", 0),
        ("separate", 1),
    ] {
        let rules = testdata(&format!("check/rules/{rules}.toml"));
        for format in ["text", "json"] {
            let args = [
                "check", "--rules", &rules, &base, &patched, "--format", format,
            ];
            assert_eq!(run(&args).0, code, "{rules}");
            same_output(&dir, &args);
            same_output(
                &dir,
                &["check", "--rules", &rules, &patched, "--format", format],
            );
        }
    }
}

#[test]
fn show_line_on_a_snapshot_says_source_lines_are_absent() {
    let dir = scratch("line");
    let s = snap(&dir, "old.elf");
    let (_, _, err) = run(&["show", &s, "--line", "0xffffffff82a51260"]);
    assert_eq!(
        err,
        format!("layout-diff: {s}: a snapshot keeps no source lines; give the vmlinux for them\n")
    );
}

#[test]
fn damaged_snapshots_exit_2_with_one_line() {
    let dir = scratch("damaged");
    let s = snap(&dir, "old.elf");
    let bytes = std::fs::read(&s).unwrap();
    let bad = dir.join("bad.snap").display().to_string();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (bytes[..10].to_vec(), "truncated header (10 bytes)"),
        (bytes[..bytes.len() - 1].to_vec(), "checksum mismatch"),
        (
            {
                let mut b = bytes.clone();
                b[bytes.len() / 2] ^= 0x10;
                b
            },
            "checksum mismatch",
        ),
        (
            {
                let mut b = bytes.clone();
                b[8] = 9;
                b
            },
            "format version 9, this layout-diff reads version 15",
        ),
    ];
    for (data, message) in cases {
        std::fs::write(&bad, &data).unwrap();
        for args in [vec!["show", bad.as_str()], vec![bad.as_str(), s.as_str()]] {
            let (code, out, err) = run(&args);
            assert_eq!((code, out.as_str()), (2, ""), "{message}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.starts_with(&format!("layout-diff: {bad}: bad snapshot: {message}")),
                "{err}"
            );
        }
    }
}

/// A crafted snapshot, valid header and checksum, whose one struct nests a million
/// levels deep: refused with one line and exit 2 (decoding recursed once per level and
/// overflowed the stack), by `show` and the diff alike; 64 levels still read.
#[test]
fn deeply_nested_structs_exit_2_not_a_stack_overflow() {
    let dir = scratch("nesting");
    let good = snap(&dir, "old.elf");
    let deep = dir.join("deep.snap").display().to_string();
    std::fs::write(
        &deep,
        layout_diff_core::snapshot::nested_chain_file(1_000_000),
    )
    .unwrap();
    let line =
        format!("layout-diff: {deep}: bad snapshot: structs nested more than 64 levels deep\n");
    for args in [
        vec!["show", deep.as_str()],
        vec![good.as_str(), deep.as_str()],
    ] {
        assert_eq!(run(&args), (2, String::new(), line.clone()), "{args:?}");
    }
    let ok = dir.join("ok.snap").display().to_string();
    std::fs::write(&ok, layout_diff_core::snapshot::nested_chain_file(63)).unwrap();
    let (code, _, err) = run(&["show", ok.as_str()]);
    assert_eq!((code, err.as_str()), (0, ""));
}

/// Every truncation and a bit flip in every byte: an error, never a panic, and never a
/// successful load (the checksum covers everything after the header's first 16 bytes,
/// and those are the magic, the version and the checksum itself).
#[test]
fn every_truncation_and_bit_flip_is_refused() {
    let dir = scratch("flips");
    let s = snap(&dir, "old.elf");
    let bytes = std::fs::read(&s).unwrap();
    let bad = dir.join("bad.snap");
    let load = |data: &[u8]| -> Result<usize, String> {
        std::fs::write(&bad, data).unwrap();
        let file = InputFile::open(&bad).map_err(|e| e.to_string())?;
        let image = file
            .load(&LoadOptions::default())
            .map_err(|e| e.to_string())?;
        Ok(image.symbols.len())
    };
    let good = load(&bytes).unwrap();
    assert!(good > 0);
    for len in 1..bytes.len() {
        assert!(load(&bytes[..len]).is_err(), "truncated to {len}");
    }
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 1 << (i % 8);
        // A flip in the magic makes it an ELF candidate: refused as not ELF.
        assert!(load(&b).is_err(), "bit flip in byte {i}");
    }
}

/// address, place, offset in line, offset in pair, size, changed, co-tenants.
type Row<'a> = (&'a str, &'a str, u64, u64, u64, bool, Vec<&'a str>);

#[test]
fn history_over_three_builds_lists_root_user_in_each() {
    let old = testdata("old.elf");
    let new = testdata("new.elf");
    let clang = testdata("old-clang.elf");
    let (code, out, err) = run(&[
        "history",
        &old,
        &new,
        &clang,
        "--symbol",
        "root_user",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["format"], "layout-diff-history");
    let rows = v["symbols"][0]["rows"].as_array().unwrap();
    assert_eq!(v["symbols"][0]["name"], "root_user");
    let facts: Vec<Row> = rows
        .iter()
        .map(|r| {
            (
                r["address"].as_str().unwrap(),
                r["place"].as_str().unwrap(),
                r["offset_in_line"].as_u64().unwrap(),
                r["offset_in_pair"].as_u64().unwrap(),
                r["size"].as_u64().unwrap(),
                r["changed"].as_bool().unwrap(),
                r["co_tenants"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        facts,
        vec![
            (
                "0xffffffff82a51260",
                "0xffffffff82a51260",
                0x20,
                0x60,
                0x88,
                false,
                vec!["types__ptrace"]
            ),
            (
                "0xffffffff82a51280",
                "0xffffffff82a51280",
                0,
                0,
                0xc0,
                true,
                vec![]
            ),
            (
                "0xffffffff82a51220",
                "0xffffffff82a51220",
                0x20,
                0x20,
                0x88,
                true,
                vec!["init_user_ns", "types__ptrace"]
            ),
        ]
    );
}

#[test]
fn history_text_marks_changed_builds_and_reads_snapshots() {
    let dir = scratch("history");
    let old = testdata("old.elf");
    let new = testdata("new.elf");
    let old_snap = snap(&dir, "old.elf");
    let args = ["--struct", "user_struct", "--symbol", "root_user"];
    let (code, from_elf, _) = run(&[&["history", old.as_str(), new.as_str()][..], &args].concat());
    assert_eq!(code, 0);
    let (_, from_snap, _) =
        run(&[&["history", old_snap.as_str(), new.as_str()][..], &args].concat());
    // Equal cells (the column widths follow the longer snapshot path).
    let cells = |t: &str| -> Vec<Vec<String>> {
        t.lines()
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .collect()
    };
    assert_eq!(cells(&from_snap.replace(&old_snap, &old)), cells(&from_elf));
    let lines: Vec<&str> = from_elf.lines().collect();
    // pahole: user_struct is 136 bytes in old.elf, 192 (56 bytes padding) in new.elf;
    // holes: 2, sum holes: 8 in both.
    let struct_rows: Vec<Vec<&str>> = lines
        .iter()
        .skip_while(|l| !l.starts_with("struct user_struct"))
        .skip(2)
        .take(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        struct_rows,
        vec![
            vec![old.as_str(), "136", "3", "8", "2", "8", "1", "-"],
            vec!["*", new.as_str(), "192", "3", "8", "2", "8", "1", "-"],
        ]
    );
}

/// `snapshot --with-lines` keeps what `show --line` prints: every line of old.elf's
/// `.text` (ffffffff81000000 .. _etext ffffffff8100028b, `nm`) shows the same source
/// lines from the snapshot as from the ELF file.
#[test]
fn with_lines_snapshots_show_the_source_lines() {
    let dir = scratch("with-lines");
    let old = testdata("old.elf");
    let s = dir.join("old-lines.snap").display().to_string();
    let (code, _, err) = run(&["snapshot", &old, "--with-lines", "-o", &s]);
    assert_eq!(code, 0, "{err}");
    let mut with_sources = 0;
    for line in 0..11u64 {
        let at = format!("{:#x}", 0xffff_ffff_8100_0000u64 + line * 64);
        for format in ["text", "json"] {
            let expected = run(&["show", &old, "--line", &at, "--format", format]);
            let (code, out, err) = run(&["show", &s, "--line", &at, "--format", format]);
            assert_eq!((code, out.replace(&s, &old), err), expected, "{at}");
            if format == "json" && expected.1.contains("\"location\"") {
                with_sources += 1;
            }
        }
    }
    // Every one of the 11 lines holds code with a source line (other.c, kernel.c).
    assert_eq!(with_sources, 11);
}

/// The hidden `bench-walk` visits every DIE: `readelf --debug-dump=info` lists 386
/// non-null entries in 2 units for old.elf and 390 in 2 units for new.elf.
#[test]
fn bench_walk_counts_every_die() {
    let (code, out, err) = run(&["bench-walk", &testdata("old.elf"), &testdata("new.elf")]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..2],
        [
            format!("{}: 2 units, 386 DIEs", testdata("old.elf")),
            format!("{}: 2 units, 390 DIEs", testdata("new.elf")),
        ]
    );
    assert!(lines[2].starts_with("walk "), "{out}");
}

/// Past the checksum: a bit flip in every byte of the two decompressed parts (as if a
/// bad writer had produced them with a valid checksum) either fails to decode with an
/// error or gives an image that `show` and the diff handle; never a panic.
#[test]
fn payload_bit_flips_never_panic() {
    use layout_diff_core::diff::{DiffOptions, diff};
    let dir = scratch("payload-flips");
    let s = snap(&dir, "old.elf");
    let path = std::path::Path::new(&s);
    let bytes = std::fs::read(&s).unwrap();
    let (names, records) = layout_diff_core::snapshot::parts(path, &bytes).unwrap();
    let options = LoadOptions {
        pahole_text: false,
        ..LoadOptions::default()
    };
    let types = layout_diff_core::snapshot::Types::default();
    let good =
        layout_diff_core::snapshot::decode(path, &names, &types, &records, &options).unwrap();
    let all = layout_diff_core::show::globs(&["*".to_string()]).unwrap();
    let (mut refused, mut decoded) = (0, 0);
    for i in 0..names.len() + records.len() {
        let (mut n, mut r) = (names.clone(), records.clone());
        match i.checked_sub(names.len()) {
            None => n[i] ^= 1 << (i % 8),
            Some(j) => r[j] ^= 1 << (i % 8),
        }
        let types = layout_diff_core::snapshot::Types::default();
        match layout_diff_core::snapshot::decode(path, &n, &types, &r, &options) {
            Err(e) => {
                assert!(
                    e.to_string().starts_with(&format!("{s}: bad snapshot: ")),
                    "{e}"
                );
                refused += 1;
            }
            Ok(image) => {
                let _ = layout_diff_core::show::summary(&image);
                let _ = diff(&good, &image, &DiffOptions::default());
                // The renderings are slower: every ninth byte (its bit cycles 0..7).
                if i % 9 == 0 {
                    let header = layout_diff_core::show::Header::of(&image);
                    let laid = layout_diff_core::show::structs(&image, &all);
                    let _ = layout_diff_report::show_text::structs(&header, &laid, true);
                    let views = layout_diff_core::show::symbols(&image, &all);
                    let _ = layout_diff_report::show_text::symbols(&header, &views);
                    let one = std::slice::from_ref(&image);
                    let _ = layout_diff_core::history::history(one, Some(&all), Some(&all));
                }
                decoded += 1;
            }
        }
    }
    // Both paths were taken: some flips are refused, others decode to other values.
    assert!(
        refused > 0 && decoded > 0,
        "{refused} refused, {decoded} decoded"
    );
}

/// `testdata/bad/lines-overflow.elf`: old.elf with `.text` at address 0 (its 0x28b
/// bytes), and `account_page` at 0x1a0 and 2^61 bytes long (nm -S). `snapshot
/// --with-lines` walked the function 64 bytes at a time (2^55 lookups: over 20 s,
/// stopped); a function is now cut at its section's end (0x28b - 0x1a0 = 235 bytes),
/// and the walk is bounded by the file's size too. (A `.text` made 2^62 bytes long,
/// as this file first was, is refused as running past the end of the file.)
#[test]
fn with_lines_on_a_forged_function_size_ends() {
    let dir = scratch("lines-overflow");
    let out = dir.join("lo.snap").display().to_string();
    let (code, _, err) = common::run_timed(
        &[
            "snapshot",
            &testdata("bad/lines-overflow.elf"),
            "--with-lines",
            "-o",
            &out,
        ],
        10,
    );
    assert_eq!(code, 0, "{err}");
    let (code, shown, err) = run(&["show", &out, "--symbol", "account_page"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        shown.contains("account_page (function, global, .text, 235 bytes)"),
        "{shown}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A snapshot stored (not compressed), as the cache keeps them, reads to the same
/// image as the LZ4 file `layout-diff snapshot` writes: the same structs and symbols,
/// rendered; it holds the same parts, uncompressed, and a truncation or a bit flip in
/// any byte of it is refused as in an LZ4 one.
#[test]
fn a_stored_snapshot_reads_as_the_packed_one() {
    use layout_diff_core::snapshot::{Packing, to_bytes};
    let elf = InputFile::open(std::path::Path::new(&testdata("old.elf"))).unwrap();
    let parts = elf.for_snapshot(false).unwrap();
    let name = std::path::Path::new("old.snap");
    let all = layout_diff_core::show::globs(&["*".to_string()]).unwrap();
    let shown = |packing| {
        let bytes = to_bytes(&parts.image, &parts.elf_files, None, packing, name).unwrap();
        let file = InputFile::from_bytes(name, &bytes).unwrap();
        let image = file.load(&LoadOptions::default()).unwrap();
        let header = layout_diff_core::show::Header::of(&image);
        let laid = layout_diff_core::show::structs(&image, &all);
        let views = layout_diff_core::show::symbols(&image, &all);
        let text = layout_diff_report::show_text::structs(&header, &laid, true).unwrap()
            + &layout_diff_report::show_text::symbols(&header, &views).unwrap();
        (bytes, text)
    };
    let ((small, packed_text), (stored, stored_text)) =
        (shown(Packing::Small), shown(Packing::Stored));
    assert_eq!(stored_text, packed_text);
    assert!(
        stored_text.contains("struct user_struct {"),
        "{stored_text}"
    );
    // Stored: the 48-byte header, then the two parts at the lengths it gives them.
    let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    assert_eq!(
        stored.len() as u64,
        48 + word(&stored, 16) + word(&stored, 24)
    );
    assert_eq!(
        (word(&stored, 16), word(&stored, 24)),
        (word(&small, 16), word(&small, 24))
    );
    assert_eq!((word(&small, 40), word(&stored, 40)), (0, 1));
    assert!(
        stored.len() > small.len(),
        "{} {}",
        stored.len(),
        small.len()
    );
    let refused = |data: &[u8]| match InputFile::from_bytes(name, data) {
        Err(_) => true,
        Ok(file) => file.load(&LoadOptions::default()).is_err(),
    };
    assert!(!refused(&stored));
    for len in (1..stored.len()).step_by(7) {
        assert!(refused(&stored[..len]), "truncated to {len}");
    }
    for i in 0..stored.len() {
        let mut b = stored.clone();
        b[i] ^= 1 << (i % 8);
        assert!(refused(&b), "bit flip in byte {i}");
    }
}
