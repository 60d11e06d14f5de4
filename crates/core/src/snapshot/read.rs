//! Reading a snapshot's two decompressed parts straight into the model: the postcard
//! encodings of `form::Names` and `form::Records` are walked field by field with serde
//! seeds that hold the string table and the types, so each symbol, struct, member and
//! variable is built where it is decoded. Decoding into the form's mirrors first and
//! converting them afterwards wrote and read every record twice and kept both copies
//! alive at once. The records' fields are encoded apart, so they are decoded side by
//! side on the rayon pool. The image borrows from the names only: the records can be
//! dropped once read.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};

use super::error::SnapshotError;
use super::form::{Bad, CTypeForm, PARTS, SectionForm, Str, SymbolForm, VariableForm};
use crate::model::access::{AccessKind, AccessMap};
use crate::model::{
    AggregateKind, Alignment, BitHole, CType, Declaration, Hole, Image, Member, Section,
    StoredAlignments, StructId, StructLayout, Symbol, TypeGaps, TypeRef, TypesFrom, Variable,
};

/// Deepest chain of struct layouts held in one another (`MemberForm::nested` and
/// `pointee`) a snapshot may hold. Decoding recurses once per level, so without a
/// limit a crafted file could exhaust the stack; the real 6.1 kernels go 5 deep.
pub(super) const MAX_NESTING: u32 = 64;
const TOO_DEEP: Bad = "structs nested more than 64 levels deep";

/// What a read keeps of a payload.
#[derive(Clone, Copy)]
pub(super) struct Wanted {
    /// Keep what only pahole's listing reads (else cleared, as a diff load leaves it).
    pub listing: bool,
    /// Keep structs, variables and units (a load without DWARF has none).
    pub dwarf: bool,
    /// Decode the typed access map (`show --access`); others leave it empty.
    pub typed: bool,
}

/// The type table of a snapshot's names, built by the first read that asks for it in
/// each shape (a diff's, or pahole's listing's) and kept beside the names: members and
/// variables borrow their types from it.
#[derive(Debug, Default)]
pub struct Types {
    plain: OnceLock<Vec<CType>>,
    listing: OnceLock<Vec<CType>>,
}

/// Reads a snapshot's decompressed `names` and `records` into an image at `path` (the
/// line size not yet overridden); `types` must belong to these names.
pub(super) fn read<'d>(
    names: &'d [u8],
    types: &'d Types,
    records: &[u8],
    path: &Path,
    wanted: Wanted,
) -> Result<Image<'d>, SnapshotError> {
    let failure = Cell::new(None);
    let head = head(names, Some(types), wanted.listing, false, &failure)?;
    let with_units = wanted.dwarf && head.has_debug_info;
    let decoder = Decoder {
        names: &head.strings,
        types: head.types,
        listing: wanted.listing,
    };
    let [
        symbols,
        structs,
        variables,
        units,
        access,
        alignments,
        typed,
    ] = split(records)?;
    let (symbols, structs, variables, units, access, alignments) = decoder.bodies(
        [symbols, structs, variables, units, access, alignments],
        with_units,
    )?;
    let typed = match wanted.typed && with_units {
        true => {
            let form: super::typed_form::TypedForm = postcard::from_bytes(typed)
                .map_err(|_| SnapshotError::Invalid("typed access map does not decode"))?;
            form.into_map(&symbols).map_err(SnapshotError::Invalid)?
        }
        false => Default::default(),
    };
    if !within_sections(&symbols, &head.sections) {
        return Err(SnapshotError::Invalid(
            "a symbol runs past the end of its section",
        ));
    }
    let (structs, variables, units) = if with_units {
        (structs, variables, units as usize)
    } else {
        (Vec::new(), Vec::new(), 0)
    };
    // Found on the whole image: they hold for a read that keeps its units, structs
    // and variables, which the link model reads.
    let link_alignments = with_units.then_some(StoredAlignments {
        line_size: head.line_size,
        by_symbol: alignments,
    });
    Ok(Image {
        big_endian: head.big_endian,
        file_kind: head.file_kind,
        build_id: head.build_id.map(str::to_string),
        kernel_version: head.kernel_version.map(str::to_string),
        has_debug_info: head.has_debug_info,
        sizes_inferred: head.sizes_inferred,
        types_from: head.types_from,
        percpu_base: head.percpu_base,
        boundaries: head.boundaries,
        function_prefix: head.function_prefix,
        function_alignments: head.function_alignments,
        sections: head.sections,
        symbols,
        structs,
        variables,
        units,
        access,
        typed,
        link_alignments,
        ..Image::new(path.to_path_buf(), head.arch.to_string(), head.line_size)
    })
}

