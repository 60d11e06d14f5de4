//! The one classifier of storage: how the kernel writes an object, by its section, the
//! linker-script range it lies in, its type, `const`, and (where the code is read) the
//! shape of its writes; with the entry of `storage.toml` that decided it. The diff's
//! placement and shared-line judgements, `suggest`, the frequency of code and `show`
//! all ask it, so "written at run time" has one meaning.

use super::classes::{Class, Cold};
use super::tables::{LockEntry, NoiseEntry, RangeEntry, SectionEntry, TypeEntry, tables};
use crate::model::access::AccessKind;
use crate::model::{CType, Image, Space, Symbol};

/// What decided an object's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decider {
    /// A section entry, by the section's name.
    Section(&'static SectionEntry),
    /// A range between two linker-script symbols the object lies in.
    Range(&'static RangeEntry),
    /// A type entry, by the object's C type.
    Type(&'static TypeEntry),
    /// The object itself is `const`.
    Const,
    /// The code writes it only by plain stores, each in a function that also reads it:
    /// the test that guards a once flag (`if (!done) { done = true; ... }`).
    Code,
    /// No entry: written at run time.
    Default,
}

/// How the kernel writes one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Storage {
    /// Its class.
    pub class: Class,
    /// What decided it.
    pub by: Decider,
    /// Its bytes are read-only whatever its class: a read-only section or a `const`
    /// object (an `__initconst` table is boot-only and read-only).
    pub read_only: bool,
}

impl Storage {
    /// Whether it is judged as written at run time (`Class::at_run_time`).
    pub fn at_run_time(self) -> bool {
        self.class.at_run_time()
    }

    /// The lifetime the report names (`boot-only`, `read-only after init`,
    /// `read-mostly`), when it has one.
    pub fn lifetime(self) -> Option<&'static str> {
        self.class.is_lifetime().then(|| self.class.label())
    }

    /// The kind of cold storage the entry that decided it names, if any.
    pub fn cold(self) -> Option<Cold> {
        match self.by {
            Decider::Section(e) => e.cold,
            Decider::Type(e) => e.cold,
            _ => None,
        }
    }
}

/// One way the report says storage is classed: a section, a range found in the build
/// with its addresses, or a group of types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The class it gives.
    pub class: Class,
    /// Where it comes from: `sections .init.*`, `__init_begin..__init_end`, `static
    /// keys and tracepoints (by type)`.
    pub from: String,
    /// Its first address, for a range.
    pub start: Option<u64>,
    /// Its end, for a range.
    pub end: Option<u64>,
}

/// The ranges of one image: each range entry whose two symbols the build has, in the
/// table's order. They hold global objects only.
#[derive(Debug, Clone, Default)]
pub struct Regions {
    ranges: Vec<(u64, u64, &'static RangeEntry)>,
}

impl Regions {
    /// The ranges `image`'s boundary symbols bound.
    pub fn of(image: &Image<'_>) -> Regions {
        let at = |n: &str| image.boundaries.iter().find(|b| b.0 == n).map(|b| b.1);
        let ranges = tables()
            .range
            .iter()
            .filter_map(|e| match (at(&e.start), at(&e.end)) {
                (Some(lo), Some(hi)) if lo < hi => Some((lo, hi, e)),
                _ => None,
            })
            .collect();
        Regions { ranges }
    }

    /// How the kernel writes `s`, an object of type `ty` (when known), by the tables
    /// alone; the order is `storage.toml`'s.
    pub fn classify(&self, s: &Symbol<'_>, ty: Option<&CType>) -> Storage {
        let is_const = ty.is_some_and(|t| t.is_const);
        let read_only = section_where(s.section, |c| c == Class::ReadOnly).is_some() || is_const;
        let (class, by) = if let Some(e) = section_where(s.section, Class::is_lifetime) {
            (e.class, Decider::Section(e))
        } else if let Some(&(_, _, e)) = self.ranges.iter().find(|(lo, hi, _)| {
            // A per-CPU variable's template may lie in the init region (x86-64 from
            // 6.15 links the per-CPU area there), but each CPU's copy lives on.
            s.space == Space::Global && (*lo..*hi).contains(&s.address)
        }) {
            (e.class, Decider::Range(e))
        } else if let Some(e) = ty.and_then(|t| of_type(&t.c)) {
            (e.class, Decider::Type(e))
        } else if let Some(e) = section_where(s.section, |c| c == Class::ReadOnly) {
            (Class::ReadOnly, Decider::Section(e))
        } else if is_const {
            (Class::ReadOnly, Decider::Const)
        } else if let Some(e) = section_where(s.section, |_| true) {
            (e.class, Decider::Section(e))
        } else {
            (Class::Written, Decider::Default)
        };
        Storage {
            class,
            by,
            read_only,
        }
    }

