//! `whatif` against real kernel builds: Debian's 6.1 source built by
//! bench/replay/build.sh (a base and variants, each one change). Ignored by default
//! (the builds take minutes and live outside the repo): `cargo test --release --test
//! replay_builds -- --ignored`, with `LAYOUT_DIFF_REPLAY` naming the builds' `out`
//! folder (default /work/replay/out). The addresses asserted were read with `nm -n -S`
//! from the variants (bench/replay/README.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use layout_diff::model::{Image, SymbolKind};
use layout_diff::whatif::{Change, Size, predict};
use layout_diff::{InputFile, LoadOptions};

fn out_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(
        std::env::var("LAYOUT_DIFF_REPLAY").unwrap_or_else(|_| "/work/replay/out".into()),
    );
    if dir.join("base/vmlinux").exists() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: no replay builds in {}; run bash bench/replay/build.sh",
            dir.display()
        );
        None
    }
}

fn load(file: &InputFile) -> Image<'_> {
    file.load(&LoadOptions {
        pahole_text: false,
        ..LoadOptions::default()
    })
    .expect("replay build loads")
}

type Places = BTreeMap<(String, String), (u64, u64)>;

/// (section, qualified name) -> (address, size) of every data object.
fn places(image: &Image<'_>) -> Places {
    image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Object)
        .map(|s| {
            (
                (s.section.to_string(), s.qualified_name()),
                (s.address, s.size),
            )
        })
        .collect()
}

/// Predicts `variant` from base and compares every object of each section the real
/// build changed; returns the predicted places for the caller's nm facts.
fn check(variant: &str, changes: &[Change]) -> Option<Places> {
    let dir = out_dir()?;
    let base_file = InputFile::open(&dir.join("base/vmlinux")).unwrap();
    let real_file = InputFile::open(&dir.join(variant).join("vmlinux")).unwrap();
    let (base, real) = (load(&base_file), load(&real_file));
    let p = predict(&base, changes).expect("prediction");
    assert_eq!(p.reproduced, p.objects);
    let (old, want, got) = (places(&base), places(&real), places(&p.image));
    let touched: BTreeSet<&String> = want
        .iter()
        .filter(|(k, v)| old.get(*k) != Some(*v))
        .map(|((sec, _), _)| sec)
        .collect();
    assert!(!touched.is_empty(), "{variant} changed some data section");
    let mut total = 0;
    for (k, v) in want.iter().filter(|(k, _)| touched.contains(&k.0)) {
        assert_eq!(got.get(k), Some(v), "{variant}: {k:?}");
        total += 1;
    }
    eprintln!("{variant}: {total}/{total} objects in {touched:?} predicted");
    Some(got)
}

fn at(p: &Places, section: &str, name: &str) -> (u64, u64) {
    p[&(section.to_string(), name.to_string())]
}

#[test]
#[ignore = "needs the replay builds of bench/replay/build.sh"]
fn struct_mce_grown_by_8() {
    let Some(p) = check(
        "mce",
        &[Change::Resize {
            name: "mce".into(),
            size: Size::Grow(8),
        }],
    ) else {
        return;
    };
    assert_eq!(at(&p, ".data..percpu", "core.c:mces_seen"), (0x1ac60, 0x88));
    assert_eq!(at(&p, ".data..percpu", "injectm"), (0x1ad00, 0x88));
}

#[test]
#[ignore = "needs the replay builds of bench/replay/build.sh"]
fn mce_grown_with_mces_seen_and_injectm_per_cpu_aligned() {
    let Some(p) = check(
        "mce-aligned",
        &[
            Change::Resize {
                name: "mce".into(),
                size: Size::Grow(8),
            },
            Change::PercpuAligned {
                name: "mces_seen".into(),
            },
            Change::PercpuAligned {
                name: "injectm".into(),
            },
        ],
    ) else {
        return;
    };
    // mces_seen (static) moves to ..shared_aligned; injectm (declared in asm/mce.h)
    // keeps its section and is aligned in place.
    assert_eq!(at(&p, ".data..percpu", "core.c:mces_seen"), (0x1da80, 0x88));
    assert_eq!(at(&p, ".data..percpu", "injectm"), (0x1ac80, 0x88));
}

#[test]
#[ignore = "needs the replay builds of bench/replay/build.sh"]
fn root_user_aligned_to_a_line() {
    let Some(p) = check(
        "root-user-aligned",
        &[Change::SymbolAlign {
            name: "root_user".into(),
            align: 64,
        }],
    ) else {
        return;
    };
    assert_eq!(at(&p, ".data", "root_user"), (0xffffffff8181d540, 0x60));
}
