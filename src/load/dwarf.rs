//! The DWARF side of loading: parse unit headers, read units in parallel, build the
//! struct layouts and variables each needs, and merge them into a deduplicated,
//! deterministically ordered set (the copy from the lowest unit wins).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use gimli::{EndianSlice, RunTimeEndian, constants as dw};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::LoadOptions;
use super::StructFilter;
use super::dies::{self, Dwarf, Name, Strings, Unit};
use super::elf::DebugSections;
use super::layouts::TypeTable;
use crate::error::{Error, Result};
use crate::model::{StructId, StructLayout, Variable};

/// A struct told apart from others of its name by a hash of its whole layout. The name
/// is where it is stored (a string offset is one string in a vmlinux whose linker merged
/// strings: compared without reading it); `finish` merges what only that tells apart.
pub(super) type Key = (Name, u64);

/// Where a layout was first seen: unit index and the offset of its entry there.
pub(super) type Place = (usize, u32);

/// A layout's name and `content_fingerprint`: equal exactly when the layouts are.
pub(super) type Content<'d> = (&'d str, u64);

pub(crate) struct Types<'d> {
    pub structs: Vec<StructLayout<'d>>,
    pub variables: Vec<Variable<'d>>,
    pub units: usize,
    /// Where each compile unit came from: its `DW_AT_name` path and code ranges.
    pub sources: UnitSources<'d>,
}

/// The compile unit of code addresses and of variables, to tell apart local symbols
/// whose `STT_FILE` basenames are equal (three `amd.c` in a kernel).
#[derive(Debug, Default)]
pub(crate) struct UnitSources<'d> {
    /// `DW_AT_name` of each unit, by unit index.
    pub names: Vec<Option<&'d str>>,
    /// Code ranges `[start, end)` with their unit index, sorted.
    pub ranges: Vec<(u64, u64, usize)>,
    /// Variables (address, name) with their unit index, sorted.
    pub variables: Vec<(u64, &'d str, usize)>,
}

impl<'d> UnitSources<'d> {
    /// The unit path of the code at `address`.
    pub fn of_code(&self, address: u64) -> Option<&'d str> {
        let i = self.ranges.partition_point(|r| r.0 <= address);
        let (_, end, unit) = *self.ranges.get(i.checked_sub(1)?)?;
        (address < end).then(|| self.names.get(unit).copied().flatten())?
    }

    /// The unit path of the variable `name` at `address`.
    pub fn of_variable(&self, address: u64, name: &str) -> Option<&'d str> {
        let i = self.variables.partition_point(|v| v.0 < address);
        self.variables[i..]
            .iter()
            .take_while(|v| v.0 == address)
            .find(|v| {
                v.1 == name
                    || name
                        .strip_prefix(v.1)
                        .is_some_and(|rest| rest.starts_with('.'))
            })
            .and_then(|v| self.names.get(v.2).copied().flatten())
    }
}

/// The lowest unit that has built each layout so far, shared by all workers: a layout
/// is built again only by a unit earlier than every unit that built it before.
pub(super) type Claims<'d> = Mutex<FxHashMap<Key, usize>>;

/// True when `unit` should build `key`: no unit at or before it has.
fn claim<'d>(claims: &Claims<'d>, key: Key, unit: usize) -> bool {
    let mut map = claims.lock().unwrap_or_else(|e| e.into_inner());
    match map.get(&key) {
        Some(&u) if u <= unit => false,
        _ => {
            map.insert(key, unit);
            true
        }
    }
}

/// What builds one unit's layouts: each distinct one once, by the lowest unit.
pub(super) struct Builder<'a, 'u, 'd> {
    pub claims: &'a Claims<'d>,
    pub table: &'a TypeTable<'u, 'd>,
    pub unit: usize,
}

