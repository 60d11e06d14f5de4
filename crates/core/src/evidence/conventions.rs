//! The kernel's conventions of hot and cold storage, as data: `conventions.toml`
//! lists the types whose storage many CPUs write, the per-CPU hot area and the cold
//! types, sections and names, each entry with its reason and its source, as
//! `known-hot.toml` does for named objects (how storage is written, sleeping locks
//! among it, is the `kernel` module's). This file reads the table once
//! and answers the questions the diff and `suggest` ask of it.
//!
//! Type spellings are matched whole, never by a part: a hot type by its C spelling
//! (qualifiers and array dimensions left out), exactly or by a glob (`globset`'s syntax, `*` any run of characters);
//! cold types by their struct's name exactly or by its ending; cold names by their
//! beginning.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, Anchored, Input, MatchKind, StartKind};
use globset::{Glob, GlobSet, GlobSetBuilder};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;

use super::Cold;

/// The table, shipped with layout-diff.
const TABLE: &str = include_str!("conventions.toml");

/// One entry of any table: what it matches, why, and where that is written down.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// An exact name or spelling.
    #[serde(default)]
    pub name: Option<String>,
    /// A glob over the spelling (hot types).
    #[serde(default)]
    pub glob: Option<String>,
    /// A name's beginning (cold names).
    #[serde(default)]
    pub prefix: Option<String>,
    /// A struct name's ending (cold types).
    #[serde(default)]
    pub suffix: Option<String>,
    /// The section the name must be in too (cold names).
    #[serde(default)]
    pub section: Option<String>,
    /// Why it is cold (cold tables).
    #[serde(default)]
    pub kind: Option<Cold>,
    /// Why it is hot or cold, in one line.
    pub reason: String,
    /// Where that is written down: a kernel file, commit or document.
    pub source: String,
}

/// The tables of `conventions.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tables {
    hot_type: Vec<Entry>,
    percpu_hot: Vec<Entry>,
    cold_type: Vec<Entry>,
    cold_type_suffix: Vec<Entry>,
    cold_section: Vec<Entry>,
    cold_name: Vec<Entry>,
    cold_prefix: Vec<Entry>,
}

/// Why the table does not read (a bug: a unit test reads the shipped one).
#[derive(Debug, thiserror::Error)]
enum TableError {
    /// Not TOML, or not the tables' fields.
    #[error("{0}")]
    Toml(toml::de::Error),
    /// A glob that does not compile.
    #[error("{0}")]
    Glob(globset::Error),
    /// A hot type with neither or both of a name and a glob (its reason given).
    #[error("hot_type {0:?}: give a name or a glob")]
    Pattern(String),
    /// The cold prefixes do not build into one matcher.
    #[error("cold_prefix: {0}")]
    Prefixes(aho_corasick::BuildError),
}

/// The conventions, read and indexed: the diff asks the cold tables of every object
/// it judges and of each of their neighbours, tens of thousands of times a run.
#[derive(Debug)]
pub struct Conventions {
    tables: Tables,
    hot_exact: FxHashSet<String>,
    hot_globs: GlobSet,
    /// `cold_section` and `cold_type` by name: the first entry of each name's kind.
    cold_sections: FxHashMap<String, Option<Cold>>,
    cold_structs: FxHashMap<String, Option<Cold>>,
    /// `cold_prefix`: every prefix, matched at a name's start, the first entry that
    /// matches winning; and each pattern's kind.
    cold_prefixes: AhoCorasick,
    prefix_kinds: Vec<Option<Cold>>,
}

static CONVENTIONS: LazyLock<Conventions> = LazyLock::new(|| {
    // The shipped table is checked by a unit test; a mistake here is a bug.
    Conventions::parse(TABLE).unwrap_or_else(|e| panic!("conventions.toml: {e}"))
});

/// The shipped conventions.
pub fn conventions() -> &'static Conventions {
    &CONVENTIONS
}

