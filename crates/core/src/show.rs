//! Answers `show` queries on one image: a summary, struct layouts, a symbol's
//! placement with its co-tenants and its type laid at its address, or one line's
//! contents. Produces plain values for the renderers; prints nothing.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;

use crate::layout::{LaidStruct, LineTenants, Placement, SpaceIndex, lay, place};
use crate::model::{Image, Space, Symbol, SymbolKind, Variable};

pub use crate::model::header::{BTF_NOTE, Header, REL_NOTE};

mod members;
pub use members::{MemberBytes, members_on};

/// One section of the build, as `show`'s summary lists it.
#[derive(Debug, Clone, Serialize)]
pub struct SectionRow {
    /// The section's name.
    pub name: String,
    /// Its address.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    /// Its size in bytes (decompressed).
    pub size: u64,
    /// It is stored compressed (`SHF_COMPRESSED`).
    pub compressed: bool,
}

/// What `show FILE` says of a build before any query: its kind, counts and sections.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The input's kind (`ELF`, `BTF`, `snapshot`, ...).
    pub file_kind: &'static str,
    /// It has DWARF (or BTF) types.
    pub has_debug_info: bool,
    /// `btf` or `none`; absent for DWARF (the usual case, and the older JSON).
    #[serde(skip_serializing_if = "crate::model::TypesFrom::is_dwarf")]
    pub types_from: crate::model::TypesFrom,
    /// Compile units read.
    pub units: usize,
    /// Function symbols.
    pub functions: usize,
    /// Global data objects.
    pub data_objects: usize,
    /// Per-CPU variables.
    pub percpu_variables: usize,
    /// Struct and union layouts.
    pub structs: usize,
    /// Variables the debug info describes.
    pub variables: usize,
    /// Where the per-CPU area starts (`__per_cpu_start`), when it has one.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub percpu_base: Option<u64>,
    /// Its sections, in address order.
    pub sections: Vec<SectionRow>,
}

/// The summary of `image`.
pub fn summary(image: &Image<'_>) -> Summary {
    Summary {
        file_kind: image.file_kind,
        has_debug_info: image.has_debug_info,
        types_from: image.types_from,
        units: image.units,
        functions: image.count(SymbolKind::Function, Space::Global),
        data_objects: image.count(SymbolKind::Object, Space::Global),
        percpu_variables: image.count(SymbolKind::Object, Space::Percpu),
        // Named ones: anonymous struct types of objects (`tk_core`) are laid out too.
        structs: image.structs.iter().filter(|s| !s.name.is_empty()).count(),
        variables: image.variables.len(),
        percpu_base: image.percpu_base,
        sections: image
            .sections
            .iter()
            .filter(|s| s.size > 0 && !s.name.starts_with(".rela") && !s.name.starts_with(".rel."))
            .map(|s| SectionRow {
                name: s.name.to_string(),
                address: s.address,
                size: s.size,
                compressed: s.compressed,
            })
            .collect(),
    }
}

/// Builds a glob set from names or patterns (`task_*`).
pub fn globs(patterns: &[String]) -> Result<GlobSet, globset::Error> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p)?);
    }
    b.build()
}

/// Struct layouts whose name matches, laid at offset 0 (pahole's view).
pub fn structs<'a, 'd>(image: &'a Image<'d>, set: &'a GlobSet) -> Vec<LaidStruct<'a, 'd>> {
    image
        .structs_named(|n| !n.is_empty() && set.is_match(n))
        .map(|(_, s)| lay(s, None, image.line_size))
        .collect()
}

/// A symbol with its lines, neighbours and type.
#[derive(Debug, Clone, Serialize)]
pub struct SymbolView<'a, 'd> {
    /// The symbol.
    pub symbol: &'a Symbol<'d>,
    /// Its name qualified by its file when the bare name is not unique.
    pub qualified_name: String,
    /// The lines it falls on.
    pub placement: Placement,
    /// DWARF description of the variable, when found.
    pub variable: Option<&'a Variable<'d>>,
    /// Other data objects on each of its lines (data symbols only).
    pub co_tenants: Vec<LineTenants<'a, 'd>>,
    /// Its struct type laid at its real address (per-CPU: its offset).
    pub laid: Option<LaidStruct<'a, 'd>>,
    /// Who writes and reads it, from the machine code (empty without code evidence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accesses: Option<Accesses>,
    /// Type-level evidence (`--access`): who touches its struct type's members through
    /// any pointer, and who reaches a per-CPU object from another CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_level: Option<crate::typed::view::InstanceAccess>,
}

