//! The typed changes a diff finds, and the report that holds them. Plain serializable
//! data: the renderers read it, nothing here prints.

use serde::Serialize;

pub use super::names::SymbolName;

use super::verdict::{Category, Decision};
use crate::evidence::{Cold, Evidence};
use crate::layout::Placement;
use crate::model::Header;
use crate::model::Space;

/// How much a change can matter, most urgent first (the ranking order). The
/// verdicts of `verdict.rs` map onto it; only the first five are flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Flagged: a hot member of an object (measured, known or declared) now shares a
    /// line with a member of another object that the code writes.
    HotNeighbour,
    /// Listed, not flagged (a category of its own for `--fail-on adjacent`): a hot
    /// member and a written member on the two lines of one 128-byte pair.
    HotAdjacent,
    /// Flagged: an object declared line-aligned no longer starts its line.
    LostAlignment,
    /// Flagged: a struct member that frequent code writes now shares a line with a
    /// member other frequent code touches.
    HotMember,
    /// Flagged: a struct's cache-line group grew, touches more lines, gained or lost a
    /// member.
    Group,
    /// Flagged: a hot function (measured, known or asked for) changed its start modulo
    /// the line size, or its line count.
    Text,
    /// Listed, not flagged: only its type (a lock or an atomic) suggests it is hot, and
    /// it gained a written neighbour. Fails only with `--fail-on possible`.
    Possible,
    /// A hot object whose lines changed for no flagged reason.
    HotChanged,
    /// Sharing went away (fewer neighbours) or the object now starts a line: shown for
    /// hot objects, never flagged.
    Improvement,
    /// A struct with a global or per-CPU instance changed layout (no hot member moved).
    StructWithInstance,
    /// A shift run that changes offsets in lines.
    ShiftRun,
    /// Any other placement change of a data object.
    Data,
    /// A struct without instances changed layout.
    Struct,
    /// A function without evidence of hotness changed its start modulo the line size.
    Phase,
    /// Recorded, not flagged (e.g. a whole-line shift, cold or boot-only storage).
    Info,
}

impl Severity {
    /// The category a severity falls in; `None` for severities that are only recorded.
    pub fn category(self) -> Option<Category> {
        match self {
            Severity::HotNeighbour => Some(Category::Neighbour),
            Severity::HotAdjacent => Some(Category::Adjacent),
            Severity::LostAlignment => Some(Category::Aligned),
            Severity::HotMember => Some(Category::Member),
            Severity::Group => Some(Category::Group),
            Severity::Text => Some(Category::Text),
            Severity::Possible => Some(Category::Possible),
            Severity::HotChanged
            | Severity::Improvement
            | Severity::StructWithInstance
            | Severity::ShiftRun
            | Severity::Data
            | Severity::Struct
            | Severity::Phase
            | Severity::Info => None,
        }
    }

    /// Counted as flagged: a category standing on evidence (not `possible`).
    pub fn flagged(self) -> bool {
        self.category()
            .is_some_and(|c| c != Category::Possible && c != Category::Adjacent)
    }

    /// The severity of a verdict on a data object or a struct.
    pub fn of(v: super::verdict::Verdict) -> Severity {
        use super::verdict::Verdict;
        match v {
            Verdict::Flag(Category::Neighbour) => Severity::HotNeighbour,
            Verdict::Flag(Category::Adjacent) => Severity::HotAdjacent,
            Verdict::Flag(Category::Aligned) => Severity::LostAlignment,
            Verdict::Flag(Category::Member) => Severity::HotMember,
            Verdict::Flag(Category::Group) => Severity::Group,
            Verdict::Flag(Category::Text) => Severity::Text,
            Verdict::Flag(Category::Possible) | Verdict::Possible => Severity::Possible,
            Verdict::Improvement => Severity::Improvement,
            Verdict::Changed => Severity::Data,
            Verdict::Quiet => Severity::Info,
        }
    }
}

/// A neighbour on a line, with its position in that build.
/// A co-tenant as the report lists it (name, place, size), kept as the symbol itself:
/// a diff of two kernels lists a quarter of a million of them.
#[derive(Debug, Clone, Copy)]
pub struct Tenant<'a>(pub &'a crate::model::Symbol<'a>);

impl<'a> Tenant<'a> {
    /// Its name as the report spells it.
    pub fn name(&self) -> SymbolName<'a> {
        SymbolName::of(self.0)
    }

    /// Its place: the address that decides its lines, or its per-CPU offset.
    pub fn place(&self) -> u64 {
        self.0.place
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.0.size
    }
}

impl Serialize for Tenant<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Addr(u64);
        impl Serialize for Addr {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                crate::model::hex::addr(&self.0, s)
            }
        }
        let mut st = s.serialize_struct("Tenant", 3)?;
        st.serialize_field("name", &self.name())?;
        st.serialize_field("place", &Addr(self.place()))?;
        st.serialize_field("size", &self.size())?;
        st.end()
    }
}

