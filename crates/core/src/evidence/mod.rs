//! Evidence that an object, a struct member or a function is hot, and that storage is
//! cold. The diff ranks and flags by it, and every flag names the evidence it stands
//! on. Four kinds, strongest first: measured (perf), known (a reviewed list of what
//! kernel engineers know is hot), declared by the source (line alignment, cache-line
//! groups, the per-CPU hot area) and inferred from a type (a lock or an atomic).

pub mod cold;
pub mod conventions;
pub mod frequency;
pub mod gather;
pub mod known;
pub mod measured;

use serde::Serialize;

pub use cold::Cold;
pub use gather::gather;
pub use known::{KnownEntry, KnownList};
pub use measured::Measured;

/// How much an item of evidence weighs, weakest first (`Ord` ranks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strength {
    /// Guessed from the type: it holds a lock, an atomic or a refcount.
    Inferred,
    /// The source asks for it: line alignment, a cache-line group, the per-CPU hot area.
    Declared,
    /// On the known-hot list (built in or `--hot-list`).
    Known,
    /// Seen hot by perf (`--hot`).
    Measured,
}

impl Strength {
    /// Its name as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Strength::Inferred => "inferred",
            Strength::Declared => "declared",
            Strength::Known => "known",
            Strength::Measured => "measured",
        }
    }
}

/// What the source declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Declared {
    /// `DW_AT_alignment` of a line or more on the object or its type
    /// (`____cacheline_aligned`, `DEFINE_PER_CPU_ALIGNED`, ...).
    LineAligned {
        /// The alignment in bytes.
        alignment: u64,
    },
    /// In x86's per-CPU hot area (`pcpu_hot`, `.data..percpu..hot`).
    PercpuHotArea,
    /// Between a struct's `__cacheline_group_begin`/`_end` markers.
    CachelineGroup,
    /// `__read_mostly` (x86's `.data..read_mostly`): read hot, so a written neighbour
    /// is the risk.
    ReadMostly,
}

/// One item of evidence and what it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence<'e> {
    /// perf saw it hot; `tool` names the report kind, `detail` what it said.
    Measured {
        /// The perf report kind.
        tool: &'e str,
        /// What perf said of it, when anything.
        detail: Option<&'e str>,
    },
    /// On the known-hot list.
    Known(&'e KnownEntry),
    /// The source declares it hot.
    Declared(Declared),
    /// Its type holds `members` write-hot members (locks, atomics, refcounts).
    Inferred {
        /// Its type's write-hot members.
        members: usize,
    },
    /// The machine code writes it from `function`, which has evidence of `strength`
    /// of its own (the access map: `crate::access`).
    WrittenBy {
        /// The writing function.
        function: &'e str,
        /// That function's own evidence's strength.
        strength: Strength,
    },
}

impl Evidence<'_> {
    /// How strong it is: measured, known, declared or inferred.
    pub fn strength(&self) -> Strength {
        match self {
            Evidence::Measured { .. } => Strength::Measured,
            Evidence::Known(_) => Strength::Known,
            Evidence::Declared(_) => Strength::Declared,
            Evidence::Inferred { .. } => Strength::Inferred,
            Evidence::WrittenBy { strength, .. } => *strength,
        }
    }

    /// The stronger of two, the first on a tie.
    pub fn stronger<'e>(a: Option<Evidence<'e>>, b: Option<Evidence<'e>>) -> Option<Evidence<'e>> {
        match (a, b) {
            (Some(x), Some(y)) if y.strength() > x.strength() => Some(y),
            (Some(x), _) => Some(x),
            (None, y) => y,
        }
    }
}

impl std::fmt::Display for Evidence<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Evidence::Measured { tool, detail } => {
                write!(f, "measured: {tool}")?;
                match detail {
                    Some(d) => write!(f, " ({d})"),
                    None => Ok(()),
                }
            }
            Evidence::Known(e) => write!(f, "known: {} [{}]", e.reason, e.source),
            Evidence::Declared(Declared::LineAligned { alignment }) => {
                write!(f, "declared: aligned to {alignment} B")
            }
            Evidence::Declared(Declared::PercpuHotArea) => {
                f.write_str("declared: x86 per-CPU hot area")
            }
            Evidence::Declared(Declared::CachelineGroup) => {
                f.write_str("declared: in a cache-line group")
            }
            Evidence::Declared(Declared::ReadMostly) => {
                f.write_str("declared: __read_mostly (read hot)")
            }
            Evidence::Inferred { members } => {
                write!(f, "inferred: type holds {members} lock/atomic member(s)")
            }
            Evidence::WrittenBy { function, strength } => write!(
                f,
                "code: written by {function}(), which is {} hot",
                strength.name()
            ),
        }
    }
}

