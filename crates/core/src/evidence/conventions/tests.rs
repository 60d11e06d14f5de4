//! The conventions table: every entry has a reason and a source and one whole-name
//! pattern of the kind its table takes; and the answers it gives.

use super::*;

/// Every entry has a reason and a source, one line each, and exactly the pattern its
/// table matches by; no pattern is listed twice in one table.
#[test]
fn every_entry_has_a_reason_a_source_and_one_whole_name_pattern() {
    let c = conventions();
    let entries = c.entries();
    assert_eq!(entries.len(), TABLE.matches("\nreason = ").count());
    let mut seen = FxHashSet::default();
    for (table, e) in &entries {
        let what = format!("{table} {e:?}");
        assert!(!e.reason.trim().is_empty(), "{what}: no reason");
        assert!(!e.source.trim().is_empty(), "{what}: no source");
        assert!(e.reason.len() <= 160, "{what}: the reason is one line");
        let patterns: Vec<(&str, &str)> = [
            ("name", &e.name),
            ("glob", &e.glob),
            ("prefix", &e.prefix),
            ("suffix", &e.suffix),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.as_deref()?)))
        .collect();
        let wanted: &[&str] = match *table {
            "hot_type" => &["name", "glob"],
            "cold_type_suffix" => &["suffix"],
            "cold_prefix" => &["prefix"],
            _ => &["name"],
        };
        assert_eq!(patterns.len(), 1, "{what}: one pattern");
        let (kind, pattern) = patterns[0];
        assert!(wanted.contains(&kind), "{what}: {kind} in {table}");
        assert!(!pattern.trim().is_empty(), "{what}: empty {kind}");
        assert!(seen.insert((*table, pattern)), "{what}: listed twice");
        assert_eq!(
            e.kind.is_some(),
            table.starts_with("cold_"),
            "{what}: a cold entry, and only one, says its kind"
        );
        assert!(
            e.section.is_none() || *table == "cold_name",
            "{what}: only a cold name is bound to a section"
        );
    }
}

/// A glob is no substring test in disguise: none starts and ends with `*`.
#[test]
fn globs_match_whole_spellings() {
    for (_, e) in conventions().entries() {
        if let Some(g) = &e.glob {
            assert!(!(g.starts_with('*') && g.ends_with('*')), "{g}");
        }
    }
}

#[test]
fn hot_types_by_their_whole_spelling() {
    let c = conventions();
    for hot in [
        "atomic_t",
        "atomic64_t",
        "atomic_long_t",
        "const atomic_t",
        "atomic_t[4]",
        "volatile atomic_long_t[2][3]",
        "refcount_t",
        "spinlock_t",
        "raw_spinlock_t",
        "struct mutex",
        "seqcount_t",
        "struct percpu_counter",
        "local_t",
        "struct rw_semaphore",
        "struct lockref",
        "struct kref",
        "struct qspinlock",
        "wait_queue_head_t",
        "arch_spinlock_t",
    ] {
        assert!(c.is_hot_type(hot), "{hot}");
    }
    for cold in [
        "int",
        "struct list_head",
        "struct mutex_like",
        "unsigned long",
        "char[8]",
    ] {
        assert!(!c.is_hot_type(cold), "{cold}");
    }
}

#[test]
fn the_per_cpu_hot_area() {
    let c = conventions();
    assert!(c.is_percpu_hot("pcpu_hot"));
    assert!(!c.is_percpu_hot("pcpu_hot_x"));
}

