//! What the judgement of shared lines finds, as data: each tenant's members on a line,
//! which are hot and which written and on what evidence, and where a hot member of one
//! object meets a written member of another (`sharing` computes it; the report and
//! `--explain` print it).

use std::borrow::Cow;

use serde::Serialize;

use super::names::SymbolName;
use crate::evidence::frequency::Frequency;
use crate::evidence::{Evidence, Strength};
use crate::model::access::AccessKind;

/// Why a member is hot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Hot<'a> {
    /// Evidence names the member itself (a known or measured member).
    Member {
        /// The evidence naming it.
        evidence: Evidence<'a>,
    },
    /// The code writes it from a function that has evidence of its own.
    Writer {
        /// The writing function.
        function: &'a str,
        /// That function's evidence.
        evidence: Evidence<'a>,
    },
    /// The object has evidence as a whole and names no member: its write-type members
    /// (lock, atomic, refcount, counter) carry it.
    WriteType {
        /// The object's evidence.
        evidence: Evidence<'a>,
    },
    /// The object has evidence as a whole and no write-type member: all of it is hot.
    Whole {
        /// The object's evidence.
        evidence: Evidence<'a>,
    },
}

impl<'a> Hot<'a> {
    /// The evidence it stands on, whichever way it is hot.
    pub fn evidence(&self) -> Evidence<'a> {
        match *self {
            Hot::Member { evidence }
            | Hot::Writer { evidence, .. }
            | Hot::WriteType { evidence }
            | Hot::Whole { evidence } => evidence,
        }
    }
}

impl Hot<'_> {
    /// A short spelling for listings of members, where the object's evidence is
    /// printed once beside them.
    pub fn short(&self) -> String {
        match self {
            Hot::Member { evidence } => format!("hot: {} member", evidence.strength().name()),
            Hot::Writer { function, .. } => format!("hot: written by {function}()"),
            Hot::WriteType { .. } => "hot: a lock or atomic of a hot object".to_string(),
            Hot::Whole { .. } => "hot: the whole object".to_string(),
        }
    }
}

impl std::fmt::Display for Hot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hot::Member { evidence } => write!(f, "hot: {evidence}"),
            Hot::Writer { function, evidence } => {
                write!(f, "hot: written by {function}() ({evidence})")
            }
            Hot::WriteType { evidence } => {
                write!(f, "hot: a write-type member of a hot object ({evidence})")
            }
            Hot::Whole { evidence } => {
                write!(
                    f,
                    "hot: the whole object, no write-type member ({evidence})"
                )
            }
        }
    }
}

/// Why a member is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Written<'a> {
    /// The code writes it: `function` (one with evidence of hotness first, else the
    /// first by name) and `writers` functions in all, boot-only code left out.
    Code {
        /// The function named for it.
        function: &'a str,
        /// How that function writes it (store, read-modify-write, atomic).
        how: AccessKind,
        /// How many functions write it.
        writers: u32,
        /// `function` has evidence of hotness of its own (known or measured): the
        /// member is hot-written.
        #[serde(skip_serializing_if = "Option::is_none")]
        hot: Option<Strength>,
        /// How often `function` runs (`evidence::frequency`).
        freq: Frequency,
        /// The caller that makes it frequent (`Often::CalledBy`).
        #[serde(skip_serializing_if = "Option::is_none")]
        via: Option<&'a str>,
    },
    /// Its object's own evidence of hotness, on a write-type member.
    Evidence {
        /// The object's evidence.
        evidence: Evidence<'a>,
    },
    /// No code touches it, and its type is a lock, an atomic or a counter: inferred.
    Inferred,
}

impl Written<'_> {
    /// A short spelling for the report's one-line items: who writes, or on what ground.
    pub fn short(&self) -> String {
        match self {
            Written::Code {
                function,
                writers,
                freq,
                via,
                ..
            } => {
                let by = format!("written by {function}()");
                let by = match writers {
                    0 | 1 => by,
                    n => format!("{by} and {} more", n - 1),
                };
                format!("{by} ({})", freq.label(*via))
            }
            Written::Evidence { evidence } => {
                format!("written: {} hot", evidence.strength().name())
            }
            Written::Inferred => "written by its type only".to_string(),
        }
    }
}

