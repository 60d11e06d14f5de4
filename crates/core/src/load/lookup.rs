//! `show --struct NAME` without decoding every unit. A unit whose bytes hold no trace
//! of the name (its `.debug_str` offset, or the name inline) is not walked; the others
//! get a raw walk that reads only the names of struct, union and typedef entries and
//! jumps over subtrees without a trace. A unit that defines the name decodes only what
//! that struct's layout and pahole text need (its members, their types through
//! typedefs, qualifiers and arrays, nested and by-value aggregates; of a pointer's
//! target only what spells it). The sparse table then goes through the same
//! `TypeTable` fingerprint and layout as a whole unit, so every distinct layout of the
//! name is found and built exactly as the full read builds it.

use gimli::{AttributeValue, DwTag, UnitOffset, constants as dw};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::LoadOptions;
use super::StructFilter;
use super::dies::{self, Die, Dwarf, NONE, Reader, Unit, UnitDies};
use super::layouts::TypeTable;
use super::tree::{Entry, Tree};
use super::unit::{
    Acc, Builder, Context, code_ranges, file_name, is_aggregate, language_read, stored_bytes,
    typedef_layout, unit_path,
};
use crate::error::{Error, Result};

/// The exact names to look up, when the options allow the sparse read: structs of
/// exactly these names (and typedefs of them), no variables, no typedef dump.
pub(super) fn names(options: &LoadOptions) -> Option<Vec<Vec<u8>>> {
    let StructFilter::Named(names) = &options.structs else {
        return None;
    };
    if options.variables || options.all_typedefs {
        return None;
    }
    let mut all: Vec<Vec<u8>> = names
        .iter()
        .chain(&options.typedefs)
        .map(|n| n.as_bytes().to_vec())
        .collect();
    all.sort();
    all.dedup();
    Some(all)
}

/// Where the wanted names are: inline bytes, or every offset in `.debug_str` and
/// `.debug_line_str` at which one of them starts (a linker may merge a name into the
/// tail of a longer string, so offsets inside other strings count too).
struct Wanted {
    names: Vec<Vec<u8>>,
    str_offsets: Vec<usize>,
    line_str_offsets: Vec<usize>,
    /// What a unit's bytes must contain to refer to a wanted name: each string
    /// offset as a 4-byte (`[0]`) and an 8-byte (`[1]`) value in the file's byte
    /// order, and each name inline with its NUL.
    traces: [Vec<memchr::memmem::Finder<'static>>; 2],
}

impl Wanted {
    fn new(
        names: &[Vec<u8>],
        debug_str: &[u8],
        debug_line_str: &[u8],
        little_endian: bool,
    ) -> Wanted {
        let offsets = |data: &[u8]| {
            let mut found: Vec<usize> = Vec::new();
            for n in names {
                let mut needle = n.clone();
                needle.push(0);
                found.extend(memchr::memmem::find_iter(data, &needle));
            }
            found.sort_unstable();
            found
        };
        let str_offsets = offsets(debug_str);
        let line_str_offsets = offsets(debug_line_str);
        let traces = [4, 8].map(|width| {
            let mut t: Vec<Vec<u8>> = str_offsets
                .iter()
                .chain(&line_str_offsets)
                .map(|&o| stored_bytes(o as u64, width, little_endian))
                .collect();
            t.extend(names.iter().map(|n| [n.as_slice(), &[0]].concat()));
            t.sort();
            t.dedup();
            t.iter()
                .map(|p| memchr::memmem::Finder::new(p).into_owned())
                .collect()
        });
        Wanted {
            names: names.to_vec(),
            str_offsets,
            line_str_offsets,
            traces,
        }
    }

