//! layout-diff: which structs, globals, per-CPU variables and functions sit on which
//! cache lines of a vmlinux, and what moved between two builds.
//!
//! Stages: `input` (a file opened as its kind), `load` (ELF + DWARF or BTF into the
//! `model`; `snapshot` reads its own files), `layout` (pure line computations), `diff`
//! (two images into a report), `report` (renderers that compute nothing).

#![warn(missing_docs)]

#[cfg(test)]
#[macro_use]
mod fixtures;

pub mod access;
pub mod cache;
pub mod error;
pub mod evidence;
pub mod history;
pub mod input;
pub mod kernel;
pub mod layout;
pub mod link;
pub mod load;
pub mod model;
pub mod perf;
pub mod snapshot;
pub mod typed;

pub use error::{Error, Result};
pub use input::InputFile;
pub use load::{LoadOptions, StructFilter};
pub use model::Image;
pub mod check;
pub mod contention;
pub mod diff;
pub mod show;
pub mod suggest;
pub mod whatif;
