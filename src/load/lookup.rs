//! `show --struct NAME` without decoding every unit: a raw walk of each unit reads only
//! the names of struct, union and typedef entries, and a unit that defines the name
//! decodes only what that struct's layout and pahole text need (its members, their
//! types through typedefs, qualifiers and arrays, nested and by-value aggregates; of a
//! pointer's target only what spells it). The sparse table then goes through the same
//! `TypeTable` fingerprint and layout as a whole unit, so every distinct layout of the
//! name is found and built exactly as the full read builds it.

use std::collections::HashMap;

use gimli::{AttributeValue, DwTag, UnitOffset, constants as dw};
use rayon::prelude::*;

use super::LoadOptions;
use super::StructFilter;
use super::dies::{self, Die, Dwarf, NONE, Reader, Unit, UnitDies};
use super::dwarf::{Acc, Context, claim, file_name, is_aggregate, unit_path};
use super::layouts::TypeTable;
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
}

impl Wanted {
    fn new(names: &[Vec<u8>], debug_str: &[u8], debug_line_str: &[u8]) -> Wanted {
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
        Wanted {
            names: names.to_vec(),
            str_offsets: offsets(debug_str),
            line_str_offsets: offsets(debug_line_str),
        }
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
    let wanted = Wanted::new(names, ctx.strings.debug_str, ctx.strings.debug_line_str);
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
fn find(dwarf: &Dwarf<'_>, unit: &Unit<'_>, wanted: &Wanted) -> gimli::Result<Vec<Hit>> {
    let mut raw = unit.entries_raw(None)?;
    let mut hits = Vec::new();
    while !raw.is_empty() {
        let offset = raw.next_offset().0;
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
        match specs.iter().position(|s| s.name() == dw::DW_AT_name) {
            Some(k) if candidate => {
                raw.skip_attributes(&specs[..k])?;
                let name = raw.read_attribute_inline(specs[k])?;
                raw.skip_attributes(&specs[k + 1..])?;
                if wanted.matches(dwarf, unit, name.value())? {
                    hits.push(Hit {
                        offset: u32::try_from(offset).unwrap_or(NONE),
                        typedef: tag == dw::DW_TAG_typedef,
                    });
                }
            }
            _ => raw.skip_attributes(specs)?,
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
    let mut ranges = dwarf.unit_ranges(&unit)?;
    while let Some(r) = ranges.next()? {
        if r.begin < r.end {
            acc.ranges.push((r.begin, r.end, index));
        }
    }
    let hits = find(dwarf, &unit, wanted)?;
    if hits.is_empty() {
        return Ok(acc);
    }
    let mut sparse = Sparse::new(dwarf, &unit, options.pahole_text);
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
    // As `dwarf::read_unit`: structs first, then typedefs, each in offset order.
    for hit in hits.iter().filter(|h| !h.typedef) {
        if let Some(i) = dies.index_of(hit.offset)
            && let die = &dies.dies[i]
            && is_aggregate(die.tag)
            && !die.declaration
            && let Some(name) = dies.name(die)
            && options.structs.accepts(name)
        {
            let key = (name, table.fingerprint(i));
            if !acc.has(index, &key) && claim(claims, key, index) {
                acc.add_struct(index, key, table.layout(die, 0, 0));
            }
        }
    }
    for hit in hits.iter().filter(|h| h.typedef) {
        if let Some(i) = dies.index_of(hit.offset)
            && let die = &dies.dies[i]
            && let Some(name) = dies.name(die)
            && options.typedefs.iter().any(|t| t == name)
            && let Some(t) = table.strip(die.ty())
            && is_aggregate(t.tag)
            && !t.declaration
            && t.name.is_none()
            && let Some(i) = dies.index_of(t.offset)
        {
            let key = (name, table.fingerprint(i));
            if !acc.has(index, &key) && claim(claims, key, index) {
                let mut layout = table.layout(t, 0, 0);
                layout.name = name;
                layout.typedef = true;
                acc.add_struct(index, key, layout);
            }
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
    /// Everything its size, alignment, layout and spelling need: its whole subtree
    /// and, transitively, the types its entries refer to.
    Full,
}

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
    enumerators: bool,
    dies: Vec<Die<'d>>,
    /// Unit offset of each entry's parent when that parent is recorded (`NONE` if not,
    /// or not known yet).
    parents: Vec<u32>,
    /// Index in `dies` and whether the entry was read whole (`Want::Full`).
    seen: HashMap<u32, (usize, bool)>,
    queue: Vec<(u32, Want)>,
}

impl<'a, 'd> Sparse<'a, 'd> {
    fn new(dwarf: &'a Dwarf<'d>, unit: &'a Unit<'d>, enumerators: bool) -> Self {
        Sparse {
            dwarf,
            unit,
            enumerators,
            dies: Vec::new(),
            parents: Vec::new(),
            seen: HashMap::new(),
            queue: Vec::new(),
        }
    }

    /// Reads the entry at `offset` (with its subtree when `subtree`) and returns the
    /// indices of the recorded entries among them, root first. Entries read before
    /// are not decoded again.
    fn read(&mut self, offset: u32, subtree: bool) -> gimli::Result<Vec<usize>> {
        let mut raw = self.unit.entries_raw(Some(UnitOffset(offset as usize)))?;
        let mut got = Vec::new();
        // Open entries with children: (depth, offset if recorded else NONE, tag).
        let mut stack: Vec<(isize, u32, DwTag)> = Vec::new();
        let mut first = true;
        while !raw.is_empty() {
            let depth = raw.next_depth();
            if !first && depth <= 0 {
                break;
            }
            first = false;
            let at = u32::try_from(raw.next_offset().0).unwrap_or(NONE);
            let Some(abbrev) = raw.read_abbreviation()? else {
                continue;
            };
            while stack.last().is_some_and(|(d, _, _)| *d >= depth) {
                stack.pop();
            }
            let parent = stack.last().copied();
            let tag = abbrev.tag();
            let recorded = dies::is_recorded(tag, parent.map(|p| p.2), self.enumerators)
                && tag != dw::DW_TAG_variable;
            let mut recorded_at = NONE;
            if recorded {
                let i = match self.seen.get(&at) {
                    Some(&(i, _)) => {
                        raw.skip_attributes(abbrev.attributes())?;
                        i
                    }
                    None => {
                        let mut die = Die::default();
                        (die.offset, die.tag) = (at, tag);
                        let specs = abbrev.attributes();
                        let mut skip_from = 0;
                        for (k, spec) in specs.iter().enumerate() {
                            if dies::wanted(spec.name(), tag) {
                                raw.skip_attributes(&specs[skip_from..k])?;
                                let attr = raw.read_attribute_inline(*spec)?;
                                dies::read_attr(self.dwarf, self.unit, &mut die, attr)?;
                                skip_from = k + 1;
                            }
                        }
                        raw.skip_attributes(&specs[skip_from..])?;
                        let i = self.dies.len();
                        self.dies.push(die);
                        self.parents.push(NONE);
                        self.seen.insert(at, (i, false));
                        i
                    }
                };
                if let Some((_, p, _)) = parent
                    && p != NONE
                {
                    self.parents[i] = p;
                }
                got.push(i);
                recorded_at = at;
            } else {
                raw.skip_attributes(abbrev.attributes())?;
            }
            if !subtree {
                break;
            }
            if abbrev.has_children() {
                stack.push((depth, recorded_at, tag));
            }
        }
        Ok(got)
    }

    /// Reads what `want` asks of the entry at `offset`, queueing what it refers to.
    fn want(&mut self, offset: u32, want: Want) -> gimli::Result<()> {
        if offset == NONE {
            return Ok(());
        }
        if want == Want::Full {
            if matches!(self.seen.get(&offset), Some((_, true))) {
                return Ok(());
            }
            for i in self.read(offset, true)? {
                let d = &self.dies[i];
                let edge = match d.tag {
                    t if is_pointer(t) => Want::Pointee,
                    dw::DW_TAG_subroutine_type
                    | dw::DW_TAG_formal_parameter
                    | dw::DW_TAG_subrange_type => Want::Name,
                    _ => Want::Full,
                };
                self.queue.push((d.raw_ty(), edge));
                let at = d.offset;
                if let Some(s) = self.seen.get_mut(&at) {
                    s.1 = true;
                }
            }
            return Ok(());
        }
        let i = match self.seen.get(&offset) {
            Some(&(i, _)) => i,
            None => {
                let Some(&i) = self.read(offset, false)?.first() else {
                    return Ok(());
                };
                let tag = self.dies[i].tag;
                if matches!(tag, dw::DW_TAG_array_type | dw::DW_TAG_subroutine_type) {
                    // Subranges and parameters: their counts and types spell it.
                    for c in self.read(offset, true)?.into_iter().skip(1) {
                        self.queue.push((self.dies[c].raw_ty(), Want::Name));
                    }
                }
                if spells_target(tag) {
                    self.queue.push((self.dies[i].raw_ty(), Want::Name));
                }
                i
            }
        };
        let d = &self.dies[i];
        if want == Want::Pointee && d.name.is_none() && is_aggregate(d.tag) {
            self.queue.push((offset, Want::Full));
        }
        Ok(())
    }

    /// A typedef of a wanted name: whole only when it names an anonymous struct or
    /// union (what `show --struct atomic_t` lists), else its chain's names.
    fn typedef(&mut self, offset: u32) -> gimli::Result<()> {
        let mut at = offset;
        for _ in 0..MAX_CHAIN {
            self.want(at, Want::Name)?;
            let Some(&(i, _)) = self.seen.get(&at) else {
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

    /// Reads everything queued.
    fn drain(&mut self) -> gimli::Result<()> {
        while let Some((offset, want)) = self.queue.pop() {
            self.want(offset, want)?;
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
        let mut last: HashMap<u32, u32> = HashMap::new();
        for (k, &p) in parents.iter().enumerate() {
            let (p, k) = (index(p), k as u32);
            if p == NONE {
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