impl<'d> Builder<'_, '_, 'd> {
    /// Builds the layout of the aggregate at entry `i` unless this unit or an earlier
    /// one has (see `claim`), keyed by `key_name` (where its name, or its typedef's, is
    /// stored); its key. `name` is read only for a layout that gets built (`None`: not
    /// built); `typedef` gives the layout that name.
    pub fn add(
        &self,
        acc: &mut Acc<'d>,
        i: usize,
        key_name: Name,
        name: impl FnOnce() -> Option<&'d str>,
        typedef: bool,
    ) -> Key {
        let table = self.table;
        let t = &table.dies.dies[i];
        let key = (key_name, table.fingerprint(i));
        if !acc.has(self.unit, &key)
            && claim(self.claims, key, self.unit)
            && let Some(name) = name()
        {
            let mut layout = table.layout(t, 0, 0);
            if typedef {
                layout.name = name;
                layout.typedef = true;
            }
            let content = (name, table.content_fingerprint(i));
            acc.add_struct((self.unit, t.offset), key, content, layout);
        }
        key
    }
}

/// A variable before its struct is given its final id.
pub(super) struct RawVariable<'d> {
    var: Variable<'d>,
    key: Option<Key>,
}

/// What a run of units produced: distinct layouts with the lowest unit they came from.
#[derive(Default)]
pub(super) struct Acc<'d> {
    /// Each layout with the lowest unit it came from, the offset of its entry there
    /// and its `content_fingerprint`.
    pub(super) structs: FxHashMap<Key, (usize, u32, Content<'d>, StructLayout<'d>)>,
    variables: Vec<(usize, RawVariable<'d>)>,
    /// (unit index, unit name) of each unit read.
    pub(super) names: Vec<(usize, Option<&'d str>)>,
    pub(super) ranges: Vec<(u64, u64, usize)>,
}

impl<'d> Acc<'d> {
    /// True when this accumulator already holds `key` from `unit` or an earlier one.
    pub(super) fn has(&self, unit: usize, key: &Key) -> bool {
        self.structs.get(key).is_some_and(|(u, ..)| *u <= unit)
    }

    pub(super) fn add_struct(
        &mut self,
        at: Place,
        key: Key,
        content: Content<'d>,
        layout: StructLayout<'d>,
    ) {
        match self.structs.get(&key) {
            Some((u, ..)) if *u <= at.0 => {}
            _ => {
                self.structs.insert(key, (at.0, at.1, content, layout));
            }
        }
    }

    pub(super) fn merge(mut self, other: Acc<'d>) -> Acc<'d> {
        for (key, (unit, at, content, layout)) in other.structs {
            self.add_struct((unit, at), key, content, layout);
        }
        self.variables.extend(other.variables);
        self.names.extend(other.names);
        self.ranges.extend(other.ranges);
        self
    }
}

pub(crate) fn read<'d>(
    path: &Path,
    debug: &DebugSections<'d>,
    options: &LoadOptions,
) -> Result<Types<'d>> {
    let endian = if debug.little_endian {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let dwarf: Dwarf<'d> = gimli::Dwarf::load(|id| -> std::result::Result<_, ()> {
        let data = debug.sections.get(id.name()).copied().unwrap_or(&[]);
        Ok(EndianSlice::new(data, endian))
    })
    .map_err(|_| Error::Input {
        path: path.to_path_buf(),
        message: "cannot load DWARF sections".into(),
    })?;
    let dwarf_err = |offset: u64, e: gimli::Error| Error::Dwarf {
        path: path.to_path_buf(),
        section: ".debug_info",
        offset,
        message: e.to_string(),
    };
    let mut headers = Vec::new();
    let mut iter = dwarf.units();
    loop {
        match iter.next() {
            Ok(Some(h)) => headers.push(h),
            Ok(None) => break,
            Err(e) => return Err(dwarf_err(0, e)),
        }
    }
    let units = headers.len();
    let claims: Claims<'d> = Mutex::new(FxHashMap::default());
    let section = |name: &str| debug.sections.get(name).copied().unwrap_or(&[]);
    let ctx = Context {
        dwarf: &dwarf,
        options,
        little_endian: debug.little_endian,
        strings: Strings {
            debug_info: section(".debug_info"),
            debug_str: section(".debug_str"),
            debug_line_str: section(".debug_line_str"),
        },
        claims: &claims,
        debug_info: section(".debug_info"),
    };
    if let Some(names) = super::lookup::names(options) {
        let acc = super::lookup::read(&ctx, headers, &names, &dwarf_err)?;
        return Ok(finish(acc, units));
    }
    let acc = headers
        .into_par_iter()
        .enumerate()
        .map(|(i, header)| {
            let offset = header.offset().0 as u64;
            read_unit(&ctx, i, header).map_err(|e| dwarf_err(offset, e))
        })
        .try_fold(Acc::default, |acc, unit| unit.map(|u| acc.merge(u)))
        .try_reduce(Acc::default, |a, b| Ok(a.merge(b)))?;
    Ok(finish(acc, units))
}

