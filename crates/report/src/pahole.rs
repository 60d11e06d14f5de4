//! The pahole-style struct listing kernel developers already read: members with
//! offsets and sizes, holes, and cache line boundary markers, plus the summary lines.

use std::fmt::{self, Write};

use layout_diff_core::layout::LaidStruct;
use layout_diff_core::model::{AggregateKind, CType, Member, StructLayout, TypeGaps, TypeKind};

/// `show --struct`: the listing exactly as `pahole -F dwarf -C NAME` prints it (the
/// struct laid at offset 0). With `annotate`, members that straddle a line boundary
/// and the struct's own forced alignment are marked too. Laid at an instance's
/// address (`show --symbol`), boundaries fall where that instance's lines break.
pub fn listing(laid: &LaidStruct<'_, '_>, annotate: bool) -> String {
    let mut out = String::new();
    // A `String` takes any text: writing to it cannot fail.
    if write_listing(&mut out, laid, annotate).is_err() {
        out.clear();
    }
    out
}

/// `listing`, written to `out`.
pub fn write_listing(
    out: &mut impl Write,
    laid: &LaidStruct<'_, '_>,
    annotate: bool,
) -> fmt::Result {
    let l = laid.layout;
    let mut p = Listing {
        out,
        line: laid.line_size.max(1),
        cacheline: 0,
        annotate,
        base: laid.base,
        blank_pending: false,
    };
    if l.typedef {
        writeln!(p.out, "typedef {} {{", l.kind.keyword())?;
    } else {
        writeln!(p.out, "{} {} {{", l.kind.keyword(), l.name)?;
    }
    match l.kind {
        AggregateKind::Union => p.union_body(l, 1)?,
        AggregateKind::Struct => {
            p.struct_body(l, 1, false, Some((laid.cachelines, laid.last_cacheline)))?
        }
    }
    write!(p.out, "}}{}", closing_attributes(l))?;
    if l.typedef {
        write!(p.out, " {}", l.name)?;
    }
    writeln!(p.out, ";")
}

