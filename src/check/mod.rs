//! `layout-diff check`: rules that state what a layout must be (a struct's size, an
//! object alone on its lines, a group within one line) evaluated against a build, and
//! perf c2c reports mapped back to the objects and members on their hot lines.

pub mod c2c;
pub mod eval;
pub mod hotmap;
pub mod rules;
