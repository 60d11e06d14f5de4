//! The kernel's storage conventions, with one owner: which sections, linker-script
//! ranges and types say how storage is written (boot-only, read-only, read-mostly,
//! read-only after init, once, or written at run time), which types are sleeping
//! locks, and which symbol names are no object at all. They are tables
//! (`storage.toml`), each entry with its reason and source, and one classifier
//! (`Regions::classify`) answers "how is this storage written" with the entry that
//! decided it. It reads the model only; the readers of symbols, the evidence, the
//! diff, `suggest` and `show` ask it.

mod classes;
mod storage;
mod tables;

pub use classes::{Class, Cold};
pub use storage::{
    Decider, Region, Regions, Storage, is_boot_code, is_function_padding, noise, of_type, section,
    sleeping_lock, written_once,
};
pub use tables::{
    ClassEntry, LockEntry, NoiseEntry, RangeEntry, SectionEntry, Tables, TypeEntry, tables,
};

#[cfg(test)]
mod tests;