/// The code's references to one object, one row per function, kind and member.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Accesses {
    /// Written (stores, read-modify-writes, atomics, its address handed to a function
    /// that writes through it), by function name.
    pub writers: Vec<AccessRow>,
    /// Read, or its address handed to a function that does not write through it, by
    /// function name.
    pub readers: Vec<AccessRow>,
}

/// One function's references of one kind to one member of an object.
#[derive(Debug, Clone, Serialize)]
pub struct AccessRow {
    /// The function's name.
    pub function: String,
    /// Read, write, read-modify-write, atomic or address.
    pub kind: crate::model::access::AccessKind,
    /// Byte offset into the object of the first such reference.
    pub offset: u64,
    /// The member at that offset, when the object is a struct.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// How many instructions.
    pub count: u32,
    /// The first instruction and its source line.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub insn: u64,
    /// The first instruction's source line (`file:line`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The function is boot-only code (`.init.*`, `.exit.*`): the judgement leaves it
    /// out.
    pub boot: bool,
}

/// The code's references to `s` whose offset lies in `[from, to)` (the whole object
/// for `0..u64::MAX`); `None` when the image has no code evidence.
pub fn accesses(
    image: &Image<'_>,
    s: &Symbol<'_>,
    (from, to): (u64, u64),
    source: Option<&SourceLookup<'_>>,
) -> Option<Accesses> {
    use crate::model::access::AccessKind;
    if !image.access.supported {
        return None;
    }
    let i = u32::try_from(image.index_of(s)?).ok()?;
    let layout = image
        .variable_for(s)
        .filter(|v| !v.is_array)
        .and_then(|v| v.layout)
        .map(|id| image.struct_by_id(id));
    let member_at = |offset: u64| {
        let l = layout?;
        l.flat_members()
            .into_iter()
            .filter(|(_, m)| m.nested.is_none() && m.name.is_some())
            .find(|(_, m)| offset >= m.offset && offset < m.offset + m.size.max(1))
            .and_then(|(_, m)| m.name.map(str::to_string))
    };
    // (writes, the function's bare name, the row).
    let mut rows: Vec<(bool, &str, AccessRow)> = Vec::new();
    for a in image.access.of_object(i) {
        if a.offset < from || a.offset >= to {
            continue;
        }
        let Some(f) = image.symbols.get(a.function as usize) else {
            continue;
        };
        let writes = a.kind.writes();
        let function = f.qualified_name();
        // A handed-on address names the object, not the member the callee touches.
        let member = match a.kind {
            AccessKind::Address { .. } => None,
            _ => member_at(a.offset),
        };
        match rows.iter_mut().find(|(w, _, r)| {
            *w == writes && r.function == function && r.kind == a.kind && r.member == member
        }) {
            Some((_, _, r)) => r.count += 1,
            None => rows.push((
                writes,
                f.name,
                AccessRow {
                    function,
                    kind: a.kind,
                    offset: a.offset,
                    member,
                    count: 1,
                    insn: a.insn,
                    source: source.and_then(|find| find(a.insn)),
                    boot: crate::kernel::is_boot_code(f.section),
                },
            )),
        }
    }
    // Functions with evidence of hotness first (`WriterOrder`; the built-in known
    // list), then by name, offset and first instruction.
    let hotness = crate::evidence::builtin();
    rows.sort_by(|(_, fa, a), (_, fb, b)| {
        (hotness.writer_order(fa, &a.function), a.offset, a.insn).cmp(&(
            hotness.writer_order(fb, &b.function),
            b.offset,
            b.insn,
        ))
    });
    let (w, r): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(w, _, _)| *w);
    Some(Accesses {
        writers: w.into_iter().map(|(_, _, r)| r).collect(),
        readers: r.into_iter().map(|(_, _, r)| r).collect(),
    })
}

/// Symbols whose name matches, each placed.
pub fn symbols<'a, 'd>(image: &'a Image<'d>, set: &GlobSet) -> Vec<SymbolView<'a, 'd>> {
    // Zero-byte symbols are never tenants (`SpaceIndex::tenants`).
    let global = SpaceIndex::tenants(&image.symbols, Space::Global);
    let percpu = SpaceIndex::tenants(&image.symbols, Space::Percpu);
    image
        .symbols
        .iter()
        .filter(|s| s.any_name(|n| set.is_match(n)))
        .map(|s| {
            view(
                image,
                s,
                if s.space == Space::Percpu {
                    &percpu
                } else {
                    &global
                },
            )
        })
        .collect()
}

