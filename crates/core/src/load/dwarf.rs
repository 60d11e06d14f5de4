//! The DWARF side of loading: parse unit headers, read units in parallel, build the
//! struct layouts and variables each needs, and merge them into a deduplicated,
//! deterministically ordered set (the copy from the lowest unit wins).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use gimli::{EndianSlice, RunTimeEndian};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::LoadOptions;
use super::StructFilter;
use super::around::{Around, VariablesAt};
use super::dies::{self, Dwarf, Strings, Unit};
use super::elf::DebugSections;
use super::layouts::TypeTable;
pub(super) use super::unit::{
    Acc, Builder, Claims, Content, Context, Key, Place, RawVariable, code_ranges, file_name,
    function_alignment, is_aggregate, language_read, unit_path,
};
use super::unit::{file_name_from, typedef_layout};
use crate::error::{Error, Result};
use crate::model::{StructId, StructLayout, Variable};

pub(crate) struct Types<'d> {
    pub structs: Vec<StructLayout<'d>>,
    pub variables: Vec<Variable<'d>>,
    pub units: usize,
    /// Where each compile unit came from: its `DW_AT_name` path and code ranges.
    pub sources: UnitSources<'d>,
    /// Units whose functions GCC aligns other than to `FUNCTION_ALIGNMENT`, sorted.
    pub function_alignments: Vec<(&'d str, u64)>,
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

/// Reads the types and variables `options` asks for; with `around` (`load::around`),
/// only the variables `show --symbol` needs, in the units that may hold them.
pub(crate) fn read<'d>(
    path: &Path,
    debug: &DebugSections<'d>,
    options: &LoadOptions,
    around: Option<&Around>,
) -> Result<Types<'d>> {
    let dwarf: Dwarf<'d> = debug.dwarf(path)?;
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
        debug_addr: section(".debug_addr"),
    };
    if let Some(names) = super::lookup::names(options) {
        let acc = super::lookup::read(&ctx, headers, &names, &dwarf_err)?;
        return Ok(finish(acc, units));
    }
    if let Some(around) = around
        && let Some(acc) = read_around(&ctx, &headers, around, &dwarf_err)?
    {
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
    // units (not by fingerprint, which is only a hash); of one name, C's before
    // bindgen's Rust copies (`--lang all`).
    entries.sort_by(|(_, pa, a), (_, pb, b)| {
        (a.name, a.rust, &a.decl_file, a.size, pa).cmp(&(b.name, b.rust, &b.decl_file, b.size, pb))
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
    let mut function_alignments = acc.function_alignments;
    function_alignments.sort_unstable();
    function_alignments.dedup_by_key(|a| a.0);
    Types {
        structs,
        variables: variables.into_iter().map(|(_, v)| v).collect(),
        units,
        sources,
        function_alignments,
    }
}

/// What `show --symbol` needs (`load::around`): every unit's path and code ranges,
/// then the variables at the addresses those leave to read, from the units whose bytes
/// hold one. `None` when that is no cheaper than the whole read.
fn read_around<'d>(
    ctx: &Context<'_, 'd>,
    headers: &[gimli::UnitHeader<EndianSlice<'d, RunTimeEndian>>],
    around: &Around,
    dwarf_err: &(dyn Fn(u64, gimli::Error) -> Error + Sync),
) -> Result<Option<Acc<'d>>> {
    // Each unit: its index, the unit with whether it is Rust when its language is
    // read, and its path and code ranges.
    type Read<'d> = (usize, Option<(Unit<'d>, bool)>, Acc<'d>);
    let units: Vec<Read<'d>> = headers
        .par_iter()
        .enumerate()
        .map(|(i, header)| {
            let offset = header.offset().0 as u64;
            let read = || -> gimli::Result<_> {
                let unit = ctx.dwarf.unit(*header)?;
                let mut acc = Acc::default();
                acc.names.push((i, unit_path(&unit)));
                code_ranges(ctx.dwarf, &unit, i, &mut acc.ranges)?;
                let rust = language_read(&unit, ctx.options)?;
                Ok((i, rust.map(|r| (unit, r)), acc))
            };
            read().map_err(|e| dwarf_err(offset, e))
        })
        .collect::<Result<_>>()?;
    let mut names = vec![None; units.len()];
    let mut ranges = Vec::new();
    for (i, _, acc) in &units {
        names[*i] = acc.names.first().and_then(|(_, n)| *n);
        ranges.extend(&acc.ranges);
    }
    ranges.sort_unstable();
    let sources = UnitSources {
        names,
        ranges,
        variables: Vec::new(),
    };
    let Some(only) = around.variables_at(|a| sources.of_code(a).is_some(), ctx.little_endian)
    else {
        return Ok(None);
    };
    let acc = units
        .into_par_iter()
        .map(|(i, unit, acc)| {
            let Some((unit, rust)) = unit else {
                return Ok(acc);
            };
            let start = unit.header.offset().0;
            let end = start.saturating_add(unit.header.length_including_self());
            let data = ctx.debug_info.get(start..end).unwrap_or(&[]);
            if !only.may_hold(&unit, data, ctx.debug_addr, ctx.little_endian) {
                return Ok(acc);
            }
            unit_types(ctx, i, &unit, rust, acc, Some(&only))
                .map_err(|e| dwarf_err(start as u64, e))
        })
        .try_fold(Acc::default, |acc, unit| unit.map(|u| acc.merge(u)))
        .try_reduce(Acc::default, |a, b| Ok(a.merge(b)))?;
    Ok(Some(acc))
}