impl std::fmt::Display for Written<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Written::Code {
                function,
                how,
                writers,
                freq,
                via,
                ..
            } => {
                let how = match how {
                    AccessKind::Atomic => "atomically ",
                    AccessKind::Address { .. } => "through its address ",
                    _ => "",
                };
                write!(f, "written {how}by {function}()")?;
                match writers {
                    0 | 1 => {}
                    n => write!(f, " and {} more", n - 1)?,
                }
                write!(f, " ({})", freq.label(*via))
            }
            Written::Evidence { evidence } => write!(f, "written: {evidence}"),
            Written::Inferred => {
                f.write_str("written: inferred from its type (no code touches it)")
            }
        }
    }
}

/// One member's bytes on one line, and what they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineMember<'a> {
    /// The member's name (`ns.count` spelled as its leaf, `[3].lock` in an array of
    /// structs), or the object's own name when it has no members.
    pub name: Cow<'a, str>,
    /// Its bytes on the line, as offsets into the object: `[from, to)`.
    pub from: u64,
    /// The offset past its last byte on the line.
    pub to: u64,
    /// Why it is hot, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot: Option<Hot<'a>>,
    /// Why it is written, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<Written<'a>>,
    /// The functions that write it (indexes into its image's symbols, sorted, each
    /// once): every writer for the object's own members, the frequent ones for a
    /// neighbour's written members (`Meeting::tie` reads them).
    #[serde(skip)]
    pub writers: Vec<u32>,
}

/// One object's part of a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineTenant<'a> {
    /// The object's name.
    pub name: SymbolName<'a>,
    /// Its pairing key (the same object in both builds has the same one).
    #[serde(skip)]
    pub key: u32,
    /// Where it starts (an address, or a per-CPU offset).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub place: u64,
    /// Its bytes on the line, as offsets into it: `[from, to)`.
    pub from: u64,
    /// The offset past its last byte on the line.
    pub to: u64,
    /// Its members on the line, in offset order.
    pub members: Vec<LineMember<'a>>,
}

/// A line that the object shares, with every tenant's members on it; the object
/// first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedLine<'a> {
    /// The line's first byte (an address, or a per-CPU offset).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub start: u64,
    /// Every tenant's part of it, the object first.
    pub tenants: Vec<LineTenant<'a>>,
}

/// A hot member of the object and a written member of another object on one line
/// (or, `adjacent`, on the two lines of one 128-byte pair).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Meeting<'a> {
    /// The hot member's line (its first byte).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub line: u64,
    /// The object's hot member.
    pub hot: LineMember<'a>,
    /// The other object.
    pub neighbour: SymbolName<'a>,
    /// The neighbour's pairing key.
    #[serde(skip)]
    pub neighbour_key: u32,
    /// The neighbour's line (the pair's other line when `adjacent`).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub neighbour_line: u64,
    /// The neighbour's written member.
    pub written: LineMember<'a>,
    /// The two are on the two lines of one 128-byte pair, not on one line.
    pub adjacent: bool,
    /// What it weighs, by who writes the other member and how often (`Tie::of`).
    pub tie: Tie,
}

/// What a meeting weighs, by who writes the other object's member and how often:
/// false sharing costs something only when both sides are touched often, by different
/// code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tie {
    /// Only its type says the other member is written: a guess.
    Typed,
    /// Its writers run rarely (boot, `.cold`, once-only, firmware, registration,
    /// configuration, or only rare callers).
    RareWriter,
    /// Nothing shows how often its writers run.
    Unknown,
    /// A frequent writer of the other member writes the hot member too: the two are
    /// written together (`copy_process()` increments `nr_threads` and `total_forks`
    /// under `tasklist_lock`), true sharing, cheaper on one line than on two. Which
    /// lock a writer holds is not read: a function writing both counts as writing
    /// them together.
    CoWritten,
    /// Frequent code that does not write the hot member writes it: false sharing.
    Frequent,
}

