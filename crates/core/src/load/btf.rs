//! BTF input: a kernel stripped of DWARF still carries its types as BTF (`.BTF`, or a
//! raw blob such as `/sys/kernel/btf/vmlinux`). This reads the BTF type table into the
//! same per-unit entry table the DWARF reader builds (`dies::UnitDies`), so struct
//! layouts, spellings, holes and packed inference come from the one code path that
//! already agrees with pahole; per-CPU variables come from the `.data..percpu` DATASEC.
//!
//! A small reader of our own (not the `btf-rs` crate): the format is a header, a flat
//! array of fixed-size records and a string table, so a reader is ~200 lines of
//! bounds-checked reads; it borrows names from the mapped file like the DWARF side;
//! and it adds no dependency or licence to the project.

use std::collections::HashMap;
use std::path::Path;

use gimli::constants as dw;

use super::LoadOptions;
use super::dies::{Die, NONE, Name, Strings, UnitDies};
use super::layouts::TypeTable;
use super::unit::typedef_layout;
use crate::error::{Error, Result};
use crate::model::{StructId, StructLayout, Variable};

/// `BTF_MAGIC` as a little-endian file stores it.
const MAGIC: u16 = 0xeb9f;
/// Type ids beyond this are refused (the kernel's own limit is 2^31 - 1; a vmlinux has
/// ~120,000); it bounds what a corrupt count can make us allocate.
const MAX_TYPES: usize = 1 << 24;

/// The three parts of a BTF blob, checked against its length.
pub(crate) struct Blob<'d> {
    little_endian: bool,
    types: &'d [u8],
    strings: &'d [u8],
}

/// What BTF describes: structs, and the per-CPU variables of the DATASEC.
pub(crate) struct BtfTypes<'d> {
    pub structs: Vec<StructLayout<'d>>,
    pub variables: Vec<Variable<'d>>,
}

fn bad(path: &Path, message: String) -> Error {
    Error::Input {
        path: path.to_path_buf(),
        message: format!("BTF: {message}"),
    }
}

impl<'d> Blob<'d> {
    pub fn parse(path: &Path, data: &'d [u8]) -> Result<Blob<'d>> {
        let little_endian = match data {
            [0x9f, 0xeb, ..] => true,
            [0xeb, 0x9f, ..] => false,
            _ => return Err(bad(path, "no BTF magic (0xeb9f)".into())),
        };
        let r = Reader {
            data,
            little_endian,
        };
        let word = |at: usize| {
            r.u32(at)
                .ok_or_else(|| bad(path, "header is truncated".into()))
        };
        debug_assert_eq!(r.u16(0), Some(MAGIC));
        match data.get(2) {
            Some(1) => {}
            Some(v) => return Err(bad(path, format!("version {v} (only 1 is known)"))),
            None => return Err(bad(path, "header is truncated".into())),
        }
        let hdr_len = word(4)? as usize;
        let (type_off, type_len) = (word(8)? as usize, word(12)? as usize);
        let (str_off, str_len) = (word(16)? as usize, word(20)? as usize);
        let part = |off: usize, len: usize, what: &str| {
            hdr_len
                .checked_add(off)
                .and_then(|s| Some((s, s.checked_add(len)?)))
                .and_then(|(s, e)| data.get(s..e))
                .ok_or_else(|| bad(path, format!("{what} section lies past the end")))
        };
        if hdr_len < 24 {
            return Err(bad(path, format!("header length {hdr_len} < 24")));
        }
        Ok(Blob {
            little_endian,
            types: part(type_off, type_len, "type")?,
            strings: part(str_off, str_len, "string")?,
        })
    }
}

/// Reads numbers in the blob's byte order; `None` past the end.
#[derive(Clone, Copy)]
struct Reader<'d> {
    data: &'d [u8],
    little_endian: bool,
}

