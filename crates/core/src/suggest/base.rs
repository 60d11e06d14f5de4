//! The pair as every candidate fix is predicted and judged: NEW's variables and link
//! model, and OLD's pairing keys and indexes, found once for all the candidates, not
//! once per prediction and per diff; NEW's struct changes and pairing with OLD, which
//! a candidate that changes no struct and keeps the symbols' order shares; and NEW's
//! symbols found by name and spelled by section once, not once per candidate.

use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;

use crate::diff::{DiffOptions, Judgement, Known, OldSide, judge_knowing};
use crate::link::LinkMap;
use crate::model::{Image, Space, Symbol, SymbolKind, SymbolVariables};
use crate::whatif::{Change, PredictError, Prediction, predict_changed};

/// Symbols of one section by index, with their qualified names, sorted by name and
/// place (`Base::shifts`).
type Spelled = Arc<[(u32, String)]>;

/// NEW with what predicting a change on it needs, and OLD with what judging a
/// prediction against it needs; reads as NEW.
pub struct Base<'b, 'd> {
    image: &'b Image<'d>,
    vars: SymbolVariables<'b, 'd>,
    link: LinkMap<'d>,
    old: OldSide<'b, 'd>,
    /// What every candidate is judged with.
    options: &'b DiffOptions<'b>,
    /// NEW's struct changes and pairing against OLD, found the first time a candidate
    /// can use them.
    known: OnceLock<Known<'b, 'd>>,
    /// The index of NEW's first object that answers to a name, by the name asked
    /// (`object_answering`).
    answering: Mutex<FxHashMap<String, Option<u32>>>,
    /// Whether any of NEW's symbols in a space answers to a name (`any_answering`).
    in_space: Mutex<FxHashMap<(Space, String), bool>>,
    /// NEW's symbols of one kind, space and section, by index, with their qualified
    /// names: what `shifts` compares each candidate's prediction with.
    spelled: Mutex<FxHashMap<(SymbolKind, Space, String), Spelled>>,
}

impl<'b, 'd> Base<'b, 'd> {
    /// NEW's (`image`'s) variables and link model, and OLD's keys and indexes; every
    /// candidate is judged with `options`.
    pub fn new(old: &'b Image<'d>, image: &'b Image<'d>, options: &'b DiffOptions<'b>) -> Self {
        let ((vars, link), old) = rayon::join(
            || {
                let vars = image.variables_of_symbols();
                let link = LinkMap::build_from(image, &vars);
                (vars, link)
            },
            || {
                let hotness = options
                    .hotness
                    .unwrap_or_else(|| crate::evidence::builtin());
                OldSide::new(old, hotness)
            },
        );
        Base {
            image,
            vars,
            link,
            old,
            options,
            known: OnceLock::new(),
            answering: Mutex::default(),
            in_space: Mutex::default(),
            spelled: Mutex::default(),
        }
    }