/// Orders the merged layouts and gives variables their struct ids.
fn finish<'d>(acc: Acc<'d>, units: usize) -> Types<'d> {
    // Copies told apart only by where their member names are stored (strings a linker
    // did not merge) are one layout: keep the lowest unit's, the others point at it.
    let mut keeper: FxHashMap<Content<'d>, (Place, Key)> = FxHashMap::default();
    for (key, (unit, at, content, _)) in &acc.structs {
        let slot = keeper.entry(*content).or_insert(((*unit, *at), *key));
        if (*unit, *at) < slot.0 {
            *slot = ((*unit, *at), *key);
        }
    }
    let mut alias: FxHashMap<Key, Key> = FxHashMap::default();
    let mut entries: Vec<(Key, Place, StructLayout<'d>)> = Vec::new();
    for (key, (unit, at, content, layout)) in acc.structs {
        let kept = keeper[&content].1;
        if kept == key {
            entries.push((key, (unit, at), layout));
        } else {
            alias.insert(key, kept);
        }
    }
    // Layouts of one name, file and size in the order they first appear in the
    // units (not by fingerprint, which is only a hash).
    entries.sort_by(|(_, pa, a), (_, pb, b)| {
        (a.name, &a.decl_file, a.size, pa).cmp(&(b.name, &b.decl_file, b.size, pb))
    });
    let entries: Vec<(Key, StructLayout<'d>)> =
        entries.into_iter().map(|(k, _, l)| (k, l)).collect();
    let ids: HashMap<Key, StructId> = entries
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (*k, StructId(i)))
        .collect();
    let structs = entries.into_iter().map(|(_, l)| l).collect();
    let mut variables: Vec<(usize, Variable<'d>)> = acc
        .variables
        .into_iter()
        .map(|(unit, raw)| {
            let mut var = raw.var;
            var.layout = raw
                .key
                .map(|k| alias.get(&k).copied().unwrap_or(k))
                .and_then(|k| ids.get(&k).copied());
            (unit, var)
        })
        .collect();
    variables.sort_by(|(ua, a), (ub, b)| (a.address, a.name, *ua).cmp(&(b.address, b.name, *ub)));
    variables.dedup_by(|(_, a), (_, b)| a.address == b.address && a.name == b.name);
    let mut names = vec![None; units];
    for (i, n) in acc.names {
        if let Some(slot) = names.get_mut(i) {
            *slot = n;
        }
    }
    let mut ranges = acc.ranges;
    ranges.sort_unstable();
    let sources = UnitSources {
        names,
        ranges,
        variables: variables
            .iter()
            .map(|(u, v)| (v.address, v.name, *u))
            .collect(),
    };
    Types {
        structs,
        variables: variables.into_iter().map(|(_, v)| v).collect(),
        units,
        sources,
    }
}

pub(super) fn is_aggregate(tag: gimli::DwTag) -> bool {
    matches!(
        tag,
        dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type
    )
}

/// What every unit's worker shares.
pub(super) struct Context<'a, 'd> {
    pub(super) dwarf: &'a Dwarf<'d>,
    pub(super) options: &'a LoadOptions,
    pub(super) little_endian: bool,
    pub(super) strings: Strings<'d>,
    pub(super) claims: &'a Claims<'d>,
    /// The `.debug_info` bytes (`lookup` searches units for a name's traces).
    pub(super) debug_info: &'d [u8],
}

fn read_unit<'d>(
    ctx: &Context<'_, 'd>,
    index: usize,
    header: gimli::UnitHeader<EndianSlice<'d, RunTimeEndian>>,
) -> gimli::Result<Acc<'d>> {
    let (dwarf, options, claims) = (ctx.dwarf, ctx.options, ctx.claims);
    let debug_little_endian = ctx.little_endian;
    let unit = dwarf.unit(header)?;
    let mut acc = Acc::default();
    acc.names.push((index, unit_path(&unit)));
    let mut ranges = dwarf.unit_ranges(&unit)?;
    while let Some(r) = ranges.next()? {
        if r.begin < r.end {
            acc.ranges.push((r.begin, r.end, index));
        }
    }
    if !language_wanted(&unit, options)? {
        return Ok(acc);
    }
    let dies = dies::read_unit(dwarf, &unit, ctx.strings, options.pahole_text)?;
    let files = |i: u64| file_name(dwarf, &unit, i);
    let table = TypeTable::new(
        &dies,
        u64::from(unit.encoding().address_size),
        debug_little_endian,
        &files,
        options.pahole_text,
    );
    let builder = Builder {
        claims,
        table: &table,
        unit: index,
    };
    let every_struct = matches!(options.structs, StructFilter::All);
    for (i, die) in dies.dies.iter().enumerate() {
        if !is_aggregate(die.tag) || die.declaration || die.name.is_none() {
            continue;
        }
        // Names are read only to filter, and for the layouts that get built.
        if !every_struct && !dies.name(die).is_some_and(|n| options.structs.accepts(n)) {
            continue;
        }
        builder.add(&mut acc, i, die.name, || dies.name(die), false);
    }
    if !options.typedefs.is_empty() || options.all_typedefs {
        for die in dies.dies.iter().filter(|d| d.tag == dw::DW_TAG_typedef) {
            if let Some(name) = dies.name(die)
                && (options.all_typedefs || options.typedefs.iter().any(|t| t == name))
                && let Some(t) = table.strip(die.ty())
                && is_aggregate(t.tag)
                && !t.declaration
                && t.name.is_none()
                && let Some(i) = dies.index_of(t.offset)
            {
                builder.add(&mut acc, i, die.name, || Some(name), true);
            }
        }
    }
    if options.variables {
        for die in dies.dies.iter().filter(|d| d.top_level) {
            if let Some(raw) = variable(&builder, &mut acc, die) {
                acc.variables.push((index, raw));
            }
        }
    }
    Ok(acc)
}

