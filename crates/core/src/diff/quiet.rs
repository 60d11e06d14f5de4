//! Boot-only and read-mostly storage: objects there are written once (at boot, or when
//! a static key is patched) or freed after boot, so they are never judged write-hot or
//! straddling. Recognised by section name where the linker kept it, by boundary symbols
//! where sub-sections were merged into `.data`/`.rodata`, and static keys by type.

use super::changes::QuietRegion;
use crate::model::{Image, Symbol};

pub const BOOT_ONLY: &str = "boot-only";
pub const RO_AFTER_INIT: &str = "read-only after init";
pub const READ_MOSTLY: &str = "read-mostly";

/// Section name prefixes and what they mean.
const SECTIONS: &[(&str, &str)] = &[
    (".init.", BOOT_ONLY),
    (".exit.", BOOT_ONLY),
    (".data..read_mostly", READ_MOSTLY),
    (".data..ro_after_init", RO_AFTER_INIT),
    ("__tracepoints", READ_MOSTLY),
];

/// Boundary symbol pairs (start, end) and what lies between.
const RANGES: &[(&str, &str, &str)] = &[
    ("__init_begin", "__init_end", BOOT_ONLY),
    (
        "__start_ro_after_init",
        "__end_ro_after_init",
        RO_AFTER_INIT,
    ),
    (crate::model::READ_MOSTLY_START, "_edata", READ_MOSTLY),
];

/// Type names of objects written only when the kernel patches code: static keys and
/// tracepoints (`DEFINE_STATIC_KEY_*`, `DEFINE_TRACE`), whose users sit in `__jump_table`.
const TYPES: &[&str] = &[
    "struct static_key",
    "struct static_key_true",
    "struct static_key_false",
    "struct static_key_false_deferred",
    "struct static_key_deferred",
    "struct tracepoint",
];

/// The quiet ranges of one image.
#[derive(Clone)]
pub struct Quiet {
    ranges: Vec<(u64, u64, &'static str)>,
    /// The boundary pairs found, as `start..end` names.
    found: Vec<String>,
}

impl Quiet {
    pub fn new(image: &Image<'_>) -> Self {
        let at = |n: &str| image.boundaries.iter().find(|b| b.0 == n).map(|b| b.1);
        let mut ranges = Vec::new();
        let mut found = Vec::new();
        for &(a, b, what) in RANGES {
            if let (Some(lo), Some(hi)) = (at(a), at(b))
                && lo < hi
            {
                ranges.push((lo, hi, what));
                found.push(format!("{a}..{b}"));
            }
        }
        Quiet { ranges, found }
    }

    /// Why `s` (of type `type_name`) is quiet, if it is.
    pub fn of(&self, s: &Symbol<'_>, type_name: Option<&str>) -> Option<&'static str> {
        if let Some(&(_, what)) = SECTIONS.iter().find(|(p, _)| s.section.starts_with(p)) {
            return Some(what);
        }
        if let Some(&(_, _, what)) = self
            .ranges
            .iter()
            .find(|(a, b, _)| (*a..*b).contains(&s.address))
        {
            return Some(what);
        }
        let t = crate::model::trim_leading(type_name?, "const ");
        TYPES.contains(&t).then_some(READ_MOSTLY)
    }

    /// What the report says it treats as quiet.
    pub fn describe(&self) -> Vec<QuietRegion> {
        let mut out: Vec<QuietRegion> = SECTIONS
            .iter()
            .map(|(p, what)| QuietRegion {
                what,
                from: format!("sections {p}*"),
                start: None,
                end: None,
            })
            .collect();
        for (&(lo, hi, what), from) in self.ranges.iter().zip(&self.found) {
            out.push(QuietRegion {
                what,
                from: from.clone(),
                start: Some(lo),
                end: Some(hi),
            });
        }
        out.push(QuietRegion {
            what: READ_MOSTLY,
            from: "static keys and tracepoints (by type)".into(),
            start: None,
            end: None,
        });
        out
    }
}
