//! What `show --struct NAME --access` prints: for one struct type, every member with
//! the functions that write and read it through a pointer, and per cache line how many
//! functions write and read it. A static c2c for a type: it holds for every instance.

use serde::Serialize;

use crate::model::access::AccessKind;
use crate::model::typed::{Coverage, NONE, TypedAccess, TypedMap};
use crate::model::{Image, TypeKind};

/// Finds the source line (`file:line`) of a code address (`show::SourceLookup`).
pub type SourceLookup<'x> = dyn Fn(u64) -> Option<String> + 'x;

/// How many functions of each side text output lists by name (the count says the rest;
/// JSON lists them all).
pub const LISTED: usize = 4;

/// One struct type's accesses.
#[derive(Debug, Clone, Serialize)]
pub struct TypeAccessView {
    /// The type's name.
    pub name: String,
    /// Its size in bytes, from the layout when there is one.
    pub size: Option<u64>,
    /// The cache line size the lines are cut by.
    pub line_size: u64,
    /// Per line of the type (offset `index * line_size`), functions writing and reading.
    pub lines: Vec<LineAccess>,
    /// Every member touched, and every named member of the layout that is not, by offset.
    pub members: Vec<MemberAccess>,
    /// Distinct functions that touch the type.
    pub functions: usize,
    /// The whole build's coverage: how much of the code the map could type.
    pub coverage: Coverage,
}

/// One cache line of the type.
#[derive(Debug, Clone, Serialize)]
pub struct LineAccess {
    /// Line index within the type.
    pub index: u64,
    /// Distinct functions writing a member on it.
    pub writers: usize,
    /// Distinct functions only reading members on it.
    pub readers: usize,
}

/// One member (a path down to the member touched) and who touches it.
#[derive(Debug, Clone, Serialize)]
pub struct MemberAccess {
    /// The path, `ns.count`, union alternatives joined by ` | `; `(padding)` when the
    /// bytes are no member's.
    pub member: String,
    /// Offset of its first byte touched (or the layout's offset when untouched).
    pub offset: u64,
    /// Bytes spanned by its accesses (or the layout's size).
    pub size: u64,
    /// Functions writing it (stores, read-modify-writes, atomics), most instructions
    /// first.
    pub writers: Vec<FunctionAccess>,
    /// How many distinct functions write it.
    pub writer_count: usize,
    /// Functions reading it and not writing it, as `writers`.
    pub readers: Vec<FunctionAccess>,
    /// How many distinct functions only read it.
    pub reader_count: usize,
}

/// One function's accesses to one member.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionAccess {
    /// The function (a `.cold` part's parent).
    pub function: String,
    /// The strongest kind it uses: atomic, read-modify-write, write, read.
    pub kind: AccessKind,
    /// How many instructions.
    pub count: u32,
    /// The first instruction.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub insn: u64,
    /// That instruction's source line (`file:line`), when lines were read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Only in the function's `.cold` part.
    pub cold: bool,
    /// Through another CPU's per-CPU offset (`per_cpu()`), naming the per-CPU object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

/// How strong a kind is, for keeping one per function.
fn strength(kind: AccessKind) -> u8 {
    match kind {
        AccessKind::Atomic => 3,
        AccessKind::ReadWrite => 2,
        AccessKind::Write => 1,
        _ => 0,
    }
}

/// The view of type `name` in `image`'s typed map; `None` when the map names no access
/// to it and the image has no layout of it. `source` finds instructions' lines.
pub fn type_view(
    image: &Image<'_>,
    name: &str,
    source: Option<&SourceLookup<'_>>,
) -> Option<TypeAccessView> {
    let map = &image.typed;
    let accesses = map.of_type(name);
    let layout = image.structs_named(|n| n == name).map(|(_, s)| s).next();
    if accesses.is_empty() && layout.is_none() {
        return None;
    }
    let mut members: Vec<MemberAccess> = Vec::new();
    let mut start = 0;
    // Accesses are sorted by offset; one member path's may interleave with another's
    // (a union), so group by path, keeping the first offset's order.
    let mut by_member: Vec<(u32, Vec<&TypedAccess>)> = Vec::new();
    while start < accesses.len() {
        let a = &accesses[start];
        match by_member.iter_mut().find(|(m, _)| *m == a.member) {
            Some((_, list)) => list.push(a),
            None => by_member.push((a.member, vec![a])),
        }
        start += 1;
    }
    for (member, list) in &by_member {
        members.push(member_view(image, map, *member, list, source));
    }
    if let Some(layout) = layout {
        for (_, m) in layout.flat_members() {
            let Some(n) = m.name else { continue };
            if m.nested.is_some() {
                continue;
            }
            let seen = members.iter().any(|x| {
                x.offset < m.offset + m.size.max(1) && m.offset < x.offset + x.size.max(1)
            });
            if !seen {
                members.push(MemberAccess {
                    member: n.to_string(),
                    offset: m.offset,
                    size: m.size,
                    writers: Vec::new(),
                    writer_count: 0,
                    readers: Vec::new(),
                    reader_count: 0,
                });
            }
        }
    }
    // An embedded struct is also written through pointers to its own type (the lock
    // and refcount helpers out of line): its type's accesses, any instance's.
    if let Some(layout) = layout {
        for (_, m) in layout.flat_members() {
            let (Some(n), Some(inner)) = (m.name, m.ctype.aggregate.as_deref()) else {
                continue;
            };
            let kind = m.ctype.kind;
            if inner == name || !matches!(kind, TypeKind::Struct | TypeKind::Union) {
                continue;
            }
            let list: Vec<&TypedAccess> = map.of_type(inner).iter().collect();
            if list.is_empty() {
                continue;
            }
            let mut row = member_view(image, map, NONE, &list, source);
            row.member = format!("{n} (through struct {inner} *, any instance)");
            (row.offset, row.size) = (m.offset, m.size);
            members.push(row);
        }
    }
    members.sort_by(|a, b| (a.offset, &a.member).cmp(&(b.offset, &b.member)));
    let line_size = image.line_size.max(1);
    let lines = lines_of(accesses, line_size, layout.map(|l| l.size));
    let mut functions: Vec<u32> = accesses.iter().map(|a| a.function).collect();
    functions.sort_unstable();
    functions.dedup();
    Some(TypeAccessView {
        name: name.to_string(),
        size: layout.map(|l| l.size),
        line_size,
        lines,
        members,
        functions: functions.len(),
        coverage: map.coverage,
    })
}

