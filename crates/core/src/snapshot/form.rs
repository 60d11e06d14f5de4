//! The serialised form of an `Image`: mirrors of the model types with every field the
//! commands read (the model's own serde derives are for JSON output and skip some),
//! names borrowed from the decompressed buffer, and each distinct `CType` stored once.
//! The names that repeat by the hundred thousand (symbols, sections, units, members
//! and their types) are stored once in one string table and referred to by index: the
//! payload is smaller, and reading validates one UTF-8 string instead of each name.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::model::{
    AggregateKind, Binding, BitHole, CType, Hole, Image, Section, Space, StructId, StructLayout,
    Symbol, SymbolKind, TypeGaps, TypeKind, Variable,
};

/// Everything one build contributes to `show`, a diff and `check`, in two parts
/// compressed apart: `Names` (every string the model borrows, and the small facts)
/// stays in memory as long as the image; `Records` (symbols, structs, variables: only
/// numbers and indexes into the names) is decompressed by each load and dropped once
/// read.
pub(super) struct Form<'d> {
    pub names: Names<'d>,
    pub records: Records,
}

/// The first part of a form (read back by `read::head`, field by field in this order).
#[derive(Serialize)]
pub(super) struct Names<'d> {
    /// Every distinct name the `Str` fields refer to, end to end.
    pub strings: Cow<'d, str>,
    /// Where each string of `strings` ends (string `i` starts where `i - 1` ends).
    pub ends: Vec<u32>,
    pub arch: &'d str,
    pub big_endian: bool,
    pub file_kind: &'d str,
    pub build_id: Option<&'d str>,
    /// The kernel release the build names (`Image::kernel_version`), when it does.
    pub kernel_version: Option<&'d str>,
    /// The symbols came from a symbol list: their sizes are inferred.
    pub sizes_inferred: bool,
    /// The target's line size (an override is applied when the snapshot is read).
    pub line_size: u64,
    pub has_debug_info: bool,
    /// Where the layouts came from (DWARF, BTF, or nowhere).
    pub types_from: crate::model::TypesFrom,
    pub percpu_base: Option<u64>,
    pub boundaries: Vec<(&'d str, u64)>,
    pub function_prefix: u64,
    /// `Image::function_alignments`.
    pub function_alignments: Vec<(&'d str, u64)>,
    pub sections: Vec<SectionForm<'d>>,
    pub ctypes: Vec<CTypeForm<'d>>,
    /// With `snapshot --with-lines`: `file:line` of each function's first byte and of
    /// each 64-byte boundary inside it, sorted by address.
    pub lines: Option<LineTable<'d>>,
}

/// Source lines, each file named once: a kernel's hundreds of thousands of lines come
/// from a few thousand files, and spelled out each `file:line` was two thirds of a
/// snapshot's names.
#[derive(Serialize, Deserialize, Default)]
pub(super) struct LineTable<'d> {
    #[serde(borrow)]
    pub files: Vec<&'d str>,
    /// Per line, in address order: the step from the address before it (from 0), the
    /// index of its file, and its line number (`None`: the text had no `:LINE`).
    pub rows: Vec<(u64, u32, Option<u32>)>,
}