impl Reader<'_> {
    fn u16(&self, at: usize) -> Option<u16> {
        let b: [u8; 2] = self.data.get(at..at.checked_add(2)?)?.try_into().ok()?;
        Some(if self.little_endian {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        })
    }
    fn u32(&self, at: usize) -> Option<u32> {
        let b: [u8; 4] = self.data.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(if self.little_endian {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }
}

// BTF kinds (include/uapi/linux/btf.h).
const INT: u32 = 1;
const PTR: u32 = 2;
const ARRAY: u32 = 3;
const STRUCT: u32 = 4;
const UNION: u32 = 5;
const ENUM: u32 = 6;
const FWD: u32 = 7;
const TYPEDEF: u32 = 8;
const VOLATILE: u32 = 9;
const CONST: u32 = 10;
const RESTRICT: u32 = 11;
const FUNC: u32 = 12;
const FUNC_PROTO: u32 = 13;
const VAR: u32 = 14;
const DATASEC: u32 = 15;
const FLOAT: u32 = 16;
const DECL_TAG: u32 = 17;
const TYPE_TAG: u32 = 18;
const ENUM64: u32 = 19;

/// One type record's fixed part.
#[derive(Clone, Copy)]
struct Record {
    name_off: u32,
    kind: u32,
    vlen: usize,
    kind_flag: bool,
    /// `size` or `type`, by kind.
    size_type: u32,
    /// Where the kind-specific data after the 12-byte record starts.
    extra: usize,
}

impl Record {
    /// Where field `at` of item `j` (of `step` bytes each) of the kind-specific data is.
    /// `records` checked that the items lie within the type section, so this cannot
    /// overflow for a record it made; it saturates rather than wrap regardless (a read
    /// there finds nothing).
    fn item(&self, j: usize, step: usize, at: usize) -> usize {
        self.extra
            .saturating_add(j.saturating_mul(step))
            .saturating_add(at)
    }
}

/// Bytes of kind-specific data after a record.
fn extra_len(kind: u32, vlen: usize) -> Option<usize> {
    Some(match kind {
        INT | VAR | DECL_TAG => 4,
        ARRAY => 12,
        STRUCT | UNION | DATASEC | ENUM64 => vlen.checked_mul(12)?,
        ENUM | FUNC_PROTO => vlen.checked_mul(8)?,
        PTR | FWD | TYPEDEF | VOLATILE | CONST | RESTRICT | FUNC | FLOAT | TYPE_TAG => 0,
        _ => return None,
    })
}

/// Splits the type section into records (type id `i + 1` is `records[i]`).
fn records(path: &Path, blob: &Blob<'_>) -> Result<Vec<Record>> {
    let r = Reader {
        data: blob.types,
        little_endian: blob.little_endian,
    };
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < blob.types.len() {
        let trunc = || bad(path, format!("type {} is truncated", out.len() + 1));
        let word = |k: usize| at.checked_add(k).and_then(|w| r.u32(w)).ok_or_else(trunc);
        let (name_off, info, size_type) = (word(0)?, word(4)?, word(8)?);
        let kind = (info >> 24) & 0x1f;
        let vlen = (info & 0xffff) as usize;
        let len = extra_len(kind, vlen).ok_or_else(|| {
            bad(
                path,
                format!("type {} has unknown kind {kind}", out.len() + 1),
            )
        })?;
        let extra = at.checked_add(12).ok_or_else(trunc)?;
        let end = extra
            .checked_add(len)
            .filter(|&end| end <= blob.types.len())
            .ok_or_else(trunc)?;
        out.push(Record {
            name_off,
            kind,
            vlen,
            kind_flag: info >> 31 == 1,
            size_type,
            extra,
        });
        if out.len() > MAX_TYPES {
            return Err(bad(path, format!("more than {MAX_TYPES} types")));
        }
        at = end;
    }
    Ok(out)
}

/// Builds the entry table: entry `id` is type `id` (entry 0 stands for `void` and is
/// never referenced); members, subranges, parameters and enumerators follow.
fn entries<'d>(blob: &Blob<'d>, recs: &[Record]) -> Vec<Die<'d>> {
    let r = Reader {
        data: blob.types,
        little_endian: blob.little_endian,
    };
    let ids = Ids(recs.len() + 1);
    let mut dies: Vec<Die<'d>> = Vec::with_capacity(ids.0 * 2);
    dies.push(Die::default());
    dies.extend(recs.iter().map(|rec| type_die(rec, &r, ids)));
    for (k, rec) in recs.iter().enumerate() {
        let children = children(rec, recs, &r, ids);
        link_children(&mut dies, k + 1, children);
    }
    skip_type_tags(&mut dies, recs);
    for (i, d) in dies.iter_mut().enumerate() {
        d.offset = i as u32;
    }
    dies
}