fn member_view(
    image: &Image<'_>,
    map: &TypedMap,
    member: u32,
    list: &[&TypedAccess],
    source: Option<&SourceLookup<'_>>,
) -> MemberAccess {
    let offset = list.iter().map(|a| u64::from(a.offset)).min().unwrap_or(0);
    let end = list
        .iter()
        .map(|a| u64::from(a.offset) + u64::from(a.size.max(1)))
        .max()
        .unwrap_or(offset);
    // Per function: strongest kind, count, first instruction, cold everywhere.
    let mut per: Vec<(u32, AccessKind, u32, u64, bool, u32)> = Vec::new();
    for a in list {
        match per.iter_mut().find(|p| p.0 == a.function) {
            Some(p) => {
                if strength(a.kind) > strength(p.1) {
                    p.1 = a.kind;
                }
                p.2 += 1;
                p.3 = p.3.min(a.insn);
                p.4 &= a.cold;
                if a.remote {
                    p.5 = a.percpu;
                }
            }
            None => per.push((
                a.function,
                a.kind,
                1,
                a.insn,
                a.cold,
                if a.remote { a.percpu } else { NONE },
            )),
        }
    }
    let row = |p: &(u32, AccessKind, u32, u64, bool, u32)| FunctionAccess {
        function: image
            .symbols
            .get(p.0 as usize)
            .map(|s| s.qualified_name())
            .unwrap_or_default(),
        kind: p.1,
        count: p.2,
        insn: p.3,
        source: source.and_then(|find| find(p.3)),
        cold: p.4,
        remote: (p.5 != NONE)
            .then(|| image.symbols.get(p.5 as usize).map(|s| s.name.to_string()))
            .flatten(),
    };
    let (mut w, mut r): (Vec<_>, Vec<_>) = per.into_iter().partition(|p| strength(p.1) > 0);
    // Functions with evidence of hotness first (`WriterOrder`: the built-in known
    // list), then those not only in `.cold` parts, most instructions first, then by
    // name: the same order with any thread count.
    let hotness = crate::evidence::builtin();
    let name = |f: u32| image.symbols.get(f as usize).map_or("", |s| s.name);
    let key = |p: &(u32, AccessKind, u32, u64, bool, u32)| {
        let o = hotness.writer_order(name(p.0), name(p.0));
        (o.evidence, p.4, std::cmp::Reverse(p.2), o.name)
    };
    let order = |a: &(u32, AccessKind, u32, u64, bool, u32),
                 b: &(u32, AccessKind, u32, u64, bool, u32)| key(a).cmp(&key(b));
    w.sort_by(order);
    r.sort_by(order);
    MemberAccess {
        member: map
            .members
            .get(member as usize)
            .cloned()
            .unwrap_or_else(|| "(padding)".to_string()),
        offset,
        size: end - offset,
        writer_count: w.len(),
        reader_count: r.len(),
        writers: w.iter().map(row).collect(),
        readers: r.iter().map(row).collect(),
    }
}

