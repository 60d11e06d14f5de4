//! Decides whether a type is a write-hot candidate: its own storage holds (directly,
//! through nested structs, or as an array of them) an atomic, a refcount, a lock or a
//! per-CPU counter. A pointer to such a thing is not hot storage.

use rustc_hash::FxHashMap;

use crate::model::{CType, Image, StructId, TypeKind};

/// Whether the type spelled `type_name` is itself write-hot storage: a
/// `hot_type` entry of `conventions.toml`.
pub(super) fn is_hot_name(type_name: &str) -> bool {
    crate::evidence::conventions::conventions().is_hot_type(type_name)
}

/// Memoized answers for one image.
pub struct HotTypes<'a, 'd> {
    image: &'a Image<'d>,
    by_name: std::borrow::Cow<'a, StructNames<'d>>,
    memo: FxHashMap<StructId, bool>,
    /// `hot_members` of each struct asked about (objects of one type are many: tens of
    /// thousands of judged objects walked a few thousand types' members again).
    hot_members: FxHashMap<StructId, usize>,
    /// `is_hot_name` of each type seen, by address (types are shared, and the name test
    /// looks the spelling up).
    hot_name: FxHashMap<*const CType, bool>,
}

/// What the judgement of lines asks of a type (`HotTypes` answers, memoized).
pub trait TypeFacts {
    /// `HotTypes::is_write_type`.
    fn is_write_type(&mut self, ty: &CType) -> bool;
    /// `is_hot_name` of its spelling.
    fn hot_name(&mut self, ty: &CType) -> bool;
}

impl TypeFacts for HotTypes<'_, '_> {
    fn is_write_type(&mut self, ty: &CType) -> bool {
        HotTypes::is_write_type(self, ty)
    }
    fn hot_name(&mut self, ty: &CType) -> bool {
        HotTypes::hot_name(self, ty)
    }
}

/// The first struct of each name in an image, built once and shared by every worker.
pub type StructNames<'d> = FxHashMap<&'d str, StructId>;

/// The first struct of each name in `image`.
pub fn struct_names<'d>(image: &Image<'d>) -> StructNames<'d> {
    let mut by_name = FxHashMap::default();
    for (i, s) in image.structs.iter().enumerate() {
        by_name.entry(s.name).or_insert(StructId(i));
    }
    by_name
}

impl<'a, 'd> HotTypes<'a, 'd> {
    #[cfg(test)]
    pub fn new(image: &'a Image<'d>) -> Self {
        HotTypes {
            image,
            by_name: std::borrow::Cow::Owned(struct_names(image)),
            memo: FxHashMap::default(),
            hot_members: FxHashMap::default(),
            hot_name: FxHashMap::default(),
        }
    }

    /// As `new`, with the name index built once by `struct_names(image)`.
    pub fn sharing(image: &'a Image<'d>, names: &'a StructNames<'d>) -> Self {
        HotTypes {
            image,
            by_name: std::borrow::Cow::Borrowed(names),
            memo: FxHashMap::default(),
            hot_members: FxHashMap::default(),
            hot_name: FxHashMap::default(),
        }
    }

    /// How many of the type's top-level members are write-hot (atomics, locks, or structs
    /// holding them); 1 for a scalar hot type, 0 when not hot.
    pub fn hot_members(&mut self, ty: &CType, layout: Option<StructId>) -> usize {
        if ty.storage_kind() == TypeKind::Pointer {
            return 0;
        }
        if self.hot_name(ty) {
            return 1;
        }
        let Some(id) = layout else { return 0 };
        if let Some(&n) = self.hot_members.get(&id) {
            return n;
        }
        // The image outlives `self`'s borrow: its members are walked without cloning
        // their types.
        let image = self.image;
        let n = image
            .struct_by_id(id)
            .flat_members()
            .into_iter()
            .filter(|(_, m)| m.nested.is_none())
            .filter(|(_, m)| self.member_is_hot(&m.ctype, 0))
            .count();
        self.hot_members.insert(id, n);
        n
    }

    /// Whether storage of type `ty` is written by many CPUs by its kind: a lock, an
    /// atomic, a refcount or a counter, or a struct holding one (not a pointer to one).
    pub fn is_write_type(&mut self, ty: &CType) -> bool {
        self.member_is_hot(ty, 0)
    }

    /// `is_hot_name` of the spelling of `ty`, memoized by the type's address.
    pub fn hot_name(&mut self, ty: &CType) -> bool {
        *self
            .hot_name
            .entry(ty as *const CType)
            .or_insert_with(|| is_hot_name(&ty.c))
    }

    fn member_is_hot(&mut self, ty: &CType, depth: usize) -> bool {
        // A pointer (or an array of pointers) to a hot thing is not hot storage.
        if ty.storage_kind() == TypeKind::Pointer {
            return false;
        }
        if self.hot_name(ty) {
            return true;
        }
        match ty.aggregate.as_deref() {
            Some(name) => match self.by_name.get(name) {
                Some(&id) => self.struct_is_hot(id, depth + 1),
                None => false,
            },
            None => false,
        }
    }

    fn struct_is_hot(&mut self, id: StructId, depth: usize) -> bool {
        if let Some(&v) = self.memo.get(&id) {
            return v;
        }
        if depth > 8 {
            return false;
        }
        // Guard cycles: assume not hot while computing.
        self.memo.insert(id, false);
        let image = self.image;
        let hot = image
            .struct_by_id(id)
            .flat_members()
            .into_iter()
            .any(|(_, m)| self.member_is_hot(&m.ctype, depth));
        self.memo.insert(id, hot);
        hot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputFile;
    use crate::load::LoadOptions;

    #[test]
    fn hot_storage_not_pointers_to_it() {
        let path = testdata!().join("types/types.elf");
        let file = InputFile::open(&path).expect("fixture");
        let image = file.load(&LoadOptions::default()).expect("load");
        let mut hot = HotTypes::new(&image);
        let mut judge = |name: &str| {
            let v = image
                .variables
                .iter()
                .find(|v| v.name == name)
                .expect("variable");
            hot.hot_members(&v.ctype, v.layout)
        };
        // spinlock_t *lock_ptr: the pointer's own storage holds no lock.
        assert_eq!(judge("lock_ptr"), 0);
        // static struct { spinlock_t lock; int x; } anon_locked: one hot member.
        assert_eq!(judge("anon_locked"), 1);
        // atomic_t counters[4]: an array of hot things is hot.
        assert_eq!(judge("counters"), 1);
        // struct fnptrs holds an atomic_t (refs): one hot member.
        assert_eq!(judge("fp_table"), 1);
        // const char *greeting: no lock anywhere.
        assert_eq!(judge("greeting"), 0);
    }
}