/// Addresses in JSON are hex strings (see `model::hex`).
fn hex_pair<S: serde::Serializer>(p: &Pair<u64>, s: S) -> Result<S::Ok, S::Error> {
    crate::model::hex::pair(p.old, p.new, s)
}

/// Old and new value of one field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Pair<T> {
    /// The value in the old build.
    pub old: T,
    /// The value in the new build.
    pub new: T,
}

impl<T: PartialEq> Pair<T> {
    /// Whether the two differ.
    pub fn changed(&self) -> bool {
        self.old != self.new
    }
}

impl<T> Pair<T> {
    /// The value in build `side`.
    pub fn get(&self, side: Side) -> &T {
        match side {
            Side::Old => &self.old,
            Side::New => &self.new,
        }
    }
}

/// One of the two builds a diff compares: the old one or the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The old build.
    Old,
    /// The new build.
    New,
}

impl Side {
    /// Its index in a two-element array of per-build values: 0 old, 1 new.
    pub fn index(self) -> usize {
        match self {
            Side::Old => 0,
            Side::New => 1,
        }
    }
}

/// A data object (global or per-CPU) whose placement changed.
#[derive(Debug, Clone)]
pub struct PlacementChange<'a> {
    /// The object's name.
    pub name: SymbolName<'a>,
    /// Global data or per-CPU.
    pub space: Space,
    /// Its output section (new build).
    pub section: &'a str,
    /// Its C type, when the debug info gives one.
    pub type_name: Option<&'a str>,
    /// Its place in each build.
    pub place: Pair<u64>,
    /// Its size in each build.
    pub size: Pair<u64>,
    /// How far it moved: new place minus old.
    pub delta: i64,
    /// The line size its placements (`placement()`) are counted in.
    pub line_size: u64,
    /// Neighbours on its lines before, then after (see `co_tenants`): one list, not
    /// two, for each of tens of thousands of objects.
    pub tenants: Vec<Tenant<'a>>,
    /// How many of `tenants` are the old ones.
    pub old_tenants: usize,
    /// Its neighbours on its lines changed.
    pub co_tenants_changed: bool,
    /// It has new neighbours (not only fewer).
    pub sharing_grew: bool,
    /// It is writable and its type holds an atomic, refcount, lock or per-CPU counter.
    pub write_hot_type: bool,
    /// How many of its type's members are write-hot.
    pub hot_members: usize,
    /// New neighbours whose written members (`diff::sharing`) share a line with one of
    /// its hot members.
    pub written_neighbours: Vec<SymbolName<'a>>,
    /// For an object with evidence of hotness (or written by a hot function): its
    /// shared lines member by member in both builds, and the hot and written members
    /// that meet on them.
    pub sharing: Option<Box<super::lines::LineSharing<'a>>>,
    /// Its type (or the variable) has `DW_AT_alignment`.
    pub explicit_alignment: Option<u64>,
    /// The index of the shift run it belongs to, if any.
    pub run: Option<usize>,
    /// For a struct-typed object whose type changed: members and their lines (new build).
    pub member_lines: Vec<MemberLines<'a>>,
    /// The strongest evidence that it is hot.
    pub evidence: Option<Evidence<'a>>,
    /// Why it is cold, when it is (never outweighs `evidence`).
    pub cold: Option<Cold>,
    /// The judgement and the rule that made it (`verdict::judge_object`).
    pub decision: Decision,
    /// What the report says of it, for `--fail-on` and the order of the list.
    pub severity: Severity,
    /// Place, size or line membership (co-tenants) changed (false for an unchanged
    /// object shown only because it was asked for).
    pub changed: bool,
    /// Counted in `flagged`: its severity has a category standing on evidence.
    pub flagged: bool,
    /// Why it is not judged write-hot or straddling although writable: `boot-only`,
    /// `read-only after init`, `read-mostly` (tracepoints and static keys).
    pub quiet: Option<&'static str>,
}

impl<'a> PlacementChange<'a> {
    /// Whether the default view (without `--all`) can list it when not asked for by
    /// name: a hot object (evidence stronger than a type guess) whose lines changed,
    /// for the worse or for the better.
    pub fn listed_by_default(&self) -> bool {
        match self.severity {
            Severity::HotNeighbour
            | Severity::HotAdjacent
            | Severity::LostAlignment
            | Severity::HotMember
            | Severity::HotChanged => true,
            Severity::Improvement | Severity::Possible => self.is_hot(),
            _ => false,
        }
    }

    /// Evidence stronger than a type guess.
    pub fn is_hot(&self) -> bool {
        self.evidence
            .is_some_and(|e| e.strength() > crate::evidence::Strength::Inferred)
    }