/// Every symbol ends within the last section of its section's name (loaders bound
/// sizes by the symbol's own section): a size past that, crafted or corrupted, would
/// put the object on every line after it and make finding co-tenants quadratic.
fn within_sections(symbols: &[Symbol<'_>], sections: &[Section<'_>]) -> bool {
    let mut ends: Vec<(&str, u64)> = Vec::new();
    for s in sections {
        let end = s.address.saturating_add(s.size);
        match ends.iter_mut().find(|(n, _)| *n == s.name) {
            Some((_, e)) => *e = (*e).max(end),
            None => ends.push((s.name, end)),
        }
    }
    // Symbols in one section follow one another: its end is looked up on a change.
    let (mut name, mut end) = ("", u64::MAX);
    symbols.iter().all(|s| {
        if s.section.as_ptr() != name.as_ptr() || s.section.len() != name.len() {
            name = s.section;
            end = ends
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(u64::MAX, |&(_, e)| e);
        }
        s.size == 0 || s.address.checked_add(s.size).is_some_and(|e| e <= end)
    })
}

/// The source lines kept in a snapshot's decompressed `names` (`None` when written
/// without them).
pub(super) fn lines(names: &[u8]) -> Result<Option<Vec<(u64, String)>>, SnapshotError> {
    match head(names, None, false, true, &Cell::new(None))?.lines {
        Some(table) => table
            .texts()
            .map(Some)
            .ok_or(SnapshotError::Invalid("a source line names no file")),
        None => Ok(None),
    }
}

/// The failure's reason, or postcard's message when the shape itself was wrong.
fn reason(failure: &Cell<Option<Bad>>, e: postcard::Error) -> SnapshotError {
    match failure.get() {
        Some(why) => SnapshotError::Invalid(why),
        None => SnapshotError::Decode(e),
    }
}

/// What `form::Names` holds, checked and shaped for the model.
struct Head<'d> {
    strings: Strings<'d>,
    arch: &'d str,
    big_endian: bool,
    file_kind: &'static str,
    build_id: Option<&'d str>,
    kernel_version: Option<&'d str>,
    sizes_inferred: bool,
    line_size: u64,
    has_debug_info: bool,
    types_from: TypesFrom,
    percpu_base: Option<u64>,
    boundaries: Vec<(&'static str, u64)>,
    function_prefix: u64,
    function_alignments: Vec<(&'d str, u64)>,
    sections: Vec<Section<'d>>,
    /// Empty when read for the source lines only.
    types: &'d [CType],
    lines: Option<super::form::LineTable<'d>>,
}

/// Reads `form::Names` (into `types`, when given and not yet built, the types shaped
/// for pahole's listing when `listing`; the source lines only when `lines`).
fn head<'d>(
    names: &'d [u8],
    types: Option<&'d Types>,
    listing: bool,
    lines: bool,
    failure: &Cell<Option<Bad>>,
) -> Result<Head<'d>, SnapshotError> {
    let mut de = postcard::Deserializer::from_bytes(names);
    let visitor = NamesVisitor {
        types,
        listing,
        lines,
        failure,
    };
    de.deserialize_tuple(NAMES_FIELDS, visitor)
        .map_err(|e| reason(failure, e))
}

/// Fields of `form::Names`, in order.
const NAMES_FIELDS: usize = 18;

/// The strings of a payload.
pub(super) struct Strings<'d> {
    pub all: &'d str,
    pub ends: Vec<u32>,
}

impl<'d> Strings<'d> {
    pub fn get(&self, i: Str) -> Result<&'d str, Bad> {
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

    pub fn opt(&self, i: Option<Str>) -> Result<Option<&'d str>, Bad> {
        i.map(|i| self.get(i)).transpose()
    }
}

/// What every seed shares: the strings, the types, what to keep, and where the reason
/// for a failure goes (postcard keeps no message of a custom error).
struct Ctx<'c, 'd> {
    names: &'c Strings<'d>,
    types: &'d [CType],
    listing: bool,
    failure: &'c Cell<Option<Bad>>,
}

impl<'d> Ctx<'_, 'd> {
    fn fail<E: de::Error>(&self, why: Bad) -> E {
        self.failure.set(Some(why));
        E::custom(why)
    }

    fn check<T, E: de::Error>(&self, r: Result<T, Bad>) -> Result<T, E> {
        r.map_err(|why| self.fail(why))
    }

    fn ty<E: de::Error>(&self, i: u32) -> Result<TypeRef<'d>, E> {
        match self.types.get(i as usize) {
            Some(t) => Ok(TypeRef::Borrowed(t)),
            None => Err(self.fail("type index out of range")),
        }
    }
}

/// The next element of a sequence the form's shape says is there.
fn next<'de, A: SeqAccess<'de>, T: de::Deserialize<'de>>(seq: &mut A) -> Result<T, A::Error> {
    seq.next_element()?
        .ok_or_else(|| de::Error::custom("payload ends early"))
}

fn next_seed<'de, A: SeqAccess<'de>, S: DeserializeSeed<'de>>(
    seq: &mut A,
    seed: S,
) -> Result<S::Value, A::Error> {
    seq.next_element_seed(seed)?
        .ok_or_else(|| de::Error::custom("payload ends early"))
}

