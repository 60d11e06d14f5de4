//! Pure computations on the model: where an object falls on cache lines, which other
//! objects share its lines, and pahole-style holes. The line size is always a parameter.

pub mod groups;
pub mod holes;
mod laid;
mod placement;

pub use groups::{Group, groups};
pub use laid::{LaidMember, LaidStruct, lay, sum_bitfield_bits, sum_members};

pub use placement::{LineTenants, Placement, SpaceIndex, place};
