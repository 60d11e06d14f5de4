//! Checks on the real Debian 6.1 cloud pair (6.1.170 -> 6.1.176), ignored by default:
//! `cargo test --release --test real_vmlinux -- --ignored` runs them on the files
//! `LAYOUT_DIFF_OLD`/`LAYOUT_DIFF_NEW` name, or on those `bash bench/fetch-vmlinux.sh`
//! fetched into bench/cache/; without either, each fails saying so (never a silent pass).
//! Expected values were read off `nm` and pahole for these builds (docs/validation.md).

mod common;

use std::path::PathBuf;

use common::{json, run};

/// Why each test is ignored by default.
const NEEDS: &str =
    "needs the real 6.1.170 and 6.1.176 cloud vmlinux: LAYOUT_DIFF_OLD, LAYOUT_DIFF_NEW";

/// The pair: `LAYOUT_DIFF_OLD` and `LAYOUT_DIFF_NEW`, else the fetched cloud builds; a
/// test asked to run without them fails.
fn pair() -> (String, String) {
    if let (Ok(o), Ok(n)) = (
        std::env::var("LAYOUT_DIFF_OLD"),
        std::env::var("LAYOUT_DIFF_NEW"),
    ) {
        return (o, n);
    }
    let real = |pkg: &str| -> PathBuf {
        [env!("CARGO_MANIFEST_DIR"), "bench", "cache", pkg, "vmlinux"]
            .iter()
            .collect()
    };
    let (o, n) = (
        real("linux-image-6.1.0-47-cloud-amd64-dbg"),
        real("linux-image-6.1.0-50-cloud-amd64-dbg"),
    );
    assert!(
        o.exists() && n.exists(),
        "no real vmlinux pair: set LAYOUT_DIFF_OLD and LAYOUT_DIFF_NEW to two vmlinux \
         files, or run bash bench/fetch-vmlinux.sh ({NEEDS})"
    );
    (o.display().to_string(), n.display().to_string())
}

