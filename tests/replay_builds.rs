//! `whatif` against real kernel builds: Debian's 6.1 source built by
//! bench/replay/build.sh (a base and variants, each one change). Ignored by default
//! (the builds take minutes and live outside the repo): `cargo test --release --test
//! replay_builds -- --ignored`, with `LAYOUT_DIFF_REPLAY` naming the builds' `out`
//! folder (default /work/replay/out). The addresses asserted were read with `nm -n -S`
//! from the variants (bench/replay/README.md).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use layout_diff_core::link::LinkMap;
use layout_diff_core::model::{Image, SymbolKind};
use layout_diff_core::whatif::objects::ObjectFile;
use layout_diff_core::whatif::{Change, Prediction, Size, predict_from};
use layout_diff_core::{InputFile, LoadOptions};

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

/// What `whatif` predicts of `base` (read from `file`) with its kallsyms tables, as
/// the command does.
fn predict<'d>(
    file: &InputFile,
    base: &Image<'d>,
    changes: &[Change],
    objects: &'d [ObjectFile],
) -> Prediction<'d> {
    let tables = file.kallsyms();
    let vars = base.variables_of_symbols();
    let link = LinkMap::build_from(base, &vars);
    predict_from(base, &link, &vars, changes, objects, tables.as_ref()).expect("prediction")
}

/// Names two symbols share (a weak and a strong `arch_vma_name`) keep both places.
type Places = BTreeMap<(String, String), Vec<(u64, u64)>>;

/// (section, qualified name) -> (address, size) of every function and data object.
fn places(image: &Image<'_>) -> Places {
    let mut out = Places::new();
    for s in image
        .symbols
        .iter()
        .filter(|s| matches!(s.kind, SymbolKind::Object | SymbolKind::Function))
    {
        out.entry((s.section.to_string(), s.qualified_name()))
            .or_default()
            .push((s.address, s.size));
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

/// The recompiled object files the build kept for `variant` (objs/**.o).
fn objects_of(dir: &std::path::Path, variant: &str) -> Vec<ObjectFile> {
    fn walk(d: &std::path::Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "o") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&dir.join(variant).join("objs"), &mut paths);
    paths.sort();
    paths.iter().map(|p| ObjectFile::read(p).unwrap()).collect()
}

/// Predicts `variant` from base and compares every function and object of each
/// section the real build changed; returns the predicted places for the caller's nm
/// facts.
fn check(variant: &str, changes: &[Change], with_objects: bool) -> Option<Places> {
    let dir = out_dir()?;
    let objects = if with_objects {
        objects_of(&dir, variant)
    } else {
        Vec::new()
    };
    let base_file = InputFile::open(&dir.join("base/vmlinux")).unwrap();
    let real_file = InputFile::open(&dir.join(variant).join("vmlinux")).unwrap();
    let (base, real) = (load(&base_file), load(&real_file));
    let p = predict(&base_file, &base, changes, &objects);
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
        total += v.len();
    }
    eprintln!("{variant}: {total}/{total} objects in {touched:?} predicted");
    Some(got)
}

/// Predicts `variant` from base with its recompiled objects and compares every
/// function and object of every section, moved or not, but those in `skip`; returns
/// the predicted places and how many were compared.
fn check_every_section(
    variant: &str,
    changes: &[Change],
    skip: &[&str],
    with_objects: bool,
) -> Option<(Places, usize)> {
    let dir = out_dir()?;
    if !dir.join(variant).join("vmlinux").exists() {
        eprintln!("skipped {variant}: not built; run bash bench/replay/build.sh");
        return None;
    }
    let objects = match with_objects {
        true => objects_of(&dir, variant),
        false => Vec::new(),
    };
    let base_file = InputFile::open(&dir.join("base/vmlinux")).unwrap();
    let real_file = InputFile::open(&dir.join(variant).join("vmlinux")).unwrap();
    let (base, real) = (load(&base_file), load(&real_file));
    let p = predict(&base_file, &base, changes, &objects);
    let (want, got) = (places(&real), places(&p.image));
    let mut total = 0;
    for (k, v) in want.iter().filter(|(k, _)| !skip.contains(&k.0.as_str())) {
        assert_eq!(got.get(k), Some(v), "{variant}: {k:?}");
        total += v.len();
    }
    eprintln!("{variant}: {total}/{total} objects in every section predicted");
    Some((got, total))
}

