//! Text output of `show`: the image summary, symbol placements with co-tenants and
//! the struct laid at the symbol's address, and the contents of one line.

use std::fmt::{self, Write};

use super::table::{Cell, Table};
use super::{pahole, place_str};
use layout_diff_core::layout::LaidStruct;
use layout_diff_core::model::Space;
use layout_diff_core::show::{Header, LineView, Summary, SymbolView};

/// A row of cells.
fn row<const N: usize>(cells: [Cell; N]) -> Vec<Cell> {
    cells.into()
}

/// `file (arch, build-id ...)  line 64 B (...), pair 128 B`, and a note when there is one.
pub fn write_header(out: &mut impl Write, h: &Header) -> fmt::Result {
    let release = h
        .kernel_version
        .as_deref()
        .map(|v| format!("Linux {v}, "))
        .unwrap_or_default();
    writeln!(
        out,
        "{}  ({}, {release}build-id {})  line {} B ({}), pair {} B",
        h.file,
        h.arch,
        h.build_id.as_deref().unwrap_or("none"),
        h.line_size,
        h.line_size_from,
        2 * h.line_size
    )?;
    if let Some(note) = h.note {
        writeln!(out, "note: {note}")?;
    }
    for note in [h.sizes, h.symbols].into_iter().flatten() {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}

/// The image summary: what the file holds, then its sections.
pub fn write_summary(out: &mut impl Write, h: &Header, s: &Summary) -> fmt::Result {
    write_header(out, h)?;
    let btf = s.types_from == layout_diff_core::model::TypesFrom::Btf;
    let mut t = Table::default();
    t.rows
        .push(row([Cell::left("file kind"), Cell::left(s.file_kind)]));
    t.rows.push(row([
        Cell::left("debug info"),
        Cell::left(if btf {
            "BTF (no DWARF)".into()
        } else if s.has_debug_info {
            format!("yes, {} units", s.units)
        } else {
            "no".into()
        }),
    ]));
    for (name, n) in [
        ("functions", s.functions),
        ("data objects", s.data_objects),
        ("per-CPU variables", s.percpu_variables),
        ("structs/unions", s.structs),
        (
            if btf {
                "BTF variables"
            } else {
                "DWARF variables"
            },
            s.variables,
        ),
    ] {
        t.rows.push(row([Cell::left(name), Cell::right(n)]));
    }
    if let Some(b) = s.percpu_base {
        t.rows.push(row([
            Cell::left("per-CPU base"),
            Cell::left(format!("{b:#x} (__per_cpu_start)")),
        ]));
    }
    t.text(out)?;
    let mut sec = Table {
        titles: row([
            Cell::left("section"),
            Cell::right("address"),
            Cell::right("size"),
            Cell::left("compressed"),
        ]),
        rows: Vec::new(),
    };
    for r in &s.sections {
        sec.rows.push(row([
            Cell::left(&r.name),
            Cell::right(format!("{:016x}", r.address)),
            Cell::right(r.size),
            Cell::left(if r.compressed { "yes" } else { "" }),
        ]));
    }
    out.write_char('\n')?;
    sec.text(out)
}

/// Every struct laid out, after the header.
pub fn write_structs(
    out: &mut impl Write,
    h: &Header,
    laid: &[LaidStruct<'_, '_>],
    annotate: bool,
) -> fmt::Result {
    write_header(out, h)?;
    for l in laid {
        out.write_char('\n')?;
        write_struct(out, l, annotate)?;
    }
    Ok(())
}

/// `write_structs` into a String.
pub fn structs(
    h: &Header,
    laid: &[LaidStruct<'_, '_>],
    annotate: bool,
) -> Result<String, fmt::Error> {
    super::string(|out| write_structs(out, h, laid, annotate))
}

/// One struct: its file, pahole's listing, then its cache-line groups.
pub fn write_struct(out: &mut impl Write, l: &LaidStruct<'_, '_>, annotate: bool) -> fmt::Result {
    if let Some(f) = l.decl_file {
        writeln!(out, "/* {f} */")?;
    }
    out.write_str(&pahole::listing(l, annotate))?;
    groups(out, l)
}

/// Cache-line groups, after the struct's block (the block itself stays pahole's).
fn groups(out: &mut impl Write, l: &LaidStruct<'_, '_>) -> fmt::Result {
    for g in &l.groups {
        writeln!(
            out,
            "/* group {}: offset {}, size {}, lines {} (from line {}){} */",
            g.name,
            g.offset,
            g.size,
            g.lines,
            g.first_line,
            if g.line_aligned {
                ", starts a line"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}

/// Every symbol asked for, after the header.
pub fn write_symbols(
    out: &mut impl Write,
    h: &Header,
    views: &[SymbolView<'_, '_>],
) -> fmt::Result {
    write_header(out, h)?;
    for v in views {
        out.write_char('\n')?;
        write_symbol(out, v, h.line_size)?;
    }
    Ok(())
}

/// `write_symbols` into a String.
pub fn symbols(h: &Header, views: &[SymbolView<'_, '_>]) -> Result<String, fmt::Error> {
    super::string(|out| write_symbols(out, h, views))
}

/// One symbol: placement table, co-tenants, its type laid at its address.
pub fn write_symbol(out: &mut impl Write, v: &SymbolView<'_, '_>, line_size: u64) -> fmt::Result {
    let s = v.symbol;
    let ty = v
        .variable
        .map(|var| format!(", {}", var.type_name()))
        .unwrap_or_default();
    writeln!(
        out,
        "{} ({}, {}, {}{}, {} bytes)",
        v.qualified_name,
        format!("{:?}", s.kind).to_lowercase(),
        format!("{:?}", s.binding).to_lowercase(),
        s.section,
        ty,
        s.size
    )?;
    placement_table(v, line_size).text(out)?;
    if !v.co_tenants.is_empty() {
        writeln!(out, "co-tenants:")?;
        co_tenants_table(v, line_size).text(out)?;
    }
    if let Some(a) = &v.accesses {
        write_accesses(out, a, "  ")?;
    }
    if let Some(t) = &v.type_level {
        write_type_level(out, t, "  ")?;
    }
    if let Some(l) = &v.laid {
        writeln!(out, "laid at {}:", place_str(s.space, s.place))?;
        out.write_str(&pahole::listing(l, true))?;
    }
    Ok(())
}

/// The symbol's address, lines, offsets, straddling and alignment, one row each.
fn placement_table(v: &SymbolView<'_, '_>, line_size: u64) -> Table {
    let s = v.symbol;
    let p = &v.placement;
    let mut t = Table::default();
    let mut add =
        |name: &str, value: String| t.rows.push(row([Cell::left(name), Cell::left(value)]));
    add("address", format!("{:016x}", s.address));
    if s.space == Space::Percpu {
        add("per-CPU offset", format!("{:#x}", s.place));
    }
    add(
        "lines",
        format!(
            "{} ({} .. {})",
            p.lines,
            place_str(s.space, p.first_line * line_size),
            // The last byte of the last line; a line at the top of the address
            // space ends at its last address, not past it.
            place_str(
                s.space,
                (p.last_line * line_size).saturating_add(line_size - 1)
            )
        ),
    );
    add("offset in line", format!("{:#x}", p.offset_in_line));
    add(
        "offset in pair",
        format!("{:#x} ({} B pair)", p.offset_in_pair, 2 * line_size),
    );
    // Straddling is spanning more lines than the size needs; a large object on the
    // fewest lines it can take does not straddle, and the row says so.
    add(
        "straddles",
        match (p.straddles, p.lines) {
            (true, n) => format!("yes: {n} lines, one more than its size needs"),
            (false, 1) => "no".to_string(),
            (false, n) => format!("no: {n} lines, the fewest its size allows"),
        },
    );
    if let Some(a) = v.variable.and_then(|var| var.alignment) {
        add("DW_AT_alignment", a.to_string());
    }
    t
}

/// The symbols on the symbol's lines, a row each; a run of empty lines is one row.
fn co_tenants_table(v: &SymbolView<'_, '_>, line_size: u64) -> Table {
    let s = v.symbol;
    let mut c = Table {
        titles: row([
            Cell::left("line"),
            Cell::left("symbol"),
            Cell::right("at"),
            Cell::right("size"),
        ]),
        rows: Vec::new(),
    };
    let mut rows = v.co_tenants.iter().peekable();
    while let Some(lt) = rows.next() {
        if lt.symbols.is_empty() {
            // An entry with nothing on it stands for every line up to the next
            // entry's (or itself, when last): one row.
            let last = rows.peek().map_or(lt.line, |n| n.line - 1).max(lt.line);
            let what = if last == lt.line {
                "(none)".to_string()
            } else {
                format!(
                    "(none, {} lines, through {})",
                    last - lt.line + 1,
                    place_str(s.space, lt.start + (last - lt.line) * line_size)
                )
            };
            c.rows.push(row([
                Cell::left(place_str(s.space, lt.start)),
                Cell::left(what),
                Cell::left(""),
                Cell::left(""),
            ]));
        }
        for (i, o) in lt.symbols.iter().enumerate() {
            let line = if i == 0 {
                place_str(s.space, lt.start)
            } else {
                String::new()
            };
            c.rows.push(row([
                Cell::left(line),
                Cell::left(o.qualified_name()),
                Cell::right(place_str(o.space, o.place)),
                Cell::right(o.size),
            ]));
        }
    }
    c
}

/// The objects on one line, and the source lines of the code there.
pub fn write_line(out: &mut impl Write, h: &Header, v: &LineView<'_, '_>) -> fmt::Result {
    write_header(out, h)?;
    writeln!(
        out,
        "line {} .. {}",
        place_str(v.space, v.start),
        place_str(v.space, v.end - 1)
    )?;
    if v.symbols.is_empty() {
        writeln!(out, "(no symbols on this line)")?;
    } else {
        let mut t = Table {
            titles: row([
                Cell::left("symbol"),
                Cell::left("kind"),
                Cell::right("at"),
                Cell::right("size"),
                Cell::left("bytes on this line"),
            ]),
            rows: Vec::new(),
        };
        for s in &v.symbols {
            let from = s.place.max(v.start) - v.start;
            let to = s.place_end().min(v.end) - v.start;
            t.rows.push(row([
                Cell::left(s.qualified_name()),
                Cell::left(format!("{:?}", s.kind).to_lowercase()),
                Cell::right(place_str(s.space, s.place)),
                Cell::right(s.size),
                Cell::left(format!("{from:#x}..{to:#x}")),
            ]));
        }
        t.text(out)?;
    }
    if !v.zero_sized.is_empty() {
        let names: Vec<String> = v.zero_sized.iter().map(|s| s.qualified_name()).collect();
        writeln!(
            out,
            "and {}, not tenants: {}",
            crate::diff_lines::count(names.len(), "zero-byte symbol", "zero-byte symbols"),
            crate::diff_lines::names(&names)
        )?;
    }
    for s in &v.sources {
        writeln!(out, "  {:016x}  {}  {}", s.address, s.function, s.location)?;
    }
    if !v.accesses.is_empty() {
        writeln!(out, "who touches the data on this line (machine code):")?;
    }
    for (name, a) in &v.accesses {
        writeln!(out, "  {name}")?;
        write_accesses(out, a, "    ")?;
    }
    for (name, t) in &v.type_level {
        writeln!(out, "  {name}")?;
        write_type_level(out, t, "    ")?;
    }
    Ok(())
}

/// Type-level evidence of an instance: each member's writers and readers through any
/// pointer to its type, and a per-CPU object's remote readers and writers.
fn write_type_level(
    out: &mut impl Write,
    t: &layout_diff_core::typed::view::InstanceAccess,
    indent: &str,
) -> fmt::Result {
    let names = |list: &[layout_diff_core::typed::view::FunctionAccess], count: usize| {
        let mut s: Vec<String> = list.iter().take(2).map(|f| f.function.clone()).collect();
        if count > s.len() {
            s.push(format!("{} more", count - s.len()));
        }
        s.join(", ")
    };
    if !t.members.is_empty() {
        writeln!(
            out,
            "{indent}type-level (every struct {}, through pointers; not this instance alone):",
            t.type_name
        )?;
    }
    for m in &t.members {
        let member = match m.member.chars().count() > 60 {
            true => format!("{}~", m.member.chars().take(59).collect::<String>()),
            false => m.member.clone(),
        };
        writeln!(out, "{indent}  +{:#x} {member}", m.offset)?;
        if m.writer_count > 0 {
            writeln!(
                out,
                "{indent}    written by {}",
                names(&m.writers, m.writer_count)
            )?;
        }
        if m.reader_count > 0 {
            writeln!(
                out,
                "{indent}    read by {}",
                names(&m.readers, m.reader_count)
            )?;
        }
    }
    if !t.remote.is_empty() {
        writeln!(
            out,
            "{indent}reached from other CPUs (per_cpu()): {}",
            names(&t.remote, t.remote_count)
        )?;
    }
    Ok(())
}

/// How many writers and readers a listing names before counting the rest.
const ACCESS_ROWS: usize = 12;

/// The writers and readers of an object, a row each: function, how, member, count.
fn write_accesses(
    out: &mut impl Write,
    a: &layout_diff_core::show::Accesses,
    indent: &str,
) -> fmt::Result {
    use layout_diff_core::model::access::AccessKind;
    if a.writers.is_empty() && a.readers.is_empty() {
        return writeln!(
            out,
            "{indent}no reference in the code: reached through pointers, or unused; the known list and perf are its evidence"
        );
    }
    if a.writers.iter().chain(&a.readers).all(|r| r.boot) {
        writeln!(
            out,
            "{indent}no reference outside boot code: reached through pointers, so the known list and perf are its evidence"
        )?;
    }
    for (what, rows) in [("written by", &a.writers), ("read by", &a.readers)] {
        if rows.is_empty() {
            writeln!(out, "{indent}{what}: none in the code")?;
            continue;
        }
        writeln!(out, "{indent}{what}:")?;
        for r in rows.iter().take(ACCESS_ROWS) {
            let how = match r.kind {
                AccessKind::Read => "read",
                AccessKind::Write => "store",
                AccessKind::ReadWrite => "read-modify-write",
                AccessKind::Atomic => "atomic",
                AccessKind::Address { writes: true, .. } => {
                    "address passed to a writer (member not known)"
                }
                AccessKind::Address { .. } => "address passed on",
            };
            let member = r
                .member
                .as_deref()
                .map_or_else(String::new, |m| format!(" {m}"));
            let times = if r.count > 1 {
                format!(" x{}", r.count)
            } else {
                String::new()
            };
            let boot = if r.boot { " (boot only)" } else { "" };
            let source = r
                .source
                .as_deref()
                .map_or_else(String::new, |l| format!("  {l}"));
            writeln!(
                out,
                "{indent}  {}  +{:#x}{member}  {how}{times}{boot}{source}",
                r.function, r.offset
            )?;
        }
        if rows.len() > ACCESS_ROWS {
            writeln!(
                out,
                "{indent}  ... (+{} more; --format json lists all)",
                rows.len() - ACCESS_ROWS
            )?;
        }
    }
    Ok(())
}
