//! The serialised form of an `Image`: mirrors of the model types with every field the
//! commands read (the model's own serde derives are for JSON output and skip some),
//! names borrowed from the decompressed buffer, and each distinct `CType` stored once.
//! The names that repeat by the hundred thousand (symbols, sections, units, members
//! and their types) are stored once in one string table and referred to by index: the
//! payload is smaller, and reading validates one UTF-8 string instead of each name.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::model::{
    AggregateKind, Binding, BitHole, CType, Hole, Image, Member, Section, Space, StructId,
    StructLayout, Symbol, SymbolKind, TypeKind, Variable,
};

/// Everything one build contributes to `show`, a diff and `check`.
#[derive(Serialize, Deserialize)]
pub(super) struct Form<'d> {
    /// Every distinct name the `Str` fields refer to, end to end.
    #[serde(borrow)]
    pub strings: Cow<'d, str>,
    /// Where each string of `strings` ends (string `i` starts where `i - 1` ends).
    pub ends: Vec<u32>,
    pub arch: &'d str,
    pub big_endian: bool,
    pub file_kind: &'d str,
    pub build_id: Option<&'d str>,
    /// The target's line size (an override is applied when the snapshot is read).
    pub line_size: u64,
    pub has_debug_info: bool,
    /// Where the layouts came from (DWARF, BTF, or nowhere).
    pub types_from: crate::model::TypesFrom,
    pub percpu_base: Option<u64>,
    pub boundaries: Vec<(&'d str, u64)>,
    pub function_prefix: u64,
    pub sections: Vec<SectionForm<'d>>,
    #[serde(deserialize_with = "exact")]
    pub symbols: Vec<SymbolForm>,
    pub ctypes: Vec<CTypeForm<'d>>,
    #[serde(deserialize_with = "exact")]
    pub structs: Vec<StructForm>,
    #[serde(deserialize_with = "exact")]
    pub variables: Vec<VariableForm>,
    pub units: u64,
    /// With `snapshot --with-lines`: `file:line` of each function's first byte and of
    /// each 64-byte boundary inside it, sorted by address.
    pub lines: Option<Vec<(u64, &'d str)>>,
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
    /// `file` as the ELF alone gives it (before compile units are assigned): what a
    /// load without DWARF shows.
    pub elf_file: Option<Str>,
    pub group: u32,
    pub kind: SymbolKind,
    pub binding: Binding,
    pub section: Str,
    pub address: u64,
    pub size: u64,
    pub space: Space,
    pub place: u64,
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

#[derive(Serialize, Deserialize)]
pub(super) struct MemberForm {
    pub name: Option<Str>,
    pub type_name: Str,
    pub offset: u64,
    pub size: u64,
    pub bit_offset: Option<u64>,
    pub bit_size: Option<u64>,
    pub flexible: bool,
    pub nested: Option<Box<StructForm>>,
    pub alignment: Option<u64>,
    /// Index into `Form::ctypes`.
    pub ctype: u32,
    pub hole: u64,
    pub bit_hole: u64,
    pub type_padding: u64,
    pub pointee: Option<Box<StructForm>>,
    pub natural_alignment: u64,
}

#[derive(Serialize, Deserialize)]
pub(super) struct StructForm {
    pub name: Str,
    pub kind: AggregateKind,
    pub decl_file: Option<Str>,
    pub size: u64,
    pub alignment: u64,
    pub explicit_alignment: Option<u64>,
    #[serde(deserialize_with = "members")]
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
    pub address: u64,
    pub type_name: Str,
    pub ctype: u32,
    pub size: Option<u64>,
    pub layout: Option<StructId>,
    pub is_array: bool,
    pub alignment: Option<u64>,
    pub decl_file: Option<Str>,
}

/// Decodes a sequence into a vector reserved at the length the payload states (serde
/// reserves at most 1 MiB ahead and then grows by doubling, which copies and touches
/// up to three times the memory of the result). A forged length reserves at most
/// `EXACT_LIMIT` bytes of address space, which stay untouched when decoding fails.
fn exact<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Seq<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Seq<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let most = EXACT_LIMIT / std::mem::size_of::<T>().max(1);
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(most));
            while let Some(item) = seq.next_element()? {
                out.push(item);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Seq(std::marker::PhantomData))
}

