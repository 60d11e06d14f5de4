//! The pahole-style struct listing kernel developers already read: members with
//! offsets and sizes, holes, and cache line boundary markers, plus the summary lines.

use std::fmt::Write;

use crate::layout::{LaidMember, LaidStruct};
use crate::model::{AggregateKind, Member, StructLayout};

/// `show --struct`: the listing exactly as `pahole -F dwarf -C NAME` prints it (the
/// struct laid at offset 0). With `annotate`, members that straddle a line boundary
/// and the struct's own forced alignment are marked too.
pub fn listing(laid: &LaidStruct<'_, '_>, annotate: bool) -> String {
    let l = laid.layout;
    let mut p = Listing {
        out: String::new(),
        line: laid.line_size.max(1),
        cacheline: 0,
        annotate,
    };
    if l.typedef {
        let _ = writeln!(p.out, "typedef {} {{", l.kind.keyword());
    } else {
        let _ = writeln!(p.out, "{} {} {{", l.kind.keyword(), l.name);
    }
    match l.kind {
        AggregateKind::Union => p.union_body(l, 1),
        AggregateKind::Struct => p.struct_body(l, 1, false, Some(laid)),
    }
    p.out.push('}');
    if l.kind == AggregateKind::Struct {
        p.out.push_str(&closing_attributes(l));
    }
    if l.typedef {
        let _ = write!(p.out, " {}", l.name);
    }
    p.out.push_str(";\n");
    p.out
}