/// A global variable with a static address, and the layout of its struct type.
fn variable<'d>(
    builder: &Builder<'_, '_, 'd>,
    acc: &mut Acc<'d>,
    die: &dies::Die<'d>,
) -> Option<RawVariable<'d>> {
    let table = builder.table;
    let address = die.address()?;
    let spec = die.specification().and_then(|o| table.dies.get(o));
    let name = table
        .dies
        .name(die)
        .or(spec.and_then(|s| table.dies.name(s)))?;
    let ty = die.ty().or(spec.and_then(|s| s.ty()));
    let mut is_array = false;
    let mut target = table.strip(ty);
    for _ in 0..8 {
        match target {
            Some(t) if t.tag == dw::DW_TAG_array_type => {
                is_array = true;
                target = table.strip(t.ty());
            }
            _ => break,
        }
    }
    let key = match target {
        Some(t) if is_aggregate(t.tag) && !t.declaration => {
            // An anonymous struct type (`static struct { ... } tk_core`) gets a
            // layout too, under the empty name, so the object can be judged.
            match (
                table.dies.name(t).or(Some("")),
                table.dies.index_of(t.offset),
            ) {
                (Some(name), Some(i)) => Some(builder.add(acc, i, t.name, || Some(name), false)),
                _ => None,
            }
        }
        _ => None,
    };
    let decl = die.decl_file().or(spec.and_then(|s| s.decl_file()));
    Some(RawVariable {
        var: Variable {
            name,
            address,
            ctype: table.ctype(ty).into(),
            size: table.size_of(ty),
            layout: None,
            is_array,
            alignment: die.alignment().or(spec.and_then(|s| s.alignment())),
            decl_file: decl.and_then(|f| file_name_from(table, f)).map(Into::into),
        },
        key,
    })
}

