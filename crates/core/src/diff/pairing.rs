//! Pairs the symbols of two builds: by name in the same space, locals by the path of
//! their compile unit (else their `STT_FILE` name),
//! compiler clone numbers (`.isra.0`, `.constprop.3`, `rs.12`) ignored, and symbols
//! sharing a key paired in address order.

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use rustc_hash::FxHashMap;

use super::changes::Side;
use crate::model::{Space, Symbol, SymbolKind};

/// A symbol present in both builds.
#[derive(Debug, Clone, Copy)]
pub struct Paired<'a, 'd> {
    /// The symbol in the old build.
    pub old: &'a Symbol<'d>,
    /// The symbol in the new build.
    pub new: &'a Symbol<'d>,
}

impl Paired<'_, '_> {
    /// How far it moved: new place minus old.
    pub fn delta(&self) -> i64 {
        self.new.place.wrapping_sub(self.old.place) as i64
    }
}

/// Every symbol of two builds: paired across them by name, or added, or removed.
pub struct Pairing<'a, 'd> {
    /// In old (space, place) order.
    pub pairs: Vec<Paired<'a, 'd>>,
    /// In new (space, place) order.
    pub added: Vec<&'a Symbol<'d>>,
    /// In old (space, place) order.
    pub removed: Vec<&'a Symbol<'d>>,
    /// Each build's symbols and the key id of each (see `key_id`).
    keys: [(&'a [Symbol<'d>], Vec<u32>); 2],
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

/// A name with compiler clone and static-local numbers removed, compared and hashed
/// part by part so that no string is built: equal exactly when the `base_name`s are.
#[derive(Debug, Clone, Copy)]
struct BaseName<'d>(&'d str);

impl<'d> BaseName<'d> {
    /// The kept parts, as bytes: splitting on the byte `.` (a `char` pattern compares
    /// each match with `memcmp`, which was most of the pairing's time).
    fn parts(self) -> impl Iterator<Item = &'d [u8]> {
        let mut parts = self.0.as_bytes().split(|&b| b == b'.');
        let first = parts.next();
        first
            .into_iter()
            .chain(parts.filter(|p| !p.is_empty() && !p.iter().all(|b| b.is_ascii_digit())))
    }
}

impl PartialEq for BaseName<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || self.parts().eq(other.parts())
    }
}

impl Eq for BaseName<'_> {}

impl Hash for BaseName<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for p in self.parts() {
            state.write(p);
            state.write_u8(0xff);
        }
    }
}

/// What identifies a symbol across builds: space, function or not, name without clone
/// numbers, unit path (else `STT_FILE` name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SymbolKey<'d> {
    space: Space,
    function: bool,
    name: BaseName<'d>,
    file: Option<&'d str>,
}

fn key<'d>(s: &Symbol<'d>) -> SymbolKey<'d> {
    SymbolKey {
        space: s.space,
        function: s.kind == SymbolKind::Function,
        name: BaseName(s.name),
        file: s.unit.or(s.file),
    }
}

/// Index of `s` in `list` (`s` must be an element of it).
fn index_in<T>(list: &[T], s: &T) -> usize {
    (s as *const T as usize - list.as_ptr() as usize) / std::mem::size_of::<T>().max(1)
}

impl Pairing<'_, '_> {
    /// Index of `s`, a symbol of the old build, in that build's symbols.
    pub fn old_index(&self, s: &Symbol<'_>) -> usize {
        index_in(self.keys[0].0, s)
    }

    /// The key id of a symbol of build `side`:
    /// two data symbols of one space have equal ids exactly when their names without
    /// clone numbers and their units (or files) are equal.
    pub fn key_id(&self, side: Side, s: &Symbol<'_>) -> u32 {
        let (list, ids) = &self.keys[side.index()];
        ids[index_in(list, s)]
    }
}

