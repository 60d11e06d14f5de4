//! The access map (`layout_diff_core::access`) on testdata/access/{access,access-os}.elf:
//! its RIP-relative references equal objdump's `# address <sym+off>` annotations in
//! testdata/access/FACTS.md instruction by instruction, and each global's references
//! have the kinds read off that objdump listing (testdata/access/README.md), never
//! off layout-diff's own output.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{load_image, testdata};
use layout_diff_core::InputFile;
use layout_diff_core::access::{self, AccessKind, AccessMap, Form};
use layout_diff_core::model::Image;

/// (instruction, symbol, offset) of every annotated operand in FACTS.md's objdump
/// listing of `file`.
fn objdump_references(file: &str) -> BTreeSet<(u64, String, u64)> {
    let facts = std::fs::read_to_string(testdata("access/FACTS.md")).expect("FACTS.md");
    let heading = format!("## {file}: objdump -d");
    let block = facts
        .split(&heading)
        .nth(1)
        .and_then(|rest| rest.split("```").nth(1))
        .expect("objdump block");
    let mut out = BTreeSet::new();
    for line in block.lines() {
        let Some((code, comment)) = line.split_once('#') else {
            continue;
        };
        let insn = u64::from_str_radix(code.split(':').next().unwrap().trim(), 16).unwrap();
        let (_, sym) = comment.trim().split_once(' ').unwrap();
        let sym = sym.trim_start_matches('<').trim_end_matches('>');
        let (name, offset) = match sym.split_once("+0x") {
            Some((n, o)) => (n, u64::from_str_radix(o, 16).unwrap()),
            None => (sym, 0),
        };
        out.insert((insn, name.to_string(), offset));
    }
    out
}

fn map_of(file: &InputFile) -> (Image<'_>, AccessMap) {
    let image = load_image(file);
    let code = file.code_sections().expect("code sections");
    let map = access::build(&image, &code, &[]);
    (image, map)
}

fn name(image: &Image<'_>, i: u32) -> String {
    image.symbols[i as usize].name.to_string()
}

/// Every reference as (function, object, offset, kind, form, indexed, size), the
/// callee spelled by name.
fn rows(image: &Image<'_>, map: &AccessMap) -> Vec<(String, String, u64, String, Form, bool, u8)> {
    let mut out: Vec<_> = map
        .refs
        .iter()
        .map(|a| {
            let kind = match a.kind {
                AccessKind::Address { callee, writes } => format!(
                    "address callee={} writes={writes}",
                    callee.map_or("-".into(), |c| name(image, c))
                ),
                other => format!("{other:?}"),
            };
            let (f, o) = (name(image, a.function), name(image, a.object));
            (f, o, a.offset, kind, a.form, a.indexed, a.size)
        })
        .collect();
    out.sort();
    out
}

