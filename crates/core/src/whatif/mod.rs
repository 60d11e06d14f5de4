//! Predictions: the build a change would make, laid out with the link model from one
//! build's facts, without compiling. The predicted image is diffed against the build
//! like a real new one, so every report format shows it.

pub mod error;
pub mod functions;
pub mod kallsyms;
pub mod nested;
pub mod objects;
pub mod relay;
pub mod types;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::link::align::{self, compiler_alignment};
use crate::link::sections::Chain;
use crate::link::sections::SectionMove;
use crate::link::{Edits, LinkMap};
use crate::model::{Binding, Image, Section, Space, Symbol, SymbolKind};
pub use error::{ObjectError, PredictError};
use objects::ObjectFile;
use types::{StructEdit, propagate};

/// One change to predict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `--struct NAME=+N` (grow by N bytes at the end) or `NAME=SIZE`.
    Resize {
        /// The struct or union.
        name: String,
        /// How its size changes.
        size: Size,
    },
    /// `--struct NAME --member M=+N`: a member grows by N bytes.
    Member {
        /// The struct or union.
        name: String,
        /// The member, found through anonymous structs and unions.
        member: String,
        /// The bytes it grows by.
        grow: u64,
    },
    /// `--struct NAME --align N`.
    StructAlign {
        /// The struct or union.
        name: String,
        /// Its new alignment (a power of two).
        align: u64,
    },
    /// `--symbol NAME --align N`.
    SymbolAlign {
        /// The object or function, bare or qualified as `FILE:NAME`.
        name: String,
        /// Its new alignment (a power of two).
        align: u64,
    },
    /// `--percpu-aligned NAME`: defined with `DEFINE_PER_CPU_ALIGNED`, and declared
    /// with `DECLARE_PER_CPU_ALIGNED` where a header declares it (`declaration`): the
    /// variable moves to `..shared_aligned`. `--percpu-aligned-definition NAME`: the
    /// definition only, the header's `DECLARE_PER_CPU` left as it is: GCC keeps the
    /// section of the first declaration, so a declared variable is aligned in place.
    PercpuAligned {
        /// The per-CPU variable.
        name: String,
        /// Its header's declaration is aligned too.
        declaration: bool,
    },
    /// `--struct NAME --member M --align N`: the member aligned (`____cacheline_aligned`).
    MemberAlign {
        /// The struct or union.
        name: String,
        /// The member.
        member: String,
        /// Its new alignment (a power of two).
        align: u64,
    },
    /// `--struct NAME --member M --after X` (or `--first`): the member declared right
    /// after member X (or first).
    MemberMove {
        /// The struct or union.
        name: String,
        /// The member moved.
        member: String,
        /// The member it is declared after; none: first.
        after: Option<String>,
    },
    /// `--align-functions UNIT=N`: every function of one compile unit aligned to N,
    /// as `-falign-functions=N` for that file does (see `functions.rs`).
    FunctionsAligned {
        /// The compile unit as DWARF names it (`kernel/futex/waitwake.c`).
        unit: String,
        /// The alignment of each of its functions (a power of two).
        align: u64,
    },
    /// `--read-mostly NAME`: the object defined `__read_mostly` again (see
    /// `functions.rs` for why it lives beside function alignment: both are
    /// placement changes the link model makes without types).
    ReadMostly {
        /// The object.
        name: String,
    },
    /// `--struct NAME --insert M=N [--align A] --after X | --first | --at OFFSET`: a
    /// new member of N bytes (aligned to A; by default the largest power of two up
    /// to 8 that divides N) declared there.
    MemberInsert {
        /// The struct or union.
        name: String,
        /// The new member's name.
        member: String,
        /// Its size in bytes.
        size: u64,
        /// Its alignment; none: `Change::default_insert_alignment` of its size.
        align: Option<u64>,
        /// Where it is declared.
        at: Position,
    },
}

/// Where `--insert` declares its member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// Before every member (`--first`).
    First,
    /// Right after this member (`--after`).
    After(String),
    /// Before the first member at this byte offset or after it (`--at`).
    Offset(u64),
}

impl Change {
    /// The change spelled as `whatif` arguments: what the binary's parser of the
    /// command line (`src/cli/changes.rs`, through clap) reads back into this change,
    /// as its property test checks for every kind (`suggest` prints a fix this way and
    /// predicts the change it prints).
    pub fn to_args(&self) -> String {
        match self {
            Change::Resize { name, size } => match size {
                Size::Grow(n) => format!("--struct {name}=+{n}"),
                Size::Shrink(n) => format!("--struct {name}=-{n}"),
                Size::Exactly(n) => format!("--struct {name}={n}"),
            },
            Change::Member { name, member, grow } => {
                format!("--struct {name} --member {member}=+{grow}")
            }
            Change::StructAlign { name, align } => format!("--struct {name} --align {align}"),
            Change::SymbolAlign { name, align } => format!("--symbol {name} --align {align}"),
            Change::PercpuAligned {
                name,
                declaration: true,
            } => format!("--percpu-aligned {name}"),
            Change::PercpuAligned {
                name,
                declaration: false,
            } => format!("--percpu-aligned-definition {name}"),
            Change::MemberAlign {
                name,
                member,
                align,
            } => format!("--struct {name} --member {member} --align {align}"),
            Change::MemberMove {
                name,
                member,
                after: Some(a),
            } => format!("--struct {name} --member {member} --after {a}"),
            Change::MemberMove {
                name,
                member,
                after: None,
            } => format!("--struct {name} --member {member} --first"),
            Change::FunctionsAligned { unit, align } => format!("--align-functions {unit}={align}"),
            Change::ReadMostly { name } => format!("--read-mostly {name}"),
            Change::MemberInsert {
                name,
                member,
                size,
                align,
                at,
            } => {
                let align = align.map_or(String::new(), |a| format!(" --align {a}"));
                let at = match at {
                    Position::First => "--first".to_string(),
                    Position::After(x) => format!("--after {x}"),
                    Position::Offset(o) => format!("--at {o}"),
                };
                format!("--struct {name} --insert {member}={size}{align} {at}")
            }
        }
    }

