//! Language-aware loading on testdata/lang/lang.elf: a C unit and a Rust unit both
//! define `struct user_struct` (FACTS.md: DW_AT_language 29 C11 and 28 Rust).

mod common;

use common::{json, run, testdata};

#[test]
fn rust_units_are_left_out_unless_asked_for() {
    let f = testdata("lang/lang.elf");
    let (code, out, _) = run(&["show", &f, "--struct", "user_struct"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("struct user_struct {").count(), 1, "{out}");
    assert!(
        out.contains("\trefcount_t                 __count;"),
        "{out}"
    );
    assert!(!out.contains("usize"), "{out}");
    let (code, out, _) = run(&["show", &f, "--struct", "user_struct", "--lang", "all"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("struct user_struct {").count(), 2, "{out}");
    assert!(
        out.contains("\tusize                      unix_inflight"),
        "{out}"
    );
    // The whole-image listing follows the same rule.
    let (_, v) = json(&["show", &f, "--struct", "*"]);
    let names: Vec<&str> = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["user_struct"]);
    let (_, v) = json(&["show", &f, "--struct", "*", "--lang", "all"]);
    let all: Vec<&str> = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    // The Rust unit adds its own types (core's too): both user_structs, the Rust
    // refcount_struct among them.
    assert_eq!(all.iter().filter(|n| **n == "user_struct").count(), 2);
    assert!(all.contains(&"refcount_struct"), "{all:?}");
}
