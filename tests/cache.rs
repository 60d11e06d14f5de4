//! The snapshot cache: on testdata/cache/{old,new}.elf (old.elf and new.elf with a
//! build-id note; testdata/cache/FACTS.md gives `readelf -n` of both), every command
//! prints the same through the cache as without it, on the run that writes an entry
//! and on the runs that read it; concurrent runs all succeed; a damaged entry, or one
//! another build of the tool wrote, is a miss and is written again; `--no-cache`
//! writes nothing, nor do the views that print source lines; the size limit evicts
//! the least recently used entry.

mod common;

use std::path::{Path, PathBuf};

use common::testdata;

/// The build-ids `readelf -n` prints (testdata/cache/FACTS.md) and the files' sizes.
const OLD_ID: &str = "c9623c127fe6cf4eb0f3324f93511fd951c598e5";
const NEW_ID: &str = "3b9a1ae39e6052862965d98c1ad5e77313a86a80";

/// A fresh `XDG_CACHE_HOME` for one test.
fn home(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cache-tests")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the binary with `home` as `XDG_CACHE_HOME` and the extra environment `env`.
fn run_in(home: &Path, env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut all = vec![("XDG_CACHE_HOME", home.to_str().unwrap())];
    all.extend_from_slice(env);
    common::run_env(args, &all)
}

/// The cache entries' file names, sorted.
fn entries(home: &Path) -> Vec<String> {
    let dir = home.join("layout-diff");
    let mut names: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(d) => d
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// The entry of the build whose id is `id`.
fn entry_of(home: &Path, id: &str) -> PathBuf {
    let names = entries(home);
    let name = names
        .iter()
        .find(|n| n.starts_with(id))
        .unwrap_or_else(|| panic!("no entry for {id} in {names:?}"));
    home.join("layout-diff").join(name)
}

fn pair() -> (String, String) {
    (testdata("cache/old.elf"), testdata("cache/new.elf"))
}

#[test]
fn every_command_prints_the_same_through_the_cache() {
    let home = home("same");
    let (old, new) = pair();
    let rules = testdata("check/rules/root_user.toml");
    let commands: Vec<Vec<&str>> = vec![
        vec![&old, &new],
        vec![&old, &new, "--all", "--format", "json"],
        vec![&old, &new, "--all", "--format", "markdown"],
        vec![&old, &new, "--format", "html"],
        vec![&old, &new, "--explain", "root_user"],
        vec!["show", &old],
        vec!["show", &old, "--struct", "*"],
        vec!["show", &old, "--struct", "user_struct", "--annotate"],
        vec!["show", &old, "--struct", "atomic_t"],
        vec!["show", &old, "--symbol", "root_user"],
        vec!["show", &old, "--symbol", "*", "--format", "json"],
        vec!["show", &old, "--line", "0xffffffff81000000"],
        vec![
            "show",
            &old,
            "--line",
            "0xffffffff81000100",
            "--line-size",
            "128",
        ],
        vec!["show", &old, "--percpu", "--line", "0"],
        vec!["check", "--rules", &rules, &old, &new],
        vec!["whatif", &old, "--struct", "mce=+8"],
        vec![
            "whatif",
            &old,
            "--struct",
            "user_struct",
            "--align",
            "64",
            "--nm",
        ],
        vec!["suggest", &old, &new],
        vec![
            "history",
            &old,
            &new,
            "--symbol",
            "root_user",
            "--struct",
            "mce",
        ],
    ];
    for args in &commands {
        let mut uncached = args.clone();
        uncached.push("--no-cache");
        let expected = run_in(&home, &[], &uncached);
        // The first of the two runs may write entries, the second reads them.
        for round in 0..2 {
            assert_eq!(run_in(&home, &[], args), expected, "{args:?}, run {round}");
        }
    }
    // One entry for each build, named by its build-id and size.
    let names = entries(&home);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names[0].starts_with(&format!("{NEW_ID}-48440-")),
        "{names:?}"
    );
    assert!(
        names[1].starts_with(&format!("{OLD_ID}-48000-")),
        "{names:?}"
    );
    assert!(names.iter().all(|n| n.ends_with(".ldc")), "{names:?}");
}

/// Fixtures without a build-id are read as they are: nothing is written.
#[test]
fn builds_without_a_build_id_are_not_cached() {
    let home = home("no-id");
    let (code, _, _) = run_in(&home, &[], &[&testdata("old.elf"), &testdata("new.elf")]);
    assert_eq!(code, 0);
    assert_eq!(entries(&home), Vec::<String>::new());
}

#[test]
fn concurrent_runs_all_succeed_and_print_the_same() {
    let home = home("concurrent");
    let (old, new) = pair();
    let args = [old.as_str(), new.as_str(), "--all", "--format", "json"];
    let expected = run_in(&home, &[], &[&args[..], &["--no-cache"]].concat());
    assert_eq!(expected.0, 0, "{expected:?}");
    // Round 0 starts empty (the runs race to write); in round 1 one entry is gone
    // (some runs write it while others read it); round 2 reads only.
    for round in 0..3 {
        if round == 1 {
            std::fs::remove_file(entry_of(&home, OLD_ID)).unwrap();
        }
        let runs: Vec<_> = (0..4)
            .map(|_| {
                let home = home.clone();
                let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                std::thread::spawn(move || {
                    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                    run_in(&home, &[], &refs)
                })
            })
            .collect();
        for r in runs {
            assert_eq!(r.join().unwrap(), expected, "round {round}");
        }
        // Two whole entries, no temporary file left.
        let names = entries(&home);
        assert_eq!(names.len(), 2, "round {round}: {names:?}");
    }
}

#[test]
fn a_damaged_or_foreign_entry_is_a_miss_and_is_written_again() {
    let home = home("damaged");
    let (old, new) = pair();
    let args = [old.as_str(), new.as_str(), "--all"];
    let expected = run_in(&home, &[], &args);
    let entry = entry_of(&home, OLD_ID);
    let whole = std::fs::read(&entry).unwrap();
    assert!(whole.starts_with(b"LDCACHE\x01"));
    let mut flipped = whole.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x10;
    // The stamp's first character: as if another build of layout-diff wrote it.
    let mut foreign = whole.clone();
    foreign[12] ^= 0x01;
    for (what, bytes) in [
        ("truncated to half", whole[..whole.len() / 2].to_vec()),
        ("truncated in its header", whole[..10].to_vec()),
        ("empty", Vec::new()),
        ("a bit flipped", flipped),
        ("another tool's", foreign),
        ("no entry at all", b"not a cache entry\n".to_vec()),
    ] {
        std::fs::write(&entry, &bytes).unwrap();
        assert_eq!(run_in(&home, &[], &args), expected, "{what}");
        assert!(
            std::fs::read(&entry).unwrap() == whole,
            "{what}: the entry is written again"
        );
    }
}

#[test]
fn no_cache_leaves_no_file_behind() {
    let home = home("no-cache");
    let (old, new) = pair();
    for args in [
        vec![old.as_str(), &new, "--no-cache"],
        vec!["show", &old, "--struct", "mce", "--no-cache"],
        vec!["suggest", &old, &new, "--no-cache"],
        vec!["history", &old, &new, "--symbol", "root_user", "--no-cache"],
        // --lang all reads Rust units, which no snapshot holds: never cached.
        vec![old.as_str(), &new, "--lang", "all"],
    ] {
        let (code, _, err) = run_in(&home, &[], &args);
        assert!(code == 0 || code == 1, "{args:?}: {err}");
        assert!(
            std::fs::read_dir(&home).unwrap().next().is_none(),
            "{args:?} wrote into {}",
            home.display()
        );
    }
}

/// Entries keep no source lines: `show --symbol` (its writers' and readers' lines)
/// and `show --line` read the vmlinux and write nothing; `show --percpu --line`, which
/// prints no source line, goes through the cache.
#[test]
fn views_with_source_lines_read_the_vmlinux() {
    let home = home("lines");
    let (old, _) = pair();
    for args in [
        vec!["show", old.as_str(), "--symbol", "root_user"],
        vec!["show", &old, "--line", "0xffffffff81000000"],
        vec!["show", &old, "--struct", "mce", "--symbol", "root_user"],
    ] {
        let (code, out, err) = run_in(&home, &[], &args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains(".c:"), "{args:?}: source lines printed: {out}");
        assert_eq!(entries(&home), Vec::<String>::new(), "{args:?}");
    }
    run_in(&home, &[], &["show", &old, "--percpu", "--line", "0"]);
    assert_eq!(entries(&home).len(), 1);
}

#[test]
fn the_size_limit_evicts_the_least_recently_used_entry() {
    let home = home("limit");
    let (old, new) = pair();
    run_in(&home, &[], &["show", &old]);
    let one = std::fs::metadata(entry_of(&home, OLD_ID)).unwrap().len();
    // Room for one entry (the two are within a few hundred bytes of each other).
    let room = (one + one / 2).to_string();
    let limit = [("LAYOUT_DIFF_CACHE_SIZE", room.as_str())];
    run_in(&home, &limit, &["show", &new]);
    let names = entries(&home);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with(NEW_ID), "{names:?}");
    // Reading OLD again writes it and evicts NEW, now the least recently used.
    run_in(&home, &limit, &["show", &old]);
    let names = entries(&home);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with(OLD_ID), "{names:?}");
    // 0 turns the cache off: not even its directory is made.
    let _ = std::fs::remove_dir_all(home.join("layout-diff"));
    let (code, _, _) = run_in(&home, &[("LAYOUT_DIFF_CACHE_SIZE", "0")], &[&old, &new]);
    assert_eq!(code, 0);
    assert!(!home.join("layout-diff").exists());
    // A size that is none: exit 2, one line naming the variable.
    let (code, out, err) = run_in(&home, &[("LAYOUT_DIFF_CACHE_SIZE", "2GB")], &[&old, &new]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            2,
            "",
            "layout-diff: LAYOUT_DIFF_CACHE_SIZE=\"2GB\": not a size (bytes, or a number with K, M, G or T)\n"
        )
    );
}

