//! The pahole-style struct listing kernel developers already read: members with
//! offsets and sizes, holes, and cache line boundary markers, plus the summary lines.

use std::fmt::Write;

use crate::layout::{LaidMember, LaidStruct};

/// Renders `laid` as pahole does; when laid at an instance address, boundary markers
/// say where the instance's real lines break.
pub fn render(laid: &LaidStruct<'_, '_>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} {} {{", laid.kind.keyword(), laid.name);
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
