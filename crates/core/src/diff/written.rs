//! Which storage the kernel writes at run time, by where it lives and what it is:
//! writable sections and non-`const` objects, and the sleeping locks that by kernel
//! convention are taken on configuration paths only. The placement judgement and the
//! judgement of shared lines both ask it.

use crate::model::{CType, Symbol};

/// Data that can be written at run time: not in a read-only section, and the object
/// itself not `const` (a `const char *` variable is writable, a `char *const` is not).
pub(super) fn writable(s: &Symbol<'_>, ty: Option<&CType>) -> bool {
    !s.section.starts_with(".rodata")
        && !s.section.starts_with(".text")
        && !s.section.starts_with(".init.rodata")
        && !ty.is_some_and(|t| t.is_const)
}

/// A bare global sleeping lock (`DEFINE_MUTEX`, `DEFINE_SEMAPHORE`, `DECLARE_RWSEM`,
/// `DECLARE_WAIT_QUEUE_HEAD`, `DECLARE_COMPLETION`): taken in process context, by
/// kernel convention on configuration and registration paths, so not counted as a
/// neighbour written at run time (a struct that holds one still is). The types are
/// `conventions.toml`'s `sleeping_lock` entries.
pub(super) fn sleeping_lock(type_name: &str) -> bool {
    crate::evidence::conventions::conventions().is_sleeping_lock(type_name)
}
