//! Text report of `layout-diff check`: one line per rule (PASS/FAIL, the rule, the
//! value measured), and under each failure the members or objects at fault with
//! their lines and the rule's `why`.

use std::fmt::{self, Write};

use layout_diff_core::check::eval::{CheckReport, Measured, Offender, Outcome, Positions, Table};

/// Writes the check report as text.
pub fn render(out: &mut impl Write, r: &CheckReport) -> fmt::Result {
    writeln!(out, "{}", title(r))?;
    writeln!(
        out,
        "line {} B ({})\n",
        r.image.line_size, r.image.line_size_from
    )?;
    for o in &r.outcomes {
        writeln!(
            out,
            "{} {}",
            if o.pass { "PASS" } else { "FAIL" },
            rule_line(o)
        )?;
        for d in details(o) {
            writeln!(out, "       {d}")?;
        }
    }
    writeln!(out, "\n{}", closing(r))
}

/// `layout-diff check RULES: IMAGE (build-id ...)`, with the OLD build when given.
pub fn title(r: &CheckReport) -> String {
    let id = |h: &layout_diff_core::show::Header| match &h.build_id {
        Some(b) => format!("build-id {}", &b[..b.len().min(12)]),
        None => "no build-id".to_string(),
    };
    let old = match &r.old {
        Some(h) => format!("  (growth against {} ({}))", h.file, id(h)),
        None => String::new(),
    };
    format!(
        "layout-diff check {}: {} ({}){old}",
        r.rules,
        r.image.file,
        id(&r.image)
    )
}

/// The closing line: how many rules pass and fail, and the exit code.
pub fn closing(r: &CheckReport) -> String {
    let total = r.passed + r.failed;
    let rules = if total == 1 { "rule" } else { "rules" };
    match (r.failed, total) {
        (0, 1) => "the rule passes".to_string(),
        (0, _) => format!("all {total} rules pass"),
        (1, 1) => "the rule fails (exit 1)".to_string(),
        (f, _) => format!("{f} of {total} {rules} fail (exit 1)"),
    }
}

/// The rules-file table name of `t`.
pub fn table(t: Table) -> &'static str {
    match t {
        Table::Struct => "struct",
        Table::Symbol => "symbol",
        Table::Function => "function",
        Table::Group => "group",
    }
}

/// `symbol root_user: aligned = 64: ffffffff82a510e0 is +0x20 in its 64 B line`.
pub fn rule_line(o: &Outcome) -> String {
    let target = o.target.as_deref().unwrap_or(&o.pattern);
    format!(
        "{} {target}: {} = {}: {}",
        table(o.table),
        o.key,
        o.expected,
        measured(o)
    )
}

/// A position spelled for its kind: an address, a per-CPU offset or a struct offset.
pub fn pos(p: Positions, v: u64) -> String {
    match p {
        Positions::Address => format!("{v:016x}"),
        Positions::PercpuOffset => format!("percpu+{v:#x}"),
        Positions::StructOffset => format!("offset {v}"),
    }
}

/// A line start: an address, a per-CPU offset, or `line N` inside a struct.
fn line_at(o: &Outcome, start: u64) -> String {
    match o.positions {
        Positions::StructOffset => format!("line {}", start / o.line_size),
        p => pos(p, start),
    }
}

