//! Equality of two builds' struct layouts, exactly the model's `==`, with each member's
//! type compared once per pair of shared types: types are shared (`Arc`) by the members
//! that have them, and comparing their spellings for every member of every pair of
//! structs was most of the struct comparison.

use rustc_hash::FxHashMap;

use crate::model::{CType, Member, StructLayout};

/// Remembers, per pair of type addresses (old, new), whether the types are equal.
#[derive(Default)]
pub struct SameTypes(FxHashMap<(*const CType, *const CType), bool>);

impl SameTypes {
    fn types(&mut self, a: &CType, b: &CType) -> bool {
        *self
            .0
            .entry((a as *const CType, b as *const CType))
            .or_insert_with(|| a == b)
    }

    /// `o == n`. Every field is named (no `..`), so a field added to the model
    /// does not compile until it is compared here too.
    pub fn layouts(&mut self, o: &StructLayout<'_>, n: &StructLayout<'_>) -> bool {
        let StructLayout {
            name,
            kind,
            decl_file,
            size,
            alignment,
            explicit_alignment,
            members,
            holes,
            bit_holes,
            padding,
            bit_padding,
            pre_hole,
            pre_bit_hole,
            packed,
            typedef,
            rust,
        } = o;
        *name == n.name
            && *kind == n.kind
            && *size == n.size
            && *alignment == n.alignment
            && *explicit_alignment == n.explicit_alignment
            && *padding == n.padding
            && *bit_padding == n.bit_padding
            && *pre_hole == n.pre_hole
            && *pre_bit_hole == n.pre_bit_hole
            && *packed == n.packed
            && *typedef == n.typedef
            && *rust == n.rust
            && *holes == n.holes
            && *bit_holes == n.bit_holes
            && *decl_file == n.decl_file
            && members.len() == n.members.len()
            && members
                .iter()
                .zip(&n.members)
                .all(|(a, b)| self.members(a, b))
    }

    fn members(&mut self, a: &Member<'_>, b: &Member<'_>) -> bool {
        let Member {
            name,
            offset,
            size,
            bit_offset,
            bit_size,
            flexible,
            nested,
            alignment,
            ctype,
            hole,
            bit_hole,
            type_gaps,
            pointee,
            natural_alignment,
        } = a;
        *offset == b.offset
            && *size == b.size
            && *bit_offset == b.bit_offset
            && *bit_size == b.bit_size
            && *flexible == b.flexible
            && *alignment == b.alignment
            && *hole == b.hole
            && *bit_hole == b.bit_hole
            && *type_gaps == b.type_gaps
            && *natural_alignment == b.natural_alignment
            && *name == b.name
            && self.types(ctype, &b.ctype)
            && self.boxed(nested.as_deref(), b.nested.as_deref())
            && self.boxed(pointee.as_deref(), b.pointee.as_deref())
    }

    fn boxed(&mut self, a: Option<&StructLayout<'_>>, b: Option<&StructLayout<'_>>) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => self.layouts(a, b),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputFile;
    use crate::load::LoadOptions;

    /// Agrees with `==` on every pair of same-named structs of the fixture builds
    /// (equal and unequal ones alike).
    #[test]
    fn agrees_with_model_equality_on_the_fixture_pair() {
        let root = testdata!();
        let open = |f: &str| InputFile::open(&root.join(f)).unwrap();
        let (old, new) = (open("old.elf"), open("new.elf"));
        let (old, new) = (
            old.load(&LoadOptions::default()).unwrap(),
            new.load(&LoadOptions::default()).unwrap(),
        );
        let mut same = SameTypes::default();
        let (mut equal, mut unequal) = (0, 0);
        for o in &old.structs {
            for n in new.structs.iter().filter(|n| n.name == o.name) {
                let expected = o == n;
                assert_eq!(same.layouts(o, n), expected, "{}", o.name);
                // Asked twice: the remembered answers agree too.
                assert_eq!(same.layouts(o, n), expected, "{}", o.name);
                if expected { equal += 1 } else { unequal += 1 }
            }
        }
        assert!(equal > 0 && unequal > 0, "{equal} equal, {unequal} unequal");
    }
}