    /// Where in the unit whose bytes are `data` a wanted name may be referred to: the
    /// unit offsets at which one of its string offsets, or the name itself, occurs
    /// (sorted; empty: no entry of the unit carries the name). `None` for units that
    /// name strings by index (`DW_FORM_strx`): anywhere.
    fn places(&self, unit: &Unit<'_>, data: &[u8]) -> Option<Vec<usize>> {
        if unit.str_offsets_base.0 != 0 {
            return None;
        }
        let width = usize::from(unit.encoding().format == gimli::Format::Dwarf64);
        let mut at: Vec<usize> = self.traces[width]
            .iter()
            .flat_map(|f| f.find_iter(data))
            .collect();
        at.sort_unstable();
        Some(at)
    }

    /// True when the `DW_AT_name` value is one of the names.
    fn matches(
        &self,
        dwarf: &Dwarf<'_>,
        unit: &Unit<'_>,
        value: AttributeValue<Reader<'_>>,
    ) -> gimli::Result<bool> {
        Ok(match value {
            AttributeValue::String(s) => self.names.iter().any(|n| n.as_slice() == s.slice()),
            AttributeValue::DebugStrRef(o) => self.str_offsets.binary_search(&o.0).is_ok(),
            AttributeValue::DebugLineStrRef(o) => self.line_str_offsets.binary_search(&o.0).is_ok(),
            AttributeValue::DebugStrOffsetsIndex(i) => self
                .str_offsets
                .binary_search(&dwarf.string_offset(unit, i)?.0)
                .is_ok(),
            _ => false,
        })
    }
}

/// Reads the units (in parallel) for the names; what `dwarf::read` would have
/// accumulated for a filter of those names.
pub(super) fn read<'d>(
    ctx: &Context<'_, 'd>,
    headers: Vec<gimli::UnitHeader<Reader<'d>>>,
    names: &[Vec<u8>],
    dwarf_err: &(dyn Fn(u64, gimli::Error) -> Error + Sync),
) -> Result<Acc<'d>> {
    let wanted = Wanted::new(
        names,
        ctx.strings.debug_str,
        ctx.strings.debug_line_str,
        ctx.little_endian,
    );
    headers
        .into_par_iter()
        .enumerate()
        .map(|(i, header)| {
            let offset = header.offset().0 as u64;
            read_unit(ctx, &wanted, i, header).map_err(|e| dwarf_err(offset, e))
        })
        .try_fold(Acc::default, |acc, unit| unit.map(|u| acc.merge(u)))
        .try_reduce(Acc::default, |a, b| Ok(a.merge(b)))
}

/// A struct, union or typedef entry whose name is wanted.
#[derive(Clone, Copy)]
struct Hit {
    offset: u32,
    typedef: bool,
}

/// Offsets of the struct, union and typedef entries of `unit` with a wanted name.
/// With `places` (see `Wanted::places`), the walk jumps over each subtree that holds
/// none of them (by its `DW_AT_sibling`, which GCC gives entries with children) and
/// stops after the last.
fn find(
    dwarf: &Dwarf<'_>,
    unit: &Unit<'_>,
    wanted: &Wanted,
    places: Option<&[usize]>,
) -> gimli::Result<Vec<Hit>> {
    let mut raw = unit.entries_raw(None)?;
    let mut hits = Vec::new();
    let end = unit.header.length_including_self();
    while !raw.is_empty() {
        let offset = raw.next_offset().0;
        if places.is_some_and(|p| p.last().is_none_or(|&l| l < offset)) {
            break;
        }
        let Some(abbrev) = raw.read_abbreviation()? else {
            continue;
        };
        let specs = abbrev.attributes();
        let tag = abbrev.tag();
        let candidate = matches!(
            tag,
            dw::DW_TAG_structure_type
                | dw::DW_TAG_class_type
                | dw::DW_TAG_union_type
                | dw::DW_TAG_typedef
        );
        let jumps = places.is_some() && abbrev.has_children();
        let (mut name, mut sibling) = (None, None);
        let mut from = 0;
        for (k, spec) in specs.iter().enumerate() {
            let wanted_here = match spec.name() {
                dw::DW_AT_name => candidate,
                dw::DW_AT_sibling => jumps,
                _ => false,
            };
            if wanted_here {
                raw.skip_attributes(&specs[from..k])?;
                let attr = raw.read_attribute_inline(*spec)?;
                from = k + 1;
                match attr.value() {
                    AttributeValue::UnitRef(o) if spec.name() == dw::DW_AT_sibling => {
                        sibling = Some(o.0)
                    }
                    v if spec.name() == dw::DW_AT_name => name = Some(v),
                    _ => {}
                }
            }
        }
        raw.skip_attributes(&specs[from..])?;
        if let Some(v) = name
            && wanted.matches(dwarf, unit, v)?
        {
            hits.push(Hit {
                offset: u32::try_from(offset).unwrap_or(NONE),
                typedef: tag == dw::DW_TAG_typedef,
            });
        }
        if let (Some(p), Some(next)) = (places, sibling)
            && next > offset
            && next < end
        {
            let i = p.partition_point(|&x| x < offset);
            if p.get(i).is_none_or(|&x| x >= next) {
                raw = unit.entries_raw(Some(UnitOffset(next)))?;
            }
        }
    }
    Ok(hits)
}