#[test]
#[ignore = "needs the real 6.1.170 and 6.1.176 cloud vmlinux: LAYOUT_DIFF_OLD, LAYOUT_DIFF_NEW"]
fn root_user_placement_in_6_1_170() {
    let (old, _) = pair();
    let (code, v) = json(&["show", &old, "--symbol", "root_user"]);
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
#[ignore = "needs the real 6.1.170 and 6.1.176 cloud vmlinux: LAYOUT_DIFF_OLD, LAYOUT_DIFF_NEW"]
fn default_report_fits_and_names_the_signal() {
    let (old, new) = pair();
    let (code, text, _) = run(&[&old, &new]);
    // root_user and init_user_ns now share the line ffffffff82a51c40 (nm: root_user
    // ffffffff82a51bc0 + 136, init_user_ns ffffffff82a51c60), but it holds the tail of
    // root_user.ratelimit (0x80..0x88) and init_user_ns.uid_map (0x0..0x20): neither
    // refcount. root_user.__count (offset 0) now starts ...1bc0, a line of root_user
    // alone; in 6.1.170 it shared ...1bc0 with types__ptrace. Nothing is flagged.
    assert_eq!(code, 0);
    assert!(text.lines().count() <= 80, "{} lines", text.lines().count());
    for needle in [
        "  cpu.c:cpuhp_hp_states -40 B: 899 objects moved across lines (data, 1 run), 2 hot\n      hot: root_user, init_user_ns\n",
        // platform_device embeds struct device: its instances (sev_guest_device) count
        // under struct device, the struct they grew through.
        "  struct device +8 B (via sev.c:sev_guest_device, clocksource.c:device_clocksource",
        "  root_user (struct user_struct, 136 B)  ffffffff82a51be0 -> ffffffff82a51bc0 (-0x20)  [improvement]",
        "      offset in line 0x20 -> 0x00, in pair 0x60 -> 0x40, lines 3 -> 3",
        "      shares lines with: ptrace.c:types__ptrace  ->  init_user_ns\n      hot now alone on its lines: __count 0x0..0x4\n",
        "  init_user_ns (struct user_namespace, 624 B)  ffffffff82a51c80 -> ffffffff82a51c60 (-0x20)\n",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    // Nothing is flagged, and init_user_ns's hot member (ns.count, known) is alone.
    let (_, v) = json(&[&old, &new]);
    let flagged: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["percpu"].as_array().unwrap())
        .filter(|c| c["flagged"] == true)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(flagged, Vec::<&str>::new());
    let ns = common::data_change(&v, "init_user_ns");
    let hot: Vec<(&str, bool)> = ns["sharing"]["new"]["hot"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["member"]["name"].as_str().unwrap(),
                h["alone"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(hot, [("ns.count", true)]);
    for name in flagged {
        assert!(text.contains(&format!("  {name} (")), "{name} not named");
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
#[ignore = "needs the real 6.1.170 and 6.1.176 cloud vmlinux: LAYOUT_DIFF_OLD, LAYOUT_DIFF_NEW"]
fn a_build_against_itself_is_no_change() {
    let (old, _) = pair();
    let (code, text, _) = run(&[&old, &old]);
    assert_eq!(code, 0);
    assert!(text.lines().any(|l| l == "no changes"), "{text}");
}

#[test]
#[ignore = "needs the real 6.1.170 and 6.1.176 cloud vmlinux: LAYOUT_DIFF_OLD, LAYOUT_DIFF_NEW"]
fn check_root_user_aligned_fails_on_6_1_170_and_passes_on_6_1_176() {
    let (old, new) = pair();
    let rules = common::testdata("check/rules/real-root_user.toml");
    let (code, out, _) = run(&["check", "--rules", &rules, &old]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "FAIL symbol root_user: aligned = 64: ffffffff82a51be0 is +0x20 in its 64 B line\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("ptrace.c:types__ptrace (ffffffff82a51bc0, 32 B) on line ffffffff82a51bc0"),
        "{out}"
    );
    let (code, v) = json(&["check", "--rules", &rules, &new]);
    assert_eq!(code, 0);
    assert_eq!(
        common::json_hex(&v["outcomes"][0]["measured"]["value"]),
        0xffff_ffff_82a5_1bc0u64
    );
    assert_eq!(v["outcomes"][0]["pass"], true);
}

#[test]
#[ignore = "needs the real 6.1.170 and 6.1.176 cloud vmlinux: LAYOUT_DIFF_OLD, LAYOUT_DIFF_NEW"]
fn nothing_boot_only_flagged_and_no_zero_size_co_tenant() {
    let (old, new) = pair();
    // nm 6.1.176: __init_begin ffffffff83018000, __init_end ffffffff832a2000.
    let (init_begin, init_end) = (0xffff_ffff_8301_8000u64, 0xffff_ffff_832a_2000u64);
    let (_, v) = json(&[&old, &new]);
    let regions = v["quiet_regions"].as_array().unwrap();
    assert!(
        regions
            .iter()
            .any(|q| q["from"] == "__init_begin..__init_end"
                && common::json_hex(&q["start"]) == init_begin
                && common::json_hex(&q["end"]) == init_end)
    );
    let mut quiet = 0;
    for c in v["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["percpu"].as_array().unwrap())
    {
        let section = c["section"].as_str().unwrap();
        let place = common::json_hex(&c["place"]["new"]);
        let boot = section.starts_with(".init.")
            || section.starts_with(".exit.")
            || (c["space"] == "global" && (init_begin..init_end).contains(&place));
        if boot {
            quiet += 1;
            assert_eq!(
                c["flagged"], false,
                "{} is boot-only but flagged",
                c["name"]
            );
            assert_eq!(c["quiet"], "boot-only");
        }
        for side in ["old", "new"] {
            for t in c["co_tenants"][side].as_array().unwrap() {
                assert_ne!(
                    t["size"], 0,
                    "{}: zero-size co-tenant {}",
                    c["name"], t["name"]
                );
            }
        }
    }
    assert!(quiet > 0, "no boot-only change seen at all");
}

#[test]
#[ignore = "needs the real 6.1.170 and 6.1.176 cloud vmlinux: LAYOUT_DIFF_OLD, LAYOUT_DIFF_NEW"]
fn phase_changes_are_information_unless_asked_for() {
    let (old, new) = pair();
    let (_, v) = json(&[&old, &new]);
    let f = &v["summary"]["functions"];
    // Tens of thousands of functions change their start mod 64 (domain.md: 28,732 by
    // nm); none is flagged unless measured hot or asked for.
    assert!(f["line_offset_changed"].as_u64().unwrap() > 20_000);
    assert_eq!(f["flagged"], 0);
    let rows = ["structs", "data", "percpu", "functions"];
    let sum: u64 = rows
        .iter()
        .map(|r| v["summary"][r]["flagged"].as_u64().unwrap())
        .sum();
    assert_eq!(v["flagged"], sum);
    assert_eq!(v["failing"], sum);
    // Known-hot futex_wait moved 0x10 -> 0x20 mod 64 (nm: ffffffff8115fa10 ->
    // ffffffff8115fc60): listed, not flagged; asked for by name, it fails `text`.
    let (code, t) = json(&[&old, &new, "--fail-on", "text"]);
    assert_eq!(
        (code, t["summary"]["functions"]["flagged"].as_u64()),
        (0, Some(0))
    );
    let (code, t) = json(&[&old, &new, "--fail-on", "text", "--symbol", "futex_wait"]);
    assert_eq!(
        (code, t["summary"]["functions"]["flagged"].as_u64()),
        (1, Some(1))
    );
}
