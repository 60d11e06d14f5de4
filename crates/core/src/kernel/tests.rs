//! The storage tables: every entry has a reason and a source; the classifier's order;
//! and the answers the diff, `suggest`, the frequency of code and the readers ask.

use std::collections::BTreeSet;

use super::*;
use crate::model::{CType, Image, Space, Symbol, SymbolKind};

/// Every entry of every table has a reason and a source, one line each, and a
/// non-empty pattern listed once in its table; every table has entries.
#[test]
fn every_table_entry_has_a_reason_and_a_source() {
    let t = tables();
    let entries = t.entries();
    assert_eq!(
        entries.len(),
        tables::TABLE.matches("\nreason = ").count(),
        "every entry of the file is read"
    );
    let mut seen = BTreeSet::new();
    for (table, pattern, reason, source) in &entries {
        let what = format!("{table} {pattern:?}");
        assert!(!pattern.trim().is_empty(), "{what}: no pattern");
        assert!(!reason.trim().is_empty(), "{what}: no reason");
        assert!(!source.trim().is_empty(), "{what}: no source");
        assert!(reason.len() <= 160, "{what}: the reason is one line");
        assert!(!reason.contains('\n') && !source.contains('\n'), "{what}");
        assert!(
            seen.insert((*table, pattern.clone())),
            "{what}: listed twice"
        );
    }
    for table in [
        "class",
        "section",
        "range",
        "type",
        "sleeping_lock",
        "noise",
    ] {
        assert!(entries.iter().any(|e| e.0 == table), "{table}: empty");
    }
}

/// Every class but `Written` (the default) has one entry, and each label is its own.
#[test]
fn every_class_has_one_entry_and_its_own_label() {
    let t = tables();
    let classes = [
        Class::Boot,
        Class::ReadOnlyAfterInit,
        Class::ReadMostly,
        Class::ReadOnly,
        Class::Once,
    ];
    for c in classes {
        assert_eq!(t.class.iter().filter(|e| e.name == c).count(), 1, "{c:?}");
    }
    assert_eq!(t.class.len(), classes.len());
    assert!(t.class(Class::Written).is_none());
    let labels: BTreeSet<&str> = classes.iter().map(|c| c.label()).collect();
    assert_eq!(labels.len(), classes.len());
    // The labels reports have always printed (the JSON `quiet` field).
    assert_eq!(Class::Boot.label(), "boot-only");
    assert_eq!(Class::ReadOnlyAfterInit.label(), "read-only after init");
    assert_eq!(Class::ReadMostly.label(), "read-mostly");
}

/// A range's symbols are boundary symbols the loader reads, and its class a lifetime;
/// a type entry's class is one too (the report names them as such).
#[test]
fn ranges_are_bounded_by_symbols_the_loader_reads() {
    for e in &tables().range {
        for s in [&e.start, &e.end] {
            assert!(
                crate::model::BOUNDARY_SYMBOLS.contains(&s.as_str()),
                "{s}: not read by the loader"
            );
        }
        assert!(e.class.is_lifetime(), "{e:?}");
    }
    for e in &tables().types {
        assert!(e.class.is_lifetime(), "{e:?}");
        assert!(!e.name.starts_with("const "), "{e:?}");
    }
}