fn at(p: &Places, section: &str, name: &str) -> (u64, u64) {
    let all = &p[&(section.to_string(), name.to_string())];
    assert_eq!(all.len(), 1, "{name} is one symbol");
    all[0]
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
        true,
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
                declaration: true,
            },
            // The variant leaves asm/mce.h's DECLARE_PER_CPU as it is.
            Change::PercpuAligned {
                name: "injectm".into(),
                declaration: false,
            },
        ],
        true,
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
        true,
    ) else {
        return;
    };
    assert_eq!(at(&p, ".data", "root_user"), (0xffffffff8181d540, 0x60));
}

#[test]
#[ignore = "needs the replay builds of bench/replay/build.sh"]
fn a_function_added_to_kernel_signal_c_from_its_object_file() {
    let Some(p) = check("signal-fn", &[], true) else {
        return;
    };
    assert_eq!(at(&p, ".text", "replay_added_fn"), (0xffffffff81047500, 5));
    // The futex path behind it moves by 16 (nm: 0xffffffff81097140 -> ...150).
    assert_eq!(at(&p, ".text", "futex_wait"), (0xffffffff81097150, 0x228));
}

#[test]
#[ignore = "needs the replay builds of bench/replay/build.sh"]
fn suggest_for_what_struct_mce_moved_proposes_the_upstream_alignment() {
    let Some(dir) = out_dir() else {
        return;
    };
    let old_file = InputFile::open(&dir.join("base/vmlinux")).unwrap();
    let new_file = InputFile::open(&dir.join("mce/vmlinux")).unwrap();
    let (old, new) = (load(&old_file), load(&new_file));
    let found = layout_diff_core::suggest::suggest(
        &old,
        &new,
        &Default::default(),
        &["mce_poll_banks".to_string()],
    );
    let changes: Vec<&str> = found.suggestions[0]
        .fixes
        .iter()
        .map(|f| f.change.as_str())
        .collect();
    assert!(
        changes.contains(&"--percpu-aligned core.c:mces_seen --percpu-aligned injectm"),
        "{changes:?}"
    );
    // Nothing is flagged on evidence: without a name asked for, nothing to fix.
    let none = layout_diff_core::suggest::suggest(&old, &new, &Default::default(), &[]);
    assert_eq!((none.suggestions.len(), none.other_flags), (0, 0));
}

#[test]
#[ignore = "needs the replay builds of bench/replay/build.sh"]
fn struct_mce_grown_past_the_per_cpu_slack_moves_every_section_after_it() {
    // struct mce +256 B: the per-CPU area grows by 512 B (readelf -S: 0x1ef58 ->
    // 0x1f158), past the 168 B before the page .init.text starts on, so .init.text
    // and every section after it move by a page (0xffffffff818be000 -> ...818bf000)
    // and .bss, which ends on PMD_SIZE, loses that page at its end.
    let Some((p, total)) = check_every_section(
        "mce-big",
        &[Change::Resize {
            name: "mce".into(),
            size: Size::Grow(256),
        }],
        &[],
        true,
    ) else {
        return;
    };
    // readelf -sW: 13,321 OBJECT and FUNC symbols in sections, and 55 sized NOTYPE
    // ones (assembly entry code, read as functions).
    assert_eq!(total, 13321 + 55);
    assert_eq!(
        at(&p, ".data..percpu", "core.c:mces_seen"),
        (0x1ac60, 0x180)
    );
    assert_eq!(at(&p, ".data..percpu", "injectm"), (0x1ade0, 0x180));
    // nm: empty_zero_page 0xffffffff81939000 -> 0xffffffff8193a000.
    assert_eq!(
        at(&p, ".bss", "empty_zero_page"),
        (0xffffffff8193a000, 0x1000)
    );
}