/// Most bytes reserved up front for one list: a forged length reserves at most this
/// much address space, which stays untouched when decoding fails.
const RESERVE_LIMIT: usize = 64 << 20;

/// A vector reserved at the length the payload states (serde reserves at most 1 MiB
/// ahead and then grows by doubling, which copies and touches up to three times the
/// memory of the result).
fn reserved<T>(hint: Option<usize>) -> Vec<T> {
    let most = RESERVE_LIMIT / std::mem::size_of::<T>().max(1);
    Vec::with_capacity(hint.unwrap_or(0).min(most))
}

/// A list whose elements are decoded as `T` and turned into model values one by one.
struct List<'c, 'd, T, F> {
    ctx: &'c Ctx<'c, 'd>,
    each: F,
    item: PhantomData<T>,
}

fn list<'c, 'd, T, U, F>(ctx: &'c Ctx<'c, 'd>, each: F) -> List<'c, 'd, T, F>
where
    F: FnMut(&Ctx<'c, 'd>, T) -> Result<U, Bad>,
{
    List {
        ctx,
        each,
        item: PhantomData,
    }
}

impl<'de, 'c, 'd, T, U, F> DeserializeSeed<'de> for List<'c, 'd, T, F>
where
    T: de::Deserialize<'de>,
    F: FnMut(&Ctx<'c, 'd>, T) -> Result<U, Bad>,
{
    type Value = Vec<U>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<U>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, 'c, 'd, T, U, F> Visitor<'de> for List<'c, 'd, T, F>
where
    T: de::Deserialize<'de>,
    F: FnMut(&Ctx<'c, 'd>, T) -> Result<U, Bad>,
{
    type Value = Vec<U>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Vec<U>, A::Error> {
        let mut out = reserved(seq.size_hint());
        while let Some(item) = seq.next_element::<T>()? {
            let value = (self.each)(self.ctx, item);
            out.push(self.ctx.check(value)?);
        }
        Ok(out)
    }
}

/// A list whose elements are each decoded by the same seed.
struct Each<S>(S);

impl<'de, S: DeserializeSeed<'de> + Copy> DeserializeSeed<'de> for Each<S> {
    type Value = Vec<S::Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, S: DeserializeSeed<'de> + Copy> Visitor<'de> for Each<S> {
    type Value = Vec<S::Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = reserved(seq.size_hint());
        while let Some(item) = seq.next_element_seed(self.0)? {
            out.push(item);
        }
        Ok(out)
    }
}

/// Reads an `AccessMap` as its derived `Deserialize` would, with its two lists
/// reserved at their stated lengths (the refs are the largest list of a payload, a
/// few hundred thousand on a kernel, and serde's own vector grows them by doubling).
#[derive(Clone, Copy)]
struct AccessSeed;

impl<'de> DeserializeSeed<'de> for AccessSeed {
    type Value = AccessMap;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<AccessMap, D::Error> {
        d.deserialize_tuple(6, self)
    }
}

impl<'de> Visitor<'de> for AccessSeed {
    type Value = AccessMap;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an access map")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AccessMap, A::Error> {
        Ok(AccessMap {
            supported: next(&mut seq)?,
            refs: next_seed(&mut seq, Each(PhantomData))?,
            writers: next_seed(&mut seq, Each(PhantomData))?,
            counts: next(&mut seq)?,
            calls: next_seed(&mut seq, Each(PhantomData))?,
            taken: next_seed(&mut seq, Each(PhantomData))?,
        })
    }
}

/// Reads `form::Names`.
struct NamesVisitor<'d, 'f> {
    types: Option<&'d Types>,
    listing: bool,
    /// Decode the source lines (the last field; a load of the image never reads them,
    /// and they are most of a `--with-lines` snapshot's names).
    lines: bool,
    failure: &'f Cell<Option<Bad>>,
}

