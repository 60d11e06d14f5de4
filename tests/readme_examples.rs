//! The README's examples run as written: each `$ layout-diff ...` of a `console` block
//! prints what the README shows, byte for byte; each `layout-diff` line of a `sh` block
//! that reads the fixtures runs (exit 0 or 1). The real report under "Reading a report"
//! is checked when `LAYOUT_DIFF_README_PAIR="OLD NEW"` names Debian's 6.1.170 and
//! 6.1.176 cloud vmlinux files (`bench/fetch-vmlinux.sh`).

mod common;

use assert_cmd::Command;

fn readme() -> Option<String> {
    let path = common::workspace_path("README.md")?;
    Some(std::fs::read_to_string(path).unwrap())
}

/// The fenced blocks of `text` whose info string is `lang`, each as its lines.
fn blocks<'t>(text: &'t str, lang: &str) -> Vec<Vec<&'t str>> {
    let mut out = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        match &mut current {
            Some(block) if line == "```" => {
                out.push(std::mem::take(block));
                current = None;
            }
            Some(block) => block.push(line),
            None if line == format!("```{lang}") => current = Some(Vec::new()),
            None => {}
        }
    }
    out
}

fn layout_diff(args: &[&str], dir: &std::path::Path) -> (i32, String) {
    let out = Command::cargo_bin("layout-diff")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn console_examples_print_what_the_readme_shows() {
    let Some(text) = readme() else { return };
    let top = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for block in blocks(&text, "console") {
        let mut i = 0;
        while i < block.len() {
            let command = block[i]
                .strip_prefix("$ ")
                .expect("a console block starts with $");
            let end = (i + 1..block.len())
                .find(|&j| block[j].starts_with("$ "))
                .unwrap_or(block.len());
            let expected: String = block[i + 1..end].iter().map(|l| format!("{l}\n")).collect();
            let args: Vec<&str> = command.split_whitespace().collect();
            assert_eq!(args[0], "layout-diff", "{command}");
            let (_, out) = layout_diff(&args[1..], top);
            assert_eq!(out, expected, "README: {command}");
            checked += 1;
            i = end;
        }
    }
    assert_eq!(checked, 1);
}

#[test]
fn sh_examples_on_the_fixtures_run() {
    let Some(text) = readme() else { return };
    let top = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut ran = 0;
    for block in blocks(&text, "sh") {
        for line in block {
            let command = line.split(" # ").next().unwrap().trim();
            if !command.starts_with("layout-diff ") || !command.contains("testdata/") {
                continue;
            }
            let args: Vec<&str> = command.split_whitespace().skip(1).collect();
            let (code, out) = layout_diff(&args, top);
            assert!(code == 0 || code == 1, "README: {command}: exit {code}");
            assert!(!out.is_empty(), "README: {command}: no output");
            ran += 1;
        }
    }
    assert_eq!(ran, 5);
}

/// The real pair's report, as the README shows it (`vmlinux-6.1.170`,
/// `vmlinux-6.1.176` linked in a scratch directory, so the header's names match).
#[test]
#[ignore = "needs Debian's 6.1.170 and 6.1.176 cloud vmlinux: LAYOUT_DIFF_README_PAIR=\"OLD NEW\""]
fn the_real_report_is_the_readmes() {
    let pair = std::env::var("LAYOUT_DIFF_README_PAIR")
        .expect("LAYOUT_DIFF_README_PAIR=\"OLD NEW\" names the 6.1.170 and 6.1.176 vmlinux");
    let (old, new) = pair.split_once(' ').expect("two paths");
    let text = readme().expect("README.md");
    let shown = text
        .split_once("\n```\nlayout-diff  old  vmlinux-6.1.170\n")
        .and_then(|(_, rest)| rest.split_once("\n```\n"))
        .map(|(body, _)| format!("layout-diff  old  vmlinux-6.1.170\n{body}\n"))
        .expect("the README's real report");
    let dir = std::env::temp_dir().join(format!("layout-diff-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (link, target) in [("vmlinux-6.1.170", old), ("vmlinux-6.1.176", new)] {
        let _ = std::fs::remove_file(dir.join(link));
        std::os::unix::fs::symlink(std::fs::canonicalize(target).unwrap(), dir.join(link)).unwrap();
    }
    let (code, out) = layout_diff(&["vmlinux-6.1.170", "vmlinux-6.1.176"], &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0);
    assert_eq!(out, shown);
}
