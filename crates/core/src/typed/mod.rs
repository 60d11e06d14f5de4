//! The typed access map: for every memory operand `disp(%base)` of every function of an
//! x86-64 build, the C type `%base` points to and the member at the offset, from the
//! build's own DWARF. It answers "who touches this member" for members reached through
//! pointers, which the access map of globals (`access`) cannot see.
//!
//! Each compile unit is read on its own, in parallel (`unit`): its types, its
//! functions' ranges, and the registers its pointer-typed parameters and locals live in
//! (location lists included, inlined subroutines and lexical blocks included). Its
//! functions are then decoded and followed forward (`flow`). The units' results are
//! merged into one sorted map, the same whatever the thread count. Operands in
//! functions no unit describes (assembly) are counted as untyped, "no DWARF".

mod ctypes;
mod flow;
mod symbols;
mod unit;
pub mod view;

use iced_x86::{Decoder, DecoderOptions, Instruction, OpKind, Register};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

pub use crate::model::typed::{
    Coverage, FunctionCoverage, NONE, TypedAccess, TypedMap, UNTYPED, Untyped,
};
use crate::model::{CodeSection, Image, SymbolKind};
use flow::{Scan, Scanned};

/// The DWARF reader types the map reads units with (the loader's own).
pub(crate) type Reader<'d> = gimli::EndianSlice<'d, gimli::RunTimeEndian>;
pub(crate) type Dwarf<'d> = gimli::Dwarf<Reader<'d>>;
pub(crate) type Unit<'d> = gimli::Unit<Reader<'d>>;
use symbols::Symbols;

/// The typed access map of `image`, whose code is `code` and whose DWARF is `dwarf`;
/// empty and unsupported unless the image is x86-64 with code.
pub fn build(image: &Image<'_>, code: &[CodeSection<'_>], dwarf: &Dwarf<'_>) -> TypedMap {
    if image.arch != "x86_64" || code.is_empty() {
        return TypedMap::default();
    }
    let symbols = Symbols::new(image);
    let mut headers = Vec::new();
    let mut iter = dwarf.units();
    while let Ok(Some(h)) = iter.next() {
        headers.push(h);
    }
    let scanned: Vec<Scanned<'_>> = headers
        .into_par_iter()
        .filter_map(|header| {
            let unit = dwarf.unit(header).ok()?;
            let facts = unit::read(dwarf, &unit).ok()?;
            let mut scan = Scan::new(&facts, &symbols);
            for f in &facts.functions {
                let mut parts: Vec<(u64, &[u8], bool)> = Vec::with_capacity(f.ranges.len());
                let mut main = None;
                for &(lo, hi) in &f.ranges {
                    let Some((symbol, cold)) = symbols.function(lo) else {
                        continue;
                    };
                    let Some(bytes) = code.iter().find_map(|c| c.range(lo, hi)) else {
                        continue;
                    };
                    if !cold && main.is_none() {
                        main = Some(symbol);
                    }
                    parts.push((lo, bytes, cold));
                }
                if let Some(main) = main {
                    scan.function(main, &parts);
                }
            }
            Some(scan.finish())
        })
        .collect();
    let mut map = merge(scanned);
    let undescribed = undescribed(image, code, &symbols, &map);
    map.coverage.operands += undescribed;
    map.coverage.untyped[Untyped::NoDwarf as usize] += undescribed;
    map.supported = true;
    map
}

/// The units' results as one map, names sorted and accesses in their order.
fn merge(scanned: Vec<Scanned<'_>>) -> TypedMap {
    let mut types: Vec<String> = scanned
        .iter()
        .flat_map(|s| s.names.iter().map(|n| (*n).to_string()))
        .collect();
    types.sort_unstable();
    types.dedup();
    let mut members: Vec<String> = scanned
        .iter()
        .flat_map(|s| s.paths.iter().cloned())
        .collect();
    members.sort_unstable();
    members.dedup();
    let mut map = TypedMap {
        supported: true,
        ..TypedMap::default()
    };
    let index = |list: &[String], name: &str| {
        list.binary_search_by(|x| x.as_str().cmp(name))
            .map_or(NONE, |i| i as u32)
    };
    for s in scanned {
        map.coverage.add(&s.coverage);
        let ty_ids: Vec<u32> = s.names.iter().map(|n| index(&types, n)).collect();
        let path_ids: Vec<u32> = s.paths.iter().map(|p| index(&members, p)).collect();
        map.accesses.extend(s.found.iter().map(|f| TypedAccess {
            ty: ty_ids[f.ty_name as usize],
            offset: f.offset,
            function: f.function,
            insn: f.insn,
            member: match f.member {
                NONE => NONE,
                m => path_ids[m as usize],
            },
            size: f.size,
            kind: f.kind,
            cold: f.cold,
            percpu: f.percpu,
            remote: f.remote,
        }));
        map.functions
            .extend(
                s.functions
                    .iter()
                    .map(|&(function, operands, typed)| FunctionCoverage {
                        function,
                        operands,
                        typed,
                    }),
            );
    }
    map.types = types;
    map.members = members;
    map.accesses.par_sort_unstable();
    map.functions.sort_unstable_by_key(|f| f.function);
    map.functions.dedup_by(|b, a| {
        if a.function == b.function {
            a.operands += b.operands;
            a.typed += b.typed;
            true
        } else {
            false
        }
    });
    map.functions.retain(|f| f.operands > 0);
    map
}

/// Base-register operands (not the stack's) in functions no unit's DWARF describes.
fn undescribed(
    image: &Image<'_>,
    code: &[CodeSection<'_>],
    symbols: &Symbols<'_>,
    map: &TypedMap,
) -> u64 {
    let described: FxHashSet<u32> = map.functions.iter().map(|f| f.function).collect();
    let _ = symbols;
    let functions: Vec<(u64, &[u8])> = image
        .symbols
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            s.kind == SymbolKind::Function
                && s.size > 0
                && !s.name.contains(".cold")
                && !described.contains(&(*i as u32))
        })
        .filter_map(|(_, s)| {
            let bytes = code
                .iter()
                .find_map(|c| c.range(s.address, s.address + s.size))?;
            Some((s.address, bytes))
        })
        .collect();
    functions
        .par_iter()
        .map(|&(start, bytes)| {
            let mut decoder = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
            let mut insn = Instruction::default();
            let mut n = 0u64;
            while decoder.can_decode() {
                decoder.decode_out(&mut insn);
                let memory = (0..insn.op_count()).any(|op| insn.op_kind(op) == OpKind::Memory);
                let base = insn.memory_base();
                if memory
                    && insn.mnemonic() != iced_x86::Mnemonic::Lea
                    && !matches!(
                        base,
                        Register::None | Register::RIP | Register::RSP | Register::RBP
                    )
                {
                    n += 1;
                }
            }
            n
        })
        .sum()
}
