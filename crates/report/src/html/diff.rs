//! HTML of a planned diff: the text report's sections, each item expandable to its
//! cacheline maps, old and new side by side.

use std::fmt::{self, Write};

use super::map::{Band, Block, Map, Mark, add_bitfield};
use super::{close, esc, legend, open, pre};
use crate::diff_lines::{
    build, closing, failing_line, improvements_line, item_lines, legend as columns, quiet_line,
    text_lines,
};
use crate::plan::{Item, Part, Plan, Section};
use layout_diff_core::diff::{
    MemberChange, MemberChangeKind, PlacementChange, StructChange, Tenant,
};

/// Writes the planned report as one HTML page. `predicted` is the text of a `whatif`
/// prediction, drawn as a panel before anything else (a predicted page says so first);
/// `extra` is text appended as its own section (a followed perf c2c report).
pub fn render(
    out: &mut impl Write,
    p: &Plan<'_>,
    predicted: Option<&str>,
    extra: Option<(&str, &str)>,
) -> fmt::Result {
    page_header(out, p, predicted)?;
    if p.empty {
        out.write_str("<p id=\"no-changes\">no changes</p>")?;
        return close(out);
    }
    banners(out, p)?;
    sections(out, p, extra)?;
    write!(out, "<p class=\"closing\">{}</p>", esc(&closing(p)))?;
    close(out)
}

/// The page's opening and header, and the prediction's panel when there is one.
fn page_header(out: &mut impl Write, p: &Plan<'_>, predicted: Option<&str>) -> fmt::Result {
    let r = p.report;
    open(
        out,
        &format!("layout-diff {} -> {}", r.old.file, r.new.file),
    )?;
    writeln!(
        out,
        "<header><h1>layout-diff {} &rarr; {}</h1><p class=\"meta\">{} &rarr; {}; line {} B ({}), pair {} B</p></header>",
        esc(&r.old.file),
        esc(&r.new.file),
        esc(&build(&r.old.build_id)),
        esc(&build(&r.new.build_id)),
        r.line_size,
        r.new.line_size_from,
        2 * r.line_size
    )?;
    if let Some(text) = predicted {
        writeln!(
            out,
            "<section class=\"banner predicted\" id=\"predicted\"><h2>predicted, not built</h2><pre>{}</pre></section>",
            esc(text)
        )?;
    }
    Ok(())
}

/// What comes before the sections: the `--all` note, the verdict, the summary
/// table, the notes, the legend and the button that expands every item.
fn banners(out: &mut impl Write, p: &Plan<'_>) -> fmt::Result {
    let r = p.report;
    if p.view.limit.is_none() {
        let items: usize = p.sections.iter().map(|s| s.items.len()).sum();
        write!(
            out,
            "<p class=\"banner\" id=\"all-note\">--all: every change is listed ({items} items, {} functions), with maps for the flagged ones; this page is larger than the default report, which keeps to the flagged changes.</p>",
            p.text.functions.len()
        )?;
    }
    // The verdict first, as the text report's last line says it: a reader of the page
    // sees the exit status without scrolling.
    write!(
        out,
        "<p class=\"closing\" id=\"verdict\">{}</p>",
        esc(&closing(p))
    )?;
    if let Some(l) = failing_line(r) {
        write!(out, "<p class=\"closing\" id=\"failing\">{}</p>", esc(&l))?;
    }
    p.summary_table().html(out, "summary")?;
    out.write_char('\n')?;
    write!(out, "<p class=\"note\">{}</p>", esc(columns()))?;
    if let Some(l) = improvements_line(r) {
        write!(out, "<p class=\"note\">{}</p>", esc(&l))?;
    }
    write!(out, "<p class=\"note\">{}</p>", esc(&quiet_line(r)))?;
    out.write_str(&legend(
        super::Keys::ALL,
        "the object shown",
        None,
        r.line_size,
    ))?;
    out.write_str(
        "<p class=\"noprint\"><button id=\"open-all\" type=\"button\">expand all</button></p>\n",
    )?;
    Ok(())
}

/// The sections in the text report's order, the patterns' counts and `extra`.
fn sections(out: &mut impl Write, p: &Plan<'_>, extra: Option<(&str, &str)>) -> fmt::Result {
    let r = p.report;
    let open_items = p.view.limit.is_some();
    // The text report's order (`Plan::parts`); what is counted by pattern last.
    for part in p.parts() {
        match part {
            Part::Section(s) => section(out, s, r.line_size, open_items)?,
            Part::Functions(t) => {
                out.write_str("<section class=\"sec\" data-kind=\"Text\"><h2>functions</h2>")?;
                pre(out, &text_lines(t, r.line_size))?;
                writeln!(out, "</section>")?;
            }
        }
    }
    let patterns = super::super::diff_lines::pattern_lines(p.patterns, p.view.bare);
    if !patterns.is_empty() {
        out.write_str(
            "<section class=\"sec\" data-kind=\"Patterns\"><h2>the rest, counted by pattern</h2>",
        )?;
        pre(out, &patterns)?;
        writeln!(out, "</section>")?;
    }
    if let Some((title, text)) = extra {
        writeln!(
            out,
            "<section class=\"sec\" data-kind=\"Hot\"><h2>{}</h2><pre>{}</pre></section>",
            esc(title),
            esc(text)
        )?;
    }
    Ok(())
}