/// `__attribute__((__packed__))` or `((__aligned__(N)))` after a struct's brace.
fn closing_attributes(l: &StructLayout<'_>) -> String {
    if l.packed {
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

/// Printing state of one listing: the cache line last announced, as pahole keeps it.
struct Listing {
    out: String,
    line: u64,
    cacheline: u64,
    annotate: bool,
}

/// Running sums of one struct level, for its summary lines.
#[derive(Default)]
struct Sums {
    bytes: u64,
    bits: u64,
    holes: u64,
    bit_holes: u64,
    paddings: u64,
    sum_paddings: u64,
    forced: u64,
    forced_holes: u64,
    sum_forced_holes: u64,
}

impl Listing {
    fn comment(&mut self, depth: usize, text: &str) {
        let _ = writeln!(self.out, "\n{}/* {text} */", "\t".repeat(depth));
    }

    fn boundary(&mut self, offset: u64, depth: usize) {
        let line = offset / self.line;
        if line <= self.cacheline {
            return;
        }
        let pos = offset % self.line;
        let at = offset - pos;
        let indent = "\t".repeat(depth);
        if pos == 0 {
            let _ = writeln!(
                self.out,
                "{indent}/* --- cacheline {line} boundary ({at} bytes) --- */"
            );
        } else {
            let _ = writeln!(
                self.out,
                "{indent}/* --- cacheline {line} boundary ({at} bytes) was {pos} byte{} ago --- */",
                plural(pos)
            );
        }
        self.cacheline = line;
    }

    fn union_body(&mut self, l: &StructLayout<'_>, depth: usize) {
        let initial = self.cacheline;
        let n = l.members.len();
        for (k, m) in l.members.iter().enumerate() {
            self.member(m, depth, true, k == n - 1, n == 1);
            self.cacheline = initial;
        }
    }

    fn struct_body(
        &mut self,
        l: &StructLayout<'_>,
        depth: usize,
        in_union: bool,
        stats: Option<&LaidStruct<'_, '_>>,
    ) {
        let mut sums = Sums::default();
        if l.pre_bit_hole > 0 {
            self.comment(
                depth,
                &format!(
                    "XXX {} bit{} hole, try to pack",
                    l.pre_bit_hole,
                    plural(l.pre_bit_hole)
                ),
            );
            sums.bit_holes += l.pre_bit_hole;
        }
        if l.pre_hole > 0 {
            self.comment(
                depth,
                &format!(
                    "XXX {} byte{} hole, try to pack",
                    l.pre_hole,
                    plural(l.pre_hole)
                ),
            );
            sums.holes += l.pre_hole;
        }
        let n = l.members.len();
        let mut last: Option<&Member<'_>> = None;
        let mut last_size = 0u64;
        for (k, pos) in l.members.iter().enumerate() {
            if pos.alignment.is_some() {
                sums.forced += 1;
                let hole = last.map_or(l.pre_hole, |m| m.hole);
                if hole != 0 {
                    sums.forced_holes += 1;
                    sums.sum_forced_holes += hole;
                }
            }
            if let Some(last) = last.filter(|_| last_size != 0) {
                self.between(last, pos, last_size, depth);
            }
            self.member(pos, depth, in_union, k == n - 1, n == 1);
            if pos.type_padding > 0 {
                sums.paddings += 1;
                sums.sum_paddings += pos.type_padding;
                self.comment(
                    depth,
                    &format!(
                        "XXX last struct has {} byte{} of padding",
                        pos.type_padding,
                        plural(pos.type_padding)
                    ),
                );
            }
            if pos.bit_hole > 0 {
                sums.bit_holes += pos.bit_hole;
                self.comment(
                    depth,
                    &format!(
                        "XXX {} bit{} hole, try to pack",
                        pos.bit_hole,
                        plural(pos.bit_hole)
                    ),
                );
            }
            if pos.hole > 0 {
                sums.holes += pos.hole;
                self.comment(
                    depth,
                    &format!(
                        "XXX {} byte{} hole, try to pack",
                        pos.hole,
                        plural(pos.hole)
                    ),
                );
            }
            match pos.bit_size {
                Some(b) => sums.bits += b,
                None => sums.bytes += pos.size,
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
        if let Some(laid) = stats {
            self.stats(l, laid, &sums);
        }
    }

    /// What pahole prints between two members: an explicit `:N` bit hole before a
    /// bitfield, and where a bitfield shares storage with its neighbours.
    fn between(&mut self, last: &Member<'_>, pos: &Member<'_>, last_size: u64, depth: usize) {
        let indent = "\t".repeat(depth);
        if last.bit_hole != 0 && pos.is_bitfield() {
            let mut bits = last.bit_hole;
            if last.offset != pos.offset {
                let _ = writeln!(
                    self.out,
                    "\n{indent}/* Force alignment to the next boundary: */"
                );
                bits = 0;
            }
            let _ = writeln!(
                self.out,
                "{indent}{}{}:{bits};",
                pos.ctype.pahole_before, pos.ctype.pahole_after
            );
        }
        if pos.offset < last.offset
            || (pos.offset == last.offset && !last.is_bitfield() && pos.is_bitfield())
        {
            self.comment(depth, "Bitfield combined with previous fields");
        } else {
            let ahead = pos.offset.saturating_sub(last.offset);
            if ahead > 0 && ahead < last_size {
                self.comment(depth, "Bitfield combined with next fields");
            }
        }
    }

    fn member(&mut self, m: &Member<'_>, depth: usize, in_union: bool, last: bool, single: bool) {
        self.boundary(m.offset, depth);
        let indent = "\t".repeat(depth);
        let aligned = m
            .alignment
            .map(|a| format!(" __attribute__((__aligned__({a})))"))
            .unwrap_or_default();
        if let Some(n) = &m.nested {
            let qualifier = if m.ctype.is_const && m.ctype.dims.is_empty() {
                "const "
            } else {
                ""
            };
            let _ = writeln!(self.out, "{indent}{qualifier}{} {{", n.kind.keyword());
            match n.kind {
                AggregateKind::Union => self.union_body(n, depth + 1),
                AggregateKind::Struct => self.struct_body(n, depth + 1, in_union, None),
            }
            let mut decl = format!("{indent}}}");
            if n.kind == AggregateKind::Struct {
                decl.push_str(&closing_attributes(n));
            }
            if let Some(name) = m.name {
                let _ = write!(decl, " {name}");
            }
            for (i, d) in m.ctype.dims.iter().enumerate() {
                if i == 0 && *d == 0 && last && !single && !in_union {
                    decl.push_str("[]");
                } else {
                    let _ = write!(decl, "[{d}]");
                }
            }
            let _ = write!(decl, "{aligned};");
            let _ = writeln!(
                self.out,
                "{}/* {:5} {:5} */",
                pad(&decl, 56 + 8 * (depth - 1)),
                m.offset,
                m.size
            );
            return;
        }
        let c = &m.ctype;
        let after = match &c.pahole_after_flexible {
            Some(flex) if last && !single && !in_union => flex,
            _ => &c.pahole_after,
        };
        let before = match c.pahole_before.strip_suffix(' ') {
            Some(ty) => format!("{ty:<26} "),
            None => c.pahole_before.to_string(),
        };
        let mut decl = format!("{indent}{before}{}{after}", m.name.unwrap_or(""));
        if let Some(bits) = m.bit_size {
            let _ = write!(decl, ":{bits}");
        }
        let _ = write!(decl, "{aligned};");
        let pos = match m.bit_offset {
            Some(b) => format!("/* {:5}:{:2} {:2} */", m.offset, b, m.size),
            None => format!("/* {:5} {:5} */", m.offset, m.size),
        };
        let first_line = m.offset / self.line;
        let last_line = (m.offset + m.size.max(1) - 1) / self.line;
        let straddle = if self.annotate
            && first_line != last_line
            && m.size <= self.line
            && m.bit_size.is_none()
        {
            format!(" /* straddles lines {first_line}-{last_line} */")
        } else {
            String::new()
        };
        let _ = writeln!(
            self.out,
            "{}{pos}{straddle}",
            pad(&decl, 56 + 8 * (depth - 1))
        );
    }

    fn stats(&mut self, l: &StructLayout<'_>, laid: &LaidStruct<'_, '_>, s: &Sums) {
        let out = &mut self.out;
        let _ = writeln!(
            out,
            "\n\t/* size: {}, cachelines: {}, members: {} */",
            l.size,
            laid.cachelines,
            l.members.len()
        );
        if s.holes > 0 || s.bit_holes > 0 {
            if s.bytes > 0 {
                let _ = write!(out, "\t/* sum members: {}", s.bytes);
                if s.holes > 0 {
                    let count = u64::from(l.pre_hole > 0)
                        + l.members.iter().filter(|m| m.hole > 0).count() as u64;
                    let _ = write!(out, ", holes: {count}, sum holes: {}", s.holes);
                }
                let _ = writeln!(out, " */");
            }
            if s.bits > 0 {
                let _ = write!(out, "\t/* sum bitfield members: {} bits", s.bits);
                if s.bit_holes > 0 {
                    let count = u64::from(l.pre_bit_hole > 0)
                        + l.members.iter().filter(|m| m.bit_hole > 0).count() as u64;
                    let _ = write!(
                        out,
                        ", bit holes: {count}, sum bit holes: {} bits",
                        s.bit_holes
                    );
                } else {
                    let _ = write!(out, " ({} bytes)", s.bits / 8);
                }
                let _ = writeln!(out, " */");
            }
        }
        if l.padding > 0 {
            let _ = writeln!(out, "\t/* padding: {} */", l.padding);
        }
        if s.paddings > 0 {
            let _ = writeln!(
                out,
                "\t/* paddings: {}, sum paddings: {} */",
                s.paddings, s.sum_paddings
            );
        }
        if l.bit_padding > 0 {
            let _ = writeln!(out, "\t/* bit_padding: {} bits */", l.bit_padding);
        }
        if s.forced > 0 {
            let _ = write!(out, "\t/* forced alignments: {}", s.forced);
            if s.forced_holes > 0 {
                let _ = write!(
                    out,
                    ", forced holes: {}, sum forced holes: {}",
                    s.forced_holes, s.sum_forced_holes
                );
            }
            let _ = writeln!(out, " */");
        }
        if self.annotate
            && let Some(a) = l.explicit_alignment
        {
            let _ = writeln!(out, "\t/* forced alignment: {a} */");
        }
        let last = l.size % self.line;
        if last != 0 {
            let _ = writeln!(out, "\t/* last cacheline: {last} bytes */");
        }
    }
}

/// Renders `laid` as pahole does; when laid at an instance address, boundary markers
/// say where the instance's real lines break.
pub fn render(laid: &LaidStruct<'_, '_>) -> String {
    let mut out = String::new();
    let name = if laid.name.is_empty() { "" } else { " " };
    let _ = writeln!(out, "{}{name}{} {{", laid.kind.keyword(), laid.name);
    members(&mut out, laid, &laid.members, laid.holes, 1);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "\t/* size: {}, cachelines: {}, members: {} */",
        laid.size, laid.cachelines, laid.member_count
    );
    if !laid.holes.is_empty() {
        let _ = writeln!(
            out,
            "\t/* sum members: {}, holes: {}, sum holes: {} */",
            laid.sum_members,
            laid.holes.len(),
            laid.holes.iter().map(|h| h.size).sum::<u64>()
        );
    }
    if !laid.bit_holes.is_empty() {
        let _ = writeln!(
            out,
            "\t/* sum bitfield members: {} bits, bit holes: {}, sum bit holes: {} bits */",
            laid.sum_bitfield_bits,
            laid.bit_holes.len(),
            laid.bit_holes.iter().map(|h| h.bits).sum::<u64>()
        );
    }
    if laid.padding > 0 {
        let _ = writeln!(out, "\t/* padding: {} */", laid.padding);
    }
    if laid.bit_padding > 0 {
        let _ = writeln!(out, "\t/* bit_padding: {} bits */", laid.bit_padding);
    }
    if let Some(a) = laid.explicit_alignment {
        let _ = writeln!(out, "\t/* forced alignment: {a} */");
    }
    if laid.last_cacheline != 0 {
        let _ = writeln!(out, "\t/* last cacheline: {} bytes */", laid.last_cacheline);
    }
    let _ = writeln!(out, "}};");
    out
}

fn boundary(out: &mut String, laid: &LaidStruct<'_, '_>, line: u64, indent: &str) {
    let ls = laid.line_size;
    match laid.base {
        None => {
            let _ = writeln!(
                out,
                "{indent}/* --- cacheline {line} boundary ({} bytes) --- */",
                line * ls
            );
        }
        Some(base) => {
            let at = (base / ls + line) * ls;
            let _ = writeln!(
                out,
                "{indent}/* --- cacheline {line} boundary at {at:#x} (struct offset {}) --- */",
                at - base
            );
        }
    }
}

fn members(
    out: &mut String,
    laid: &LaidStruct<'_, '_>,
    list: &[LaidMember<'_, '_>],
    holes: &[crate::model::Hole],
    depth: usize,
) {
    let indent = "\t".repeat(depth);
    for m in list {
        if let Some(line) = m.boundary_before {
            boundary(out, laid, line, &indent);
        }
        if let Some(children) = &m.members {
            let kw = m.kind.map(|k| k.keyword()).unwrap_or("struct");
            let _ = writeln!(out, "{indent}{kw} {{");
            members(out, laid, children, m.holes.unwrap_or(&[]), depth + 1);
            let decl = format!("{indent}}};");
            let _ = writeln!(
                out,
                "{}/* {:5} {:5} */",
                pad(&decl, 56 + 8 * (depth - 1)),
                m.offset,
                m.size
            );
        } else {
            let name = m.name.unwrap_or("");
            let (ty, declarator) = split_declarator(m.type_name, name);
            let mut decl = format!("{indent}{ty:<26} {declarator}");
            if let Some(bits) = m.bit_size {
                let _ = write!(decl, ":{bits}");
            }
            decl.push(';');
            let pos = match m.bit_offset {
                Some(b) => format!("/* {:5}:{:2} {:4} */", m.offset, b, m.size),
                None => format!("/* {:5} {:5} */", m.offset, m.size),
            };
            // A member no larger than a line that still touches two: worth seeing.
            let straddle = if m.first_line != m.last_line
                && m.size <= laid.line_size
                && m.bit_size.is_none()
            {
                format!(" /* straddles lines {}-{} */", m.first_line, m.last_line)
            } else {
                String::new()
            };
            let _ = writeln!(out, "{}{pos}{straddle}", pad(&decl, 56 + 8 * (depth - 1)));
        }
        let end_bit = m.offset * 8 + m.bit_offset.unwrap_or(0) + m.bit_size.unwrap_or(m.size * 8);
        if depth == 1
            && let Some(h) = laid
                .bit_holes
                .iter()
                .find(|h| h.offset * 8 + h.bit_offset == end_bit)
        {
            let _ = writeln!(out, "\n{indent}/* XXX {} bits hole, try to pack */", h.bits);
        }
        let end = (end_bit).div_ceil(8);
        if let Some(h) = holes.iter().find(|h| h.offset == end && !m.flexible) {
            let _ = writeln!(
                out,
                "\n{indent}/* XXX {} bytes hole, try to pack */\n",
                h.size
            );
        }
    }
}

/// `char[16]` + `comm` -> (`char`, `comm[16]`); `void (*)(int)` + `fn` -> (`void`, `(*fn)(int)`).
pub(crate) fn split_declarator(ty: &str, name: &str) -> (String, String) {
    if let Some(i) = ty.find("(*)") {
        return (
            ty[..i].trim_end().to_string(),
            format!("(*{name}){}", &ty[i + 3..]),
        );
    }
    if let Some(i) = ty.find('[') {
        return (ty[..i].to_string(), format!("{name}{}", &ty[i..]));
    }
    (ty.to_string(), name.to_string())
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
    }
}