    /// Where it sits on lines in each build (derived from its place and size rather
    /// than kept for each of tens of thousands of objects).
    pub fn placement(&self) -> Pair<Placement> {
        let at = |place, size| crate::layout::place(place, size, self.line_size);
        Pair {
            old: at(self.place.old, self.size.old),
            new: at(self.place.new, self.size.new),
        }
    }

    /// Neighbours on its lines before and after.
    pub fn co_tenants(&self) -> Pair<&[Tenant<'a>]> {
        let (old, new) = self.tenants.split_at(self.old_tenants);
        Pair { old, new }
    }

    /// Why it is listed, derived from its numbers (written only into JSON, so not
    /// kept as a list for each object).
    pub fn reasons(&self) -> Vec<Reason> {
        let Pair { old: o, new: n } = self.placement();
        let pair = |old, new| Pair { old, new };
        let mut out = Vec::new();
        if o.offset_in_line != n.offset_in_line {
            out.push(Reason::OffsetInLine(pair(
                o.offset_in_line,
                n.offset_in_line,
            )));
        }
        if o.offset_in_pair != n.offset_in_pair {
            out.push(Reason::InPair(pair(o.offset_in_pair, n.offset_in_pair)));
        }
        if o.lines != n.lines {
            out.push(Reason::Lines(pair(o.lines, n.lines)));
        }
        if self.size.changed() {
            out.push(Reason::Size(self.size));
        }
        if o.straddles != n.straddles {
            out.push(Reason::Straddles(n.straddles));
        }
        if o.line_aligned != n.line_aligned {
            out.push(Reason::StartsLine(n.line_aligned));
        }
        if self.sharing_grew {
            out.push(Reason::CoTenantsChanged);
        } else if self.co_tenants_changed {
            out.push(Reason::FewerCoTenants);
        }
        if let Some(q) = self.quiet {
            out.push(Reason::Quiet(q));
        }
        out
    }
}

/// Written field by field as `docs/json.md` lists them, with `co_tenants` and
/// `reasons` spelled out.
impl Serialize for PlacementChange<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Written<'x, 'a> {
            name: &'x SymbolName<'a>,
            space: Space,
            section: &'a str,
            #[serde(rename = "type")]
            type_name: Option<&'a str>,
            #[serde(serialize_with = "hex_pair")]
            place: Pair<u64>,
            size: Pair<u64>,
            delta: i64,
            old: Placement,
            new: Placement,
            co_tenants: Pair<&'x [Tenant<'a>]>,
            co_tenants_changed: bool,
            write_hot_type: bool,
            hot_members: usize,
            written_neighbours: &'x [SymbolName<'a>],
            #[serde(skip_serializing_if = "Option::is_none")]
            sharing: Option<&'x super::lines::LineSharing<'a>>,
            explicit_alignment: Option<u64>,
            run: Option<usize>,
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            member_lines: &'x [MemberLines<'a>],
            evidence: Option<Evidence<'a>>,
            cold: Option<Cold>,
            decision: Decision,
            severity: Severity,
            changed: bool,
            flagged: bool,
            quiet: Option<&'static str>,
            reasons: Vec<Reason>,
        }
        let at = self.placement();
        Written {
            name: &self.name,
            space: self.space,
            section: self.section,
            type_name: self.type_name,
            place: self.place,
            size: self.size,
            delta: self.delta,
            old: at.old,
            new: at.new,
            co_tenants: self.co_tenants(),
            co_tenants_changed: self.co_tenants_changed,
            write_hot_type: self.write_hot_type,
            hot_members: self.hot_members,
            written_neighbours: &self.written_neighbours,
            sharing: self.sharing.as_deref(),
            explicit_alignment: self.explicit_alignment,
            run: self.run,
            member_lines: &self.member_lines,
            evidence: self.evidence,
            cold: self.cold,
            decision: self.decision,
            severity: self.severity,
            changed: self.changed,
            flagged: self.flagged,
            quiet: self.quiet,
            reasons: self.reasons(),
        }
        .serialize(s)
    }
}

