//! `show --symbol NAME` without decoding every unit. What it prints of DWARF is the
//! variable of each symbol shown (its type, laid at its address) and the compile unit
//! of each local it names, its own and its co-tenants'. A local's unit is that of its
//! `STT_FILE` group, found from the group's functions (unit code ranges, which every
//! load reads) or its variables; its printed file is the shortest unit suffix that tells
//! it apart from the other locals of its name. So the variables read are those of the
//! symbols shown and of every local in the group of a local named as a symbol shown or
//! a co-tenant: exactly the ones the whole read would consult. A variable's location
//! holds its address, so only the units whose bytes (or `.debug_addr` contribution)
//! hold one of those addresses are decoded.

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use rustc_hash::{FxHashMap, FxHashSet};

use super::LoadOptions;
use super::StructFilter;
use super::dies::Unit;
use super::unit::stored_bytes;
use crate::layout::SpaceIndex;
use crate::model::{Binding, Space, Symbol, SymbolKind};

/// Beyond this many addresses the search costs more than reading every unit.
const MAX_ADDRESSES: usize = 4096;

/// Up to this many addresses, the search is left to aho-corasick's prefilter.
const FEW: usize = 8;

/// The variables a sparse read keeps: those at `addresses`, found by their bytes.
pub(super) struct VariablesAt {
    /// Sorted, without repeats.
    addresses: Vec<u64>,
    /// The addresses as 4-byte and 8-byte values in the file's byte order (a unit
    /// holds them in its address size).
    finders: [Option<AhoCorasick>; 2],
}

impl VariablesAt {
    /// Whether a variable at `address` is kept.
    pub(super) fn wants(&self, address: u64) -> bool {
        self.addresses.binary_search(&address).is_ok()
    }

    /// Whether `unit` may hold a kept variable: its bytes (`data`), or for a unit that
    /// names addresses by index (`DW_OP_addrx`) its `.debug_addr` contribution in
    /// `debug_addr`, hold one of the addresses.
    pub(super) fn may_hold(
        &self,
        unit: &Unit<'_>,
        data: &[u8],
        debug_addr: &[u8],
        little_endian: bool,
    ) -> bool {
        let Some(finder) = (match unit.encoding().address_size {
            4 => self.finders[0].as_ref(),
            8 => self.finders[1].as_ref(),
            _ => return true,
        }) else {
            return false;
        };
        if finder.is_match(data) {
            return true;
        }
        let base = unit.addr_base.0;
        if base == 0 {
            return false;
        }
        // A DWARF 5 contribution: its 4-byte length 8 bytes before its first address
        // (past the version and the two sizes). Whatever does not read as one is
        // searched to the section's end: a unit too many is decoded, none missed.
        let end = base
            .checked_sub(8)
            .and_then(|at| debug_addr.get(at..at.checked_add(4)?))
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(|b| {
                if little_endian {
                    u32::from_le_bytes(b)
                } else {
                    u32::from_be_bytes(b)
                }
            })
            .filter(|&len| len < 0xffff_fff0)
            .and_then(|len| (base - 4).checked_add(usize::try_from(len).ok()?))
            .unwrap_or(debug_addr.len())
            .min(debug_addr.len());
        debug_addr
            .get(base..end)
            .is_some_and(|t| finder.is_match(t))
    }
}

/// What `show --symbol` needs of DWARF, known from the symbol table before any unit
/// is read: the symbols shown, and the `STT_FILE` groups whose unit names a local.
pub(super) struct Around {
    /// Addresses of the symbols shown (their variables give their types).
    shown: Vec<u64>,
    groups: Vec<Group>,
}

/// A group whose unit is needed: found from its first local function in a unit's code
/// ranges, else from its locals' variables (as `units::assign` finds it).
struct Group {
    functions: Vec<u64>,
    objects: Vec<u64>,
}

impl Around {
    /// The variables to read, once the units' code ranges are known (`of_code`: the
    /// code at an address lies in a named unit).
    pub(super) fn variables_at(
        &self,
        of_code: impl Fn(u64) -> bool,
        little_endian: bool,
    ) -> Option<VariablesAt> {
        let mut addresses = self.shown.clone();
        for g in &self.groups {
            if !g.functions.iter().any(|&a| of_code(a)) {
                addresses.extend(&g.objects);
            }
        }
        addresses.sort_unstable();
        addresses.dedup();
        if addresses.len() > MAX_ADDRESSES {
            return None;
        }
        let finder = |width: usize| {
            let patterns = addresses
                .iter()
                .map(|&a| stored_bytes(a, width, little_endian));
            // A few patterns are found by their prefilter at memchr's speed; beyond,
            // a DFA is (the NFA's scan was 80% of the time with 186).
            AhoCorasick::builder()
                .kind((addresses.len() > FEW).then_some(AhoCorasickKind::DFA))
                .build(patterns)
                .ok()
        };
        Some(VariablesAt {
            finders: [finder(4), finder(8)],
            addresses,
        })
    }
}