/// Read off objdump (FACTS.md) for both builds: the same references, one per line
/// (any order).
const EXPECTED: &[(&str, &str, u64, &str, Form, bool, u8)] = &[
    // nm: bump_counter: addq $0x1 / incq counter(%rip)
    (
        "bump_counter",
        "counter",
        0,
        "ReadWrite",
        Form::RipRelative,
        false,
        8,
    ),
    // atomic_inc: lock addq $0x1 / lock incq atomic_count(%rip)
    (
        "atomic_inc",
        "atomic_count",
        0,
        "Atomic",
        Form::RipRelative,
        false,
        8,
    ),
    // count_miss: movq $0x3, stats+0x8(%rip)
    (
        "count_miss",
        "stats",
        8,
        "Write",
        Form::RipRelative,
        false,
        8,
    ),
    // pcpu_inc: incq %gs:pcpu_hits(%rip), objdump's "# 0 <pcpu_hits>"
    (
        "pcpu_inc",
        "pcpu_hits",
        0,
        "ReadWrite",
        Form::RipRelative,
        false,
        8,
    ),
    // pcpu_read: mov %gs:0x8,%eax (pcpu_seg is at 8 in .data..percpu)
    ("pcpu_read", "pcpu_seg", 0, "Read", Form::Absolute, false, 4),
    // read_things: mov nr_things(%rip),%rax
    (
        "read_things",
        "nr_things",
        0,
        "Read",
        Form::RipRelative,
        false,
        8,
    ),
    // set_things: mov %rdi,nr_things(%rip)
    (
        "set_things",
        "nr_things",
        0,
        "Write",
        Form::RipRelative,
        false,
        8,
    ),
    // stats_total: mov $0xffffffff82a520b0 (stats),%rdi; call show_stats
    (
        "stats_total",
        "stats",
        0,
        "address callee=show_stats writes=false",
        Form::Immediate,
        false,
        0,
    ),
    // swap_flag: xchg %rax,flag(%rip)
    (
        "swap_flag",
        "flag",
        0,
        "Atomic",
        Form::RipRelative,
        false,
        8,
    ),
    // table_get: mov -0x7d5adfe0(,%rdi,8),%rax; 0xffffffff82a52020 is table
    ("table_get", "table", 0, "Read", Form::Absolute, true, 8),
    // take_lock: mov $0xffffffff82a520a0 (big_lock),%rdi; call spin_lock
    (
        "take_lock",
        "big_lock",
        0,
        "address callee=spin_lock writes=true",
        Form::Immediate,
        false,
        0,
    ),
    // take_lock: addq $0x1 / incq counter(%rip)
    (
        "take_lock",
        "counter",
        0,
        "ReadWrite",
        Form::RipRelative,
        false,
        8,
    ),
    // take_lock_wrapped: mov $big_lock,%rdi; jmp lock_wrapper (jmp spin_lock)
    (
        "take_lock_wrapped",
        "big_lock",
        0,
        "address callee=lock_wrapper writes=true",
        Form::Immediate,
        false,
        0,
    ),
    // take_rip_lock: lea rip_lock(%rip),%rdi; jmp spin_lock
    (
        "take_rip_lock",
        "rip_lock",
        0,
        "address callee=spin_lock writes=true",
        Form::RipRelative,
        false,
        0,
    ),
];

fn check(file: &str) {
    let input = InputFile::open(Path::new(&testdata(&format!("access/{file}")))).unwrap();
    let (image, map) = map_of(&input);
    assert!(map.supported);
    let rip: BTreeSet<(u64, String, u64)> = map
        .refs
        .iter()
        .filter(|a| a.form == Form::RipRelative)
        .map(|a| (a.insn, name(&image, a.object), a.offset))
        .collect();
    assert_eq!(
        rip,
        objdump_references(file),
        "{file}: RIP-relative references"
    );
    let mut expected: Vec<_> = EXPECTED
        .iter()
        .map(|&(f, o, off, k, form, ix, size)| {
            (
                f.to_string(),
                o.to_string(),
                off,
                k.to_string(),
                form,
                ix,
                size,
            )
        })
        .collect();
    expected.sort();
    assert_eq!(rows(&image, &map), expected, "{file}: kinds");
    // spin_lock: lock cmpxchg %edx,(%rdi); spin_unlock: movl $0x0,(%rdi);
    // lock_wrapper: jmp spin_lock. show_stats only reads (%rdi).
    let writers: Vec<(String, u8)> = map
        .writers
        .iter()
        .map(|w| (name(&image, w.function), w.args))
        .collect();
    let mut writers = writers;
    writers.sort();
    let want = [("lock_wrapper", 1), ("spin_lock", 1), ("spin_unlock", 1)];
    assert_eq!(
        writers,
        want.map(|(n, a)| (n.to_string(), a)),
        "{file}: writers"
    );
}

#[test]
fn o2_references_equal_objdump_and_kinds_are_exact() {
    check("access.elf");
}

#[test]
fn os_references_equal_objdump_and_kinds_are_exact() {
    check("access-os.elf");
}

#[test]
fn the_map_is_the_same_with_one_or_two_threads() {
    let input = InputFile::open(Path::new(&testdata("access/access.elf"))).unwrap();
    let image = load_image(&input);
    let code = input.code_sections().unwrap();
    let with = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| access::build(&image, &code, &[]))
    };
    let (one, two) = (with(1), with(2));
    assert_eq!(one.refs, two.refs);
    assert_eq!(one.writers, two.writers);
    assert_eq!(one.refs.len(), EXPECTED.len());
}

#[test]
fn other_architectures_give_no_evidence() {
    let path = testdata("old-s390x.elf");
    if !Path::new(&path).exists() {
        eprintln!("skipped: no old-s390x.elf");
        return;
    }
    let input = InputFile::open(Path::new(&path)).unwrap();
    let (image, map) = map_of(&input);
    assert_eq!(image.arch, "s390x");
    assert!(!map.supported);
    assert!(map.refs.is_empty() && map.writers.is_empty());
}