fn view<'a, 'd>(
    image: &'a Image<'d>,
    s: &'a Symbol<'d>,
    index: &SpaceIndex<'a, 'd>,
) -> SymbolView<'a, 'd> {
    let line_size = image.line_size;
    let variable = image.variable_for(s);
    let is_data = s.kind != SymbolKind::Function;
    let laid = variable
        .filter(|v| !v.is_array)
        .and_then(|v| v.layout)
        .map(|id| lay(image.struct_by_id(id), Some(s.place), line_size));
    SymbolView {
        symbol: s,
        qualified_name: s.qualified_name(),
        placement: place(s.place, s.size, line_size),
        variable,
        co_tenants: if is_data {
            index.co_tenants(s, line_size)
        } else {
            Vec::new()
        },
        laid,
        accesses: is_data
            .then(|| accesses(image, s, (0, u64::MAX), None))
            .flatten(),
        type_level: is_data
            .then(|| {
                let i = image.index_of(s)?;
                crate::typed::view::instance(image, i, (0, s.size.max(1)), None)
            })
            .flatten(),
    }
}

/// Everything on one line.
#[derive(Debug, Clone, Serialize)]
pub struct LineView<'a, 'd> {
    /// Global data, per-CPU or code.
    pub space: Space,
    /// The line's number (its start divided by the line size; hex above 2^53).
    #[serde(serialize_with = "crate::model::hex::big")]
    pub line: u64,
    /// The line's first address (per-CPU: offset).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub start: u64,
    /// The address past its end.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub end: u64,
    /// The symbols on it, in place order, zero-byte data symbols left out.
    pub symbols: Vec<&'a Symbol<'d>>,
    /// The zero-byte data symbols on it (lockdep's `__key.N`), in place order: each
    /// names the address of the object after it and is never a tenant.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub zero_sized: Vec<&'a Symbol<'d>>,
    /// For code on the line: the source line of the line's first byte of each function.
    pub sources: Vec<SourceAt>,
    /// For each data object on the line (in `symbols` order), who writes and reads
    /// its bytes there, from the machine code: a static `perf c2c` view.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accesses: Vec<(String, Accesses)>,
    /// For each data object on the line with type-level evidence (`--access`), who
    /// touches its members there through any pointer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub type_level: Vec<(String, crate::typed::view::InstanceAccess)>,
}

/// A code address and the source line it was compiled from.
#[derive(Debug, Clone, Serialize)]
pub struct SourceAt {
    /// The code address.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    /// The function it is in.
    pub function: String,
    /// Its source line, `file:line`.
    pub location: String,
}

/// Finds the source line of a code address (from `.debug_line`, read only for this).
pub type SourceLookup<'x> = dyn Fn(u64) -> Option<String> + 'x;

/// The line holding `at` (an address, or a per-CPU offset when `space` is per-CPU).
pub fn line<'a, 'd>(
    image: &'a Image<'d>,
    space: Space,
    at: u64,
    source: Option<&SourceLookup<'_>>,
) -> LineView<'a, 'd> {
    let index = SpaceIndex::new(&image.symbols, space, |_| true);
    let start = at - at % image.line_size;
    let end = start + image.line_size;
    // Zero-byte data symbols are never tenants (`SpaceIndex::tenants`): set apart.
    let (symbols, zero_sized): (Vec<_>, Vec<_>) = index
        .overlapping(start, end)
        .into_iter()
        .partition(|s| s.kind == SymbolKind::Function || s.size > 0);
    let sources = match source {
        Some(find) => symbols
            .iter()
            .filter(|s| s.kind == SymbolKind::Function)
            .filter_map(|s| {
                let address = s.place.max(start);
                Some(SourceAt {
                    address,
                    function: s.qualified_name(),
                    location: find(address)?,
                })
            })
            .collect(),
        None => Vec::new(),
    };
    let accesses = symbols
        .iter()
        .filter(|s| s.kind != SymbolKind::Function)
        .filter_map(|s| {
            let from = start.saturating_sub(s.place);
            let to = end.saturating_sub(s.place);
            Some((s.qualified_name(), accesses(image, s, (from, to), source)?))
        })
        .collect();
    let type_level = symbols
        .iter()
        .filter(|s| s.kind != SymbolKind::Function)
        .filter_map(|s| {
            let from = start.saturating_sub(s.place);
            let to = end.saturating_sub(s.place).min(s.size.max(1));
            let i = image.index_of(s)?;
            let level = crate::typed::view::instance(image, i, (from, to), source)?;
            Some((s.qualified_name(), level))
        })
        .collect();
    LineView {
        space,
        line: at / image.line_size,
        start,
        end,
        symbols,
        zero_sized,
        sources,
        accesses,
        type_level,
    }
}

/// One struct type a perf data-type profile measured, laid at offset 0: its sampled
/// members with the lines they sit on, most sampled first.
#[derive(Debug, Clone, Serialize)]
pub struct HotTypeView {
    /// The struct's name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// The lines it spans from offset 0.
    pub lines: u64,
    /// Share of samples in the type, as perf printed it (summed over offsets).
    pub share: f64,
    /// Its sampled members, most sampled first.
    pub members: Vec<HotMemberView>,
    /// Global and per-CPU objects of the type.
    pub instances: Vec<String>,
}

