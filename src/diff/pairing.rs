//! Pairs the symbols of two builds: by name in the same space, locals by the path of
//! their compile unit (else their `STT_FILE` name),
//! compiler clone numbers (`.isra.0`, `.constprop.3`, `rs.12`) ignored, and symbols
//! sharing a key paired in address order.

use rustc_hash::FxHashMap;
use std::borrow::Cow;

use crate::model::{Space, Symbol, SymbolKind};

/// A symbol present in both builds.
#[derive(Debug, Clone, Copy)]
pub struct Paired<'a, 'd> {
    pub old: &'a Symbol<'d>,
    pub new: &'a Symbol<'d>,
}

impl Paired<'_, '_> {
    pub fn delta(&self) -> i64 {
        self.new.place.wrapping_sub(self.old.place) as i64
    }
}

pub struct Pairing<'a, 'd> {
    /// In old (space, place) order.
    pub pairs: Vec<Paired<'a, 'd>>,
    /// In new (space, place) order.
    pub added: Vec<&'a Symbol<'d>>,
    /// In old (space, place) order.
    pub removed: Vec<&'a Symbol<'d>>,
}

/// The name with compiler clone and static-local numbers removed:
/// `foo.isra.0` -> `foo.isra`, `ratelimit_state.67` -> `ratelimit_state`.
pub fn base_name(name: &str) -> Cow<'_, str> {
    if !name.contains('.') {
        return Cow::Borrowed(name);
    }
    let mut parts = name.split('.');
    let mut out = parts.next().unwrap_or("").to_string();
    for p in parts {
        if !p.is_empty() && !p.bytes().all(|b| b.is_ascii_digit()) {
            out.push('.');
            out.push_str(p);
        }
    }
    Cow::Owned(out)
}

/// What identifies a symbol across builds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolKey<'d> {
    pub space: Space,
    pub function: bool,
    pub name: Cow<'d, str>,
    pub file: Option<&'d str>,
}

pub fn key<'d>(s: &Symbol<'d>) -> SymbolKey<'d> {
    SymbolKey {
        space: s.space,
        function: s.kind == SymbolKind::Function,
        name: base_name(s.name),
        file: s.unit.or(s.file),
    }
}

pub fn pair<'a, 'd>(old: &'a [Symbol<'d>], new: &'a [Symbol<'d>]) -> Pairing<'a, 'd> {
    // FxHash: the keys are short names hashed once per symbol of both builds, and
    // SipHash was a tenth of the snapshot-pair diff.
    let mut by_key: FxHashMap<SymbolKey<'d>, (Vec<&'a Symbol<'d>>, Vec<&'a Symbol<'d>>)> =
        FxHashMap::default();
    by_key.reserve(old.len().max(new.len()));
    for s in old {
        by_key.entry(key(s)).or_default().0.push(s);
    }
    for s in new {
        by_key.entry(key(s)).or_default().1.push(s);
    }
    let mut pairs = Vec::new();
    let mut added = Vec::new();
    let mut removed = Vec::new();
    for (_, (o, n)) in by_key {
        // Both lists are in place order (the model sorts symbols).
        for i in 0..o.len().max(n.len()) {
            match (o.get(i), n.get(i)) {
                (Some(a), Some(b)) => pairs.push(Paired { old: a, new: b }),
                (Some(a), None) => removed.push(*a),
                (None, Some(b)) => added.push(*b),
                (None, None) => {}
            }
        }
    }
    pair_leftovers(&mut pairs, &mut added, &mut removed);
    let order = |s: &Symbol<'d>| (s.space, s.place, s.name, s.file);
    pairs.sort_by(|a, b| order(a.old).cmp(&order(b.old)));
    added.sort_by(|a, b| order(a).cmp(&order(b)));
    removed.sort_by(|a, b| order(a).cmp(&order(b)));
    Pairing {
        pairs,
        added,
        removed,
    }
}

