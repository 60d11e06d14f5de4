//! What every DWARF reader shares (the whole-file pass in `dwarf.rs` and the by-name
//! search in `lookup.rs`): the context of a unit's worker, the accumulator of layouts
//! and variables, the claims that build each layout once, and a unit's language,
//! path and file names.

use std::sync::Mutex;

use gimli::constants as dw;
use rustc_hash::FxHashMap;

use super::LoadOptions;
use super::dies::{Die, Dwarf, Name, Strings, Unit, UnitDies};
use super::layouts::TypeTable;
use crate::model::{StructLayout, Variable};

/// A struct told apart from others of its name by a hash of its whole layout. The name
/// is where it is stored (a string offset is one string in a vmlinux whose linker merged
/// strings: compared without reading it); `finish` merges what only that tells apart.
pub(super) type Key = (Name, u64);

/// Where a layout was first seen: unit index and the offset of its entry there.
pub(super) type Place = (usize, u32);

/// A layout's name and `content_fingerprint`: equal exactly when the layouts are.
pub(super) type Content<'d> = (&'d str, u64);

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
    /// A Rust unit (`language_read`): its layouts are keyed apart from C's.
    pub rust: bool,
}

/// Mixed into a Rust unit's fingerprints, so that a bindgen copy never shares a key
/// (or a content) with the C layout of its name, even when their members spell alike.
const RUST_SALT: u64 = 0x5275_7374_2043_6f70;

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
        let salt = if self.rust { RUST_SALT } else { 0 };
        let key = (key_name, table.fingerprint(i) ^ salt);
        if !acc.has(self.unit, &key)
            && claim(self.claims, key, self.unit)
            && let Some(name) = name()
        {
            let mut layout = table.layout(t, 0, 0);
            if typedef {
                layout.name = name;
                layout.typedef = true;
            }
            layout.rust = self.rust;
            let content = (name, table.content_fingerprint(i) ^ salt);
            acc.add_struct((self.unit, t.offset), key, content, layout);
        }
        key
    }
}

/// A variable before its struct is given its final id.
pub(super) struct RawVariable<'d> {
    pub(super) var: Variable<'d>,
    pub(super) key: Option<Key>,
}

/// What a run of units produced: distinct layouts with the lowest unit they came from.
#[derive(Default)]
pub(super) struct Acc<'d> {
    /// Each layout with the lowest unit it came from, the offset of its entry there
    /// and its `content_fingerprint`.
    pub(super) structs: FxHashMap<Key, (usize, u32, Content<'d>, StructLayout<'d>)>,
    pub(super) variables: Vec<(usize, RawVariable<'d>)>,
    /// (unit index, unit name) of each unit read.
    pub(super) names: Vec<(usize, Option<&'d str>)>,
    pub(super) ranges: Vec<(u64, u64, usize)>,
    /// (unit name, alignment) of each unit whose functions GCC aligns other than to
    /// `model::FUNCTION_ALIGNMENT` (`function_alignment`).
    pub(super) function_alignments: Vec<(&'d str, u64)>,
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
        self.function_alignments.extend(other.function_alignments);
        self
    }
}

pub(super) fn is_aggregate(tag: gimli::DwTag) -> bool {
    matches!(
        tag,
        dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type
    )
}

/// The entry index of the anonymous struct or union that the typedef entry `die`
/// names (`typedef struct { ... } atomic_t;`), with the typedef's name, when `options`
/// lists that typedef (`LoadOptions::lists`): how every reader of a unit's entries
/// (DWARF whole, DWARF by name, BTF) follows a typedef to the layout that takes its name.
pub(super) fn typedef_layout<'d>(
    options: &LoadOptions,
    dies: &UnitDies<'d>,
    table: &TypeTable<'_, 'd>,
    die: &Die<'d>,
) -> Option<(usize, &'d str)> {
    if die.tag != dw::DW_TAG_typedef {
        return None;
    }
    let name = dies.name(die)?;
    if !options.lists(name, true) {
        return None;
    }
    let t = table.strip(die.ty())?;
    if !is_aggregate(t.tag) || t.declaration || !t.name.is_none() {
        return None;
    }
    Some((dies.index_of(t.offset)?, name))
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
    /// The `.debug_addr` bytes (`around` searches a unit's addresses there).
    pub(super) debug_addr: &'d [u8],
}

/// Whether a unit's types and variables are read (`Some`), and whether it is a Rust
/// unit (`Some(true)`): every language with `LoadOptions::rust`, else all but Rust
/// (bindgen's Rust copies of C structs carry C names with Rust layouts: `pahole
/// --lang_exclude rust`, as the kernel's BTF build). A Rust unit's layouts are marked
/// so that they are never taken for, or paired with, the C ones.
pub(super) fn language_read(unit: &Unit<'_>, options: &LoadOptions) -> gimli::Result<Option<bool>> {
    let mut entries = unit.entries();
    let rust = match entries.next_dfs()? {
        Some(root) => matches!(
            root.attr_value(gimli::DW_AT_language),
            Some(gimli::AttributeValue::Language(gimli::DW_LANG_Rust))
        ),
        None => false,
    };
    Ok((options.rust || !rust).then_some(rust))
}

/// `value` as a unit stores a `width`-byte value (4 or 8: an offset or an address) in
/// the file's byte order: what a search of a unit's bytes for it looks for.
pub(super) fn stored_bytes(value: u64, width: usize, little_endian: bool) -> Vec<u8> {
    let width = width.min(8);
    if little_endian {
        value.to_le_bytes()[..width].to_vec()
    } else {
        value.to_be_bytes()[8 - width..].to_vec()
    }
}