/// One planned section with its items.
fn section(out: &mut impl Write, s: &Section<'_>, line_size: u64, open: bool) -> fmt::Result {
    writeln!(
        out,
        "<section class=\"sec\" data-kind=\"{:?}\"><h2>{}</h2>",
        s.kind,
        esc(s.title)
    )?;
    for item in &s.items {
        item_html(out, item, line_size, open)?;
    }
    out.write_str("</section>\n")
}

/// One item: its text as the summary line, its maps inside.
fn item_html(out: &mut impl Write, item: &Item<'_>, line_size: u64, open: bool) -> fmt::Result {
    let lines = item_lines(item);
    // With --all, maps for flagged and asked-for items only: tens of thousands of
    // unflagged moves would make the page hundreds of megabytes.
    let maps = match item {
        Item::Cause(_) | Item::Run(_) => None,
        Item::Placement { change, detail } if change.flagged || !detail.all || detail.pinned => {
            Some(placement_maps(change, line_size))
        }
        Item::Struct { change, detail, .. }
            if change.severity.category().is_some() || !detail.all || detail.pinned =>
        {
            Some(struct_maps(change, line_size))
        }
        _ => None,
    };
    let Some((old, new)) = maps else {
        write!(
            out,
            "<div class=\"run\" data-name=\"{}\">",
            esc(&item.name())
        )?;
        pre(out, &lines)?;
        return writeln!(out, "</div>");
    };
    let (first, rest) = lines.split_first().map_or(("", &[][..]), |(f, r)| (f, r));
    write!(
        out,
        "<details class=\"item\" data-name=\"{}\"{}><summary class=\"item\">{}</summary>",
        esc(&item.name()),
        if open { " open" } else { "" },
        esc(first.trim_start()),
    )?;
    if !rest.is_empty() {
        pre(out, rest)?;
    }
    out.write_str("<div class=\"sides\"><div class=\"old\"><h4>old</h4>")?;
    old.html(out)?;
    out.write_str("</div><div class=\"new\"><h4>new</h4>")?;
    new.html(out)?;
    writeln!(out, "</div></div></details>")
}

/// The object on its lines with the objects that share them, old and new.
fn placement_maps(c: &PlacementChange, line_size: u64) -> (Map, Map) {
    (
        placement_side(c, line_size, true),
        placement_side(c, line_size, false),
    )
}

/// One side of [`placement_maps`]: the object and its co-tenants on its lines.
fn placement_side(c: &PlacementChange, line_size: u64, old: bool) -> Map {
    let (place, size, at, tenants) = if old {
        (
            c.place.old,
            c.size.old,
            c.placement().old,
            c.co_tenants().old,
        )
    } else {
        (
            c.place.new,
            c.size.new,
            c.placement().new,
            c.co_tenants().new,
        )
    };
    let mut blocks: Vec<Block> = tenants
        .iter()
        .map(|t: &Tenant| {
            let mut b = Block::new(t.place(), t.size(), t.name().to_string(), "co-tenant");
            b.hot = !old && c.written_neighbours.contains(&t.name());
            b
        })
        .collect();
    let mut me = Block::new(
        place,
        size,
        c.name.to_string(),
        c.type_name.unwrap_or_default().to_string(),
    );
    me.focus = true;
    me.hot = c.write_hot_type;
    me.note = format!(
        "offset in line {:#04x}, in pair {:#04x}, {} lines",
        at.offset_in_line, at.offset_in_pair, at.lines
    );
    blocks.push(me);
    let bands = placement_bands(c, old, place);
    Map {
        caption: format!(
            "{} {} on {} line{}",
            c.name,
            if old { "before" } else { "after" },
            at.lines,
            if at.lines == 1 { "" } else { "s" }
        ),
        line_size,
        first_line: at.first_line,
        last_line: at.last_line,
        origin: 0,
        offsets: false,
        space: c.space,
        blocks,
        bands,
    }
}