/// The number of type ids (records, plus `void`'s id 0).
#[derive(Clone, Copy)]
struct Ids(usize);

impl Ids {
    /// A type reference by id: `NONE` for `void` (0) and for an id past the last type.
    fn ty(self, id: u32) -> u32 {
        if id == 0 || id as usize >= self.0 {
            NONE
        } else {
            id
        }
    }
}

/// A name by its offset in the string section; offset 0 is no name.
fn name(off: u32) -> Name {
    if off == 0 { Name::None } else { Name::Str(off) }
}

/// The entry of one type record, as DWARF would describe it (its children apart).
fn type_die<'d>(rec: &Record, r: &Reader<'_>, ids: Ids) -> Die<'d> {
    let mut d = new_die(dw::DW_TAG_null, name(rec.name_off));
    d.tag = match rec.kind {
        INT | FLOAT => {
            d.set_byte_size(Some(u64::from(rec.size_type)));
            dw::DW_TAG_base_type
        }
        PTR => dw::DW_TAG_pointer_type,
        ARRAY => dw::DW_TAG_array_type,
        STRUCT => dw::DW_TAG_structure_type,
        UNION => dw::DW_TAG_union_type,
        ENUM | ENUM64 => {
            d.set_byte_size(Some(u64::from(rec.size_type)));
            dw::DW_TAG_enumeration_type
        }
        FWD => {
            d.declaration = true;
            if rec.kind_flag {
                dw::DW_TAG_union_type
            } else {
                dw::DW_TAG_structure_type
            }
        }
        TYPEDEF => dw::DW_TAG_typedef,
        VOLATILE => dw::DW_TAG_volatile_type,
        CONST => dw::DW_TAG_const_type,
        RESTRICT => dw::DW_TAG_restrict_type,
        FUNC_PROTO => dw::DW_TAG_subroutine_type,
        // Functions, variables, sections and tags are not types a member can have.
        _ => dw::DW_TAG_null,
    };
    if matches!(rec.kind, STRUCT | UNION) {
        d.set_byte_size(Some(u64::from(rec.size_type)));
    }
    if matches!(
        rec.kind,
        PTR | TYPEDEF | VOLATILE | CONST | RESTRICT | FUNC_PROTO | TYPE_TAG
    ) {
        d.set_ty(ids.ty(rec.size_type));
    }
    if rec.kind == ARRAY {
        d.set_ty(ids.ty(r.u32(rec.extra).unwrap_or(0)));
    }
    d
}

/// The child entries of one type record: an array's subrange, a struct's members, an
/// enum's enumerators, a prototype's parameters.
fn children<'d>(rec: &Record, recs: &[Record], r: &Reader<'_>, ids: Ids) -> Vec<Die<'d>> {
    match rec.kind {
        ARRAY => {
            let mut sub = new_die(dw::DW_TAG_subrange_type, Name::None);
            // BTF writes a flexible array (`[]`) as 0 elements; pahole prints `[]`.
            sub.rare_mut().count = r.u32(rec.item(0, 0, 8)).filter(|&n| n != 0).map(u64::from);
            vec![sub]
        }
        STRUCT | UNION => (0..rec.vlen)
            .map(|j| member(rec, j, recs, r, ids))
            .collect(),
        ENUM | ENUM64 => (0..rec.vlen).map(|j| enumerator(rec, j, r)).collect(),
        FUNC_PROTO => (0..rec.vlen).map(|j| parameter(rec, j, r, ids)).collect(),
        _ => Vec::new(),
    }
}

