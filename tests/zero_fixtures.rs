//! Zero-byte symbols are never tenants of a line (issue 49): testdata/zero (FACTS.md,
//! nm) has hot_count at ffffffff82a51000 (4 B), nine zero-byte `__key.N` at
//! ffffffff82a51004, and its real neighbours lock_a (ffffffff82a51004, 4 B) and lock_b
//! (ffffffff82a51008, 4 B). Before, the keys filled `check`'s eight offenders and
//! `suggest`'s "at fault" list, and pushed lock_a and lock_b into "(+3 more)".

mod common;

use common::{json, run, testdata};

fn zero(file: &str) -> String {
    testdata(&format!("zero/{file}"))
}

#[test]
fn check_alone_names_the_real_neighbours_only() {
    let (code, out, _) = run(&["check", "--rules", &zero("alone.toml"), &zero("zero.elf")]);
    assert_eq!(code, 1);
    let fail: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("FAIL"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(
        fail,
        [
            "FAIL symbol hot_count: alone = true: 2 other objects on its lines",
            "       lock_a (ffffffff82a51004, 4 B) on line ffffffff82a51000",
            "       lock_b (ffffffff82a51008, 4 B) on line ffffffff82a51000",
            "       why: hot_count is written on every tick",
        ]
    );
}

#[test]
fn suggest_puts_only_the_real_neighbours_at_fault() {
    let (code, out, _) = run(&["suggest", &zero("zero.elf"), "--rules", &zero("alone.toml")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines()
            .any(|l| l == "FAIL symbol hot_count: alone = true (at fault: lock_a, lock_b)"),
        "{out}"
    );
    let (_, v) = json(&["suggest", &zero("zero.elf"), "--rules", &zero("alone.toml")]);
    let offenders = &v["rules"][0]["offenders"];
    assert_eq!(offenders, &serde_json::json!(["lock_a", "lock_b"]), "{v}");
}

#[test]
fn show_line_lists_zero_byte_symbols_apart_in_one_line() {
    let line = ["show", &zero("zero.elf"), "--line", "ffffffff82a51000"];
    let (code, out, _) = run(&line);
    assert_eq!(code, 0);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with(" symbol"))
        .take_while(|l| !l.starts_with("who touches"))
        .collect();
    assert_eq!(
        table,
        [
            " symbol     kind                  at  size  bytes on this line ",
            " hot_count  object  ffffffff82a51000     4  0x0..0x4 ",
            " lock_a     object  ffffffff82a51004     4  0x4..0x8 ",
            " lock_b     object  ffffffff82a51008     4  0x8..0xc ",
            "and 9 zero-byte symbols, not tenants: zero.c:__key.0, zero.c:__key.1, zero.c:__key.2, ... (+6 more)",
        ]
    );
    // Nor are they listed with who touches them.
    assert!(!out.contains("  zero.c:__key"), "{out}");
    let (_, v) = json(&line);
    let names = |key: &str| -> Vec<String> {
        v["line"][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("symbols"), ["hot_count", "lock_a", "lock_b"]);
    let keys: Vec<String> = (0..9).map(|i| format!("__key.{i}")).collect();
    assert_eq!(names("zero_sized"), keys);
}