impl Conventions {
    fn parse(text: &str) -> Result<Conventions, TableError> {
        let tables: Tables = toml::from_str(text).map_err(TableError::Toml)?;
        let mut hot_exact = FxHashSet::default();
        let mut globs = GlobSetBuilder::new();
        for e in &tables.hot_type {
            match (&e.name, &e.glob) {
                (Some(n), None) => {
                    hot_exact.insert(n.clone());
                }
                (None, Some(g)) => {
                    globs.add(Glob::new(g).map_err(TableError::Glob)?);
                }
                _ => return Err(TableError::Pattern(e.reason.clone())),
            }
        }
        let hot_globs = globs.build().map_err(TableError::Glob)?;
        let by_name = |entries: &[Entry]| {
            let mut map: FxHashMap<String, Option<Cold>> = FxHashMap::default();
            for e in entries {
                if let Some(n) = &e.name {
                    map.entry(n.clone()).or_insert(e.kind);
                }
            }
            map
        };
        let prefixed: Vec<&Entry> = tables
            .cold_prefix
            .iter()
            .filter(|e| e.prefix.is_some())
            .collect();
        let cold_prefixes = AhoCorasick::builder()
            .start_kind(StartKind::Anchored)
            .match_kind(MatchKind::LeftmostFirst)
            .build(prefixed.iter().filter_map(|e| e.prefix.as_deref()))
            .map_err(TableError::Prefixes)?;
        Ok(Conventions {
            cold_sections: by_name(&tables.cold_section),
            cold_structs: by_name(&tables.cold_type),
            prefix_kinds: prefixed.iter().map(|e| e.kind).collect(),
            cold_prefixes,
            tables,
            hot_exact,
            hot_globs,
        })
    }

    /// Every entry, with the table it is in.
    pub fn entries(&self) -> Vec<(&'static str, &Entry)> {
        let t = &self.tables;
        [
            ("hot_type", &t.hot_type),
            ("percpu_hot", &t.percpu_hot),
            ("cold_type", &t.cold_type),
            ("cold_type_suffix", &t.cold_type_suffix),
            ("cold_section", &t.cold_section),
            ("cold_name", &t.cold_name),
            ("cold_prefix", &t.cold_prefix),
        ]
        .into_iter()
        .flat_map(|(table, entries)| entries.iter().map(move |e| (table, e)))
        .collect()
    }

    /// Whether storage of the type spelled `c` is written by many CPUs by its kind
    /// (an atomic, a refcount, a lock, a per-CPU counter): the spelling without its
    /// qualifiers and array dimensions is a `hot_type` entry's name or matches its glob.
    pub fn is_hot_type(&self, c: &str) -> bool {
        let bare = bare_type(c);
        self.hot_exact.contains(bare) || self.hot_globs.is_match(bare)
    }

    /// Whether the object named `name` is the per-CPU hot area by its name.
    pub fn is_percpu_hot(&self, name: &str) -> bool {
        self.tables
            .percpu_hot
            .iter()
            .any(|e| e.name.as_deref() == Some(name))
    }

    /// The cold kind of `section`, when its objects are cold by it.
    pub fn cold_section(&self, section: &str) -> Option<Cold> {
        self.cold_sections.get(section).copied().flatten()
    }

    /// The cold kind of struct `name` (no `struct`), exactly or by its ending.
    pub fn cold_struct(&self, name: &str) -> Option<Cold> {
        match self.cold_structs.get(name) {
            Some(&kind) => kind,
            None => self
                .tables
                .cold_type_suffix
                .iter()
                .find(|e| e.suffix.as_deref().is_some_and(|s| name.ends_with(s)))
                .and_then(|e| e.kind),
        }
    }

    /// The cold kind of an object named `base` (before any `.N`) in `section`, by a
    /// name the macros generate or its beginning.
    pub fn cold_name(&self, base: &str, section: &str) -> Option<Cold> {
        let named = self.tables.cold_name.iter().find(|e| {
            e.name.as_deref() == Some(base) && e.section.as_deref().is_none_or(|s| s == section)
        });
        match named {
            Some(e) => e.kind,
            None => self
                .cold_prefixes
                .find(Input::new(base).anchored(Anchored::Yes))
                .and_then(|m| self.prefix_kinds[m.pattern().as_usize()]),
        }
    }
}

/// A type's spelling without its leading qualifiers and its array dimensions:
/// `const atomic_t[4]` is `atomic_t`.
fn bare_type(c: &str) -> &str {
    let mut c = c;
    loop {
        use crate::model::trim_leading;
        let rest = trim_leading(trim_leading(c, "const "), "volatile ");
        if rest.len() == c.len() {
            break;
        }
        c = rest;
    }
    c.split('[').next().unwrap_or(c).trim_end()
}

#[cfg(test)]
mod tests;