    /// The alignment an inserted member of `size` bytes gets when none is given:
    /// the largest power of two up to 8 that divides its size.
    pub fn default_insert_alignment(size: u64) -> u64 {
        let mut a = 8;
        while a > 1 && !size.is_multiple_of(a) {
            a /= 2;
        }
        a
    }
}

/// How `--struct NAME=...` changes a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// `+N`: N bytes more.
    Grow(u64),
    /// `-N`: N bytes fewer.
    Shrink(u64),
    /// `N`: N bytes.
    Exactly(u64),
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Resize { name, size } => match size {
                Size::Grow(n) => write!(f, "struct {name} +{n} B"),
                Size::Shrink(n) => write!(f, "struct {name} -{n} B"),
                Size::Exactly(n) => write!(f, "struct {name} = {n} B"),
            },
            Change::Member { name, member, grow } => {
                write!(f, "struct {name}.{member} +{grow} B")
            }
            Change::StructAlign { name, align } => write!(f, "struct {name} aligned to {align}"),
            Change::SymbolAlign { name, align } => write!(f, "{name} aligned to {align}"),
            Change::PercpuAligned {
                name,
                declaration: true,
            } => write!(f, "{name} DEFINE_PER_CPU_ALIGNED"),
            Change::PercpuAligned {
                name,
                declaration: false,
            } => write!(
                f,
                "{name} DEFINE_PER_CPU_ALIGNED, its declaration unchanged"
            ),
            Change::MemberAlign {
                name,
                member,
                align,
            } => write!(f, "struct {name}.{member} aligned to {align}"),
            Change::MemberMove {
                name,
                member,
                after: Some(after),
            } => write!(f, "struct {name}.{member} moved after {after}"),
            Change::MemberMove {
                name,
                member,
                after: None,
            } => write!(f, "struct {name}.{member} moved first"),
            Change::FunctionsAligned { unit, align } => {
                write!(f, "functions of {unit} aligned to {align}")
            }
            Change::ReadMostly { name } => write!(f, "{name} __read_mostly"),
            Change::MemberInsert {
                name,
                member,
                size,
                align,
                at,
            } => {
                write!(f, "struct {name}.{member} ({size} B")?;
                if let Some(a) = align {
                    write!(f, ", aligned to {a}")?;
                }
                match at {
                    Position::First => write!(f, ") inserted first"),
                    Position::After(x) => write!(f, ") inserted after {x}"),
                    Position::Offset(o) => write!(f, ") inserted at offset {o}"),
                }
            }
        }
    }
}

/// A predicted build and how far the model vouches for it.
pub struct Prediction<'d> {
    /// The predicted build.
    pub image: Image<'d>,
    /// The changes predicted, as given.
    pub changes: Vec<Change>,
    /// Objects in the link model, and how many of them laying the build out again
    /// unchanged puts back at their addresses.
    pub objects: usize,
    /// Of `objects`, those put back.
    pub reproduced: usize,
    /// Functions in the link model, and how many the unchanged layout puts back.
    pub functions: usize,
    /// Of `functions`, those put back.
    pub functions_reproduced: usize,
    /// Objects whose predicted place or size differs from the build's.
    pub moved: usize,
    /// What the model cannot predict for these changes.
    pub caveats: Vec<String>,
    /// What the model took from the build to predict them: the alignment it derived
    /// for each object the changes name (or, for a resized type, the first objects
    /// that change size) and why, and how it aligns functions.
    pub assumptions: Vec<String>,
    /// For each output section an object moved in: the most any object's end moved
    /// (the bytes the change adds before slack absorbs them).
    pub growth: Vec<(Space, &'d str, i64)>,
    /// Output sections whose start or size the change moves, in address order.
    pub sections_moved: Vec<SectionMoved>,
}

/// An output section moved by the sections before it growing, or grown itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionMoved {
    /// The output section.
    pub name: String,
    /// Bytes its start moves by.
    pub shift: i64,
    /// Bytes its size changes by.
    pub grew: i64,
}

/// The build `changes` would make of `image`, with the code and data of `objects`
/// (recompiled object files) in place of their units' old input sections.
pub fn predict<'d>(
    image: &Image<'d>,
    changes: &[Change],
    objects: &'d [ObjectFile],
) -> Result<Prediction<'d>, PredictError> {
    let vars = image.variables_of_symbols();
    let map = LinkMap::build_from(image, &vars);
    predict_from(image, &map, &vars, changes, objects, None)
}

/// The build's kallsyms tables for a prediction with object files
/// (`InputFile::kallsyms`): `None` when the input has none to read (a snapshot).
pub type Tables<'a> = Option<
    &'a std::result::Result<crate::link::kallsyms::Kallsyms, crate::link::kallsyms::Unmodelled>,
>;

/// `predict` from the image's link model and variables already found (`LinkMap::
/// build_from`, `Image::variables_of_symbols`): the caller keeps the link model for
/// the diff against the image (`DiffOptions::old_link`). It is copied only when a
/// change moves objects between input sections.
pub fn predict_from<'d>(
    image: &Image<'d>,
    base: &LinkMap<'d>,
    vars: &crate::model::SymbolVariables<'_, 'd>,
    changes: &[Change],
    objects: &'d [ObjectFile],
    tables: Tables<'_>,
) -> Result<Prediction<'d>, PredictError> {
    let chain = Chain::build(image, base);
    // How well the model reproduces the build is a layout of its own, independent of
    // the changes: laid out beside them.
    let (reproduced, prediction) = rayon::join(
        || reproduced(image, base, &chain),
        || laid_out(image, base, &chain, vars, changes, objects, tables),
    );
    Ok(Prediction {
        objects: reproduced.objects,
        reproduced: reproduced.objects_reproduced,
        functions: reproduced.functions,
        functions_reproduced: reproduced.functions_reproduced,
        ..prediction?
    })
}

/// `predict_from` without how well the link model reproduces the build (its counts
/// left at 0): what `suggest` reads of each candidate's prediction.
pub fn predict_changed<'d>(
    image: &Image<'d>,
    base: &LinkMap<'d>,
    vars: &crate::model::SymbolVariables<'_, 'd>,
    changes: &[Change],
) -> Result<Prediction<'d>, PredictError> {
    let chain = Chain::build(image, base);
    laid_out(image, base, &chain, vars, changes, &[], None)
}

