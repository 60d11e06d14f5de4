//! `whatif` on builds nobody tuned it for, built nothing at test time: testdata/predict
//! (build.sh) holds one unit with every class of change the predictions issue names,
//! each built for real at -O2 and at -Os (the kernel's CONFIG_CC_OPTIMIZE_FOR_SIZE)
//! and linked as x86's vmlinux is. Each prediction from the plain build must put
//! every object (and, given the recompiled object, every function) where gcc and ld
//! put it in the variant; the facts quoted are FACTS.md's (nm -n -S, pahole).

mod common;

use std::collections::BTreeMap;

use common::testdata;
use layout_diff_core::model::{Image, SymbolKind};
use layout_diff_core::whatif::objects::ObjectFile;
use layout_diff_core::whatif::{Change, Position, predict};
use layout_diff_core::{InputFile, LoadOptions};

type Places = BTreeMap<(String, String), Vec<(u64, u64)>>;

fn load(file: &InputFile) -> Image<'_> {
    file.load(&LoadOptions {
        pahole_text: false,
        ..LoadOptions::default()
    })
    .expect("fixture loads")
}

/// (section, qualified name) -> (address, size) of every data object, and of every
/// function too when `functions`.
fn places(image: &Image<'_>, functions: bool) -> Places {
    let mut out = Places::new();
    for s in &image.symbols {
        let wanted = match s.kind {
            SymbolKind::Object => true,
            SymbolKind::Function => functions,
            _ => false,
        };
        if wanted {
            out.entry((s.section.to_string(), s.qualified_name()))
                .or_default()
                .push((s.address, s.size));
        }
    }
    out
}

/// Predicts PROFILE-VARIANT.elf from PROFILE-base.elf with `changes` (and the
/// variant's recompiled fn.o for `fn-add`), and checks every place against the
/// build; returns how many were compared and how many the change moved.
fn check(profile: &str, variant: &str, changes: &[Change]) -> (usize, usize) {
    let base_file =
        InputFile::open(testdata(&format!("predict/{profile}-base.elf")).as_ref()).unwrap();
    let real_file =
        InputFile::open(testdata(&format!("predict/{profile}-{variant}.elf")).as_ref()).unwrap();
    let (base, real) = (load(&base_file), load(&real_file));
    let with_objects = variant == "fn-add";
    let objects: Vec<ObjectFile> = match with_objects {
        true => vec![
            ObjectFile::read(testdata(&format!("predict/{profile}-fn-add.o")).as_ref()).unwrap(),
        ],
        false => Vec::new(),
    };
    let p = predict(&base, changes, &objects).expect("prediction");
    let (want, got) = (places(&real, with_objects), places(&p.image, with_objects));
    assert_eq!(got, want, "{profile}-{variant}");
    let before = places(&base, with_objects);
    let moved = want
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .count();
    (want.values().map(Vec::len).sum(), moved)
}

fn cases() -> Vec<(&'static str, Vec<Change>)> {
    let s = |x: &str| x.to_string();
    vec![
        // root_u 32 -> 40 B: init_ns (struct ns, 56 B, a member aligned to 8) after
        // it stays 32-aligned: 0x...40 -> 0x...60, not 0x...48.
        (
            "insert",
            vec![Change::MemberInsert {
                name: s("us"),
                member: s("inserted"),
                size: 8,
                align: None,
                at: Position::After(s("count")),
            }],
        ),
        (
            "align-data",
            vec![Change::SymbolAlign {
                name: s("root_u"),
                align: 64,
            }],
        ),
        (
            "align-bss",
            vec![Change::SymbolAlign {
                name: s("oops_flag"),
                align: 64,
            }],
        ),
        ("rm-data", vec![Change::ReadMostly { name: s("min_kb") }]),
        // frozen leaves .bss: first among data.c's read-mostly objects, all of which
        // a header or a later line made before it.
        ("rm-bss", vec![Change::ReadMostly { name: s("frozen") }]),
        // The header keeps DECLARE_PER_CPU: seen_g aligned in place in .data..percpu,
        // seen_s (static) to ..shared_aligned.
        (
            "pcpu-def",
            vec![
                Change::PercpuAligned {
                    name: s("seen_s"),
                    declaration: true,
                },
                Change::PercpuAligned {
                    name: s("seen_g"),
                    declaration: false,
                },
            ],
        ),
        // DECLARE_PER_CPU_ALIGNED in the header too: both to ..shared_aligned, seen_g
        // after seen_s (its declaration made its symbol first).
        (
            "pcpu-decl",
            vec![
                Change::PercpuAligned {
                    name: s("seen_s"),
                    declaration: true,
                },
                Change::PercpuAligned {
                    name: s("seen_g"),
                    declaration: true,
                },
            ],
        ),
        ("fn-add", vec![]),
    ]
}

#[test]
fn every_class_is_predicted_at_o2_and_at_os() {
    let mut moved = BTreeMap::new();
    for profile in ["o2", "os"] {
        for (variant, changes) in cases() {
            let (_, m) = check(profile, variant, &changes);
            moved.insert(format!("{profile}-{variant}"), m);
        }
    }
    // Each case moves something (a case that moved nothing would check nothing):
    // counted from FACTS.md's nm listings against the plain build's.
    for (case, m) in &moved {
        assert!(*m > 0, "{case} moves nothing");
    }
}

