//! Struct rules: size, lines, growth against OLD, holes, members that start a line,
//! members kept apart or together; measured on the layout at offset 0 (pahole's view).

use super::{Ctx, Measured, Offender, Outcome, Positions, Table, list, matcher};
use crate::check::rules::{Named, StructRule};
use crate::layout::lay;
use crate::model::{Image, Member, StructLayout};

fn struct_keys(r: &StructRule) -> Vec<(&'static str, String)> {
    let mut k = Vec::new();
    let num = |k: &mut Vec<_>, key, v: Option<u64>| {
        if let Some(v) = v {
            k.push((key, v.to_string()));
        }
    };
    num(&mut k, "max_size", r.max_size);
    num(&mut k, "max_cachelines", r.max_cachelines);
    num(&mut k, "max_growth", r.max_growth);
    num(&mut k, "max_holes", r.max_holes);
    k.extend(
        r.line_start
            .iter()
            .map(|m| ("line_start", format!("{m:?}"))),
    );
    k.extend(r.separate.iter().map(|s| ("separate", list(s))));
    k.extend(r.together.iter().map(|s| ("together", list(s))));
    k
}

/// Lines (indices from offset 0 of the struct) a member covers.
fn member_lines(m: &Member<'_>, line_size: u64) -> (u64, u64) {
    let end = m.offset.saturating_add(m.size.max(1)) - 1;
    (m.offset / line_size, end / line_size)
}

fn find_member<'a, 'd>(s: &'a StructLayout<'d>, name: &str) -> Option<&'a Member<'d>> {
    s.flat_members()
        .into_iter()
        .map(|(_, m)| m)
        .find(|m| m.name == Some(name))
}

/// The member of `s` whose name is closest to `name` (a did-you-mean).
fn closest_member(s: &StructLayout<'_>, name: &str) -> Option<String> {
    let members = s.flat_members();
    super::closest(name, members.iter().filter_map(|(_, m)| m.name))
}

fn member_offender(m: &Member<'_>, lines: Vec<u64>) -> Offender {
    Offender {
        name: m.name.unwrap_or("").to_string(),
        offset: m.offset,
        size: m.size,
        lines,
    }
}

pub(super) fn structs(
    out: &mut Vec<Outcome>,
    r: &Named<StructRule>,
    new: &Image<'_>,
    old: Option<&Image<'_>>,
) {
    let ls = new.line_size;
    let m = matcher(&r.pattern);
    let mut ctx = Ctx {
        table: Table::Struct,
        rule: r,
        why: &r.rule.why,
        target: None,
        positions: Positions::StructOffset,
        line_size: ls,
        subject: None,
    };
    let found: Vec<&StructLayout<'_>> = new
        .structs
        .iter()
        .filter(|s| m.is_match(s.name))
        .map(|s| &**s)
        .collect();
    if found.is_empty() {
        out.extend(ctx.not_found(struct_keys(&r.rule)));
        return;
    }
    let rule = &r.rule;
    for s in found {
        // Several layouts under one name are told apart by their declaring file.
        let same_name = new.structs.iter().filter(|x| x.name == s.name).count();
        ctx.target = Some(match (&s.decl_file, same_name > 1) {
            (Some(f), true) => format!("{} ({f})", s.name),
            _ => s.name.to_string(),
        });
        let laid = lay(s, None, ls);
        if let Some(max) = rule.max_size {
            let measured = Measured::Bytes { value: s.size };
            out.push(ctx.outcome(
                "max_size",
                max.to_string(),
                measured,
                s.size <= max,
                past(s, max, ls),
            ));
        }
        if let Some(max) = rule.max_cachelines {
            let v = laid.cachelines;
            out.push(ctx.outcome(
                "max_cachelines",
                max.to_string(),
                Measured::Lines { value: v },
                v <= max,
                past(s, max.saturating_mul(ls), ls),
            ));
        }
        if let Some(max) = rule.max_growth {
            out.push(growth(&ctx, s, old, max));
        }
        if let Some(max) = rule.max_holes {
            out.push(holes(&ctx, s, max));
        }
        for name in &rule.line_start {
            out.push(line_start(&ctx, s, name));
        }
        for set in &rule.separate {
            out.push(separate(&ctx, s, set));
        }
        for set in &rule.together {
            out.push(together(&ctx, s, set));
        }
    }
}

/// `max_holes`: the struct's holes add up to at most `max` bytes (each hole an
/// offender when not).
fn holes(ctx: &Ctx<'_, StructRule>, s: &StructLayout<'_>, max: u64) -> Outcome {
    let ls = ctx.line_size;
    let v = s.sum_holes();
    let offenders = if v > max {
        s.holes
            .iter()
            .map(|h| Offender {
                name: "(hole)".into(),
                offset: h.offset,
                size: h.size,
                lines: vec![h.offset / ls * ls],
            })
            .collect()
    } else {
        Vec::new()
    };
    ctx.outcome(
        "max_holes",
        max.to_string(),
        Measured::Bytes { value: v },
        v <= max,
        offenders,
    )
}

/// `line_start`: member `name` starts a line (the closest name when there is none).
fn line_start(ctx: &Ctx<'_, StructRule>, s: &StructLayout<'_>, name: &str) -> Outcome {
    let ls = ctx.line_size;
    let expected = format!("{name:?}");
    match find_member(s, name) {
        None => {
            let mut o = ctx.outcome(
                "line_start",
                expected,
                Measured::NotFound,
                false,
                Vec::new(),
            );
            o.closest = closest_member(s, name);
            o
        }
        Some(mem) => {
            let rem = mem.offset % ls;
            let measured = Measured::Modulo {
                value: mem.offset,
                modulo: ls,
                remainder: rem,
            };
            let offenders = if rem == 0 {
                Vec::new()
            } else {
                vec![member_offender(mem, vec![mem.offset / ls * ls])]
            };
            ctx.outcome("line_start", expected, measured, rem == 0, offenders)
        }
    }
}

