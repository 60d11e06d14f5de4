//! A layout history across a series of builds: for each symbol or struct asked for, one
//! row per build with its placement (or size and members), and whether its lines
//! changed since the build before. This is the view a bisection needs.

use globset::GlobSet;
use serde::Serialize;

use crate::layout::{SpaceIndex, place};
use crate::model::{Image, Space, SymbolKind};

/// Histories of every matched name over `builds` (file names, in series order).
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub builds: Vec<String>,
    pub line_size: u64,
    pub symbols: Vec<SymbolSeries>,
    pub structs: Vec<StructSeries>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SymbolSeries {
    pub name: String,
    pub rows: Vec<SymbolRow>,
}

/// One build's facts of a symbol; every field but `build` is `None`/empty when the
/// build has no symbol of that name.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SymbolRow {
    /// Index into `History::builds`.
    pub build: usize,
    pub present: bool,
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub address: Option<u64>,
    pub space: Option<Space>,
    /// Per-CPU offset or address: what decides lines.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub place: Option<u64>,
    pub size: Option<u64>,
    pub offset_in_line: Option<u64>,
    pub offset_in_pair: Option<u64>,
    pub lines: Option<u64>,
    /// Other data objects on its lines (qualified names, sorted).
    pub co_tenants: Vec<String>,
    /// Differs from the previous build in offset in line or pair, line count,
    /// co-tenants or presence (always false for the first build).
    pub changed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct StructSeries {
    pub name: String,
    pub rows: Vec<StructRow>,
}

/// One build's facts of a struct (its first layout of that name in model order).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StructRow {
    pub build: usize,
    pub present: bool,
    pub size: Option<u64>,
    /// Lines spanned when laid at offset 0.
    pub lines: Option<u64>,
    pub members: Option<usize>,
    pub holes: Option<u64>,
    /// Distinct layouts of the name in the build.
    pub layouts: usize,
    /// Members added, removed, moved or resized since the previous build
    /// (`+name`, `-name`, `name` for moved or resized), in member order.
    pub changed_members: Vec<String>,
    /// Differs from the previous build in size, lines or members.
    pub changed: bool,
}

/// Builds the history of the symbols matching `symbols` and the structs matching
/// `structs` over `images` (series order). Names appear sorted.
pub fn history(
    images: &[Image<'_>],
    symbols: Option<&GlobSet>,
    structs: Option<&GlobSet>,
) -> History {
    let line_size = images.first().map_or(64, |i| i.line_size);
    let mut sym_names: Vec<String> = Vec::new();
    let mut struct_names: Vec<String> = Vec::new();
    for image in images {
        if let Some(set) = symbols {
            sym_names.extend(
                image
                    .symbols
                    .iter()
                    .filter(|s| s.any_name(|n| set.is_match(n)))
                    .map(|s| s.qualified_name()),
            );
        }
        if let Some(set) = structs {
            struct_names.extend(
                image
                    .structs
                    .iter()
                    .filter(|s| !s.name.is_empty() && set.is_match(s.name))
                    .map(|s| s.name.to_string()),
            );
        }
    }
    sym_names.sort();
    sym_names.dedup();
    struct_names.sort();
    struct_names.dedup();
    History {
        builds: images
            .iter()
            .map(|i| i.path.display().to_string())
            .collect(),
        line_size,
        symbols: sym_names
            .into_iter()
            .map(|name| SymbolSeries {
                rows: mark(
                    images
                        .iter()
                        .enumerate()
                        .map(|(b, img)| symbol_row(img, b, &name))
                        .collect(),
                ),
                name,
            })
            .collect(),
        structs: struct_names
            .into_iter()
            .map(|name| StructSeries {
                rows: struct_rows(images, &name),
                name,
            })
            .collect(),
    }
}

fn symbol_row(image: &Image<'_>, build: usize, name: &str) -> SymbolRow {
    let Some(s) = image.symbols.iter().find(|s| s.qualified_name() == name) else {
        return SymbolRow {
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
        };
    };
    let p = place(s.place, s.size, image.line_size);
    let mut co_tenants: Vec<String> = if s.kind == SymbolKind::Function {
        Vec::new()
    } else {
        SpaceIndex::data(&image.symbols, s.space)
            .co_tenants(s, image.line_size)
            .iter()
            .flat_map(|t| t.symbols.iter())
            .filter(|o| !std::ptr::eq(**o, s))
            .map(|o| o.qualified_name())
            .collect()
    };
    co_tenants.sort();
    co_tenants.dedup();
    SymbolRow {
        build,
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

fn struct_rows(images: &[Image<'_>], name: &str) -> Vec<StructRow> {
    let mut rows = Vec::new();
    let mut previous: Option<Vec<(String, u64, u64)>> = None;
    for (build, image) in images.iter().enumerate() {
        let all: Vec<_> = image.structs_named(|n| n == name).collect();
        let Some((_, s)) = all.first() else {
            rows.push(StructRow {
                build,
                present: false,
                size: None,
                lines: None,
                members: None,
                holes: None,
                layouts: 0,
                changed_members: Vec::new(),
                changed: build > 0 && previous.is_some(),
            });
            previous = None;
            continue;
        };
        let members: Vec<(String, u64, u64)> = s
            .flat_members()
            .iter()
            .map(|(_, m)| {
                (
                    m.name.unwrap_or("").to_string(),
                    m.start_bit(),
                    m.end_bit() - m.start_bit(),
                )
            })
            .collect();
        let changed_members = match &previous {
            Some(before) => member_changes(before, &members),
            None => Vec::new(),
        };
        let lines = place(0, s.size, image.line_size).lines;
        let row = StructRow {
            build,
            present: true,
            size: Some(s.size),
            lines: Some(lines),
            members: Some(members.len()),
            holes: Some(s.sum_holes()),
            layouts: all.len(),
            changed_members,
            changed: false,
        };
        let changed = match rows.last() {
            None => false,
            Some(prev) => {
                let prev: &StructRow = prev;
                !prev.present
                    || prev.size != row.size
                    || prev.lines != row.lines
                    || !row.changed_members.is_empty()
            }
        };
        rows.push(StructRow { changed, ..row });
        previous = Some(members);
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