    /// `classify`, and where the tables leave `s` written at run time, the shape of
    /// the code's writes: a once flag by [`written_once`]. `index` is `s`'s in
    /// `image.symbols`.
    pub fn classify_written(
        &self,
        image: &Image<'_>,
        index: u32,
        s: &Symbol<'_>,
        ty: Option<&CType>,
    ) -> Storage {
        let storage = self.classify(s, ty);
        if storage.class == Class::Written && written_once(image, index) {
            return Storage {
                class: Class::Once,
                by: Decider::Code,
                ..storage
            };
        }
        storage
    }

    /// What the report says is classed by lifetime: the sections, the ranges found in
    /// this build, and the types by group.
    pub fn describe(&self) -> Vec<Region> {
        let t = tables();
        let mut out: Vec<Region> = t
            .section
            .iter()
            .filter(|e| e.class.is_lifetime())
            .map(|e| Region {
                class: e.class,
                from: format!("sections {}*", e.prefix),
                start: None,
                end: None,
            })
            .collect();
        out.extend(self.ranges.iter().map(|&(lo, hi, e)| Region {
            class: e.class,
            from: format!("{}..{}", e.start, e.end),
            start: Some(lo),
            end: Some(hi),
        }));
        let mut classes: Vec<Class> = Vec::new();
        for e in t.types.iter().filter(|e| e.class.is_lifetime()) {
            if !classes.contains(&e.class) {
                classes.push(e.class);
            }
        }
        for class in classes {
            let mut groups: Vec<&str> = Vec::new();
            for e in t.types.iter().filter(|e| e.class == class) {
                if !groups.contains(&e.group.as_str()) {
                    groups.push(&e.group);
                }
            }
            out.push(Region {
                class,
                from: format!("{} (by type)", and_list(&groups)),
                start: None,
                end: None,
            });
        }
        out
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The first section entry whose class `keep` accepts and whose prefix begins
/// `section`.
fn section_where(section: &str, keep: impl Fn(Class) -> bool) -> Option<&'static SectionEntry> {
    tables()
        .section
        .iter()
        .find(|e| keep(e.class) && section.starts_with(e.prefix.as_str()))
}

/// The first section entry that matches `section`, whatever its class.
pub fn section(section: &str) -> Option<&'static SectionEntry> {
    section_where(section, |_| true)
}

/// Whether a function in `section` is boot code (`.init.*`, `.exit.*`), whose
/// references say nothing of run time.
pub fn is_boot_code(section: &str) -> bool {
    section_where(section, |c| c == Class::Boot).is_some()
}

/// The type entry of the C spelling `c` (a leading `const ` left out).
pub fn of_type(c: &str) -> Option<&'static TypeEntry> {
    let c = crate::model::trim_leading(c, "const ");
    tables().types.iter().find(|e| e.name == c)
}

/// The sleeping-lock entry of the C spelling `c` (`volatile ` left out), when a bare
/// global of the type is a sleeping lock: its type does not make it written at run
/// time.
pub fn sleeping_lock(c: &str) -> Option<&'static LockEntry> {
    let c = crate::model::trim_leading(c, "volatile ");
    tables().sleeping_lock.iter().find(|e| e.name == c)
}

/// The noise entry of a symbol name, when the name is no object and no function.
pub fn noise(name: &str) -> Option<&'static NoiseEntry> {
    tables()
        .noise
        .iter()
        .find(|e| name.starts_with(e.prefix.as_str()))
}

/// Whether `name` is the padding placed before a function (`__pfx_<fn>`), whose size
/// the ELF reader keeps (`Image::function_prefix`).
pub fn is_function_padding(name: &str) -> bool {
    noise(name).is_some_and(|e| e.padding)
}

/// Whether object `object` (an index into `Image::symbols`) is once-only storage by the
/// code's shape: a static local flag (a name with the compiler's `.N` suffix) of at
/// most 8 bytes that the code writes only by plain stores, each in a function that
/// also reads it (the test that guards the store: `if (!done) { done = true; ... }`).
pub fn written_once(image: &Image<'_>, object: u32) -> bool {
    let Some(s) = image.symbols.get(object as usize) else {
        return false;
    };
    let local_static = s
        .name
        .rsplit_once('.')
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !local_static || s.size == 0 || s.size > 8 || !image.access.supported {
        return false;
    }
    let refs = image.access.of_object(object);
    let mut writes = refs.iter().filter(|a| a.kind.writes()).peekable();
    writes.peek().is_some()
        && writes.all(|w| {
            w.kind == AccessKind::Write
                && refs
                    .iter()
                    .any(|r| r.function == w.function && r.kind == AccessKind::Read)
        })
}