fn read_unit<'d>(
    ctx: &Context<'_, 'd>,
    wanted: &Wanted,
    index: usize,
    header: gimli::UnitHeader<Reader<'d>>,
) -> gimli::Result<Acc<'d>> {
    let (dwarf, options, claims) = (ctx.dwarf, ctx.options, ctx.claims);
    let unit = dwarf.unit(header)?;
    let mut acc = Acc::default();
    acc.names.push((index, unit_path(&unit)));
    code_ranges(dwarf, &unit, index, &mut acc.ranges)?;
    let Some(rust) = language_read(&unit, options)? else {
        return Ok(acc);
    };
    let start = unit.header.offset().0;
    let end = start.saturating_add(unit.header.length_including_self());
    let data = ctx.debug_info.get(start..end).unwrap_or(&[]);
    let places = wanted.places(&unit, data);
    if places.as_ref().is_some_and(Vec::is_empty) {
        return Ok(acc);
    }
    let hits = find(dwarf, &unit, wanted, places.as_deref())?;
    if hits.is_empty() {
        return Ok(acc);
    }
    let mut sparse = Sparse::new(dwarf, &unit, ctx.strings, options.pahole_text);
    for hit in &hits {
        if hit.typedef {
            sparse.typedef(hit.offset)?;
        } else {
            sparse.want(hit.offset, Want::Full)?;
        }
        sparse.drain()?;
    }
    let dies = sparse.finish(ctx.strings);
    let files = |i: u64| file_name(dwarf, &unit, i);
    let table = TypeTable::new(
        &dies,
        u64::from(unit.encoding().address_size),
        ctx.little_endian,
        &files,
        options.pahole_text,
    );
    let builder = Builder {
        claims,
        table: &table,
        unit: index,
        rust,
    };
    // As `dwarf::read_unit`: structs first, then typedefs, each in offset order.
    for hit in hits.iter().filter(|h| !h.typedef) {
        if let Some(i) = dies.index_of(hit.offset)
            && let die = &dies.dies[i]
            && is_aggregate(die.tag)
            && !die.declaration
            && let Some(name) = dies.name(die)
            && options.lists(name, false)
        {
            builder.add(&mut acc, i, die.name, || Some(name), false);
        }
    }
    for hit in hits.iter().filter(|h| h.typedef) {
        if let Some(at) = dies.index_of(hit.offset)
            && let die = &dies.dies[at]
            && let Some((i, name)) = typedef_layout(options, &dies, &table, die)
        {
            builder.add(&mut acc, i, die.name, || Some(name), true);
        }
    }
    Ok(acc)
}

