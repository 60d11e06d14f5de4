//! `storage.toml` read once: the classes, sections, ranges, types, sleeping locks and
//! noise prefixes, each entry with its reason and source. The classifier
//! (`storage.rs`) and the readers of symbols ask these tables and nothing else.

use std::sync::LazyLock;

use serde::Deserialize;

use super::classes::{Class, Cold};

/// The tables, shipped with layout-diff.
pub(super) const TABLE: &str = include_str!("storage.toml");

/// A class: how reports name it, and why it is a class.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassEntry {
    /// The class.
    pub name: Class,
    /// How reports name it (`boot-only`, `read-only after init`, ...).
    pub label: String,
    /// What storage of the class is, in one line.
    pub reason: String,
    /// Where the kernel sets it.
    pub source: String,
}

/// Storage classed by the name of its section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionEntry {
    /// The section name's beginning.
    pub prefix: String,
    /// The class it gives.
    pub class: Class,
    /// The kind of cold storage it is too, if any.
    #[serde(default)]
    pub cold: Option<Cold>,
    /// Why, in one line.
    pub reason: String,
    /// Where the kernel puts storage there.
    pub source: String,
}

/// Storage classed by lying between two linker-script symbols.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeEntry {
    /// The symbol where it starts (a boundary symbol the loader reads).
    pub start: String,
    /// The symbol where it ends (not included).
    pub end: String,
    /// The class it gives.
    pub class: Class,
    /// Why, in one line.
    pub reason: String,
    /// Where the linker script defines the symbols.
    pub source: String,
}

/// Storage classed by its type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeEntry {
    /// The C spelling, a leading `const ` left out.
    pub name: String,
    /// The class it gives.
    pub class: Class,
    /// What reports call the entries of its kind (`static keys`).
    pub group: String,
    /// The kind of cold storage it is too, if any.
    #[serde(default)]
    pub cold: Option<Cold>,
    /// Why, in one line.
    pub reason: String,
    /// Where the kernel defines the type.
    pub source: String,
}

/// A sleeping lock's type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    /// The C spelling, `volatile ` left out.
    pub name: String,
    /// Why, in one line.
    pub reason: String,
    /// Where the kernel defines it.
    pub source: String,
}

/// Symbol names that are no object and no function.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseEntry {
    /// The name's beginning.
    pub prefix: String,
    /// The padding placed before a function, whose size the ELF reader keeps.
    #[serde(default)]
    pub padding: bool,
    /// Why, in one line.
    pub reason: String,
    /// What makes such symbols.
    pub source: String,
}

/// The tables of `storage.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tables {
    /// The classes, as reports name them.
    pub class: Vec<ClassEntry>,
    /// Sections, in the order they are tried.
    pub section: Vec<SectionEntry>,
    /// Ranges between linker-script symbols.
    pub range: Vec<RangeEntry>,
    /// Types.
    #[serde(rename = "type")]
    pub types: Vec<TypeEntry>,
    /// Sleeping locks.
    pub sleeping_lock: Vec<LockEntry>,
    /// Noise prefixes.
    pub noise: Vec<NoiseEntry>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    // The shipped table is checked by a unit test; a mistake here is a bug.
    toml::from_str(TABLE).unwrap_or_else(|e| panic!("storage.toml: {e}"))
});

/// The shipped tables.
pub fn tables() -> &'static Tables {
    &TABLES
}

impl Class {
    /// How reports name the class: its `storage.toml` label (`boot-only`, ...).
    pub fn label(self) -> &'static str {
        match tables().class(self) {
            Some(e) => &e.label,
            None => "written at run time",
        }
    }
}

impl Tables {
    /// The entry of `class`, when the table has one (every class but `Written`).
    pub fn class(&self, class: Class) -> Option<&ClassEntry> {
        self.class.iter().find(|e| e.name == class)
    }

    /// Every entry as (table, pattern, reason, source), in the file's order.
    pub fn entries(&self) -> Vec<(&'static str, String, &str, &str)> {
        let mut out: Vec<(&'static str, String, &str, &str)> = Vec::new();
        for e in &self.class {
            out.push(("class", e.label.clone(), &e.reason, &e.source));
        }
        for e in &self.section {
            out.push(("section", e.prefix.clone(), &e.reason, &e.source));
        }
        for e in &self.range {
            let pattern = format!("{}..{}", e.start, e.end);
            out.push(("range", pattern, &e.reason, &e.source));
        }
        for e in &self.types {
            out.push(("type", e.name.clone(), &e.reason, &e.source));
        }
        for e in &self.sleeping_lock {
            out.push(("sleeping_lock", e.name.clone(), &e.reason, &e.source));
        }
        for e in &self.noise {
            out.push(("noise", e.prefix.clone(), &e.reason, &e.source));
        }
        out
    }
}