impl<'de> Visitor<'de> for NamesVisitor<'de, '_> {
    type Value = Head<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a snapshot's names")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Head<'de>, A::Error> {
        let fail = |why: Bad| {
            self.failure.set(Some(why));
            de::Error::custom(why)
        };
        let strings = Strings {
            all: next(&mut seq)?,
            ends: next(&mut seq)?,
        };
        let arch: &str = next(&mut seq)?;
        let big_endian: bool = next(&mut seq)?;
        let file_kind: &str = next(&mut seq)?;
        let build_id: Option<&str> = next(&mut seq)?;
        let kernel_version: Option<&str> = next(&mut seq)?;
        let sizes_inferred: bool = next(&mut seq)?;
        let line_size: u64 = next(&mut seq)?;
        let has_debug_info: bool = next(&mut seq)?;
        let types_from: TypesFrom = next(&mut seq)?;
        let percpu_base: Option<u64> = next(&mut seq)?;
        let boundaries: Vec<(&str, u64)> = next(&mut seq)?;
        let function_prefix: u64 = next(&mut seq)?;
        let function_alignments: Vec<(&str, u64)> = next(&mut seq)?;
        let sections: Vec<SectionForm<'de>> = next(&mut seq)?;
        let types = self.types_of(&mut seq, &strings)?;
        let lines: Option<super::form::LineTable<'de>> =
            if self.lines { next(&mut seq)? } else { None };
        if !(line_size.is_power_of_two() && (8..=4096).contains(&line_size)) {
            return Err(fail("line size is not a power of two between 8 and 4096"));
        }
        let boundaries = known_boundaries(boundaries).map_err(fail)?;
        Ok(Head {
            strings,
            arch,
            big_endian,
            file_kind: file_kind_name(file_kind),
            build_id,
            kernel_version,
            sizes_inferred,
            line_size,
            has_debug_info,
            types_from,
            percpu_base,
            boundaries,
            function_prefix,
            function_alignments,
            sections: sections.into_iter().map(section).collect(),
            types,
            lines,
        })
    }
}

impl<'de> NamesVisitor<'de, '_> {
    /// The type table, built the first time this shape of it is asked for, each type
    /// where it is decoded; read past when built already, or not wanted.
    fn types_of<A: SeqAccess<'de>>(
        &self,
        seq: &mut A,
        strings: &Strings<'de>,
    ) -> Result<&'de [CType], A::Error> {
        let listing = self.listing;
        let cell = self
            .types
            .map(|t| if listing { &t.listing } else { &t.plain });
        Ok(match cell {
            Some(cell) if cell.get().is_none() => {
                let no_types = [];
                let ctx = Ctx {
                    names: strings,
                    types: &no_types,
                    listing,
                    failure: self.failure,
                };
                let built = next_seed(seq, list(&ctx, move |_, t| Ok(ctype(t, listing))))?;
                cell.get_or_init(|| built)
            }
            Some(cell) => {
                let _: Vec<CTypeForm<'de>> = next(seq)?;
                cell.get().map_or(&[], Vec::as_slice)
            }
            None => {
                let _: Vec<CTypeForm<'de>> = next(seq)?;
                &[]
            }
        })
    }
}

/// The boundary symbols by the model's own names; an unknown one is an error.
fn known_boundaries(boundaries: Vec<(&str, u64)>) -> Result<Vec<(&'static str, u64)>, Bad> {
    boundaries
        .into_iter()
        .map(|(n, a)| {
            crate::model::BOUNDARY_SYMBOLS
                .iter()
                .find(|b| **b == n)
                .map(|b| (*b, a))
                .ok_or("unknown boundary symbol")
        })
        .collect()
}

/// A file kind as the model spells it; one it does not know is `other`.
fn file_kind_name(kind: &str) -> &'static str {
    match kind {
        "exec" => "exec",
        "rel" => "rel",
        "dyn" => "dyn",
        "btf" => "btf",
        _ => "other",
    }
}

/// A section as the model holds it.
fn section(s: SectionForm<'_>) -> Section<'_> {
    Section {
        name: s.name,
        address: s.address,
        size: s.size,
        alignment: s.alignment,
        compressed: s.compressed,
    }
}

/// The records' parts (`form::records_bytes`), each its slice of the block.
pub(super) fn split(records: &[u8]) -> Result<[&[u8]; PARTS], SnapshotError> {
    const SHORT: SnapshotError = SnapshotError::Invalid("records shorter than their parts");
    let table = records.get(..8 * PARTS).ok_or(SHORT)?;
    let mut rest = &records[8 * PARTS..];
    let mut parts = [&records[..0]; PARTS];
    for (part, len) in parts.iter_mut().zip(table.chunks_exact(8)) {
        let len = u64::from_le_bytes(len.try_into().map_err(|_| SHORT)?);
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= rest.len())
            .ok_or(SHORT)?;
        (*part, rest) = rest.split_at(len);
    }
    Ok(parts)
}

/// What decoding any part needs: the names and types, and what to keep. Each part is
/// decoded with its own failure cell, on whichever thread takes it.
#[derive(Clone, Copy)]
struct Decoder<'c, 'd> {
    names: &'c Strings<'d>,
    types: &'d [CType],
    listing: bool,
}

type Bodies<'d> = (
    Vec<Symbol<'d>>,
    Vec<Arc<StructLayout<'d>>>,
    Vec<Variable<'d>>,
    u64,
    AccessMap,
    Vec<Option<Alignment>>,
);

