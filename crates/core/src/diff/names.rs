//! How the report names a symbol: `file:name` for a local whose file is known, else
//! the name. Its own module because every part of the diff names symbols, and the
//! types of changes and of shared lines both hold them.

use serde::Serialize;

/// A symbol's name as the report spells it (`Symbol::qualified_name`: `file:name` for
/// a local whose file is known, else the name), borrowed from the image and spelled
/// only when written: a diff of two kernels names a quarter of a million co-tenants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolName<'a> {
    pub file: Option<&'a str>,
    pub name: &'a str,
}

impl<'a> SymbolName<'a> {
    pub fn of(s: &crate::model::Symbol<'a>) -> Self {
        SymbolName {
            file: match s.binding {
                crate::model::Binding::Local => s.file,
                _ => None,
            },
            name: s.name,
        }
    }

    /// Whether `text` spells this name.
    pub fn is(&self, text: &str) -> bool {
        match self.file {
            None => text == self.name,
            Some(f) => {
                text.len() == f.len() + 1 + self.name.len()
                    && text.starts_with(f)
                    && text[f.len()..].starts_with(':')
                    && text.ends_with(self.name)
            }
        }
    }
}

impl std::fmt::Display for SymbolName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = self.file {
            f.write_str(file)?;
            f.write_str(":")?;
        }
        f.write_str(self.name)
    }
}

impl Serialize for SymbolName<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.file {
            None => s.serialize_str(self.name),
            Some(_) => s.collect_str(self),
        }
    }
}
