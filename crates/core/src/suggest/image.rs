//! Fixes on one build: each failing placement rule of a rules file (`alone`,
//! `not_with`, `aligned`, `max_lines` of an object; `align` of a function; `aligned`
//! and `max_lines` of a cache-line group) gets the candidates that could make it
//! pass, each predicted with `whatif` and checked by evaluating the rule again on the
//! prediction; the smallest that passes comes first. Struct rules and a group's
//! `max_size` take their candidates from `structs.rs` (members aligned or declared
//! elsewhere). With measured evidence alone, a hot written object that shares a line
//! with another written object becomes a `not_with` rule first.

use serde::Serialize;

use crate::check::eval::{CheckReport, Measured, Outcome, Table, check};
use crate::check::rules::{Named, Rules, SymbolRule, split_group};
use crate::evidence::Hotness;
use crate::layout::SpaceIndex;
use crate::model::{Image, Space, Symbol, SymbolKind};
use crate::whatif::{Change, predict};

use super::structs::{self, Candidate};
use super::{section_end, shifts};

/// One candidate fix for one failing rule, checked.
#[derive(Debug, Clone, Serialize)]
pub struct RuleFix {
    /// The changes, as `whatif` takes them.
    pub change: String,
    /// What to paste.
    pub declaration: String,
    /// Whether the rule passes on the predicted build.
    pub passes: bool,
    /// Bytes the change adds to the end of the output section (objects and
    /// functions), or to each instance (groups).
    pub section_bytes: i64,
    /// Bytes the change adds to each instance of the struct.
    pub instance_bytes: i64,
    /// Other symbols of the section that move, and the most any moves.
    pub shifted: usize,
    /// The most any of those symbols moves, in bytes.
    pub max_shift: i64,
    /// Rules of the file that fail on the predicted build.
    pub failing_after: usize,
    /// Instances of the struct in the build (struct rules and a group's `max_size`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<usize>,
    /// Members it moves that have hot evidence (measured or known).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moves_hot: Vec<String>,
}