/// How much of an entry is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// What spells its name: the entry, and for pointers, qualifiers, arrays and
    /// function types what they are made of (spelled in turn).
    Name,
    /// The target of a pointer: its name, or all of it when it is an anonymous
    /// struct or union (pahole lists those).
    Pointee,
    /// What its size, alignment and tail padding need: its subtree and, transitively,
    /// the types its entries hold by value (not what pointers point at). A named
    /// struct held by value is only measured, never printed.
    Storage,
    /// The type of a printed member: its storage, its spelling, and all of it when it
    /// is an anonymous struct or union (printed inline).
    Member,
    /// A printed struct or union: its storage, and each member as `Member`.
    Full,
}

/// What has been done for an entry (bits).
const SPELLED: u8 = 1;
const STORED: u8 = 2;
const PRINTED: u8 = 4;
const MEMBER: u8 = 8;

fn is_pointer(tag: DwTag) -> bool {
    matches!(
        tag,
        dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type
            | dw::DW_TAG_ptr_to_member_type
    )
}

/// Entries whose target is part of their spelling.
fn spells_target(tag: DwTag) -> bool {
    is_pointer(tag)
        || matches!(
            tag,
            dw::DW_TAG_const_type
                | dw::DW_TAG_volatile_type
                | dw::DW_TAG_restrict_type
                | dw::DW_TAG_atomic_type
                | dw::DW_TAG_array_type
                | dw::DW_TAG_subroutine_type
        )
}

/// Deepest typedef/qualifier chain followed from a typedef (as `TypeTable::strip`).
const MAX_CHAIN: usize = 48;

/// The part of one unit read so far, by unit offset.
struct Sparse<'a, 'd> {
    dwarf: &'a Dwarf<'d>,
    unit: &'a Unit<'d>,
    strings: dies::Strings<'d>,
    enumerators: bool,
    dies: Vec<Die<'d>>,
    /// Unit offset of each entry's parent when that parent is recorded (`NONE` if not,
    /// or not known yet).
    parents: Vec<u32>,
    /// Index in `dies` and what was done for the entry (`SPELLED`, ...).
    seen: FxHashMap<u32, (usize, u8)>,
    queue: Vec<(u32, Want)>,
}

impl<'a, 'd> Sparse<'a, 'd> {
    fn new(
        dwarf: &'a Dwarf<'d>,
        unit: &'a Unit<'d>,
        strings: dies::Strings<'d>,
        enumerators: bool,
    ) -> Self {
        Sparse {
            dwarf,
            unit,
            strings,
            enumerators,
            dies: Vec::new(),
            parents: Vec::new(),
            seen: FxHashMap::default(),
            queue: Vec::new(),
        }
    }

    /// Reads the entry at `offset` (with its subtree when `subtree`) and returns the
    /// indices of the recorded entries among them, root first. Entries read before
    /// are not decoded again.
    fn read(&mut self, offset: u32, subtree: bool) -> gimli::Result<Vec<usize>> {
        let mut tree = Tree::<u32>::subtree(self.unit, offset)?;
        let mut got = Vec::new();
        while let Some(entry) = tree.next()? {
            let at = u32::try_from(entry.offset).unwrap_or(NONE);
            let tag = entry.tag();
            let recorded = dies::is_recorded(tag, entry.parent_tag(), self.enumerators)
                && tag != dw::DW_TAG_variable;
            let mut recorded_at = NONE;
            if recorded {
                let i = self.record(&mut tree, &entry, at)?;
                if let Some((p, _)) = entry.parent
                    && p != NONE
                {
                    self.parents[i] = p;
                }
                got.push(i);
                recorded_at = at;
            } else {
                tree.skip(&entry)?;
            }
            if !subtree {
                break;
            }
            // An open parent is marked with its offset if recorded, else `NONE`.
            tree.open(&entry, recorded_at);
        }
        Ok(got)
    }