/// Most bytes `exact` reserves up front for one sequence.
const EXACT_LIMIT: usize = 64 << 20;

/// Deepest chain of struct layouts held in one another (`MemberForm::nested` and
/// `pointee`) a snapshot may hold. Decoding recurses once per level, so without a
/// limit a crafted file could exhaust the stack; the real 6.1 kernels go 5 deep.
pub(super) const MAX_NESTING: u32 = 64;

thread_local! {
    /// Levels of `StructForm::members` being decoded on this thread.
    static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// Set when a decode on this thread stopped at `MAX_NESTING` (postcard drops the
    /// message of a custom error, so the reason is passed on here).
    static TOO_DEEP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `exact` for a struct's members, refused past `MAX_NESTING` levels of nesting.
fn members<'de, D>(d: D) -> Result<Vec<MemberForm>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let depth = DEPTH.get();
    if depth >= MAX_NESTING {
        TOO_DEEP.set(true);
        return Err(serde::de::Error::custom("nesting too deep"));
    }
    DEPTH.set(depth + 1);
    let out = exact(d);
    DEPTH.set(depth);
    out
}

/// Decodes a payload; the error says why in one phrase.
pub(super) fn decode(payload: &[u8]) -> Result<Form<'_>, String> {
    DEPTH.set(0);
    TOO_DEEP.set(false);
    postcard::from_bytes(payload).map_err(|e| {
        if TOO_DEEP.get() {
            format!("structs nested more than {MAX_NESTING} levels deep")
        } else {
            format!("cannot decode: {e}")
        }
    })
}

/// Index of a string in `Form::strings`.
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

/// The strings of a decoded form (reading).
struct Strings<'d> {
    all: &'d str,
    ends: Vec<u32>,
}

impl<'d> Strings<'d> {
    fn get(&self, i: Str) -> Result<&'d str, Bad> {
        let i = i as usize;
        let end = *self.ends.get(i).ok_or("string index out of range")? as usize;
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] as usize,
        };
        self.all
            .get(start..end)
            .ok_or("string bounds out of range or inside a character")
    }

    fn opt(&self, i: Option<Str>) -> Result<Option<&'d str>, Bad> {
        i.map(|i| self.get(i)).transpose()
    }
}

/// Gives each distinct `CType` (by `Arc` identity, then by value) one index.
#[derive(Default)]
struct Interner<'a> {
    by_ptr: HashMap<*const CType, u32>,
    by_value: HashMap<&'a CType, u32>,
    list: Vec<&'a CType>,
}

