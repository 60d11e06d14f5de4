//! The typed changes a diff finds, and the report that holds them. Plain serializable
//! data: the renderers read it, nothing here prints.

use serde::Serialize;

use crate::layout::Placement;
use crate::model::Space;
use crate::show::Header;

/// How much a change can matter, most urgent first (the ranking order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A per-CPU variable changed lines, offset in line or co-tenants.
    Percpu,
    /// An object whose type or declaration asks for line alignment moved in its line or got new neighbours.
    AlignedObject,
    /// A write-hot candidate (type holds an atomic, refcount, lock or per-CPU counter) got new neighbours.
    WriteHot,
    /// An object now straddles a line boundary.
    Straddle,
    /// A struct with a global or per-CPU instance changed layout.
    StructWithInstance,
    /// A shift run that changes offsets in lines.
    ShiftRun,
    /// Any other placement change of a data object.
    Data,
    /// A struct without instances changed layout.
    Struct,
    /// A function changed its start modulo the line size, or its line count.
    Text,
    /// Recorded, not flagged (e.g. a whole-line shift).
    Info,
}

impl Severity {
    /// Flagged severities count towards exit code 1; `Data` and `Struct` changes are
    /// recorded (JSON, `--all`) but do not by themselves make the report flagged.
    pub fn is_flagged(self) -> bool {
        !matches!(self, Severity::Data | Severity::Struct | Severity::Info)
    }
}

/// A neighbour on a line, with its position in that build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tenant {
    pub name: String,
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub place: u64,
    pub size: u64,
}

/// Addresses in JSON are hex strings (see `model::hex`).
fn hex_pair<S: serde::Serializer>(p: &Pair<u64>, s: S) -> Result<S::Ok, S::Error> {
    crate::model::hex::pair(p.old, p.new, s)
}

/// Old and new value of one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pair<T> {
    pub old: T,
    pub new: T,
}

impl<T: PartialEq> Pair<T> {
    pub fn changed(&self) -> bool {
        self.old != self.new
    }
}

/// A data object (global or per-CPU) whose placement changed.
#[derive(Debug, Clone, Serialize)]
pub struct PlacementChange {
    pub name: String,
    pub space: Space,
    pub section: String,
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    #[serde(serialize_with = "hex_pair")]
    pub place: Pair<u64>,
    pub size: Pair<u64>,
    pub delta: i64,
    pub old: Placement,
    pub new: Placement,
    /// Neighbours on its lines before and after.
    pub co_tenants: Pair<Vec<Tenant>>,
    pub co_tenants_changed: bool,
    /// It is writable and its type holds an atomic, refcount, lock or per-CPU counter.
    pub write_hot_type: bool,
    /// How many of its type's members are write-hot.
    pub hot_members: usize,
    /// New neighbours on its lines that are write-hot too (false-sharing candidates).
    pub gained_hot_neighbours: Vec<String>,
    /// Its type (or the variable) has `DW_AT_alignment`.
    pub explicit_alignment: Option<u64>,
    /// The index of the shift run it belongs to, if any.
    pub run: Option<usize>,
    /// For a struct-typed object whose type changed: members and their lines (new build).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub member_lines: Vec<MemberLines>,
    pub severity: Severity,
    pub reasons: Vec<String>,
}

/// A member of an instance and the lines (relative to the instance's first line) it sits on.
#[derive(Debug, Clone, Serialize)]
pub struct MemberLines {
    pub name: String,
    pub offset: Pair<Option<u64>>,
    pub line: Pair<Option<u64>>,
}

/// A function whose start mod line size (or line count) changed.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionChange {
    pub name: String,
    #[serde(serialize_with = "hex_pair")]
    pub address: Pair<u64>,
    pub size: Pair<u64>,
    pub delta: i64,
    /// Start modulo the line size.
    pub phase: Pair<u64>,
    pub phase16: Pair<u64>,
    pub phase32: Pair<u64>,
    pub lines: Pair<u64>,
    pub run: Option<usize>,
    pub severity: Severity,
}