/// What `show --symbol` needs when `options` asks for the symbols of
/// `LoadOptions::variables_for` only (and for no struct by name): `None` when the
/// whole read is needed or cheaper.
pub(super) fn around(
    options: &LoadOptions,
    symbols: &[Symbol<'_>],
    line_size: u64,
) -> Option<Around> {
    let names = &options.variables_for;
    if !options.variables
        || names.is_empty()
        || !matches!(options.structs, StructFilter::None)
        || options.lists_typedefs()
        || line_size == 0
    {
        return None;
    }
    let shown: Vec<&Symbol<'_>> = symbols
        .iter()
        .filter(|s| names.iter().any(|n| n == s.name))
        .collect();
    let global = SpaceIndex::data(symbols, Space::Global);
    let percpu = SpaceIndex::data(symbols, Space::Percpu);
    let mut named: FxHashSet<&str> = FxHashSet::default();
    for s in &shown {
        named.insert(s.name);
        if s.kind == SymbolKind::Function {
            continue;
        }
        let index = if s.space == Space::Percpu {
            &percpu
        } else {
            &global
        };
        for line in index.co_tenants(s, line_size) {
            named.extend(line.symbols.iter().map(|t| t.name));
        }
    }
    let wanted: FxHashSet<u32> = symbols
        .iter()
        .filter(|s| s.binding == Binding::Local && s.group != 0 && named.contains(s.name))
        .map(|s| s.group)
        .collect();
    let mut groups: FxHashMap<u32, Group> = FxHashMap::default();
    for s in symbols {
        if s.binding != Binding::Local || !wanted.contains(&s.group) {
            continue;
        }
        let g = groups.entry(s.group).or_insert_with(|| Group {
            functions: Vec::new(),
            objects: Vec::new(),
        });
        if s.kind == SymbolKind::Function {
            g.functions.push(s.address);
        } else {
            g.objects.push(s.address);
        }
    }
    let mut groups: Vec<(u32, Group)> = groups.into_iter().collect();
    groups.sort_unstable_by_key(|(k, _)| *k);
    Some(Around {
        shown: shown.iter().map(|s| s.address).collect(),
        groups: groups.into_iter().map(|(_, g)| g).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::around;
    use crate::load::{LoadOptions, StructFilter};
    use crate::model::{Binding, Symbol, SymbolKind};

    fn sym(name: &'static str, place: u64, size: u64, local_group: u32) -> Symbol<'static> {
        let mut s = Symbol::test_object(name, place, size);
        if local_group != 0 {
            s.binding = Binding::Local;
            s.group = local_group;
        }
        s
    }

    #[test]
    fn the_shown_symbol_and_the_groups_that_name_its_line() {
        let mut f = sym("f", 0x400, 16, 2);
        f.kind = SymbolKind::Function;
        let symbols = vec![
            // Line 0 (0x000..0x040): the symbol asked for and a local co-tenant.
            sym("target", 0x00, 0x20, 0),
            sym("lock", 0x20, 8, 1),
            // Group 1's other local: read when group 1 has no function in a unit.
            sym("other", 0x100, 8, 1),
            // Another `lock`, in group 2: its file name is told apart from group 1's.
            sym("lock", 0x200, 8, 2),
            f,
            // Not on the line, in no group concerned.
            sym("far", 0x300, 8, 3),
            sym("global_far", 0x340, 8, 0),
        ];
        let options = LoadOptions {
            structs: StructFilter::None,
            variables_for: vec!["target".to_string()],
            ..LoadOptions::default()
        };
        let a = around(&options, &symbols, 64).expect("sparse");
        // Group 2's unit is found from `f`'s code: only group 1's variables are read.
        let got = a.variables_at(|addr| addr == 0x400, true).expect("few");
        assert_eq!(got.addresses, vec![0x00, 0x20, 0x100]);
        // Without code ranges both groups are found from their variables.
        let got = a.variables_at(|_| false, true).expect("few");
        assert_eq!(got.addresses, vec![0x00, 0x20, 0x100, 0x200]);
        assert!(got.wants(0x200) && !got.wants(0x300));
        // A struct asked for by name needs the whole read.
        let whole = LoadOptions {
            structs: StructFilter::Named(vec!["s".to_string()]),
            ..options
        };
        assert!(around(&whole, &symbols, 64).is_none());
    }
}
