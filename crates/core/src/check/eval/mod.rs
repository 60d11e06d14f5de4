//! Evaluates a rules file against one build (and, for growth rules, the build before
//! it): each rule becomes a typed outcome with the value measured and, when it fails,
//! the members or objects at fault and their lines. Pure: no I/O, no printing.

use globset::GlobMatcher;
use serde::Serialize;

use super::rules::{FunctionRule, GroupRule, Named, Rules, SymbolRule, split_group};
use crate::layout::{SpaceIndex, groups, place};
use crate::model::{Image, Space, Symbol, SymbolKind};

mod structs;
use crate::model::Header;

/// The table of the rules file a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Table {
    /// `[struct."NAME"]`.
    Struct,
    /// `[symbol."NAME"]`.
    Symbol,
    /// `[function."NAME"]`.
    Function,
    /// `[group."STRUCT.GROUP"]`.
    Group,
}

/// What the positions in an outcome are: addresses, per-CPU offsets, or offsets
/// from the start of a struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Positions {
    /// Link-time addresses.
    Address,
    /// Offsets in the per-CPU area.
    PercpuOffset,
    /// Offsets from the struct's start.
    StructOffset,
}

/// The value a rule measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Measured {
    /// Nothing in the build matches the rule's name.
    NotFound,
    /// A growth rule run on one build.
    NeedsOld,
    /// A size in bytes.
    Bytes {
        /// The bytes.
        value: u64,
    },
    /// A number of lines.
    Lines {
        /// The lines.
        value: u64,
    },
    /// Size in OLD (`None`: not in OLD) and NEW, and NEW minus OLD (or NEW).
    Growth {
        /// Its size in OLD, `None` when OLD lacks it.
        old: Option<u64>,
        /// Its size in NEW.
        new: u64,
        /// NEW minus OLD, or NEW when OLD lacks it.
        growth: i64,
    },
    /// `value mod modulo = remainder`.
    Modulo {
        /// The address (or per-CPU offset): a hex string in JSON.
        #[serde(serialize_with = "crate::model::hex::addr")]
        value: u64,
        /// The divisor (the alignment asked for).
        modulo: u64,
        /// What is left.
        remainder: u64,
    },
    /// Number of other objects on its lines.
    Neighbours {
        /// The neighbours.
        count: usize,
    },
    /// Lines (starts) two or more members have in common; `together`: the shared line.
    SharedLines {
        /// The shared lines' numbers.
        #[serde(serialize_with = "crate::model::hex::big_list")]
        lines: Vec<u64>,
    },
}

/// A member, hole or object at fault, with the lines (starts) where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Offender {
    /// The member, hole or object.
    pub name: String,
    /// An object's address, or a member's offset (hex strings above 2^53).
    #[serde(serialize_with = "crate::model::hex::big")]
    pub offset: u64,
    /// Its size in bytes.
    pub size: u64,
    /// The lines it is on.
    #[serde(serialize_with = "crate::model::hex::big_list")]
    pub lines: Vec<u64>,
}

/// One rule applied to one matching struct, object, function or group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The table the rule is in.
    pub table: Table,
    /// The name or glob of the rule's table.
    pub pattern: String,
    /// What it matched (`None` when nothing did).
    pub target: Option<String>,
    /// Line of the rule's table header in the rules file.
    pub rule_line: usize,
    /// The rule's key (`max_size`, `aligned`, ...).
    pub key: &'static str,
    /// The rule's value as written in the file.
    pub expected: String,
    /// What the build measured.
    pub measured: Measured,
    /// The rule holds.
    pub pass: bool,
    /// What `offenders`' positions are.
    pub positions: Positions,
    /// The line size the rule was measured in.
    pub line_size: u64,
    /// The rule's `why`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// What makes it fail: members, holes or objects and their lines.
    pub offenders: Vec<Offender>,
    /// The object a failing symbol or function rule checked (place and size; `lines`
    /// left empty), so that a drawing of the offenders shows what they share a line
    /// with, or where a function starts on its line. Not in the JSON, which names the
    /// target already.
    #[serde(skip)]
    pub subject: Option<Offender>,
    /// Offenders left out after the first `MAX_OFFENDERS`.
    #[serde(skip_serializing_if = "is_zero")]
    pub more_offenders: usize,
    /// For a name found nowhere (`Measured::NotFound`), the closest one that is there
    /// (`closest`), as a did-you-mean.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest: Option<String>,
}