#[test]
#[ignore = "needs the replay builds of bench/replay/build.sh"]
fn every_section_of_the_other_variants_is_predicted() {
    let mce = || Change::Resize {
        name: "mce".into(),
        size: Size::Grow(8),
    };
    let aligned = |name: &str, declaration| Change::PercpuAligned {
        name: name.into(),
        declaration,
    };
    let cases: [(&str, Vec<Change>, &[&str]); 9] = [
        ("mce", vec![mce()], &[]),
        (
            "mce-aligned",
            vec![mce(), aligned("mces_seen", true), aligned("injectm", false)],
            &[],
        ),
        // With DECLARE_PER_CPU_ALIGNED in asm/mce.h too, injectm moves to
        // ..shared_aligned, after mces_seen: its declaration made its symbol first.
        (
            "mce-aligned-declared",
            vec![mce(), aligned("mces_seen", true), aligned("injectm", true)],
            &[],
        ),
        (
            "user-insert",
            vec![Change::MemberInsert {
                name: "user_struct".into(),
                member: "replay_inserted".into(),
                size: 8,
                align: None,
                at: layout_diff_core::whatif::Position::After("__count".into()),
            }],
            &[
                ".text",
                ".init.text",
                ".altinstr_aux",
                ".altinstr_replacement",
            ],
        ),
        // A .bss object made __read_mostly leaves .bss for the read-mostly data.
        (
            "read-mostly-bss",
            vec![Change::ReadMostly {
                name: "num_cpus_frozen".into(),
            }],
            &[],
        ),
        (
            "bss-aligned",
            vec![Change::SymbolAlign {
                name: "panic_on_oops".into(),
                align: 64,
            }],
            &[],
        ),
        (
            "root-user-aligned",
            vec![Change::SymbolAlign {
                name: "root_user".into(),
                align: 64,
            }],
            &[],
        ),
        // One symbol more: the kallsyms tables in .rodata grow, and the sched classes
        // after them move.
        ("signal-fn", vec![], &[]),
        // min_free_kbytes __read_mostly: among page_alloc.c's read-mostly objects by
        // its definition line (nm: after watermark_boost_factor, line 431, before
        // _init_on_free_enabled_early, line 292), and sysctl_lowmem_reserve_ratio
        // (int[3], vectorised: 8-byte aligned) into its place in .data.
        (
            "read-mostly",
            vec![Change::ReadMostly {
                name: "min_free_kbytes".into(),
            }],
            &[],
        ),
    ];
    for (variant, changes, skip) in cases {
        // Three classes the second replay added are predicted from the change alone,
        // as a user writes it: their recompiled objects' code keeps its size, but for
        // user-insert, whose header change recompiles 316 objects and changes their
        // code (its functions are skipped; with all 316 objects .data is not exact, see
        // docs/validation.md).
        let with_objects = !matches!(variant, "user-insert" | "read-mostly-bss" | "bss-aligned");
        let Some((_, total)) = check_every_section(variant, &changes, skip, with_objects) else {
            continue;
        };
        // Every object compared: 13,321 in the first replay; with the code sections
        // skipped, the data alone (3,544 of user-insert's).
        let least = if skip.contains(&".text") {
            3_000
        } else {
            12_000
        };
        assert!(total > least, "{variant}: {total}");
    }
}

/// A function added to kernel/signal.c moves every later function: futex_wait from
/// ...97140 (start mod line 0x00) to ...97150 (0x10), do_syscall_64 from ...8117cfb0
/// (0x30) to ...cfc0 (0x00), both asked for by name (nm -n -S of base and signal-fn;
/// do_syscall_64 is 0x47 B: 2 lines in both). Aligning futex_wait gives its old start
/// back; do_syscall_64's old start was mid-line, which no alignment gives back: its
/// fix starts a line and covers no more lines than OLD, and costs nothing as NEW
/// already starts it on one.
#[test]
#[ignore = "needs the replay builds of bench/replay/build.sh"]
fn suggest_for_functions_moved_by_an_added_function() {
    let Some(dir) = out_dir() else {
        return;
    };
    let (base, variant) = (dir.join("base/vmlinux"), dir.join("signal-fn/vmlinux"));
    let (code, out, err) = common::run(&[
        "suggest",
        base.to_str().unwrap(),
        variant.to_str().unwrap(),
        "--symbol",
        "futex_wait",
        "--symbol",
        "do_syscall_64",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = doc["functions"].as_array().unwrap();
    let brief = |i: usize| {
        (
            f[i]["function"].as_str().unwrap().to_string(),
            f[i]["phase_old"].as_u64().unwrap(),
            f[i]["phase_new"].as_u64().unwrap(),
            f[i]["lines_old"].as_u64().unwrap(),
            f[i]["lines_new"].as_u64().unwrap(),
        )
    };
    assert_eq!(brief(0), ("futex_wait".into(), 0, 0x10, 9, 9));
    assert_eq!(brief(1), ("do_syscall_64".into(), 0x30, 0, 2, 2));
    let first = |i: usize| &f[i]["fixes"][0];
    assert_eq!(first(0)["change"], "--symbol futex_wait --align 64");
    assert_eq!(
        (first(0)["restores"].as_bool(), first(0)["phase"].as_u64()),
        (Some(true), Some(0))
    );
    assert_eq!(first(1)["change"], "--symbol do_syscall_64 --align 64");
    assert_eq!(
        (
            first(1)["restores"].as_bool(),
            first(1)["no_more_lines"].as_bool(),
            first(1)["lines"].as_u64(),
            first(1)["shifted"].as_u64(),
        ),
        (Some(false), Some(true), Some(2), Some(0))
    );
}
