//! The members of an object on a byte range (a line), named as the judgement of shared
//! lines names an object's parts (`diff::sharing`): for `--explain`, which names every
//! member on each shared line, where the judgement keeps only the written members of
//! the other objects there.

use serde::Serialize;

use crate::model::{Image, Member, StructLayout, Symbol, TypeKind};

/// One member's bytes on a range of its object: `[from, to)`, as offsets into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemberBytes {
    /// The member's name (`ratelimit.flags`, `[3].lock`), or the object's own name
    /// when it has no members.
    pub name: String,
    /// Its first byte on the range.
    pub from: u64,
    /// The offset past its last byte on the range.
    pub to: u64,
}

/// How deep embedded structs are opened (`ns.count` is one level), as the judgement.
const EMBED_DEPTH: usize = 4;
/// The elements of an array of structs named one by one, as the judgement.
const ELEMENTS: u64 = 64;

/// The members of object `s` of `image` with bytes in `[from, to)` (offsets into it),
/// each cut to them, in member order: its struct's named leaf members, anonymous
/// structs and unions opened, embedded named structs opened down to their own members
/// (`ratelimit.flags`, up to 4 levels) unless their type is a lock, an atomic or a
/// counter by its name (`conventions.toml`'s `hot_type`); an array of structs element
/// by element (`[3].lock`, the first 64 elements); else the object itself. The same
/// names and bytes as the judgement's parts (a unit test holds the two together).
pub fn members_on(image: &Image<'_>, s: &Symbol<'_>, (from, to): (u64, u64)) -> Vec<MemberBytes> {
    let cut = |name: String, lo: u64, hi: u64| {
        (lo < to && hi > from).then(|| MemberBytes {
            name,
            from: lo.max(from),
            to: hi.min(to),
        })
    };
    let whole = || {
        cut(s.name.to_string(), 0, s.size.max(1))
            .into_iter()
            .collect()
    };
    let var = image.variable_for(s);
    let Some(layout) = var.and_then(|v| v.layout).map(|id| image.struct_by_id(id)) else {
        return whole();
    };
    if var.is_some_and(|v| !v.is_array && hot_name(&v.ctype.c)) {
        return whole();
    }
    let mut first = Vec::new();
    open(image, layout, 0, "", 0, &mut first);
    if first.is_empty() {
        return whole();
    }
    let mut out = Vec::new();
    if !var.is_some_and(|v| v.is_array) {
        out.extend(first.into_iter().filter_map(|(n, lo, hi)| cut(n, lo, hi)));
    } else {
        let element = layout.size.max(1);
        for i in 0..(s.size / element).clamp(1, ELEMENTS) {
            let at = i * element;
            out.extend(first.iter().filter_map(|(n, lo, hi)| {
                cut(
                    format!("[{i}].{n}"),
                    at.saturating_add(*lo),
                    at.saturating_add(*hi),
                )
            }));
        }
    }
    out
}

/// Whether a type spelled `c` is a lock, an atomic or a counter by its name.
fn hot_name(c: &str) -> bool {
    crate::evidence::conventions::conventions().is_hot_type(c)
}

/// The leaf members of `layout` laid at `base`, named after `prefix`, into `out` as
/// (name, first byte, byte past the end).
fn open(
    image: &Image<'_>,
    layout: &StructLayout<'_>,
    base: u64,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(String, u64, u64)>,
) {
    let leaves = layout
        .flat_members()
        .into_iter()
        .filter(|(_, m)| m.nested.is_none());
    for (_, m) in leaves {
        let Some(name) = m.name else { continue };
        let from = base.saturating_add(m.offset);
        if let Some(inner) = embedded(image, m).filter(|_| depth < EMBED_DEPTH) {
            let before = out.len();
            let prefix = format!("{prefix}{name}.");
            open(image, inner, from, &prefix, depth + 1, out);
            if out.len() > before {
                continue;
            }
        }
        out.push((
            format!("{prefix}{name}"),
            from,
            from.saturating_add(m.size.max(1)),
        ));
    }
}

/// The layout of a member that embeds a named struct (not an array, not a pointer,
/// not a lock or an atomic by its type's name), of the member's size: the first struct
/// of that name in the build.
fn embedded<'i, 'd>(image: &'i Image<'d>, m: &Member<'_>) -> Option<&'i StructLayout<'d>> {
    let ty = &*m.ctype;
    if ty.kind != TypeKind::Struct || !ty.dims.is_empty() || hot_name(&ty.c) {
        return None;
    }
    let name = ty.aggregate.as_deref()?;
    let inner: &StructLayout<'d> = image.structs.iter().find(|s| s.name == name)?;
    (inner.size == m.size && !inner.members.is_empty()).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{DiffOptions, diff};

    /// (name, from, to) of each member.
    type Bytes = Vec<(String, u64, u64)>;

    /// On the fixture pairs, every shared line the judgement keeps names the object's
    /// own members as `members_on` does (all of them, with the same bytes), and each
    /// other tenant's written members among `members_on`'s: one way of naming parts.
    /// Returns (tenants compared, members compared) for each pair.
    #[test]
    fn the_judgements_parts_are_members_on() {
        let testdata = testdata!();
        let mut counts = Vec::new();
        for (a, b) in [
            ("evidence/old.elf", "evidence/new.elf"),
            ("check/base.elf", "check/patched.elf"),
            ("suggest/old.elf", "suggest/new.elf"),
            ("old.elf", "new.elf"),
        ] {
            let open = |n: &str| crate::InputFile::open(&testdata.join(n)).unwrap();
            let (a, b) = (open(a), open(b));
            let load = crate::LoadOptions::default();
            let (old, new) = (a.load(&load).unwrap(), b.load(&load).unwrap());
            let report = diff(&old, &new, &DiffOptions::default());
            let (mut tenants, mut members) = (0, 0);
            for c in report.data.iter().chain(&report.percpu) {
                let Some(sh) = &c.sharing else { continue };
                for (image, lines) in [(&old, &sh.old), (&new, &sh.new)] {
                    for (i, t) in lines
                        .shared
                        .iter()
                        .flat_map(|l| l.tenants.iter().enumerate())
                    {
                        let s = image
                            .symbols
                            .iter()
                            .find(|s| {
                                s.place == t.place
                                    && s.space == c.space
                                    && s.kind != crate::model::SymbolKind::Function
                                    && crate::diff::SymbolName::of(s) == t.name
                            })
                            .expect("the tenant's symbol");
                        let got: Bytes = t
                            .members
                            .iter()
                            .map(|m| (m.name.to_string(), m.from, m.to))
                            .collect();
                        let all: Bytes = members_on(image, s, (t.from, t.to))
                            .into_iter()
                            .map(|m| (m.name, m.from, m.to))
                            .collect();
                        if i == 0 {
                            assert_eq!(got, all, "{}", t.name);
                        } else {
                            assert!(got.iter().all(|m| all.contains(m)), "{}", t.name);
                        }
                        tenants += 1;
                        members += got.len();
                    }
                }
            }
            counts.push((tenants, members));
        }
        // Not vacuous: tenants on shared lines, and the members the judgement keeps of
        // them (all of the objects', the written ones of their neighbours).
        assert_eq!(counts, [(25, 16), (8, 22), (16, 10), (22, 29)]);
    }
}