/// An object at `address` in `section`.
fn object(section: &'static str, address: u64) -> Symbol<'static> {
    Symbol {
        section,
        ..Symbol::test_object("x", address, 8)
    }
}

/// A type spelled `c`, const or not.
fn ty(c: &str, is_const: bool) -> CType {
    CType {
        c: c.into(),
        is_const,
        ..CType::default()
    }
}

/// The image's ranges: init 0x1000..0x2000, read-only after init 0x3000..0x3100,
/// read-mostly 0x4000..0x4100.
fn regions() -> Regions {
    let mut image = Image::test_empty();
    image.boundaries = vec![
        ("__init_begin", 0x1000),
        ("__init_end", 0x2000),
        ("__start_ro_after_init", 0x3000),
        ("__end_ro_after_init", 0x3100),
        (crate::model::READ_MOSTLY_START, 0x4000),
        ("_edata", 0x4100),
    ];
    Regions::of(&image)
}

/// A class, whether the bytes are read-only, and the lifetime the report names.
type Answer = (Class, bool, Option<&'static str>);

/// Each rule of the order decides, with the entry that decided it: a lifetime section,
/// a range, a type, a read-only section, `const`, the once section, none.
#[test]
fn the_classifier_takes_the_first_rule_that_matches() {
    let r = regions();
    let class = |s: &Symbol<'_>, t: Option<&CType>| {
        let st = r.classify(s, t);
        (st.class, st.read_only, st.lifetime())
    };
    let plain = ty("int", false);
    let constant = ty("int", true);
    let key = ty("const struct static_key_false", false);
    use Class::*;
    let cases: &[(Symbol<'_>, Option<&CType>, Answer)] = &[
        (object(".data", 0x10), Some(&plain), (Written, false, None)),
        (object(".data", 0x10), None, (Written, false, None)),
        (
            object(".init.data", 0x10),
            None,
            (Boot, false, Some("boot-only")),
        ),
        (
            object(".init.rodata", 0x10),
            None,
            (Boot, true, Some("boot-only")),
        ),
        (
            object(".exit.text", 0x10),
            None,
            (Boot, false, Some("boot-only")),
        ),
        (
            object(".data", 0x1800),
            Some(&constant),
            (Boot, true, Some("boot-only")),
        ),
        // `__ro_after_init` data merged into .rodata: written during init.
        (
            object(".rodata", 0x3008),
            Some(&plain),
            (ReadOnlyAfterInit, true, Some("read-only after init")),
        ),
        (
            object(".data", 0x4010),
            None,
            (ReadMostly, false, Some("read-mostly")),
        ),
        (object(".data", 0x4100), None, (Written, false, None)),
        (
            object(".data", 0x10),
            Some(&key),
            (ReadMostly, false, Some("read-mostly")),
        ),
        (
            object(".rodata", 0x10),
            Some(&key),
            (ReadMostly, true, Some("read-mostly")),
        ),
        (
            object("__tracepoints", 0x10),
            None,
            (ReadMostly, false, Some("read-mostly")),
        ),
        (
            object(".rodata", 0x10),
            Some(&plain),
            (ReadOnly, true, None),
        ),
        (object(".text", 0x10), None, (ReadOnly, true, None)),
        (
            object(".data", 0x10),
            Some(&constant),
            (ReadOnly, true, None),
        ),
        (object(".data.once", 0x10), None, (Once, false, None)),
    ];
    for (s, t, want) in cases {
        assert_eq!(
            class(s, *t),
            *want,
            "{} at {:#x} {t:?}",
            s.section,
            s.address
        );
    }
    // The entry that decided it.
    let st = r.classify(&object(".data", 0x1800), None);
    assert!(matches!(st.by, Decider::Range(e) if e.start == "__init_begin"));
    let st = r.classify(&object(".data", 0x10), Some(&key));
    assert!(matches!(st.by, Decider::Type(e) if e.name == "struct static_key_false"));
    assert_eq!(
        r.classify(&object(".data", 0x10), Some(&constant)).by,
        Decider::Const
    );
    assert_eq!(
        r.classify(&object(".data", 0x10), None).by,
        Decider::Default
    );
}

/// Tracepoints and once flags are classed once, with their cold kind: a tracepoint is
/// read-mostly storage and tracing metadata, by its section or its type.
#[test]
fn tracepoints_and_once_flags_name_their_cold_kind() {
    let r = regions();
    let tp = ty("struct tracepoint", false);
    let by_type = r.classify(&object(".data", 0x10), Some(&tp));
    assert_eq!(
        (by_type.class, by_type.cold()),
        (Class::ReadMostly, Some(Cold::Tracing))
    );
    let by_section = r.classify(&object("__tracepoints_ptrs", 0x10), None);
    assert_eq!(
        (by_section.class, by_section.cold()),
        (Class::ReadMostly, Some(Cold::Tracing))
    );
    let once = r.classify(&object(".data.once", 0x10), None);
    assert_eq!(
        (once.class, once.cold()),
        (Class::Once, Some(Cold::OnceFlag))
    );
    let key = ty("struct static_key", false);
    assert_eq!(r.classify(&object(".data", 0x10), Some(&key)).cold(), None);
    // The cold convention asks the same entries.
    let cold = crate::evidence::cold::of;
    assert_eq!(
        cold("x", ".data", Some("struct tracepoint")),
        Some(Cold::Tracing)
    );
    assert_eq!(cold("x", "__tracepoints", None), Some(Cold::Tracing));
    assert_eq!(
        cold("x", "__tracepoints_strings", None),
        Some(Cold::Tracing)
    );
    assert_eq!(cold("done", ".data.once", None), Some(Cold::OnceFlag));
    assert_eq!(cold("x", ".data", Some("struct static_key")), None);
}

/// What the report lists as classed by lifetime: the sections in the table's order,
/// the ranges this build has, and the types by group.
#[test]
fn the_report_lists_sections_ranges_and_type_groups() {
    let described: Vec<(Class, String, Option<u64>)> = regions()
        .describe()
        .into_iter()
        .map(|r| (r.class, r.from, r.start))
        .collect();
    let want = [
        (Class::Boot, "sections .init.*", None),
        (Class::Boot, "sections .exit.*", None),
        (Class::ReadMostly, "sections .data..read_mostly*", None),
        (
            Class::ReadOnlyAfterInit,
            "sections .data..ro_after_init*",
            None,
        ),
        (Class::ReadMostly, "sections __tracepoints*", None),
        (Class::Boot, "__init_begin..__init_end", Some(0x1000)),
        (
            Class::ReadOnlyAfterInit,
            "__start_ro_after_init..__end_ro_after_init",
            Some(0x3000),
        ),
        (
            Class::ReadMostly,
            ".data..read_mostly.._edata",
            Some(0x4000),
        ),
        (
            Class::ReadMostly,
            "static keys and tracepoints (by type)",
            None,
        ),
    ];
    let want: Vec<(Class, String, Option<u64>)> = want
        .into_iter()
        .map(|(c, f, a)| (c, f.to_string(), a))
        .collect();
    assert_eq!(described, want);
    // A build without the boundary symbols lists the sections and types only.
    assert_eq!(Regions::of(&Image::test_empty()).describe().len(), 6);
}

/// Boot code by its section; sleeping locks by their whole spelling; noise by a name's
/// beginning, the padding among it.
#[test]
fn boot_code_sleeping_locks_and_noise() {
    assert!(is_boot_code(".init.text"));
    assert!(is_boot_code(".exit.text"));
    assert!(!is_boot_code(".text"));
    assert!(!is_boot_code(".text.unlikely"));
    assert!(!is_boot_code(".initcall"));
    assert!(sleeping_lock("struct mutex").is_some());
    assert!(sleeping_lock("volatile struct completion").is_some());
    assert!(sleeping_lock("wait_queue_head_t").is_some());
    assert!(sleeping_lock("spinlock_t").is_none());
    assert!(sleeping_lock("struct mutex[2]").is_none());
    assert!(is_function_padding("__pfx_schedule"));
    assert!(!is_function_padding("schedule"));
    assert!(!is_function_padding("__cfi_schedule"));
    assert!(!is_function_padding("pfx_schedule"));
    assert!(noise("__cfi_schedule").is_some());
    assert!(noise(".Ltmp12").is_some());
    assert!(noise("schedule").is_none());
    assert!(noise("cfi_x").is_none());
}

/// A function is a symbol too: in an init section, or in the init region, it is boot.
#[test]
fn functions_in_init_sections_are_boot() {
    let r = regions();
    let mut f = object(".init.text", 0x1800);
    f.kind = SymbolKind::Function;
    assert_eq!(r.classify(&f, None).class, Class::Boot);
    f.section = ".text";
    assert_eq!(r.classify(&f, None).class, Class::Boot);
}

/// A per-CPU variable is never in a range between linker-script symbols: x86-64 links
/// the per-CPU area inside `__init_begin..__init_end` from 6.15 on (7.3.4: `runqueues`
/// at 0xffffffff83cf65c0, the region 0xffffffff838ac000..0xffffffff83cfb000), and
/// each CPU's copy outlives the template. Before, `runqueues` was boot-only there
/// (`--explain` said `storage: boot-only`) and its neighbours had no written members.
#[test]
fn per_cpu_variables_are_never_in_a_linker_script_range() {
    let mut image = Image::test_empty();
    image.boundaries = vec![
        ("__init_begin", 0xffffffff838ac000),
        ("__init_end", 0xffffffff83cfb000),
    ];
    let r = Regions::of(&image);
    let mut rq = object(".data..percpu", 0xffffffff83cf65c0);
    rq.space = Space::Percpu;
    let st = r.classify(&rq, Some(&ty("struct rq", false)));
    assert_eq!((st.class, st.lifetime()), (Class::Written, None));
    rq.space = Space::Global;
    assert_eq!(r.classify(&rq, None).lifetime(), Some("boot-only"));
}