/// The prediction of `changes` (and `objects`) on the link model `base`, its
/// reproduction counts left at 0.
fn laid_out<'d>(
    image: &Image<'d>,
    base: &LinkMap<'d>,
    chain: &Chain<'d>,
    vars: &crate::model::SymbolVariables<'_, 'd>,
    changes: &[Change],
    objects: &'d [ObjectFile],
    tables: Tables<'_>,
) -> Result<Prediction<'d>, PredictError> {
    let mut map = std::borrow::Cow::Borrowed(base);
    // Structs first, then the objects of their types.
    let struct_edits = struct_edits(image, changes)?;
    let (relaid, _) = propagate(image, &struct_edits)?;
    let mut edits = object_edits(image, vars, &relaid);
    let asked = placement_edits(image, vars, changes, &mut map, &mut edits)?;
    let mut assumptions = assumptions(image, &map, vars, changes, &edits, !objects.is_empty());
    let (mut extra, removed, unplaced) = match objects {
        [] => Default::default(),
        _ => replace_inputs(image, map.to_mut(), objects),
    };
    let (hidden, tables_caveat) = place_tables(
        image,
        &mut map,
        tables,
        &removed,
        &mut extra,
        &mut edits,
        &mut assumptions,
    );
    let (placed, section_moves) = map.layout_chained(&edits, chain);
    // Objects now in another output section (`__read_mostly` on a `.bss` object).
    let new_sections = map.moved_sections(image);
    let mut caveats = vec![code_caveat(objects).to_string()];
    caveats.extend(asked.notes);
    caveats.extend(unplaced);
    caveats.extend(tables_caveat);
    caveats.extend(percpu_caveat(chain, &map, &placed));
    let sections_moved = sections_moved(&section_moves);
    let mut symbols: Vec<Symbol<'d>> = image.symbols.iter().chain(&extra).cloned().collect();
    let (moved, growth) = place_symbols(image, &mut symbols, &placed, &hidden, &new_sections);
    let kept: Vec<bool> = (0..symbols.len())
        .map(|i| !removed.contains(&i) && !hidden.contains(&i))
        .collect();
    let mut variables = moved_variables(image, vars, &symbols, &placed, &removed, &asked.asked_for);
    let mut keep = kept.iter();
    symbols.retain(|_| *keep.next().unwrap_or(&true));
    symbols.sort_by(|a, b| (a.space, a.address, a.name).cmp(&(b.space, b.address, b.name)));
    variables.sort_by(|a, b| (a.address, a.name).cmp(&(b.address, b.name)));
    let mut structs = image.structs.clone();
    for (id, s) in relaid {
        structs[id.0] = Arc::new(s);
    }
    let path = predicted_path(image, changes, objects);
    let predicted = predicted_image(image, path, symbols, structs, variables, &section_moves);
    Ok(Prediction {
        image: predicted,
        changes: changes.to_vec(),
        objects: 0,
        reproduced: 0,
        functions: 0,
        functions_reproduced: 0,
        moved,
        caveats,
        assumptions,
        growth,
        sections_moved,
    })
}

/// The predicted image: `image` with the symbols, structs and variables laid out
/// again, its sections and boundaries moved as `section_moves` says.
fn predicted_image<'d>(
    image: &Image<'d>,
    path: PathBuf,
    symbols: Vec<Symbol<'d>>,
    structs: Vec<Arc<crate::model::StructLayout<'d>>>,
    variables: Vec<crate::model::Variable<'d>>,
    section_moves: &[SectionMove<'d>],
) -> Image<'d> {
    Image {
        path,
        arch: image.arch.clone(),
        big_endian: image.big_endian,
        file_kind: image.file_kind,
        build_id: None,
        kernel_version: image.kernel_version.clone(),
        line_size: image.line_size,
        line_size_overridden: image.line_size_overridden,
        has_debug_info: image.has_debug_info,
        sizes_inferred: image.sizes_inferred,
        types_from: image.types_from,
        percpu_base: image.percpu_base,
        function_prefix: image.function_prefix,
        sections: moved_sections(image, section_moves),
        boundaries: moved_boundaries(image, section_moves),
        symbols,
        structs,
        variables,
        units: image.units,
        function_alignments: image.function_alignments.clone(),
        // No code of its own: the judgement reads the code of the build it was
        // predicted from, through each object's pair there.
        access: Default::default(),
        typed: Default::default(),
        // Laid out again: what the build's link model said no longer holds.
        link_alignments: None,
    }
}

/// How well the link model reproduces the build it was made from, laid out unchanged.
struct Reproduced {
    /// Data objects laid out.
    objects: usize,
    /// Of those, how many got their place and size in the build.
    objects_reproduced: usize,
    /// Functions laid out.
    functions: usize,
    /// Of those, how many got their place and size in the build.
    functions_reproduced: usize,
}

/// The objects and functions the link model lays out unchanged, and how many of each
/// it puts where the build has them.
fn reproduced(image: &Image<'_>, map: &LinkMap<'_>, chain: &Chain<'_>) -> Reproduced {
    let (unchanged, _) = map.layout_chained(&Edits::default(), chain);
    let data = |i: &usize| image.symbols[*i].kind == SymbolKind::Object;
    let object_count = unchanged.keys().filter(|i| data(i)).count();
    let reproduced = unchanged
        .iter()
        .filter(|(i, (place, size))| {
            let s = &image.symbols[**i];
            data(i) && s.place == *place && s.size == *size
        })
        .count();
    let functions = unchanged.len() - object_count;
    let functions_reproduced = unchanged
        .iter()
        .filter(|(i, (place, size))| {
            let s = &image.symbols[**i];
            !data(i) && s.place == *place && s.size == *size
        })
        .count();
    Reproduced {
        objects: object_count,
        objects_reproduced: reproduced,
        functions,
        functions_reproduced,
    }
}