/// The key id of each symbol of each build (see `Pairing::key_id`), and how many
/// keys there are.
fn key_ids<'d>(old: &[Symbol<'d>], new: &[Symbol<'d>]) -> (Vec<u32>, Vec<u32>, u32) {
    // FxHash and keys that borrow their names: SipHash with an owned key per dotted name
    // was a tenth of the snapshot-pair diff.
    let hash = |s: &Symbol<'d>| {
        use std::hash::BuildHasher;
        rustc_hash::FxBuildHasher.hash_one(key(s))
    };
    // Symbol `g` of both builds in turn: old ones first, then new ones.
    let at = |g: u32| match old.get(g as usize) {
        Some(s) => s,
        None => &new[g as usize - old.len()],
    };
    // The table holds, per key, where its first symbol is and the key's id (8 bytes):
    // probing a table of 16-byte buckets that outgrew the core's cache was three
    // quarters of the pairing. Key ids are dense, in order of first appearance.
    // (Hashing both builds beforehand, side by side, saved nothing measurable.)
    let mut table: hashbrown::HashTable<(u32, u32)> =
        hashbrown::HashTable::with_capacity(old.len().max(new.len()));
    let mut groups = 0u32;
    let mut id = |g: u32| {
        let k = key(at(g));
        match table.entry(
            hash(at(g)),
            |&(e, _)| key(at(e)) == k,
            |&(e, _)| hash(at(e)),
        ) {
            hashbrown::hash_table::Entry::Occupied(e) => e.get().1,
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert((g, groups));
                groups += 1;
                groups - 1
            }
        }
    };
    // Old and new symbols in turn, by index: both builds are in place order, so a
    // symbol's counterpart sits a few indexes away and its bucket is still in cache.
    let mut old_ids = vec![0u32; old.len()];
    let mut new_ids = vec![0u32; new.len()];
    for i in 0..old.len().max(new.len()) {
        if i < old.len() {
            old_ids[i] = id(i as u32);
        }
        if i < new.len() {
            new_ids[i] = id((old.len() + i) as u32);
        }
    }
    drop(table);
    (old_ids, new_ids, groups)
}

/// The key ids of one old build's symbols and where each key first appears: what
/// pairing it with many new builds (the candidates of `suggest`) shares.
pub struct OldKeys<'a, 'd> {
    old: &'a [Symbol<'d>],
    ids: Vec<u32>,
    /// Per key: its first symbol's index and its id (as in `key_ids`).
    table: hashbrown::HashTable<(u32, u32)>,
    groups: u32,
}

impl<'a, 'd> OldKeys<'a, 'd> {
    /// The keys of `old`'s symbols.
    pub fn new(old: &'a [Symbol<'d>]) -> Self {
        let mut table: hashbrown::HashTable<(u32, u32)> =
            hashbrown::HashTable::with_capacity(old.len());
        let mut groups = 0u32;
        let ids = (0..old.len())
            .map(|i| id_in(&mut table, old, i, &mut groups))
            .collect();
        OldKeys {
            old,
            ids,
            table,
            groups,
        }
    }

    /// The key id of each of `new`'s symbols, keys of the old build keeping their ids
    /// and new ones numbered after them; and how many keys there are. The ids are not
    /// `key_ids`' numbers, but equal exactly when those are, which is all the pairing
    /// and its users compare.
    fn new_ids(&self, new: &[Symbol<'d>]) -> (Vec<u32>, u32) {
        let mut extra: hashbrown::HashTable<(u32, u32)> = hashbrown::HashTable::new();
        let mut groups = self.groups;
        let ids = new
            .iter()
            .enumerate()
            .map(|(j, s)| {
                let k = key(s);
                match self
                    .table
                    .find(key_hash(s), |&(e, _)| key(&self.old[e as usize]) == k)
                {
                    Some(&(_, id)) => id,
                    None => id_in(&mut extra, new, j, &mut groups),
                }
            })
            .collect();
        (ids, groups)
    }
}

/// The id of the key of `list[i]` in `table` (entries: an index into `list` holding
/// the key, and its id); a key not there yet is given the id `*next`, which moves on.
fn id_in(
    table: &mut hashbrown::HashTable<(u32, u32)>,
    list: &[Symbol<'_>],
    i: usize,
    next: &mut u32,
) -> u32 {
    let k = key(&list[i]);
    let at = |e: u32| &list[e as usize];
    match table.entry(
        key_hash(&list[i]),
        |&(e, _)| key(at(e)) == k,
        |&(e, _)| key_hash(at(e)),
    ) {
        hashbrown::hash_table::Entry::Occupied(e) => e.get().1,
        hashbrown::hash_table::Entry::Vacant(e) => {
            e.insert((i as u32, *next));
            *next += 1;
            *next - 1
        }
    }
}

/// The hash of a symbol's key (FxHash, as `key_ids`).
fn key_hash(s: &Symbol<'_>) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(key(s))
}

/// Pairs the symbols of the old build with those of the new one.
pub fn pair<'a, 'd>(old: &'a [Symbol<'d>], new: &'a [Symbol<'d>]) -> Pairing<'a, 'd> {
    let (old_ids, new_ids, groups) = key_ids(old, new);
    pair_ids(old, new, (old_ids, new_ids, groups))
}