impl<'c, 'd> Decoder<'c, 'd> {
    /// One part, decoded by `f` with a context of its own; the failure it recorded, or
    /// postcard's message when the shape itself was wrong.
    fn part<T>(
        self,
        bytes: &[u8],
        f: impl FnOnce(&Ctx<'_, 'd>, &mut Postcard<'_>) -> Result<T, postcard::Error>,
    ) -> Result<T, SnapshotError> {
        let failure = Cell::new(None);
        let ctx = Ctx {
            names: self.names,
            types: self.types,
            listing: self.listing,
            failure: &failure,
        };
        let mut de = postcard::Deserializer::from_bytes(bytes);
        f(&ctx, &mut de).map_err(|e| reason(&failure, e))
    }

    /// Every part, decoded side by side (a snapshot load was a third of a snapshot
    /// diff, on one thread per build), then the checks that span parts. The first
    /// failure in part order is the one reported, whichever thread found it first.
    fn bodies(
        self,
        parts: [&[u8]; PARTS - 1],
        with_units: bool,
    ) -> Result<Bodies<'d>, SnapshotError> {
        let [symbols, structs, variables, units, access, alignments] = parts;
        let ((symbols, alignments), (structs, (variables, (units, access)))) = rayon::join(
            || {
                rayon::join(
                    || self.symbols(symbols, with_units),
                    || self.alignments(alignments),
                )
            },
            || {
                rayon::join(
                    || {
                        self.part(structs, |ctx, de| {
                            Each(Shared(Layout { ctx, depth: 1 })).deserialize(de)
                        })
                    },
                    || {
                        rayon::join(
                            || self.variables(variables),
                            || {
                                (
                                    self.part(units, |_, de| de::Deserialize::deserialize(de)),
                                    self.part(access, |_, de| AccessSeed.deserialize(de)),
                                )
                            },
                        )
                    },
                )
            },
        );
        let (symbols, structs, variables) = (symbols?, structs?, variables?);
        let (units, access, alignments) = (units?, access?, alignments?);
        if variables
            .iter()
            .any(|v| v.layout.is_some_and(|StructId(i)| i >= structs.len()))
        {
            return Err(SnapshotError::Invalid("struct index out of range"));
        }
        if let Some(why) = disorder(symbols.len(), &access) {
            return Err(SnapshotError::Invalid(why));
        }
        if alignments.len() != symbols.len() {
            return Err(SnapshotError::Invalid("link alignments not one per symbol"));
        }
        Ok((symbols, structs, variables, units, access, alignments))
    }

    /// The symbols, checked in (space, place) order as each is read, still in cache
    /// (see `disorder`).
    fn symbols(self, bytes: &[u8], with_units: bool) -> Result<Vec<Symbol<'d>>, SnapshotError> {
        self.part(bytes, |ctx, de| {
            let mut last_symbol = 0u64;
            let mut last_key = None;
            list(ctx, |c, s: SymbolForm| {
                let address = last_symbol.wrapping_add(s.address_step as u64);
                last_symbol = address;
                let sym = symbol(c, s, address, with_units)?;
                let key = (sym.space, sym.place);
                if last_key.is_some_and(|last| key < last) {
                    return Err(SYMBOLS_DISORDERED);
                }
                last_key = Some(key);
                Ok(sym)
            })
            .deserialize(de)
        })
    }

    /// The variables, checked in address order as each is read.
    fn variables(self, bytes: &[u8]) -> Result<Vec<Variable<'d>>, SnapshotError> {
        self.part(bytes, |ctx, de| {
            let mut last_variable = 0u64;
            list(ctx, |c, v: VariableForm| {
                let address = last_variable.wrapping_add(v.address_step as u64);
                if address < last_variable {
                    return Err(VARIABLES_DISORDERED);
                }
                last_variable = address;
                variable(c, v, address)
            })
            .deserialize(de)
        })
    }

    fn alignments(self, bytes: &[u8]) -> Result<Vec<Option<Alignment>>, SnapshotError> {
        self.part(bytes, |_, de| Each(PhantomData).deserialize(de))
    }
}

/// The deserializer each part is read with.
type Postcard<'b> = postcard::Deserializer<'b, postcard::de_flavors::Slice<'b>>;

/// A symbol record at `address`, its unit names kept only `with_units`.
fn symbol<'d>(
    c: &Ctx<'_, 'd>,
    s: SymbolForm,
    address: u64,
    with_units: bool,
) -> Result<Symbol<'d>, Bad> {
    Ok(Symbol {
        name: c.names.get(s.name)?,
        file: c.names.opt(if with_units { s.file } else { s.elf_file })?,
        unit: if with_units {
            c.names.opt(s.unit)?
        } else {
            None
        },
        compile_unit: if with_units {
            c.names.opt(s.compile_unit)?
        } else {
            None
        },
        group: s.group,
        kind: s.kind,
        binding: s.binding,
        section: c.names.get(s.section)?,
        address,
        size: s.size,
        space: s.space,
        place: address.wrapping_add(s.place_offset as u64),
    })
}

