//! NEW as every candidate fix is predicted from: its variables and link model found
//! once for all the candidates, not once per prediction.

use crate::link::LinkMap;
use crate::model::{Image, SymbolVariables};
use crate::whatif::{Change, PredictError, Prediction, predict_from};

/// NEW with what predicting a change on it needs; reads as the image it holds.
pub struct Base<'b, 'd> {
    image: &'b Image<'d>,
    vars: SymbolVariables<'b, 'd>,
    link: LinkMap<'d>,
}

impl<'b, 'd> Base<'b, 'd> {
    /// `image`'s variables and link model.
    pub fn new(image: &'b Image<'d>) -> Self {
        let vars = image.variables_of_symbols();
        let link = LinkMap::build_from(image, &vars);
        Base { image, vars, link }
    }

    /// `whatif::predict(image, changes, &[])`, from the model found once.
    pub fn predict(&self, changes: &[Change]) -> Result<Prediction<'d>, PredictError> {
        predict_from(self.image, &self.link, &self.vars, changes, &[], None)
    }
}

impl<'d> std::ops::Deref for Base<'_, 'd> {
    type Target = Image<'d>;

    fn deref(&self) -> &Image<'d> {
        self.image
    }
}
