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

#[test]
fn a_diff_never_pairs_a_c_struct_with_a_rust_copy() {
    // c-only.elf has the C user_struct (refcount_t, long, long); rust-only.elf has
    // bindgen's kind of copy (refcount_struct, usize, u64) and core's types: 25 named
    // structs in all (`show rust-only.elf --struct '*' --lang all`).
    let (old, new) = (testdata("lang/c-only.elf"), testdata("lang/rust-only.elf"));
    let (code, v) = json(&[&old, &new, "--lang", "all"]);
    assert_eq!(code, 0);
    assert_eq!(v["structs"], serde_json::json!([]));
    assert_eq!(v["summary"]["structs"]["changed"], 0);
    // The C struct is gone; the Rust copy and the 24 other Rust types are new.
    assert_eq!(v["summary"]["structs"]["removed"], 1);
    assert_eq!(v["summary"]["structs"]["added"], 25);
    let (_, v) = json(&["show", &new, "--struct", "user_struct", "--lang", "all"]);
    assert_eq!(v["structs"][0]["rust"], true);
    let (_, v) = json(&["show", &old, "--struct", "user_struct", "--lang", "all"]);
    assert_eq!(v["structs"][0].get("rust"), None);
}
