//! The pair as every candidate fix is predicted and judged: NEW's variables and link
//! model, and OLD's pairing keys and indexes, found once for all the candidates, not
//! once per prediction and per diff; and NEW's struct changes and pairing with OLD,
//! which a candidate that changes no struct and keeps the symbols' order shares.

use std::sync::{Arc, OnceLock};

use crate::diff::{DiffOptions, Judgement, Known, OldSide, judge_knowing};
use crate::link::LinkMap;
use crate::model::{Image, SymbolVariables};
use crate::whatif::{Change, PredictError, Prediction, predict_changed};

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
            || OldSide::new(old),
        );
        Base {
            image,
            vars,
            link,
            old,
            options,
            known: OnceLock::new(),
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
}

/// Whether `predicted` holds `image`'s very layouts (shared, not equal copies) and its
/// symbols in the same order (by the storage of their names, units and files, their
/// space and kind: what the pairing keys them by), so that the struct changes and the
/// pairings of the two against one build are the same.
fn shares_layouts_and_order(image: &Image<'_>, predicted: &Image<'_>) -> bool {
    // What the pairing keys a symbol by, by the storage of its strings.
    let named = |s: &crate::model::Symbol<'_>| {
        let at = |t: Option<&str>| t.map(|t| (t.as_ptr(), t.len()));
        (
            (s.name.as_ptr(), s.name.len()),
            s.space,
            s.kind,
            at(s.unit),
            at(s.file),
        )
    };
    image.structs.len() == predicted.structs.len()
        && image
            .structs
            .iter()
            .zip(&predicted.structs)
            .all(|(a, b)| Arc::ptr_eq(a, b))
        && image.symbols.len() == predicted.symbols.len()
        && image
            .symbols
            .iter()
            .zip(&predicted.symbols)
            .all(|(a, b)| named(a) == named(b))
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
            let whole = OldSide::new(&old);
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
}