/// Member `j` of a struct or union record.
fn member<'d>(rec: &Record, j: usize, recs: &[Record], r: &Reader<'_>, ids: Ids) -> Die<'d> {
    let (n_off, m_ty, off) = (
        r.u32(rec.item(j, 12, 0)).unwrap_or(0),
        r.u32(rec.item(j, 12, 4)).unwrap_or(0),
        r.u32(rec.item(j, 12, 8)).unwrap_or(0),
    );
    let mut m = new_die(dw::DW_TAG_member, name(n_off));
    m.set_ty(ids.ty(m_ty));
    let (bit_offset, bit_size) = if rec.kind_flag {
        (u64::from(off & 0xff_ffff), u64::from(off >> 24))
    } else {
        (u64::from(off), int_bitfield(recs, r, m_ty))
    };
    if bit_size != 0 {
        m.rare_mut().data_bit_offset = Some(bit_offset);
        m.rare_mut().bit_size = Some(bit_size);
    } else {
        m.set_member_location(Some(bit_offset / 8));
    }
    m
}

/// Enumerator `j` of an enum (32-bit values) or enum64 record.
fn enumerator<'d>(rec: &Record, j: usize, r: &Reader<'_>) -> Die<'d> {
    let step = if rec.kind == ENUM { 8 } else { 12 };
    let lo = r.u32(rec.item(j, step, 4)).unwrap_or(0);
    // A 32-bit enumerator is signed when `kind_flag` says the enum is (pahole 1.32
    // prints it so; 1.24 printed it unsigned).
    let value = if rec.kind == ENUM {
        if rec.kind_flag {
            i64::from(lo as i32)
        } else {
            i64::from(lo)
        }
    } else {
        let hi = r.u32(rec.item(j, step, 8)).unwrap_or(0);
        ((u64::from(hi) << 32) | u64::from(lo)) as i64
    };
    let name_off = r.u32(rec.item(j, step, 0)).unwrap_or(0);
    let mut e = new_die(dw::DW_TAG_enumerator, name(name_off));
    e.rare_mut().const_value = Some(value);
    e
}

/// Parameter `j` of a function prototype record; a last one without name or type is
/// `...`.
fn parameter<'d>(rec: &Record, j: usize, r: &Reader<'_>, ids: Ids) -> Die<'d> {
    let (p_name, p_ty) = (
        r.u32(rec.item(j, 8, 0)).unwrap_or(0),
        r.u32(rec.item(j, 8, 4)).unwrap_or(0),
    );
    let tag = if p_name == 0 && p_ty == 0 && j + 1 == rec.vlen {
        dw::DW_TAG_unspecified_parameters
    } else {
        dw::DW_TAG_formal_parameter
    };
    let mut p = new_die(tag, Name::None);
    p.set_ty(ids.ty(p_ty));
    p
}

/// Appends `children` to `dies` as the children of entry `id`, linked in order.
fn link_children<'d>(dies: &mut Vec<Die<'d>>, id: usize, children: Vec<Die<'d>>) {
    let mut prev: Option<usize> = None;
    for c in children {
        let i = dies.len();
        match prev {
            Some(p) => dies[p].next_sibling = i as u32,
            None => dies[id].first_child = i as u32,
        }
        dies.push(c);
        prev = Some(i);
    }
}

fn new_die<'d>(tag: gimli::DwTag, name: Name) -> Die<'d> {
    let mut d = Die::default();
    d.tag = tag;
    d.name = name;
    d
}

/// Without `kind_flag`, a member is a bitfield when its type is an INT whose bit count
/// is not its whole size; returns that bit count (0 when not a bitfield).
fn int_bitfield(recs: &[Record], r: &Reader<'_>, id: u32) -> u64 {
    let Some(rec) = (id as usize).checked_sub(1).and_then(|k| recs.get(k)) else {
        return 0;
    };
    if rec.kind != INT {
        return 0;
    }
    let bits = u64::from(r.u32(rec.extra).unwrap_or(0) & 0xff);
    if bits != 0 && bits != u64::from(rec.size_type).saturating_mul(8) {
        bits
    } else {
        0
    }
}