/// Written as `{"strength": ..., "what": "<sentence>"}`.
impl Serialize for Evidence<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Evidence", 2)?;
        st.serialize_field("strength", &self.strength())?;
        st.serialize_field("what", &self.to_string())?;
        st.end()
    }
}

/// Evidence kept as its sentence, for changes that own their strings (struct changes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Noted {
    /// How strong it was.
    pub strength: Strength,
    /// Its sentence.
    pub what: String,
}

impl From<Evidence<'_>> for Noted {
    fn from(e: Evidence<'_>) -> Self {
        Noted {
            strength: e.strength(),
            what: e.to_string(),
        }
    }
}

/// Every source of hot evidence a diff or `show` consults besides the images
/// themselves: the known list and what perf measured.
#[derive(Debug, Default)]
pub struct Hotness {
    /// The known-hot list, the built-in with `--hot-list` files added.
    pub known: KnownList,
    /// What perf measured (`--hot` profiles).
    pub measured: Measured,
}

impl Hotness {
    /// The built-in known list and nothing measured.
    pub fn builtin() -> Self {
        Hotness {
            known: KnownList::builtin(),
            measured: Measured::default(),
        }
    }

    /// The strongest evidence naming the object `name` (a bare symbol name) or its
    /// struct type `type_name`.
    pub fn object<'e>(&'e self, name: &str, type_name: Option<&str>) -> Option<Evidence<'e>> {
        let measured = self.measured.object(name).or_else(|| {
            type_name
                .and_then(|t| self.measured.type_(t))
                .map(|d| Evidence::Measured {
                    tool: d.tool,
                    detail: Some(d.detail.as_str()),
                })
        });
        measured.or_else(|| {
            self.known
                .object(name)
                .or_else(|| type_name.and_then(|t| self.known.type_(t)))
                .map(Evidence::Known)
        })
    }

    /// The strongest evidence naming member `member` (at byte `offset`) of struct
    /// `type_name`.
    pub fn member<'e>(
        &'e self,
        type_name: &str,
        member: &str,
        offset: u64,
    ) -> Option<Evidence<'e>> {
        self.measured
            .member(type_name, member, offset)
            .or_else(|| self.known.member(type_name, member).map(Evidence::Known))
    }

    /// The strongest evidence naming function `name`.
    pub fn function<'e>(&'e self, name: &str) -> Option<Evidence<'e>> {
        self.measured
            .function(name)
            .or_else(|| self.known.function(name).map(Evidence::Known))
    }

    /// Whether struct `type_name` has a member with evidence (any strength).
    pub fn has_members(&self, type_name: &str) -> bool {
        self.measured.has_members(type_name) || self.known.has_members(type_name)
    }

    /// Where function `name` (its symbol's bare name, as evidence names functions)
    /// stands in a printed list of the functions that write or read data, listed as
    /// `listed` (its qualified name, say): see [`WriterOrder`].
    pub fn writer_order<'n>(&self, name: &str, listed: &'n str) -> WriterOrder<'n> {
        WriterOrder {
            evidence: std::cmp::Reverse(self.function(name).map(|e| e.strength())),
            name: listed,
        }
    }
}

/// The order of every printed list of functions that write (or read) data: those with
/// evidence of hotness of their own first, the strongest first (measured, then known),
/// then by name. One key for all such lists (`show --symbol` and `--line`, the
/// type-level writers), so that what else makes a writer frequent (a frequency class,
/// when the evidence has one) joins it here once. Made by [`Hotness::writer_order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct WriterOrder<'n> {
    /// The function's own evidence of hotness, strongest first; none last.
    pub evidence: std::cmp::Reverse<Option<Strength>>,
    /// The name it is listed by, for the order among equals.
    pub name: &'n str,
}

/// The built-in known list and nothing measured, built once per process.
pub fn builtin() -> &'static Hotness {
    static BUILTIN: std::sync::LazyLock<Hotness> = std::sync::LazyLock::new(Hotness::builtin);
    &BUILTIN
}

/// Where an object lies, as far as the source's declarations go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placed {
    /// In the per-CPU hot area (`__per_cpu_hot_start` .. `_end`).
    pub hot_area: bool,
    /// In `__read_mostly` data.
    pub read_mostly: bool,
}

