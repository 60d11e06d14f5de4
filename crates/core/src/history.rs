//! A layout history across a series of builds: for each symbol or struct asked for, one
//! row per build with its placement (or size and members), and whether its lines
//! changed since the build before. This is the view a bisection needs.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;

use globset::GlobSet;
use serde::Serialize;

use crate::layout::{SpaceIndex, place};
use crate::model::{Image, Space, SymbolKind};

/// Histories of every matched name over `builds` (file names, in series order).
#[derive(Debug, Clone, Serialize)]
pub struct History {
    /// The builds' file names, in series order.
    pub builds: Vec<String>,
    /// The line size the rows are counted in.
    pub line_size: u64,
    /// Each matched symbol's rows.
    pub symbols: Vec<SymbolSeries>,
    /// Each matched struct's rows.
    pub structs: Vec<StructSeries>,
}

/// One symbol's rows over the series.
#[derive(Debug, Clone, Serialize)]
pub struct SymbolSeries {
    /// Its qualified name.
    pub name: String,
    /// One row per build.
    pub rows: Vec<SymbolRow>,
}

/// One build's facts of a symbol; every field but `build` is `None`/empty when the
/// build has no symbol of that name.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SymbolRow {
    /// Index into `History::builds`.
    pub build: usize,
    /// The build has a symbol of that name.
    pub present: bool,
    /// Its address.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub address: Option<u64>,
    /// Global data, per-CPU or code.
    pub space: Option<Space>,
    /// Per-CPU offset or address: what decides lines.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub place: Option<u64>,
    /// Its size in bytes.
    pub size: Option<u64>,
    /// Its offset within its line.
    pub offset_in_line: Option<u64>,
    /// Its offset within the 128-byte line pair.
    pub offset_in_pair: Option<u64>,
    /// The lines it spans.
    pub lines: Option<u64>,
    /// Other data objects on its lines (qualified names, sorted).
    pub co_tenants: Vec<String>,
    /// Differs from the previous build in offset in line or pair, line count,
    /// co-tenants or presence (always false for the first build).
    pub changed: bool,
}

/// One struct's rows over the series.
#[derive(Debug, Clone, Serialize)]
pub struct StructSeries {
    /// The struct's name.
    pub name: String,
    /// One row per build.
    pub rows: Vec<StructRow>,
}

/// One build's facts of a struct (its first layout of that name in model order).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StructRow {
    /// Index into `History::builds`.
    pub build: usize,
    /// The build has a struct of that name.
    pub present: bool,
    /// Its size in bytes.
    pub size: Option<u64>,
    /// Lines spanned when laid at offset 0.
    pub lines: Option<u64>,
    /// Its members, counted as pahole counts them.
    pub members: Option<usize>,
    /// Bytes of holes (pahole's "sum holes").
    pub holes: Option<u64>,
    /// Holes, counted as pahole counts them ("holes: N").
    pub hole_count: Option<usize>,
    /// Distinct layouts of the name in the build.
    pub layouts: usize,
    /// Members added, removed, moved or resized since the previous build
    /// (`+name`, `-name`, `name` for moved or resized), in member order.
    pub changed_members: Vec<String>,
    /// Differs from the previous build in size, lines or members.
    pub changed: bool,
}

/// What one build gives a history, owned, so that the build can be dropped before the
/// next one is read (a series may hold hundreds): the rows of the symbols and structs
/// the patterns select in it, and a hash of every symbol's qualified name, which tells
/// (once every build is read) whether a name selected in another build may be here
/// too without the patterns selecting it (see `missing`).
#[derive(Debug, Clone)]
pub struct BuildFacts {
    /// The build's file name.
    pub path: String,
    /// Its line size.
    pub line_size: u64,
    /// Rows by qualified name (`build` not yet set).
    symbols: BTreeMap<String, SymbolRow>,
    /// Hashes of the qualified names of all its symbols, sorted.
    names: Vec<u64>,
    structs: BTreeMap<String, StructFacts>,
}

