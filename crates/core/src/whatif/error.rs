//! Why a change cannot be predicted on a build, one variant per refusal, so a caller
//! (suggest, a tool) can tell a name the build lacks from a change the model refuses.

use std::path::PathBuf;

/// A change the build or the model refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PredictError {
    /// No struct or union of that name.
    #[error("no struct or union named {0:?} in the build")]
    NoStruct(String),
    /// The struct has no member of that name, in itself or its anonymous aggregates.
    #[error("struct {name} has no member {member:?}")]
    NoMember {
        /// The struct.
        name: String,
        /// The member asked for.
        member: String,
    },
    /// More than one member of that name in the struct's anonymous aggregates.
    #[error(
        "struct {name} has {count} members named {member:?} in its anonymous structs \
         and unions: which one is meant is ambiguous"
    )]
    AmbiguousMember {
        /// The struct.
        name: String,
        /// The member asked for.
        member: String,
        /// How many members have that name.
        count: usize,
    },
    /// `--insert` of a member the struct already has.
    #[error("struct {name} already has a member {member:?}")]
    MemberExists {
        /// The struct.
        name: String,
        /// The member to insert.
        member: String,
    },
    /// `--at` past the struct's end.
    #[error("struct {name} is {size} bytes: no offset {offset} in it")]
    OffsetPastEnd {
        /// The struct.
        name: String,
        /// Its size in bytes.
        size: u64,
        /// The offset asked for.
        offset: u64,
    },
    /// `--at` inside a member.
    #[error("struct {name}: offset {offset} is inside member {member} (bytes {start}..{end})")]
    OffsetInsideMember {
        /// The struct.
        name: String,
        /// The offset asked for.
        offset: u64,
        /// The member's name, `(anonymous)` for an unnamed one.
        member: String,
        /// The member's first byte.
        start: u64,
        /// The byte past its last.
        end: u64,
    },
    /// `--after` naming a member of another aggregate than the moved one's.
    #[error(
        "struct {name}: {member} is declared in {holder} and {after} in {after_holder}: a \
         member moves only among the members of its own struct or union"
    )]
    MoveAcross {
        /// The struct.
        name: String,
        /// The member to move.
        member: String,
        /// Where it is declared (`the struct itself`, `the anonymous union at offset 8`).
        holder: String,
        /// The member it would follow.
        after: String,
        /// Where that one is declared.
        after_holder: String,
    },
    /// No data object of that name.
    #[error("no data object named {0:?} in the build")]
    NoObject(String),
    /// A bare name that several data objects have.
    #[error("{name:?} names {count} objects; qualify it as FILE:NAME")]
    AmbiguousObject {
        /// The name given.
        name: String,
        /// How many objects have it.
        count: usize,
    },
    /// No function of that name.
    #[error("no function named {0:?} in the build")]
    NoFunction(String),
    /// A bare name that several functions have.
    #[error("{name:?} names {count} functions; qualify it as FILE:NAME")]
    AmbiguousFunction {
        /// The name given.
        name: String,
        /// How many functions have it.
        count: usize,
    },
    /// A placement change of an alias: it shares the place of the object it names.
    #[error("{flag} {name}: an alias of {host} (both at {address:#x}); name {host} instead")]
    Alias {
        /// The option given (`--symbol`, `--percpu-aligned`, ...).
        flag: &'static str,
        /// The name given.
        name: String,
        /// The object it is an alias of, qualified.
        host: String,
        /// Their address.
        address: u64,
    },
    /// A placement change of an object inside another.
    #[error("{flag} {name}: it lies inside {host} ({address:#x}, {size} B); name {host} instead")]
    Inside {
        /// The option given.
        flag: &'static str,
        /// The name given.
        name: String,
        /// The object it lies in, qualified.
        host: String,
        /// That object's address.
        address: u64,
        /// Its size in bytes.
        size: u64,
    },
    /// `--percpu-aligned` of a variable that is not per-CPU.
    #[error("{flag} {name}: not a per-CPU variable")]
    NotPerCpu {
        /// `--percpu-aligned` or `--percpu-aligned-definition`.
        flag: &'static str,
        /// The name given.
        name: String,
    },
    /// `--align-functions` of a unit without functions in the build.
    #[error("--align-functions: no function of unit {0:?} in the build")]
    NoUnitFunction(String),
    /// `--read-mostly` on a build whose read-mostly data the model cannot find.
    #[error(
        "--read-mostly {0}: the build has no read-mostly data the model can find \
         (x86's .data..read_mostly before _edata)"
    )]
    NoReadMostlyData(String),
    /// `--read-mostly` of an object that is not global data outside it.
    #[error("--read-mostly {0}: not a global object outside the read-mostly data")]
    NotReadMostlyCandidate(String),
    /// `--read-mostly` of an object in another output section.
    #[error("--read-mostly {0}: not in the same output section as the read-mostly data")]
    ReadMostlyElsewhere(String),
}

/// Why a recompiled object file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The file does not read.
    #[error("{}: cannot read: {err}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        err: std::io::Error,
    },
    /// Not an object file `object` can parse.
    #[error("{}: not an object file: {err}", path.display())]
    NotObject {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        err: object::Error,
    },
    /// An object file, but not a relocatable one.
    #[error("{}: not a relocatable object (.o) file", path.display())]
    NotRelocatable {
        /// The file.
        path: PathBuf,
    },
}