impl<'a> Interner<'a> {
    fn index(&mut self, t: &'a Arc<CType>) -> u32 {
        let ptr = Arc::as_ptr(t);
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
    let variables = image
        .variables
        .iter()
        .map(|v| VariableForm {
            name: names.put(v.name),
            address: v.address,
            type_name: names.put(&v.type_name),
            ctype: types.index(&v.ctype),
            size: v.size,
            layout: v.layout,
            is_array: v.is_array,
            alignment: v.alignment,
            decl_file: v.decl_file.as_deref().map(|f| names.put(f)),
        })
        .collect();
    let symbols = image
        .symbols
        .iter()
        .zip(elf_files.iter().copied().chain(std::iter::repeat(None)))
        .map(|(s, elf_file)| SymbolForm {
            name: names.put(s.name),
            file: s.file.map(|f| names.put(f)),
            unit: s.unit.map(|f| names.put(f)),
            elf_file: elf_file.map(|f| names.put(f)),
            group: s.group,
            kind: s.kind,
            binding: s.binding,
            section: names.put(s.section),
            address: s.address,
            size: s.size,
            space: s.space,
            place: s.place,
        })
        .collect();
    Form {
        strings: Cow::Owned(names.all),
        ends: names.ends,
        arch: &image.arch,
        big_endian: image.big_endian,
        file_kind: image.file_kind,
        build_id: image.build_id.as_deref(),
        line_size: image.line_size,
        has_debug_info: image.has_debug_info,
        types_from: image.types_from,
        percpu_base: image.percpu_base,
        boundaries: image.boundaries.iter().map(|&(n, a)| (n, a)).collect(),
        function_prefix: image.function_prefix,
        sections: image
            .sections
            .iter()
            .map(|s| SectionForm {
                name: s.name,
                address: s.address,
                size: s.size,
                alignment: s.alignment,
                compressed: s.compressed,
            })
            .collect(),
        symbols,
        ctypes: types.list.iter().map(|t| ctype_form(t)).collect(),
        structs,
        variables,
        units: image.units as u64,
        lines,
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
        pahole_before: &t.pahole_before,
        pahole_after: &t.pahole_after,
        anonymous_enum: t
            .anonymous_enum
            .as_ref()
            .map(|(e, size)| (e.iter().map(|(n, v)| (&**n, *v)).collect(), *size)),
        pahole_after_flexible: t.pahole_after_flexible.as_deref(),
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
                type_name: names.put(&m.type_name),
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
                type_padding: m.type_padding,
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

/// `items` converted one by one into a vector reserved once at its final length: a
/// `collect` of fallible conversions cannot know the length and grows by doubling,
/// which copies and touches twice the memory of the result.
fn convert<T, U>(items: Vec<T>, mut f: impl FnMut(T) -> Result<U, Bad>) -> Result<Vec<U>, Bad> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(f(item)?);
    }
    Ok(out)
}

/// The `Image` a form describes. `listing` keeps what only pahole's listing reads;
/// without it those fields are cleared as a diff load leaves them. `dwarf` false
/// drops structs, variables and units, as a load without DWARF has none.
pub(super) fn to_image<'d>(
    form: Form<'d>,
    path: &Path,
    line_size: Option<u64>,
    dwarf: bool,
    listing: bool,
) -> Result<Image<'d>, Bad> {
    if !(form.line_size.is_power_of_two() && (8..=4096).contains(&form.line_size)) {
        return Err("line size is not a power of two between 8 and 4096");
    }
    let names = Strings {
        all: match form.strings {
            Cow::Borrowed(all) => all,
            Cow::Owned(_) => return Err("string table not in the payload"),
        },
        ends: form.ends,
    };
    let ctypes: Vec<Arc<CType>> = form.ctypes.into_iter().map(ctype).collect();
    let ty = |i: u32| {
        ctypes
            .get(i as usize)
            .cloned()
            .ok_or("type index out of range")
    };
    let count = form.structs.len();
    let (structs, variables, units) = if dwarf && form.has_debug_info {
        let structs = convert(form.structs, |s| layout(s, &ty, &names, listing))?;
        let variables = convert(form.variables, |v| {
            if v.layout.is_some_and(|StructId(i)| i >= count) {
                return Err("struct index out of range");
            }
            Ok(Variable {
                name: names.get(v.name)?,
                address: v.address,
                type_name: Cow::Borrowed(names.get(v.type_name)?),
                ctype: ty(v.ctype)?,
                size: v.size,
                layout: v.layout,
                is_array: v.is_array,
                alignment: v.alignment,
                decl_file: names.opt(v.decl_file)?.map(Cow::Borrowed),
            })
        })?;
        (structs, variables, form.units as usize)
    } else {
        (Vec::new(), Vec::new(), 0)
    };
    let with_units = dwarf && form.has_debug_info;
    Ok(Image {
        path: path.to_path_buf(),
        arch: form.arch.to_string(),
        big_endian: form.big_endian,
        file_kind: match form.file_kind {
            "exec" => "exec",
            "rel" => "rel",
            "dyn" => "dyn",
            _ => "other",
        },
        build_id: form.build_id.map(str::to_string),
        line_size: line_size.unwrap_or(form.line_size),
        line_size_overridden: line_size.is_some(),
        has_debug_info: form.has_debug_info,
        types_from: form.types_from,
        percpu_base: form.percpu_base,
        boundaries: form
            .boundaries
            .into_iter()
            .map(|(n, a)| {
                crate::model::BOUNDARY_SYMBOLS
                    .iter()
                    .find(|b| **b == n)
                    .map(|b| (*b, a))
                    .ok_or("unknown boundary symbol")
            })
            .collect::<Result<Vec<_>, Bad>>()?,
        function_prefix: form.function_prefix,
        sections: form
            .sections
            .into_iter()
            .map(|s| Section {
                name: s.name,
                address: s.address,
                size: s.size,
                alignment: s.alignment,
                compressed: s.compressed,
            })
            .collect(),
        symbols: convert(form.symbols, |s| {
            Ok(Symbol {
                name: names.get(s.name)?,
                file: names.opt(if with_units { s.file } else { s.elf_file })?,
                unit: if with_units { names.opt(s.unit)? } else { None },
                group: s.group,
                kind: s.kind,
                binding: s.binding,
                section: names.get(s.section)?,
                address: s.address,
                size: s.size,
                space: s.space,
                place: s.place,
            })
        })?,
        structs,
        variables,
        units,
    })
}