    /// `diff::judge(old, predicted, options)`, from OLD's keys and indexes found once.
    /// A prediction that shares every layout of NEW and the names and order of its
    /// symbols has NEW's struct changes and pairing (`Known`): those are found once.
    pub fn judge<'p>(&'p self, predicted: &'p Image<'d>) -> Judgement<'p> {
        let known = shares_layouts_and_order(self.image, predicted).then(|| {
            self.known
                .get_or_init(|| Known::of(&self.old, self.image, self.options))
        });
        judge_knowing(&self.old, predicted, self.options, known)
    }

    /// `whatif::predict(image, changes, &[])`, from the model found once, without the
    /// reproduction counts (a layout of their own that no candidate reads).
    pub fn predict(&self, changes: &[Change]) -> Result<Prediction<'d>, PredictError> {
        predict_changed(self.image, &self.link, &self.vars, changes)
    }

    /// The first of NEW's objects that answers to `name`: `symbols.iter().find(|s|
    /// s.kind == SymbolKind::Object && s.answers_to(name))`, found once per name (the
    /// candidates ask for the same few, and each ask was a scan of every symbol). The
    /// lock is not held while scanning: two threads asking for one new name both scan,
    /// and find the same.
    pub fn object_answering(&self, name: &str) -> Option<&'b Symbol<'d>> {
        let lock = || self.answering.lock().unwrap_or_else(|e| e.into_inner());
        let symbols: &'b [Symbol<'d>] = &self.image.symbols;
        if let Some(&found) = lock().get(name) {
            return found.map(|i| &symbols[i as usize]);
        }
        // The kind first: it passes over most symbols without spelling a name.
        let found = (0u32..)
            .zip(symbols)
            .find(|(_, s)| s.kind == SymbolKind::Object && s.answers_to(name))
            .map(|(i, _)| i);
        lock().insert(name.to_string(), found);
        found.map(|i| &symbols[i as usize])
    }

    /// Whether any of NEW's symbols in `space` answers to `name`: `symbols.iter().any(|s|
    /// s.space == space && s.answers_to(name))`, C symbols asked first (a Rust symbol
    /// is demangled to be asked, a tenth of `suggest` on a 7.x kernel when it was
    /// asked of all of them for each name), and the answer kept per space and name.
    pub fn any_answering(&self, name: &str, space: Space) -> bool {
        let lock = || self.in_space.lock().unwrap_or_else(|e| e.into_inner());
        let key = (space, name.to_string());
        if let Some(&found) = lock().get(&key) {
            return found;
        }
        let symbols = &self.image.symbols;
        let rust = |s: &Symbol<'_>| crate::model::rust_prefixed(s.name);
        let asked = |s: &Symbol<'_>| s.space == space && s.answers_to(name);
        let found = symbols.iter().any(|s| !rust(s) && asked(s))
            || symbols.iter().any(|s| rust(s) && asked(s));
        lock().insert(key, found);
        found
    }

    /// How many symbols of one kind in `section` (`where_`: kind, space, section) other
    /// than those named `changed` move from NEW to `after`, and the largest move: the
    /// symbols matched by qualified name and, among equal names, by place order.
    /// NEW's names are spelled and sorted once per section; a prediction that holds
    /// NEW's symbols in NEW's order (every candidate that aligns or moves objects)
    /// takes that order, sorting again only the runs of equal names by its places.
    pub fn shifts(
        &self,
        after: &Image<'_>,
        where_: (SymbolKind, Space, &str),
        changed: &[&str],
    ) -> (usize, i64) {
        let spelled = self.spelled(where_);
        let new = &self.image.symbols;
        let kept = |i: u32| !changed.contains(&new[i as usize].name);
        let before: Vec<(&str, u64)> = spelled
            .iter()
            .filter(|(i, _)| kept(*i))
            .map(|(i, q)| (q.as_str(), new[*i as usize].place))
            .collect();
        if !same_symbols(self.image, after) {
            let owned = super::spellings(after, where_, changed);
            return super::count_shifts(&before, &super::sorted(&owned));
        }
        let mut moved: Vec<(&str, u64)> = spelled
            .iter()
            .filter(|(i, _)| kept(*i))
            .map(|(i, q)| (q.as_str(), after.symbols[*i as usize].place))
            .collect();
        for run in moved.chunk_by_mut(|a, b| a.0 == b.0) {
            run.sort_unstable();
        }
        super::count_shifts(&before, &moved)
    }

    /// NEW's symbols of kind, space and section `where_`, by index, with their
    /// qualified names, sorted by name and place.
    fn spelled(&self, where_: (SymbolKind, Space, &str)) -> Spelled {
        let lock = || self.spelled.lock().unwrap_or_else(|e| e.into_inner());
        let (kind, space, section) = where_;
        let key = (kind, space, section.to_string());
        if let Some(found) = lock().get(&key) {
            return Arc::clone(found);
        }
        let symbols = &self.image.symbols;
        let mut found: Vec<(u32, String)> = (0u32..)
            .zip(symbols)
            .filter(|(_, s)| s.kind == kind && s.space == space && s.section == section)
            .map(|(i, s)| (i, s.qualified_name()))
            .collect();
        found.sort_by(|(i, a), (j, b)| {
            (a, symbols[*i as usize].place).cmp(&(b, symbols[*j as usize].place))
        });
        let found: Spelled = found.into();
        lock().insert(key, Arc::clone(&found));
        found
    }
}

