//! Every `--help` ends with examples, and docs/guide.md shows each of them; the man
//! page and the shell completions are generated from the same clap definitions
//! (`layout-diff generate man|bash|zsh|fish`), and the man page renders.

mod common;

use assert_cmd::Command;

/// The commands whose help is checked: the top level, then every subcommand (the
/// hidden `generate` too: its examples are the install lines).
const COMMANDS: [&[&str]; 9] = [
    &[],
    &["diff"],
    &["show"],
    &["check"],
    &["whatif"],
    &["suggest"],
    &["snapshot"],
    &["history"],
    &["generate"],
];

fn help(args: &[&str]) -> String {
    let out = Command::cargo_bin("layout-diff")
        .unwrap()
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The example command lines at the end of a help text: the lines after `Examples:`,
/// up to a blank line, their `# comment` dropped.
fn examples(help: &str) -> Vec<String> {
    let Some((_, rest)) = help.split_once("\nExamples:\n") else {
        return Vec::new();
    };
    rest.lines()
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split(" # ").next().unwrap_or(l).trim().to_string())
        .collect()
}

#[test]
fn every_help_ends_with_examples_that_the_guide_shows() {
    let Some(guide) = common::workspace_path("docs/guide.md") else {
        return;
    };
    let guide = std::fs::read_to_string(guide).unwrap();
    let mut checked = 0;
    for args in COMMANDS {
        let text = help(args);
        let list = examples(&text);
        assert!(
            !list.is_empty(),
            "layout-diff {args:?} --help has no examples"
        );
        // Examples are the help's last block: nothing after them.
        let tail = text.split("\nExamples:\n").last().unwrap();
        assert!(
            tail.trim_end().lines().all(|l| !l.trim().is_empty()),
            "{args:?}: examples are not at the end"
        );
        for e in list {
            assert!(
                guide.contains(&e),
                "docs/guide.md lacks {args:?}'s example: {e}"
            );
            checked += 1;
        }
    }
    // 5 top-level, 3 diff, 5 show, 3 check, 5 whatif, 5 suggest, 3 snapshot,
    // 2 history, 4 generate.
    assert_eq!(checked, 35);
}

/// No help line after the options starts at column 2 unless it is an example or a
/// flag's first line: a wrapped description is indented under its column.
#[test]
fn whatif_help_continuation_lines_are_indented_under_their_column() {
    let text = help(&["whatif"]);
    let (_, changes) = text
        .split_once("Changes (repeatable, in any mix):\n")
        .unwrap();
    let block: Vec<&str> = changes.lines().take_while(|l| !l.is_empty()).collect();
    // 12 changes (--percpu-aligned and --percpu-aligned-definition two of them), 8
    // continuation lines.
    assert_eq!(block.len(), 20);
    for l in &block {
        let lead = l.len() - l.trim_start().len();
        assert!(
            (lead == 2 && l.trim_start().starts_with("--")) || lead == 43,
            "{l:?}"
        );
    }
}

fn generate(what: &str) -> String {
    let out = Command::cargo_bin("layout-diff")
        .unwrap()
        .args(["generate", what])
        .output()
        .unwrap();
    assert!(out.status.success(), "generate {what} failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_man_page_is_generated_and_renders() {
    let page = generate("man");
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq \\(aq"),
        "{}",
        &page[..80]
    );
    assert!(page.contains(".TH layout-diff 1"));
    for sub in [
        "show", "diff", "check", "whatif", "suggest", "snapshot", "history",
    ] {
        assert!(
            page.contains(&format!("layout\\-diff\\-{sub}(1)")),
            "the man page does not list {sub}"
        );
    }
    // `man -l` renders a local file; where man-db is installed, it must render this one.
    let dir = std::env::temp_dir().join(format!("layout-diff-man-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("layout-diff.1");
    std::fs::write(&file, &page).unwrap();
    let rendered = std::process::Command::new("man")
        .arg("-l")
        .arg(&file)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .output();
    std::fs::remove_dir_all(&dir).unwrap();
    match rendered {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("NAME"), "{text}");
            assert!(text.contains("What moved between cache lines"), "{text}");
        }
        Err(e) => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "man not run ({e}): the page was not rendered"
            );
        }
    }
}

#[test]
fn completions_are_generated_for_bash_zsh_and_fish() {
    let bash = generate("bash");
    assert!(bash.contains("complete -F _layout__diff"), "bash");
    let zsh = generate("zsh");
    assert!(zsh.starts_with("#compdef layout-diff\n"), "zsh");
    let fish = generate("fish");
    assert!(fish.contains("complete -c layout-diff"), "fish");
    for script in [&bash, &zsh, &fish] {
        for sub in ["show", "whatif", "snapshot"] {
            assert!(script.contains(sub), "a completion lacks {sub}");
        }
    }
}

/// Issue 33, defect 10: a usage error is one line on stderr, exit 2.
#[test]
fn a_usage_error_is_one_line() {
    for args in [
        vec!["show", "testdata/old.elf", "--bogus"],
        vec!["whatif", "testdata/old.elf", "--align", "x"],
        vec!["check", "testdata/old.elf"],
    ] {
        let out = Command::cargo_bin("layout-diff")
            .unwrap()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("layout-diff: "), "{err}");
    }
    let out = Command::cargo_bin("layout-diff")
        .unwrap()
        .args(["show", "testdata/old.elf", "--bogus"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "layout-diff: unexpected argument '--bogus' found; tip: to pass '--bogus' as a value, use '-- --bogus'; usage: layout-diff show <FILE>\n"
    );
}