/// The name among `names` closest to `wanted` by edit distance, when it is within 2
/// edits (or, for longer names, a fifth of their length) and not `wanted` itself.
pub fn closest<'n>(wanted: &str, names: impl Iterator<Item = &'n str>) -> Option<String> {
    let most = 2.max(wanted.len() / 5);
    names
        .filter(|n| *n != wanted)
        .map(|n| (strsim::levenshtein(wanted, n), n))
        .filter(|(d, _)| *d <= most)
        .min()
        .map(|(_, n)| n.to_string())
}

/// Offenders listed per outcome; the rest are counted.
pub const MAX_OFFENDERS: usize = 8;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Every outcome, in rules-file order (kind, then pattern, then target, then key).
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The rules file.
    pub rules: String,
    /// The build the rules were evaluated on.
    pub image: Header,
    /// The build growth rules compared with, when given.
    pub old: Option<Header>,
    /// Outcomes that passed.
    pub passed: usize,
    /// Outcomes that failed.
    pub failed: usize,
    /// Every outcome.
    pub outcomes: Vec<Outcome>,
}

/// Evaluates `rules` on `new`; growth rules compare with `old` when given.
pub fn check(rules: &Rules, new: &Image<'_>, old: Option<&Image<'_>>) -> CheckReport {
    let mut out = Vec::new();
    for r in &rules.structs {
        structs::structs(&mut out, r, new, old);
    }
    for r in &rules.symbols {
        symbol(&mut out, r, new);
    }
    for r in &rules.functions {
        function(&mut out, r, new);
    }
    for r in &rules.groups {
        group(&mut out, r, new);
    }
    let failed = out.iter().filter(|o| !o.pass).count();
    CheckReport {
        rules: rules.path.display().to_string(),
        image: Header::of(new),
        old: old.map(Header::of),
        passed: out.len() - failed,
        failed,
        outcomes: out,
    }
}

fn matcher(pattern: &str) -> GlobMatcher {
    // Validated when the rules were parsed; a glob that fails here matches literally.
    globset::Glob::new(pattern)
        .or_else(|_| globset::Glob::new(&globset::escape(pattern)))
        .map(|g| g.compile_matcher())
        .unwrap_or_else(|_| {
            globset::Glob::new("")
                .expect("empty glob")
                .compile_matcher()
        })
}

/// Builds outcomes for one rule table and one target.
struct Ctx<'r, R> {
    table: Table,
    rule: &'r Named<R>,
    why: &'r Option<String>,
    target: Option<String>,
    positions: Positions,
    line_size: u64,
    /// The object checked (symbol rules), kept on failing outcomes.
    subject: Option<Offender>,
}

impl<R> Ctx<'_, R> {
    fn outcome(
        &self,
        key: &'static str,
        expected: String,
        measured: Measured,
        pass: bool,
        mut offenders: Vec<Offender>,
    ) -> Outcome {
        if pass {
            offenders.clear();
        }
        let more_offenders = offenders.len().saturating_sub(MAX_OFFENDERS);
        offenders.truncate(MAX_OFFENDERS);
        Outcome {
            table: self.table,
            pattern: self.rule.pattern.clone(),
            target: self.target.clone(),
            rule_line: self.rule.line,
            key,
            expected,
            measured,
            pass,
            positions: self.positions,
            line_size: self.line_size,
            why: if pass { None } else { self.why.clone() },
            offenders,
            subject: if pass { None } else { self.subject.clone() },
            more_offenders,
            closest: None,
        }
    }

    /// One failing outcome per key: the rule names nothing in this build.
    fn not_found(&self, keys: Vec<(&'static str, String)>) -> Vec<Outcome> {
        keys.into_iter()
            .map(|(k, e)| self.outcome(k, e, Measured::NotFound, false, Vec::new()))
            .collect()
    }
}

fn list(v: &[String]) -> String {
    format!("{v:?}")
}

fn symbol_keys(r: &SymbolRule) -> Vec<(&'static str, String)> {
    let mut k = Vec::new();
    if let Some(a) = r.aligned {
        k.push(("aligned", a.to_string()));
    }
    if let Some(a) = r.alone {
        k.push(("alone", a.to_string()));
    }
    if !r.not_with.is_empty() {
        k.push(("not_with", list(&r.not_with)));
    }
    if let Some(m) = r.max_lines {
        k.push(("max_lines", m.to_string()));
    }
    k
}

