//! Helpers shared by the end-to-end tests: run the binary, parse its JSON, and read the
//! pahole listings recorded in testdata/EXPECTED.md (measured with pahole, not with us).

#![allow(dead_code)]

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

/// A path of the workspace outside testdata/ and tests/ (the library crates' sources,
/// fuzz/known-slow), or `None` in the packaged crate, which ships without them (it has
/// `Cargo.toml.orig` beside its manifest): the test says on stderr that it is skipped
/// and returns. In the workspace a missing path fails the test.
pub fn workspace_path(rel: &str) -> Option<PathBuf> {
    use std::io::Write;
    let top = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = top.join(rel);
    if path.exists() {
        return Some(path);
    }
    assert!(
        top.join("Cargo.toml.orig").exists(),
        "{} is missing",
        path.display()
    );
    // Straight to the process's stderr: the test harness captures eprintln!.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {}: {rel} is not part of the packaged crate",
        std::thread::current().name().unwrap_or("a test")
    );
    None
}

pub fn testdata(name: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "testdata", name]
        .iter()
        .collect();
    p.display().to_string()
}

/// Runs the binary; returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    run_env(args, &[])
}

/// Where the binary run by the tests keeps its snapshot cache (`XDG_CACHE_HOME`): in
/// the target's temporary directory, never the user's own cache.
pub fn cache_home() -> PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-cache")
}

/// The binary, its cache in `cache_home()`.
pub fn command() -> Command {
    let mut cmd = Command::cargo_bin("layout-diff").expect("binary built");
    cmd.env("XDG_CACHE_HOME", cache_home());
    cmd
}

pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = command();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary, failing the test (not blocking the suite) when it takes longer
/// than `secs` seconds: for corrupt inputs, where a hang is the defect.
pub fn run_timed(args: &[&str], secs: u64) -> (i32, String, String) {
    let mut cmd = command();
    cmd.args(args).timeout(std::time::Duration::from_secs(secs));
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: did not end within {secs} s: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary with `--format json` appended and parses stdout.
pub fn json(args: &[&str]) -> (i32, Value) {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out, err) = run(&all);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}); stderr: {err}"));
    (code, v)
}

/// One struct as pahole printed it: its position lines in print order
/// (offset, size, bit offset), byte and bit hole sizes, size and padding.
#[derive(Debug, Default, PartialEq)]
pub struct Listing {
    pub name: String,
    pub size: Option<u64>,
    pub positions: Vec<(u64, u64, Option<u64>)>,
    pub holes: Vec<u64>,
    pub bit_holes: Vec<u64>,
    pub padding: u64,
}

/// The pahole listings under the first heading `heading` of EXPECTED.md that is
/// followed by `#### \`name\`` blocks.
pub fn pahole_listings(heading: &str) -> Vec<Listing> {
    let text = std::fs::read_to_string(testdata("EXPECTED.md")).expect("EXPECTED.md");
    let start = text
        .match_indices(heading)
        .map(|(i, _)| i)
        .find(|&i| {
            text[i..]
                .lines()
                .nth(2)
                .is_some_and(|l| l.starts_with("#### "))
        })
        .unwrap_or_else(|| panic!("no heading {heading}"));
    let section = &text[start + heading.len()..];
    let end = section.find("\n### ").unwrap_or(section.len());
    section[..end]
        .split("\n#### `")
        .skip(1)
        .map(|block| {
            let name = block.split('`').next().unwrap_or("").to_string();
            parse_listing(name, block)
        })
        .collect()
}

/// Parses the first ```c block of a pahole listing.
pub fn parse_listing(name: String, block: &str) -> Listing {
    let mut l = Listing {
        name,
        ..Listing::default()
    };
    let body = block.split("```").nth(1).unwrap_or("");
    for line in body.lines() {
        let Some(open) = line.rfind("/*") else {
            continue;
        };
        let inner = line[open + 2..].trim_end().trim_end_matches("*/").trim();
        let words: Vec<&str> = inner.split_whitespace().collect();
        if inner.starts_with("XXX") && inner.contains("bits hole") {
            l.bit_holes.push(words[1].parse().unwrap());
        } else if inner.starts_with("XXX") && inner.contains("hole") {
            l.holes.push(words[1].parse().unwrap());
        } else if let Some(rest) = inner.strip_prefix("size: ") {
            l.size = rest.split(',').next().and_then(|s| s.parse().ok());
        } else if let Some(rest) = inner.strip_prefix("padding: ") {
            l.padding = rest.parse().unwrap();
        } else if let Some(pos) = position(inner) {
            l.positions.push(pos);
        }
    }
    l
}