/// Type tags (`__user` as clang encodes it) are attributes, not types: references to
/// one go to what it tags.
fn skip_type_tags(dies: &mut [Die<'_>], recs: &[Record]) {
    let is_tag = |i: u32| {
        (i as usize)
            .checked_sub(1)
            .and_then(|k| recs.get(k))
            .is_some_and(|r| r.kind == TYPE_TAG)
    };
    let targets: Vec<u32> = dies.iter().map(|d| d.raw_ty()).collect();
    for d in dies.iter_mut() {
        let mut t = d.raw_ty();
        for _ in 0..32 {
            if t == NONE || !is_tag(t) {
                break;
            }
            t = targets[t as usize];
        }
        if is_tag(t) {
            t = NONE;
        }
        d.set_ty(t);
    }
}

/// BTF has no alignment: as pahole does, an alignment is inferred where natural
/// alignment cannot explain a layout, the smallest power of two larger than the
/// natural one that does: for a member whose offset is past the end of the member
/// before it rounded up to its type's alignment, and for a struct whose size is past
/// its members' end rounded up to its alignment (`____cacheline_aligned`). Members
/// first, then struct tails (which depend on members), twice, so that a struct's
/// inferred alignment is known before the members of its type are judged.
fn infer_alignment(dies: &mut UnitDies<'_>, types: usize, little_endian: bool) {
    for _ in 0..2 {
        for tails in [false, true] {
            let found = {
                let no_files = |_: u64| None;
                let table = TypeTable::new(dies, 8, little_endian, &no_files, false);
                let mut found = Vec::new();
                for id in 1..=types {
                    let d = &dies.dies[id];
                    if d.declaration
                        || !matches!(d.tag, dw::DW_TAG_structure_type | dw::DW_TAG_union_type)
                    {
                        continue;
                    }
                    if tails {
                        if d.alignment().is_none()
                            && let Some(a) = tail_alignment(&table, d)
                        {
                            found.push((id, a));
                        }
                    } else if d.tag == dw::DW_TAG_structure_type {
                        member_alignments(&table, d, &mut found);
                    }
                }
                found
            };
            for (i, a) in found {
                dies.dies[i].rare_mut().alignment = Some(a);
            }
        }
    }
}

/// The alignment pahole infers when `natural` does not round `end` up to `target`:
/// among the powers of two above `natural` that do, the cache line (64) when it is
/// one, else the largest below it, else the smallest above it (page-aligned data).
fn explaining(end: u64, natural: u64, target: u64) -> Option<u64> {
    const LINE: u64 = 64;
    let natural = natural.max(1).checked_next_power_of_two()?;
    if end.checked_next_multiple_of(natural) == Some(target) || target == 0 {
        return None;
    }
    let low = 1u64 << target.trailing_zeros().min(20);
    let fits = |a: u64| a > natural && a <= low && end.checked_next_multiple_of(a) == Some(target);
    if fits(LINE) {
        return Some(LINE);
    }
    let mut a = LINE / 2;
    while a > natural {
        if fits(a) {
            return Some(a);
        }
        a /= 2;
    }
    let mut a = LINE * 2;
    while a <= low {
        if fits(a) {
            return Some(a);
        }
        a *= 2;
    }
    None
}

fn member_alignments(table: &TypeTable<'_, '_>, d: &Die<'_>, found: &mut Vec<(usize, u64)>) {
    let mut end = 0u64;
    for m in table.dies.children(d) {
        if m.tag != dw::DW_TAG_member {
            continue;
        }
        if let Some(bits) = m.bit_size() {
            let start = m.data_bit_offset().unwrap_or(0);
            end = end.max(start.saturating_add(bits).div_ceil(8));
            continue;
        }
        let offset = m.member_location().unwrap_or(0);
        let size = table.size_of(m.ty()).unwrap_or(0);
        // A zero-size member (an empty struct, a group marker) after a hole is judged
        // as pahole 1.32 judges it, and moves the end nothing: the member after it
        // at the same offset is judged against the same end.
        if m.alignment().is_none()
            && offset > end
            && let Some(a) = explaining(end, table.align_of(m.ty()), offset)
        {
            found.push((m.offset as usize, a));
        }
        if size != 0 {
            end = end.max(offset.saturating_add(size));
        }
    }
}

fn tail_alignment(table: &TypeTable<'_, '_>, d: &Die<'_>) -> Option<u64> {
    let size = d.byte_size()?;
    let mut end = 0u64;
    for m in table.dies.children(d) {
        if m.tag != dw::DW_TAG_member {
            continue;
        }
        let e = match m.bit_size() {
            Some(bits) => m
                .data_bit_offset()
                .unwrap_or(0)
                .saturating_add(bits)
                .div_ceil(8),
            None => m
                .member_location()
                .unwrap_or(0)
                .saturating_add(table.size_of(m.ty()).unwrap_or(0)),
        };
        end = end.max(e);
    }
    let natural = table
        .dies
        .children(d)
        .map(|m| table.align_of(m.ty()))
        .max()
        .unwrap_or(1);
    // Members' own (inferred) alignments do not count: pahole judges the tail
    // against the members' types.
    (end != 0 && end < size)
        .then(|| explaining(end, natural, size))
        .flatten()
}

/// Reads structs (those `options` asks for) and the DATASEC's per-CPU variables.
/// `percpu_address` is the address of `.data..percpu` (DATASEC offsets are from it).
pub(crate) fn read<'d>(
    path: &Path,
    data: &'d [u8],
    percpu_address: Option<u64>,
    options: &LoadOptions,
) -> Result<BtfTypes<'d>> {
    let blob = Blob::parse(path, data)?;
    let recs = records(path, &blob)?;
    let strings = Strings {
        debug_info: &[],
        debug_str: blob.strings,
        debug_line_str: &[],
    };
    let mut dies = UnitDies {
        dies: entries(&blob, &recs),
        strings,
    };
    infer_alignment(&mut dies, recs.len(), blob.little_endian);
    let no_files = |_: u64| None;
    let table = TypeTable::new(&dies, 8, blob.little_endian, &no_files, options.pahole_text);
    let mut found = Found {
        table: &table,
        dies: &dies,
        layouts: HashMap::new(),
    };
    for id in 1..=recs.len() {
        let d = &dies.dies[id];
        if is_aggregate(d)
            && let Some(name) = dies.name(d)
            && options.lists(name, false)
        {
            found.add(id, name, false);
        }
        if let Some((i, name)) = typedef_layout(options, &dies, &table, d) {
            found.add(i, name, true);
        }
    }
    let raw_vars = if options.variables {
        let r = Reader {
            data: blob.types,
            little_endian: blob.little_endian,
        };
        percpu_variables(path, &recs, &r, percpu_address, &mut found)?
    } else {
        Vec::new()
    };
    Ok(numbered(found.layouts, raw_vars))
}

