//! The judgement alone: what `suggest` reads of a candidate's diff against OLD (the
//! struct, data and function changes, and how many are flagged), without the shift
//! runs, root causes and summary a whole `diff` adds, which no flag count reads.

use super::*;

/// The changes of one diff and how many of them are flagged: `diff`'s `structs`,
/// `data`, `percpu`, `functions` and `flagged`, the changes without their runs.
#[allow(clippy::vec_box)]
pub struct Judgement<'a> {
    /// Flagged changes of every row (`Report::flagged`).
    pub flagged: usize,
    /// As `Report::structs`.
    pub structs: Vec<StructChange>,
    /// As `Report::data`, without runs.
    pub data: Vec<Box<PlacementChange<'a>>>,
    /// As `Report::percpu`, without runs.
    pub percpu: Vec<Box<PlacementChange<'a>>>,
    /// As `Report::functions`, without runs.
    pub functions: Vec<Box<FunctionChange<'a>>>,
}

/// OLD as every candidate is judged against: its pairing keys and indexes, found
/// once for all the candidates.
pub struct OldSide<'a, 'd> {
    image: &'a Image<'d>,
    keys: pairing::OldKeys<'a, 'd>,
    indexes: placement::OldIndexes<'a, 'd>,
}

impl<'a, 'd> OldSide<'a, 'd> {
    /// `old`'s keys and indexes, its functions' frequencies by `hotness`.
    pub fn new(old: &'a Image<'d>, hotness: &Hotness) -> Self {
        let (keys, indexes) = rayon::join(
            || pairing::OldKeys::new(&old.symbols),
            || placement::old_indexes(old, hotness),
        );
        OldSide {
            image: old,
            keys,
            indexes,
        }
    }
}

/// Judges `old -> new` as `diff` does, and counts its flags; the fields it shares with
/// `diff(old, new, options)` are equal to its.
pub fn judge<'a>(
    old: &'a Image<'_>,
    new: &'a Image<'_>,
    options: &DiffOptions<'a>,
) -> Judgement<'a> {
    let hotness = options
        .hotness
        .unwrap_or_else(|| crate::evidence::builtin());
    judge_against(&OldSide::new(old, hotness), new, options)
}

/// `judge(old.image, new, options)`, OLD's keys and indexes found beforehand.
pub fn judge_against<'a, 'd>(
    old: &OldSide<'a, 'd>,
    new: &'a Image<'d>,
    options: &DiffOptions<'a>,
) -> Judgement<'a> {
    judge_knowing(old, new, options, None)
}

/// The struct changes of `old.image -> new` (`Judgement::structs`), as `judge_against`
/// finds them.
fn struct_changes(
    old: &OldSide<'_, '_>,
    new: &Image<'_>,
    options: &DiffOptions<'_>,
) -> Vec<StructChange> {
    let hotness: &Hotness = options
        .hotness
        .unwrap_or_else(|| crate::evidence::builtin());
    let asked = Asked::of(options);
    let pinned_struct = |name: &str| asked.pinned_struct(name);
    structs::changes(old.image, new, new.line_size, &pinned_struct, hotness)
}

/// What judging a build against OLD finds that another build shares when it holds
/// the first one's very layouts and its symbols in the same order under the same
/// names (a prediction that aligned objects): the struct changes (they read the
/// layouts, and name each struct's instances in symbol order) and the pairing (by
/// name: only the places differ, `Pairing::moved_to`).
pub struct Known<'a, 'd> {
    structs: Vec<StructChange>,
    pairing: pairing::Pairing<'a, 'd>,
}

impl<'a, 'd> Known<'a, 'd> {
    /// `new`'s struct changes and pairing against `old.image`.
    pub fn of(old: &OldSide<'a, 'd>, new: &'a Image<'d>, options: &DiffOptions<'_>) -> Self {
        let (structs, pairing) = rayon::join(
            || struct_changes(old, new, options),
            || pairing::pair_from(&old.keys, &new.symbols),
        );
        Known { structs, pairing }
    }
}

/// `judge_against`, with what the caller knows of `new` (`Known::of` a build whose
/// layouts, symbol names and symbol order `new` shares).
pub fn judge_knowing<'a, 'd>(
    old: &OldSide<'a, 'd>,
    new: &'a Image<'d>,
    options: &DiffOptions<'a>,
    known: Option<&Known<'a, 'd>>,
) -> Judgement<'a> {
    let line_size = new.line_size;
    let hotness: &'a Hotness = options
        .hotness
        .unwrap_or_else(|| crate::evidence::builtin());
    let asked = Asked::of(options);
    let pinned_sym = |s: &crate::model::Symbol<'_>| asked.pinned_symbol(s);
    let (listed_only, fails) = (asked.listed_only, |s| asked.fails(s));
    let (pairing, (mut structs, indexes)) = rayon::join(
        || match known {
            Some(k) => k.pairing.moved_to(&new.symbols),
            None => pairing::pair_from(&old.keys, &new.symbols),
        },
        || {
            rayon::join(
                || match known {
                    Some(k) => k.structs.clone(),
                    None => struct_changes(old, new, options),
                },
                || placement::Indexes::with_old(old.indexes.clone(), new, hotness),
            )
        },
    );
    let freqs = (&indexes.old_freq, &indexes.new_freq);
    super::structs::judge_lines(&mut structs, (old.image, new), freqs, line_size);
    let sides = placement::Sides {
        pairing: &pairing,
        old: old.image,
        new,
        line_size,
        hotness,
        ix: indexes,
    };
    let changes = judge_pairs(&sides, listed_only, &pinned_sym, &fails);
    let flagged = structs.iter().filter(|s| s.severity.flagged()).count()
        + changes
            .iter()
            .flatten()
            .filter(|c| judged_flagged(c))
            .count();
    let listed = Listed::of(changes);
    Judgement {
        flagged,
        structs,
        data: listed.data,
        percpu: listed.percpu,
        functions: listed.functions,
    }
}