    /// The index of the recorded entry at `at`, decoding its attributes unless an
    /// earlier read did.
    fn record(
        &mut self,
        tree: &mut Tree<'a, 'd, u32>,
        entry: &Entry<'a, u32>,
        at: u32,
    ) -> gimli::Result<usize> {
        if let Some(&(i, _)) = self.seen.get(&at) {
            tree.skip(entry)?;
            return Ok(i);
        }
        let mut die = Die::default();
        (die.offset, die.tag) = (at, entry.tag());
        dies::read_wanted(
            self.dwarf,
            self.unit,
            &self.strings,
            tree.raw(),
            entry.abbrev,
            &mut die,
        )?;
        let i = self.dies.len();
        self.dies.push(die);
        self.parents.push(NONE);
        self.seen.insert(at, (i, 0));
        Ok(i)
    }

    /// Reads the entry at `offset` alone (if not read yet); its index.
    fn entry(&mut self, offset: u32) -> gimli::Result<Option<usize>> {
        if let Some(&(i, _)) = self.seen.get(&offset) {
            return Ok(Some(i));
        }
        Ok(self.read(offset, false)?.first().copied())
    }

    /// Sets `bit` of the entry at `index`; false when it was set already.
    fn mark(&mut self, index: usize, bit: u8) -> bool {
        let at = self.dies[index].offset;
        match self.seen.get_mut(&at) {
            Some(s) if s.1 & bit == 0 => {
                s.1 |= bit;
                true
            }
            _ => false,
        }
    }

    /// Reads what `want` asks of the entry at `offset`, queueing what it refers to.
    fn want(&mut self, offset: u32, want: Want) -> gimli::Result<()> {
        if offset == NONE {
            return Ok(());
        }
        let Some(i) = self.entry(offset)? else {
            return Ok(());
        };
        let (tag, ty) = (self.dies[i].tag, self.dies[i].raw_ty());
        let anonymous = self.dies[i].name.is_none() && is_aggregate(tag);
        match want {
            Want::Name => {
                if !self.mark(i, SPELLED) {
                    return Ok(());
                }
                if matches!(tag, dw::DW_TAG_array_type | dw::DW_TAG_subroutine_type) {
                    // Subranges and parameters: their counts and types spell it.
                    for c in self.read(offset, true)?.into_iter().skip(1) {
                        if self.dies[c].tag != dw::DW_TAG_subrange_type {
                            self.queue.push((self.dies[c].raw_ty(), Want::Name));
                        }
                    }
                }
                if spells_target(tag) {
                    self.queue.push((ty, Want::Name));
                }
            }
            Want::Pointee => {
                self.queue
                    .push((offset, if anonymous { Want::Full } else { Want::Name }));
            }
            Want::Member => {
                if !self.mark(i, MEMBER) {
                    return Ok(());
                }
                if anonymous {
                    self.queue.push((offset, Want::Full));
                    return Ok(());
                }
                self.queue.push((offset, Want::Storage));
                self.queue.push((offset, Want::Name));
                match tag {
                    dw::DW_TAG_const_type | dw::DW_TAG_volatile_type | dw::DW_TAG_array_type => {
                        self.queue.push((ty, Want::Member))
                    }
                    t if is_pointer(t) => self.queue.push((ty, Want::Pointee)),
                    _ => {}
                }
            }
            Want::Storage | Want::Full => {
                let full = want == Want::Full;
                if !self.mark(i, if full { PRINTED } else { STORED }) {
                    return Ok(());
                }
                for k in self.read(offset, true)? {
                    let d = &self.dies[k];
                    let edge = match d.tag {
                        t if is_pointer(t) => full.then_some(Want::Pointee),
                        dw::DW_TAG_subroutine_type
                        | dw::DW_TAG_formal_parameter
                        | dw::DW_TAG_unspecified_parameters
                        | dw::DW_TAG_subrange_type => full.then_some(Want::Name),
                        _ if full => Some(Want::Member),
                        _ => Some(Want::Storage),
                    };
                    if let Some(edge) = edge {
                        self.queue.push((d.raw_ty(), edge));
                    }
                    // Its subtree is read and its references queued.
                    self.mark(k, STORED);
                    if full {
                        self.mark(k, PRINTED);
                    }
                }
            }
        }
        Ok(())
    }