/// `__attribute__((__packed__))` or `((__aligned__(N)))` after a struct's brace (none
/// after a union's).
fn closing_attributes(l: &StructLayout<'_>) -> String {
    if l.kind != AggregateKind::Struct {
        String::new()
    } else if l.packed {
        " __attribute__((__packed__))".into()
    } else if let Some(a) = l.explicit_alignment {
        format!(" __attribute__((__aligned__({a})))")
    } else {
        String::new()
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `N unit` or `N units`.
fn count(n: u64, unit: &str) -> String {
    format!("{n} {unit}{}", plural(n))
}

/// The note pahole 1.32 prints after a member whose type is a struct with gaps or
/// flexible arrays (`None` when there is nothing to note): the parts in a fixed
/// order, joined by commas.
fn gaps_note(g: &TypeGaps) -> Option<String> {
    if g.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    if g.flexible {
        parts.push("a flexible array".into());
    }
    if g.embedded_flexible {
        parts.push("embedded flexible array(s)".into());
    }
    if g.padding > 0 {
        parts.push(format!("{} of padding", count(g.padding.into(), "byte")));
    }
    if g.bit_padding > 0 {
        parts.push(format!("{} of padding", count(g.bit_padding.into(), "bit")));
    }
    if g.holes > 0 {
        parts.push(count(g.holes.into(), "hole"));
    }
    if g.bit_holes > 0 {
        parts.push(count(g.bit_holes.into(), "bit hole"));
    }
    Some(format!("XXX last struct has {}", parts.join(", ")))
}

/// Printing state of one listing: the cache line last announced, as pahole keeps it.
struct Listing<'w, W: Write> {
    out: &'w mut W,
    line: u64,
    cacheline: u64,
    annotate: bool,
    /// Address (or per-CPU offset) the struct is laid at, if not offset 0.
    base: Option<u64>,
    /// A run of comments is open: an empty line goes before the next member.
    blank_pending: bool,
}

/// Running sums of one struct level, for its summary lines.
#[derive(Default, Debug, PartialEq, Eq)]
struct Sums {
    bytes: u64,
    bits: u64,
    holes: u64,
    bit_holes: u64,
    forced: u64,
    forced_holes: u64,
    sum_forced_holes: u64,
    /// Over the members whose type is a struct: how many have tail padding and its
    /// sum, ...
    paddings: u64,
    sum_paddings: u64,
    /// ... bit padding, ...
    bit_paddings: u64,
    sum_bit_paddings: u64,
    /// ... holes, ...
    with_holes: u64,
    total_holes: u64,
    /// ... bit holes, ...
    with_bit_holes: u64,
    total_bit_holes: u64,
    /// ... end in a flexible array, or hold one inside.
    flexible: u64,
    embedded_flexible: u64,
}

impl Sums {
    /// Counts a member whose type's gaps are `g`.
    fn add_type_gaps(&mut self, g: &TypeGaps) {
        let (padding, bit_padding) = (u64::from(g.padding), u64::from(g.bit_padding));
        if padding > 0 {
            self.paddings += 1;
            self.sum_paddings += padding;
        }
        if bit_padding > 0 {
            self.bit_paddings += 1;
            self.sum_bit_paddings += bit_padding;
        }
        if g.holes > 0 {
            self.with_holes += 1;
            self.total_holes += u64::from(g.holes);
        }
        if g.bit_holes > 0 {
            self.with_bit_holes += 1;
            self.total_bit_holes += u64::from(g.bit_holes);
        }
        self.flexible += u64::from(g.flexible);
        self.embedded_flexible += u64::from(g.embedded_flexible);
    }

    /// pahole's `member types with ...` summary line, when a member's type has holes,
    /// bit holes or bit padding.
    fn member_types_line(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.with_holes > 0 {
            parts.push(format!(
                "holes: {}, total: {}",
                self.with_holes, self.total_holes
            ));
        }
        if self.with_bit_holes > 0 {
            parts.push(format!(
                "bit holes: {}, total: {}",
                self.with_bit_holes, self.total_bit_holes
            ));
        }
        if self.bit_paddings > 0 {
            parts.push(format!(
                "bit paddings: {}, total: {} bit{}",
                self.bit_paddings,
                self.sum_bit_paddings,
                if self.sum_bit_paddings > 1 { "s" } else { "" }
            ));
        }
        (!parts.is_empty()).then(|| format!("member types with {}", parts.join(", ")))
    }

    /// pahole's `flexible array members: end: N, middle: N` summary line.
    fn flexible_line(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.flexible > 0 {
            parts.push(format!("end: {}", self.flexible));
        }
        if self.embedded_flexible > 0 {
            parts.push(format!("middle: {}", self.embedded_flexible));
        }
        (!parts.is_empty()).then(|| format!("flexible array members: {}", parts.join(", ")))
    }
}

impl<W: Write> Listing<'_, W> {
    /// A comment line; the first of a run is preceded by an empty line and the run
    /// is closed by one before the next member, as pahole spaces them.
    fn comment(&mut self, depth: usize, text: &str) -> fmt::Result {
        if !self.blank_pending {
            writeln!(self.out)?;
            self.blank_pending = true;
        }
        writeln!(self.out, "{}/* {text} */", "\t".repeat(depth))
    }

    /// Line of a struct offset, counted from the line holding the struct's first byte.
    fn line_of(&self, offset: u64) -> u64 {
        let base = self.base.unwrap_or(0);
        base.saturating_add(offset) / self.line - base / self.line
    }

    fn boundary(&mut self, offset: u64, depth: usize) -> fmt::Result {
        let line = self.line_of(offset);
        if line <= self.cacheline {
            return Ok(());
        }
        self.cacheline = line;
        let indent = "\t".repeat(depth);
        if let Some(base) = self.base {
            let at = (base / self.line + line) * self.line;
            return writeln!(
                self.out,
                "{indent}/* --- cacheline {line} boundary at {at:#x} (struct offset {}) --- */",
                at - base
            );
        }
        let pos = offset % self.line;
        let at = offset - pos;
        if pos == 0 {
            writeln!(
                self.out,
                "{indent}/* --- cacheline {line} boundary ({at} bytes) --- */"
            )
        } else {
            writeln!(
                self.out,
                "{indent}/* --- cacheline {line} boundary ({at} bytes) was {} ago --- */",
                count(pos, "byte")
            )
        }
    }

    fn union_body(&mut self, l: &StructLayout<'_>, depth: usize) -> fmt::Result {
        let initial = self.cacheline;
        let n = l.members.len();
        for (k, m) in l.members.iter().enumerate() {
            self.member(m, depth, true, k == n - 1, n == 1)?;
            self.cacheline = initial;
        }
        Ok(())
    }

    fn struct_body(
        &mut self,
        l: &StructLayout<'_>,
        depth: usize,
        in_union: bool,
        stats: Option<(u64, u64)>,
    ) -> fmt::Result {
        let mut sums = Sums::default();
        if l.pre_bit_hole > 0 {
            self.comment(
                depth,
                &format!("XXX {} hole, try to pack", count(l.pre_bit_hole, "bit")),
            )?;
            sums.bit_holes += l.pre_bit_hole;
        }
        if l.pre_hole > 0 {
            self.comment(
                depth,
                &format!("XXX {} hole, try to pack", count(l.pre_hole, "byte")),
            )?;
            sums.holes += l.pre_hole;
        }
        let n = l.members.len();
        let mut last: Option<&Member<'_>> = None;
        let mut last_size = 0u64;
        for (k, pos) in l.members.iter().enumerate() {
            if pos.alignment.is_some() {
                sums.forced += 1;
                let hole = last.map_or(l.pre_hole, |m| u64::from(m.hole));
                if hole != 0 {
                    sums.forced_holes += 1;
                    sums.sum_forced_holes += hole;
                }
            }
            if let Some(last) = last.filter(|_| last_size != 0) {
                self.between(last, pos, last_size, depth)?;
            }
            self.member(pos, depth, in_union, k == n - 1, n == 1)?;
            if let Some(note) = gaps_note(&pos.type_gaps) {
                sums.add_type_gaps(&pos.type_gaps);
                self.comment(depth, &note)?;
            }
            if pos.bit_hole > 0 {
                sums.bit_holes += u64::from(pos.bit_hole);
                self.comment(
                    depth,
                    &format!(
                        "XXX {} hole, try to pack",
                        count(pos.bit_hole.into(), "bit")
                    ),
                )?;
            }
            if pos.hole > 0 {
                sums.holes += u64::from(pos.hole);
                self.comment(
                    depth,
                    &format!("XXX {} hole, try to pack", count(pos.hole.into(), "byte")),
                )?;
            }
            match pos.bit_size {
                Some(b) => sums.bits += u64::from(b),
                None => sums.bytes = sums.bytes.saturating_add(pos.size),
            }
            let moved = last.is_none_or(|l| l.offset != pos.offset);
            if moved
                || last_size == 0
                || (last.is_some_and(|l| !l.is_bitfield()) && pos.is_bitfield())
            {
                last_size = pos.size;
            }
            last = Some(pos);
        }
        if let Some(last) = last {
            self.force_padding(l, last, depth)?;
        }
        if let Some((cachelines, last)) = stats {
            self.stats(l, depth, cachelines, last, &sums)?;
        }
        Ok(())
    }

    /// pahole spells out tail padding larger than a pointer as unnamed bitfields of
    /// the last member's type, when that type's size is a power of two and the struct
    /// has no alignment of its own (it assumes 64-bit pointers here).
    fn force_padding(
        &mut self,
        l: &StructLayout<'_>,
        last: &Member<'_>,
        depth: usize,
    ) -> fmt::Result {
        const POINTER: u64 = 8;
        let size = last.size;
        if l.padding == 0
            || l.explicit_alignment.is_some()
            || !size.is_power_of_two()
            || l.padding <= POINTER
        {
            return Ok(());
        }
        let indent = "\t".repeat(depth);
        writeln!(self.out, "\n{indent}/* Force padding: */")?;
        let before = match last.ctype.pahole_before().strip_suffix(' ') {
            Some(ty) => format!("{ty:<26} "),
            None => last.ctype.pahole_before().to_string(),
        };
        let mut added = 0;
        // A corrupt input can claim gigabytes of padding: pahole would print a line per
        // unit; after 4096 lines the rest is counted instead.
        let mut lines = 0;
        while added < l.padding {
            lines += 1;
            if lines > 4096 {
                let rest = (l.padding - added).div_ceil(size);
                writeln!(self.out, "{indent}/* ... {rest} more like it */")?;
                break;
            }
            writeln!(
                self.out,
                "{indent}{before}{}:{};",
                last.ctype.pahole_after(),
                size * 8
            )?;
            added += size;
        }
        Ok(())
    }

    /// What pahole prints between two members: an explicit `:N` bit hole before a
    /// bitfield, and where a bitfield shares storage with its neighbours.
    fn between(
        &mut self,
        last: &Member<'_>,
        pos: &Member<'_>,
        last_size: u64,
        depth: usize,
    ) -> fmt::Result {
        let indent = "\t".repeat(depth);
        if last.bit_hole != 0 && pos.is_bitfield() {
            let mut bits = last.bit_hole;
            if last.offset != pos.offset {
                writeln!(
                    self.out,
                    "\n{indent}/* Force alignment to the next boundary: */"
                )?;
                bits = 0;
            }
            let before = match pos.ctype.pahole_before().strip_suffix(' ') {
                Some(ty) => format!("{ty:<26} "),
                None => pos.ctype.pahole_before().to_string(),
            };
            writeln!(
                self.out,
                "{indent}{before}{}:{bits};",
                pos.ctype.pahole_after()
            )?;
        }
        if pos.offset < last.offset
            || (pos.offset == last.offset && !last.is_bitfield() && pos.is_bitfield())
        {
            self.comment(depth, "Bitfield combined with previous fields")?;
        } else {
            let ahead = pos.offset.saturating_sub(last.offset);
            if ahead > 0 && ahead < last_size {
                self.comment(depth, "Bitfield combined with next fields")?;
            }
        }
        Ok(())
    }

    /// An anonymous struct or union expanded inline: `struct {`, its members, and the
    /// closing line `decl_tail` follows (the name, dimensions, attributes). A const
    /// anonymous struct keeps its summary in pahole's text.
    fn inline_aggregate(
        &mut self,
        n: &StructLayout<'_>,
        m: &Member<'_>,
        depth: usize,
        in_union: bool,
        qualifier: &str,
        decl_tail: &str,
    ) -> fmt::Result {
        let stats = (!qualifier.is_empty()).then(|| {
            (
                n.size.div_ceil(self.line),
                m.offset.saturating_add(n.size) % self.line,
            )
        });
        let indent = "\t".repeat(depth);
        writeln!(self.out, "{indent}{qualifier}{} {{", n.kind.keyword())?;
        match n.kind {
            AggregateKind::Union => self.union_body(n, depth + 1)?,
            AggregateKind::Struct => self.struct_body(n, depth + 1, in_union, stats)?,
        }
        let decl = format!("{indent}}}{}{decl_tail}", closing_attributes(n));
        writeln!(
            self.out,
            "{}/* {:5} {:5} */",
            pad(&decl, 57 + 8 * (depth - 1)),
            m.offset,
            m.size
        )
    }

    fn member(
        &mut self,
        m: &Member<'_>,
        depth: usize,
        in_union: bool,
        last: bool,
        single: bool,
    ) -> fmt::Result {
        if self.blank_pending {
            writeln!(self.out)?;
            self.blank_pending = false;
        }
        self.boundary(m.offset, depth)?;
        let indent = "\t".repeat(depth);
        let aligned = m
            .alignment
            .map(|a| format!(" __attribute__((__aligned__({a})))"))
            .unwrap_or_default();
        if let Some(n) = &m.pointee {
            let tail = format!(" * {}{aligned};", m.name.unwrap_or(""));
            return self.inline_aggregate(n, m, depth, in_union, "", &tail);
        }
        let flexible = last && !single && !in_union;
        if let Some(n) = &m.nested {
            return self.nested_member(n, m, depth, in_union, flexible, &aligned);
        }
        let c = &m.ctype;
        let decl = self.declaration(m, &indent, &aligned, flexible)?;
        let pos = match m.bit_offset {
            Some(b) => format!("/* {:5}:{:2} {:2} */", m.offset, b, m.size),
            None => format!("/* {:5} {:5} */", m.offset, m.size),
        };
        let straddle = self.straddle(m);
        writeln!(
            self.out,
            "{}{pos}{straddle}",
            pad(&decl, 57 + 8 * (depth - 1))
        )?;
        if unexpanded(c) {
            writeln!(
                self.out,
                "{indent}/* XXX layout-diff: members not listed: this anonymous type is \
                 nested in itself or past the loader's bounds (a malformed type table) */"
            )?;
        }
        Ok(())
    }

    /// A member of an anonymous struct or union type: the type's members inline,
    /// then the member's name, dimensions and alignment.
    fn nested_member(
        &mut self,
        n: &StructLayout<'_>,
        m: &Member<'_>,
        depth: usize,
        in_union: bool,
        flexible: bool,
        aligned: &str,
    ) -> fmt::Result {
        let qualifier = if m.ctype.is_const && m.ctype.dims.is_empty() {
            "const "
        } else {
            ""
        };
        let mut tail = String::new();
        if let Some(name) = m.name {
            tail.push(' ');
            tail.push_str(name);
        }
        for (i, d) in m.ctype.dims.iter().enumerate() {
            if i == 0 && *d == 0 && flexible {
                tail.push_str("[]");
            } else {
                tail.push_str(&format!("[{d}]"));
            }
        }
        tail.push_str(aligned);
        tail.push(';');
        self.inline_aggregate(n, m, depth, in_union, qualifier, &tail)
    }

    /// A member's declaration, up to its `;`: its type around its name, its bits and
    /// its alignment (an anonymous enum's enumerators are written first, inline).
    /// `flexible`: a last array of unknown size, spelled `[]`.
    fn declaration(
        &mut self,
        m: &Member<'_>,
        indent: &str,
        aligned: &str,
        flexible: bool,
    ) -> Result<String, fmt::Error> {
        let c = &m.ctype;
        let after = match c.pahole_after_flexible() {
            Some(flex) if flexible => flex,
            _ => c.pahole_after(),
        };
        let before = match c.pahole_before().strip_suffix(' ') {
            Some(ty) => format!("{ty:<26} "),
            None => c.pahole_before().to_string(),
        };
        let mut decl = match c.anonymous_enum() {
            // pahole lists an anonymous enum's enumerators inline.
            Some((values, size)) => {
                let width = values.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
                writeln!(self.out, "{indent}enum {{")?;
                for (name, v) in values {
                    writeln!(self.out, "{indent}\t{name:<width$} = {v},")?;
                }
                let packed = if *size != 4 {
                    " __attribute__((__packed__))"
                } else {
                    ""
                };
                format!("{indent}}}{packed} {}", m.name.unwrap_or(""))
            }
            None => format!("{indent}{before}{}{after}", m.name.unwrap_or("")),
        };
        if let Some(bits) = m.bit_size {
            decl.push_str(&format!(":{bits}"));
        }
        decl.push_str(aligned);
        decl.push(';');
        Ok(decl)
    }

    /// With `annotate`, the note that a member straddles two lines.
    fn straddle(&self, m: &Member<'_>) -> String {
        let first_line = self.line_of(m.offset);
        let last_line = self.line_of(m.offset.saturating_add(m.size.max(1) - 1));
        if self.annotate && first_line != last_line && m.size <= self.line && m.bit_size.is_none() {
            format!(" /* straddles lines {first_line}-{last_line} */")
        } else {
            String::new()
        }
    }

    fn stats(
        &mut self,
        l: &StructLayout<'_>,
        depth: usize,
        cachelines: u64,
        last: u64,
        s: &Sums,
    ) -> fmt::Result {
        let t = "\t".repeat(depth);
        let out = &mut *self.out;
        writeln!(
            out,
            "\n{t}/* size: {}, cachelines: {}, members: {} */",
            l.size,
            cachelines,
            l.members.len()
        )?;
        sum_lines(&mut *out, &t, l, s)?;
        if l.padding > 0 {
            writeln!(out, "{t}/* padding: {} */", l.padding)?;
        }
        if let Some(line) = s.member_types_line() {
            writeln!(out, "{t}/* {line} */")?;
        }
        if s.paddings > 0 {
            writeln!(
                out,
                "{t}/* paddings: {}, sum paddings: {} */",
                s.paddings, s.sum_paddings
            )?;
        }
        if l.bit_padding > 0 {
            writeln!(out, "{t}/* bit_padding: {} bits */", l.bit_padding)?;
        }
        if s.forced > 0 {
            write!(out, "{t}/* forced alignments: {}", s.forced)?;
            if s.forced_holes > 0 {
                write!(
                    out,
                    ", forced holes: {}, sum forced holes: {}",
                    s.forced_holes, s.sum_forced_holes
                )?;
            }
            writeln!(out, " */")?;
        }
        if let Some(line) = s.flexible_line() {
            writeln!(out, "{t}/* {line} */")?;
        }
        if self.annotate
            && let Some(a) = l.explicit_alignment
        {
            writeln!(out, "{t}/* forced alignment: {a} */")?;
        }
        if last != 0 {
            writeln!(out, "{t}/* last cacheline: {last} bytes */")?;
        }
        Ok(())
    }
}