impl<'d> LineTable<'d> {
    /// The table of `lines` (`file:line` texts by address, in address order).
    fn of(lines: &[(u64, &'d str)]) -> LineTable<'d> {
        let mut table = LineTable::default();
        let mut index: FxHashMap<&'d str, u32> = FxHashMap::default();
        let mut last = 0u64;
        for &(at, text) in lines {
            let (file, line) = match text.rsplit_once(':').map(|(f, l)| (f, l.parse().ok())) {
                Some((f, Some(l))) => (f, Some(l)),
                _ => (text, None),
            };
            let i = *index.entry(file).or_insert_with(|| {
                table.files.push(file);
                (table.files.len() - 1) as u32
            });
            table
                .rows
                .push((at.wrapping_sub(std::mem::replace(&mut last, at)), i, line));
        }
        table
    }

    /// The `file:line` texts by address again; `None` when a row names no file.
    pub fn texts(&self) -> Option<Vec<(u64, String)>> {
        let mut at = 0u64;
        self.rows
            .iter()
            .map(|&(step, file, line)| {
                at = at.wrapping_add(step);
                let file = self.files.get(file as usize)?;
                Some((
                    at,
                    match line {
                        Some(l) => format!("{file}:{l}"),
                        None => file.to_string(),
                    },
                ))
            })
            .collect()
    }
}

/// The second part of a form, read back by `read::read`. Each field is encoded on its
/// own (`records_bytes`), so that a read decodes them side by side.
pub(super) struct Records {
    pub symbols: Vec<SymbolForm>,
    pub structs: Vec<StructForm>,
    pub variables: Vec<VariableForm>,
    pub units: u64,
    /// The code's data references (`model::access`), by index into `symbols`.
    pub access: crate::model::access::AccessMap,
    /// What the link model says aligned each symbol, by index into `symbols`: a diff
    /// reads them instead of laying the build's sections out again.
    pub alignments: Vec<Option<crate::model::Alignment>>,
    /// The typed access map (`model::typed`), decoded only when a load asks for it.
    pub typed: super::typed_form::TypedForm,
}

#[derive(Serialize, Deserialize)]
pub(super) struct SectionForm<'d> {
    pub name: &'d str,
    pub address: u64,
    pub size: u64,
    pub alignment: u64,
    pub compressed: bool,
}

#[derive(Serialize, Deserialize)]
pub(super) struct SymbolForm {
    pub name: Str,
    pub file: Option<Str>,
    pub unit: Option<Str>,
    /// The compile unit of any symbol (`Symbol::compile_unit`).
    pub compile_unit: Option<Str>,
    /// `file` as the ELF alone gives it (before compile units are assigned): what a
    /// load without DWARF shows.
    pub elf_file: Option<Str>,
    pub group: u32,
    pub kind: SymbolKind,
    pub binding: Binding,
    pub section: Str,
    /// The address minus the previous symbol's (the first's: minus 0), wrapping:
    /// symbols are in (space, place) order, so most steps fit a byte or two where a
    /// kernel address takes ten.
    pub address_step: i64,
    pub size: u64,
    pub space: Space,
    /// The place minus the address, wrapping: 0 but for per-CPU symbols of a kernel
    /// whose per-CPU section is not linked at 0.
    pub place_offset: i64,
}

#[derive(Serialize, Deserialize)]
pub(super) struct CTypeForm<'d> {
    pub kind: TypeKind,
    pub element: TypeKind,
    pub is_const: bool,
    pub is_volatile: bool,
    pub dims: Vec<u64>,
    pub aggregate: Option<&'d str>,
    pub c: &'d str,
    pub pahole_before: &'d str,
    pub pahole_after: &'d str,
    pub anonymous_enum: Option<(Vec<(&'d str, i64)>, u64)>,
    pub pahole_after_flexible: Option<&'d str>,
}

/// A member; `read::OneMember` reads these fields back in this order.
#[derive(Serialize)]
pub(super) struct MemberForm {
    pub name: Option<Str>,
    pub offset: u64,
    pub size: u64,
    pub bit_offset: Option<u32>,
    pub bit_size: Option<u32>,
    pub flexible: bool,
    pub nested: Option<Box<StructForm>>,
    pub alignment: Option<u32>,
    /// Index into `Names::ctypes`.
    pub ctype: u32,
    pub hole: u32,
    pub bit_hole: u32,
    pub type_gaps: TypeGaps,
    pub pointee: Option<Box<StructForm>>,
    pub natural_alignment: u32,
}

/// A struct layout; `read::Layout` reads these fields back in this order.
#[derive(Serialize)]
pub(super) struct StructForm {
    pub name: Str,
    pub kind: AggregateKind,
    pub decl_file: Option<Str>,
    pub size: u64,
    pub alignment: u64,
    pub explicit_alignment: Option<u64>,
    pub members: Vec<MemberForm>,
    pub holes: Vec<Hole>,
    pub bit_holes: Vec<BitHole>,
    pub padding: u64,
    pub bit_padding: u64,
    pub pre_hole: u64,
    pub pre_bit_hole: u64,
    pub packed: bool,
    pub typedef: bool,
}

#[derive(Serialize, Deserialize)]
pub(super) struct VariableForm {
    pub name: Str,
    /// The address minus the previous variable's, wrapping (variables are in address
    /// order), as `SymbolForm::address_step`.
    pub address_step: i64,
    pub ctype: u32,
    pub size: Option<u64>,
    pub layout: Option<StructId>,
    pub is_array: bool,
    pub alignment: Option<u64>,
    pub decl_file: Option<Str>,
    pub decl_line: Option<u32>,
    pub declared: Option<u32>,
}

/// Index of a string in `Names::strings`.
pub(super) type Str = u32;

/// Gives each distinct string one index (writing).
#[derive(Default)]
struct StringTable<'a> {
    index: FxHashMap<&'a str, Str>,
    all: String,
    ends: Vec<u32>,
}

impl<'a> StringTable<'a> {
    fn put(&mut self, s: &'a str) -> Str {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.all.push_str(s);
        self.ends.push(self.all.len() as u32);
        let i = (self.ends.len() - 1) as Str;
        self.index.insert(s, i);
        i
    }
}

/// Gives each distinct `CType` (by address, then by value) one index.
#[derive(Default)]
struct Interner<'a> {
    by_ptr: FxHashMap<*const CType, u32>,
    by_value: FxHashMap<&'a CType, u32>,
    list: Vec<&'a CType>,
}

impl<'a> Interner<'a> {
    fn index(&mut self, t: &'a CType) -> u32 {
        let ptr = t as *const CType;
        if let Some(&i) = self.by_ptr.get(&ptr) {
            return i;
        }
        let i = *self.by_value.entry(t).or_insert_with(|| {
            self.list.push(t);
            (self.list.len() - 1) as u32
        });
        self.by_ptr.insert(ptr, i);
        i
    }
}

/// The form of `image`; `elf_files` are the symbols' `file` before DWARF assigned
/// units (same order as `image.symbols`).
pub(super) fn from_image<'a>(
    image: &'a Image<'a>,
    elf_files: &[Option<&'a str>],
    lines: Option<Vec<(u64, &'a str)>>,
) -> Form<'a> {
    let mut types = Interner::default();
    let mut names = StringTable::default();
    let structs = image
        .structs
        .iter()
        .map(|s| struct_form(s, &mut types, &mut names))
        .collect();
    // Strings and types are numbered in order of first use: structs, variables, then
    // symbols.
    let variables = variable_forms(&image.variables, &mut types, &mut names);
    let symbols = symbol_forms(&image.symbols, elf_files, &mut names);
    Form {
        names: Names {
            strings: Cow::Owned(names.all),
            ends: names.ends,
            arch: &image.arch,
            big_endian: image.big_endian,
            file_kind: image.file_kind,
            build_id: image.build_id.as_deref(),
            kernel_version: image.kernel_version.as_deref(),
            sizes_inferred: image.sizes_inferred,
            line_size: image.line_size,
            has_debug_info: image.has_debug_info,
            types_from: image.types_from,
            percpu_base: image.percpu_base,
            boundaries: image.boundaries.iter().map(|&(n, a)| (n, a)).collect(),
            function_prefix: image.function_prefix,
            function_alignments: image.function_alignments.clone(),
            sections: image.sections.iter().map(section_form).collect(),
            ctypes: types.list.iter().map(|t| ctype_form(t)).collect(),
            lines: lines.as_deref().map(LineTable::of),
        },
        records: Records {
            symbols,
            structs,
            variables,
            units: image.units as u64,
            access: image.access.clone(),
            alignments: link_alignments(image),
            typed: super::typed_form::TypedForm::of(&image.typed, &image.symbols),
        },
    }
}

/// How many parts `records_bytes` lays out: the fields of `Records`, in its order.
pub(super) const PARTS: usize = 7;

/// The decompressed records block: the length of each part (`PARTS` of them, u64 little
/// endian), then the parts, each the postcard encoding of one field of `records`.
pub(super) fn records_bytes(records: &Records) -> Result<Vec<u8>, postcard::Error> {
    let parts = [
        postcard::to_stdvec(&records.symbols)?,
        postcard::to_stdvec(&records.structs)?,
        postcard::to_stdvec(&records.variables)?,
        postcard::to_stdvec(&records.units)?,
        postcard::to_stdvec(&records.access)?,
        postcard::to_stdvec(&records.alignments)?,
        postcard::to_stdvec(&records.typed)?,
    ];
    Ok(joined(&parts))
}

/// `parts` behind the table of their lengths.
fn joined(parts: &[Vec<u8>; PARTS]) -> Vec<u8> {
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(8 * PARTS + total);
    for part in parts {
        out.extend_from_slice(&(part.len() as u64).to_le_bytes());
    }
    for part in parts {
        out.extend_from_slice(part);
    }
    out
}

/// The link model's alignment of each of the image's symbols: the stored ones when
/// they still hold, else the link model's, laid out once here.
fn link_alignments(image: &Image<'_>) -> Vec<Option<crate::model::Alignment>> {
    match image.stored_alignments() {
        Some(stored) => stored.to_vec(),
        None => crate::link::LinkMap::build(image).alignments(image.symbols.len()),
    }
}

/// The variables' records, each address a step from the previous one.
fn variable_forms<'a>(
    variables: &'a [Variable<'a>],
    types: &mut Interner<'a>,
    names: &mut StringTable<'a>,
) -> Vec<VariableForm> {
    let mut last_variable = 0u64;
    variables
        .iter()
        .map(|v| VariableForm {
            name: names.put(v.name),
            address_step: v
                .address
                .wrapping_sub(std::mem::replace(&mut last_variable, v.address))
                as i64,
            ctype: types.index(&v.ctype),
            size: v.size,
            layout: v.layout,
            is_array: v.is_array,
            alignment: v.alignment,
            decl_file: v.decl_file.as_deref().map(|f| names.put(f)),
            decl_line: v.decl_line,
            declared: v.declared,
        })
        .collect()
}

