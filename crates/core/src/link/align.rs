//! The alignment the compiler gave each object, from its type and what the source
//! asked for: the input of the link model's layout, decided once here.

use crate::model::{CType, Image, Symbol, TypeKind, Variable};

/// GCC on x86-64 (`ix86_data_alignment`, optimising for speed) raises an aggregate
/// of this many bytes or more to this alignment...
const AGGREGATE_RAISE: u64 = 32;
/// ...and one of 16 bytes or more to 16 (the x86-64 ABI, for arrays).
const ABI_RAISE: u64 = 16;

/// What the compiler asks of one object: its alignment, and whether the source said
/// so (`__aligned`, `____cacheline_aligned`, `DEFINE_PER_CPU_ALIGNED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    /// The alignment in bytes.
    pub alignment: u64,
    /// The source asked for it.
    pub explicit: bool,
    /// An array the source did not align, which GCC may align further than its type
    /// when it vectorises a loop over it (to 8 bytes for the kernel's `-mno-sse`
    /// word-sized vectors): the link model takes that alignment where the build's
    /// addresses show it.
    pub raisable: bool,
}

/// The alignment GCC gives a variable of `size` bytes whose type is aligned to
/// `natural`, of kind `kind`: what the source asked for when it did (a user
/// alignment stops the compiler raising it), else the type's, raised for aggregates.
pub fn compiler_alignment(kind: TypeKind, size: u64, natural: u64, user: Option<u64>) -> u64 {
    let natural = natural.max(1);
    if let Some(a) = user {
        return a.max(natural);
    }
    let aggregate = matches!(kind, TypeKind::Struct | TypeKind::Union | TypeKind::Array);
    if aggregate && size >= AGGREGATE_RAISE {
        natural.max(AGGREGATE_RAISE)
    } else if aggregate && size >= ABI_RAISE {
        natural.max(ABI_RAISE)
    } else {
        natural
    }
}

/// The natural alignment of a variable's type: its struct's, else the size of one
/// element (a power of two up to 16; pointers 8).
pub fn natural_alignment(image: &Image<'_>, v: &Variable<'_>) -> u64 {
    if let Some(id) = v.layout {
        return image.struct_by_id(id).alignment.max(1);
    }
    scalar_alignment(&v.ctype, v.size.unwrap_or(1), 16)
}

/// The kind of a type, or of its elements for an array.
pub fn element_kind(t: &CType) -> TypeKind {
    if t.kind == TypeKind::Array {
        t.element
    } else {
        t.kind
    }
}

/// The natural alignment of a scalar (or an array of them) of `size` bytes in all:
/// a pointer's 8, else one element's size as a power of two up to `cap`.
pub fn scalar_alignment(t: &CType, size: u64, cap: u64) -> u64 {
    if element_kind(t) == TypeKind::Pointer {
        return 8;
    }
    let count: u64 = t
        .dims
        .iter()
        .copied()
        .filter(|&d| d > 0)
        .fold(1u64, |a, d| a.saturating_mul(d))
        .max(1);
    floor_pow2((size / count).clamp(1, cap))
}

/// What the compiler asked of `sym`'s alignment, from its DWARF variable; for a
/// symbol DWARF does not describe (assembler data), the natural alignment of its size
/// up to 8 bytes.
pub fn asked(image: &Image<'_>, sym: &Symbol<'_>, var: Option<&Variable<'_>>) -> Asked {
    let Some(v) = var else {
        return Asked {
            alignment: floor_pow2(sym.size.clamp(1, 8)),
            explicit: false,
            raisable: false,
        };
    };
    // Only the variable's own alignment stops GCC raising it (`DECL_USER_ALIGN`): a
    // type the source aligned (`struct user_namespace`, which holds an `rcu_head`
    // aligned to 8) is raised like any aggregate, from that type's alignment.
    let user = v.alignment;
    let size = v.size.unwrap_or(sym.size);
    Asked {
        alignment: compiler_alignment(v.ctype.kind, size, natural_alignment(image, v), user),
        explicit: image.explicit_alignment(v).is_some(),
        raisable: user.is_none() && v.ctype.kind == TypeKind::Array,
    }
}

/// The largest power of two not above `v` (1 for 0).
pub fn floor_pow2(v: u64) -> u64 {
    if v == 0 {
        1
    } else {
        1 << (63 - v.leading_zeros())
    }
}

/// `v` rounded up to a multiple of `a` (a power of two), saturating.
pub fn align_up(v: u64, a: u64) -> u64 {
    let a = a.max(1);
    v.checked_add(a - 1).map_or(!(a - 1), |x| x & !(a - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcc_raises_aggregates_unless_the_source_asked() {
        // struct of 40 bytes aligned to 8: raised to 32.
        assert_eq!(compiler_alignment(TypeKind::Struct, 40, 8, None), 32);
        // array of 16..31 bytes: 16.
        assert_eq!(compiler_alignment(TypeKind::Array, 24, 1, None), 16);
        // a scalar is never raised.
        assert_eq!(compiler_alignment(TypeKind::Base, 8, 8, None), 8);
        // __aligned(1) on a string stops the raise (`__setup_str_*`).
        assert_eq!(compiler_alignment(TypeKind::Array, 40, 1, Some(1)), 1);
        // ____cacheline_aligned: 64.
        assert_eq!(compiler_alignment(TypeKind::Struct, 8, 8, Some(64)), 64);
        // a small struct keeps its own.
        assert_eq!(compiler_alignment(TypeKind::Struct, 12, 4, None), 4);
    }

    #[test]
    fn rounding() {
        assert_eq!(align_up(10, 8), 16);
        assert_eq!(align_up(16, 8), 16);
        assert_eq!(align_up(0, 64), 0);
        assert_eq!(floor_pow2(24), 16);
        assert_eq!(floor_pow2(1), 1);
        assert_eq!(floor_pow2(0), 1);
        assert_eq!(align_up(u64::MAX - 3, 8), !7);
    }
}
