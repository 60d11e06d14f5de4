//! The typed access map as a snapshot keeps it: one row of small numbers per access
//! (types and offsets as given, the function by symbol index, the instruction as a
//! distance from its function's start), decoded only by a load that asks for the map
//! (`show --access`), and checked as it is read so that a forged row cannot name a
//! symbol, type or member that does not exist.

use serde::{Deserialize, Serialize};

use crate::model::Symbol;
use crate::model::access::AccessKind;
use crate::model::typed::{Coverage, FunctionCoverage, NONE, TypedAccess, TypedMap};

/// One access: (type, offset, function, instruction minus the function's address,
/// member + 1 or 0, operand bytes, flags, per-CPU object + 1 or 0). Flags: the kind in
/// bits 0-1 (read, write, read-modify-write, atomic), cold in bit 2, remote in bit 3.
type Row = (u32, u32, u32, i64, u32, u8, u8, u32);

/// The map's stored form.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct TypedForm {
    pub supported: bool,
    pub types: Vec<String>,
    pub members: Vec<String>,
    pub rows: Vec<Row>,
    pub coverage: Coverage,
    pub functions: Vec<FunctionCoverage>,
}

fn kind_bits(kind: AccessKind) -> u8 {
    match kind {
        AccessKind::Write => 1,
        AccessKind::ReadWrite => 2,
        AccessKind::Atomic => 3,
        _ => 0,
    }
}

fn kind_of(bits: u8) -> AccessKind {
    match bits & 3 {
        1 => AccessKind::Write,
        2 => AccessKind::ReadWrite,
        3 => AccessKind::Atomic,
        _ => AccessKind::Read,
    }
}

impl TypedForm {
    /// The form of `map`, whose functions are indexes into `symbols`.
    pub fn of(map: &TypedMap, symbols: &[Symbol<'_>]) -> TypedForm {
        let start = |f: u32| symbols.get(f as usize).map_or(0, |s| s.address);
        TypedForm {
            supported: map.supported,
            types: map.types.clone(),
            members: map.members.clone(),
            rows: map
                .accesses
                .iter()
                .map(|a| {
                    (
                        a.ty,
                        a.offset,
                        a.function,
                        a.insn.wrapping_sub(start(a.function)) as i64,
                        a.member.wrapping_add(1),
                        a.size,
                        kind_bits(a.kind) | u8::from(a.cold) << 2 | u8::from(a.remote) << 3,
                        a.percpu.wrapping_add(1),
                    )
                })
                .collect(),
            coverage: map.coverage,
            functions: map.functions.clone(),
        }
    }

    /// The map again, its functions indexes into `symbols`; why not when a row names
    /// something out of range or the rows are out of order.
    pub fn into_map(self, symbols: &[Symbol<'_>]) -> Result<TypedMap, &'static str> {
        let n = symbols.len();
        let (types, members) = (self.types.len(), self.members.len());
        let mut accesses = Vec::with_capacity(self.rows.len());
        for (ty, offset, function, delta, member, size, flags, percpu) in self.rows {
            let member = member.wrapping_sub(1);
            let percpu = percpu.wrapping_sub(1);
            if ty as usize >= types
                || function as usize >= n
                || (member != NONE && member as usize >= members)
                || (percpu != NONE && percpu as usize >= n)
            {
                return Err("typed access map names something out of range");
            }
            accesses.push(TypedAccess {
                ty,
                offset,
                function,
                insn: symbols[function as usize]
                    .address
                    .wrapping_add(delta as u64),
                member,
                size,
                kind: kind_of(flags),
                cold: flags & 4 != 0,
                percpu,
                remote: flags & 8 != 0,
            });
        }
        if !accesses.is_sorted()
            || !self.types.is_sorted()
            || !self.members.is_sorted()
            || !self.functions.is_sorted_by_key(|f| f.function)
        {
            return Err("typed access map out of order");
        }
        if self.functions.iter().any(|f| f.function as usize >= n) {
            return Err("typed access map names a function out of range");
        }
        Ok(TypedMap {
            supported: self.supported,
            types: self.types,
            members: self.members,
            accesses,
            coverage: self.coverage,
            functions: self.functions,
        })
    }
}