/// The symbols' records, each address a step from the previous one, with the file
/// names the ELF alone gives (`elf_files`, by symbol; missing ones are `None`).
fn symbol_forms<'a>(
    symbols: &'a [Symbol<'a>],
    elf_files: &[Option<&'a str>],
    names: &mut StringTable<'a>,
) -> Vec<SymbolForm> {
    let mut last_symbol = 0u64;
    symbols
        .iter()
        .zip(elf_files.iter().copied().chain(std::iter::repeat(None)))
        .map(|(s, elf_file)| SymbolForm {
            name: names.put(s.name),
            file: s.file.map(|f| names.put(f)),
            unit: s.unit.map(|f| names.put(f)),
            compile_unit: s.compile_unit.map(|f| names.put(f)),
            elf_file: elf_file.map(|f| names.put(f)),
            group: s.group,
            kind: s.kind,
            binding: s.binding,
            section: names.put(s.section),
            address_step: s
                .address
                .wrapping_sub(std::mem::replace(&mut last_symbol, s.address))
                as i64,
            size: s.size,
            space: s.space,
            place_offset: s.place.wrapping_sub(s.address) as i64,
        })
        .collect()
}

/// A section's record.
fn section_form<'a>(s: &Section<'a>) -> SectionForm<'a> {
    SectionForm {
        name: s.name,
        address: s.address,
        size: s.size,
        alignment: s.alignment,
        compressed: s.compressed,
    }
}

