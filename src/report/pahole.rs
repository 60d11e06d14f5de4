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
    let ls = laid.line_size;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "\t/* size: {}, cachelines: {}, members: {} */",
        laid.size, laid.cachelines, laid.member_count
    );
    if !laid.holes.is_empty() || !laid.bit_holes.is_empty() {
        let mut s = format!("\t/* sum members: {}", laid.sum_members);
        if !laid.holes.is_empty() {
            let sum: u64 = laid.holes.iter().map(|h| h.size).sum();
            let _ = write!(s, ", holes: {}, sum holes: {}", laid.holes.len(), sum);
        }
        if !laid.bit_holes.is_empty() {
            let sum: u64 = laid.bit_holes.iter().map(|h| h.bits).sum();
            let _ = write!(
                s,
                ", bit holes: {}, sum bit holes: {} bits",
                laid.bit_holes.len(),
                sum
            );
        }
        let _ = writeln!(out, "{s} */");
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
    if laid.last_cacheline != ls {
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
            let _ = writeln!(out, "{}{pos}", pad(&decl, 56 + 8 * (depth - 1)));
        }
        let end = m.offset + m.size;
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
fn split_declarator(ty: &str, name: &str) -> (String, String) {
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
