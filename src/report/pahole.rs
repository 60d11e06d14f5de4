//! The pahole-style struct listing kernel developers already read: members with
//! offsets and sizes, holes, and cache line boundary markers, plus the summary lines.

use std::fmt::Write;

use crate::layout::LaidStruct;
use crate::model::{AggregateKind, Member, StructLayout};

/// `show --struct`: the listing exactly as `pahole -F dwarf -C NAME` prints it (the
/// struct laid at offset 0). With `annotate`, members that straddle a line boundary
/// and the struct's own forced alignment are marked too. Laid at an instance's
/// address (`show --symbol`), boundaries fall where that instance's lines break.
pub fn listing(laid: &LaidStruct<'_, '_>, annotate: bool) -> String {
    let l = laid.layout;
    let mut p = Listing {
        out: String::new(),
        line: laid.line_size.max(1),
        cacheline: 0,
        annotate,
        base: laid.base,
        blank_pending: false,
    };
    if l.typedef {
        let _ = writeln!(p.out, "typedef {} {{", l.kind.keyword());
    } else {
        let _ = writeln!(p.out, "{} {} {{", l.kind.keyword(), l.name);
    }
    match l.kind {
        AggregateKind::Union => p.union_body(l, 1),
        AggregateKind::Struct => {
            p.struct_body(l, 1, false, Some((laid.cachelines, laid.last_cacheline)))
        }
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
    /// Address (or per-CPU offset) the struct is laid at, if not offset 0.
    base: Option<u64>,
    /// A run of comments is open: an empty line goes before the next member.
    blank_pending: bool,
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
    /// A comment line; the first of a run is preceded by an empty line and the run
    /// is closed by one before the next member, as pahole spaces them.
    fn comment(&mut self, depth: usize, text: &str) {
        if !self.blank_pending {
            self.out.push('\n');
            self.blank_pending = true;
        }
        let _ = writeln!(self.out, "{}/* {text} */", "\t".repeat(depth));
    }

    /// Line of a struct offset, counted from the line holding the struct's first byte.
    fn line_of(&self, offset: u64) -> u64 {
        let base = self.base.unwrap_or(0);
        base.saturating_add(offset) / self.line - base / self.line
    }

    fn boundary(&mut self, offset: u64, depth: usize) {
        let line = self.line_of(offset);
        if line <= self.cacheline {
            return;
        }
        let indent = "\t".repeat(depth);
        if let Some(base) = self.base {
            let at = (base / self.line + line) * self.line;
            let _ = writeln!(
                self.out,
                "{indent}/* --- cacheline {line} boundary at {at:#x} (struct offset {}) --- */",
                at - base
            );
            self.cacheline = line;
            return;
        }
        let pos = offset % self.line;
        let at = offset - pos;
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
        stats: Option<(u64, u64)>,
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
                let hole = last.map_or(l.pre_hole, |m| u64::from(m.hole));
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
                sums.sum_paddings += u64::from(pos.type_padding);
                self.comment(
                    depth,
                    &format!(
                        "XXX last struct has {} byte{} of padding",
                        pos.type_padding,
                        plural(u64::from(pos.type_padding))
                    ),
                );
            }
            if pos.bit_hole > 0 {
                sums.bit_holes += u64::from(pos.bit_hole);
                self.comment(
                    depth,
                    &format!(
                        "XXX {} bit{} hole, try to pack",
                        pos.bit_hole,
                        plural(u64::from(pos.bit_hole))
                    ),
                );
            }
            if pos.hole > 0 {
                sums.holes += u64::from(pos.hole);
                self.comment(
                    depth,
                    &format!(
                        "XXX {} byte{} hole, try to pack",
                        pos.hole,
                        plural(u64::from(pos.hole))
                    ),
                );
            }
            match pos.bit_size {
                Some(b) => sums.bits += u64::from(b),
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
        if let Some(last) = last {
            self.force_padding(l, last, depth);
        }
        if let Some((cachelines, last)) = stats {
            self.stats(l, depth, cachelines, last, &sums);
        }
    }

    /// pahole spells out tail padding larger than a pointer as unnamed bitfields of
    /// the last member's type, when that type's size is a power of two and the struct
    /// has no alignment of its own (it assumes 64-bit pointers here).
    fn force_padding(&mut self, l: &StructLayout<'_>, last: &Member<'_>, depth: usize) {
        const POINTER: u64 = 8;
        let size = last.size;
        if l.padding == 0
            || l.explicit_alignment.is_some()
            || !size.is_power_of_two()
            || l.padding <= POINTER
        {
            return;
        }
        let indent = "\t".repeat(depth);
        let _ = writeln!(self.out, "\n{indent}/* Force padding: */");
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
                let _ = writeln!(self.out, "{indent}/* ... {rest} more like it */");
                break;
            }
            let _ = writeln!(
                self.out,
                "{indent}{before}{}:{};",
                last.ctype.pahole_after(),
                size * 8
            );
            added += size;
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
            let before = match pos.ctype.pahole_before().strip_suffix(' ') {
                Some(ty) => format!("{ty:<26} "),
                None => pos.ctype.pahole_before().to_string(),
            };
            let _ = writeln!(
                self.out,
                "{indent}{before}{}:{bits};",
                pos.ctype.pahole_after()
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
        if self.blank_pending {
            self.out.push('\n');
            self.blank_pending = false;
        }
        self.boundary(m.offset, depth);
        let indent = "\t".repeat(depth);
        let aligned = m
            .alignment
            .map(|a| format!(" __attribute__((__aligned__({a})))"))
            .unwrap_or_default();
        if let Some(n) = &m.pointee {
            let _ = writeln!(self.out, "{indent}{} {{", n.kind.keyword());
            match n.kind {
                AggregateKind::Union => self.union_body(n, depth + 1),
                AggregateKind::Struct => self.struct_body(n, depth + 1, in_union, None),
            }
            let mut decl = format!("{indent}}}");
            if n.kind == AggregateKind::Struct {
                decl.push_str(&closing_attributes(n));
            }
            let _ = write!(decl, " * {}{aligned};", m.name.unwrap_or(""));
            let _ = writeln!(
                self.out,
                "{}/* {:5} {:5} */",
                pad(&decl, 57 + 8 * (depth - 1)),
                m.offset,
                m.size
            );
            return;
        }
        if let Some(n) = &m.nested {
            let qualifier = if m.ctype.is_const && m.ctype.dims.is_empty() {
                "const "
            } else {
                ""
            };
            let _ = writeln!(self.out, "{indent}{qualifier}{} {{", n.kind.keyword());
            match n.kind {
                AggregateKind::Union => self.union_body(n, depth + 1),
                // A const anonymous struct keeps its summary in pahole's text.
                AggregateKind::Struct => {
                    let stats = (!qualifier.is_empty()).then(|| {
                        (
                            n.size.div_ceil(self.line),
                            m.offset.saturating_add(n.size) % self.line,
                        )
                    });
                    self.struct_body(n, depth + 1, in_union, stats)
                }
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
                pad(&decl, 57 + 8 * (depth - 1)),
                m.offset,
                m.size
            );
            return;
        }
        let c = &m.ctype;
        let after = match c.pahole_after_flexible() {
            Some(flex) if last && !single && !in_union => flex,
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
                let _ = writeln!(self.out, "{indent}enum {{");
                for (name, v) in values {
                    let _ = writeln!(self.out, "{indent}\t{name:<width$} = {v},");
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
            let _ = write!(decl, ":{bits}");
        }
        let _ = write!(decl, "{aligned};");
        let pos = match m.bit_offset {
            Some(b) => format!("/* {:5}:{:2} {:2} */", m.offset, b, m.size),
            None => format!("/* {:5} {:5} */", m.offset, m.size),
        };
        let first_line = self.line_of(m.offset);
        let last_line = self.line_of(m.offset.saturating_add(m.size.max(1) - 1));
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
            pad(&decl, 57 + 8 * (depth - 1))
        );
    }

    fn stats(&mut self, l: &StructLayout<'_>, depth: usize, cachelines: u64, last: u64, s: &Sums) {
        let t = "\t".repeat(depth);
        let out = &mut self.out;
        let _ = writeln!(
            out,
            "\n{t}/* size: {}, cachelines: {}, members: {} */",
            l.size,
            cachelines,
            l.members.len()
        );
        if s.holes > 0 || s.bit_holes > 0 {
            if s.bytes > 0 {
                let _ = write!(out, "{t}/* sum members: {}", s.bytes);
                if s.holes > 0 {
                    let count = u64::from(l.pre_hole > 0)
                        + l.members.iter().filter(|m| m.hole > 0).count() as u64;
                    let _ = write!(out, ", holes: {count}, sum holes: {}", s.holes);
                }
                let _ = writeln!(out, " */");
            }
            if s.bits > 0 {
                let _ = write!(out, "{t}/* sum bitfield members: {} bits", s.bits);
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
            let _ = writeln!(out, "{t}/* padding: {} */", l.padding);
        }
        if s.paddings > 0 {
            let _ = writeln!(
                out,
                "{t}/* paddings: {}, sum paddings: {} */",
                s.paddings, s.sum_paddings
            );
        }
        if l.bit_padding > 0 {
            let _ = writeln!(out, "{t}/* bit_padding: {} bits */", l.bit_padding);
        }
        if s.forced > 0 {
            let _ = write!(out, "{t}/* forced alignments: {}", s.forced);
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
            let _ = writeln!(out, "{t}/* forced alignment: {a} */");
        }
        if last != 0 {
            let _ = writeln!(out, "{t}/* last cacheline: {last} bytes */");
        }
    }
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
