//! CHANGELOG.md names the numbers the code has: the newest `Snapshot format: N` line
//! is `layout_diff_core::snapshot::VERSION`, the newest `JSON version: N` line is
//! `layout_diff_report::json::VERSION`, and the newest release is this crate's
//! version. A change that bumps a format adds its line under `[Unreleased]`.

/// The first number named by a line `PHRASE N ...` (as a list item or not) after the
/// first release heading (`## [`): sections run newest first, and the preamble above
/// them only describes the phrases.
fn newest(changelog: &str, phrase: &str) -> Option<u32> {
    changelog
        .lines()
        .skip_while(|l| !l.starts_with("## ["))
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("- ").unwrap_or(l);
            let rest = l.strip_prefix(phrase)?.strip_prefix(' ')?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .next()
}

/// The release headings, newest first: `## [Unreleased]`, then `## [X.Y.Z] - DATE`.
fn releases(changelog: &str) -> Vec<(&str, Option<&str>)> {
    changelog
        .lines()
        .filter_map(|l| l.strip_prefix("## ["))
        .map(|l| {
            let (name, rest) = l.split_once(']').expect("## [NAME]");
            (name, rest.strip_prefix(" - "))
        })
        .collect()
}

fn changelog() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/CHANGELOG.md"))
        .expect("CHANGELOG.md")
}

#[test]
fn the_newest_snapshot_format_is_the_codes() {
    assert_eq!(
        newest(&changelog(), "Snapshot format:"),
        Some(layout_diff_core::snapshot::VERSION),
        "CHANGELOG.md's newest 'Snapshot format: N' line"
    );
}

#[test]
fn the_newest_json_version_is_the_codes() {
    assert_eq!(
        newest(&changelog(), "JSON version:"),
        Some(layout_diff_report::json::VERSION),
        "CHANGELOG.md's newest 'JSON version: N' line"
    );
}

#[test]
fn the_newest_release_is_this_version() {
    let text = changelog();
    let releases = releases(&text);
    assert_eq!(releases.first(), Some(&("Unreleased", None)));
    let (version, date) = releases[1];
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    // YYYY-MM-DD on every release.
    for (name, date) in &releases[1..] {
        let date = date.unwrap_or_else(|| panic!("{name} has no date"));
        let digits: Vec<usize> = date.split('-').map(str::len).collect();
        assert_eq!(digits, [4, 2, 2], "{name}: {date}");
        assert!(
            date.bytes().all(|b| b == b'-' || b.is_ascii_digit()),
            "{name}: {date}"
        );
    }
    assert!(date.is_some());
}

/// The parser takes the first line from the top, in any section, and only lines that
/// start with the phrase and a number.
#[test]
fn the_first_named_number_from_the_top_wins() {
    let text = "# Changelog\n\nSnapshot format: N is described here.\nSnapshot format: 1\n\n\
                ## [Unreleased]\n\nThe Snapshot format: 7 in prose is not a line of its own.\n\
                - Snapshot format: 9 (the access map)\n\n\
                ## [0.2.0] - 2026-12-03\n\n- Snapshot format: 8\n- JSON version: 1\n\n\
                ## [0.1.0] - 2026-11-30\n\n- Snapshot format: 3\n- JSON version: 1\n";
    assert_eq!(newest(text, "Snapshot format:"), Some(9));
    assert_eq!(newest(text, "JSON version:"), Some(1));
    assert_eq!(newest(text, "Other:"), None);
    let without_unreleased = text.replace("- Snapshot format: 9", "");
    assert_eq!(newest(&without_unreleased, "Snapshot format:"), Some(8));
    assert_eq!(
        releases(text),
        [
            ("Unreleased", None),
            ("0.2.0", Some("2026-12-03")),
            ("0.1.0", Some("2026-11-30"))
        ]
    );
}