/// A struct level's sums of member bytes and holes, and of bitfield bits and bit
/// holes, when it has holes of either kind.
fn sum_lines(out: &mut impl Write, t: &str, l: &StructLayout<'_>, s: &Sums) -> fmt::Result {
    if s.holes == 0 && s.bit_holes == 0 {
        return Ok(());
    }
    if s.bytes > 0 {
        write!(out, "{t}/* sum members: {}", s.bytes)?;
        if s.holes > 0 {
            let count =
                u64::from(l.pre_hole > 0) + l.members.iter().filter(|m| m.hole > 0).count() as u64;
            write!(out, ", holes: {count}, sum holes: {}", s.holes)?;
        }
        writeln!(out, " */")?;
    }
    if s.bits > 0 {
        write!(out, "{t}/* sum bitfield members: {} bits", s.bits)?;
        if s.bit_holes > 0 {
            let count = u64::from(l.pre_bit_hole > 0)
                + l.members.iter().filter(|m| m.bit_hole > 0).count() as u64;
            write!(
                out,
                ", bit holes: {count}, sum bit holes: {} bits",
                s.bit_holes
            )?;
        } else {
            write!(out, " ({} bytes)", s.bits / 8)?;
        }
        writeln!(out, " */")?;
    }
    Ok(())
}