/// A sampled member: its offset, the line it sits on (from the struct's start) and
/// whether it straddles one.
#[derive(Debug, Clone, Serialize)]
pub struct HotMemberView {
    /// The member's offset in the struct.
    pub offset: u64,
    /// The member's path as perf printed it.
    pub member: String,
    /// Its size, when the struct's layout has it.
    pub size: Option<u64>,
    /// The line it starts on, from the struct's start.
    pub line: u64,
    /// It straddles a line boundary.
    pub straddles: bool,
    /// Its share of samples, as perf printed it.
    pub share: f64,
}

/// A sampled object (a variable perf named): where it sits.
#[derive(Debug, Clone, Serialize)]
pub struct HotObjectView {
    /// The object's name.
    pub name: String,
    /// Its share of samples, as perf printed it.
    pub share: f64,
    /// The lines it falls on, when the build has it.
    pub placement: Option<Placement>,
}

/// The types, members and objects of `measured` found in `image`.
pub fn hot_types(
    image: &Image<'_>,
    measured: &crate::evidence::Measured,
) -> (Vec<HotTypeView>, Vec<HotObjectView>) {
    let ls = image.line_size;
    let vars = image.variables_by_address();
    let mut types = Vec::new();
    for (name, datum) in measured.types() {
        let Some(layout) = image.structs.iter().find(|s| s.name == name) else {
            continue;
        };
        let leaves: Vec<&crate::model::Member<'_>> = layout
            .flat_members()
            .into_iter()
            .filter(|(_, m)| m.nested.is_none())
            .map(|(_, m)| m)
            .collect();
        let mut members: Vec<HotMemberView> = measured
            .members_of(name)
            .into_iter()
            .map(|(offset, path, d)| {
                // The member perf named, else the one at the offset it sampled (the
                // profile may come from another build of the struct).
                let leaf = path.rsplit('.').next().unwrap_or(path);
                let m = leaves.iter().find(|m| m.name == Some(leaf)).or_else(|| {
                    leaves
                        .iter()
                        .find(|m| m.offset <= offset && offset - m.offset < m.size.max(1))
                });
                let at = m.map_or(offset, |m| m.offset);
                let size = m.map(|m| m.size);
                let end = at.saturating_add(size.unwrap_or(1).max(1) - 1);
                HotMemberView {
                    offset: at,
                    member: path.to_string(),
                    size,
                    line: at / ls,
                    straddles: at / ls != end / ls,
                    share: d.share,
                }
            })
            .collect();
        members.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.offset.cmp(&b.offset)));
        let instances = image
            .symbols
            .iter()
            .filter(|s| s.kind != SymbolKind::Function)
            .filter(|s| {
                vars.of(s)
                    .and_then(|v| image.struct_name(v))
                    .is_some_and(|n| n == name)
            })
            .map(|s| s.qualified_name())
            .collect();
        types.push(HotTypeView {
            name: name.to_string(),
            size: layout.size,
            lines: layout.size.div_ceil(ls).max(1),
            share: datum.share,
            members,
            instances,
        });
    }
    let objects = measured
        .objects()
        .into_iter()
        .map(|(name, d)| HotObjectView {
            name: name.to_string(),
            share: d.share,
            placement: image
                .symbols
                .iter()
                .find(|s| s.name == name && s.kind != SymbolKind::Function)
                .map(|s| place(s.place, s.size, ls)),
        })
        .collect();
    (types, objects)
}

/// One line for each `--struct` or `--symbol`/`--hot` pattern that names nothing in
/// any of `images` (a typo would otherwise pass silently).
pub fn unmatched_patterns(
    structs: &[String],
    symbols: &[String],
    images: &[&Image<'_>],
) -> Result<Vec<String>, globset::Error> {
    let mut out = Vec::new();
    for p in structs {
        let g = globset::Glob::new(p)?.compile_matcher();
        let found = images.iter().any(|img| {
            img.structs
                .iter()
                .any(|s| !s.name.is_empty() && g.is_match(s.name))
        });
        if !found {
            out.push(format!(
                "--struct {p}: no struct of that name in either build"
            ));
        }
    }
    for p in symbols {
        let g = globset::Glob::new(p)?.compile_matcher();
        let found = images.iter().any(|img| {
            img.symbols
                .iter()
                .any(|s| g.is_match(s.name) || g.is_match(s.qualified_name()))
        });
        if !found {
            out.push(format!(
                "--symbol {p}: no symbol of that name in either build"
            ));
        }
    }
    Ok(out)
}