/// The alignment GCC gave the functions of `unit`, from the options its
/// `DW_AT_producer` records (`GNU C11 12.2.0 ... -Os ...`, which GCC writes by default,
/// `-grecord-gcc-switches`): `None` when the producer is not GCC's C or records no
/// options (the assembler, clang, rustc), so the default stands.
pub(super) fn function_alignment(dwarf: &Dwarf<'_>, unit: &Unit<'_>) -> gimli::Result<Option<u64>> {
    let mut entries = unit.entries();
    let Some(root) = entries.next_dfs()? else {
        return Ok(None);
    };
    let Some(value) = root.attr_value(dw::DW_AT_producer) else {
        return Ok(None);
    };
    let producer = dwarf.attr_string(unit, value)?;
    Ok(std::str::from_utf8(producer.slice())
        .ok()
        .and_then(gcc_function_alignment))
}

/// The function alignment a GCC producer string's options give (see
/// `function_alignment`): `-falign-functions=N` (its first number), else 1 when the
/// last `-O` level does not align functions (GCC enables `-falign-functions` at `-O2`
/// and `-O3` only: not at `-Os`, `-Oz`, `-Og`, `-O1` or `-O0`), else
/// `FUNCTION_ALIGNMENT`. `-fno-align-functions` is 1.
pub(crate) fn gcc_function_alignment(producer: &str) -> Option<u64> {
    let rest = producer.strip_prefix("GNU C")?;
    // `GNU C11 12.2.0 -m64 ...`: the options follow the version.
    let mut words = rest.split_ascii_whitespace().skip(1);
    let _version = words.next()?;
    let (mut level, mut asked, mut any) = (None, None, false);
    for w in words {
        any = true;
        if let Some(l) = w.strip_prefix("-O") {
            level = Some(l);
        } else if w == "-fno-align-functions" || w == "-falign-functions=0" {
            asked = Some(1);
        } else if let Some(n) = w.strip_prefix("-falign-functions=") {
            let first = n.split(':').next().unwrap_or("");
            asked = first
                .parse::<u64>()
                .ok()
                .filter(|a| a.is_power_of_two())
                .or(asked);
        } else if w == "-falign-functions" {
            asked = Some(crate::model::FUNCTION_ALIGNMENT);
        }
    }
    if !any {
        return None;
    }
    Some(asked.unwrap_or(match level {
        Some("2" | "3" | "fast") => crate::model::FUNCTION_ALIGNMENT,
        _ => 1,
    }))
}

/// The unit's `DW_AT_name`, without the directories it shares with its
/// `DW_AT_comp_dir` when absolute (assembler units carry the version-specific build
/// path: `/build/linux-6.1.170/arch/x86/lib/memcpy_64.S` -> `arch/x86/lib/memcpy_64.S`).
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

pub(super) fn file_name_from(table: &TypeTable<'_, '_>, index: u64) -> Option<String> {
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

/// Adds the code ranges of `unit` (its root's `DW_AT_ranges` or `DW_AT_low_pc` and
/// `DW_AT_high_pc`) to `out` with the unit's `index`: none when a low pc plus a
/// high pc given as a size overflows, which gimli adds unchecked (a forged file).
pub(super) fn code_ranges(
    dwarf: &Dwarf<'_>,
    unit: &Unit<'_>,
    index: usize,
    out: &mut Vec<(u64, u64, usize)>,
) -> gimli::Result<()> {
    let mut cursor = unit.entries();
    if let Some(root) = cursor.next_dfs()? {
        let low = match root.attr_value(dw::DW_AT_low_pc) {
            Some(v) => dwarf.attr_address(unit, v)?,
            None => None,
        };
        if let (Some(low), Some(gimli::AttributeValue::Udata(size))) =
            (low, root.attr_value(dw::DW_AT_high_pc))
            && low.checked_add(size).is_none()
        {
            return Ok(());
        }
    }
    let mut ranges = dwarf.unit_ranges(unit)?;
    while let Some(r) = ranges.next()? {
        if r.begin < r.end {
            out.push((r.begin, r.end, index));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The producers of the replay kernels' units (`DW_AT_producer`, shortened) and
    /// the function alignment each gives.
    #[test]
    fn a_gcc_producer_gives_its_units_function_alignment() {
        let gcc =
            |opts: &str| super::gcc_function_alignment(&format!("GNU C11 12.2.0 -m64 {opts}"));
        // tinyconfig's -Os: GCC aligns no function.
        assert_eq!(
            gcc("-mtune=generic -g -gdwarf-5 -Os -std=gnu11 -falign-jumps=1"),
            Some(1)
        );
        // A distribution kernel's -O2: the x86-64 default of 16.
        assert_eq!(
            gcc("-g -O2 -std=gnu11 -falign-jumps=1 -falign-loops=1"),
            Some(16)
        );
        // The last -O wins; -falign-functions=N (its first number) over the level.
        assert_eq!(gcc("-O2 -Os"), Some(1));
        assert_eq!(gcc("-Os -O2"), Some(16));
        assert_eq!(gcc("-O2 -falign-functions=64"), Some(64));
        assert_eq!(gcc("-Os -falign-functions=32:10"), Some(32));
        assert_eq!(gcc("-O2 -fno-align-functions"), Some(1));
        assert_eq!(gcc("-O1"), Some(1));
        assert_eq!(gcc("-O3"), Some(16));
        // No options recorded, or not GCC's C: the default stands.
        assert_eq!(super::gcc_function_alignment("GNU C11 12.2.0"), None);
        assert_eq!(super::gcc_function_alignment("GNU AS 2.40"), None);
        assert_eq!(super::gcc_function_alignment("clang version 16.0.6"), None);
    }

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
}