/// Why a data object is listed: the numbers, spelled only when the report is written
/// (most of the tens of thousands of moved objects are never printed in text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Its offset within its line changed.
    OffsetInLine(Pair<u64>),
    /// Its offset within the 128-byte line pair (adjacent-line prefetch) changed.
    InPair(Pair<u64>),
    /// The number of lines it spans changed.
    Lines(Pair<u64>),
    /// Its size changed.
    Size(Pair<u64>),
    /// Straddles a line now (`true`) or no longer (`false`).
    Straddles(bool),
    /// Starts a line now (`true`) or no longer (`false`).
    StartsLine(bool),
    /// Its neighbours on its lines changed.
    CoTenantsChanged,
    /// It lost neighbours and gained none.
    FewerCoTenants,
    /// Boot-only, read-only after init or read-mostly storage.
    Quiet(&'static str),
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::OffsetInLine(p) => write!(f, "offset in line {:#04x} -> {:#04x}", p.old, p.new),
            Reason::InPair(p) => write!(f, "in pair {:#04x} -> {:#04x}", p.old, p.new),
            Reason::Lines(p) => write!(f, "lines {} -> {}", p.old, p.new),
            Reason::Size(p) => write!(f, "size {} -> {}", p.old, p.new),
            Reason::Straddles(true) => f.write_str("straddles a line now"),
            Reason::Straddles(false) => f.write_str("no longer straddles"),
            Reason::StartsLine(true) => f.write_str("now starts a line"),
            Reason::StartsLine(false) => f.write_str("no longer starts a line"),
            Reason::CoTenantsChanged => f.write_str("co-tenants changed"),
            Reason::FewerCoTenants => f.write_str("fewer co-tenants"),
            Reason::Quiet(q) => write!(f, "{q}: not judged write-hot or straddling"),
        }
    }
}

/// Written as its sentence.
impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A member of an instance and the lines (relative to the instance's first line) it sits on.
#[derive(Debug, Clone, Serialize)]
pub struct MemberLines<'a> {
    /// The member's name.
    pub name: &'a str,
    /// Its offset in the instance, in each build (absent in one when added or removed).
    pub offset: Pair<Option<u64>>,
    /// The line it starts on, relative to the instance's first line, in each build.
    pub line: Pair<Option<u64>>,
    /// Evidence that the member is hot (measured, known, or in a cache-line group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence<'a>>,
}

/// A function whose start mod line size (or line count) changed.
#[derive(Debug, Clone)]
pub struct FunctionChange<'a> {
    /// The function's name.
    pub name: SymbolName<'a>,
    /// Its address in each build.
    pub address: Pair<u64>,
    /// Its size in each build.
    pub size: Pair<u64>,
    /// How far it moved: new address minus old.
    pub delta: i64,
    /// Start modulo the line size.
    pub phase: Pair<u64>,
    /// The number of lines it spans in each build.
    pub lines: Pair<u64>,
    /// The index of the shift run it belongs to, if any.
    pub run: Option<usize>,
    /// The strongest evidence that it is hot.
    pub evidence: Option<Evidence<'a>>,
    /// The judgement and the rule that made it (`verdict`).
    pub decision: Decision,
    /// What the report says of it, for `--fail-on` and the order of the list.
    pub severity: Severity,
    /// Asked for with `--symbol`/`--hot`.
    pub pinned: bool,
    /// Counted in `flagged`: its phase or line count changed and it is hot (measured,
    /// known) or was asked for by name.
    pub flagged: bool,
}

impl FunctionChange<'_> {
    /// Start modulo `n` bytes, old and new.
    pub fn phase_mod(&self, n: u64) -> Pair<u64> {
        Pair {
            old: self.address.old % n,
            new: self.address.new % n,
        }
    }
}

/// Written with its phases modulo 16 and 32 bytes too (`phase16`, `phase32`), derived
/// from the addresses rather than kept for each of tens of thousands of functions.
impl Serialize for FunctionChange<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Written<'x, 'a> {
            name: &'x SymbolName<'a>,
            #[serde(serialize_with = "hex_pair")]
            address: Pair<u64>,
            size: Pair<u64>,
            delta: i64,
            phase: Pair<u64>,
            phase16: Pair<u64>,
            phase32: Pair<u64>,
            lines: Pair<u64>,
            run: Option<usize>,
            evidence: Option<Evidence<'a>>,
            decision: Decision,
            severity: Severity,
            pinned: bool,
            flagged: bool,
        }
        Written {
            name: &self.name,
            address: self.address,
            size: self.size,
            delta: self.delta,
            phase: self.phase,
            phase16: self.phase_mod(16),
            phase32: self.phase_mod(32),
            lines: self.lines,
            run: self.run,
            evidence: self.evidence,
            decision: self.decision,
            severity: self.severity,
            pinned: self.pinned,
            flagged: self.flagged,
        }
        .serialize(s)
    }
}