/// The edits the changes make to structs and unions, by type name.
fn struct_edits<'c>(
    image: &Image<'_>,
    changes: &'c [Change],
) -> Result<FxHashMap<String, StructEdit<'c>>, PredictError> {
    let mut struct_edits: FxHashMap<String, StructEdit<'_>> = FxHashMap::default();
    for c in changes {
        match c {
            Change::Resize { name, size } => {
                let old = image
                    .structs_named(|n| n == name)
                    .map(|(_, s)| s.size)
                    .max()
                    .ok_or_else(|| PredictError::NoStruct(name.to_string()))?;
                let new = match size {
                    Size::Grow(n) => old.saturating_add(*n),
                    Size::Shrink(n) => old.saturating_sub(*n),
                    Size::Exactly(n) => *n,
                };
                struct_edits.entry(name.clone()).or_default().size = Some(new);
            }
            Change::Member { name, member, grow } => {
                struct_edits
                    .entry(name.clone())
                    .or_default()
                    .members
                    .push(types::MemberGrowth {
                        member,
                        grow: *grow,
                    });
            }
            Change::StructAlign { name, align } => {
                struct_edits.entry(name.clone()).or_default().align = Some(*align);
            }
            Change::MemberAlign {
                name,
                member,
                align,
            } => struct_edits
                .entry(name.clone())
                .or_default()
                .member_aligns
                .push((member, *align)),
            Change::MemberMove {
                name,
                member,
                after,
            } => struct_edits
                .entry(name.clone())
                .or_default()
                .moves
                .push(types::MemberMove {
                    member,
                    after: after.as_deref(),
                }),
            Change::MemberInsert {
                name,
                member,
                size,
                align,
                at,
            } => struct_edits
                .entry(name.clone())
                .or_default()
                .inserts
                .push(member_insert(member, *size, *align, at)),
            _ => {}
        }
    }
    Ok(struct_edits)
}

/// The insertion `--insert` asks for, its alignment defaulted from its size.
fn member_insert<'c>(
    member: &'c str,
    size: u64,
    align: Option<u64>,
    at: &'c Position,
) -> types::MemberInsert<'c> {
    types::MemberInsert {
        member,
        size,
        align: align.unwrap_or_else(|| Change::default_insert_alignment(size)),
        at: match at {
            Position::First => types::InsertAt::First,
            Position::After(x) => types::InsertAt::After(x),
            Position::Offset(o) => types::InsertAt::Offset(*o),
        },
    }
}

/// The new size and alignment of each object whose type was laid out again.
fn object_edits(
    image: &Image<'_>,
    vars: &crate::model::SymbolVariables<'_, '_>,
    relaid: &types::Relaid<'_>,
) -> Edits {
    let mut edits = Edits::default();
    for (i, s) in image.symbols.iter().enumerate() {
        if s.kind != SymbolKind::Object {
            continue;
        }
        let Some(v) = vars.of(s) else { continue };
        let Some(id) = v.layout else { continue };
        let Some(new) = relaid.get(&id) else { continue };
        let old = image.struct_by_id(id);
        let var_size = v.size.unwrap_or(s.size);
        if old.size == 0 || var_size % old.size != 0 {
            continue;
        }
        let mut size = (var_size / old.size).saturating_mul(new.size);
        // Initialised past its type: the bytes of a flexible array member's
        // initializer (init_mm's cpu_bitmap) follow the array where it now starts.
        if !v.is_array
            && s.size > var_size
            && let (Some(o), Some(n)) = (
                old.members.last().filter(|m| m.flexible),
                new.members.last().filter(|m| m.flexible),
            )
        {
            size = n.offset.saturating_add(s.size.saturating_sub(o.offset));
        }
        // The variable's own alignment stops the raise; its type's does not (see
        // `align::asked`).
        let user = v.alignment;
        let was = align::asked(image, s, Some(v)).alignment;
        let now = compiler_alignment(v.ctype.kind, size, new.alignment, user);
        if size != s.size {
            edits.size.insert(i, size);
        }
        if now != was {
            edits.align.insert(i, now);
        }
    }
    edits
}

/// What the placement changes leave besides their edits.
struct Asked {
    /// Alignments the source now asks for, by symbol: the predicted variable carries
    /// them (`DW_AT_alignment`), so the diff explains the shift they cause.
    asked_for: FxHashMap<usize, u64>,
    /// Caveats on how they were applied.
    notes: Vec<String>,
}

/// Applies the changes that align or move symbols (`--symbol`, `--align-functions`,
/// `--read-mostly`, `--percpu-aligned`) to `edits` and the link model.
fn placement_edits<'d>(
    image: &Image<'d>,
    vars: &crate::model::SymbolVariables<'_, 'd>,
    changes: &[Change],
    map: &mut std::borrow::Cow<'_, LinkMap<'d>>,
    edits: &mut Edits,
) -> Result<Asked, PredictError> {
    let mut asked_for: FxHashMap<usize, u64> = FxHashMap::default();
    let mut notes = Vec::new();
    for c in changes {
        match c {
            Change::SymbolAlign { name, align } if functions::names_function_only(image, name) => {
                let i = functions::find_function(image, name)?;
                edits.align.insert(
                    i,
                    (*align).max(image.function_alignment(image.symbols[i].compile_unit)),
                );
            }
            Change::FunctionsAligned { unit, align } => {
                functions::align_unit(image, unit, *align, edits)?;
                notes.push(functions::UNIT_CAVEAT.to_string());
            }
            Change::ReadMostly { name } => {
                let i = find_placed_object(image, map, "--read-mostly", name)?;
                functions::move_to_read_mostly(image, map.to_mut(), i, name)?;
            }
            Change::SymbolAlign { name, align } => {
                let i = find_placed_object(image, map, "--symbol", name)?;
                let was = align::asked(image, &image.symbols[i], vars.of(&image.symbols[i]));
                edits.align.insert(i, was.alignment.max(*align));
                asked_for.insert(i, *align);
            }
            Change::PercpuAligned { name, declaration } => {
                let i = percpu_aligned(image, map, edits, name, *declaration, &mut notes)?;
                asked_for.insert(i, image.line_size);
            }
            _ => {}
        }
    }
    Ok(Asked { asked_for, notes })
}

