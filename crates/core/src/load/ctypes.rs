//! Builds the `CType` of a DIE: its kind, qualifiers and dimensions as data, its C
//! spelling (declarator rules: `char *const`, `void (*[4])(int)`, qualifiers once),
//! and the member declaration as pahole 1.24 prints it, which the struct listing
//! must reproduce byte for byte (pahole's spelling differs from C's in places:
//! `const char  *`, `struct list_head * *`).

use std::sync::Arc;

use gimli::constants as dw;

use super::dies::Die;
use super::layouts::TypeTable;
use crate::model::{CType, Declaration, TypeKind};

/// Deepest type chain followed while spelling (guards against malformed cycles).
const MAX_DEPTH: usize = 32;
/// Types spelled, at most, for one declaration: a forged file whose function types
/// take themselves as parameters would otherwise branch at every level.
const MAX_SPELLED: u32 = 1024;

/// Stands for the member name while pahole's declaration is built, then split at.
const HOLE: &str = "\u{1}";

#[derive(Clone, Copy, Default)]
struct Quals {
    c: bool,
    v: bool,
}

impl Quals {
    fn prefix(self) -> &'static str {
        match (self.c, self.v) {
            (true, true) => "const volatile ",
            (true, false) => "const ",
            (false, true) => "volatile ",
            (false, false) => "",
        }
    }
}

/// Longest spelling kept: a kernel type's is under 200 bytes; a malformed table can
/// spell one type in gigabytes (every member copies it).
const MAX_SPELLING: usize = 4096;

fn capped(mut s: String) -> String {
    if s.len() > MAX_SPELLING {
        let mut end = MAX_SPELLING;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push_str("...");
    }
    s
}

fn kind_of(tag: gimli::DwTag) -> TypeKind {
    match tag {
        dw::DW_TAG_structure_type | dw::DW_TAG_class_type => TypeKind::Struct,
        dw::DW_TAG_union_type => TypeKind::Union,
        dw::DW_TAG_enumeration_type => TypeKind::Enum,
        dw::DW_TAG_pointer_type
        | dw::DW_TAG_reference_type
        | dw::DW_TAG_rvalue_reference_type
        | dw::DW_TAG_ptr_to_member_type => TypeKind::Pointer,
        dw::DW_TAG_array_type => TypeKind::Array,
        dw::DW_TAG_subroutine_type => TypeKind::Function,
        dw::DW_TAG_base_type => TypeKind::Base,
        _ => TypeKind::Void,
    }
}