/// A struct's first layout of its name in one build, and how many layouts it has.
#[derive(Debug, Clone)]
struct StructFacts {
    size: u64,
    lines: u64,
    holes: u64,
    hole_count: usize,
    layouts: usize,
    /// Every member at every nesting level: (name, start bit, bits).
    members: Vec<(String, u64, u64)>,
}

/// The history facts of `image`: rows of the symbols matching `symbols` (by any of
/// their names) and of the structs matching `structs`.
pub fn facts(
    image: &Image<'_>,
    symbols: Option<&GlobSet>,
    structs: Option<&GlobSet>,
) -> BuildFacts {
    let mut selected: Vec<String> = match symbols {
        Some(set) => image
            .symbols
            .iter()
            .filter(|s| s.any_name(|n| set.is_match(n)))
            .map(|s| s.qualified_name())
            .collect(),
        None => Vec::new(),
    };
    selected.sort_unstable();
    selected.dedup();
    let mut buf = String::new();
    let mut names: Vec<u64> = image
        .symbols
        .iter()
        .map(|s| str_hash(s.spell_qualified_name(&mut buf)))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut struct_facts = BTreeMap::new();
    if let Some(set) = structs {
        for s in &image.structs {
            if !s.name.is_empty() && set.is_match(s.name) && !struct_facts.contains_key(s.name) {
                struct_facts.insert(s.name.to_string(), struct_facts_of(image, s.name));
            }
        }
    }
    BuildFacts {
        path: image.path.display().to_string(),
        line_size: image.line_size,
        symbols: rows_of(image, &selected),
        names,
        structs: struct_facts,
    }
}

/// The row of each of `names` (qualified, sorted) in `image`: its first symbol of that
/// name.
fn rows_of(image: &Image<'_>, names: &[String]) -> BTreeMap<String, SymbolRow> {
    let mut rows = BTreeMap::new();
    if names.is_empty() {
        return rows;
    }
    let wanted = |q: &str| names.binary_search_by(|n| n.as_str().cmp(q)).is_ok();
    // Each space's index is built once, when a data symbol of it is first asked for.
    let mut indexes: [Option<SpaceIndex<'_, '_>>; 2] = [None, None];
    let mut buf = String::new();
    for s in &image.symbols {
        let q = s.spell_qualified_name(&mut buf);
        if !wanted(q) || rows.contains_key(q) {
            continue;
        }
        let q = q.to_string();
        let p = place(s.place, s.size, image.line_size);
        let mut co_tenants: Vec<String> = if s.kind == SymbolKind::Function {
            Vec::new()
        } else {
            let slot = usize::from(s.space == Space::Percpu);
            indexes[slot]
                .get_or_insert_with(|| SpaceIndex::data(&image.symbols, s.space))
                .co_tenants(s, image.line_size)
                .iter()
                .flat_map(|t| t.symbols.iter())
                .filter(|o| !std::ptr::eq(**o, s))
                .map(|o| o.qualified_name())
                .collect()
        };
        co_tenants.sort();
        co_tenants.dedup();
        rows.insert(
            q,
            SymbolRow {
                build: 0,
                present: true,
                address: Some(s.address),
                space: Some(s.space),
                place: Some(s.place),
                size: Some(s.size),
                offset_in_line: Some(p.offset_in_line),
                offset_in_pair: Some(p.offset_in_pair),
                lines: Some(p.lines),
                co_tenants,
                changed: false,
            },
        );
    }
    rows
}

fn str_hash(q: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(q.as_bytes());
    h.finish()
}

/// For each build, the qualified names that other builds' patterns selected and its
/// own did not, but that one of its symbols may have (a local whose unit, which a
/// pattern like `kernel/fork.c:x` matches, is unknown in this build): those rows must
/// be read from the build again (`add_rows`). Usually none.
pub fn missing(builds: &[BuildFacts]) -> Vec<(usize, Vec<String>)> {
    let all: BTreeSet<&String> = builds.iter().flat_map(|b| b.symbols.keys()).collect();
    builds
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let names: Vec<String> = all
                .iter()
                .filter(|q| !b.symbols.contains_key(q.as_str()))
                .filter(|q| b.names.binary_search(&str_hash(q)).is_ok())
                .map(|q| q.to_string())
                .collect();
            (!names.is_empty()).then_some((i, names))
        })
        .collect()
}