/// Applies `--percpu-aligned` (`declaration`) or `--percpu-aligned-definition` to the
/// per-CPU variable `name`; returns its index.
fn percpu_aligned<'d>(
    image: &Image<'d>,
    map: &mut std::borrow::Cow<'_, LinkMap<'d>>,
    edits: &mut Edits,
    name: &str,
    declaration: bool,
    notes: &mut Vec<String>,
) -> Result<usize, PredictError> {
    let flag = match declaration {
        true => "--percpu-aligned",
        false => "--percpu-aligned-definition",
    };
    let i = find_placed_object(image, map, flag, name)?;
    if image.symbols[i].space != Space::Percpu {
        return Err(PredictError::NotPerCpu {
            flag,
            name: name.to_string(),
        });
    }
    // A static one has no declaration elsewhere; with its declaration
    // aligned too, a global one has none that keeps its section either.
    if declaration || image.symbols[i].binding == crate::model::Binding::Local {
        let line = functions::definition_lines(image);
        map.to_mut().move_to_end_region(i, image.line_size, &line);
    } else {
        // A global per-CPU variable is declared in a header
        // (`DECLARE_PER_CPU`), and GCC keeps the section of the first
        // declaration ("ignoring attribute section ... conflicts with
        // previous"): the definition's alignment applies in place.
        edits.align.insert(i, image.line_size);
        notes.push(format!(
            "{name} is global: its header's DECLARE_PER_CPU keeps it in .data..percpu, aligned in place; \
             with DECLARE_PER_CPU_ALIGNED in the header too (--percpu-aligned) it moves to ..shared_aligned"
        ));
    }
    Ok(i)
}

/// The kallsyms tables list every symbol: ones added or removed resize them. Places
/// them again when they are modelled; returns the symbols that hides (the tables'
/// own) and, when they could not be placed, the caveat that says so.
fn place_tables<'d>(
    image: &Image<'d>,
    map: &mut std::borrow::Cow<'_, LinkMap<'d>>,
    tables: Tables<'_>,
    removed: &rustc_hash::FxHashSet<usize>,
    extra: &mut Vec<Symbol<'d>>,
    edits: &mut Edits,
    assumptions: &mut Vec<String>,
) -> (rustc_hash::FxHashSet<usize>, Option<String>) {
    let mut hidden = rustc_hash::FxHashSet::default();
    let mut tables_caveat = None;
    if !extra.is_empty() || !removed.is_empty() {
        let not_predicted = format!(
            "{} added and {} removed: the kallsyms tables the link generates in .rodata change size, and what follows them there is not predicted",
            plural(extra.len(), "symbol"),
            removed.len()
        );
        match tables {
            Some(Ok(k)) => match kallsyms::place(image, map.to_mut(), k, removed, extra, edits) {
                Some(placed) => {
                    hidden = placed.hidden;
                    assumptions.push(placed.assumption);
                }
                None => {
                    tables_caveat = Some(format!(
                        "{not_predicted} (no output section of the link model holds them)"
                    ))
                }
            },
            Some(Err(why)) => tables_caveat = Some(format!("{not_predicted} ({why})")),
            None => tables_caveat = Some(not_predicted),
        }
    }
    (hidden, tables_caveat)
}

/// The first caveat: what becomes of the code's size.
fn code_caveat(objects: &[ObjectFile]) -> &'static str {
    if objects.is_empty() {
        "functions keep their addresses: code size changes are not predicted (give the recompiled .o files with --objects)"
    } else {
        "code and data of units without a recompiled .o keep their sizes"
    }
}

/// The caveat that the per-CPU section grows while where its load image lies is
/// unknown; none when it does not grow or is placed.
fn percpu_caveat(
    chain: &Chain<'_>,
    map: &LinkMap<'_>,
    placed: &FxHashMap<usize, (u64, u64)>,
) -> Option<String> {
    if !chain.percpu_placed
        && let Some(o) = map.outputs.iter().find(|o| o.space == Space::Percpu)
    {
        let end = o
            .inputs
            .iter()
            .flat_map(|i| &i.members)
            .filter_map(|m| placed.get(&m.symbol))
            .map(|(p, s)| p.saturating_add(*s))
            .max()
            .unwrap_or(o.end);
        if end > o.end {
            return Some(format!(
                "{} grows, and where its load image lies is unknown (no __per_cpu_load): the sections after it are kept where they were",
                o.section
            ));
        }
    }
    None
}

