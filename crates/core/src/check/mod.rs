//! `layout-diff check`: rules that state what a layout must be (a struct's size, an
//! object alone on its lines, a group within one line) evaluated against a build.

pub mod eval;
pub mod rules;