impl<'d> TypeTable<'_, 'd> {
    /// The type of the entry at index `ty` (`void` when none), built once per entry.
    pub fn ctype(&self, ty: Option<usize>) -> Arc<CType> {
        let Some(i) = ty.filter(|&i| i < self.dies.dies.len()) else {
            return Arc::new(CType {
                c: "void".into(),
                listing: self.listing.then(|| {
                    Box::new(Declaration {
                        before: "void".into(),
                        ..Declaration::default()
                    })
                }),
                ..CType::default()
            });
        };
        self.ctypes[i]
            .get_or_init(|| Arc::new(self.build(i)))
            .clone()
    }

    fn build(&self, i: usize) -> CType {
        let mut quals = Quals::default();
        let die = self.through_quals(Some(i), &mut quals);
        let kind = die.map_or(TypeKind::Void, |d| kind_of(d.tag));
        let mut dims = Vec::new();
        let mut element = TypeKind::Void;
        let mut aggregate_die = die;
        if kind == TypeKind::Array {
            let mut d = die;
            for _ in 0..8 {
                let Some(arr) = d.filter(|a| a.tag == dw::DW_TAG_array_type) else {
                    break;
                };
                dims.extend(self.dies.children(arr).map(|s| s.count().unwrap_or(0)));
                // Qualifiers on the element make the array's storage const too.
                d = self.through_quals(arr.ty(), &mut quals);
            }
            element = d.map_or(TypeKind::Void, |e| kind_of(e.tag));
            aggregate_die = d;
        }
        let aggregate = aggregate_die
            .filter(|d| matches!(kind_of(d.tag), TypeKind::Struct | TypeKind::Union))
            .and_then(|d| self.dies.name(d))
            .map(Box::from);
        // pahole's spellings first, then the C one (each spends the table's budget).
        let listing = self.listing.then(|| self.listing_of(i, &dims));
        CType {
            kind,
            element,
            is_const: quals.c,
            is_volatile: quals.v,
            dims,
            aggregate,
            c: capped(self.c_decl(
                Some(i),
                String::new(),
                Quals::default(),
                0,
                &mut MAX_SPELLED.clone(),
            ))
            .into(),
            listing,
        }
    }

    /// The first entry from `at` that is not a typedef or qualifier, gathering the
    /// `const` and `volatile` passed on the way into `quals`.
    fn through_quals(&self, mut at: Option<usize>, quals: &mut Quals) -> Option<&Die<'d>> {
        for _ in 0..MAX_DEPTH {
            let d = at.and_then(|k| self.dies.get(k))?;
            match d.tag {
                dw::DW_TAG_typedef | dw::DW_TAG_restrict_type | dw::DW_TAG_atomic_type => {}
                dw::DW_TAG_const_type => quals.c = true,
                dw::DW_TAG_volatile_type => quals.v = true,
                _ => return Some(d),
            }
            at = d.ty();
        }
        None
    }

    /// How pahole declares a member of type entry `i` (with array `dims`): the text
    /// before and after the member's name, and an anonymous enum's enumerators.
    fn listing_of(&self, i: usize, dims: &[u64]) -> Box<Declaration> {
        let decl = self.bounded(|| self.pahole_decl(Some(i), HOLE, false, 0));
        let (before, after) = decl.split_once(HOLE).unwrap_or((decl.as_str(), ""));
        let flex = (dims.first() == Some(&0)).then(|| {
            let d = self.bounded(|| self.pahole_decl(Some(i), HOLE, true, 0));
            d.split_once(HOLE)
                .map_or(String::new(), |(_, a)| a.to_string())
        });
        let anonymous_enum = self
            .dies
            .get(i)
            .filter(|d| d.tag == dw::DW_TAG_enumeration_type && d.name.is_none())
            .map(|d| {
                let list = self
                    .dies
                    .children(d)
                    .filter(|e| e.tag == dw::DW_TAG_enumerator)
                    .map(|e| {
                        (
                            Box::from(self.dies.name(e).unwrap_or("")),
                            e.const_value().unwrap_or(0),
                        )
                    })
                    .collect();
                (list, d.byte_size().unwrap_or(4))
            });
        Box::new(Declaration {
            before: capped(before.to_string()).into(),
            after: capped(after.to_string()).into(),
            anonymous_enum,
            after_flexible: flex.map(Box::from),
        })
    }

    /// Runs one pahole spelling with at most `MAX_SPELLED` parameters of the table's
    /// budget: what one declaration may cost does not depend on the ones before it.
    fn bounded(&self, spell: impl FnOnce() -> String) -> String {
        let table = self.spell_budget.get();
        let mine = table.min(u64::from(MAX_SPELLED));
        self.spell_budget.set(mine);
        let out = spell();
        let used = mine.saturating_sub(self.spell_budget.get());
        self.spell_budget.set(table.saturating_sub(used));
        out
    }

    fn tag_keyword(tag: gimli::DwTag) -> Option<&'static str> {
        match tag {
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type => Some("struct"),
            dw::DW_TAG_union_type => Some("union"),
            dw::DW_TAG_enumeration_type => Some("enum"),
            _ => None,
        }
    }

    /// C declarator spelling of type `ty` around `inner` (the part already built).
    /// `budget` counts the types still allowed to be spelled (`MAX_SPELLED`).
    fn c_decl(
        &self,
        ty: Option<usize>,
        inner: String,
        quals: Quals,
        depth: usize,
        budget: &mut u32,
    ) -> String {
        *budget = budget.saturating_sub(1);
        let Some(d) = ty.and_then(|i| self.dies.get(i)) else {
            return join_decl(&format!("{}void", quals.prefix()), &inner);
        };
        if depth >= MAX_DEPTH || *budget == 0 {
            // Cut (a malformed table): `?` stands for the rest, never a made-up type.
            return join_decl(&format!("{}?", quals.prefix()), &inner);
        }
        let name = self.dies.name(d);
        match d.tag {
            dw::DW_TAG_const_type | dw::DW_TAG_volatile_type => {
                self.qualified_decl(d, inner, quals, depth, budget)
            }
            dw::DW_TAG_restrict_type | dw::DW_TAG_atomic_type => {
                self.c_decl(d.ty(), inner, quals, depth + 1, budget)
            }
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type
            | dw::DW_TAG_ptr_to_member_type => {
                let star = if d.tag == dw::DW_TAG_pointer_type {
                    "*"
                } else {
                    "&"
                };
                let mut inner = format!("{star}{inner}");
                let target = d.ty().and_then(|i| self.dies.get(i));
                if target.is_some_and(|t| {
                    matches!(t.tag, dw::DW_TAG_array_type | dw::DW_TAG_subroutine_type)
                }) {
                    inner = format!("({inner})");
                }
                self.c_decl(d.ty(), inner, quals, depth + 1, budget)
            }
            dw::DW_TAG_array_type => {
                let mut inner = inner;
                for s in self.dies.children(d) {
                    match s.count() {
                        Some(n) => inner.push_str(&format!("[{n}]")),
                        None => inner.push_str("[]"),
                    }
                }
                self.c_decl(d.ty(), inner, quals, depth + 1, budget)
            }
            dw::DW_TAG_subroutine_type => {
                let inner = format!("{inner}({})", self.parameters_decl(d, depth, budget));
                self.c_decl(d.ty(), inner, quals, depth + 1, budget)
            }
            _ => {
                let spec = match (Self::tag_keyword(d.tag), name) {
                    (Some(kw), Some(n)) => format!("{kw} {n}"),
                    (Some(kw), None) => format!("{kw} {{...}}"),
                    (None, Some(n)) => n.to_string(),
                    (None, None) if d.tag == dw::DW_TAG_unspecified_type => "void".into(),
                    (None, None) => "?".into(),
                };
                join_decl(&format!("{}{spec}", quals.prefix()), &inner)
            }
        }
    }

    /// `c_decl` of a `const` or `volatile` entry `d`: a qualified pointer takes the
    /// qualifier after its `*`, anything else before its type.
    fn qualified_decl(
        &self,
        d: &Die<'d>,
        inner: String,
        quals: Quals,
        depth: usize,
        budget: &mut u32,
    ) -> String {
        let mut q = quals;
        if d.tag == dw::DW_TAG_const_type {
            q.c = true;
        } else {
            q.v = true;
        }
        let target = d.ty().and_then(|i| self.dies.get(i));
        if target.is_some_and(|t| kind_of(t.tag) == TypeKind::Pointer) {
            let kw = if d.tag == dw::DW_TAG_const_type {
                "const"
            } else {
                "volatile"
            };
            let inner = if inner.is_empty() {
                kw.to_string()
            } else {
                format!("{kw} {inner}")
            };
            return self.c_decl(d.ty(), inner, quals, depth + 1, budget);
        }
        self.c_decl(d.ty(), inner, q, depth + 1, budget)
    }

    /// The parameter list of subroutine type `d`, without its parentheses (`void`
    /// when it has none, `...` for unspecified ones).
    fn parameters_decl(&self, d: &Die<'d>, depth: usize, budget: &mut u32) -> String {
        let mut params = Vec::new();
        for p in self.dies.children(d) {
            if p.tag == dw::DW_TAG_unspecified_parameters {
                params.push("...".to_string());
            } else {
                params.push(self.c_decl(
                    p.ty(),
                    String::new(),
                    Quals::default(),
                    depth + 1,
                    budget,
                ));
            }
        }
        if params.is_empty() {
            params.push("void".into());
        }
        params.join(", ")
    }

    fn get_die(&self, ty: Option<usize>) -> Option<&Die<'d>> {
        ty.and_then(|i| self.dies.get(i))
    }

    /// pahole's `tag__name`: how it names a type in a declaration or a parameter list.
    fn pahole_name(&self, ty: Option<usize>, depth: usize) -> String {
        let Some(d) = self.get_die(ty) else {
            return "void".into();
        };
        if depth >= MAX_DEPTH {
            return "?".into();
        }
        match d.tag {
            dw::DW_TAG_pointer_type | dw::DW_TAG_reference_type => {
                let suffix = if d.tag == dw::DW_TAG_pointer_type {
                    "*"
                } else {
                    "&"
                };
                let Some(t) = self.get_die(d.ty()) else {
                    return format!("void {suffix}");
                };
                let mut target = d.ty();
                let mut const_pointer = "";
                if t.tag == dw::DW_TAG_const_type
                    && self
                        .get_die(t.ty())
                        .is_some_and(|n| n.tag == dw::DW_TAG_pointer_type)
                {
                    const_pointer = "const ";
                    target = t.ty();
                }
                format!(
                    "{} {const_pointer}{suffix}",
                    self.pahole_name(target, depth + 1)
                )
            }
            dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_unspecified_type
            | dw::DW_TAG_atomic_type => {
                let (prefix, suffix) = match d.tag {
                    dw::DW_TAG_const_type => ("const ", ""),
                    dw::DW_TAG_volatile_type => ("volatile ", ""),
                    dw::DW_TAG_restrict_type => ("", " restrict"),
                    _ => ("", ""),
                };
                if d.tag == dw::DW_TAG_unspecified_type && d.ty().is_none() {
                    return self.dies.name(d).unwrap_or("void").to_string();
                }
                format!("{prefix}{}{suffix} ", self.pahole_name(d.ty(), depth + 1))
            }
            dw::DW_TAG_array_type => self.pahole_name(d.ty(), depth + 1),
            dw::DW_TAG_subroutine_type => self.pahole_ftype(d, "", false, depth),
            _ => match Self::tag_keyword(d.tag) {
                Some(kw) => format!("{kw} {}", self.dies.name(d).unwrap_or("")),
                None => self.dies.name(d).unwrap_or("").to_string(),
            },
        }
    }

    /// pahole's `ftype__fprintf` with a name: `RET (*name)(params)`.
    fn pahole_ftype(&self, f: &Die<'d>, name: &str, pointer: bool, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "?".into();
        }
        let ret = self.pahole_name(f.ty(), depth + 1);
        let star = if pointer { "*" } else { "" };
        let mut out = format!("{ret} ({star}{name})(");
        let mut first = true;
        let mut unspecified = false;
        for p in self.dies.children(f) {
            if p.tag == dw::DW_TAG_unspecified_parameters {
                unspecified = true;
                continue;
            }
            if !first {
                out.push_str(", ");
            }
            first = false;
            let left = self.spell_budget.get();
            if left == 0 {
                out.push('?');
                break;
            }
            self.spell_budget.set(left - 1);
            let t = self.get_die(p.ty());
            match t {
                Some(t) if t.tag == dw::DW_TAG_pointer_type => match self.get_die(t.ty()) {
                    Some(s) if s.tag == dw::DW_TAG_subroutine_type => {
                        out.push_str(&self.pahole_ftype(s, "", true, depth + 1));
                    }
                    _ => out.push_str(&self.pahole_name(p.ty(), depth + 1)),
                },
                Some(t) if t.tag == dw::DW_TAG_subroutine_type => {
                    out.push_str(&self.pahole_ftype(t, "", false, depth + 1));
                }
                _ => out.push_str(&self.pahole_name(p.ty(), depth + 1)),
            }
        }
        if first {
            out.push_str("void)");
        } else if unspecified {
            out.push_str(", ...)");
        } else {
            out.push(')');
        }
        out
    }

    /// pahole's `type__fprintf` of a member: the whole declaration with `name`.
    /// `flexible`: print a zero first dimension as `[]`.
    fn pahole_decl(&self, ty: Option<usize>, name: &str, flexible: bool, depth: usize) -> String {
        let Some(d) = self.get_die(ty) else {
            return format!("void {name}");
        };
        if depth >= MAX_DEPTH {
            return format!("? {name}");
        }
        match d.tag {
            dw::DW_TAG_pointer_type => {
                if let Some(t) = self.get_die(d.ty())
                    && t.tag == dw::DW_TAG_subroutine_type
                {
                    return self.pahole_ftype(t, name, true, depth);
                }
                format!("{} {name}", self.pahole_name(ty, depth))
            }
            dw::DW_TAG_subroutine_type => self.pahole_ftype(d, name, false, depth),
            dw::DW_TAG_const_type => {
                if d.ty().is_none() {
                    return format!("const {} {name}", self.pahole_name(ty, depth));
                }
                format!(
                    "const {}",
                    self.pahole_decl(d.ty(), name, flexible, depth + 1)
                )
            }
            dw::DW_TAG_array_type => {
                let counts: Vec<u64> = self
                    .dies
                    .children(d)
                    .map(|s| s.count().unwrap_or(0))
                    .collect();
                let mut elem = d.ty();
                if counts.first() == Some(&0)
                    && let Some(e) = self.get_die(elem)
                    && e.tag == dw::DW_TAG_const_type
                {
                    elem = e.ty();
                }
                let mut out = self.pahole_decl(elem, name, false, depth + 1);
                for n in counts {
                    if n == 0 && flexible {
                        out.push_str("[]");
                    } else {
                        out.push_str(&format!("[{n}]"));
                    }
                }
                out
            }
            dw::DW_TAG_structure_type
            | dw::DW_TAG_class_type
            | dw::DW_TAG_union_type
            | dw::DW_TAG_enumeration_type => {
                let kw = Self::tag_keyword(d.tag).unwrap_or("struct");
                match self.dies.name(d) {
                    Some(n) => format!("{kw} {n} {name}"),
                    None => format!("{kw} {{...}} {name}"),
                }
            }
            _ => format!("{} {name}", self.pahole_name(ty, depth)),
        }
    }
}

/// A type's specifier and the declarator around it: `int` and `*p` give `int *p`; an
/// empty declarator or one starting with `[` joins without a space.
fn join_decl(spec: &str, inner: &str) -> String {
    if inner.is_empty() || inner.starts_with('[') {
        format!("{spec}{inner}")
    } else {
        format!("{spec} {inner}")
    }
}