/// Adds to `build` the rows of `names` (sorted) read from its image (see `missing`).
pub fn add_rows(build: &mut BuildFacts, image: &Image<'_>, names: &[String]) {
    build.symbols.extend(rows_of(image, names));
}

/// The history of a series of builds from their facts (series order). Names appear
/// sorted.
pub fn assemble(builds: &[BuildFacts]) -> History {
    let line_size = builds.first().map_or(64, |b| b.line_size);
    let sym_names: BTreeSet<&String> = builds.iter().flat_map(|b| b.symbols.keys()).collect();
    let struct_names: BTreeSet<&String> = builds.iter().flat_map(|b| b.structs.keys()).collect();
    History {
        builds: builds.iter().map(|b| b.path.clone()).collect(),
        line_size,
        symbols: sym_names
            .into_iter()
            .map(|name| SymbolSeries {
                rows: mark(
                    builds
                        .iter()
                        .enumerate()
                        .map(|(build, b)| match b.symbols.get(name) {
                            Some(row) => SymbolRow {
                                build,
                                ..row.clone()
                            },
                            None => absent_row(build),
                        })
                        .collect(),
                ),
                name: name.clone(),
            })
            .collect(),
        structs: struct_names
            .into_iter()
            .map(|name| StructSeries {
                rows: struct_rows(builds, name),
                name: name.clone(),
            })
            .collect(),
    }
}

