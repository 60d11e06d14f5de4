//! The access map: which function touches which data object, where in it and how,
//! read from the machine code of an x86-64 build. It is the code's own evidence of
//! who writes a line (`domain.md` §12), for builds that have no perf profile.
//!
//! Every function symbol with a size in an executable section is decoded (iced-x86),
//! in parallel; each instruction whose operand lands in a data object gives one
//! [`Access`]:
//! - a memory operand, RIP-relative (`x(%rip)`: the next instruction's address plus
//!   the displacement) or with an absolute displacement of 32 bits sign-extended (or
//!   64), with or without base and index registers (`mov X(,%rax,8)`: `indexed`);
//! - a `%gs:` operand is looked up among the per-CPU symbols only, by `st_value`: on
//!   6.1 the per-CPU section is linked at 0 and RIP-relative `%gs:X(%rip)` wraps to
//!   the 0-based offset, since about 6.15 the symbols have kernel addresses and the
//!   operand computes one; any other operand is looked up among ordinary objects only;
//! - an address put in a register (`lea X(%rip),%reg`, `mov $X,%reg`) is an
//!   [`AccessKind::Address`]; when a direct call or tail jump within the next 8
//!   instructions of straight-line code receives it unchanged in an argument register
//!   (`mov $tasklist_lock,%rdi; call _raw_write_lock_irq`), the callee is named and
//!   whether it writes through that argument.
//!
//! Read or write comes from iced-x86's operand access; a `lock` prefix or `xchg`
//! with memory makes it atomic; `lea` is not an access. Targets inside functions
//! (the address of code) and in no symbol are counted, not recorded.
//!
//! Which functions write through an argument is derived from the build, not from a
//! list of names: a function writes through argument `i` when, reading its code in
//! address order, a memory write, read-modify-write or atomic has as its base register
//! one that still holds argument `i` (the argument register itself or a 64-bit `mov`
//! copy of it), or when it passes that register unchanged to a direct call or tail jump
//! of a function that writes through the receiving argument (a fixed point over the
//! call graph). A call ends the tracking of the caller-saved registers, except a call
//! to a function that changes no register and writes no memory (`__fentry__` before
//! ftrace patches it; not a retpoline thunk, which is an indirect call: see
//! `preserve`). `_raw_spin_lock` (`lock cmpxchg (%rdi)`) and `_raw_spin_unlock`
//! (`movb $0,(%rdi)`) come out as writers. Limits: control flow is not followed (a
//! register overwritten on one path counts as overwritten for the code laid out after
//! it), an argument spilled to the stack or offset (`lea 8(%rdi),%rdi`) is lost,
//! indirect calls, `.cold` parts and writes by callees reached only through a pointer
//! are not seen, and only the six integer argument registers are followed.
//!
//! Only x86-64 code is read: for any other architecture the map is empty with
//! `supported` false, which says "no evidence from code", not "no accesses".

mod args;
mod preserve;
mod regs;
mod scan;
mod targets;
mod writers;

use rayon::prelude::*;

pub use crate::model::access::{Access, AccessKind, AccessMap, Counts, Form, Writer};

use crate::model::{CodeSection, Image};
use scan::{Misses, Scanned, Scanner};
use targets::Targets;
pub(crate) use targets::{Span, containing, spans};

/// The access map of `image` from its executable sections `code`
/// (`InputFile::code_sections`), with the functions whose address its data sections
/// `data` hold (`load::code::pointer_sections`) among the ones taken; empty and
/// unsupported unless the image is x86-64 and has code.
pub fn build(image: &Image<'_>, code: &[CodeSection<'_>], data: &[CodeSection<'_>]) -> AccessMap {
    if image.arch != "x86_64" || code.is_empty() {
        return AccessMap::default();
    }
    let mut targets = Targets::new(image);
    let functions: Vec<(u32, u64, &[u8])> = targets
        .functions()
        .filter_map(|(symbol, start, end)| {
            let bytes = code.iter().find_map(|c| c.range(start, end))?;
            Some((symbol, start, bytes))
        })
        .collect();
    targets.set_preserving(preserve::preserving(&targets, &functions));
    let scanned: Vec<(u32, Scanned)> = functions
        .par_iter()
        .map_init(
            || Scanner::new(&targets),
            |scanner, &(symbol, start, bytes)| (symbol, scanner.function(symbol, start, bytes)),
        )
        .collect();
    let mut map = assemble(scanned);
    let in_data = taken_in_data(&targets, data, !image.big_endian);
    if !in_data.is_empty() {
        map.taken.extend(in_data);
        map.taken.par_sort_unstable();
        map.taken.dedup();
    }
    map
}

/// The functions whose start address is an aligned 8-byte word of `data`: a
/// function pointer, since the kernel's data holds link-time addresses.
fn taken_in_data(targets: &Targets, data: &[CodeSection<'_>], little: bool) -> Vec<u32> {
    let Some((lo, hi)) = targets.code_bounds() else {
        return Vec::new();
    };
    let mut out: Vec<u32> = data
        .par_iter()
        .flat_map_iter(|section| {
            let skip = (8 - (section.address % 8) as usize) % 8;
            section
                .bytes
                .get(skip..)
                .unwrap_or_default()
                .chunks_exact(8)
                .filter_map(move |w| {
                    let w: [u8; 8] = w.try_into().ok()?;
                    let v = if little {
                        u64::from_le_bytes(w)
                    } else {
                        u64::from_be_bytes(w)
                    };
                    (v >= lo && v < hi)
                        .then(|| targets.function_at(v))
                        .flatten()
                })
        })
        .collect();
    out.par_sort_unstable();
    out.dedup();
    out
}

/// The map from each function's scan: writers first, then the addresses' `writes`.
fn assemble(scanned: Vec<(u32, Scanned)>) -> AccessMap {
    let mut counts = Counts {
        functions: scanned.len() as u64,
        ..Counts::default()
    };
    let mut pending = Vec::new();
    let mut facts = Vec::with_capacity(scanned.len());
    let (mut calls, mut taken) = (Vec::new(), Vec::new());
    for (symbol, s) in scanned {
        add(&mut counts, &s.misses);
        pending.extend(s.refs);
        calls.extend(s.calls.iter().map(|&callee| (callee, symbol)));
        taken.extend(s.taken);
        facts.push((symbol, s.args));
    }
    calls.par_sort_unstable();
    calls.dedup();
    taken.par_sort_unstable();
    taken.dedup();
    let writers = writers::writers(&facts);
    let mut map = AccessMap {
        supported: true,
        refs: Vec::with_capacity(pending.len()),
        writers,
        counts,
        calls,
        taken,
    };
    for p in pending {
        let mut access = p.access;
        if let (
            AccessKind::Address {
                callee: Some(f),
                writes,
            },
            Some(arg),
        ) = (&mut access.kind, p.arg)
        {
            *writes = map.writes_through(*f, arg);
        }
        map.refs.push(access);
    }
    map.refs.par_sort_unstable_by_key(AccessMap::ref_key);
    map
}

fn add(counts: &mut Counts, m: &Misses) {
    counts.instructions += m.instructions;
    counts.invalid += m.invalid;
    counts.to_code += m.to_code;
    counts.rip_unresolved += m.rip_unresolved;
}
