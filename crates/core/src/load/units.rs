//! Gives local symbols the path of their compile unit, so statics of equal name in
//! files of equal basename (`arch/x86/kernel/cpu/amd.c`, `drivers/iommu/amd/...`) stay
//! apart, and picks the shortest path suffix that names each one uniquely.

use rustc_hash::FxHashMap as HashMap;

use super::dwarf::UnitSources;
use crate::model::{Binding, Symbol, SymbolKind};

/// Sets `unit` and `file` of every local symbol whose `STT_FILE` group holds a
/// function inside a unit's code ranges or a variable DWARF knows, and the `compile_unit`
/// of every symbol, global or local, whose unit DWARF knows.
pub(crate) fn assign<'d>(symbols: &mut [Symbol<'d>], sources: &UnitSources<'d>) {
    let mut group_unit: HashMap<u32, &'d str> = HashMap::default();
    // Functions first (their ranges are exact), then variables.
    for pass in [true, false] {
        for s in symbols.iter() {
            if s.binding != Binding::Local
                || s.group == 0
                || (s.kind == SymbolKind::Function) != pass
                || group_unit.contains_key(&s.group)
            {
                continue;
            }
            let unit = if pass {
                sources.of_code(s.address)
            } else {
                sources.of_variable(s.address, s.name)
            };
            if let Some(u) = unit {
                group_unit.insert(s.group, u);
            }
        }
    }
    for s in symbols.iter_mut() {
        if s.binding == Binding::Local {
            s.unit = group_unit.get(&s.group).copied();
            s.compile_unit = s.unit;
        }
        if s.compile_unit.is_none() {
            s.compile_unit = match s.kind {
                SymbolKind::Function => sources.of_code(s.address),
                _ => sources.of_variable(s.address, s.name),
            };
        }
    }
    shorten(symbols);
}

/// For each name, the shortest path suffix (whole components) of each symbol's unit
/// that no other unit holding that name ends with.
fn shorten(symbols: &mut [Symbol<'_>]) {
    let mut by_name: HashMap<&str, Vec<&str>> = HashMap::default();
    for s in symbols.iter() {
        if let Some(u) = s.unit {
            let v = by_name.entry(s.name).or_default();
            if !v.contains(&u) {
                v.push(u);
            }
        }
    }
    for s in symbols.iter_mut() {
        let Some(unit) = s.unit else { continue };
        let others = by_name.get(s.name).map(Vec::as_slice).unwrap_or(&[]);
        s.file = Some(unique_suffix(unit, others));
    }
}

/// The shortest suffix of `path` starting after a `/` (or the whole path) that no
/// other path of `all` ends with (as whole components).
pub(crate) fn unique_suffix<'d>(path: &'d str, all: &[&str]) -> &'d str {
    let starts = std::iter::once(0).chain(path.match_indices('/').map(|(i, _)| i + 1));
    let mut starts: Vec<usize> = starts.filter(|&i| i < path.len()).collect();
    starts.reverse();
    for i in starts {
        let suffix = &path[i..];
        let clash = all.iter().any(|o| {
            *o != path
                && (*o == suffix
                    || o.strip_suffix(suffix)
                        .is_some_and(|head| head.ends_with('/')))
        });
        if !clash {
            return suffix;
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::unique_suffix;

    #[test]
    fn shortest_unique_suffix() {
        let all = [
            "arch/x86/kernel/cpu/amd.c",
            "drivers/iommu/amd.c",
            "sound/amd.c",
        ];
        assert_eq!(unique_suffix(all[0], &all), "cpu/amd.c");
        assert_eq!(unique_suffix(all[1], &all), "iommu/amd.c");
        assert_eq!(unique_suffix(all[2], &all), "sound/amd.c");
        assert_eq!(unique_suffix("kernel/fork.c", &["kernel/fork.c"]), "fork.c");
        // A path that is a suffix of another keeps its whole length.
        assert_eq!(unique_suffix("amd.c", &["amd.c", "x/amd.c"]), "amd.c");
    }
}
