//! How the report names a symbol: `file:name` for a local whose file is known, else
//! the name. Its own module because every part of the diff names symbols, and the
//! types of changes and of shared lines both hold them.

use serde::Serialize;

/// A symbol's name as the report spells it (`Symbol::qualified_name`: `file:name` for
/// a local whose file is known, else the name), borrowed from the image and spelled
/// only when written: a diff of two kernels names a quarter of a million co-tenants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolName<'a> {
    /// The file a local symbol is printed with, when it is needed.
    pub file: Option<&'a str>,
    /// The symbol's name.
    pub name: &'a str,
}

impl<'a> SymbolName<'a> {
    /// The name of `s`, as the report prints it.
    pub fn of(s: &crate::model::Symbol<'a>) -> Self {
        SymbolName {
            file: match s.binding {
                crate::model::Binding::Local => s.file,
                _ => None,
            },
            name: s.name,
        }
    }

    /// Whether `text` spells this name (a Rust symbol also demangled, as printed).
    pub fn is(&self, text: &str) -> bool {
        if rust(self.name).is_some() {
            return text == self.name || text == self.to_string();
        }
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
        match rust(self.name) {
            // `{:#}`: the path without the hash (`zerocopy::byteorder::f64_ext::to_be_bytes`).
            Some(d) => write!(f, "{d:#}"),
            None => f.write_str(self.name),
        }
    }
}

use crate::model::rust_name as rust;

impl Serialize for SymbolName<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.file {
            None if rust(self.name).is_none() => s.serialize_str(self.name),
            _ => s.collect_str(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SymbolName;

    #[test]
    fn rust_symbols_are_printed_demangled_and_accepted_both_ways() {
        let mangled = "_RNvNtNtCs8JZ8gdQQwzB_8zerocopy9byteorder7f64_ext11to_be_bytes";
        let n = SymbolName {
            file: None,
            name: mangled,
        };
        assert_eq!(n.to_string(), "zerocopy::byteorder::f64_ext::to_be_bytes");
        assert!(n.is("zerocopy::byteorder::f64_ext::to_be_bytes"));
        assert!(n.is(mangled));
        let c = SymbolName {
            file: Some("core.c"),
            name: "_Rare_c_name",
        };
        assert_eq!(c.to_string(), "core.c:_Rare_c_name");
    }
}