/// Whether `predicted` holds `image`'s very layouts (shared, not equal copies) and its
/// symbols in the same order (by the storage of their names, units and files, their
/// space and kind: what the pairing keys them by), so that the struct changes and the
/// pairings of the two against one build are the same.
fn shares_layouts_and_order(image: &Image<'_>, predicted: &Image<'_>) -> bool {
    // What the pairing keys a symbol by, by the storage of its strings.
    let named = |s: &Symbol<'_>| (at(Some(s.name)), s.space, s.kind, at(s.unit), at(s.file));
    image.structs.len() == predicted.structs.len()
        && image
            .structs
            .iter()
            .zip(&predicted.structs)
            .all(|(a, b)| Arc::ptr_eq(a, b))
        && same_order(image, predicted, named)
}

/// Whether `predicted` holds `image`'s symbols in the same order, each with the same
/// kind, space, section, binding and names (by the storage of its strings): then
/// symbol `i` of one is symbol `i` of the other, at a place of its own, and spells the
/// same qualified name.
fn same_symbols(image: &Image<'_>, predicted: &Image<'_>) -> bool {
    same_order(image, predicted, |s| {
        (
            at(Some(s.name)),
            (s.kind, s.space, s.binding),
            at(Some(s.section)),
            at(s.file),
        )
    })
}

/// A string by its storage (where it is, how long), for comparing names shared by
/// reference.
fn at(t: Option<&str>) -> Option<(*const u8, usize)> {
    t.map(|t| (t.as_ptr(), t.len()))
}

