//! The known-hot list: objects, struct types, members and functions that kernel
//! engineers know are hot, each with a reason and a source. Built in from
//! `known-hot.toml`; `--hot-list FILE` adds entries or replaces built-in ones.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// The built-in list.
const BUILTIN: &str = include_str!("known-hot.toml");

/// One entry: what is hot, why, and where that is written down.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KnownEntry {
    /// An object's or function's symbol name, a struct's name without `struct`, or
    /// `struct.member` for a member.
    pub name: String,
    /// Why it is hot, in one line.
    pub reason: String,
    /// Where that is written down (a kernel commit, file or document).
    pub source: String,
}

/// A list file: one array of tables per kind.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListFile {
    #[serde(default)]
    object: Vec<KnownEntry>,
    #[serde(default, rename = "type")]
    type_: Vec<KnownEntry>,
    #[serde(default)]
    member: Vec<KnownEntry>,
    #[serde(default)]
    function: Vec<KnownEntry>,
}

/// The entries of each kind by name.
#[derive(Debug, Default)]
pub struct KnownList {
    objects: FxHashMap<String, KnownEntry>,
    types: FxHashMap<String, KnownEntry>,
    /// By `struct.member`.
    members: FxHashMap<String, KnownEntry>,
    functions: FxHashMap<String, KnownEntry>,
    /// Structs with at least one member entry.
    member_types: FxHashSet<String>,
}

/// Why a known-hot list is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnownListError {
    /// Not TOML, or not the list's fields; the line when TOML knows it.
    #[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    Toml {
        /// The line the mistake is on, counted from 1.
        line: Option<usize>,
        /// TOML's words for it.
        message: String,
    },
    /// An entry whose name, reason or source is empty.
    #[error("[[{kind}]] {name:?}: empty {field}")]
    Empty {
        /// The table the entry is in: `object`, `type`, `member` or `function`.
        kind: &'static str,
        /// The entry's name.
        name: String,
        /// The empty field.
        field: &'static str,
    },
    /// A `[[member]]` entry not named `struct.member`.
    #[error("[[member]] {name:?}: a member is named struct.member")]
    MemberName {
        /// The entry's name.
        name: String,
    },
}

impl KnownList {
    /// The list shipped with layout-diff.
    pub fn builtin() -> Self {
        // The built-in file is checked by a unit test; a parse error here is a bug.
        Self::parse(BUILTIN).unwrap_or_else(|e| panic!("built-in known-hot list: {e}"))
    }

    /// Parses a list in `known-hot.toml`'s format: every entry needs a non-empty
    /// `name`, `reason` and `source`, and a member's name is `struct.member`.
    pub fn parse(text: &str) -> Result<Self, KnownListError> {
        let file: ListFile = toml::from_str(text).map_err(|e| KnownListError::Toml {
            line: e.span().map(|s| text[..s.start].matches('\n').count() + 1),
            message: e.message().to_string(),
        })?;
        let mut list = KnownList::default();
        for (kind, entries) in [
            ("object", file.object),
            ("type", file.type_),
            ("member", file.member),
            ("function", file.function),
        ] {
            for e in entries {
                for (field, value) in [
                    ("name", &e.name),
                    ("reason", &e.reason),
                    ("source", &e.source),
                ] {
                    if value.trim().is_empty() {
                        return Err(KnownListError::Empty {
                            kind,
                            name: e.name.clone(),
                            field,
                        });
                    }
                }
                if kind == "member" && !e.name.contains('.') {
                    return Err(KnownListError::MemberName { name: e.name });
                }
                list.insert(kind, e);
            }
        }
        Ok(list)
    }

    fn insert(&mut self, kind: &str, e: KnownEntry) {
        let map = match kind {
            "object" => &mut self.objects,
            "type" => &mut self.types,
            "member" => {
                if let Some((t, _)) = e.name.split_once('.') {
                    self.member_types.insert(t.to_string());
                }
                &mut self.members
            }
            _ => &mut self.functions,
        };
        map.insert(e.name.clone(), e);
    }

