//! HTML of `show --struct` and `show --symbol`: each struct with its members on its
//! lines (bitfields inside their storage unit, holes and padding, cache-line groups as
//! bands), each symbol on its lines with its co-tenants and its type laid there.

use std::fmt::{self, Write};

use super::map::{Band, Block, Kind, Map, add_bitfield};
use super::{Keys, close, esc, legend, open};
use crate::show_text::{write_struct, write_symbol};
use layout_diff_core::layout::{LaidMember, LaidStruct};
use layout_diff_core::model::{AggregateKind, Space};
use layout_diff_core::show::{Header, SymbolView};

/// Writes one page for the structs and symbols a `show` asked for.
pub fn render(
    out: &mut impl Write,
    h: &Header,
    structs: &[LaidStruct<'_, '_>],
    symbols: &[SymbolView<'_, '_>],
) -> fmt::Result {
    open(out, &format!("layout-diff show {}", h.file))?;
    writeln!(
        out,
        "<header><h1>layout-diff show {}</h1><p class=\"meta\">{} ({}); line {} B ({}), pair {} B</p></header>",
        esc(&h.file),
        esc(&h.arch),
        esc(h.build_id.as_deref().unwrap_or("no build-id")),
        h.line_size,
        h.line_size_from,
        2 * h.line_size
    )?;
    // The maps first, so that the legend lists the marks they use and no others.
    let struct_maps: Vec<Map> = structs
        .iter()
        .map(|s| {
            struct_map(
                s,
                Space::Global,
                format!("{} {} laid at offset 0", s.kind.keyword(), s.name),
            )
        })
        .collect();
    let symbol_maps = symbol_maps(symbols, h.line_size);
    let mut keys = Keys::default();
    struct_maps
        .iter()
        .chain(
            symbol_maps
                .iter()
                .flat_map(|(m, l)| std::iter::once(m).chain(l)),
        )
        .for_each(|m| keys.add(m));
    out.write_str(&legend(keys, "the object shown", None, h.line_size))?;
    struct_sections(out, structs, &struct_maps)?;
    symbol_sections(out, symbols, &symbol_maps, h.line_size)?;
    close(out)
}

/// Each symbol's map, and its type's laid at its address when it has one.
fn symbol_maps(symbols: &[SymbolView<'_, '_>], line_size: u64) -> Vec<(Map, Option<Map>)> {
    symbols
        .iter()
        .map(|v| {
            let laid = v.laid.as_ref().map(|l| {
                struct_map(
                    l,
                    v.symbol.space,
                    format!(
                        "its type, {} {}, laid at its address",
                        l.kind.keyword(),
                        l.name
                    ),
                )
            });
            (symbol_map(v, line_size), laid)
        })
        .collect()
}

/// One section per struct: its map and its pahole text.
fn struct_sections(
    out: &mut impl Write,
    structs: &[LaidStruct<'_, '_>],
    maps: &[Map],
) -> fmt::Result {
    for (s, map) in structs.iter().zip(maps) {
        write!(
            out,
            "<section class=\"sec struct\" data-name=\"{}\"><h2>{} {} ({} B, {} line{})</h2>",
            esc(s.name),
            s.kind.keyword(),
            esc(s.name),
            s.size,
            s.cachelines,
            if s.cachelines == 1 { "" } else { "s" },
        )?;
        map.html(out)?;
        let text = crate::string(|t| write_struct(t, s, true))?;
        writeln!(
            out,
            "<details class=\"item\"><summary class=\"item\">pahole text</summary><pre>{}</pre></details></section>",
            esc(&text)
        )?;
    }
    Ok(())
}

/// One section per symbol: its map, its type's and its text.
fn symbol_sections(
    out: &mut impl Write,
    symbols: &[SymbolView<'_, '_>],
    maps: &[(Map, Option<Map>)],
    line_size: u64,
) -> fmt::Result {
    for (v, (map, laid)) in symbols.iter().zip(maps) {
        write!(
            out,
            "<section class=\"sec symbol\" data-name=\"{}\"><h2>{} ({} B)</h2>",
            esc(&v.qualified_name),
            esc(&v.qualified_name),
            v.symbol.size,
        )?;
        map.html(out)?;
        if let Some(l) = laid {
            l.html(out)?;
        }
        let text = crate::string(|t| write_symbol(t, v, line_size))?;
        writeln!(
            out,
            "<details class=\"item\"><summary class=\"item\">text</summary><pre>{}</pre></details></section>",
            esc(&text)
        )?;
    }
    Ok(())
}