/// Members reaching past byte `limit` (the first few: they are what to move).
fn past(s: &StructLayout<'_>, limit: u64, ls: u64) -> Vec<Offender> {
    s.flat_members()
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| m.nested.is_none() && m.name.is_some())
        .filter(|m| m.offset.saturating_add(m.size) > limit)
        .map(|m| {
            let (a, b) = member_lines(m, ls);
            member_offender(m, (a..=b).take(64).map(|l| l * ls).collect())
        })
        .collect()
}

fn growth(
    ctx: &Ctx<'_, StructRule>,
    s: &StructLayout<'_>,
    old: Option<&Image<'_>>,
    max: u64,
) -> Outcome {
    let Some(old) = old else {
        return ctx.outcome(
            "max_growth",
            max.to_string(),
            Measured::NeedsOld,
            false,
            Vec::new(),
        );
    };
    let old_layout = old
        .structs
        .iter()
        .filter(|o| o.name == s.name)
        .max_by_key(|o| o.decl_file == s.decl_file);
    let before = old_layout.map(|o| o.size);
    let pass = s.size <= before.unwrap_or(0).saturating_add(max);
    // Members that are new or larger than in OLD: where the bytes came from.
    let grown: Vec<Offender> = match old_layout {
        Some(o) => s
            .flat_members()
            .into_iter()
            .map(|(_, m)| m)
            .filter(|m| m.nested.is_none() && m.name.is_some())
            .filter(|m| find_member(o, m.name.unwrap_or("")).is_none_or(|b| m.size > b.size))
            .map(|m| {
                let (a, b) = member_lines(m, ctx.line_size);
                member_offender(m, (a..=b).take(64).map(|l| l * ctx.line_size).collect())
            })
            .collect(),
        None => Vec::new(),
    };
    ctx.outcome(
        "max_growth",
        max.to_string(),
        Measured::Growth {
            old: before,
            new: s.size,
            growth: (i128::from(s.size) - i128::from(before.unwrap_or(0))) as i64,
        },
        pass,
        grown,
    )
}

/// Resolves the members of a `separate`/`together` set; missing names fail the rule.
fn resolve<'a, 'd>(
    s: &'a StructLayout<'d>,
    set: &[String],
) -> Result<Vec<&'a Member<'d>>, Vec<Offender>> {
    let found: Vec<Option<&Member<'d>>> = set.iter().map(|n| find_member(s, n)).collect();
    if found.iter().all(Option::is_some) {
        return Ok(found.into_iter().flatten().collect());
    }
    Err(set
        .iter()
        .zip(&found)
        .filter(|(_, f)| f.is_none())
        .map(|(n, _)| Offender {
            name: n.clone(),
            offset: 0,
            size: 0,
            lines: Vec::new(),
        })
        .collect())
}

fn separate(ctx: &Ctx<'_, StructRule>, s: &StructLayout<'_>, set: &[String]) -> Outcome {
    let ls = ctx.line_size;
    let members = match resolve(s, set) {
        Ok(m) => m,
        Err(missing) => {
            return ctx.outcome("separate", list(set), Measured::NotFound, false, missing);
        }
    };
    let mut shared: Vec<u64> = Vec::new();
    let mut offenders: Vec<Offender> = Vec::new();
    for (i, a) in members.iter().enumerate() {
        for b in &members[i + 1..] {
            let (a0, a1) = member_lines(a, ls);
            let (b0, b1) = member_lines(b, ls);
            let (lo, hi) = (a0.max(b0), a1.min(b1));
            if lo > hi {
                continue;
            }
            let lines: Vec<u64> = (lo..=hi).map(|l| l * ls).collect();
            shared.extend(&lines);
            for m in [a, b] {
                if !offenders.iter().any(|o| Some(o.name.as_str()) == m.name) {
                    offenders.push(member_offender(m, lines.clone()));
                }
            }
        }
    }
    shared.sort_unstable();
    shared.dedup();
    let pass = shared.is_empty();
    ctx.outcome(
        "separate",
        list(set),
        Measured::SharedLines { lines: shared },
        pass,
        offenders,
    )
}

fn together(ctx: &Ctx<'_, StructRule>, s: &StructLayout<'_>, set: &[String]) -> Outcome {
    let ls = ctx.line_size;
    let members = match resolve(s, set) {
        Ok(m) => m,
        Err(missing) => {
            return ctx.outcome("together", list(set), Measured::NotFound, false, missing);
        }
    };
    let lo = members
        .iter()
        .map(|m| member_lines(m, ls).0)
        .max()
        .unwrap_or(0);
    let hi = members
        .iter()
        .map(|m| member_lines(m, ls).1)
        .min()
        .unwrap_or(0);
    let shared: Vec<u64> = if lo <= hi {
        (lo..=hi).map(|l| l * ls).collect()
    } else {
        Vec::new()
    };
    let pass = !shared.is_empty();
    let offenders = if pass {
        Vec::new()
    } else {
        members
            .iter()
            .map(|m| {
                let (a, b) = member_lines(m, ls);
                member_offender(m, (a..=b).map(|l| l * ls).collect())
            })
            .collect()
    };
    ctx.outcome(
        "together",
        list(set),
        Measured::SharedLines { lines: shared },
        pass,
        offenders,
    )
}