fn ctype_form(t: &CType) -> CTypeForm<'_> {
    CTypeForm {
        kind: t.kind,
        element: t.element,
        is_const: t.is_const,
        is_volatile: t.is_volatile,
        dims: t.dims.clone(),
        aggregate: t.aggregate.as_deref(),
        c: &t.c,
        pahole_before: t.pahole_before(),
        pahole_after: t.pahole_after(),
        anonymous_enum: t
            .anonymous_enum()
            .as_ref()
            .map(|(e, size)| (e.iter().map(|(n, v)| (&**n, *v)).collect(), *size)),
        pahole_after_flexible: t.pahole_after_flexible(),
    }
}

fn struct_form<'a>(
    s: &'a StructLayout<'a>,
    types: &mut Interner<'a>,
    names: &mut StringTable<'a>,
) -> StructForm {
    StructForm {
        name: names.put(s.name),
        kind: s.kind,
        decl_file: s.decl_file.as_deref().map(|f| names.put(f)),
        size: s.size,
        alignment: s.alignment,
        explicit_alignment: s.explicit_alignment,
        members: s
            .members
            .iter()
            .map(|m| MemberForm {
                name: m.name.map(|n| names.put(n)),
                offset: m.offset,
                size: m.size,
                bit_offset: m.bit_offset,
                bit_size: m.bit_size,
                flexible: m.flexible,
                nested: m
                    .nested
                    .as_ref()
                    .map(|n| Box::new(struct_form(n, types, names))),
                alignment: m.alignment,
                ctype: types.index(&m.ctype),
                hole: m.hole,
                bit_hole: m.bit_hole,
                type_gaps: m.type_gaps,
                pointee: m
                    .pointee
                    .as_ref()
                    .map(|p| Box::new(struct_form(p, types, names))),
                natural_alignment: m.natural_alignment,
            })
            .collect(),
        holes: s.holes.clone(),
        bit_holes: s.bit_holes.clone(),
        padding: s.padding,
        bit_padding: s.bit_padding,
        pre_hole: s.pre_hole,
        pre_bit_hole: s.pre_bit_hole,
        packed: s.packed,
        typedef: s.typedef,
    }
}

/// Why a decoded form cannot be an `Image` (an index out of range).
pub(super) type Bad = &'static str;