fn ctype(t: CTypeForm<'_>) -> Arc<CType> {
    Arc::new(CType {
        kind: t.kind,
        element: t.element,
        is_const: t.is_const,
        is_volatile: t.is_volatile,
        dims: t.dims,
        aggregate: t.aggregate.map(Into::into),
        c: t.c.into(),
        pahole_before: t.pahole_before.into(),
        pahole_after: t.pahole_after.into(),
        anonymous_enum: t
            .anonymous_enum
            .map(|(e, size)| (e.into_iter().map(|(n, v)| (n.into(), v)).collect(), size)),
        pahole_after_flexible: t.pahole_after_flexible.map(Into::into),
    })
}

fn layout<'d>(
    s: StructForm,
    ty: &impl Fn(u32) -> Result<Arc<CType>, Bad>,
    names: &Strings<'d>,
    listing: bool,
) -> Result<StructLayout<'d>, Bad> {
    let members = convert(s.members, |m| {
        Ok(Member {
            name: names.opt(m.name)?,
            type_name: Cow::Borrowed(names.get(m.type_name)?),
            offset: m.offset,
            size: m.size,
            bit_offset: m.bit_offset,
            bit_size: m.bit_size,
            flexible: m.flexible,
            nested: m
                .nested
                .map(|n| layout(*n, ty, names, listing).map(Box::new))
                .transpose()?,
            alignment: m.alignment,
            ctype: ty(m.ctype)?,
            hole: m.hole,
            bit_hole: m.bit_hole,
            type_padding: if listing { m.type_padding } else { 0 },
            pointee: match m.pointee {
                Some(p) if listing => Some(Box::new(layout(*p, ty, names, listing)?)),
                _ => None,
            },
            natural_alignment: if listing { m.natural_alignment } else { 0 },
        })
    })?;
    Ok(StructLayout {
        name: names.get(s.name)?,
        kind: s.kind,
        decl_file: names.opt(s.decl_file)?.map(Cow::Borrowed),
        size: s.size,
        alignment: s.alignment,
        explicit_alignment: s.explicit_alignment,
        members,
        holes: s.holes,
        bit_holes: s.bit_holes,
        padding: s.padding,
        bit_padding: s.bit_padding,
        pre_hole: s.pre_hole,
        pre_bit_hole: s.pre_bit_hole,
        packed: s.packed && listing,
        typedef: s.typedef,
    })
}