/// A variable record at `address`.
fn variable<'d>(c: &Ctx<'_, 'd>, v: VariableForm, address: u64) -> Result<Variable<'d>, Bad> {
    Ok(Variable {
        name: c.names.get(v.name)?,
        address,
        ctype: TypeRef::Borrowed(
            c.types
                .get(v.ctype as usize)
                .ok_or("type index out of range")?,
        ),
        size: v.size,
        layout: v.layout,
        is_array: v.is_array,
        alignment: v.alignment,
        decl_file: c.names.opt(v.decl_file)?.map(Into::into),
        decl_line: v.decl_line,
        declared: v.declared,
    })
}

/// Every loader writes symbols in (space, place) order and variables in address
/// order, and the diff's pairing, shift runs and look-ups walk them so: a file out of
/// order (crafted, or corrupted behind a valid checksum) is refused as it is read
/// rather than sent down paths that are quadratic on it.
const SYMBOLS_DISORDERED: Bad = "symbols out of (space, place) order";
const VARIABLES_DISORDERED: Bad = "variables out of address order";

/// Why the access map cannot be used as read, if it cannot: it names a symbol that is
/// not among the `n` read, or it is out of the order every loader writes.
fn disorder(n: usize, access: &AccessMap) -> Option<Bad> {
    let in_range = |i: u32| (i as usize) < n;
    if !access.refs.iter().all(|a| {
        let callee = match a.kind {
            AccessKind::Address {
                callee: Some(c), ..
            } => in_range(c),
            _ => true,
        };
        in_range(a.function) && in_range(a.object) && callee
    }) || !access.writers.iter().all(|w| in_range(w.function))
        || !access
            .calls
            .iter()
            .all(|&(a, b)| in_range(a) && in_range(b))
        || !access.taken.iter().all(|&f| in_range(f))
    {
        return Some("access map names a symbol out of range");
    }
    if !access.refs.is_sorted_by_key(AccessMap::ref_key)
        || !access.writers.is_sorted_by_key(|w| w.function)
        || !access.calls.is_sorted()
        || !access.taken.is_sorted()
    {
        return Some("access map out of order");
    }
    None
}

/// A type; what only pahole's listing prints is left out unless `listing`, as a load
/// of the vmlinux for a diff leaves it.
fn ctype(t: CTypeForm<'_>, listing: bool) -> CType {
    CType {
        kind: t.kind,
        element: t.element,
        is_const: t.is_const,
        is_volatile: t.is_volatile,
        dims: t.dims,
        aggregate: t.aggregate.map(Into::into),
        c: t.c.into(),
        listing: listing.then(|| {
            Box::new(Declaration {
                before: t.pahole_before.into(),
                after: t.pahole_after.into(),
                anonymous_enum: t
                    .anonymous_enum
                    .map(|(e, size)| (e.into_iter().map(|(n, v)| (n.into(), v)).collect(), size)),
                after_flexible: t.pahole_after_flexible.map(Into::into),
            })
        }),
    }
}

/// A struct layout of the image's list, shared (`Image::structs`): `Layout`'s, put
/// behind an `Arc` where it is decoded.
#[derive(Clone, Copy)]
struct Shared<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Shared<S> {
    type Value = Arc<S::Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(d).map(Arc::new)
    }
}

/// One struct layout (`form::StructForm`), `depth` levels deep.
#[derive(Clone, Copy)]
struct Layout<'c, 'd> {
    ctx: &'c Ctx<'c, 'd>,
    depth: u32,
}

const STRUCT_FIELDS: usize = 15;
const MEMBER_FIELDS: usize = 14;

impl<'de, 'c, 'd> DeserializeSeed<'de> for Layout<'c, 'd> {
    type Value = StructLayout<'d>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        if self.depth > MAX_NESTING {
            return Err(self.ctx.fail(TOO_DEEP));
        }
        d.deserialize_tuple(STRUCT_FIELDS, self)
    }
}

impl<'de, 'c, 'd> Visitor<'de> for Layout<'c, 'd> {
    type Value = StructLayout<'d>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a struct layout")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let c = self.ctx;
        let name: Str = next(&mut seq)?;
        let kind: AggregateKind = next(&mut seq)?;
        let decl_file: Option<Str> = next(&mut seq)?;
        let size: u64 = next(&mut seq)?;
        let alignment: u64 = next(&mut seq)?;
        let explicit_alignment: Option<u64> = next(&mut seq)?;
        let members = next_seed(&mut seq, Each(OneMember(self)))?;
        let holes: Vec<Hole> = next(&mut seq)?;
        let bit_holes: Vec<BitHole> = next(&mut seq)?;
        let padding: u64 = next(&mut seq)?;
        let bit_padding: u64 = next(&mut seq)?;
        let pre_hole: u64 = next(&mut seq)?;
        let pre_bit_hole: u64 = next(&mut seq)?;
        let packed: bool = next(&mut seq)?;
        let typedef: bool = next(&mut seq)?;
        Ok(StructLayout {
            name: c.check(c.names.get(name))?,
            kind,
            decl_file: c.check(c.names.opt(decl_file))?.map(Into::into),
            size,
            alignment,
            explicit_alignment,
            members,
            holes,
            bit_holes,
            padding,
            bit_padding,
            pre_hole,
            pre_bit_hole,
            packed: packed && c.listing,
            typedef,
            // A snapshot is written with C and assembly units only.
            rust: false,
        })
    }
}