/// The output sections that moved or changed size.
fn sections_moved(section_moves: &[SectionMove<'_>]) -> Vec<SectionMoved> {
    section_moves
        .iter()
        .filter(|m| (m.1, m.3) != (m.2, m.4))
        .map(|&(name, old, new, old_size, new_size)| SectionMoved {
            name: name.to_string(),
            shift: (new as i64).wrapping_sub(old as i64),
            grew: (new_size as i64).wrapping_sub(old_size as i64),
        })
        .collect()
}

/// Gives each symbol laid out (and not hidden) its new place, size and section;
/// returns how many moved or changed size, and how far each output section's end
/// grew at most (by space and section, in the order first seen).
fn place_symbols<'d>(
    image: &Image<'d>,
    symbols: &mut [Symbol<'d>],
    placed: &FxHashMap<usize, (u64, u64)>,
    hidden: &rustc_hash::FxHashSet<usize>,
    new_sections: &FxHashMap<usize, &'d str>,
) -> (usize, Vec<(Space, &'d str, i64)>) {
    let mut moved = 0;
    let mut growth: Vec<(Space, &'d str, i64)> = Vec::new();
    for (i, s) in symbols.iter_mut().enumerate() {
        let Some(&(place, size)) = placed.get(&i).filter(|_| !hidden.contains(&i)) else {
            continue;
        };
        if (place, size) != (s.place, s.size) {
            moved += 1;
            let grew = (place.saturating_add(size) as i64).wrapping_sub(s.place_end() as i64);
            match growth
                .iter_mut()
                .find(|g| (g.0, g.1) == (s.space, s.section))
            {
                Some(g) => g.2 = g.2.max(grew),
                None => growth.push((s.space, s.section, grew)),
            }
        }
        if let Some(section) = new_sections.get(&i) {
            s.section = section;
        }
        s.address = match s.space {
            Space::Global => place,
            Space::Percpu => place.wrapping_add(image.percpu_base.unwrap_or(0)),
        };
        s.place = place;
        s.size = size;
    }
    (moved, growth)
}

/// The image's variables, each following its symbol (`symbols`, placed, in the
/// image's order) to its new address and size, with the alignment asked for.
fn moved_variables<'d>(
    image: &Image<'d>,
    vars: &crate::model::SymbolVariables<'_, 'd>,
    symbols: &[Symbol<'d>],
    placed: &FxHashMap<usize, (u64, u64)>,
    removed: &rustc_hash::FxHashSet<usize>,
    asked_for: &FxHashMap<usize, u64>,
) -> Vec<crate::model::Variable<'d>> {
    let mut variables = image.variables.clone();
    // Each placed symbol's variable, found by its index (variables are unique by
    // address and name); of two symbols of one variable, the later one's place stands.
    for i in 0..image.symbols.len() {
        let Some(&(_, size)) = placed.get(&i) else {
            continue;
        };
        if removed.contains(&i) {
            continue;
        }
        let Some(k) = vars.slot(i) else { continue };
        let (Some(v), Some(s)) = (image.variables.get(k), symbols.get(i)) else {
            continue;
        };
        let align = asked_for.get(&i).map(|&a| a.max(v.alignment.unwrap_or(1)));
        let moved = &mut variables[k];
        moved.address = s.address;
        if moved.size.is_some() {
            moved.size = Some(size);
        }
        if align.is_some() {
            moved.alignment = align;
        }
    }
    variables
}

/// The predicted image's path: the image's, with the changes and recompiled objects.
fn predicted_path(image: &Image<'_>, changes: &[Change], objects: &[ObjectFile]) -> PathBuf {
    let mut described: Vec<String> = changes.iter().map(ToString::to_string).collect();
    described.extend(objects.iter().map(|o| {
        let name = o.path.file_name().unwrap_or(o.path.as_os_str());
        format!("{} recompiled", name.to_string_lossy())
    }));
    PathBuf::from(format!(
        "{} (predicted: {})",
        image.path.display(),
        described.join(", ")
    ))
}

/// What `Prediction::assumptions` says: the derived alignment of up to three objects
/// (those the changes name, else the first that change size), and the functions'
/// alignment when functions are laid out again.
fn assumptions<'d>(
    image: &Image<'d>,
    map: &LinkMap<'_>,
    vars: &crate::model::SymbolVariables<'_, 'd>,
    changes: &[Change],
    edits: &Edits,
    with_objects: bool,
) -> Vec<String> {
    let mut named: Vec<usize> = changes
        .iter()
        .filter_map(|c| match c {
            Change::SymbolAlign { name, .. }
            | Change::PercpuAligned { name, .. }
            | Change::ReadMostly { name } => find_object(image, name).ok(),
            _ => None,
        })
        .collect();
    // Each object a change names; of the objects a resized type changes, the first.
    let mut shown = 3;
    if named.is_empty() {
        let mut resized: Vec<usize> = edits.size.keys().copied().collect();
        resized.sort_unstable_by_key(|&i| (image.symbols[i].space, image.symbols[i].place));
        named = resized;
        shown = 1;
    }
    let alignments = map.alignments(image.symbols.len());
    let mut out: Vec<String> = named
        .iter()
        .take(shown)
        .filter_map(|&i| alignment_assumption(image, &alignments, vars, i))
        .collect();
    if named.len() > shown {
        out.push(format!(
            "{} more objects at the alignments their types give",
            named.len() - shown
        ));
    }
    out.extend(functions_assumption(image, changes, with_objects));
    out
}

/// The alignment object `i` is laid out at, and why; none without its variable.
fn alignment_assumption(
    image: &Image<'_>,
    alignments: &[Option<crate::link::Alignment>],
    vars: &crate::model::SymbolVariables<'_, '_>,
    i: usize,
) -> Option<String> {
    let s = &image.symbols[i];
    let v = vars.of(s)?;
    let asked = align::asked(image, s, Some(v));
    let natural = align::natural_alignment(image, v);
    let why = if v.alignment.is_some() {
        "the alignment its definition asks (DW_AT_alignment)".to_string()
    } else if asked.alignment > natural {
        format!(
            "its type's {natural}, raised by GCC for an aggregate of {} B",
            v.size.unwrap_or(s.size)
        )
    } else {
        "its type's".to_string()
    };
    let model = alignments
        .get(i)
        .copied()
        .flatten()
        .map_or(asked.alignment, |a| a.own);
    let borne = if model < asked.alignment {
        format!("; the build bears out only {model}")
    } else {
        String::new()
    };
    Some(format!(
        "{} aligned to {} ({why}{borne})",
        s.qualified_name(),
        asked.alignment
    ))
}

/// The alignment functions are laid out at, when functions are laid out again.
fn functions_assumption(
    image: &Image<'_>,
    changes: &[Change],
    with_objects: bool,
) -> Option<String> {
    let functions_moved = with_objects
        || changes.iter().any(|c| {
            matches!(c, Change::FunctionsAligned { .. })
                || matches!(c, Change::SymbolAlign { name, .. } if functions::names_function_only(image, name))
        });
    if !functions_moved {
        return None;
    }
    let small = image
        .function_alignments
        .iter()
        .filter(|a| a.1 == 1)
        .count();
    Some(match small {
        0 => format!(
            "functions aligned to {} (GCC at -O2 on x86-64), as their units' DW_AT_producer shows",
            crate::link::FUNCTION_ALIGNMENT
        ),
        n => format!(
            "functions of {n} units built for size (-Os in DW_AT_producer) not aligned; the others' to {} where their addresses bear it out",
            crate::link::FUNCTION_ALIGNMENT
        ),
    })
}

/// The image's sections at the places and sizes the layout gave them (the per-CPU
/// area keeps its address 0; its size follows its load image's).
fn moved_sections<'d>(image: &Image<'d>, moves: &[SectionMove<'d>]) -> Vec<Section<'d>> {
    let mut out = image.sections.clone();
    for s in &mut out {
        if let Some(&(_, old, new, _, size)) = moves.iter().find(|m| m.0 == s.name) {
            if s.address != 0 {
                s.address = s.address.wrapping_add(new.wrapping_sub(old));
            }
            s.size = size;
        }
    }
    out
}

/// Linker boundary symbols moved with the section they lie in (the last one that
/// starts at or before them).
fn moved_boundaries(image: &Image<'_>, moves: &[SectionMove<'_>]) -> Vec<(&'static str, u64)> {
    image
        .boundaries
        .iter()
        .map(|&(name, at)| {
            let shift = moves
                .iter()
                .filter(|m| m.1 <= at)
                .max_by_key(|m| m.1)
                .map_or(0, |m| m.2.wrapping_sub(m.1));
            (name, at.wrapping_add(shift))
        })
        .collect()
}

/// Puts the sections of recompiled object files in place of their units' input
/// sections: each allocated section of a `.o` replaces the input section of its unit
/// that holds one of its symbols. Returns the symbols new in the `.o` files (indexed
/// after the image's), the image's symbols they no longer have, and the sections
/// that matched no input section.
fn replace_inputs<'d>(
    image: &Image<'d>,
    map: &mut LinkMap<'d>,
    objects: &'d [ObjectFile],
) -> (Vec<Symbol<'d>>, rustc_hash::FxHashSet<usize>, Vec<String>) {
    use crate::link::Input;
    let mut extra: Vec<Symbol<'d>> = Vec::new();
    let mut removed = rustc_hash::FxHashSet::default();
    let mut unplaced = Vec::new();
    let globals: rustc_hash::FxHashSet<&str> = image
        .symbols
        .iter()
        .filter(|s| s.binding != Binding::Local)
        .map(|s| s.name)
        .collect();
    for o in objects {
        for sec in &o.sections {
            let Some((oi, ii)) = input_of(image, map, o, sec) else {
                unplaced.push(format!(
                    "{} {}: no input section of its unit holds its symbols",
                    o.path.display(),
                    sec.name
                ));
                continue;
            };
            let input = &map.outputs[oi].inputs[ii];
            let members = replaced_members(image, input, sec, &globals, &mut extra, &mut removed);
            let (last_old, after_old) = old_end(image, input);
            let tail = sec.size.saturating_sub(
                sec.symbols
                    .iter()
                    .map(|s| s.offset.saturating_add(s.size))
                    .max()
                    .unwrap_or(0),
            );
            let lead = unexplained_before(image, input, sec, map.outputs[oi].start);
            let origin = input.origin;
            let out = &mut map.outputs[oi];
            let boundary = out.inputs[ii].boundary;
            out.inputs[ii] = Input {
                origin,
                align: sec.align,
                members,
                size: Some(sec.size),
                boundary,
                lead,
                guessed: None,
            };
            // The bytes the build had between this input section's last symbol and
            // the next one's first were this section's tail, then the next one's
            // alignment: its size now says where it ends.
            if let Some(next) = out.inputs.get_mut(ii + 1)
                && let Some(old_end) = last_old.map(|e| e.saturating_add(tail))
            {
                realign_next(image, next, old_end, after_old);
            }
        }
    }
    (extra, removed, unplaced)
}