/// The payload of a form whose one struct holds a chain of `depth` one-member structs,
/// each nested in the member of the one before (so `depth + 1` levels), valid in every
/// other respect: what a crafted file would hold. Built from postcard encodings of
/// one-level pieces, without recursing, so any depth can be built.
pub(super) fn nested_chain(depth: usize) -> Vec<u8> {
    let member = |nested: Option<Box<StructForm>>| MemberForm {
        name: Some(0),
        type_name: 0,
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
        type_padding: 0,
        pointee: None,
        natural_alignment: 8,
    };
    let one = |nested: Option<Box<StructForm>>| StructForm {
        name: 0,
        kind: AggregateKind::Struct,
        decl_file: None,
        size: 8,
        alignment: 8,
        explicit_alignment: None,
        members: vec![member(nested)],
        holes: Vec::new(),
        bit_holes: Vec::new(),
        padding: 0,
        bit_padding: 0,
        pre_hole: 0,
        pre_bit_hole: 0,
        packed: false,
        typedef: false,
    };
    let blank = CType::default();
    let form = |structs: Vec<StructForm>| Form {
        strings: Cow::Borrowed("x"),
        ends: vec![1],
        arch: "x86_64",
        big_endian: false,
        file_kind: "exec",
        build_id: None,
        line_size: 64,
        has_debug_info: true,
        types_from: crate::model::TypesFrom::Dwarf,
        percpu_base: None,
        boundaries: Vec::new(),
        function_prefix: 0,
        sections: Vec::new(),
        symbols: Vec::new(),
        ctypes: vec![ctype_form(&blank)],
        structs,
        variables: Vec::new(),
        units: 1,
        lines: None,
    };
    // Encoding plain values into a vector cannot fail.
    fn bytes(v: &impl Serialize) -> Vec<u8> {
        postcard::to_stdvec(v).unwrap_or_default()
    }
    // A struct with `nested: None` is `a + [0] + b`; with `nested: Some(s)`, it is
    // `a + [1] + s + b`. A form with no struct is `x + [0] + y`; with one, `x + [1] +
    // s + y`.
    let leaf = bytes(&one(None));
    let outer = bytes(&one(Some(Box::new(one(None)))));
    let a = common_prefix(&leaf, &outer);
    let b = &leaf[a + 1..];
    let none = bytes(&form(Vec::new()));
    let some = bytes(&form(vec![one(None)]));
    let x = common_prefix(&none, &some);
    let mut out = some[..x + 1].to_vec();
    for _ in 0..depth {
        out.extend_from_slice(&leaf[..a]);
        out.push(1);
    }
    out.extend_from_slice(&leaf);
    for _ in 0..depth {
        out.extend_from_slice(b);
    }
    out.extend_from_slice(&none[x + 1..]);
    out
}

/// Length of the common start of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_refused_past_the_limit_at_any_depth() {
        let levels = |p: &[u8]| -> Result<u32, String> {
            let form = decode(p)?;
            let mut s = form.structs.first().ok_or("no struct")?;
            let mut n = 1;
            while let Some(inner) = s.members.first().and_then(|m| m.nested.as_deref()) {
                (s, n) = (inner, n + 1);
            }
            Ok(n)
        };
        assert_eq!(levels(&nested_chain(0)), Ok(1));
        assert_eq!(levels(&nested_chain(63)), Ok(64));
        let refused = Err("structs nested more than 64 levels deep".to_string());
        assert_eq!(levels(&nested_chain(64)), refused);
        assert_eq!(levels(&nested_chain(1_000_000)), refused);
        // The limit is per decode: a good payload after a refused one decodes.
        assert_eq!(levels(&nested_chain(2)), Ok(3));
    }

    #[test]
    fn string_table_round_trip_and_bad_indexes() {
        let mut t = StringTable::default();
        let (a, b, a2, c) = (t.put("rcu"), t.put("é.c"), t.put("rcu"), t.put(""));
        assert_eq!((a, b, a2, c), (0, 1, 0, 2));
        assert_eq!(
            (t.all.as_str(), t.ends.as_slice()),
            ("rcué.c", &[3, 7, 7][..])
        );
        let s = Strings {
            all: "rcué.c",
            ends: vec![3, 7, 7, 4, 9],
        };
        assert_eq!(
            (s.get(0), s.get(1), s.get(2)),
            (Ok("rcu"), Ok("é.c"), Ok(""))
        );
        assert_eq!(s.opt(None), Ok(None));
        // Past the table, ending inside `é`, ending before it starts, past the text.
        assert_eq!(s.get(5), Err("string index out of range"));
        assert_eq!(
            s.get(3),
            Err("string bounds out of range or inside a character")
        );
        assert_eq!(
            Strings {
                all: "rcué.c",
                ends: vec![4],
            }
            .get(0),
            Err("string bounds out of range or inside a character")
        );
        assert_eq!(
            s.get(4),
            Err("string bounds out of range or inside a character")
        );
    }
}
