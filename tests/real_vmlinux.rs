//! Checks on the real Debian 6.1 cloud pair (6.1.170 -> 6.1.176). Ignored by default:
//! run `bash bench/fetch-vmlinux.sh` once, then `cargo test --release -- --ignored`.
//! Expected values were read off `nm` and pahole for these builds (see the README).

mod common;

use std::path::PathBuf;

use common::{json, run};

fn real(pkg: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "bench", "cache", pkg, "vmlinux"]
        .iter()
        .collect();
    assert!(
        p.exists(),
        "{} is missing: run bash bench/fetch-vmlinux.sh first",
        p.display()
    );
    p.display().to_string()
}

fn old() -> String {
    real("linux-image-6.1.0-47-cloud-amd64-dbg")
}

fn new() -> String {
    real("linux-image-6.1.0-50-cloud-amd64-dbg")
}

#[test]
#[ignore = "needs the real vmlinux pair (bench/fetch-vmlinux.sh)"]
fn root_user_placement_in_6_1_170() {
    let (code, v) = json(&["show", &old(), "--symbol", "root_user"]);
    assert_eq!(code, 0);
    let s = &v["symbols"][0];
    assert_eq!(s["symbol"]["address"], "0xffffffff82a51be0");
    assert_eq!(s["placement"]["offset_in_line"], 0x20);
    assert_eq!(s["placement"]["lines"], 3);
    let first_line: Vec<&str> = s["co_tenants"][0]["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(first_line, ["types__ptrace"]);
    assert_eq!(s["laid"]["size"], 136);
}

#[test]
#[ignore = "needs the real vmlinux pair (bench/fetch-vmlinux.sh)"]
fn default_report_fits_and_names_the_signal() {
    let (code, text, _) = run(&[&old(), &new()]);
    assert_eq!(code, 1);
    assert!(text.lines().count() <= 80, "{} lines", text.lines().count());
    assert!(
        text.contains(
            "  root_user (struct user_struct, 136 B)  ffffffff82a51be0 -> ffffffff82a51bc0 (-0x20)"
        ),
        "{text}"
    );
    assert!(
        text.contains("      offset in line 0x20 -> 0x00, in pair 0x60 -> 0x40, lines 3 -> 3"),
        "{text}"
    );
    assert!(
        text.contains("      shares lines with: ptrace.c:types__ptrace  ->  init_user_ns"),
        "{text}"
    );
    assert!(
        text.contains("  struct task_struct (9728 -> 9728 B"),
        "{text}"
    );
    assert!(text.contains("+kstack_offset@5240"), "{text}");
    // Every flagged per-CPU change is named, one by one or through its run.
    let (_, v) = json(&[&old(), &new()]);
    let runs = v["runs"].as_array().unwrap();
    for c in v["percpu"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["severity"] == "percpu")
    {
        let name = c["name"].as_str().unwrap();
        let by_run = c["run"].as_u64().is_some_and(|i| {
            let r = &runs[i as usize];
            text.contains(&format!(
                "{} {}",
                r["count"],
                if r["count"] == 1 { "object" } else { "objects" }
            )) && text.contains(r["first"].as_str().unwrap())
        });
        assert!(
            by_run || text.contains(&format!("  {name} (")),
            "per-CPU change {name} not named"
        );
    }
    let structs: Vec<&str> = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for s in ["task_struct", "device", "net_device"] {
        assert!(structs.contains(&s), "{s} missing from JSON");
    }
}

#[test]
#[ignore = "needs the real vmlinux pair (bench/fetch-vmlinux.sh)"]
fn a_build_against_itself_is_no_change() {
    let (code, text, _) = run(&[&old(), &old()]);
    assert_eq!(code, 0);
    assert!(text.lines().any(|l| l == "no changes"), "{text}");
}
