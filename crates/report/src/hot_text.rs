//! Text of the `--hot` sections: perf c2c hot lines mapped onto a build (`show`), and
//! followed into the new build (appended to the diff report).

use std::fmt::{self, Write};

use layout_diff_core::perf::hotmap::{HotFollow, HotMap, Kaslr, MappedLine, Region};
use layout_diff_core::show::Header;

fn kaslr(k: &Kaslr) -> String {
    match k {
        Kaslr::Given { offset } => format!("KASLR offset {offset:#x} (given)"),
        Kaslr::Inferred {
            offset,
            agreeing,
            of,
        } => {
            format!("KASLR offset {offset:#x} (inferred: {agreeing} of {of} code addresses agree)")
        }
    }
}

fn share(l: &MappedLine) -> String {
    match l.share {
        Some(s) => format!("HITM {} ({s:.2}%)", l.hitm),
        None => format!("HITM {}", l.hitm),
    }
}

fn outside(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "1 hot line is outside the image (heap, modules)\n".into(),
        n => format!("{n} hot lines are outside the image (heap, modules)\n"),
    }
}

/// `show IMAGE --hot c2c.txt`.
pub fn show(out: &mut impl Write, h: &Header, m: &HotMap) -> fmt::Result {
    writeln!(
        out,
        "\nhot lines from perf c2c, ranked by HITM ({}) in {}",
        kaslr(&m.kaslr),
        h.file
    )?;
    for l in &m.lines {
        let Some(at) = l.address else {
            writeln!(
                out,
                "  #{}  {:#x}  {}: outside the image{}",
                l.index,
                l.runtime,
                share(l),
                match l.region {
                    Some(Region::Heap) => " (heap: direct map, vmalloc; per-CPU copies)",
                    Some(Region::Modules) => " (modules)",
                    Some(Region::Other) | None => "",
                }
            )?;
            continue;
        };
        writeln!(
            out,
            "  #{}  {at:016x} (run-time {:016x})  {}",
            l.index,
            l.runtime,
            share(l)
        )?;
        let objects: Vec<String> = l
            .objects
            .iter()
            .map(|o| format!("{} ({:016x}, {} B)", o.name, o.address, o.size))
            .collect();
        writeln!(
            out,
            "      objects: {}",
            if objects.is_empty() {
                "(none)".to_string()
            } else {
                objects.join(", ")
            }
        )?;
        for a in &l.accesses {
            let what = match (&a.object, &a.member) {
                (Some(o), Some(m)) => format!("{o}.{m}"),
                (Some(o), None) => o.clone(),
                _ => "(no object)".to_string(),
            };
            let pct: Vec<String> = a
                .percents
                .iter()
                .take(2)
                .map(|p| format!("{p:.2}%"))
                .collect();
            writeln!(
                out,
                "      +{:#04x}  {what:<28}  {}  {}  {}",
                a.offset,
                pct.join(" "),
                a.code.as_deref().unwrap_or("?"),
                a.source.as_deref().unwrap_or("")
            )?;
        }
    }
    out.write_str(&outside(m.outside))
}

/// The diff's `--hot` section: each hot line of OLD, where its tenants are in NEW.
pub fn follow(out: &mut impl Write, f: &HotFollow) -> fmt::Result {
    writeln!(
        out,
        "\nhot lines from perf c2c (recorded on OLD, {}), followed into NEW",
        kaslr(&f.kaslr)
    )?;
    for l in &f.lines {
        writeln!(
            out,
            "  #{}  {:016x}  HITM {}",
            l.index, l.old_address, l.hitm
        )?;
        for t in &l.followed {
            let name = match &t.member {
                Some(m) => format!("{}.{m}", t.object),
                None => t.object.clone(),
            };
            let Some(new) = t.new_address else {
                writeln!(out, "      {name}  {:016x} -> (not in NEW)", t.old_address)?;
                continue;
            };
            let lines = match (t.new_first_line, t.new_last_line) {
                (Some(a), Some(b)) if a == b => format!("line {a:016x}"),
                (Some(a), Some(b)) => format!("lines {a:016x}..{b:016x} ({})", t.new_line_count),
                _ => String::new(),
            };
            let mut tenants: Vec<String> = t.new_members.iter().map(|m| format!(".{m}")).collect();
            tenants.extend(t.new_neighbours.iter().cloned());
            let with = if tenants.is_empty() {
                "alone".to_string()
            } else {
                format!("shares with {}", tenants.join(", "))
            };
            writeln!(
                out,
                "      {name}  {:016x} -> {new:016x}, {lines}: {with}",
                t.old_address,
            )?;
        }
    }
    out.write_str(&outside(f.outside))
}

/// `show --hot` with a perf data-type profile: each sampled struct with its sampled
/// members and their lines, most sampled first, then the sampled variables.
pub fn types(
    out: &mut impl Write,
    h: &Header,
    types: &[layout_diff_core::show::HotTypeView],
    objects: &[layout_diff_core::show::HotObjectView],
) -> fmt::Result {
    writeln!(
        out,
        "{}: hot types from a perf data-type profile (line {} B, lines counted from each struct's start)",
        h.file, h.line_size
    )?;
    for t in types {
        let inst = if t.instances.is_empty() {
            String::new()
        } else {
            format!("; instances: {}", super::diff_lines::names(&t.instances))
        };
        writeln!(
            out,
            "  struct {} ({} B, {} line{}{inst})  {:.2}%",
            t.name,
            t.size,
            t.lines,
            if t.lines == 1 { "" } else { "s" },
            t.share
        )?;
        for m in &t.members {
            writeln!(
                out,
                "      {:>6}  {:<24} line {}{}  {:.2}%",
                format!("+{:#x}", m.offset),
                m.member,
                m.line,
                if m.straddles { " (straddles)" } else { "" },
                m.share
            )?;
        }
    }
    for o in objects {
        let at = o
            .placement
            .as_ref()
            .map_or("not in this image".to_string(), |p| {
                format!(
                    "offset in line {:#04x}, {} line(s)",
                    p.offset_in_line, p.lines
                )
            });
        writeln!(out, "  {}  {at}  {:.2}%", o.name, o.share)?;
    }
    Ok(())
}