/// A maximal sequence of neighbouring symbols (in old address order, one section)
/// that all moved by the same delta.
#[derive(Debug, Clone, Serialize)]
pub struct ShiftRun {
    /// Global data, per-CPU or functions' space.
    pub space: Space,
    /// The output section the run is in.
    pub section: String,
    /// The run's first symbol (old address order).
    pub first: String,
    /// The run's last symbol.
    pub last: String,
    /// How many symbols the run holds.
    pub count: usize,
    /// The first symbol's place in each build.
    #[serde(serialize_with = "hex_pair")]
    pub start: Pair<u64>,
    /// The end of the last symbol in each build.
    #[serde(serialize_with = "hex_pair")]
    pub end: Pair<u64>,
    /// How far every symbol of the run moved.
    pub delta: i64,
    /// Where the gap before the run starts in each build: the previous neighbour's place,
    /// or the section start when the run starts the section.
    #[serde(serialize_with = "hex_pair")]
    pub base: Pair<u64>,
    /// The delta of `base` (the previous neighbour's or the section start's): the run's
    /// change of delta is `delta - previous_delta`, and `cause` accounts for it.
    pub previous_delta: i64,
    /// The delta is a whole number of lines: no line membership changes inside the run.
    pub whole_lines: bool,
    /// The run is of functions, not data.
    pub functions: bool,
    /// Why its delta differs from the one before it.
    pub cause: Cause,
    /// What the report says of the run.
    pub severity: Severity,
    /// Its root change: an index into `Report::causes` (data runs only).
    pub root: Option<usize>,
}

/// What one symbol between a run and its previous neighbour did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// The previous neighbour (or a symbol in between) changed size.
    Resized,
    /// In the new build only.
    Added,
    /// In the old build only.
    Removed,
    /// The run's first symbol must now start on `alignment` (`DW_AT_alignment`); it
    /// adds no bytes itself, only padding.
    Realigned,
    /// The `__pfx_` padding before the run's first function: its size differs between
    /// the builds.
    Prefix,
    /// The alignment padding (and `__pfx_` bytes) between the symbols in the gap, from
    /// their addresses: it changed with what lies there.
    Padding,
    /// A paired symbol that lies in the gap in the new build only (reordered in).
    MovedIn,
    /// A paired symbol that lies in the gap in the old build only (reordered out).
    MovedOut,
    /// A paired symbol that came into this output section from another one (a `.bss`
    /// object defined `__read_mostly`): `CauseItem::sections` names both.
    SectionIn,
    /// A paired symbol that left this output section for another one.
    SectionOut,
}

/// One change between a run's previous neighbour and its first symbol.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CauseItem {
    /// The symbol that changed.
    pub symbol: String,
    /// How it changed (resized, added, removed, moved in or out).
    pub change: ItemKind,
    /// Its size in each build.
    pub size: Pair<u64>,
    /// Signed bytes it adds to the gap (new size - old size).
    pub bytes: i64,
    /// For `SectionIn` and `SectionOut`: its output section in each build (and then
    /// `size` is its size in each, `bytes` what it adds to this side's gap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sections: Option<Pair<String>>,
}

/// Why a shift run's delta differs from its previous neighbour's (or its section
/// start's): everything that changed in between, in both builds. Every kind carries
/// `bytes`, the signed net size it accounts for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// The listed changes sum to `bytes`; the rest of the change of delta (`padding`,
    /// smaller in size than `alignment`) is alignment padding before the run's first symbol.
    Changes {
        /// The nearest symbol before the run in both builds (none at a section start).
        previous: Option<String>,
        /// The changes in between, the largest first.
        items: Vec<CauseItem>,
        /// Items left out of `items` (only the largest are listed); `bytes` sums all.
        #[serde(skip_serializing_if = "is_zero")]
        omitted_items: usize,
        /// What the listed changes sum to, in bytes.
        bytes: i64,
        /// The alignment padding left of the change of delta.
        padding: i64,
        /// The alignment of the run's first symbol, which bounds `padding`.
        alignment: u64,
    },
    /// Nothing in between changed: the change of delta (`padding`, smaller than
    /// `alignment`) is alignment padding alone.
    Padding {
        /// The nearest symbol before the run in both builds (none at a section start).
        previous: Option<String>,
        /// Always 0: nothing in between changed size.
        bytes: i64,
        /// The alignment padding that is the whole change of delta.
        padding: i64,
        /// The alignment of the run's first symbol, which bounds `padding`.
        alignment: u64,
    },
    /// Symbols changed order around the run's start: `previous` is the nearest symbol
    /// before the run in both builds, and `items` include the symbols that lie between
    /// in one build only (`moved_in`/`moved_out`); their sum explains the change up to
    /// `padding` as for `changes`.
    Reordered {
        /// The nearest symbol before the run in both builds (none at a section start).
        previous: Option<String>,
        /// The changes in between, the symbols moved in or out among them.
        items: Vec<CauseItem>,
        /// Items left out of `items` (only the largest are listed); `bytes` sums all.
        #[serde(skip_serializing_if = "is_zero")]
        omitted_items: usize,
        /// What the listed changes sum to, in bytes.
        bytes: i64,
        /// The alignment padding left of the change of delta.
        padding: i64,
        /// The alignment of the run's first symbol, which bounds `padding`.
        alignment: u64,
    },
    /// What changed in between (`items`, summing to `bytes`) leaves `residual` bytes
    /// of the change of delta that alignment padding cannot account for.
    Unexplained {
        /// The nearest symbol before the run in both builds (none at a section start).
        previous: Option<String>,
        /// The changes in between, the largest first.
        items: Vec<CauseItem>,
        /// Items left out of `items` (only the largest are listed); `bytes` sums all.
        #[serde(skip_serializing_if = "is_zero")]
        omitted_items: usize,
        /// What the listed changes sum to, in bytes.
        bytes: i64,
        /// The bytes of the change of delta left unexplained.
        residual: i64,
        /// No symbol before the run precedes it in both builds (the code before it was
        /// laid out in another order, as a module's functions often are): nothing is
        /// summed from the section start, and `items` is empty.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        no_base: bool,
    },
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Cause {
    /// The signed net size this cause accounts for.
    pub fn bytes(&self) -> i64 {
        match self {
            Cause::Changes { bytes, .. }
            | Cause::Padding { bytes, .. }
            | Cause::Reordered { bytes, .. }
            | Cause::Unexplained { bytes, .. } => *bytes,
        }
    }
}