/// One member (`form::MemberForm`) of a struct layout.
#[derive(Clone, Copy)]
struct OneMember<'c, 'd>(Layout<'c, 'd>);

impl<'de, 'c, 'd> DeserializeSeed<'de> for OneMember<'c, 'd> {
    type Value = Member<'d>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_tuple(MEMBER_FIELDS, self)
    }
}

impl<'de, 'c, 'd> Visitor<'de> for OneMember<'c, 'd> {
    type Value = Member<'d>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let c = self.0.ctx;
        let inner = Inner(Layout {
            ctx: c,
            depth: self.0.depth + 1,
        });
        let name: Option<Str> = next(&mut seq)?;
        let offset: u64 = next(&mut seq)?;
        let size: u64 = next(&mut seq)?;
        let bit_offset: Option<u32> = next(&mut seq)?;
        let bit_size: Option<u32> = next(&mut seq)?;
        let flexible: bool = next(&mut seq)?;
        let nested = next_seed(&mut seq, inner)?;
        let alignment: Option<u32> = next(&mut seq)?;
        let ctype: u32 = next(&mut seq)?;
        let hole: u32 = next(&mut seq)?;
        let bit_hole: u32 = next(&mut seq)?;
        let type_gaps: TypeGaps = next(&mut seq)?;
        let pointee = next_seed(&mut seq, inner)?;
        let natural_alignment: u32 = next(&mut seq)?;
        Ok(Member {
            name: c.check(c.names.opt(name))?,
            offset,
            size,
            bit_offset,
            bit_size,
            flexible,
            nested: nested.map(Box::new),
            alignment,
            ctype: c.ty(ctype)?,
            hole,
            bit_hole,
            type_gaps: if c.listing {
                type_gaps
            } else {
                TypeGaps::default()
            },
            pointee: pointee.filter(|_| c.listing).map(Box::new),
            natural_alignment: if c.listing { natural_alignment } else { 0 },
        })
    }
}

/// An optional struct layout held in a member (`nested` or `pointee`).
#[derive(Clone, Copy)]
struct Inner<'c, 'd>(Layout<'c, 'd>);

impl<'de, 'c, 'd> DeserializeSeed<'de> for Inner<'c, 'd> {
    type Value = Option<StructLayout<'d>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, 'c, 'd> Visitor<'de> for Inner<'c, 'd> {
    type Value = Option<StructLayout<'d>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an optional struct layout")
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(d).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_refused_past_the_limit_at_any_depth() {
        let wanted = Wanted {
            listing: true,
            dwarf: true,
            typed: true,
        };
        let levels = |(names, records): &(Vec<u8>, Vec<u8>)| -> Result<u32, SnapshotError> {
            let types = Types::default();
            let image = read(names, &types, records, Path::new("x"), wanted)?;
            let mut s: &StructLayout<'_> = image
                .structs
                .first()
                .ok_or(SnapshotError::Invalid("no struct"))?;
            let mut n = 1;
            while let Some(inner) = s.members.first().and_then(|m| m.nested.as_deref()) {
                (s, n) = (inner, n + 1);
            }
            Ok(n)
        };
        let chain = super::super::form::nested_chain;
        assert_eq!(levels(&chain(0)), Ok(1));
        assert_eq!(levels(&chain(63)), Ok(64));
        let refused = Err(SnapshotError::Invalid(
            "structs nested more than 64 levels deep",
        ));
        assert_eq!(levels(&chain(64)), refused);
        assert_eq!(levels(&chain(1_000_000)), refused);
        assert_eq!(
            TOO_DEEP,
            format!("structs nested more than {MAX_NESTING} levels deep")
        );
    }

    /// A snapshot whose symbols or variables are out of order (valid in every other
    /// respect) is refused; the same records in order read back.
    #[test]
    fn records_out_of_order_are_refused() {
        let root = testdata!();
        let file = crate::input::InputFile::open(&root.join("old.elf")).unwrap();
        let image = file.load(&crate::load::LoadOptions::default()).unwrap();
        let wanted = Wanted {
            listing: false,
            dwarf: true,
            typed: true,
        };
        let read_back = |image: &Image<'_>| -> Result<(usize, usize), SnapshotError> {
            let form = super::super::form::from_image(image, &[], None);
            let names = postcard::to_stdvec(&form.names).unwrap();
            let records = super::super::form::records_bytes(&form.records).unwrap();
            let types = Types::default();
            let back = read(&names, &types, &records, Path::new("x"), wanted)?;
            Ok((back.symbols.len(), back.variables.len()))
        };
        let counts = (image.symbols.len(), image.variables.len());
        assert_eq!(read_back(&image), Ok(counts));
        let first_apart = |places: Vec<u64>| places.windows(2).position(|w| w[0] != w[1]).unwrap();
        let mut swapped = file.load(&crate::load::LoadOptions::default()).unwrap();
        let i = first_apart(swapped.symbols.iter().map(|s| s.place).collect());
        swapped.symbols.swap(i, i + 1);
        assert_eq!(
            read_back(&swapped),
            Err(SnapshotError::Invalid(
                "symbols out of (space, place) order"
            ))
        );
        let mut swapped = file.load(&crate::load::LoadOptions::default()).unwrap();
        let i = first_apart(swapped.variables.iter().map(|v| v.address).collect());
        swapped.variables.swap(i, i + 1);
        assert_eq!(
            read_back(&swapped),
            Err(SnapshotError::Invalid("variables out of address order"))
        );
    }