    /// Adds `other`'s entries; an entry of the same kind and name replaces this one's.
    pub fn extend(&mut self, other: KnownList) {
        for (kind, map) in [
            ("object", other.objects),
            ("type", other.types),
            ("member", other.members),
            ("function", other.functions),
        ] {
            for (_, e) in map {
                self.insert(kind, e);
            }
        }
    }

    /// The entry for data object `name`.
    pub fn object(&self, name: &str) -> Option<&KnownEntry> {
        self.objects.get(name)
    }

    /// The entry for struct type `name`.
    pub fn type_(&self, name: &str) -> Option<&KnownEntry> {
        self.types.get(name)
    }

    /// The entry for member `member` of struct `type_name`.
    pub fn member(&self, type_name: &str, member: &str) -> Option<&KnownEntry> {
        if !self.member_types.contains(type_name) {
            return None;
        }
        self.members.get(&format!("{type_name}.{member}"))
    }

    /// The entry for function `name`.
    pub fn function(&self, name: &str) -> Option<&KnownEntry> {
        self.functions.get(name)
    }

    /// The list has member entries of struct `type_name`.
    pub fn has_members(&self, type_name: &str) -> bool {
        self.member_types.contains(type_name)
    }

    /// Every entry, by kind then name (for `show --hot-list` and tests).
    pub fn entries(&self) -> Vec<(&'static str, &KnownEntry)> {
        let mut out = Vec::new();
        for (kind, map) in [
            ("object", &self.objects),
            ("type", &self.types),
            ("member", &self.members),
            ("function", &self.functions),
        ] {
            let mut v: Vec<&KnownEntry> = map.values().collect();
            v.sort_by(|a, b| a.name.cmp(&b.name));
            out.extend(v.into_iter().map(|e| (kind, e)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in entry has a name, a reason and a source, and none is listed twice.
    #[test]
    fn every_builtin_entry_has_a_reason_and_a_source() {
        let list = KnownList::parse(BUILTIN).expect("built-in list parses");
        let entries = list.entries();
        let raw_count = BUILTIN.matches("\nname = ").count();
        assert_eq!(entries.len(), raw_count, "an entry is listed twice");
        assert!(entries.len() >= 50, "{}", entries.len());
        for (kind, e) in entries {
            assert!(!e.reason.trim().is_empty(), "{kind} {}", e.name);
            assert!(!e.source.trim().is_empty(), "{kind} {}", e.name);
            assert!(e.reason.len() <= 160, "{kind} {}: one line", e.name);
        }
    }

    #[test]
    fn a_user_list_adds_and_replaces() {
        let mut list = KnownList::builtin();
        let before = list.entries().len();
        let user = KnownList::parse(
            r#"
[[object]]
name = "runqueues"
reason = "mine"
source = "my benchmark"

[[member]]
name = "my_struct.hot_field"
reason = "written per packet"
source = "my trace"
"#,
        )
        .unwrap();
        list.extend(user);
        assert_eq!(list.entries().len(), before + 1);
        assert_eq!(list.object("runqueues").unwrap().reason, "mine");
        assert_eq!(
            list.member("my_struct", "hot_field").unwrap().source,
            "my trace"
        );
        assert!(list.has_members("my_struct"));
    }

    #[test]
    fn bad_lists_are_refused_with_the_line() {
        let missing = "[[object]]\nname = \"x\"\nreason = \"r\"\n";
        let e = KnownList::parse(missing).unwrap_err().to_string();
        assert!(e.contains("missing field `source`"), "{e}");
        let empty = "[[function]]\nname = \"f\"\nreason = \" \"\nsource = \"s\"\n";
        assert_eq!(
            KnownList::parse(empty).unwrap_err().to_string(),
            "[[function]] \"f\": empty reason"
        );
        let member = "[[member]]\nname = \"f\"\nreason = \"r\"\nsource = \"s\"\n";
        assert_eq!(
            KnownList::parse(member).unwrap_err().to_string(),
            "[[member]] \"f\": a member is named struct.member"
        );
        let unknown = "[[object]]\nname = \"x\"\nreason = \"r\"\nsource = \"s\"\nwhy = 1\n";
        let e = KnownList::parse(unknown).unwrap_err().to_string();
        assert!(e.starts_with("line 5: unknown field `why`"), "{e}");
    }
}