/// A local whose unit was found in one build only (its `STT_FILE` group lost or gained
/// the function or variable that tells its unit) is keyed by unit path on one side and
/// by basename on the other: pair such leftovers by name and file basename when that
/// is unambiguous on both sides.
fn pair_leftovers<'a, 'd>(
    pairs: &mut Vec<Paired<'a, 'd>>,
    added: &mut Vec<&'a Symbol<'d>>,
    removed: &mut Vec<&'a Symbol<'d>>,
) {
    type Loose<'d> = (Space, bool, Cow<'d, str>, Option<&'d str>);
    let loose = |s: &Symbol<'d>| -> Loose<'d> {
        let file = s.origin().map(|f| f.rsplit('/').next().unwrap_or(f));
        (
            s.space,
            s.kind == SymbolKind::Function,
            base_name(s.name),
            file,
        )
    };
    let mut by: FxHashMap<Loose<'d>, (Vec<usize>, Vec<usize>)> = FxHashMap::default();
    for (i, s) in removed.iter().enumerate() {
        if s.unit.is_some() || s.file.is_some() {
            by.entry(loose(s)).or_default().0.push(i);
        }
    }
    for (i, s) in added.iter().enumerate() {
        if s.unit.is_some() || s.file.is_some() {
            by.entry(loose(s)).or_default().1.push(i);
        }
    }
    let mut taken_old = vec![false; removed.len()];
    let mut taken_new = vec![false; added.len()];
    for (o, n) in by.values() {
        if let ([o], [n]) = (o.as_slice(), n.as_slice())
            && removed[*o].unit.is_some() != added[*n].unit.is_some()
        {
            pairs.push(Paired {
                old: removed[*o],
                new: added[*n],
            });
            taken_old[*o] = true;
            taken_new[*n] = true;
        }
    }
    let mut i = 0;
    removed.retain(|_| {
        i += 1;
        !taken_old[i - 1]
    });
    let mut i = 0;
    added.retain(|_| {
        i += 1;
        !taken_new[i - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(
        name: &'static str,
        unit: Option<&'static str>,
        file: &'static str,
    ) -> Symbol<'static> {
        Symbol {
            name,
            file: Some(file),
            unit,
            group: 1,
            kind: SymbolKind::Object,
            binding: crate::model::Binding::Local,
            section: ".data",
            address: 0x1000,
            size: 8,
            space: Space::Global,
            place: 0x1000,
        }
    }

    #[test]
    fn locals_pair_by_unit_path_not_basename() {
        let old = [
            local("x", Some("arch/x86/kernel/cpu/amd.c"), "cpu/amd.c"),
            local("x", Some("drivers/iommu/amd.c"), "iommu/amd.c"),
        ];
        // The new build dropped the cpu one: the iommu one must not pair with it.
        let new = [local("x", Some("drivers/iommu/amd.c"), "amd.c")];
        let p = pair(&old, &new);
        assert_eq!(p.pairs.len(), 1);
        assert_eq!(p.pairs[0].old.unit, Some("drivers/iommu/amd.c"));
        assert_eq!(p.removed.len(), 1);
        assert_eq!(p.removed[0].unit, Some("arch/x86/kernel/cpu/amd.c"));
        // A unit found in one build only still pairs when name and basename agree.
        let old = [local("y", None, "fork.c")];
        let new = [local("y", Some("kernel/fork.c"), "fork.c")];
        let p = pair(&old, &new);
        assert_eq!((p.pairs.len(), p.added.len(), p.removed.len()), (1, 0, 0));
    }

    #[test]
    fn clone_numbers_are_dropped() {
        assert_eq!(base_name("foo"), "foo");
        assert_eq!(base_name("foo.isra.0"), "foo.isra");
        assert_eq!(base_name("foo.constprop.12.isra.0"), "foo.constprop.isra");
        assert_eq!(base_name("ratelimit_state.67"), "ratelimit_state");
        assert_eq!(base_name("bar.cold"), "bar.cold");
    }
}