impl Tie {
    /// What a meeting of the hot member `hot` with the other object's member `written`
    /// weighs.
    pub fn of(hot: &LineMember<'_>, written: &LineMember<'_>) -> Tie {
        match &written.written {
            Some(Written::Code { freq, .. }) => {
                let frequent = &written.writers;
                if !frequent.is_empty() {
                    match frequent
                        .iter()
                        .any(|w| hot.writers.binary_search(w).is_ok())
                    {
                        true => Tie::CoWritten,
                        false => Tie::Frequent,
                    }
                } else if freq.is_rare() {
                    Tie::RareWriter
                } else {
                    Tie::Unknown
                }
            }
            Some(Written::Evidence { .. }) => Tie::Frequent,
            Some(Written::Inferred) | None => Tie::Typed,
        }
    }
}

impl Meeting<'_> {
    pub(super) fn same(&self, other: &Meeting<'_>) -> bool {
        self.hot.name == other.hot.name
            && self.neighbour_key == other.neighbour_key
            && self.written.name == other.written.name
    }
}

/// One build's view of an object's lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LinesOf<'a> {
    /// Its lines that another object shares (or whose pair partner holds a written
    /// member meeting one of its hot members).
    pub shared: Vec<SharedLine<'a>>,
    /// Where its hot members meet written members of other objects.
    pub meetings: Vec<Meeting<'a>>,
    /// It has hot members, each alone on its line (no other object's bytes there).
    pub hot_alone: bool,
    /// It has hot members at all.
    pub has_hot: bool,
    /// Where each hot member lies (cut to each of its lines), and whether it has the
    /// line to itself; at most `HOT_PLACES` of them.
    pub hot: Vec<HotPlace<'a>>,
}

/// How many hot members' places `LinesOf::hot` keeps (a whole hot array has many).
pub const HOT_PLACES: usize = 16;

/// A hot member on one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HotPlace<'a> {
    /// The line's first byte.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub line: u64,
    /// The hot member's bytes on it.
    pub member: LineMember<'a>,
    /// No other object has bytes on the line.
    pub alone: bool,
}

/// What the judgement of one object's lines found, in both builds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineSharing<'a> {
    /// The old build's view.
    pub old: LinesOf<'a>,
    /// The new build's view.
    pub new: LinesOf<'a>,
    /// Meetings in the new build that the old one did not have on one line.
    pub new_meetings: Vec<Meeting<'a>>,
    /// Meetings of the old build gone in the new one.
    pub gone: usize,
    /// Which members carry the object's evidence: `named` (evidence or hot writers
    /// name them), `write-type` (its locks, atomics, counters) or `whole`.
    pub hot_from: &'static str,
}

impl LineSharing<'_> {
    /// The weightiest new meeting on one line (`Tie`), if any.
    pub fn same_line(&self) -> Option<Tie> {
        self.new_meetings
            .iter()
            .filter(|m| !m.adjacent)
            .map(|m| m.tie)
            .max()
    }

    /// A new meeting across a 128-byte pair with a member frequent code writes.
    pub fn adjacent(&self) -> bool {
        self.new_meetings
            .iter()
            .any(|m| m.adjacent && m.tie == Tie::Frequent)
    }

    /// The hot members, which shared their lines with another object before, are
    /// each alone on their lines now.
    pub fn hot_now_alone(&self) -> bool {
        self.new.hot_alone && !self.old.hot_alone && self.old.has_hot
    }

    /// The strongest evidence among the hot members' (the object's own, or a hot
    /// writer's).
    pub fn strength(&self) -> Option<Strength> {
        self.new
            .shared
            .iter()
            .chain(&self.old.shared)
            .filter_map(|l| l.tenants.first())
            .flat_map(|t| &t.members)
            .chain(self.new.meetings.iter().map(|m| &m.hot))
            .filter_map(|m| m.hot.map(|h| h.evidence().strength()))
            .max()
    }
}