/// `pair(keys.old, new)`, the old build's keys found beforehand.
pub fn pair_from<'a, 'd>(keys: &OldKeys<'a, 'd>, new: &'a [Symbol<'d>]) -> Pairing<'a, 'd> {
    let (new_ids, groups) = keys.new_ids(new);
    pair_ids(keys.old, new, (keys.ids.clone(), new_ids, groups))
}

/// The pairing of `old` and `new` from the key id of each symbol of each (`key_ids`)
/// and how many keys there are.
fn pair_ids<'a, 'd>(
    old: &'a [Symbol<'d>],
    new: &'a [Symbol<'d>],
    (old_ids, new_ids, groups): (Vec<u32>, Vec<u32>, u32),
) -> Pairing<'a, 'd> {
    // The i-th symbol of a key in one build pairs with the i-th of that key in the
    // other (both lists are in place order: the model sorts symbols). Each key's new
    // symbols are chained in place order (`first`, `next`) and taken in turn by its old
    // symbols, in old order; a taken new symbol is marked in `next`.
    const END: u32 = u32::MAX;
    const TAKEN: u32 = u32::MAX - 1;
    let mut first = vec![END; groups as usize];
    let mut next = vec![END; new.len()];
    for (j, &k) in new_ids.iter().enumerate().rev() {
        next[j] = first[k as usize];
        first[k as usize] = j as u32;
    }
    let mut pairs: Vec<Paired<'a, 'd>> = Vec::with_capacity(old.len().min(new.len()));
    let mut removed = Vec::new();
    for (i, &k) in old_ids.iter().enumerate() {
        match first[k as usize] {
            END => removed.push(&old[i]),
            j => {
                first[k as usize] = next[j as usize];
                next[j as usize] = TAKEN;
                pairs.push(Paired {
                    old: &old[i],
                    new: &new[j as usize],
                });
            }
        }
    }
    let mut added: Vec<&'a Symbol<'d>> = new
        .iter()
        .zip(&next)
        .filter(|&(_, &n)| n != TAKEN)
        .map(|(s, _)| s)
        .collect();
    pair_leftovers(&mut pairs, &mut added, &mut removed);
    pairs.sort_by(|a, b| place_order(a.old).cmp(&place_order(b.old)));
    added.sort_by(|a, b| place_order(a).cmp(&place_order(b)));
    removed.sort_by(|a, b| place_order(a).cmp(&place_order(b)));
    Pairing {
        pairs,
        added,
        removed,
        keys: [(old, old_ids), (new, new_ids)],
    }
}