/// What the source declares about an object, from its alignment, its name and where
/// it lies; the strongest claim wins: the hot area, then line alignment, then
/// `__read_mostly`.
pub fn declared(
    name: &str,
    alignment: Option<u64>,
    line_size: u64,
    placed: Placed,
) -> Option<Declared> {
    if conventions::conventions().is_percpu_hot(name) || placed.hot_area {
        return Some(Declared::PercpuHotArea);
    }
    alignment
        .filter(|&a| a >= line_size)
        .map(|alignment| Declared::LineAligned { alignment })
        .or(placed.read_mostly.then_some(Declared::ReadMostly))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strengths_rank_weakest_first_and_the_stronger_wins() {
        assert!(Strength::Inferred < Strength::Declared);
        assert!(Strength::Declared < Strength::Known);
        assert!(Strength::Known < Strength::Measured);
        let inferred = Evidence::Inferred { members: 2 };
        let declared = Evidence::Declared(Declared::LineAligned { alignment: 64 });
        assert_eq!(
            Evidence::stronger(Some(inferred), Some(declared)),
            Some(declared)
        );
        assert_eq!(
            Evidence::stronger(Some(declared), Some(inferred)),
            Some(declared)
        );
        assert_eq!(Evidence::stronger(None, Some(inferred)), Some(inferred));
        assert_eq!(Evidence::stronger(None, None), None);
    }

    #[test]
    fn declared_needs_a_line_or_the_hot_area() {
        let nowhere = Placed::default();
        assert_eq!(
            declared("x", Some(64), 64, nowhere),
            Some(Declared::LineAligned { alignment: 64 })
        );
        assert_eq!(declared("x", Some(32), 64, nowhere), None);
        assert_eq!(declared("x", Some(64), 128, nowhere), None);
        assert_eq!(declared("x", None, 64, nowhere), None);
        assert_eq!(
            declared("pcpu_hot", None, 64, nowhere),
            Some(Declared::PercpuHotArea)
        );
        let read_mostly = Placed {
            read_mostly: true,
            ..nowhere
        };
        assert_eq!(
            declared("x", Some(32), 64, read_mostly),
            Some(Declared::ReadMostly)
        );
        assert_eq!(
            declared("x", Some(64), 64, read_mostly),
            Some(Declared::LineAligned { alignment: 64 })
        );
    }

    #[test]
    fn evidence_is_written_with_its_strength() {
        let e = Evidence::Declared(Declared::LineAligned { alignment: 128 });
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"strength":"declared","what":"declared: aligned to 128 B"}"#
        );
        let h = Hotness::builtin();
        let known = h.object("runqueues", None).expect("runqueues is known");
        assert_eq!(known.strength(), Strength::Known);
        assert!(known.to_string().starts_with("known: per-CPU run queue"));
        // A type entry covers every instance.
        assert_eq!(
            h.object("some_rq", Some("rq")).map(|e| e.strength()),
            Some(Strength::Known)
        );
        assert_eq!(h.object("some_rq", Some("rq_flags")), None);
        assert_eq!(
            h.member("user_struct", "__count", 0).map(|e| e.strength()),
            Some(Strength::Known)
        );
        assert_eq!(h.member("user_struct", "uid", 0), None);
        assert!(h.function("entry_SYSCALL_64").is_some());
        assert!(h.has_members("rq"));
        assert!(!h.has_members("device"));
    }

    /// Writers are listed measured first, then known, then those without evidence,
    /// each group by name.
    #[test]
    fn writers_are_ordered_by_evidence_then_name() {
        let mut h = Hotness::builtin();
        h.measured
            .add_function("zz_measured", "perf report", "10%".into());
        let mut list = [
            "b_plain",
            "copy_process",
            "a_plain",
            "zz_measured",
            "futex_wait",
        ];
        list.sort_by_key(|n| h.writer_order(n, n));
        assert_eq!(
            list,
            [
                "zz_measured",
                "copy_process",
                "futex_wait",
                "a_plain",
                "b_plain"
            ]
        );
        // The evidence is looked up by the bare name, the order among equals by the
        // name listed.
        let o = h.writer_order("copy_process", "fork.c:copy_process");
        assert_eq!(
            (o.evidence, o.name),
            (
                std::cmp::Reverse(Some(Strength::Known)),
                "fork.c:copy_process"
            )
        );
    }
}