/// What an outcome measured, in words.
pub fn measured(o: &Outcome) -> String {
    let what = match o.table {
        Table::Struct => "struct",
        Table::Symbol => "data or per-CPU object",
        Table::Function => "function",
        Table::Group => "group",
    };
    let guess = o
        .closest
        .as_deref()
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    match &o.measured {
        Measured::NotFound if o.target.is_some() => format!("member not found{guess}"),
        Measured::NotFound => format!("no {what} named {} in this build{guess}", o.pattern),
        Measured::NeedsOld => "needs the old build: check --rules FILE OLD NEW".into(),
        Measured::Bytes { value } => format!("{value} B"),
        Measured::Lines { value } => format!("{value} line{}", if *value == 1 { "" } else { "s" }),
        Measured::Growth {
            old: Some(old),
            new,
            growth,
        } => format!("{old} -> {new} B ({growth:+})"),
        Measured::Growth { old: None, new, .. } => format!("{new} B, not in the old build"),
        Measured::Modulo {
            value,
            modulo,
            remainder,
        } => {
            let at = pos(o.positions, *value);
            // Offsets in a struct are decimal, as pahole prints them; addresses hex.
            let rem = match o.positions {
                Positions::StructOffset => remainder.to_string(),
                _ => format!("{remainder:#x}"),
            };
            if *remainder == 0 {
                format!("{at} is a multiple of {modulo}")
            } else if *modulo == o.line_size {
                format!("{at} is +{rem} in its {modulo} B line")
            } else {
                format!("{at} mod {modulo} = {rem}")
            }
        }
        Measured::Neighbours { count } => match count {
            0 => "no other object on its lines".into(),
            1 => "1 other object on its lines".into(),
            n => format!("{n} other objects on its lines"),
        },
        Measured::SharedLines { lines } if o.key == "together" => match lines.first() {
            Some(l) => format!("all on {}", line_at(o, *l)),
            None => "no line holds them all".into(),
        },
        Measured::SharedLines { lines } => match lines.len() {
            0 => "no line shared".into(),
            _ => format!(
                "share {}",
                lines
                    .iter()
                    .map(|l| line_at(o, *l))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
}

/// The lines under a failing rule: offenders, then `why`.
pub fn details(o: &Outcome) -> Vec<String> {
    let mut v: Vec<String> = o.offenders.iter().map(|f| offender(o, f)).collect();
    if o.more_offenders > 0 {
        v.push(format!("(+{} more)", o.more_offenders));
    }
    if let Some(w) = &o.why {
        v.push(format!("why: {w}"));
    }
    v
}

fn offender(o: &Outcome, f: &Offender) -> String {
    if f.lines.is_empty() {
        return format!("{}: not found", f.name);
    }
    let lines: Vec<String> = f.lines.iter().map(|l| line_at(o, *l)).collect();
    let verb = match (o.table, o.key) {
        (Table::Symbol, _) => "on line",
        (_, "separate") => "shares",
        _ => "on",
    };
    format!(
        "{} ({}, {} B) {verb} {}",
        f.name,
        pos(o.positions, f.offset),
        f.size,
        lines.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(
        table: Table,
        key: &'static str,
        measured: Measured,
        positions: Positions,
    ) -> Outcome {
        Outcome {
            table,
            pattern: "p*".into(),
            target: Some("t".into()),
            rule_line: 1,
            key,
            expected: "1".into(),
            measured,
            pass: false,
            positions,
            line_size: 64,
            why: None,
            offenders: Vec::new(),
            subject: None,
            more_offenders: 0,
            closest: None,
        }
    }

    #[test]
    fn every_measurement_reads_as_a_sentence() {
        let s = Positions::StructOffset;
        let cases = [
            (
                Measured::NeedsOld,
                "needs the old build: check --rules FILE OLD NEW",
            ),
            (Measured::NotFound, "member not found"),
            (Measured::Lines { value: 1 }, "1 line"),
            (
                Measured::Growth {
                    old: None,
                    new: 24,
                    growth: 24,
                },
                "24 B, not in the old build",
            ),
            (
                Measured::Growth {
                    old: Some(24),
                    new: 16,
                    growth: -8,
                },
                "24 -> 16 B (-8)",
            ),
            (
                Measured::Modulo {
                    value: 0x30,
                    modulo: 16,
                    remainder: 0,
                },
                "offset 48 is a multiple of 16",
            ),
            (
                Measured::Modulo {
                    value: 0x34,
                    modulo: 16,
                    remainder: 4,
                },
                "offset 52 mod 16 = 4",
            ),
            (
                Measured::SharedLines {
                    lines: vec![64, 128],
                },
                "share line 1, line 2",
            ),
        ];
        for (m, want) in cases {
            assert_eq!(measured(&outcome(Table::Struct, "separate", m, s)), want);
        }
        let together = outcome(
            Table::Struct,
            "together",
            Measured::SharedLines { lines: vec![] },
            s,
        );
        assert_eq!(measured(&together), "no line holds them all");
        let mut nothing = outcome(
            Table::Function,
            "align",
            Measured::NotFound,
            Positions::Address,
        );
        nothing.target = None;
        assert_eq!(measured(&nothing), "no function named p* in this build");
        let percpu = outcome(
            Table::Symbol,
            "aligned",
            Measured::Modulo {
                value: 0x1c8,
                modulo: 64,
                remainder: 8,
            },
            Positions::PercpuOffset,
        );
        assert_eq!(measured(&percpu), "percpu+0x1c8 is +0x8 in its 64 B line");
    }
}