    /// The records block is cut into its parts by the table in front: a table that
    /// claims more bytes than follow is refused, and when two parts fail, the first in
    /// part order is named, whichever thread decoded it first.
    #[test]
    fn parts_are_cut_by_their_table_and_the_first_failure_is_named() {
        let root = testdata!();
        let file = crate::input::InputFile::open(&root.join("old.elf")).unwrap();
        let options = crate::load::LoadOptions::default();
        let wanted = Wanted {
            listing: false,
            dwarf: true,
            typed: true,
        };
        let image = file.load(&options).unwrap();
        let form = super::super::form::from_image(&image, &[], None);
        let names = postcard::to_stdvec(&form.names).unwrap();
        let records = super::super::form::records_bytes(&form.records).unwrap();
        let parts = split(&records).unwrap();
        let lengths: Vec<usize> = parts.iter().map(|p| p.len()).collect();
        assert_eq!(lengths.len(), PARTS);
        assert_eq!(lengths.iter().sum::<usize>() + 8 * PARTS, records.len());
        assert_eq!(
            parts[3],
            postcard::to_stdvec(&(image.units as u64)).unwrap()
        );
        let short = SnapshotError::Invalid("records shorter than their parts");
        assert_eq!(split(&records[..8 * PARTS - 1]).err(), Some(short.clone()));
        assert_eq!(split(&records[..records.len() - 1]).err(), Some(short));
        let mut both = file.load(&options).unwrap();
        let first_apart = |places: Vec<u64>| places.windows(2).position(|w| w[0] != w[1]).unwrap();
        let i = first_apart(both.symbols.iter().map(|s| s.place).collect());
        both.symbols.swap(i, i + 1);
        let j = first_apart(both.variables.iter().map(|v| v.address).collect());
        both.variables.swap(j, j + 1);
        let form = super::super::form::from_image(&both, &[], None);
        let records = super::super::form::records_bytes(&form.records).unwrap();
        for _ in 0..8 {
            let types = Types::default();
            let back = read(&names, &types, &records, Path::new("x"), wanted);
            assert_eq!(
                back.err(),
                Some(SnapshotError::Invalid(
                    "symbols out of (space, place) order"
                ))
            );
        }
    }

    /// A snapshot whose symbol runs past the end of its section is refused; one that
    /// ends exactly there reads back.
    #[test]
    fn a_symbol_past_its_section_is_refused() {
        let root = testdata!();
        let file = crate::input::InputFile::open(&root.join("old.elf")).unwrap();
        let options = crate::load::LoadOptions::default();
        let wanted = Wanted {
            listing: false,
            dwarf: true,
            typed: true,
        };
        let sized = |size: fn(u64, u64) -> u64| -> Result<u64, SnapshotError> {
            let mut image = file.load(&options).unwrap();
            let data = image.sections.iter().find(|s| s.name == ".data").unwrap();
            let end = data.address + data.size;
            let s = image
                .symbols
                .iter_mut()
                .find(|s| s.name == "root_user")
                .unwrap();
            s.size = size(s.address, end);
            let form = super::super::form::from_image(&image, &[], None);
            let names = postcard::to_stdvec(&form.names).unwrap();
            let records = super::super::form::records_bytes(&form.records).unwrap();
            let types = Types::default();
            let back = read(&names, &types, &records, Path::new("x"), wanted)?;
            let s = back.symbols.iter().find(|s| s.name == "root_user").unwrap();
            Ok(s.address + s.size)
        };
        let data_end = {
            let image = file.load(&options).unwrap();
            let data = image.sections.iter().find(|s| s.name == ".data").unwrap();
            data.address + data.size
        };
        assert_eq!(sized(|at, end| end - at), Ok(data_end));
        let refused = Err(SnapshotError::Invalid(
            "a symbol runs past the end of its section",
        ));
        assert_eq!(sized(|at, end| end - at + 1), refused);
        assert_eq!(sized(|_, _| u64::MAX), refused);
    }

    #[test]
    fn string_indexes_are_checked() {
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