/// The symbol's lines with every object on them.
fn symbol_map(v: &SymbolView<'_, '_>, line_size: u64) -> Map {
    let s = v.symbol;
    let mut blocks: Vec<Block> = Vec::new();
    for lt in &v.co_tenants {
        for o in &lt.symbols {
            if !blocks
                .iter()
                .any(|b| b.start == o.place && b.name == o.qualified_name())
            {
                blocks.push(Block::new(o.place, o.size, o.qualified_name(), "co-tenant"));
            }
        }
    }
    let ty = v
        .variable
        .map(|x| x.type_name().to_string())
        .unwrap_or_default();
    let mut me = Block::new(s.place, s.size, v.qualified_name.clone(), ty);
    me.focus = true;
    me.note = format!(
        "offset in line {:#04x}, in pair {:#04x}",
        v.placement.offset_in_line, v.placement.offset_in_pair
    );
    blocks.push(me);
    Map {
        caption: format!(
            "{} on {} line{} with its co-tenants",
            v.qualified_name,
            v.placement.lines,
            if v.placement.lines == 1 { "" } else { "s" }
        ),
        line_size,
        first_line: v.placement.first_line,
        last_line: v.placement.last_line,
        origin: 0,
        offsets: false,
        space: s.space,
        blocks,
        bands: Vec::new(),
    }
}

/// A struct's members on its lines; at its base address when it has one.
fn struct_map(s: &LaidStruct<'_, '_>, space: Space, caption: String) -> Map {
    let base = s.base.unwrap_or(0);
    let mut blocks = Vec::new();
    members(&s.members, base, &mut blocks);
    for h in s.holes {
        let mut b = Block::new(base + h.offset, h.size, format!("hole {}", h.size), "hole");
        b.kind = Kind::Hole;
        blocks.push(b);
    }
    if s.padding > 0 {
        let mut b = Block::new(
            base + s.size - s.padding,
            s.padding,
            format!("padding {}", s.padding),
            "padding",
        );
        b.kind = Kind::Padding;
        blocks.push(b);
    }
    let bands = s
        .groups
        .iter()
        .map(|g| Band {
            start: base + g.offset,
            size: g.size,
            label: format!("group {} ({} B)", g.name, g.size),
        })
        .collect();
    Map {
        caption,
        line_size: s.line_size,
        first_line: base / s.line_size,
        last_line: (base + s.size.max(1) - 1) / s.line_size,
        origin: base,
        offsets: s.base.is_none(),
        space,
        blocks,
        bands,
    }
}

/// Leaf members as blocks: an anonymous struct's members inline, a union as one block,
/// bitfields sharing a storage unit as one block with their bits marked.
fn members(list: &[LaidMember<'_, '_>], base: u64, out: &mut Vec<Block>) {
    for m in list {
        // Zero-size members (cache-line group markers, flexible arrays) take no bytes:
        // groups are drawn as bands, the rest is in the pahole text.
        if m.size == 0 && m.bit_size.is_none() {
            continue;
        }
        let name = m.name.unwrap_or("");
        match (&m.members, m.kind) {
            (Some(inner), Some(AggregateKind::Struct)) if m.name.is_none() => {
                members(inner, base, out);
                if let Some(holes) = m.holes {
                    for h in holes {
                        let mut b =
                            Block::new(base + h.offset, h.size, format!("hole {}", h.size), "hole");
                        b.kind = Kind::Hole;
                        out.push(b);
                    }
                }
            }
            (Some(inner), Some(AggregateKind::Union)) if m.name.is_none() => {
                let names: Vec<&str> = inner.iter().map(|x| x.name.unwrap_or("{anon}")).collect();
                out.push(Block::new(
                    base + m.offset,
                    m.size,
                    format!("union {{{}}}", names.join(" | ")),
                    "anonymous union",
                ));
            }
            _ => match (m.bit_offset, m.bit_size) {
                (Some(bit), Some(bits)) => {
                    add_bitfield(
                        out,
                        (base + m.offset, m.size),
                        (name, bit, bits),
                        &format!("{} bitfield storage unit", m.type_name),
                    );
                }
                _ => out.push(Block::new(base + m.offset, m.size, name, m.type_name)),
            },
        }
    }
}