/// Every type spelling the substring test took as hot on the fixtures and on the
/// 6.1.170, 6.1.176, 6.12.117, 6.12.118 and 7.3.4 kernels (qualifiers and array
/// dimensions left out; read from each build's members and variables) is hot by an
/// entry. Every entry holds its old marker, so nothing else became hot: the outputs
/// are those of the substring test.
#[test]
fn the_substring_tests_hot_spellings_on_real_kernels_are_all_entries() {
    let seen = [
        "arch_rwlock_t",
        "arch_spinlock_t",
        "atomic64_t",
        "atomic_long_t",
        "atomic_t",
        "enum ib_atomic_cap",
        "local_t",
        "local_trylock_t",
        "raw_spinlock_t",
        "refcount_t",
        "rqspinlock_t",
        "rwlock_t",
        "seqcount_latch_t",
        "seqcount_mutex_t",
        "seqcount_raw_spinlock_t",
        "seqcount_rwlock_t",
        "seqcount_spinlock_t",
        "seqcount_t",
        "seqlock_t",
        "spinlock_t",
        "struct acpi_mutex_info",
        "struct acpi_object_mutex",
        "struct atomic_notifier_head",
        "struct audit_ctl_mutex",
        "struct kref",
        "struct lockref",
        "struct mcs_spinlock",
        "struct mutex",
        "struct percpu_counter",
        "struct percpu_rw_semaphore",
        "struct raw_spinlock",
        "struct rqspinlock_held",
        "struct rt_mutex",
        "struct rt_mutex_base",
        "struct rw_semaphore",
        "struct swait_queue_head",
        "struct task_cputime_atomic",
        "struct wait_queue_head",
        "struct ww_mutex",
        "wait_queue_head_t",
    ];
    let c = conventions();
    for s in seen {
        assert!(c.is_hot_type(s), "{s}");
    }
    // The substring test's markers: every entry's pattern holds one.
    let markers = [
        "atomic",
        "refcount",
        "spinlock",
        "rwlock",
        "mutex",
        "seqcount",
        "seqlock",
        "percpu_counter",
        "local_t",
        "rw_semaphore",
        "lockref",
        "kref",
        "qspinlock",
        "wait_queue_head",
        "arch_spinlock",
    ];
    for (_, e) in c.entries().iter().filter(|(t, _)| *t == "hot_type") {
        let p = e.name.as_deref().or(e.glob.as_deref()).unwrap_or("");
        assert!(markers.iter().any(|m| p.contains(m)), "{p}");
    }
}

/// The cold tables answered from their indexes give what reading each table in order
/// gives (the first entry that matches), for every entry's own name, prefix and
/// suffix, with text after them, and for names no entry has.
#[test]
fn cold_lookups_by_index_are_the_tables_read_in_order() {
    let c = conventions();
    let t = &c.tables;
    let first = |entries: &[Entry], hit: &dyn Fn(&Entry) -> bool| {
        entries.iter().find(|e| hit(e)).and_then(|e| e.kind)
    };
    let mut asked = vec![
        String::new(),
        "x".to_string(),
        ".data".to_string(),
        "struct".to_string(),
    ];
    for e in t
        .cold_section
        .iter()
        .chain(&t.cold_type)
        .chain(&t.cold_name)
    {
        let n = e.name.clone().unwrap_or_default();
        asked.extend([n.clone(), format!("{n}_x"), format!("x{n}")]);
    }
    for e in &t.cold_prefix {
        let p = e.prefix.clone().unwrap_or_default();
        asked.extend([
            p.clone(),
            format!("{p}x"),
            p[..p.len().saturating_sub(1)].to_string(),
        ]);
    }
    for e in &t.cold_type_suffix {
        let s = e.suffix.clone().unwrap_or_default();
        asked.extend([s.clone(), format!("x{s}"), format!("{s}x")]);
    }
    let mut cold = 0;
    for a in &asked {
        let section = first(&t.cold_section, &|e| e.name.as_deref() == Some(a));
        assert_eq!(c.cold_section(a), section, "section {a:?}");
        let by_struct = first(&t.cold_type, &|e| e.name.as_deref() == Some(a));
        let by_suffix = || {
            first(&t.cold_type_suffix, &|e| {
                e.suffix.as_deref().is_some_and(|s| a.ends_with(s))
            })
        };
        let exact = t.cold_type.iter().any(|e| e.name.as_deref() == Some(a));
        let want = if exact { by_struct } else { by_suffix() };
        assert_eq!(c.cold_struct(a), want, "struct {a:?}");
        for sec in [".data", ".bss"] {
            let named = t.cold_name.iter().find(|e| {
                e.name.as_deref() == Some(a) && e.section.as_deref().is_none_or(|s| s == sec)
            });
            let want = match named {
                Some(e) => e.kind,
                None => first(&t.cold_prefix, &|e| {
                    e.prefix.as_deref().is_some_and(|p| a.starts_with(p))
                }),
            };
            assert_eq!(c.cold_name(a, sec), want, "name {a:?} in {sec}");
            cold += usize::from(want.is_some());
        }
    }
    // Every prefix entry, and the names of the section and struct tables, were met.
    assert!(cold >= 2 * t.cold_prefix.len(), "{cold} cold names");
}