impl<'a, 'd> Pairing<'a, 'd> {
    /// This pairing of OLD and NEW, made for `moved`: a build holding NEW's symbols in
    /// NEW's order under NEW's names, some at other places (a prediction that aligned
    /// objects). It is what `pair_from` gives for `moved` (the keys, and so the pairs,
    /// are the same), without keying its symbols again: only the added ones, kept in
    /// place order, are sorted again.
    pub fn moved_to<'m>(&self, moved: &'m [Symbol<'d>]) -> Pairing<'m, 'd>
    where
        'a: 'm,
    {
        let new = self.keys[1].0;
        let at = |s: &Symbol<'d>| index_in(new, s);
        let pairs = self
            .pairs
            .iter()
            .map(|p| Paired {
                old: p.old,
                new: &moved[at(p.new)],
            })
            .collect();
        // In `pair_ids` the added symbols are sorted from symbol order: ties stay in it.
        let mut added: Vec<(usize, &'m Symbol<'d>)> =
            self.added.iter().map(|s| (at(s), &moved[at(s)])).collect();
        added.sort_by(|a, b| (place_order(a.1), a.0).cmp(&(place_order(b.1), b.0)));
        Pairing {
            pairs,
            added: added.into_iter().map(|(_, s)| s).collect(),
            removed: self.removed.clone(),
            keys: [
                (self.keys[0].0, self.keys[0].1.clone()),
                (moved, self.keys[1].1.clone()),
            ],
        }
    }
}

/// The order the pairing keeps its lists in: space, place, name, file.
fn place_order<'d>(s: &Symbol<'d>) -> (Space, u64, &'d str, Option<&'d str>) {
    (s.space, s.place, s.name, s.file)
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
            compile_unit: unit,
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

    /// A global data symbol `name` at `place`.
    fn global(name: &'static str, place: u64) -> Symbol<'static> {
        Symbol {
            file: None,
            unit: None,
            group: 0,
            binding: crate::model::Binding::Global,
            address: place,
            place,
            name,
            ..local(name, None, "x.c")
        }
    }

    /// A pairing made for a build whose symbols moved (`moved_to`) is the one made from
    /// the old build's keys: the same pairs, the added ones in the moved places'
    /// order, the same key ids.
    #[test]
    fn a_pairing_moved_to_moved_symbols_is_the_pairing_of_them() {
        let old = [
            global("a", 0x1000),
            global("b.3", 0x1040),
            global("gone", 0x1080),
        ];
        let new = [
            global("a", 0x2000),
            global("b.4", 0x2040),
            global("p", 0x2080),
            global("q", 0x20c0),
        ];
        // `p` aligned past `q`: the added ones change order.
        let mut moved = new.clone();
        moved[2].place = 0x2100;
        let keys = OldKeys::new(&old);
        let made = pair_from(&keys, &moved);
        let from = pair_from(&keys, &new).moved_to(&moved);
        let said = |p: &Pairing<'_, 'static>| {
            let key = |side: Side, s: &Symbol<'_>| p.key_id(side, s);
            (
                p.pairs
                    .iter()
                    .map(|x| (x.old.name, x.new.name, x.new.place, key(Side::New, x.new)))
                    .collect::<Vec<_>>(),
                p.added
                    .iter()
                    .map(|s| (s.name, s.place, key(Side::New, s)))
                    .collect::<Vec<_>>(),
                p.removed
                    .iter()
                    .map(|s| (s.name, key(Side::Old, s)))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(said(&from), said(&made));
        assert_eq!(
            said(&from).1,
            [
                ("q", 0x20c0, made.key_id(Side::New, &moved[3])),
                ("p", 0x2100, made.key_id(Side::New, &moved[2]))
            ]
        );
        assert_eq!(
            said(&from).0,
            [("a", "a", 0x2000, 0), ("b.3", "b.4", 0x2040, 1)]
        );
        // Every pair's new symbol is the moved build's own.
        assert!(
            from.pairs
                .iter()
                .all(|x| moved.as_ptr_range().contains(&(x.new as *const _)))
        );
    }

    #[test]
    fn symbols_sharing_a_key_pair_in_place_order_and_the_rest_are_left_over() {
        let places = |list: &[&Symbol<'_>]| list.iter().map(|s| s.place).collect::<Vec<_>>();
        let pairs = |p: &Pairing<'_, 'static>| -> Vec<(&'static str, u64, u64)> {
            p.pairs
                .iter()
                .map(|p| (p.old.name, p.old.place, p.new.place))
                .collect()
        };
        // Three `x.12`-like clones in the old build, two in the new, around a `y`.
        let old = [
            global("x.1", 0x1000),
            global("x.2", 0x2000),
            global("y", 0x2800),
            global("x.3", 0x3000),
        ];
        let new = [
            global("x.7", 0x1100),
            global("y", 0x1900),
            global("x.8", 0x2100),
        ];
        let p = pair(&old, &new);
        assert_eq!(
            pairs(&p),
            [
                ("x.1", 0x1000, 0x1100),
                ("x.2", 0x2000, 0x2100),
                ("y", 0x2800, 0x1900)
            ]
        );
        assert_eq!(places(&p.removed), [0x3000]);
        assert!(p.added.is_empty());
        // The other way round: the third new one is added.
        let p = pair(&new, &old);
        assert_eq!(
            pairs(&p),
            [
                ("x.7", 0x1100, 0x1000),
                ("y", 0x1900, 0x2800),
                ("x.8", 0x2100, 0x2000)
            ]
        );
        assert_eq!(places(&p.added), [0x3000]);
        assert!(p.removed.is_empty());
        // Equal key ids exactly for equal keys, across the builds.
        assert_eq!(p.key_id(Side::Old, &new[0]), p.key_id(Side::New, &old[3]));
        assert_ne!(p.key_id(Side::Old, &new[0]), p.key_id(Side::New, &old[2]));
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