fn positions(space: Space) -> Positions {
    match space {
        Space::Global => Positions::Address,
        Space::Percpu => Positions::PercpuOffset,
    }
}

/// The other objects on `s`'s lines, each with the line starts it shares.
fn neighbours(index: &SpaceIndex<'_, '_>, s: &Symbol<'_>, ls: u64) -> Vec<Offender> {
    let mut out: Vec<Offender> = Vec::new();
    for t in index.co_tenants(s, ls) {
        for o in t.symbols {
            let name = o.qualified_name();
            match out
                .iter_mut()
                .find(|x| x.name == name && x.offset == o.place)
            {
                Some(x) => x.lines.push(t.start),
                None => out.push(Offender {
                    name,
                    offset: o.place,
                    size: o.size,
                    lines: vec![t.start],
                }),
            }
        }
    }
    out
}

fn symbol(out: &mut Vec<Outcome>, r: &Named<SymbolRule>, image: &Image<'_>) {
    let ls = image.line_size;
    let m = matcher(&r.pattern);
    let mut ctx = Ctx {
        table: Table::Symbol,
        rule: r,
        why: &r.rule.why,
        target: None,
        positions: Positions::Address,
        line_size: ls,
        subject: None,
    };
    let found: Vec<&Symbol<'_>> = image
        .symbols
        .iter()
        .filter(|s| s.kind != SymbolKind::Function && m.is_match(s.name))
        .collect();
    if found.is_empty() {
        let guess = (!r.pattern.contains(['*', '?', '['])).then(|| {
            let objects = image
                .symbols
                .iter()
                .filter(|s| s.kind != SymbolKind::Function);
            closest(&r.pattern, objects.map(|s| s.name))
        });
        out.extend(
            ctx.not_found(symbol_keys(&r.rule))
                .into_iter()
                .map(|mut o| {
                    o.closest = guess.clone().flatten();
                    o
                }),
        );
        return;
    }
    // Zero-byte symbols are never tenants (`SpaceIndex::tenants`).
    let global = SpaceIndex::tenants(&image.symbols, Space::Global);
    let percpu = SpaceIndex::tenants(&image.symbols, Space::Percpu);
    let not_with: Vec<GlobMatcher> = r.rule.not_with.iter().map(|p| matcher(p)).collect();
    for s in found {
        ctx.target = Some(s.qualified_name());
        ctx.positions = positions(s.space);
        // Its lines are not listed: a drawing takes them from its place and size.
        ctx.subject = Some(Offender {
            name: s.qualified_name(),
            offset: s.place,
            size: s.size,
            lines: Vec::new(),
        });
        let index = if s.space == Space::Percpu {
            &percpu
        } else {
            &global
        };
        let others = neighbours(index, s, ls);
        if let Some(n) = r.rule.aligned {
            out.push(aligned(&ctx, s, n, &others));
        }
        if let Some(alone) = r.rule.alone {
            let pass = !alone || others.is_empty();
            let measured = Measured::Neighbours {
                count: others.len(),
            };
            let offenders = if pass { Vec::new() } else { others.clone() };
            out.push(ctx.outcome("alone", alone.to_string(), measured, pass, offenders));
        }
        if !not_with.is_empty() {
            out.push(not_with_outcome(&ctx, &not_with, &others));
        }
        if let Some(max) = r.rule.max_lines {
            let p = place(s.place, s.size, ls);
            out.push(ctx.outcome(
                "max_lines",
                max.to_string(),
                Measured::Lines { value: p.lines },
                p.lines <= max,
                Vec::new(),
            ));
        }
    }
}

/// `aligned`: symbol `s` starts on a multiple of `n` (the neighbours on its first
/// line, `others`, the offenders when not).
fn aligned(ctx: &Ctx<'_, SymbolRule>, s: &Symbol<'_>, n: u64, others: &[Offender]) -> Outcome {
    let ls = ctx.line_size;
    let rem = s.place % n;
    let first_line = s.place / ls * ls;
    let on_first: Vec<Offender> = if rem == 0 {
        Vec::new()
    } else {
        others
            .iter()
            .filter(|o| o.lines.contains(&first_line))
            .cloned()
            .collect()
    };
    let measured = Measured::Modulo {
        value: s.place,
        modulo: n,
        remainder: rem,
    };
    ctx.outcome("aligned", n.to_string(), measured, rem == 0, on_first)
}