/// Whether the two builds hold as many symbols, pairwise equal by `key`.
fn same_order<K: PartialEq>(
    image: &Image<'_>,
    predicted: &Image<'_>,
    key: impl Fn(&Symbol<'_>) -> K,
) -> bool {
    image.symbols.len() == predicted.symbols.len()
        && image
            .symbols
            .iter()
            .zip(&predicted.symbols)
            .all(|(a, b)| key(a) == key(b))
}

impl<'d> std::ops::Deref for Base<'_, 'd> {
    type Target = Image<'d>;

    fn deref(&self) -> &Image<'d> {
        self.image
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::judge_against;
    use crate::input::InputFile;
    use crate::load::LoadOptions;
    use crate::model::SymbolKind;

    /// What a judgement says, its changes spelled out.
    fn said(j: &Judgement<'_>) -> (usize, String, String, [usize; 3]) {
        (
            j.flagged,
            format!("{:?}", j.structs),
            format!("{:?} {:?}", j.data, j.percpu),
            [j.data.len(), j.percpu.len(), j.functions.len()],
        )
    }

    /// A candidate that aligns an object shares NEW's layouts and symbol order, and is
    /// judged with NEW's struct changes and pairing: what judging it whole gives. One
    /// that resizes a struct does not share them, and is judged whole.
    #[test]
    fn a_candidate_sharing_new_layouts_is_judged_as_judged_whole() {
        let root = testdata!();
        let pairs = [
            ("old.elf", "new.elf"),
            ("suggest/old.elf", "suggest/new.elf"),
            ("suggest/structs.elf", "suggest/structs-new.elf"),
        ];
        let mut shared = 0;
        for (a, b) in pairs {
            let open = |f: &str| InputFile::open(&root.join(f)).unwrap();
            let (fa, fb) = (open(a), open(b));
            let old = fa.load(&LoadOptions::default()).unwrap();
            let new = fb.load(&LoadOptions::default()).unwrap();
            let link = LinkMap::build(&old);
            let options = DiffOptions {
                old_link: Some(&link),
                ..DiffOptions::default()
            };
            let base = Base::new(&old, &new, &options);
            let whole = OldSide::new(&old, crate::evidence::builtin());
            for sym in new
                .symbols
                .iter()
                .filter(|s| s.kind == SymbolKind::Object)
                .take(3)
            {
                let change = Change::SymbolAlign {
                    name: sym.qualified_name(),
                    align: new.line_size,
                };
                let Ok(p) = base.predict(&[change]) else {
                    continue;
                };
                assert!(
                    shares_layouts_and_order(&new, &p.image),
                    "{a} -> {b}: {}",
                    sym.name
                );
                shared += 1;
                assert_eq!(
                    said(&base.judge(&p.image)),
                    said(&judge_against(&whole, &p.image, &options)),
                    "{a} -> {b} with {} aligned",
                    sym.name
                );
            }
            let Some(s) = new.structs.iter().find(|s| !s.name.is_empty()) else {
                continue;
            };
            let grown = Change::Resize {
                name: s.name.to_string(),
                size: crate::whatif::Size::Grow(8),
            };
            if let Ok(p) = base.predict(&[grown]) {
                assert!(
                    !shares_layouts_and_order(&new, &p.image),
                    "{a} -> {b}: {}",
                    s.name
                );
            }
        }
        assert!(shared >= 6, "{shared} candidates shared NEW's layouts");
    }

    /// What `Base` finds once for all the candidates is what asking the image each
    /// time finds: the first object answering to a name, whether any symbol of a space
    /// answers to it, and the shifts of a prediction that keeps NEW's symbols (sorted
    /// once) and of one that does not (NEW against OLD).
    #[test]
    fn what_base_finds_once_is_what_each_ask_finds() {
        use crate::model::Space;
        let root = testdata!();
        let open = |f: &str| InputFile::open(&root.join(f)).unwrap();
        let (fa, fb) = (open("suggest/old.elf"), open("suggest/new.elf"));
        let old = fa.load(&LoadOptions::default()).unwrap();
        let new = fb.load(&LoadOptions::default()).unwrap();
        let options = DiffOptions::default();
        let base = Base::new(&old, &new, &options);
        let mut asked = 0;
        let mut moved = Vec::new();
        for sym in new.symbols.iter().filter(|s| s.kind == SymbolKind::Object) {
            let name = sym.qualified_name();
            let first = new
                .symbols
                .iter()
                .find(|s| s.kind == SymbolKind::Object && s.answers_to(&name));
            // Asked twice: found, then remembered.
            for _ in 0..2 {
                assert!(std::ptr::eq(
                    base.object_answering(&name).unwrap(),
                    first.unwrap()
                ));
                for space in [Space::Global, Space::Percpu] {
                    let any = new
                        .symbols
                        .iter()
                        .any(|s| s.space == space && s.answers_to(&name));
                    assert_eq!(base.any_answering(&name, space), any, "{name} {space:?}");
                }
            }
            asked += 1;
            let Ok(p) = base.predict(&[Change::SymbolAlign {
                name: name.clone(),
                align: new.line_size,
            }]) else {
                continue;
            };
            let where_ = (SymbolKind::Object, sym.space, sym.section);
            let (by_base, by_image) = (
                base.shifts(&p.image, where_, &[sym.name]),
                super::super::shifts(&new, &p.image, where_, &[sym.name]),
            );
            assert_eq!(by_base, by_image, "{name}");
            assert_eq!(
                base.shifts(&old, where_, &[]),
                super::super::shifts(&new, &old, where_, &[])
            );
            moved.push((name, by_base));
        }
        assert!(base.object_answering("no_such_object").is_none());
        assert_eq!(asked, 9);
        // Aligning nr_threads moves six other objects of its section, by at most a line.
        let some: Vec<_> = moved.iter().filter(|(_, m)| m.0 > 0).collect();
        assert_eq!(
            format!("{some:?}"),
            concat!(
                r#"[("nr_threads", (6, 64)), ("sysctl_x", (4, 64)), "#,
                r#"("jiffies_64", (2, 64)), ("rm_lost", (1, 64))]"#
            )
        );
    }
}