/// The unit's `DW_AT_name`, without the directories it shares with its
/// `DW_AT_comp_dir` when absolute (assembler units carry the version-specific build
/// path: `/build/linux-6.1.170/arch/x86/lib/memcpy_64.S` -> `arch/x86/lib/memcpy_64.S`).
/// Whether a unit's types and variables are read: every language with
/// `LoadOptions::rust`, else all but Rust (bindgen's Rust copies of C structs carry C
/// names with Rust layouts: `pahole --lang_exclude rust`, as the kernel's BTF build).
pub(super) fn language_wanted(unit: &Unit<'_>, options: &LoadOptions) -> gimli::Result<bool> {
    if options.rust {
        return Ok(true);
    }
    let mut entries = unit.entries();
    let Some(root) = entries.next_dfs()? else {
        return Ok(true);
    };
    Ok(!matches!(
        root.attr_value(gimli::DW_AT_language),
        Some(gimli::AttributeValue::Language(gimli::DW_LANG_Rust))
    ))
}

pub(super) fn unit_path<'d>(unit: &Unit<'d>) -> Option<&'d str> {
    let name = unit.name?.to_string().ok()?;
    if !name.starts_with('/') {
        return Some(name);
    }
    let dir = unit.comp_dir.and_then(|d| d.to_string().ok()).unwrap_or("");
    let mut common = 0;
    for ((i, a), b) in name.char_indices().zip(dir.chars()) {
        if a != b {
            break;
        }
        if a == '/' {
            common = i + 1;
        }
    }
    if name.as_bytes().starts_with(dir.as_bytes()) && name.as_bytes().get(dir.len()) == Some(&b'/')
    {
        common = dir.len() + 1;
    }
    Some(&name[common.min(name.len())..])
}

fn file_name_from(table: &TypeTable<'_, '_>, index: u64) -> Option<String> {
    table.file(index)
}

/// `dir/name` of entry `index` of the unit's line program file table.
pub(super) fn file_name<'d>(dwarf: &Dwarf<'d>, unit: &Unit<'d>, index: u64) -> Option<String> {
    let program = unit.line_program.as_ref()?;
    let header = program.header();
    let entry = header.file(index)?;
    let name = dwarf.attr_string(unit, entry.path_name()).ok()?;
    let name = name.to_string_lossy();
    if name.starts_with('/') {
        return Some(name.into_owned());
    }
    let dir = entry
        .directory(header)
        .and_then(|d| dwarf.attr_string(unit, d).ok())
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    if dir.is_empty() || dir == "." {
        Some(normalize(&name))
    } else {
        Some(normalize(&format!("{dir}/{name}")))
    }
}