    /// A typedef of a wanted name: whole only when it names an anonymous struct or
    /// union (what `show --struct atomic_t` lists), else its chain's names.
    fn typedef(&mut self, offset: u32) -> gimli::Result<()> {
        let mut at = offset;
        for _ in 0..MAX_CHAIN {
            let Some(i) = self.entry(at)? else {
                return Ok(());
            };
            let d = &self.dies[i];
            match d.tag {
                dw::DW_TAG_typedef
                | dw::DW_TAG_const_type
                | dw::DW_TAG_volatile_type
                | dw::DW_TAG_restrict_type
                | dw::DW_TAG_atomic_type => at = d.raw_ty(),
                t if is_aggregate(t) && d.name.is_none() && !d.declaration => {
                    return self.want(offset, Want::Full);
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    /// Reads everything queued. A reference that leads to no readable entry (out of
    /// the unit, malformed) stays unresolved, as the full read leaves it.
    fn drain(&mut self) -> gimli::Result<()> {
        while let Some((offset, want)) = self.queue.pop() {
            self.want(offset, want).ok();
        }
        Ok(())
    }

    /// The table: entries in offset order, references and child lists as indices.
    fn finish(mut self, strings: dies::Strings<'d>) -> UnitDies<'d> {
        let mut order: Vec<usize> = (0..self.dies.len()).collect();
        order.sort_unstable_by_key(|&i| self.dies[i].offset);
        let mut sorted: Vec<Die<'d>> = order
            .iter()
            .map(|&i| std::mem::take(&mut self.dies[i]))
            .collect();
        let parents: Vec<u32> = order.iter().map(|&i| self.parents[i]).collect();
        let offsets: Vec<u32> = sorted.iter().map(|d| d.offset).collect();
        let index = |o: u32| -> u32 {
            if o == NONE {
                return NONE;
            }
            offsets
                .binary_search(&o)
                .map_or(NONE, |k| u32::try_from(k).unwrap_or(NONE))
        };
        for d in &mut sorted {
            d.map_refs(index);
        }
        let mut last: FxHashMap<u32, u32> = FxHashMap::default();
        for (k, &p) in parents.iter().enumerate() {
            let (p, k) = (index(p), u32::try_from(k).unwrap_or(NONE));
            if p == NONE || k == NONE {
                continue;
            }
            match last.insert(p, k) {
                Some(prev) => sorted[prev as usize].next_sibling = k,
                None => sorted[p as usize].first_child = k,
            }
        }
        UnitDies {
            dies: sorted,
            strings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{DwarfCopies, elf};
    use gimli::Section;

    #[test]
    fn names_are_found_inside_longer_strings() {
        let names = [b"list_head".to_vec()];
        let w = Wanted::new(
            &names,
            b"hlist_head\0list_head\0list_heads\0",
            b"list_head\0",
            true,
        );
        assert_eq!(w.str_offsets, [1, 11]);
        assert_eq!(w.line_str_offsets, [0]);
    }

    /// Runs `f` on each unit of testdata/old.elf (kernel.c, then other.c).
    fn with_units(path: &std::path::Path, mut f: impl FnMut(&Dwarf<'_>, &Unit<'_>, &[u8])) {
        let bytes = std::fs::read(path).expect("fixture");
        let copies = DwarfCopies::default();
        let info = elf::read(path, &bytes, &copies.0).expect("elf");
        let debug = info.debug.expect("dwarf");
        let dwarf = debug.dwarf(path).expect("sections");
        let mut headers = dwarf.units();
        while let Some(h) = headers.next().expect("header") {
            let s = debug.sections.get(".debug_str").copied().unwrap_or(&[]);
            f(&dwarf, &dwarf.unit(h).expect("unit"), s);
        }
    }

    #[test]
    fn units_without_a_trace_of_the_name_are_skipped() {
        // `user_struct` is defined in kernel.c only, `stats` in both units
        // (testdata/README.md); `no_such_struct` nowhere.
        let mut got = Vec::new();
        let old_elf = testdata!().join("old.elf");
        with_units(&old_elf, |dwarf, unit, s| {
            let info = dwarf.debug_info.reader().slice();
            let start = unit.header.offset().0;
            let data = &info[start..start + unit.header.length_including_self()];
            for name in ["user_struct", "stats", "no_such_struct"] {
                let w = Wanted::new(&[name.as_bytes().to_vec()], s, &[], true);
                got.push((name, w.places(unit, data).is_some_and(|p| !p.is_empty())));
            }
        });
        assert_eq!(
            got,
            [
                ("user_struct", true),
                ("stats", true),
                ("no_such_struct", false),
                ("user_struct", false),
                ("stats", true),
                ("no_such_struct", false)
            ]
        );
    }

    #[test]
    fn hits_are_the_entries_readelf_shows() {
        // readelf --debug-dump=info testdata/old.elf: units at 0 and 0x12f1; `stats` at
        // <dd3> and <135c>, `list_head` at <1b4> and <1332>, typedef `atomic_t` at <107>.
        let names = [
            b"atomic_t".to_vec(),
            b"list_head".to_vec(),
            b"stats".to_vec(),
        ];
        let mut got = Vec::new();
        let old_elf = testdata!().join("old.elf");
        with_units(&old_elf, |dwarf, unit, s| {
            let w = Wanted::new(&names, s, &[], true);
            let base = unit.header.offset().0;
            let info = dwarf.debug_info.reader().slice();
            let data = &info[base..base + unit.header.length_including_self()];
            let places = w.places(unit, data).expect("DW_FORM_strp names");
            // The walk that jumps over subtrees without a trace finds the same.
            let all = find(dwarf, unit, &w, None).expect("walk");
            let jumping = find(dwarf, unit, &w, Some(&places)).expect("walk");
            assert_eq!(
                all.iter().map(|h| h.offset).collect::<Vec<_>>(),
                jumping.iter().map(|h| h.offset).collect::<Vec<_>>()
            );
            for h in jumping {
                got.push((base + h.offset as usize, h.typedef));
            }
        });
        assert_eq!(
            got,
            [
                (0x107, true),
                (0x1b4, false),
                (0xdd3, false),
                (0x1332, false),
                (0x135c, false)
            ]
        );
    }

    #[test]
    fn a_matched_unit_decodes_only_what_the_struct_needs() {
        // kernel.c's `struct user_struct`: 136 bytes, 8 members (pahole -C in
        // testdata/EXPECTED.md); other.c has none. Both units' sparse tables hold
        // under a quarter of what the full read records.
        let mut sizes = Vec::new();
        let old_elf = testdata!().join("old.elf");
        with_units(&old_elf, |dwarf, unit, s| {
            let w = Wanted::new(&[b"user_struct".to_vec()], s, &[], true);
            let hits = find(dwarf, unit, &w, None).expect("walk");
            let strings = dies::Strings {
                debug_info: dwarf.debug_info.reader().slice(),
                debug_str: s,
                debug_line_str: &[],
            };
            let full = dies::read_unit(dwarf, unit, strings, true).expect("unit");
            let mut sparse = Sparse::new(dwarf, unit, strings, true);
            for h in &hits {
                sparse.want(h.offset, Want::Full).expect("read");
                sparse.drain().expect("read");
            }
            let table = sparse.finish(strings);
            let layouts: Vec<(u64, usize)> = hits
                .iter()
                .filter_map(|h| table.index_of(h.offset))
                .map(|i| &table.dies[i])
                .filter(|d| !d.declaration)
                .map(|d| (d.byte_size().unwrap_or(0), table.children(d).count()))
                .collect();
            sizes.push((layouts, table.dies.len() * 4 < full.dies.len()));
        });
        assert_eq!(sizes, [(vec![(136, 8)], true), (vec![], true)]);
    }
}