/// One struct's layout change.
#[derive(Debug, Clone, Serialize)]
pub struct StructChange {
    /// The struct's (or union's) name.
    pub name: String,
    /// `struct` or `union`.
    pub kind: &'static str,
    /// The file that declares it, when the debug info says.
    pub decl_file: Option<String>,
    /// Its size in bytes in each build.
    pub size: Pair<u64>,
    /// Its alignment in each build.
    pub alignment: Pair<u64>,
    /// The cache lines it spans from offset 0, in each build.
    pub cachelines: Pair<u64>,
    /// pahole's count of holes in each build.
    pub holes: Pair<u64>,
    /// The bytes of those holes in each build.
    pub sum_holes: Pair<u64>,
    /// Its tail padding in each build.
    pub padding: Pair<u64>,
    /// Its members that were added, removed, moved, resized or retyped.
    pub members: Vec<MemberChange>,
    /// For structs asked for with `--struct`: every member, old and new side by side.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub layout: Vec<MemberChange>,
    /// Global and per-CPU objects of this type (new build, else old).
    pub instances: Vec<String>,
    /// Cache-line groups that changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupChange>,
    /// Its lines judged by who shares them (`struct_lines`), when both builds have a
    /// typed access map.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<super::struct_lines::StructSharing>,
    /// The judgement (`verdict::judge_struct`) and its rule.
    pub decision: Decision,
    /// What the report says of it, for `--fail-on` and the order of the list.
    pub severity: Severity,
}

/// How a member changed; one member may change in several ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberChangeKind {
    /// In the new build only.
    Added,
    /// In the old build only.
    Removed,
    /// Its offset changed.
    Moved,
    /// Its size changed.
    Resized,
    /// Its type changed.
    Retyped,
}

/// A member added, removed, moved, resized or retyped. Offsets in bits (bitfields).
#[derive(Debug, Clone, Serialize)]
pub struct MemberChange {
    /// The member's name.
    pub name: String,
    /// Every way it changed.
    pub kinds: Vec<MemberChangeKind>,
    /// Its type's name in each build.
    #[serde(rename = "type")]
    pub type_name: Pair<Option<String>>,
    /// Byte offset (storage unit for bitfields).
    pub offset: Pair<Option<u64>>,
    /// Its bit offset in each build (bitfields).
    pub bit_offset: Pair<Option<u64>>,
    /// Its width in bits in each build (bitfields).
    pub bit_size: Pair<Option<u64>>,
    /// Its size in bytes in each build.
    pub size: Pair<Option<u64>>,
    /// Line (from the struct's offset 0) the member starts on.
    pub line: Pair<Option<u64>>,
    /// Whether it straddles a line boundary, in each build.
    pub straddles: Pair<Option<bool>>,
    /// Evidence that the member is hot (measured, known, in a cache-line group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<crate::evidence::Noted>,
}

/// What happened to one group (present in both builds, or in one).
#[derive(Debug, Clone, Serialize)]
pub struct GroupChange {
    /// The group's name (`__cacheline_group_begin__NAME`).
    pub name: String,
    /// Its offset in the struct in each build.
    pub offset: Pair<Option<u64>>,
    /// Its size in bytes in each build.
    pub size: Pair<Option<u64>>,
    /// The lines it spans in each build.
    pub lines: Pair<Option<u64>>,
    /// Whether it starts on a line, in each build.
    pub line_aligned: Pair<Option<bool>>,
    /// Members in the group in the new build only.
    pub added_members: Vec<String>,
    /// Members in the group in the old build only.
    pub removed_members: Vec<String>,
    /// Touches more lines than before, or no longer starts a line: flagged.
    pub flagged: bool,
}