/// A layout's key: its name and its layout's fingerprint (two structs of one name may
/// differ).
type LayoutKey<'d> = (&'d str, u64);

/// The struct layouts found so far, one per key.
struct Found<'t, 'd> {
    table: &'t TypeTable<'t, 'd>,
    dies: &'t UnitDies<'d>,
    layouts: HashMap<LayoutKey<'d>, StructLayout<'d>>,
}

impl<'d> Found<'_, 'd> {
    /// The key of entry `i`'s layout under `name`, laid out on first sight.
    fn add(&mut self, i: usize, name: &'d str, typedef: bool) -> LayoutKey<'d> {
        let key = (name, self.table.fingerprint(i));
        let (table, dies) = (self.table, self.dies);
        self.layouts.entry(key).or_insert_with(|| {
            let mut l = table.layout(&dies.dies[i], 0, 0);
            l.name = name;
            l.typedef = typedef;
            l
        });
        key
    }
}

/// A struct or union that is defined here (not only declared).
fn is_aggregate(d: &Die<'_>) -> bool {
    !d.declaration && matches!(d.tag, dw::DW_TAG_structure_type | dw::DW_TAG_union_type)
}

/// The variables of the `.data..percpu` DATASEC, each with the key of its struct's
/// layout (laid out into `found` when new), unnumbered.
fn percpu_variables<'d>(
    path: &Path,
    recs: &[Record],
    r: &Reader<'_>,
    percpu_address: Option<u64>,
    found: &mut Found<'_, 'd>,
) -> Result<Vec<(Variable<'d>, Option<LayoutKey<'d>>)>> {
    let mut raw_vars = Vec::new();
    let strings = found.dies.strings;
    for rec in recs.iter().filter(|r| r.kind == DATASEC) {
        if strings.text(Name::Str(rec.name_off)) != Some(super::elf::PERCPU_SECTION) {
            continue;
        }
        for j in 0..rec.vlen {
            let (var_id, offset) = (
                r.u32(rec.item(j, 12, 0)).unwrap_or(0),
                r.u32(rec.item(j, 12, 4)).unwrap_or(0),
            );
            let Some(var) = (var_id as usize)
                .checked_sub(1)
                .and_then(|k| recs.get(k))
                .filter(|v| v.kind == VAR)
            else {
                continue;
            };
            let Some(name) = strings.text(Name::Str(var.name_off)) else {
                continue;
            };
            let address = percpu_address
                .unwrap_or(0)
                .checked_add(u64::from(offset))
                .ok_or_else(|| {
                    bad(
                        path,
                        format!("per-CPU variable {name} at offset {offset:#x} lies past the end of the address space"),
                    )
                })?;
            let ty = (var.size_type != 0 && (var.size_type as usize) <= recs.len())
                .then_some(var.size_type as usize);
            raw_vars.push(variable(name, address, ty, found));
        }
    }
    Ok(raw_vars)
}