/// Splits a C type spelling around a member name: `char[16]` + `comm` -> (`char`,
/// `comm[16]`); `void (*[4])(int)` + `fn` -> (`void`, `(*fn[4])(int)`).
pub(crate) fn split_declarator(ty: &str, name: &str) -> (String, String) {
    if let Some(i) = ty.find("(*") {
        // The name goes after the pointer's stars, before its dimensions or `)`.
        let rest = &ty[i + 1..];
        let stars = rest.len() - rest.trim_start_matches('*').len();
        let at = i + 1 + stars;
        return (
            ty[..i].trim_end().to_string(),
            format!("{}{name}{}", &ty[i..at], &ty[at..]),
        );
    }
    if let Some(i) = ty.find('[') {
        return (ty[..i].to_string(), format!("{name}{}", &ty[i..]));
    }
    (ty.to_string(), name.to_string())
}

/// Whether a member not laid inline has an anonymous struct or union type by value
/// (or an array of one), which pahole always expands: only the loader's bounds on a
/// malformed table leave one unexpanded (`struct {...} name;`).
fn unexpanded(c: &CType) -> bool {
    let aggregate = |k| matches!(k, TypeKind::Struct | TypeKind::Union);
    (aggregate(c.kind) || (c.kind == TypeKind::Array && aggregate(c.element)))
        && c.aggregate.is_none()
        && c.pahole_before().contains("{...}")
}