/// What started one or more shift runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Root {
    /// A struct type changed size (`RootCause::via` names the resized objects of that
    /// type that started runs).
    Struct {
        /// The struct.
        name: String,
        /// How many bytes it grew (negative: shrank).
        bytes: i64,
    },
    /// An object or function changed size (its type, if any, kept its size).
    Resized {
        /// The object or function.
        symbol: String,
        /// How many bytes it grew (negative: shrank).
        bytes: i64,
    },
    /// A symbol new in the new build.
    Added {
        /// The symbol.
        symbol: String,
        /// Its size.
        bytes: i64,
    },
    /// A symbol gone from the new build.
    Removed {
        /// The symbol.
        symbol: String,
        /// Its size in the old build.
        bytes: i64,
    },
    /// An object left one output section for another (`__read_mostly` on a `.bss`
    /// object): the same object in both, not a removal and an addition.
    Moved {
        /// The object.
        symbol: String,
        /// Its output section in the old build.
        from: String,
        /// Its output section in the new build.
        to: String,
        /// Its size in each build.
        size: Pair<u64>,
    },
    /// An object must now start on a larger alignment.
    Realigned {
        /// The object.
        symbol: String,
    },
    /// Nothing in between changed size and the symbol before did not move: the
    /// alignment padding before `before` changed.
    Padding {
        /// The symbol whose padding changed.
        before: String,
        /// Its alignment, which bounds the padding.
        alignment: u64,
    },
    /// The shift could not be explained.
    Unexplained {
        /// The symbol before which the shift starts.
        before: String,
    },
}

impl std::fmt::Display for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Root::Struct { name, bytes } => write!(f, "struct {name} {bytes:+} B"),
            Root::Resized { symbol, bytes } => write!(f, "{symbol} {bytes:+} B"),
            Root::Added { symbol, bytes } => write!(f, "{symbol} added ({bytes} B)"),
            Root::Removed { symbol, bytes } => write!(f, "{symbol} removed ({bytes} B)"),
            Root::Moved {
                symbol,
                from,
                to,
                size,
            } if size.old == size.new => {
                write!(f, "{symbol} moved from {from} to {to} ({} B)", size.new)
            }
            Root::Moved {
                symbol,
                from,
                to,
                size,
            } => write!(
                f,
                "{symbol} moved from {from} ({} B) to {to} ({} B)",
                size.old, size.new
            ),
            Root::Realigned { symbol } => write!(f, "{symbol} now aligned"),
            Root::Padding { before, alignment } => {
                write!(f, "alignment padding before {before} (align {alignment})")
            }
            Root::Unexplained { before } => write!(f, "unexplained shift before {before}"),
        }
    }
}

/// One root change and everything it moved.
#[derive(Debug, Clone, Serialize)]
pub struct RootCause {
    /// What started the runs.
    pub root: Root,
    /// The sentence the report prints for `root`.
    pub what: String,
    /// Indexes of its runs in `Report::runs`.
    pub runs: Vec<usize>,
    /// For a struct: its resized objects that started runs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// Objects in its runs that changed line membership (delta not a whole number of
    /// lines), and those in whole-line runs.
    pub moved: usize,
    /// Objects moved in its whole-line runs (line membership unchanged).
    pub moved_whole_lines: usize,
    /// Of the moved objects, those with evidence of hotness whose lines changed.
    pub hot: usize,
    /// Their names (the first few in place order).
    pub hot_names: Vec<String>,
    /// Spaces its runs are in.
    pub percpu: bool,
    /// Its runs include global data.
    pub global: bool,
}

/// Counts per row of the report's summary table (see docs/json.md).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    /// Paired symbols whose place, size or line membership changed (structs: whose
    /// layout changed).
    pub changed: usize,
    /// Of those, the ones flagged (their severity's category; functions only when
    /// asked for by name or with `--fail-on text`).
    pub flagged: usize,
    /// Paired symbols whose offset in their line (functions: start mod line size)
    /// changed; structs: with a member that changed line.
    pub line_offset_changed: usize,
    /// Shift runs that change line membership (delta not a multiple of the line).
    pub runs: usize,
    /// Shift runs by a whole number of lines (no line membership changes).
    pub whole_line_runs: usize,
    /// Objects that only lost neighbours (severity `improvement`): never flagged.
    pub improvements: usize,
    /// Symbols (structs) in the new build only.
    pub added: usize,
    /// Symbols (structs) in the old build only.
    pub removed: usize,
}

/// The summary table: one row of counts per kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Struct types.
    pub structs: Counts,
    /// Global data objects.
    pub data: Counts,
    /// Per-CPU variables.
    pub percpu: Counts,
    /// Functions.
    pub functions: Counts,
}

