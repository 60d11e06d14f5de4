//! Text output of `show`: the image summary, symbol placements with co-tenants and
//! the struct laid at the symbol's address, and the contents of one line.

use std::fmt::Write;

use prettytable::{Table, format, row};

use super::{pahole, place_str};
use crate::layout::LaidStruct;
use crate::model::Space;
use crate::show::{Header, LineView, Summary, SymbolView};

fn table() -> Table {
    let mut t = Table::new();
    t.set_format(*format::consts::FORMAT_CLEAN);
    t
}

pub fn header(h: &Header) -> String {
    let mut out = format!(
        "{}  ({}, build-id {})  line {} B ({}), pair {} B\n",
        h.file,
        h.arch,
        h.build_id.as_deref().unwrap_or("none"),
        h.line_size,
        h.line_size_from,
        2 * h.line_size
    );
    if let Some(note) = h.note {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

pub fn summary(h: &Header, s: &Summary) -> String {
    let mut out = header(h);
    let mut t = table();
    t.add_row(row!["file kind", s.file_kind]);
    t.add_row(row![
        "debug info",
        if s.types_from == crate::model::TypesFrom::Btf {
            "BTF (no DWARF)".into()
        } else if s.has_debug_info {
            format!("yes, {} units", s.units)
        } else {
            "no".into()
        }
    ]);
    t.add_row(row!["functions", r->s.functions]);
    t.add_row(row!["data objects", r->s.data_objects]);
    t.add_row(row!["per-CPU variables", r->s.percpu_variables]);
    t.add_row(row!["structs/unions", r->s.structs]);
    let vars = if s.types_from == crate::model::TypesFrom::Btf {
        "BTF variables"
    } else {
        "DWARF variables"
    };
    t.add_row(row![vars, r->s.variables]);
    if let Some(b) = s.percpu_base {
        t.add_row(row!["per-CPU base", format!("{b:#x} (__per_cpu_start)")]);
    }
    let _ = write!(out, "{t}");
    let mut sec = table();
    sec.set_titles(row!["section", r->"address", r->"size", "compressed"]);
    for r in &s.sections {
        sec.add_row(row![
            r.name,
            r->format!("{:016x}", r.address),
            r->r.size,
            if r.compressed { "yes" } else { "" }
        ]);
    }
    let _ = write!(out, "\n{sec}");
    out
}

pub fn structs(h: &Header, laid: &[LaidStruct<'_, '_>], annotate: bool) -> String {
    let mut out = header(h);
    for l in laid {
        out.push('\n');
        out.push_str(&struct_text(l, annotate));
    }
    out
}

/// One struct: its file, pahole's listing, then its cache-line groups.
pub fn struct_text(l: &LaidStruct<'_, '_>, annotate: bool) -> String {
    let mut out = String::new();
    if let Some(f) = l.decl_file {
        let _ = writeln!(out, "/* {f} */");
    }
    out.push_str(&pahole::listing(l, annotate));
    groups(&mut out, l);
    out
}

/// Cache-line groups, after the struct's block (the block itself stays pahole's).
fn groups(out: &mut String, l: &LaidStruct<'_, '_>) {
    for g in &l.groups {
        let _ = writeln!(
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
        );
    }
}

pub fn symbols(h: &Header, views: &[SymbolView<'_, '_>]) -> String {
    let mut out = header(h);
    for v in views {
        out.push('\n');
        out.push_str(&symbol_text(v, h.line_size));
    }
    out
}

/// One symbol: placement table, co-tenants, its type laid at its address.
pub fn symbol_text(v: &SymbolView<'_, '_>, line_size: u64) -> String {
    let mut out = String::new();
    symbol(&mut out, v, line_size);
    out
}

fn symbol(out: &mut String, v: &SymbolView<'_, '_>, line_size: u64) {
    let s = v.symbol;
    let p = &v.placement;
    let ty = v
        .variable
        .map(|var| format!(", {}", var.type_name()))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{} ({}, {}, {}{}, {} bytes)",
        v.qualified_name,
        format!("{:?}", s.kind).to_lowercase(),
        format!("{:?}", s.binding).to_lowercase(),
        s.section,
        ty,
        s.size
    );
    let mut t = table();
    t.add_row(row!["address", format!("{:016x}", s.address)]);
    if s.space == Space::Percpu {
        t.add_row(row!["per-CPU offset", format!("{:#x}", s.place)]);
    }
    t.add_row(row![
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
        )
    ]);
    t.add_row(row!["offset in line", format!("{:#x}", p.offset_in_line)]);
    t.add_row(row![
        "offset in pair",
        format!("{:#x} ({} B pair)", p.offset_in_pair, 2 * line_size)
    ]);
    // Straddling is spanning more lines than the size needs; a large object on the
    // fewest lines it can take does not straddle, and the row says so.
    t.add_row(row![
        "straddles",
        match (p.straddles, p.lines) {
            (true, n) => format!("yes: {n} lines, one more than its size needs"),
            (false, 1) => "no".to_string(),
            (false, n) => format!("no: {n} lines, the fewest its size allows"),
        }
    ]);
    if let Some(a) = v.variable.and_then(|var| var.alignment) {
        t.add_row(row!["DW_AT_alignment", a]);
    }
    let _ = write!(out, "{t}");
    if !v.co_tenants.is_empty() {
        let _ = writeln!(out, "co-tenants:");
        let mut c = table();
        c.set_titles(row!["line", "symbol", r->"at", r->"size"]);
        for lt in &v.co_tenants {
            if lt.symbols.is_empty() {
                c.add_row(row![place_str(s.space, lt.start), "(none)", "", ""]);
            }
            for (i, o) in lt.symbols.iter().enumerate() {
                let line = if i == 0 {
                    place_str(s.space, lt.start)
                } else {
                    String::new()
                };
                c.add_row(
                    row![line, o.qualified_name(), r->place_str(o.space, o.place), r->o.size],
                );
            }
        }
        let _ = write!(out, "{c}");
    }
    if let Some(l) = &v.laid {
        let _ = writeln!(out, "laid at {}:", place_str(s.space, s.place));
        out.push_str(&pahole::listing(l, true));
    }
}

pub fn line(h: &Header, v: &LineView<'_, '_>) -> String {
    let mut out = header(h);
    let _ = writeln!(
        out,
        "line {} .. {}",
        place_str(v.space, v.start),
        place_str(v.space, v.end - 1)
    );
    let mut t = table();
    t.set_titles(row!["symbol", "kind", r->"at", r->"size", "bytes on this line"]);
    for s in &v.symbols {
        let from = s.place.max(v.start) - v.start;
        let to = s.place_end().min(v.end) - v.start;
        t.add_row(row![
            s.qualified_name(),
            format!("{:?}", s.kind).to_lowercase(),
            r->place_str(s.space, s.place),
            r->s.size,
            format!("{from:#x}..{to:#x}")
        ]);
    }
    if v.symbols.is_empty() {
        let _ = writeln!(out, "(no symbols on this line)");
    } else {
        let _ = write!(out, "{t}");
    }
    for s in &v.sources {
        let _ = writeln!(out, "  {:016x}  {}  {}", s.address, s.function, s.location);
    }
    out
}