fn read_unit<'d>(
    ctx: &Context<'_, 'd>,
    index: usize,
    header: gimli::UnitHeader<EndianSlice<'d, RunTimeEndian>>,
) -> gimli::Result<Acc<'d>> {
    let (dwarf, options) = (ctx.dwarf, ctx.options);
    let unit = dwarf.unit(header)?;
    let mut acc = Acc::default();
    let name = unit_path(&unit);
    acc.names.push((index, name));
    if let (Some(name), Some(a)) = (name, function_alignment(dwarf, &unit)?)
        && a != crate::model::FUNCTION_ALIGNMENT
    {
        acc.function_alignments.push((name, a));
    }
    code_ranges(dwarf, &unit, index, &mut acc.ranges)?;
    let Some(rust) = language_read(&unit, options)? else {
        return Ok(acc);
    };
    unit_types(ctx, index, &unit, rust, acc, None)
}

/// The layouts and variables of one unit (of a language read), added to `acc`; with
/// `only`, only the variables at its addresses and the layouts they need.
fn unit_types<'d>(
    ctx: &Context<'_, 'd>,
    index: usize,
    unit: &Unit<'d>,
    rust: bool,
    mut acc: Acc<'d>,
    only: Option<&VariablesAt>,
) -> gimli::Result<Acc<'d>> {
    let (dwarf, options, claims) = (ctx.dwarf, ctx.options, ctx.claims);
    let debug_little_endian = ctx.little_endian;
    let dies = dies::read_unit(dwarf, unit, ctx.strings, options.pahole_text)?;
    let files = |i: u64| file_name(dwarf, unit, i);
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
        rust,
    };
    let every_struct = matches!(options.structs, StructFilter::All);
    for (i, die) in dies.dies.iter().enumerate() {
        if !is_aggregate(die.tag) || die.declaration || die.name.is_none() {
            continue;
        }
        // Names are read only to filter, and for the layouts that get built.
        if !every_struct && !dies.name(die).is_some_and(|n| options.lists(n, false)) {
            continue;
        }
        builder.add(&mut acc, i, die.name, || dies.name(die), false);
    }
    if options.lists_typedefs() {
        for die in &dies.dies {
            if let Some((i, name)) = typedef_layout(options, &dies, &table, die) {
                builder.add(&mut acc, i, die.name, || Some(name), true);
            }
        }
    }
    if options.variables {
        let kept = |d: &dies::Die<'_>| only.is_none_or(|o| d.address().is_some_and(|a| o.wants(a)));
        for die in dies.dies.iter().filter(|d| d.top_level && kept(d)) {
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
    let (target, is_array) = table.element_of(ty);
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
            decl_line: die.decl_line().or(spec.and_then(|s| s.decl_line())),
            // Declared before it is defined: in a header (another file), before every
            // line of the unit's own; else at the declaration's line.
            declared: spec.map(|s| match die.decl_file() {
                Some(f) if s.decl_file() != Some(f) => 0,
                _ => s.decl_line().unwrap_or(0),
            }),
        },
        key,
    })
}

#[cfg(test)]
mod tests {
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
                        decl_line: None,
                        declared: None,
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