/// One failing rule and its fixes, passing first, then cheapest.
#[derive(Debug, Clone, Serialize)]
pub struct RuleSuggestion {
    /// The table of the failing rule.
    pub table: Table,
    /// The rule's name or glob.
    pub pattern: String,
    /// What it matched.
    pub target: Option<String>,
    /// The rule's key.
    pub key: &'static str,
    /// The rule's value as written.
    pub expected: String,
    /// What the build measured.
    pub measured: Measured,
    /// The objects at fault (names), as `check` lists them.
    pub offenders: Vec<String>,
    /// The fixes tried, passing first, then cheapest.
    pub fixes: Vec<RuleFix>,
    /// Why no fix was tried, when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The rule, as a `check` snippet, when it was made from `--hot` evidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// Failing rules considered per run (each candidate costs one prediction and a check).
const MAX_RULES: usize = 16;
/// Offenders tried as the thing to align, per rule.
const MAX_OFFENDERS: usize = 3;

/// The suggestions for every failing rule of `rules` on `image`. `made` says the rules
/// were made from evidence (then each suggestion carries its rule as a snippet);
/// `hotness` keeps hot members in a group over its `max_size` when others can leave.
pub fn suggest_rules(
    image: &Image<'_>,
    rules: &Rules,
    made: bool,
    hotness: Option<&Hotness>,
) -> Vec<RuleSuggestion> {
    let report = check(rules, image, None);
    report
        .outcomes
        .iter()
        .filter(|o| !o.pass)
        .take(MAX_RULES)
        .map(|o| for_outcome(image, rules, o, made, hotness))
        .collect()
}

fn for_outcome(
    image: &Image<'_>,
    rules: &Rules,
    o: &Outcome,
    made: bool,
    hotness: Option<&Hotness>,
) -> RuleSuggestion {
    let (candidates, note) = match o.table {
        Table::Struct => structs::for_struct(image, o),
        Table::Group if o.key == "max_size" => structs::for_group_size(image, o, hotness),
        _ => {
            let (c, note) = candidates(image, o);
            let c = c
                .into_iter()
                .map(|(changes, decl)| Candidate::plain(changes, decl))
                .collect();
            (c, note)
        }
    };
    let mut fixes: Vec<RuleFix> = candidates
        .into_iter()
        .filter_map(|c| evaluate(image, rules, o, c))
        .collect();
    // A member with hot evidence is not moved when another candidate passes.
    if fixes.iter().any(|f| f.passes && f.moves_hot.is_empty()) {
        fixes.retain(|f| f.moves_hot.is_empty());
    }
    fixes.sort_by_key(|f| {
        (
            !f.passes,
            f.instance_bytes,
            f.section_bytes,
            f.shifted,
            f.failing_after,
        )
    });
    RuleSuggestion {
        table: o.table,
        pattern: o.pattern.clone(),
        target: o.target.clone(),
        key: o.key,
        expected: o.expected.clone(),
        measured: o.measured.clone(),
        offenders: o.offenders.iter().map(|x| x.name.clone()).collect(),
        fixes,
        note,
        rule: made.then(|| snippet(rules, o)),
    }
}

/// The candidates for one failing outcome, each a set of changes with the C to paste,
/// and a note when there are none.
fn candidates(image: &Image<'_>, o: &Outcome) -> (Vec<(Vec<Change>, String)>, Option<String>) {
    let line = image.line_size;
    let Some(target) = o.target.as_deref() else {
        return (Vec::new(), Some("it names nothing in the build".into()));
    };
    match o.table {
        Table::Symbol => symbol_candidates(image, o, target),
        Table::Function => function_candidates(image, o, target),
        Table::Group if o.key == "aligned" || o.key == "max_lines" => {
            let (s, g) = split_group(target);
            (
                vec![(
                    vec![Change::MemberAlign {
                        name: s.to_string(),
                        member: format!("__cacheline_group_begin__{g}"),
                        align: line,
                    }],
                    format!("/* struct {s} */ __cacheline_group_begin_aligned({g});"),
                )],
                None,
            )
        }
        // Struct rules and a group's `max_size`: `structs.rs`.
        Table::Group | Table::Struct => (Vec::new(), None),
    }
}

/// The candidate fixes of a failed symbol rule on `target`: the object aligned, each
/// offender aligned, and the object and the offenders after it aligned together.
fn symbol_candidates(image: &Image<'_>, o: &Outcome, target: &str) -> Candidates {
    let line = image.line_size;
    let Some(sym) = object(image, target) else {
        return (Vec::new(), Some("the object is not in the build".into()));
    };
    let align = match o.key {
        "aligned" => o.expected.parse().unwrap_or(line),
        _ => line,
    };
    let mut sets: Vec<Vec<&Symbol<'_>>> = vec![vec![sym]];
    if o.key != "aligned" {
        let offenders: Vec<&Symbol<'_>> = o
            .offenders
            .iter()
            .filter_map(|x| object(image, &x.name))
            .take(MAX_OFFENDERS)
            .collect();
        sets.extend(offenders.iter().map(|x| vec![*x]));
        // The object and every offender after it: it then ends its own lines.
        let mut both = vec![sym];
        both.extend(offenders.iter().filter(|x| x.place > sym.place));
        let same = |a: &Vec<&Symbol<'_>>| {
            a.len() == both.len() && a.iter().zip(&both).all(|(x, y)| std::ptr::eq(*x, *y))
        };
        if both.len() > 1 && !sets.iter().any(same) {
            sets.push(both);
        }
    }
    let out = sets
        .into_iter()
        .map(|set| {
            let changes = set.iter().map(|s| align_object(s, align, line)).collect();
            let decl = set
                .iter()
                .map(|s| super::declaration(image, s))
                .collect::<Vec<_>>()
                .join("\n");
            (changes, decl)
        })
        .collect();
    (out, None)
}

/// The candidate fixes of a failed function rule on `target`: the function aligned,
/// and every function of its unit aligned.
fn function_candidates(image: &Image<'_>, o: &Outcome, target: &str) -> Candidates {
    let line = image.line_size;
    let align = o.expected.parse().unwrap_or(line);
    let Ok(i) = crate::whatif::functions::find_function(image, target) else {
        return (Vec::new(), Some("the function is not in the build".into()));
    };
    let f = &image.symbols[i];
    let mut out = vec![(
        vec![Change::SymbolAlign {
            name: target.to_string(),
            align,
        }],
        format!(
            "__attribute__((__aligned__({align}))) ... {}(...)  /* on its definition{} */",
            f.name,
            f.compile_unit.map_or(String::new(), |u| format!(" in {u}"))
        ),
    )];
    if let Some(u) = f.compile_unit {
        out.push((
            vec![Change::FunctionsAligned {
                unit: u.to_string(),
                align,
            }],
            super::functions::makefile_line(u, align),
        ));
    }
    (out, None)
}

/// Candidate fixes (the changes and the declarations they spell), or why there are
/// none.
type Candidates = (Vec<(Vec<Change>, String)>, Option<String>);

/// The change that aligns object `s` to `align`: `DEFINE_PER_CPU_ALIGNED` for a
/// per-CPU variable asked to start a line.
fn align_object(s: &Symbol<'_>, align: u64, line: u64) -> Change {
    let name = s.qualified_name();
    match s.space {
        Space::Percpu if align == line => Change::PercpuAligned {
            name,
            declaration: true,
        },
        _ => Change::SymbolAlign { name, align },
    }
}