/// Whether one judged change counts as flagged (`Marks::flagged`).
fn judged_flagged(c: &Judged<'_>) -> bool {
    match c {
        Judged::Data(_, d) => d.flagged,
        Judged::Function(f) => f.flagged,
        Judged::Counted(_, m) => m.flagged,
        Judged::Moved => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputFile;
    use crate::load::LoadOptions;

    /// The judgement's fields, as `Debug` spells them, the runs cleared (the judgement
    /// gives none).
    fn spelled(
        flagged: usize,
        structs: &[StructChange],
        rows: [&[Box<PlacementChange<'_>>]; 2],
        functions: &[Box<FunctionChange<'_>>],
    ) -> String {
        let data = |r: &[Box<PlacementChange<'_>>]| {
            r.iter()
                .map(|c| {
                    format!(
                        "{:?}",
                        PlacementChange {
                            run: None,
                            ..(**c).clone()
                        }
                    )
                })
                .collect::<Vec<_>>()
        };
        let functions: Vec<String> = functions
            .iter()
            .map(|f| {
                format!(
                    "{:?}",
                    FunctionChange {
                        run: None,
                        ..(**f).clone()
                    }
                )
            })
            .collect();
        unkeyed(&format!(
            "{flagged}\n{structs:?}\n{:?}\n{:?}\n{functions:?}",
            data(rows[0]),
            data(rows[1])
        ))
    }

    /// `text` with the number after each `key: ` (a pairing key id, `Tenant::key` and
    /// `Meeting::neighbour_key`) left out: `pair_from` numbers keys otherwise than
    /// `pair`, ids being only compared for equality and never shown.
    fn unkeyed(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find("key: ") {
            out.push_str(&rest[..i + 5]);
            rest = rest[i + 5..].trim_start_matches(|c: char| c.is_ascii_digit());
        }
        out.push_str(rest);
        out
    }

    /// `judge` gives exactly what `diff` gives of the same pair, with the options
    /// `suggest` passes and the defaults.
    pub(crate) fn assert_same(old: &Image<'_>, new: &Image<'_>, what: &str) {
        let link = crate::link::LinkMap::build(old);
        for listed_only in [false, true] {
            let options = DiffOptions {
                listed_only,
                old_link: Some(&link),
                ..DiffOptions::default()
            };
            let whole = diff(old, new, &options);
            let judged = judge(old, new, &options);
            assert_eq!(
                spelled(
                    judged.flagged,
                    &judged.structs,
                    [&judged.data, &judged.percpu],
                    &judged.functions
                ),
                spelled(
                    whole.flagged,
                    &whole.structs,
                    [&whole.data, &whole.percpu],
                    &whole.functions
                ),
                "{what}, listed_only {listed_only}"
            );
        }
    }

    /// Each fixture pair, and NEW against each of its predictions, judged as diffed.
    #[test]
    fn the_judgement_is_the_whole_diffs_on_the_fixtures() {
        let root = testdata!();
        let pairs = [
            ("old.elf", "new.elf"),
            ("suggest/old.elf", "suggest/new.elf"),
            ("suggest/structs.elf", "suggest/structs-new.elf"),
            ("predict/o2-base.elf", "predict/o2-align-data.elf"),
        ];
        for (a, b) in pairs {
            let (fa, fb) = (
                InputFile::open(&root.join(a)).unwrap(),
                InputFile::open(&root.join(b)).unwrap(),
            );
            let old = fa.load(&LoadOptions::default()).unwrap();
            let new = fb.load(&LoadOptions::default()).unwrap();
            assert_same(&old, &new, &format!("{a} -> {b}"));
            // As `suggest` judges a candidate: OLD against NEW with an object aligned.
            let Some(sym) = new.symbols.iter().find(|s| s.kind == SymbolKind::Object) else {
                continue;
            };
            let change = crate::whatif::Change::SymbolAlign {
                name: sym.name.to_string(),
                align: new.line_size,
            };
            if let Ok(p) = crate::whatif::predict(&new, &[change], &[]) {
                assert_same(
                    &old,
                    &p.image,
                    &format!("{a} -> {b} with {} aligned", sym.name),
                );
            }
        }
    }

    /// The same on a real pair: `JUDGE_OLD` and `JUDGE_NEW` (vmlinux files or
    /// snapshots), `cargo test --release -- --ignored judgement_is`.
    #[test]
    #[ignore = "needs JUDGE_OLD and JUDGE_NEW, two real builds"]
    fn the_judgement_is_the_whole_diffs_on_a_real_pair() {
        let (Some(a), Some(b)) = (std::env::var_os("JUDGE_OLD"), std::env::var_os("JUDGE_NEW"))
        else {
            panic!("set JUDGE_OLD and JUDGE_NEW");
        };
        let (fa, fb) = (
            InputFile::open(a.as_ref()).unwrap(),
            InputFile::open(b.as_ref()).unwrap(),
        );
        let old = fa.load(&LoadOptions::default()).unwrap();
        let new = fb.load(&LoadOptions::default()).unwrap();
        assert_same(&old, &new, "the real pair");
    }
}