/// One side's bands: the object's members with their lines, and the bytes that meet
/// on shared lines.
fn placement_bands(c: &PlacementChange, old: bool, place: u64) -> Vec<Band> {
    let lines = c
        .sharing
        .as_ref()
        .map(|sh| if old { &sh.old } else { &sh.new });
    // The bytes that meet on shared lines: the object's hot members, and the
    // members of its neighbours that are written, with who writes them.
    let written = lines.into_iter().flat_map(|l| &l.shared).flat_map(|l| {
        l.tenants.iter().enumerate().flat_map(|(i, t)| {
            t.members
                .iter()
                .filter(move |m| (i == 0 && m.hot.is_some()) || (i > 0 && m.written.is_some()))
                .map(move |m| Band {
                    start: t.place.saturating_add(m.from),
                    size: m.to.saturating_sub(m.from).max(1),
                    label: match (i, &m.written) {
                        (0, _) => format!("hot {}", m.name),
                        (_, Some(w)) => format!("{}.{} {}", t.name, m.name, w.short()),
                        _ => String::new(),
                    },
                })
        })
    });
    c.member_lines
        .iter()
        .filter_map(|m| {
            let (off, line) = if old {
                (m.offset.old?, m.line.old)
            } else {
                (m.offset.new?, m.line.new)
            };
            Some(Band {
                start: place.saturating_add(off),
                size: 1,
                label: format!(
                    ".{} line {}",
                    m.name,
                    line.map_or("-".into(), |l| l.to_string())
                ),
            })
        })
        .chain(written)
        .collect()
}

/// The struct's members laid at offset 0, old and new: every member when the report
/// carries the full layout (`--struct`), else the changed members.
fn struct_maps(s: &StructChange, line_size: u64) -> (Map, Map) {
    (
        struct_side(s, line_size, true),
        struct_side(s, line_size, false),
    )
}

/// One side of [`struct_maps`]: the members, the padding and the groups.
fn struct_side(s: &StructChange, line_size: u64, old: bool) -> Map {
    let full = !s.layout.is_empty();
    let size = if old { s.size.old } else { s.size.new };
    let blocks = struct_blocks(s, old);
    let bands = s
        .groups
        .iter()
        .filter_map(|g| {
            let (o, z) = if old {
                (g.offset.old?, g.size.old?)
            } else {
                (g.offset.new?, g.size.new?)
            };
            Some(Band {
                start: o,
                size: z,
                label: format!("group {}", g.name),
            })
        })
        .collect();
    Map {
        caption: format!(
            "{} {} {}: {size} B{}",
            s.kind,
            s.name,
            if old { "before" } else { "after" },
            if full {
                ""
            } else {
                " (changed members only; --struct NAME draws every member)"
            }
        ),
        line_size,
        first_line: 0,
        last_line: size.max(1).div_ceil(line_size) - 1,
        origin: 0,
        offsets: true,
        space: layout_diff_core::model::Space::Global,
        blocks,
        bands,
    }
}

/// One side's blocks: the members (bitfields in their storage units) and the
/// padding at the end.
fn struct_blocks(s: &StructChange, old: bool) -> Vec<Block> {
    let full = !s.layout.is_empty();
    let list = if full { &s.layout } else { &s.members };
    let size = if old { s.size.old } else { s.size.new };
    let mut blocks: Vec<Block> = Vec::new();
    for m in list {
        let Some(b) = member_block(m, old) else {
            continue;
        };
        // Zero-size members (group markers, flexible arrays) take no bytes.
        if b.size == 0 && m.bit_size.new.or(m.bit_size.old).is_none() {
            continue;
        }
        let pick = |p: &layout_diff_core::diff::Pair<Option<u64>>| if old { p.old } else { p.new };
        match (pick(&m.bit_offset), pick(&m.bit_size)) {
            (Some(bit), Some(bits)) => {
                let i = add_bitfield(
                    &mut blocks,
                    (b.start, b.size),
                    (&m.name, bit, bits),
                    &format!("{} bitfield storage unit", b.what),
                );
                // A changed bitfield marks its block.
                if b.mark != Mark::None {
                    blocks[i].mark = b.mark;
                }
            }
            _ => blocks.push(b),
        }
    }
    let padding = if old { s.padding.old } else { s.padding.new };
    if padding > 0 {
        let mut b = Block::new(
            size - padding,
            padding,
            format!("padding {padding}"),
            "padding",
        );
        b.kind = super::map::Kind::Padding;
        blocks.push(b);
    }
    blocks
}

/// A member on one side, or `None` when it is not on that side.
fn member_block(m: &MemberChange, old: bool) -> Option<Block> {
    let pick = |p: &layout_diff_core::diff::Pair<Option<u64>>| if old { p.old } else { p.new };
    let offset = pick(&m.offset)?;
    let size = pick(&m.size).unwrap_or(0);
    let ty = if old {
        m.type_name.old.clone()
    } else {
        m.type_name.new.clone()
    };
    let mut b = Block::new(offset, size, m.name.clone(), ty.unwrap_or_default());
    b.mark = match m.kinds.first() {
        None => Mark::None,
        Some(MemberChangeKind::Added) => Mark::Added,
        Some(MemberChangeKind::Removed) => Mark::Removed,
        Some(_) => Mark::Changed,
    };
    if m.line.changed() {
        b.note = format!(
            "line {} -> {}",
            m.line.old.map_or("-".into(), |l| l.to_string()),
            m.line.new.map_or("-".into(), |l| l.to_string())
        );
    }
    Some(b)
}