/// Removes `.` and `dir/..` components, so one header has one spelling.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "." | "" if !parts.is_empty() || p == "." => {}
            ".." if parts.last().is_some_and(|l| *l != ".." && !l.is_empty()) => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_are_normalized() {
        assert_eq!(
            super::normalize("./arch/x86/events/amd/../perf_event.h"),
            "arch/x86/events/perf_event.h"
        );
        assert_eq!(
            super::normalize("/build/linux/./include/a.h"),
            "/build/linux/include/a.h"
        );
        assert_eq!(super::normalize("kernel.c"), "kernel.c");
    }

    use super::super::dies::{Die, Name, Strings, UnitDies};
    use super::super::layouts::TypeTable;
    use super::{Acc, RawVariable, finish};
    use crate::model::Variable;
    use gimli::constants as dw;

    /// Two structs `s { int a; }` whose member name `a` is stored twice in the string
    /// section (a linker that did not merge strings), and one `s { int b; }`.
    fn unmerged() -> UnitDies<'static> {
        let debug_str: &'static [u8] = b"s\0a\0a\0int\0b\0";
        let mut dies = Vec::new();
        let mut int = Die::default();
        int.tag = dw::DW_TAG_base_type;
        int.name = Name::Str(6);
        int.set_byte_size(Some(4));
        dies.push(int);
        for (k, member_name) in [2u32, 4, 10].into_iter().enumerate() {
            let at = dies.len() as u32;
            let mut s = Die::default();
            s.tag = dw::DW_TAG_structure_type;
            s.name = Name::Str(0);
            s.offset = 10 * (k as u32 + 1);
            s.first_child = at + 1;
            s.set_byte_size(Some(4));
            let mut m = Die::default();
            m.tag = dw::DW_TAG_member;
            m.name = Name::Str(member_name);
            m.offset = 10 * (k as u32 + 1) + 5;
            m.set_ty(0);
            m.set_member_location(Some(0));
            dies.push(s);
            dies.push(m);
        }
        UnitDies {
            dies,
            strings: Strings {
                debug_info: &[],
                debug_str,
                debug_line_str: &[],
            },
        }
    }

    #[test]
    fn names_stored_twice_fingerprint_apart_but_have_one_content() {
        let dies = unmerged();
        let files = |_: u64| None;
        let table = TypeTable::new(&dies, 8, true, &files, false);
        let (a1, a2, b) = (1, 3, 5);
        assert_ne!(table.fingerprint(a1), table.fingerprint(a2));
        assert_eq!(table.content_fingerprint(a1), table.content_fingerprint(a2));
        assert_ne!(table.content_fingerprint(a1), table.content_fingerprint(b));
    }

    #[test]
    fn layouts_equal_in_content_become_one_and_variables_follow() {
        let dies = unmerged();
        let files = |_: u64| None;
        let table = TypeTable::new(&dies, 8, true, &files, false);
        let mut acc = Acc::default();
        // Units 3, 1 and 2 built the three copies; unit 1's `s { int a; }` is kept.
        for (unit, i) in [(3usize, 1usize), (1, 3), (2, 5)] {
            let die = &dies.dies[i];
            let key = (die.name, table.fingerprint(i));
            let content = ("s", table.content_fingerprint(i));
            acc.add_struct((unit, die.offset), key, content, table.layout(die, 0, 0));
            acc.variables.push((
                unit,
                RawVariable {
                    var: Variable {
                        name: ["v3", "v1", "v2"][i / 2],
                        address: 0x1000 + i as u64,
                        ctype: Default::default(),
                        size: Some(4),
                        layout: None,
                        is_array: false,
                        alignment: None,
                        decl_file: None,
                    },
                    key: Some(key),
                },
            ));
        }
        let types = finish(acc, 4);
        let members: Vec<Option<&str>> = types.structs.iter().map(|s| s.members[0].name).collect();
        assert_eq!(members, vec![Some("a"), Some("b")]);
        let layouts: Vec<(&str, Option<usize>)> = types
            .variables
            .iter()
            .map(|v| (v.name, v.layout.map(|id| id.0)))
            .collect();
        // v3 (unit 3's copy) and v1 (unit 1's) share the kept layout.
        assert_eq!(
            layouts,
            vec![("v3", Some(0)), ("v1", Some(0)), ("v2", Some(1))]
        );
    }
}