/// The data object `name` (bare or qualified), when exactly one.
fn object<'a, 'd>(image: &'a Image<'d>, name: &str) -> Option<&'a Symbol<'d>> {
    let mut found = image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Object && s.answers_to(name));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// Predicts the candidate's changes, checks the rules again, and measures the cost.
fn evaluate(image: &Image<'_>, rules: &Rules, o: &Outcome, c: Candidate) -> Option<RuleFix> {
    let Candidate {
        changes,
        declaration,
        hot,
        must_shrink,
    } = c;
    let p = predict(image, &changes, &[]).ok()?;
    let again: CheckReport = check(rules, &p.image, None);
    let passes = again.outcomes.iter().any(|x| {
        x.table == o.table
            && x.pattern == o.pattern
            && x.target == o.target
            && x.key == o.key
            && x.pass
    });
    let (mut section_bytes, mut instance_bytes, mut moved, mut most) = (0, 0, 0, 0);
    let mut instances = None;
    match changes.first()? {
        Change::MemberAlign { name, .. } | Change::MemberMove { name, .. } => {
            let size = |i: &Image<'_>| {
                i.structs_named(|n| n == name)
                    .map(|(_, s)| s.size)
                    .max()
                    .unwrap_or(0)
            };
            let holes = |i: &Image<'_>| {
                i.structs_named(|n| n == name)
                    .map(|(_, s)| s.sum_holes())
                    .max()
                    .unwrap_or(0)
            };
            if must_shrink && size(&p.image) >= size(image) && holes(&p.image) >= holes(image) {
                return None;
            }
            instance_bytes = size(&p.image) as i64 - size(image) as i64;
            if matches!(o.table, Table::Struct) || o.key == "max_size" {
                instances = Some(super::instances_of(image, name));
            }
        }
        first => {
            (section_bytes, (moved, most)) = placement_cost(image, &p.image, &changes, first)?;
        }
    }
    Some(RuleFix {
        change: super::changes_args(&changes),
        declaration,
        passes,
        section_bytes,
        instance_bytes,
        shifted: moved,
        max_shift: most,
        failing_after: again.failed,
        instances,
        moves_hot: hot,
    })
}

/// What changes (`first` the first of them) cost the placement of the object or
/// function they align, `predicted` the image they make: the bytes its section grew
/// by, and how many symbols after it shifted and by how much at most (`shifts`).
fn placement_cost(
    image: &Image<'_>,
    predicted: &Image<'_>,
    changes: &[Change],
    first: &Change,
) -> Option<(i64, (usize, i64))> {
    let name = match first {
        Change::SymbolAlign { name, .. }
        | Change::PercpuAligned { name, .. }
        | Change::ReadMostly { name } => Some(name.as_str()),
        _ => None,
    };
    let sym = match name {
        Some(n) => image.symbols.iter().find(|s| {
            s.answers_to(n)
                && matches!(s.kind, SymbolKind::Object | SymbolKind::Function)
        }),
        None => image.symbols.iter().find(|s| {
            matches!(first, Change::FunctionsAligned { unit, .. } if s.compile_unit == Some(unit.as_str()))
                && s.kind == SymbolKind::Function
        }),
    }?;
    let changed: Vec<&str> = changes
        .iter()
        .filter_map(|c| match c {
            Change::SymbolAlign { name, .. } | Change::PercpuAligned { name, .. } => image
                .symbols
                .iter()
                .find(|s| s.answers_to(name))
                .map(|s| s.name),
            _ => None,
        })
        .collect();
    let section_bytes = section_end(predicted, sym.kind, sym.space, sym.section) as i64
        - section_end(image, sym.kind, sym.space, sym.section) as i64;
    let shifted = shifts(
        image,
        predicted,
        (sym.kind, sym.space, sym.section),
        &changed,
    );
    Some((section_bytes, shifted))
}

/// The rule of outcome `o` as a `check` snippet.
fn snippet(rules: &Rules, o: &Outcome) -> String {
    let rule = rules
        .symbols
        .iter()
        .find(|r| r.pattern == o.pattern)
        .map(|r| &r.rule);
    let mut s = format!("[symbol.\"{}\"]\n", o.pattern);
    if let Some(r) = rule {
        if !r.not_with.is_empty() {
            let list: Vec<String> = r.not_with.iter().map(|n| format!("\"{n}\"")).collect();
            s += &format!("not_with = [{}]\n", list.join(", "));
        }
        if let Some(w) = &r.why {
            s += &format!("why = \"{w}\"\n");
        }
    }
    s
}

