//! The pair as every candidate fix is predicted and judged: NEW's variables and link
//! model, and OLD's pairing keys and indexes, found once for all the candidates, not
//! once per prediction and per diff.

use crate::diff::{DiffOptions, Judgement, OldSide, judge_against};
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
}

impl<'b, 'd> Base<'b, 'd> {
    /// NEW's (`image`'s) variables and link model, and OLD's keys and indexes.
    pub fn new(old: &'b Image<'d>, image: &'b Image<'d>) -> Self {
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
        }
    }

    /// `diff::judge(old, predicted, options)`, from OLD's keys and indexes found once.
    pub fn judge<'p>(
        &'p self,
        predicted: &'p Image<'d>,
        options: &DiffOptions<'p>,
    ) -> Judgement<'p> {
        judge_against(&self.old, predicted, options)
    }

    /// `whatif::predict(image, changes, &[])`, from the model found once, without the
    /// reproduction counts (a layout of their own that no candidate reads).
    pub fn predict(&self, changes: &[Change]) -> Result<Prediction<'d>, PredictError> {
        predict_changed(self.image, &self.link, &self.vars, changes)
    }
}

impl<'d> std::ops::Deref for Base<'_, 'd> {
    type Target = Image<'d>;

    fn deref(&self) -> &Image<'d> {
        self.image
    }
}