/// At -Os GCC aligns no function (fn.c's f_three at 0x...a after f_two, FACTS.md):
/// the producer string says so, and the added function moves the ones after it by its
/// size, not by a 16-byte step.
#[test]
fn functions_of_a_unit_built_for_size_are_not_aligned() {
    let os = InputFile::open(testdata("predict/os-base.elf").as_ref()).unwrap();
    let o2 = InputFile::open(testdata("predict/o2-base.elf").as_ref()).unwrap();
    let (os, o2) = (load(&os), load(&o2));
    assert_eq!(os.function_alignments, [("data.c", 1), ("fn.c", 1)]);
    assert!(o2.function_alignments.is_empty());
    assert_eq!(os.function_alignment(Some("fn.c")), 1);
    assert_eq!(o2.function_alignment(Some("fn.c")), 16);
}

/// The diff of a .bss object made __read_mostly names one object that moved between
/// sections, not one removed and one added.
#[test]
fn a_bss_object_made_read_mostly_is_one_moved_object() {
    for profile in ["o2", "os"] {
        let (code, out, err) = common::run(&[
            &testdata(&format!("predict/{profile}-base.elf")),
            &testdata(&format!("predict/{profile}-rm-bss.elf")),
            "--all",
        ]);
        assert_eq!(err, "", "{profile}");
        assert_eq!(code, 0, "{profile}");
        assert!(
            out.contains("data.c:frozen moved from .bss to .data (4 B)"),
            "{profile}: {out}"
        );
        assert!(
            !out.contains("frozen added") && !out.contains("frozen removed"),
            "{out}"
        );
    }
}

/// A function and a static object added to a unit linked with kallsyms tables
/// (testdata/kallsyms: the tables the kernel's scripts/kallsyms of 6.1 wrote, linked
/// as scripts/link-vmlinux.sh does): two symbols more grow the tables, and the
/// objects after them in .rodata move to where ld put them in the rebuilt link
/// (idle_cls 0x...1520 -> 0x...15a0 at -O2 and -Os, FACTS.md), each object and
/// function predicted at its real place.
#[test]
fn symbols_added_grow_the_kallsyms_tables_and_move_what_follows_them() {
    use layout_diff_core::link::LinkMap;
    use layout_diff_core::link::kallsyms::TableKind;
    for profile in ["o2", "os"] {
        let path = |v: &str| testdata(&format!("kallsyms/{profile}-{v}"));
        let base_file = InputFile::open(path("base.elf").as_ref()).unwrap();
        let real_file = InputFile::open(path("fn-add.elf").as_ref()).unwrap();
        let (base, real) = (load(&base_file), load(&real_file));
        let tables = base_file.kallsyms().expect("an ELF build");
        let k = tables.as_ref().expect("the tables reproduce");
        // nm -n of the base: 15 symbols (with --all-symbols), the tables from
        // 0x...1000 to kallsyms_token_index's 512 bytes, each 8-aligned.
        assert_eq!(k.symbols.len(), 15, "{profile}");
        assert_eq!(k.align, 8);
        assert!(k.all_symbols);
        let kinds: Vec<(TableKind, u64)> = k.tables.iter().map(|t| (t.kind, t.place)).collect();
        assert_eq!(
            kinds[0],
            (TableKind::Addresses { entry: 4 }, 0xffff_ffff_8100_1000)
        );
        assert_eq!(kinds[7], (TableKind::TokenIndex, 0xffff_ffff_8100_12e8));
        let objects = vec![ObjectFile::read(path("fn-add.o").as_ref()).unwrap()];
        let vars = base.variables_of_symbols();
        let link = LinkMap::build_from(&base, &vars);
        let p = layout_diff_core::whatif::predict_from(
            &base,
            &link,
            &vars,
            &[],
            &objects,
            Some(&tables),
        )
        .expect("prediction");
        assert_eq!(places(&p.image, true), places(&real, true), "{profile}");
        let idle = |image: &Image<'_>| {
            image
                .symbols
                .iter()
                .find(|s| s.name == "idle_cls")
                .map(|s| s.address)
        };
        assert_eq!(idle(&base), Some(0xffff_ffff_8100_1520), "{profile}");
        assert_eq!(idle(&p.image), Some(0xffff_ffff_8100_15a0), "{profile}");
        assert!(
            p.assumptions.contains(
                &"kallsyms tables: 17 symbols (+2), 34 B of names (+4), compressed again as scripts/kallsyms does (it gives the build's tables back exactly), each 8-aligned"
                    .to_string()
            ),
            "{:?}",
            p.assumptions
        );
        // Without the tables (a snapshot keeps none), what follows them stays, and
        // whatif says so.
        let p = layout_diff_core::whatif::predict(&base, &[], &objects).expect("prediction");
        assert_eq!(idle(&p.image), Some(0xffff_ffff_8100_1520), "{profile}");
        assert!(
            p.caveats.contains(
                &"2 symbols added and 0 removed: the kallsyms tables the link generates in .rodata change size, and what follows them there is not predicted"
                    .to_string()
            ),
            "{:?}",
            p.caveats
        );
    }
}