/// A maximal sequence of neighbouring symbols (in old address order, one section)
/// that all moved by the same delta.
#[derive(Debug, Clone, Serialize)]
pub struct ShiftRun {
    pub space: Space,
    pub section: String,
    pub first: String,
    pub last: String,
    pub count: usize,
    #[serde(serialize_with = "hex_pair")]
    pub start: Pair<u64>,
    #[serde(serialize_with = "hex_pair")]
    pub end: Pair<u64>,
    pub delta: i64,
    /// The delta is a whole number of lines: no line membership changes inside the run.
    pub whole_lines: bool,
    pub functions: bool,
    pub cause: Cause,
    pub severity: Severity,
}

/// What started a shift run: what changed just before its first symbol.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// The symbol before the run changed size.
    Resized { symbol: String, old: u64, new: u64 },
    /// Symbols appeared between the run and the symbol before it.
    Added { symbols: Vec<String>, bytes: u64 },
    /// Symbols disappeared there.
    Removed { symbols: Vec<String>, bytes: u64 },
    /// Its first symbol now has to start on a larger alignment (`DW_AT_alignment`).
    Realigned { symbol: String, alignment: u64 },
    /// Nothing before it changed: the start of the section, or alignment padding.
    Padding { previous: Option<String> },
}

/// One struct's layout change.
#[derive(Debug, Clone, Serialize)]
pub struct StructChange {
    pub name: String,
    pub kind: &'static str,
    pub decl_file: Option<String>,
    pub size: Pair<u64>,
    pub alignment: Pair<u64>,
    pub cachelines: Pair<u64>,
    pub holes: Pair<u64>,
    pub sum_holes: Pair<u64>,
    pub padding: Pair<u64>,
    pub members: Vec<MemberChange>,
    /// For structs asked for with `--struct`: every member, old and new side by side.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub layout: Vec<MemberChange>,
    /// Global and per-CPU objects of this type (new build, else old).
    pub instances: Vec<String>,
    pub severity: Severity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberChangeKind {
    Added,
    Removed,
    Moved,
    Resized,
    Retyped,
}

/// A member added, removed, moved, resized or retyped. Offsets in bits (bitfields).
#[derive(Debug, Clone, Serialize)]
pub struct MemberChange {
    pub name: String,
    pub kinds: Vec<MemberChangeKind>,
    #[serde(rename = "type")]
    pub type_name: Pair<Option<String>>,
    /// Byte offset (storage unit for bitfields).
    pub offset: Pair<Option<u64>>,
    pub bit_offset: Pair<Option<u64>>,
    pub bit_size: Pair<Option<u64>>,
    pub size: Pair<Option<u64>>,
    /// Line (from the struct's offset 0) the member starts on.
    pub line: Pair<Option<u64>>,
    pub straddles: Pair<Option<bool>>,
}

/// Counts per category, for the report's summary table.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    pub changed: usize,
    pub flagged: usize,
    /// Objects whose offset in their line changed.
    pub line_offset_changed: usize,
    pub runs: usize,
    pub added: usize,
    pub removed: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub structs: Counts,
    pub data: Counts,
    pub percpu: Counts,
    pub functions: Counts,
}

/// Everything a diff found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub old: Header,
    pub new: Header,
    pub line_size: u64,
    pub summary: Summary,
    pub structs: Vec<StructChange>,
    pub data: Vec<PlacementChange>,
    pub percpu: Vec<PlacementChange>,
    pub functions: Vec<FunctionChange>,
    pub runs: Vec<ShiftRun>,
    /// Names asked for with --symbol/--struct/--hot that matched, shown in full.
    pub pinned_symbols: Vec<String>,
    pub pinned_structs: Vec<String>,
    pub flagged: usize,
}