/// The two parts (names, records) of a form whose one struct holds a chain of `depth`
/// one-member structs, each nested in the member of the one before (so `depth + 1`
/// levels), valid in every other respect: what a crafted file would hold. The records
/// are built from postcard encodings of one-level pieces, without recursing, so any
/// depth can be built.
pub(super) fn nested_chain(depth: usize) -> (Vec<u8>, Vec<u8>) {
    let one = chain_struct;
    let blank = CType::default();
    let names = chain_names(&blank);
    // Encoding plain values into a vector cannot fail.
    fn bytes(v: &impl Serialize) -> Vec<u8> {
        postcard::to_stdvec(v).unwrap_or_default()
    }
    // A struct with `nested: None` is `a + [0] + b`; with `nested: Some(s)`, it is
    // `a + [1] + s + b`. The structs part holding that one struct is its count, then it.
    let leaf = bytes(&one(None));
    let outer = bytes(&one(Some(Box::new(one(None)))));
    let a = common_prefix(&leaf, &outer);
    let b = &leaf[a + 1..];
    let mut structs = bytes(&1u32);
    for _ in 0..depth {
        structs.extend_from_slice(&leaf[..a]);
        structs.push(1);
    }
    structs.extend_from_slice(&leaf);
    for _ in 0..depth {
        structs.extend_from_slice(b);
    }
    let none: Vec<u8> = bytes(&Vec::<()>::new());
    let access = bytes(&crate::model::access::AccessMap::default());
    let parts = [
        none.clone(),
        structs,
        none.clone(),
        bytes(&1u64),
        access,
        none,
        bytes(&super::typed_form::TypedForm::default()),
    ];
    (bytes(&names), joined(&parts))
}

/// `nested_chain`'s struct: one 8-byte member, holding `nested` when given.
fn chain_struct(nested: Option<Box<StructForm>>) -> StructForm {
    let member = MemberForm {
        name: Some(0),
        offset: 0,
        size: 8,
        bit_offset: None,
        bit_size: None,
        flexible: false,
        nested,
        alignment: None,
        ctype: 0,
        hole: 0,
        bit_hole: 0,
        type_gaps: TypeGaps::default(),
        pointee: None,
        natural_alignment: 8,
    };
    StructForm {
        name: 0,
        kind: AggregateKind::Struct,
        decl_file: None,
        size: 8,
        alignment: 8,
        explicit_alignment: None,
        members: vec![member],
        holes: Vec::new(),
        bit_holes: Vec::new(),
        padding: 0,
        bit_padding: 0,
        pre_hole: 0,
        pre_bit_hole: 0,
        packed: false,
        typedef: false,
    }
}

/// `nested_chain`'s names: one string, one type (`blank`).
fn chain_names(blank: &CType) -> Names<'_> {
    Names {
        strings: Cow::Borrowed("x"),
        ends: vec![1],
        arch: "x86_64",
        big_endian: false,
        file_kind: "exec",
        build_id: None,
        kernel_version: None,
        sizes_inferred: false,
        line_size: 64,
        has_debug_info: true,
        types_from: crate::model::TypesFrom::Dwarf,
        percpu_base: None,
        boundaries: Vec::new(),
        function_prefix: 0,
        function_alignments: Vec::new(),
        sections: Vec::new(),
        ctypes: vec![ctype_form(blank)],
        lines: None,
    }
}

/// Length of the common start of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_tables_name_each_file_once_and_give_the_texts_back() {
        let lines = [
            (0xffffffff81000000, "kernel/fork.c:12"),
            (0xffffffff81000040, "kernel/fork.c:19"),
            (0xffffffff81000080, "a:b.c:7"),
            (0xffffffff810000c0, "no line"),
            (0xffffffff81000100, "kernel/fork.c:x"),
        ];
        let table = LineTable::of(&lines);
        assert_eq!(
            table.files,
            vec!["kernel/fork.c", "a:b.c", "no line", "kernel/fork.c:x"]
        );
        assert_eq!(
            table.rows,
            vec![
                (0xffffffff81000000, 0, Some(12)),
                (0x40, 0, Some(19)),
                (0x40, 1, Some(7)),
                (0x40, 2, None),
                (0x40, 3, None),
            ]
        );
        let back: Vec<(u64, String)> = lines.iter().map(|&(a, t)| (a, t.to_string())).collect();
        assert_eq!(table.texts(), Some(back));
        let broken = LineTable {
            files: Vec::new(),
            rows: vec![(1, 0, None)],
        };
        assert_eq!(broken.texts(), None);
    }

    #[test]
    fn string_table_round_trip() {
        let mut t = StringTable::default();
        let (a, b, a2, c) = (t.put("rcu"), t.put("é.c"), t.put("rcu"), t.put(""));
        assert_eq!((a, b, a2, c), (0, 1, 0, 2));
        assert_eq!(
            (t.all.as_str(), t.ends.as_slice()),
            ("rcué.c", &[3, 7, 7][..])
        );
    }
}