/// Per line of the type: distinct writers, and distinct readers that do not write it.
fn lines_of(accesses: &[TypedAccess], line_size: u64, size: Option<u64>) -> Vec<LineAccess> {
    let last = accesses
        .iter()
        .map(|a| u64::from(a.offset) / line_size)
        .max()
        .unwrap_or(0)
        .max(size.map_or(0, |s| s.saturating_sub(1) / line_size));
    (0..=last)
        .map(|index| {
            let on: Vec<&TypedAccess> = accesses
                .iter()
                .filter(|a| u64::from(a.offset) / line_size == index)
                .collect();
            let mut writers: Vec<u32> = on
                .iter()
                .filter(|a| strength(a.kind) > 0)
                .map(|a| a.function)
                .collect();
            writers.sort_unstable();
            writers.dedup();
            let mut readers: Vec<u32> = on
                .iter()
                .map(|a| a.function)
                .filter(|f| writers.binary_search(f).is_err())
                .collect();
            readers.sort_unstable();
            readers.dedup();
            LineAccess {
                index,
                writers: writers.len(),
                readers: readers.len(),
            }
        })
        .collect()
}

/// The type-level evidence of one instance: for the bytes of an object that are members
/// of its struct type, who touches those members through any pointer (every instance
/// of the type), and for a per-CPU object, who reaches it through another CPU's offset.
#[derive(Debug, Clone, Serialize)]
pub struct InstanceAccess {
    /// The object's struct type.
    pub type_name: String,
    /// The members in the bytes asked for, by offset within the type.
    pub members: Vec<MemberAccess>,
    /// Functions reaching this per-CPU object through another CPU's offset
    /// (`per_cpu(v, cpu)`), with how; empty for other objects.
    pub remote: Vec<FunctionAccess>,
    /// How many distinct functions do.
    pub remote_count: usize,
}

/// The type-level evidence of `symbol` (an index into `image.symbols`) over its bytes
/// `[from, to)`; `None` without a typed map or when nothing is known.
pub fn instance(
    image: &Image<'_>,
    symbol: usize,
    (from, to): (u64, u64),
    source: Option<&SourceLookup<'_>>,
) -> Option<InstanceAccess> {
    let map = &image.typed;
    if !map.supported {
        return None;
    }
    let s = image.symbols.get(symbol)?;
    let layout = image
        .variable_for(s)
        .and_then(|v| v.layout)
        .map(|id| image.struct_by_id(id))?;
    let size = layout.size.max(1);
    let accesses = map.of_type(layout.name);
    // The byte range within one element (an array's elements share the type's).
    let (lo, hi) = match to.saturating_sub(from) >= size {
        true => (0, size),
        false => (from % size, (from % size) + (to - from)),
    };
    let mut by_member: Vec<(u32, Vec<&TypedAccess>)> = Vec::new();
    for a in accesses {
        let at = u64::from(a.offset);
        if at < lo || at >= hi {
            continue;
        }
        match by_member.iter_mut().find(|(m, _)| *m == a.member) {
            Some((_, list)) => list.push(a),
            None => by_member.push((a.member, vec![a])),
        }
    }
    let members: Vec<MemberAccess> = by_member
        .iter()
        .map(|(m, list)| member_view(image, map, *m, list, source))
        .collect();
    let index = u32::try_from(symbol).ok()?;
    let remote: Vec<&TypedAccess> = map
        .of_percpu(index)
        .filter(|a| a.remote && u64::from(a.offset) >= lo && u64::from(a.offset) < hi)
        .collect();
    let remote_view = member_view(image, map, NONE, &remote, source);
    let mut remote_rows = remote_view.writers;
    remote_rows.extend(remote_view.readers);
    if members.is_empty() && remote_rows.is_empty() {
        return None;
    }
    Some(InstanceAccess {
        type_name: layout.name.to_string(),
        members,
        remote: remote_rows,
        remote_count: remote_view.writer_count + remote_view.reader_count,
    })
}

/// How much of a build's code the typed access map could type (`show FILE --access`):
/// the whole build's counts by reason, and each function's, most untyped first.
#[derive(Debug, Clone, Serialize)]
pub struct CoverageView {
    /// The whole build's.
    pub coverage: Coverage,
    /// Per function with an operand: name, operands, typed.
    pub functions: Vec<FunctionCoverageRow>,
}

/// One function's coverage.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionCoverageRow {
    /// The function.
    pub function: String,
    /// Its operands through a register other than the stack's.
    pub operands: u32,
    /// Of them, typed.
    pub typed: u32,
}

/// The coverage of `image`'s typed map; `None` without one.
pub fn coverage(image: &Image<'_>) -> Option<CoverageView> {
    let map = &image.typed;
    if !map.supported {
        return None;
    }
    let mut functions: Vec<FunctionCoverageRow> = map
        .functions
        .iter()
        .map(|f| FunctionCoverageRow {
            function: image
                .symbols
                .get(f.function as usize)
                .map(|s| s.qualified_name())
                .unwrap_or_default(),
            operands: f.operands,
            typed: f.typed,
        })
        .collect();
    functions.sort_by(|a, b| {
        (b.operands - b.typed, &a.function).cmp(&(a.operands - a.typed, &b.function))
    });
    Some(CoverageView {
        coverage: map.coverage,
        functions,
    })
}
