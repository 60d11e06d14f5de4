//! The type of a member or variable as data, not as a string to parse back: what kind
//! of thing it is once typedefs are followed, its qualifiers, array dimensions and
//! pointer-ness, plus its two spellings (C, and pahole's member declarator), both
//! built once per type by the loader.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What a type is once typedefs and qualifiers are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TypeKind {
    /// No type (`void`).
    #[default]
    Void,
    /// A base type (`int`, `unsigned long`, `_Bool`).
    Base,
    /// A struct.
    Struct,
    /// A union.
    Union,
    /// An enum.
    Enum,
    /// A pointer.
    Pointer,
    /// An array.
    Array,
    /// A function type.
    Function,
}

/// An enumerator's name and value.
pub type Enumerator = (Box<str>, i64);

/// One type, shared (`Arc`) by every member and variable of that type in a unit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Default)]
pub struct CType {
    /// The kind after typedefs and qualifiers (`Array` for an array, whatever its element).
    pub kind: TypeKind,
    /// For arrays: the kind of the element after typedefs and qualifiers.
    pub element: TypeKind,
    /// The object itself is const (`char *const`, `const int[4]`), not what it points to.
    pub is_const: bool,
    /// The object itself is volatile.
    pub is_volatile: bool,
    /// Array dimensions, outermost first (0 for a flexible array).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dims: Vec<u64>,
    /// Name of the struct/union that the type (or its array element) is, if named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<Box<str>>,
    /// C spelling without a declarator name: `const char *`, `char *const`,
    /// `void (*[4])(int)`.
    pub c: Box<str>,
    /// How pahole's listing declares a member of this type; only loads for the
    /// listing keep it (boxed: a diff's tens of thousands of types go without).
    #[serde(skip)]
    pub listing: Option<Box<Declaration>>,
}

/// What pahole's struct listing prints for a member of a type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Declaration {
    /// pahole's member declaration is `{before} NAME{after}`.
    pub before: Box<str>,
    /// What follows the member's name (array dimensions, a function pointer's parameters).
    pub after: Box<str>,
    /// An anonymous enum (the member's own type): its enumerators, which pahole
    /// prints inline, and its size in bytes.
    pub anonymous_enum: Option<(Vec<Enumerator>, u64)>,
    /// pahole's declaration for an array whose last dimension it prints as `[]`.
    pub after_flexible: Option<Box<str>>,
}

impl CType {
    /// pahole's declaration of a member of this type is `{pahole_before} NAME{pahole_after}`
    /// (empty without the listing).
    pub fn pahole_before(&self) -> &str {
        self.listing.as_ref().map_or("", |l| &l.before)
    }

    /// What pahole's listing prints after a member's name (empty without the listing).
    pub fn pahole_after(&self) -> &str {
        self.listing.as_ref().map_or("", |l| &l.after)
    }

    /// An anonymous enum's enumerators and size, for pahole's inline listing.
    pub fn anonymous_enum(&self) -> Option<&(Vec<Enumerator>, u64)> {
        self.listing.as_ref()?.anonymous_enum.as_ref()
    }

    /// pahole's declaration tail for an array it prints as `[]`.
    pub fn pahole_after_flexible(&self) -> Option<&str> {
        self.listing.as_ref()?.after_flexible.as_deref()
    }

    /// The type is a pointer.
    pub fn is_pointer(&self) -> bool {
        self.kind == TypeKind::Pointer
    }

    /// Kind of the storage: the element kind for arrays, else the kind.
    pub fn storage_kind(&self) -> TypeKind {
        if self.kind == TypeKind::Array {
            self.element
        } else {
            self.kind
        }
    }
}

/// Where a member's or variable's type lives: shared by the members of one compile
/// unit (`Arc`, a load of DWARF or BTF), or borrowed from a snapshot's type table,
/// which outlives the image. Borrowing touches no reference count: incrementing the
/// count of a type decoded megabytes earlier missed the cache for every member and
/// was half of a snapshot's member decoding. Compared and hashed as the type itself.
#[derive(Debug, Clone)]
pub enum TypeRef<'d> {
    /// Shared by the members of one compile unit.
    Shared(Arc<CType>),
    /// Borrowed from a snapshot's type table.
    Borrowed(&'d CType),
}

impl std::ops::Deref for TypeRef<'_> {
    type Target = CType;
    fn deref(&self) -> &CType {
        match self {
            TypeRef::Shared(t) => t,
            TypeRef::Borrowed(t) => t,
        }
    }
}

impl Default for TypeRef<'_> {
    fn default() -> Self {
        TypeRef::Shared(Arc::default())
    }
}

impl From<Arc<CType>> for TypeRef<'_> {
    fn from(t: Arc<CType>) -> Self {
        TypeRef::Shared(t)
    }
}

impl PartialEq for TypeRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for TypeRef<'_> {}

impl std::hash::Hash for TypeRef<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

/// `c` without any number of leading `word`s (`trim_start_matches(word)`, without
/// building a substring searcher on every call: the judgement asks it of tens of
/// thousands of type spellings).
pub(crate) fn trim_leading<'c>(c: &'c str, word: &str) -> &'c str {
    let mut c = c;
    while let Some(rest) = c.strip_prefix(word).filter(|_| !word.is_empty()) {
        c = rest;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::trim_leading;

    /// Every leading copy of the word goes, and nothing else: what
    /// `trim_start_matches` gives.
    #[test]
    fn trim_leading_removes_each_leading_word_as_trim_start_matches() {
        let cases = [
            ("const const atomic_t", "const "),
            ("const volatile int", "const "),
            ("volatile int", "const "),
            ("const", "const "),
            ("", "const "),
            ("struct mutex", ""),
        ];
        let got: Vec<&str> = cases.iter().map(|(c, w)| trim_leading(c, w)).collect();
        assert_eq!(
            got,
            [
                "atomic_t",
                "volatile int",
                "volatile int",
                "const",
                "",
                "struct mutex"
            ]
        );
        for (c, w) in cases.iter().filter(|(_, w)| !w.is_empty()) {
            assert_eq!(trim_leading(c, w), c.trim_start_matches(w), "{c:?}");
        }
    }
}