fn pad(s: &str, width: usize) -> String {
    // Tabs count as 8 columns, as in pahole's output.
    let cols: usize = s.chars().map(|c| if c == '\t' { 8 } else { 1 }).sum();
    if cols >= width {
        format!("{s} ")
    } else {
        format!("{s}{}", " ".repeat(width - cols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(padding: u32, bit_padding: u32, holes: u32, bit_holes: u32) -> TypeGaps {
        TypeGaps {
            padding,
            bit_padding,
            holes,
            bit_holes,
            ..TypeGaps::default()
        }
    }

    #[test]
    fn member_type_note_parts_order_and_plurals() {
        assert_eq!(gaps_note(&TypeGaps::default()), None);
        let note = |g: TypeGaps| gaps_note(&g).unwrap_or_default();
        assert_eq!(
            note(gaps(1, 0, 0, 0)),
            "XXX last struct has 1 byte of padding"
        );
        assert_eq!(
            note(gaps(4, 0, 0, 0)),
            "XXX last struct has 4 bytes of padding"
        );
        assert_eq!(
            note(gaps(0, 1, 0, 0)),
            "XXX last struct has 1 bit of padding"
        );
        assert_eq!(
            note(gaps(0, 27, 0, 0)),
            "XXX last struct has 27 bits of padding"
        );
        assert_eq!(note(gaps(0, 0, 1, 0)), "XXX last struct has 1 hole");
        assert_eq!(note(gaps(0, 0, 2, 0)), "XXX last struct has 2 holes");
        assert_eq!(
            note(gaps(0, 0, 1, 1)),
            "XXX last struct has 1 hole, 1 bit hole"
        );
        assert_eq!(note(gaps(0, 0, 0, 3)), "XXX last struct has 3 bit holes");
        assert_eq!(
            note(gaps(4, 0, 1, 0)),
            "XXX last struct has 4 bytes of padding, 1 hole"
        );
        assert_eq!(
            note(gaps(1, 2, 3, 4)),
            "XXX last struct has 1 byte of padding, 2 bits of padding, 3 holes, 4 bit holes"
        );
        let flexible = TypeGaps {
            flexible: true,
            ..gaps(0, 0, 1, 0)
        };
        assert_eq!(
            note(flexible),
            "XXX last struct has a flexible array, 1 hole"
        );
        let both = TypeGaps {
            flexible: true,
            embedded_flexible: true,
            ..gaps(4, 0, 0, 0)
        };
        assert_eq!(
            note(both),
            "XXX last struct has a flexible array, embedded flexible array(s), 4 bytes of padding"
        );
        let embedded = TypeGaps {
            embedded_flexible: true,
            ..gaps(0, 0, 2, 1)
        };
        assert_eq!(
            note(embedded),
            "XXX last struct has embedded flexible array(s), 2 holes, 1 bit hole"
        );
    }

    #[test]
    fn member_type_summary_lines() {
        let mut s = Sums::default();
        assert_eq!(s.member_types_line(), None);
        assert_eq!(s.flexible_line(), None);
        s.add_type_gaps(&gaps(4, 0, 0, 0));
        // Tail padding alone is summed in `paddings:`, not here.
        assert_eq!(s.member_types_line(), None);
        assert_eq!((s.paddings, s.sum_paddings), (1, 4));
        s.add_type_gaps(&gaps(0, 1, 0, 0));
        assert_eq!(
            s.member_types_line().as_deref(),
            Some("member types with bit paddings: 1, total: 1 bit")
        );
        s.add_type_gaps(&gaps(2, 17, 3, 0));
        assert_eq!(
            s.member_types_line().as_deref(),
            Some("member types with holes: 1, total: 3, bit paddings: 2, total: 18 bits")
        );
        s.add_type_gaps(&gaps(0, 0, 1, 2));
        assert_eq!(
            s.member_types_line().as_deref(),
            Some(
                "member types with holes: 2, total: 4, bit holes: 1, total: 2, \
                 bit paddings: 2, total: 18 bits"
            )
        );
        assert_eq!((s.paddings, s.sum_paddings), (2, 6));
        let mut f = Sums::default();
        f.add_type_gaps(&TypeGaps {
            embedded_flexible: true,
            ..TypeGaps::default()
        });
        assert_eq!(
            f.flexible_line().as_deref(),
            Some("flexible array members: middle: 1")
        );
        for _ in 0..2 {
            f.add_type_gaps(&TypeGaps {
                flexible: true,
                ..TypeGaps::default()
            });
        }
        assert_eq!(
            f.flexible_line().as_deref(),
            Some("flexible array members: end: 2, middle: 1")
        );
    }

    #[test]
    fn declarators() {
        assert_eq!(
            split_declarator("char[16]", "comm"),
            ("char".into(), "comm[16]".into())
        );
        assert_eq!(
            split_declarator("void (*)(int)", "fn"),
            ("void".into(), "(*fn)(int)".into())
        );
        assert_eq!(split_declarator("int", "x"), ("int".into(), "x".into()));
        assert_eq!(
            split_declarator("void (*[4])(int)", "fns"),
            ("void".into(), "(*fns[4])(int)".into())
        );
        assert_eq!(
            split_declarator("char *const", "p"),
            ("char *const".into(), "p".into())
        );
    }
}