/// Builds the history of the symbols matching `symbols` and the structs matching
/// `structs` over `images` (series order), all in memory. Names appear sorted.
pub fn history(
    images: &[Image<'_>],
    symbols: Option<&GlobSet>,
    structs: Option<&GlobSet>,
) -> History {
    let mut builds: Vec<BuildFacts> = images.iter().map(|i| facts(i, symbols, structs)).collect();
    for (b, names) in missing(&builds) {
        add_rows(&mut builds[b], &images[b], &names);
    }
    assemble(&builds)
}

fn absent_row(build: usize) -> SymbolRow {
    SymbolRow {
        build,
        present: false,
        address: None,
        space: None,
        place: None,
        size: None,
        offset_in_line: None,
        offset_in_pair: None,
        lines: None,
        co_tenants: Vec::new(),
        changed: false,
    }
}

/// Sets `changed` on each row whose line facts differ from the row before.
fn mark(mut rows: Vec<SymbolRow>) -> Vec<SymbolRow> {
    for i in 1..rows.len() {
        let (a, b) = (&rows[i - 1], &rows[i]);
        rows[i].changed = a.present != b.present
            || a.offset_in_line != b.offset_in_line
            || a.offset_in_pair != b.offset_in_pair
            || a.lines != b.lines
            || a.co_tenants != b.co_tenants;
    }
    rows
}

fn struct_facts_of(image: &Image<'_>, name: &str) -> StructFacts {
    let all: Vec<_> = image.structs_named(|n| n == name).collect();
    let s = all[0].1;
    StructFacts {
        size: s.size,
        lines: place(0, s.size, image.line_size).lines,
        holes: s.sum_holes(),
        hole_count: s.holes.len(),
        layouts: all.len(),
        members: s
            .flat_members()
            .iter()
            .map(|(_, m)| {
                (
                    m.name.unwrap_or("").to_string(),
                    m.start_bit(),
                    m.end_bit() - m.start_bit(),
                )
            })
            .collect(),
    }
}

fn struct_rows(builds: &[BuildFacts], name: &str) -> Vec<StructRow> {
    let mut rows: Vec<StructRow> = Vec::new();
    let mut previous: Option<&Vec<(String, u64, u64)>> = None;
    for (build, b) in builds.iter().enumerate() {
        let Some(s) = b.structs.get(name) else {
            rows.push(StructRow {
                build,
                present: false,
                size: None,
                lines: None,
                members: None,
                holes: None,
                hole_count: None,
                layouts: 0,
                changed_members: Vec::new(),
                changed: build > 0 && previous.is_some(),
            });
            previous = None;
            continue;
        };
        let changed_members = match previous {
            Some(before) => member_changes(before, &s.members),
            None => Vec::new(),
        };
        let row = StructRow {
            build,
            present: true,
            size: Some(s.size),
            lines: Some(s.lines),
            members: Some(s.members.len()),
            holes: Some(s.holes),
            hole_count: Some(s.hole_count),
            layouts: s.layouts,
            changed_members,
            changed: false,
        };
        let changed = match rows.last() {
            None => false,
            Some(prev) => {
                !prev.present
                    || prev.size != row.size
                    || prev.lines != row.lines
                    || !row.changed_members.is_empty()
            }
        };
        rows.push(StructRow { changed, ..row });
        previous = Some(&s.members);
    }
    rows
}

/// Members (name, start bit, bits) added, removed or changed between two builds.
fn member_changes(before: &[(String, u64, u64)], after: &[(String, u64, u64)]) -> Vec<String> {
    let named = |v: &[(String, u64, u64)], n: &str| v.iter().find(|m| m.0 == n).cloned();
    let mut out = Vec::new();
    for m in after.iter().filter(|m| !m.0.is_empty()) {
        match named(before, &m.0) {
            None => out.push(format!("+{}", m.0)),
            Some(b) if b != *m => out.push(m.0.clone()),
            _ => {}
        }
    }
    for m in before.iter().filter(|m| !m.0.is_empty()) {
        if named(after, &m.0).is_none() {
            out.push(format!("-{}", m.0));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputFile;
    use crate::load::LoadOptions;
    use crate::model::Binding;

    fn load(f: &str) -> Option<InputFile> {
        let root = crate::fixtures::testdata()?;
        Some(InputFile::open(&root.join(f)).unwrap())
    }

    #[test]
    fn name_hashes_are_those_of_the_qualified_names() {
        let Some(file) = load("old.elf") else { return };
        let image = file.load(&LoadOptions::default()).unwrap();
        let mut buf = String::new();
        let mut locals = 0;
        for s in &image.symbols {
            assert_eq!(s.spell_qualified_name(&mut buf), s.qualified_name());
            assert_eq!(str_hash(&buf), str_hash(&s.qualified_name()));
            locals += usize::from(s.binding == Binding::Local && s.file.is_some());
        }
        // `nm testdata/old.elf`: 5 local symbols (lower-case types), each after its
        // `STT_FILE` name.
        assert_eq!(locals, 5);
    }

    /// A local selected by its unit path in one build whose unit the other build does
    /// not know: the other build's row is still read (by qualified name), not shown as
    /// absent.
    #[test]
    fn a_row_selected_only_in_another_build_is_read_again() {
        let Some(file) = load("old.elf") else { return };
        let a = file.load(&LoadOptions::default()).unwrap();
        let mut b = file.load(&LoadOptions::default()).unwrap();
        let i = a
            .symbols
            .iter()
            .position(|s| s.binding == Binding::Local && s.unit.is_some() && s.size > 0)
            .expect("a local with a unit");
        let (unit, name) = (a.symbols[i].unit.unwrap(), a.symbols[i].name);
        b.symbols[i].unit = None;
        let set = crate::show::globs(&[format!("{unit}:{name}")]).unwrap();
        let builds: Vec<BuildFacts> = [&a, &b]
            .iter()
            .map(|i| facts(i, Some(&set), None))
            .collect();
        let q = a.symbols[i].qualified_name();
        assert!(builds[0].symbols.contains_key(&q));
        assert!(!builds[1].symbols.contains_key(&q));
        assert_eq!(missing(&builds), vec![(1, vec![q.clone()])]);
        let h = history(&[a, b], Some(&set), None);
        assert_eq!(h.symbols.len(), 1);
        let rows = &h.symbols[0].rows;
        assert_eq!(h.symbols[0].name, q);
        assert_eq!((rows[0].present, rows[1].present), (true, true));
        assert_eq!(rows[0].address, rows[1].address);
        assert!(!rows[1].changed);
    }
}