/// The output and input section (indexes) of `o`'s unit that holds one of the
/// symbols of its section `sec`.
fn input_of(
    image: &Image<'_>,
    map: &LinkMap<'_>,
    o: &ObjectFile,
    sec: &objects::ObjSection,
) -> Option<(usize, usize)> {
    let n = image.symbols.len();
    let names: rustc_hash::FxHashSet<&str> = sec.symbols.iter().map(|s| s.name.as_str()).collect();
    map.outputs.iter().enumerate().find_map(|(oi, out)| {
        out.inputs
            .iter()
            .position(|inp| {
                inp.origin.is_some_and(|u| o.is_from(u))
                    && inp
                        .members
                        .iter()
                        .any(|m| m.symbol < n && names.contains(image.symbols[m.symbol].name))
            })
            .map(|ii| (oi, ii))
    })
}

/// The members of `input` once `sec` replaces it: its symbols by name, those new in
/// `sec` pushed to `extra`; the input's symbols `sec` no longer has go to `removed`.
fn replaced_members<'d>(
    image: &Image<'d>,
    input: &crate::link::Input<'_>,
    sec: &'d objects::ObjSection,
    globals: &rustc_hash::FxHashSet<&str>,
    extra: &mut Vec<Symbol<'d>>,
    removed: &mut rustc_hash::FxHashSet<usize>,
) -> Vec<crate::link::Placed> {
    let n = image.symbols.len();
    let template = image.symbols[input.members[0].symbol].clone();
    // A new local symbol is printed with its unit's file, as the unit's other
    // locals are (the input section may begin with a global).
    let local_of_unit = image
        .symbols
        .iter()
        .find(|s| s.file.is_some() && s.compile_unit == template.compile_unit)
        .unwrap_or(&template);
    let mut by_name: FxHashMap<&str, usize> = input
        .members
        .iter()
        .filter(|m| m.symbol < n)
        .map(|m| (image.symbols[m.symbol].name, m.symbol))
        .collect();
    let mut members = Vec::new();
    for os in &sec.symbols {
        // A weak definition the link overrode (`__weak arch_vma_name` in
        // kernel/signal.c): its bytes stay, its name belongs to another unit.
        if os.binding != Binding::Local
            && !by_name.contains_key(os.name.as_str())
            && globals.contains(os.name.as_str())
        {
            continue;
        }
        let symbol = by_name.remove(os.name.as_str()).unwrap_or_else(|| {
            let local = os.binding == Binding::Local;
            extra.push(Symbol {
                name: os.name.as_str(),
                file: local_of_unit.file.filter(|_| local),
                unit: local_of_unit.unit.filter(|_| local),
                compile_unit: template.compile_unit,
                group: if local { local_of_unit.group } else { 0 },
                kind: os.kind,
                binding: os.binding,
                section: template.section,
                address: 0,
                size: os.size,
                space: template.space,
                place: 0,
            });
            n + extra.len() - 1
        });
        members.push(crate::link::Placed {
            symbol,
            size: os.size,
            align: 1,
            explicit: false,
            lead: os.offset,
            inside: None,
        });
    }
    removed.extend(by_name.into_values());
    members
}