/// `not_with`: none of the neighbours (`others`) matches a pattern of `not_with`, by
/// its qualified or bare name.
fn not_with_outcome(
    ctx: &Ctx<'_, SymbolRule>,
    not_with: &[GlobMatcher],
    others: &[Offender],
) -> Outcome {
    let bad: Vec<Offender> = others
        .iter()
        .filter(|o| {
            let bare = o.name.rsplit(':').next().unwrap_or(&o.name);
            not_with
                .iter()
                .any(|g| g.is_match(&o.name) || g.is_match(bare))
        })
        .cloned()
        .collect();
    let measured = Measured::Neighbours { count: bad.len() };
    ctx.outcome(
        "not_with",
        list(&ctx.rule.rule.not_with),
        measured,
        bad.is_empty(),
        bad,
    )
}

fn function(out: &mut Vec<Outcome>, r: &Named<FunctionRule>, image: &Image<'_>) {
    let m = matcher(&r.pattern);
    let mut ctx = Ctx {
        table: Table::Function,
        rule: r,
        why: &r.rule.why,
        target: None,
        positions: Positions::Address,
        line_size: image.line_size,
        subject: None,
    };
    let keys: Vec<(&'static str, String)> = r
        .rule
        .align
        .map(|a| ("align", a.to_string()))
        .into_iter()
        .collect();
    let found: Vec<&Symbol<'_>> = image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Function && m.is_match(s.name))
        .collect();
    if found.is_empty() {
        out.extend(ctx.not_found(keys));
        return;
    }
    for s in found {
        ctx.target = Some(s.qualified_name());
        // A failing rule draws the function's start on its line.
        ctx.subject = Some(Offender {
            name: s.qualified_name(),
            offset: s.place,
            size: s.size,
            lines: Vec::new(),
        });
        if let Some(n) = r.rule.align {
            let rem = s.place % n;
            let measured = Measured::Modulo {
                value: s.place,
                modulo: n,
                remainder: rem,
            };
            out.push(ctx.outcome("align", n.to_string(), measured, rem == 0, Vec::new()));
        }
    }
}

fn group_keys(r: &GroupRule) -> Vec<(&'static str, String)> {
    let mut k = Vec::new();
    if let Some(v) = r.max_size {
        k.push(("max_size", v.to_string()));
    }
    if let Some(v) = r.max_lines {
        k.push(("max_lines", v.to_string()));
    }
    if let Some(v) = r.aligned {
        k.push(("aligned", v.to_string()));
    }
    k
}

fn group(out: &mut Vec<Outcome>, r: &Named<GroupRule>, image: &Image<'_>) {
    let ls = image.line_size;
    let (sp, gp) = split_group(&r.pattern);
    let (ms, mg) = (matcher(sp), matcher(gp));
    let mut ctx = Ctx {
        table: Table::Group,
        rule: r,
        why: &r.rule.why,
        target: None,
        positions: Positions::StructOffset,
        line_size: ls,
        subject: None,
    };
    let mut any = false;
    for s in image.structs.iter().filter(|s| ms.is_match(s.name)) {
        for g in groups(s, ls).into_iter().filter(|g| mg.is_match(&g.name)) {
            any = true;
            ctx.target = Some(format!("{}.{}", s.name, g.name));
            let offender = || Offender {
                name: g.name.clone(),
                offset: g.offset,
                size: g.size,
                lines: (0..g.lines).map(|i| (g.first_line + i) * ls).collect(),
            };
            if let Some(max) = r.rule.max_size {
                let pass = g.size <= max;
                let off = if pass { Vec::new() } else { vec![offender()] };
                out.push(ctx.outcome(
                    "max_size",
                    max.to_string(),
                    Measured::Bytes { value: g.size },
                    pass,
                    off,
                ));
            }
            if let Some(max) = r.rule.max_lines {
                let pass = g.lines <= max;
                let off = if pass { Vec::new() } else { vec![offender()] };
                out.push(ctx.outcome(
                    "max_lines",
                    max.to_string(),
                    Measured::Lines { value: g.lines },
                    pass,
                    off,
                ));
            }
            if let Some(want) = r.rule.aligned {
                let rem = g.offset % ls;
                let pass = !want || rem == 0;
                let off = if pass { Vec::new() } else { vec![offender()] };
                let measured = Measured::Modulo {
                    value: g.offset,
                    modulo: ls,
                    remainder: rem,
                };
                out.push(ctx.outcome("aligned", want.to_string(), measured, pass, off));
            }
        }
    }
    if !any {
        out.extend(ctx.not_found(group_keys(&r.rule)));
    }
}
