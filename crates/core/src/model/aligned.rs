//! What the link model says aligned each object of a build, as a type of the model
//! rather than of `link`: a snapshot stores it beside the symbols it describes, since
//! reading it back costs less than laying every output section out again.

use serde::{Deserialize, Serialize};

/// What the model says aligned one object: its own alignment, and when it starts
/// its input section, the section's (its most-aligned member's, or the linker
/// script's boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alignment {
    /// The object's own alignment.
    pub own: u64,
    /// The source asked for `own` (`DW_AT_alignment`).
    pub explicit: bool,
    /// Its input section's alignment, when the object starts it.
    pub input: Option<u64>,
}

impl Alignment {
    /// What padding before the object can be: up to this minus one byte.
    pub fn before(&self) -> u64 {
        self.input.map_or(self.own, |i| i.max(self.own))
    }
}

/// The link model's alignment of every symbol of an image, by symbol index, as it
/// was when stored, with the line size it was found at (a line-aligned input section
/// is one of its rules).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAlignments {
    /// The image's line size when they were found.
    pub line_size: u64,
    /// One per symbol (`None` for a symbol the link model does not place).
    pub by_symbol: Vec<Option<Alignment>>,
}