#[test]
fn the_cache_command_lists_and_clears_the_entries() {
    let home = home("command");
    let (old, new) = pair();
    let dir = home.join("layout-diff");
    let (code, out, _) = run_in(&home, &[], &["cache"]);
    assert_eq!(
        (code, out),
        (
            0,
            format!(
                "{}: 0 snapshots, 0 B of 2.0 GiB (LAYOUT_DIFF_CACHE_SIZE)\n",
                dir.display()
            )
        )
    );
    run_in(&home, &[], &[&old, &new]);
    let (code, out, _) = run_in(&home, &[], &["cache"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with(&format!("{}: 2 snapshots, ", dir.display())));
    // Each entry names the vmlinux it was read from.
    let mut sources: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.rsplit("  ").next().unwrap())
        .collect();
    sources.sort();
    let abs = |p: &str| std::path::absolute(p).unwrap().display().to_string();
    assert_eq!(sources, vec![abs(&new), abs(&old)]);
    let sizes: u64 = entries(&home)
        .iter()
        .map(|n| std::fs::metadata(dir.join(n)).unwrap().len())
        .sum();
    let (code, out, _) = run_in(&home, &[], &["cache", "--clear"]);
    let kib = format!("{:.1} KiB", sizes as f64 / 1024.0);
    assert_eq!(
        (code, out),
        (0, format!("{}: removed 2 files, {kib}\n", dir.display()))
    );
    assert_eq!(entries(&home), Vec::<String>::new());
}