/// Rules made from measured evidence: each measured-hot object that is written at run
/// time and shares a line with other such objects must not share its lines with them.
/// "Written at run time" is the kernel's classifier's (`kernel::Regions::classify`), as
/// the diff's: not boot-only, read-only after init, read-mostly (static keys and
/// tracepoints among it) or read-only, and not cold by convention.
pub fn hot_rules(image: &Image<'_>, hotness: &Hotness) -> Rules {
    let ls = image.line_size;
    // Zero-byte symbols are never tenants (`SpaceIndex::tenants`).
    let global = SpaceIndex::tenants(&image.symbols, Space::Global);
    let percpu = SpaceIndex::tenants(&image.symbols, Space::Percpu);
    let vars = image.variables_of_symbols();
    let regions = crate::kernel::Regions::of(image);
    let written = |s: &Symbol<'_>| {
        let v = vars.of(s);
        s.kind == SymbolKind::Object
            && s.size > 0
            && regions.classify(s, v.map(|v| &*v.ctype)).at_run_time()
            && crate::evidence::cold::of(s.name, s.section, v.map(|v| v.type_name())).is_none()
    };
    let mut out = Rules::default();
    let mut seen: Vec<String> = Vec::new();
    for s in image.symbols.iter().filter(|s| written(s)) {
        let struct_name = vars.of(s).and_then(|v| image.struct_name(v));
        let measured = hotness.measured.object(s.name).is_some()
            || struct_name.is_some_and(|t| hotness.measured.type_(t).is_some());
        if !measured {
            continue;
        }
        let name = s.qualified_name();
        if seen.contains(&name) {
            continue;
        }
        let index = if s.space == Space::Percpu {
            &percpu
        } else {
            &global
        };
        let mut others: Vec<String> = index
            .co_tenants(s, ls)
            .iter()
            .flat_map(|t| t.symbols.iter())
            .filter(|o| written(o))
            .map(|o| o.qualified_name())
            .collect();
        others.sort();
        others.dedup();
        if others.is_empty() {
            continue;
        }
        seen.push(name.clone());
        out.symbols.push(Named {
            pattern: name,
            line: 0,
            rule: SymbolRule {
                not_with: others,
                why: Some(
                    "measured hot and written: kept off other written objects' lines (layout-diff suggest --hot)"
                        .into(),
                ),
                ..SymbolRule::default()
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::evidence::Measured;
    use crate::model::{CType, Variable};

    /// A variable of type `c` for the symbol `s`.
    fn variable(s: &Symbol<'static>, c: &str) -> Variable<'static> {
        Variable {
            name: s.name,
            address: s.address,
            ctype: Arc::new(CType {
                c: c.into(),
                ..CType::default()
            })
            .into(),
            size: Some(s.size),
            layout: None,
            is_array: false,
            alignment: None,
            decl_file: None,
            decl_line: None,
            declared: None,
        }
    }

    /// A measured-hot counter shares its line with another counter, a static key, an
    /// object in the init region and a `.rodata` one: only the counter is written at
    /// run time, so the rule keeps the hot object off it alone. Before the kernel's
    /// classifier, `suggest` spelled "written" its own way and the rule was
    /// `not_with = ["hot_key", "init_table", "nr_other"]`: the static key (`struct
    /// static_key_false`, read-mostly by its type to the diff) and the object in
    /// `__init_begin..__init_end` whose section is not `.init.*` counted as written.
    #[test]
    fn hot_rules_count_only_storage_written_at_run_time() {
        let mut image = Image::test_empty();
        let hot = Symbol::test_object("nr_hot", 0x1000, 8);
        let other = Symbol::test_object("nr_other", 0x1008, 8);
        let key = Symbol::test_object("hot_key", 0x1010, 16);
        let init = Symbol::test_object("init_table", 0x1020, 8);
        let after_init = Symbol {
            section: ".rodata",
            ..Symbol::test_object("ro_after", 0x1030, 8)
        };
        image.variables = vec![
            variable(&hot, "long"),
            variable(&other, "long"),
            variable(&key, "struct static_key_false"),
            variable(&init, "long"),
            variable(&after_init, "long"),
        ];
        image.symbols = vec![hot, other, key, init, after_init];
        image.boundaries = vec![("__init_begin", 0x1020), ("__init_end", 0x1028)];
        let mut hotness = Hotness::builtin();
        let mut measured = Measured::default();
        measured.add_object("nr_hot", "a --hot list", String::new());
        hotness.measured = measured;
        let rules = hot_rules(&image, &hotness);
        let made: Vec<(&str, Vec<&str>)> = rules
            .symbols
            .iter()
            .map(|r| {
                let with = r.rule.not_with.iter().map(String::as_str).collect();
                (r.pattern.as_str(), with)
            })
            .collect();
        assert_eq!(made, vec![("nr_hot", vec!["nr_other"])]);
    }
}