/// The variable `name` at `address` of type entry `ty`, and the key of its struct's
/// layout (through arrays), laid out into `found` when new.
fn variable<'d>(
    name: &'d str,
    address: u64,
    ty: Option<usize>,
    found: &mut Found<'_, 'd>,
) -> (Variable<'d>, Option<LayoutKey<'d>>) {
    let table = found.table;
    let (target, is_array) = table.element_of(ty);
    let dies = found.dies;
    let key = target
        .filter(|t| is_aggregate(t))
        .map(|t| found.add(t.offset as usize, dies.name(t).unwrap_or(""), false));
    let ctype = table.ctype(ty);
    let v = Variable {
        name,
        address,
        ctype: ctype.into(),
        size: table.size_of(ty),
        layout: None,
        is_array,
        alignment: None,
        decl_file: None,
        decl_line: None,
        declared: None,
    };
    (v, key)
}

/// The layouts in (name, size, fingerprint) order, and the variables in address order
/// with their layouts' ids.
fn numbered<'d>(
    layouts: HashMap<LayoutKey<'d>, StructLayout<'d>>,
    raw_vars: Vec<(Variable<'d>, Option<LayoutKey<'d>>)>,
) -> BtfTypes<'d> {
    let mut entries: Vec<(LayoutKey<'d>, StructLayout<'d>)> = layouts.into_iter().collect();
    entries.sort_by(|(ka, a), (kb, b)| (a.name, a.size, ka.1).cmp(&(b.name, b.size, kb.1)));
    let ids: HashMap<LayoutKey<'d>, StructId> = entries
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (*k, StructId(i)))
        .collect();
    let mut variables: Vec<Variable<'d>> = raw_vars
        .into_iter()
        .map(|(mut v, key)| {
            v.layout = key.and_then(|k| ids.get(&k).copied());
            v
        })
        .collect();
    variables.sort_by(|a, b| (a.address, a.name).cmp(&(b.address, b.name)));
    variables.dedup_by(|a, b| a.address == b.address && a.name == b.name);
    BtfTypes {
        structs: entries.into_iter().map(|(_, l)| l).collect(),
        variables,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member ending near 2^64 (a forged offset) rounds up past it: no alignment
    /// explains it, and rounding neither wraps nor panics.
    #[test]
    fn explaining_an_end_near_the_top_does_not_overflow() {
        assert_eq!(explaining(u64::MAX - 3, 4, 64), None);
        assert_eq!(explaining(u64::MAX - 3, 4, 0), None);
        assert_eq!(explaining(40, 8, 64), Some(64));
    }

    /// Item offsets of a record saturate instead of wrapping.
    #[test]
    fn record_items_saturate() {
        let rec = Record {
            name_off: 0,
            kind: STRUCT,
            vlen: 1,
            kind_flag: false,
            size_type: 0,
            extra: usize::MAX - 4,
        };
        assert_eq!(rec.item(0, 12, 4), usize::MAX);
        assert_eq!(rec.item(2, 12, 0), usize::MAX);
        assert_eq!(extra_len(STRUCT, usize::MAX), None);
    }
}