/// `8 40` or `40: 3  4` -> (offset, size, bit offset).
fn position(inner: &str) -> Option<(u64, u64, Option<u64>)> {
    let words: Vec<&str> = inner.split_whitespace().collect();
    match words.as_slice() {
        [off, size] if !off.ends_with(':') => Some((off.parse().ok()?, size.parse().ok()?, None)),
        [off, bit, size] if off.ends_with(':') => Some((
            off.trim_end_matches(':').parse().ok()?,
            size.parse().ok()?,
            Some(bit.parse().ok()?),
        )),
        [offbit, size] => {
            let (o, b) = offbit.split_once(':')?;
            Some((o.parse().ok()?, size.parse().ok()?, Some(b.parse().ok()?)))
        }
        _ => None,
    }
}

/// Our JSON struct in pahole's print order: members, then a nested block's own line.
pub fn listing_of(s: &Value) -> Listing {
    fn walk(members: &Value, l: &mut Listing) {
        for m in members.as_array().into_iter().flatten() {
            if let Some(children) = m.get("members") {
                walk(children, l);
                for h in m["holes"].as_array().into_iter().flatten() {
                    l.holes.push(h["size"].as_u64().unwrap());
                }
            }
            l.positions.push((
                m["offset"].as_u64().unwrap(),
                m["size"].as_u64().unwrap(),
                m.get("bit_offset").and_then(Value::as_u64),
            ));
        }
    }
    let mut l = Listing {
        name: s["name"].as_str().unwrap().to_string(),
        size: s["size"].as_u64(),
        padding: s["padding"].as_u64().unwrap(),
        ..Listing::default()
    };
    walk(&s["members"], &mut l);
    for h in s["holes"].as_array().into_iter().flatten() {
        l.holes.push(h["size"].as_u64().unwrap());
    }
    for h in s["bit_holes"].as_array().into_iter().flatten() {
        l.bit_holes.push(h["bits"].as_u64().unwrap());
    }
    l
}

/// The diff JSON's change of the global data object `name`.
pub fn data_change<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no data change {name}"))
}

/// An address as JSON spells it (`"0xffffffff82a51260"`).
#[allow(dead_code)]
pub fn json_hex(v: &Value) -> u64 {
    let s = v.as_str().expect("addresses are hex strings");
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex address")
}

/// Top-level `struct`/`union`/`typedef struct` blocks of a pahole-style listing, in
/// order, each line with whitespace runs collapsed and empty lines dropped (the
/// comparison bench/compare-pahole-text.py makes).
pub fn pahole_blocks(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<String>> = None;
    for raw in text.lines() {
        let line = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        match &mut cur {
            None => {
                if raw.ends_with(" {")
                    && ["struct ", "union ", "typedef "]
                        .iter()
                        .any(|k| raw.starts_with(k))
                {
                    cur = Some(vec![line]);
                }
            }
            Some(b) => {
                if !line.is_empty() {
                    b.push(line);
                }
                if raw.starts_with('}') {
                    out.push(cur.take().unwrap_or_default());
                }
            }
        }
    }
    out
}

/// A deterministic pseudo-random sequence (xorshift64) for the corruption tests: the
/// same inputs on every run, no dependency.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// A fixture or build loaded for the library tests (layouts without pahole's listing
/// text, which these tests do not print).
pub fn load_image(file: &layout_diff_core::InputFile) -> layout_diff_core::model::Image<'_> {
    file.load(&layout_diff_core::LoadOptions {
        pahole_text: false,
        ..layout_diff_core::LoadOptions::default()
    })
    .expect("input loads")
}

/// Every data object's (place, size), by qualified name.
pub fn object_places(
    image: &layout_diff_core::model::Image<'_>,
) -> std::collections::BTreeMap<String, (u64, u64)> {
    image
        .symbols
        .iter()
        .filter(|s| s.kind == layout_diff_core::model::SymbolKind::Object)
        .map(|s| (s.qualified_name(), (s.place, s.size)))
        .collect()
}