/// Everything a diff found.
#[derive(Debug, Clone, Serialize)]
pub struct Report<'a> {
    /// The old build's header (path, build-id, release, line size).
    pub old: Header,
    /// The new build's header.
    pub new: Header,
    /// What two inputs of different kinds are compared on, and what not
    /// (`load::common_ground`), for the first screen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// How much of each `--hot` file the builds have (`evidence::gather`); a partial
    /// match is noted on the first screen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hot_files: Vec<crate::evidence::gather::HotFileMatch>,
    /// The cache line size the diff counts in.
    pub line_size: u64,
    /// The summary table's counts.
    pub summary: Summary,
    /// The structs whose layout changed.
    pub structs: Vec<StructChange>,
    /// Boxed as the parallel judging builds them: moving tens of thousands of large
    /// changes out of their boxes into flat lists cost a tenth of the snapshot diff.
    pub data: Vec<Box<PlacementChange<'a>>>,
    /// The per-CPU variables listed, as `data` is for global data.
    pub percpu: Vec<Box<PlacementChange<'a>>>,
    /// The functions listed.
    pub functions: Vec<Box<FunctionChange<'a>>>,
    /// Every shift run, data and functions.
    pub runs: Vec<ShiftRun>,
    /// The root changes behind the data runs, most hot objects moved first.
    pub causes: Vec<RootCause>,
    /// Names asked for with --symbol/--struct/--hot that matched, shown in full.
    pub pinned_symbols: Vec<String>,
    /// Structs asked for with `--struct` that matched, shown in full.
    pub pinned_structs: Vec<String>,
    /// Sum of the per-row `flagged` counts.
    pub flagged: usize,
    /// Categories that make exit 1 (`--fail-on`, default all but `text`).
    pub fail_on: Vec<Category>,
    /// Flagged changes in a `fail_on` category, plus asked-for functions that changed
    /// phase: exit 1 when non-zero.
    pub failing: usize,
    /// Address ranges and sections treated as boot-only or read-mostly in the new build.
    pub quiet_regions: Vec<QuietRegion>,
    /// What the report counts instead of listing: type guesses with a new written
    /// neighbour by C type, cold storage that gained neighbours by kind.
    pub patterns: Vec<PatternCount>,
}

/// Which list a pattern count belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PatternKind {
    /// Only a type guess says it is hot (`possible`).
    Possible,
    /// Cold by convention (tracing, sysfs, ...).
    Cold,
}

/// How many unlisted objects of one pattern changed for the worse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatternCount {
    /// Which list it belongs to.
    pub kind: PatternKind,
    /// The pattern: a C type, or a kind of cold storage.
    pub what: String,
    /// How many objects of it changed for the worse.
    pub count: usize,
}

/// A range whose objects are never judged write-hot or straddling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuietRegion {
    /// What the range is (`init`, `read-mostly`, ...).
    pub what: &'static str,
    /// How it was recognised: a section name pattern, or the boundary symbols.
    pub from: String,
    /// Its first address, when known.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub start: Option<u64>,
    /// The address past its end, when known.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub end: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Binding, Symbol};

    #[test]
    fn symbol_names_spell_and_match_as_qualified_names() {
        let mut s = Symbol::test_object("rs", 0x1000, 8);
        s.file = Some("fork.c");
        let global = SymbolName::of(&s);
        s.binding = Binding::Local;
        let local = SymbolName::of(&s);
        s.file = None;
        let bare = SymbolName::of(&s);
        for (n, text) in [(global, "rs"), (local, "fork.c:rs"), (bare, "rs")] {
            assert_eq!(n.to_string(), text);
            assert!(n.is(text), "{text}");
            assert_eq!(serde_json::to_string(&n).unwrap(), format!("\"{text}\""));
        }
        for wrong in [
            "fork.c",
            "fork.crs",
            "fork.c:r",
            "fork.c:rs ",
            "xfork.c:rs",
            ":rs",
        ] {
            assert!(!local.is(wrong), "{wrong}");
        }
        assert!(!global.is("fork.c:rs"));
    }

    /// One root for an object that changed output section, with both sizes when it
    /// changed size too (6.12.118 -> 7.3.4: `netlink_chain`, 48 B in `.data`, 40 B in
    /// `.bss`, readelf -sW).
    #[test]
    fn an_object_moved_between_sections_is_spelled_with_its_sizes() {
        let moved = |old, new| Root::Moved {
            symbol: "af_netlink.c:netlink_chain".into(),
            from: ".data".into(),
            to: ".bss".into(),
            size: Pair { old, new },
        };
        assert_eq!(
            moved(48, 40).to_string(),
            "af_netlink.c:netlink_chain moved from .data (48 B) to .bss (40 B)"
        );
        assert_eq!(
            moved(4, 4).to_string(),
            "af_netlink.c:netlink_chain moved from .data to .bss (4 B)"
        );
    }
}