/// Where the old input section ended (its last symbol's end), and the place of the
/// object that followed it in the build.
fn old_end(image: &Image<'_>, input: &crate::link::Input<'_>) -> (Option<u64>, Option<u64>) {
    let n = image.symbols.len();
    // Where the old section ended: its last symbol's end plus the tail the
    // new one has after its last symbol (unnamed bytes, as code after it).
    let last_old = input
        .members
        .iter()
        .filter(|m| m.symbol < n)
        .map(|m| (image.symbols[m.symbol].place_end(), m.symbol))
        .max();
    // The place of the object that followed it in the build.
    let after_old = last_old.and_then(|(_, i)| {
        let last = &image.symbols[i];
        image.symbols[i + 1..]
            .iter()
            .filter(|s| matches!(s.kind, SymbolKind::Object | SymbolKind::Function))
            .take_while(|s| s.space == last.space)
            .find(|s| s.section == last.section && s.place > last.place)
            .map(|s| s.place)
    });
    (last_old.map(|(end, _)| end), after_old)
}

/// Gives the input section after a replaced one (which ended at `old_end` in the
/// build) the alignment and lead that explain the gap the build had before it.
fn realign_next(
    image: &Image<'_>,
    next: &mut crate::link::Input<'_>,
    old_end: u64,
    after_old: Option<u64>,
) {
    let place = next.members.first().map_or(old_end, |m| {
        image.symbols.get(m.symbol).map_or(old_end, |s| s.place)
    });
    let data = next.members.first().is_some_and(|m| {
        image
            .symbols
            .get(m.symbol)
            .is_some_and(|s| s.kind == SymbolKind::Object)
    });
    let (align, lead) = if data && after_old == Some(place) {
        next_input_alignment(next.align, old_end, place)
    } else {
        (next.align, 0)
    };
    next.align = align;
    if let Some(first) = next.members.first_mut() {
        first.lead = if next.boundary > 1 { 0 } else { lead };
    }
}

/// The bytes before the build's version of a replaced input section that no
/// alignment explains: its start (its first symbol's place less that symbol's offset
/// in the new object file) less the end of the object before it (or the output
/// section's start), past the linker script's boundary and aligned; 0 when the
/// estimate falls before that.
fn unexplained_before(
    image: &Image<'_>,
    input: &crate::link::Input<'_>,
    sec: &objects::ObjSection,
    output_start: u64,
) -> u64 {
    let n = image.symbols.len();
    let Some(first) = input.members.iter().find(|m| m.symbol < n) else {
        return 0;
    };
    let s = &image.symbols[first.symbol];
    let Some(offset) = sec
        .symbols
        .iter()
        .find(|o| o.name == s.name)
        .map(|o| o.offset)
    else {
        return 0;
    };
    let before = image.symbols[..first.symbol]
        .iter()
        .rev()
        .filter(|p| matches!(p.kind, SymbolKind::Object | SymbolKind::Function))
        .take_while(|p| p.space == s.space)
        .find(|p| p.section == s.section && p.place < s.place);
    // The first input section of its output section: from where that starts (x86's
    // `.data` begins with the init task's stack, bytes the script reserves).
    let prev_end = before.map_or(output_start, |p| p.place_end());
    let Some(start) = s.place.checked_sub(offset) else {
        return 0;
    };
    // After the linker script's boundary, when one lies between them: a guessed one
    // (`Input::guessed`) leaves the bytes after it that nothing explains.
    let from = align::align_up(prev_end, input.boundary.max(1));
    start.saturating_sub(align::align_up(from, sec.align.max(1)))
}

/// The largest alignment an input section is taken to have from a gap before it.
const GAP_ALIGN_MAX: u64 = 64;

/// The alignment and lead of the input section at `place` after a replaced one that
/// ended at `end` in the build: its own `align` when that explains the gap; else
/// the smallest larger power of two up to a line that does (GCC's raise of a 32-byte
/// table whose symbol DWARF does not type, `CSWTCH.*`); else its own, with the bytes
/// no alignment explains kept before it (unnamed data of either section).
fn next_input_alignment(align: u64, end: u64, place: u64) -> (u64, u64) {
    let mut a = align.max(1);
    while a <= GAP_ALIGN_MAX {
        if align::align_up(end, a) == place {
            return (a, 0);
        }
        a *= 2;
    }
    (
        align.max(1),
        place.saturating_sub(align::align_up(end, align.max(1))),
    )
}

/// The data object named `name` (a bare or qualified name), exactly one.
fn find_object(image: &Image<'_>, name: &str) -> Result<usize, PredictError> {
    let found: Vec<usize> = image
        .symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == SymbolKind::Object && s.answers_to(name))
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [i] => Ok(*i),
        [] => Err(PredictError::NoObject(name.to_string())),
        _ => Err(PredictError::AmbiguousObject {
            name: name.to_string(),
            count: found.len(),
        }),
    }
}

/// The object `name` names, for a change to its placement (`flag`): refused when it
/// lies inside another object (an alias, as x86's `jiffies` of `jiffies_64`), whose
/// place it shares: the change must name that one.
fn find_placed_object(
    image: &Image<'_>,
    map: &LinkMap<'_>,
    flag: &'static str,
    name: &str,
) -> Result<usize, PredictError> {
    let i = find_object(image, name)?;
    let Some(host) = map.host(i).and_then(|h| image.symbols.get(h)) else {
        return Ok(i);
    };
    let (name, host_name) = (name.to_string(), host.qualified_name());
    Err(if host.place == image.symbols[i].place {
        PredictError::Alias {
            flag,
            name,
            host: host_name,
            address: host.address,
        }
    } else {
        PredictError::Inside {
            flag,
            name,
            host: host_name,
            address: host.address,
            size: host.size,
        }
    })
}

/// `1 symbol`, `2 symbols`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default alignment of an inserted member: the largest power of two up to 8
    /// dividing its size.
    #[test]
    fn an_insert_is_aligned_by_its_size_by_default() {
        let defaults: Vec<u64> = [1, 2, 3, 4, 6, 12, 16, 24]
            .iter()
            .map(|&n| Change::default_insert_alignment(n))
            .collect();
        assert_eq!(defaults, vec![1, 2, 1, 4, 2, 4, 8, 8]);
    }
}
