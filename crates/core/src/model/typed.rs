//! The typed access map as data: which function touches which member of which struct
//! type through a pointer, as the machine code and the build's DWARF say (the `typed`
//! module reads it). It holds for every instance of the type, and lives with the model
//! because an image carries it, a snapshot keeps it, and `show` reads it.

use serde::{Deserialize, Serialize};

use super::access::AccessKind;

/// No index (a member path, a per-CPU object).
pub const NONE: u32 = u32::MAX;

/// One instruction's access to a member of a struct or union type, reached through a
/// pointer whose type the DWARF of the build (or the data flow from it) gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TypedAccess {
    /// The type (index into `TypedMap::types`).
    pub ty: u32,
    /// Byte offset into the type of the first byte the operand touches.
    pub offset: u32,
    /// The function it belongs to (index into `Image::symbols`); a `.cold` part is
    /// credited to its parent.
    pub function: u32,
    /// The instruction's address.
    pub insn: u64,
    /// The member path at `offset` (index into `TypedMap::members`), `NONE` in padding.
    pub member: u32,
    /// Operand bytes.
    pub size: u8,
    /// How the member is used: read, write, read-modify-write or atomic.
    pub kind: AccessKind,
    /// In the function's `.cold` part.
    pub cold: bool,
    /// The per-CPU object reached (index into `Image::symbols`), `NONE` otherwise.
    pub percpu: u32,
    /// Reached through another CPU's offset (`per_cpu()`, `per_cpu_ptr(p, cpu)`), not
    /// through `%gs:` or `this_cpu_ptr()`.
    pub remote: bool,
}

/// Why a base-register memory operand has no type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Untyped {
    /// No variable's location names the register, and no data flow reaches it.
    NoLocation,
    /// The register was typed, and a call clobbered it.
    Call,
    /// Loaded from memory whose type is unknown, or from a member that is no pointer.
    Indirect,
    /// Typed on one path and not on another (a join, a loop head).
    Join,
    /// A pointer to no struct (`void *`, a scalar, a function) or computed otherwise.
    Other,
    /// The function has no DWARF (assembly, or a unit without debug information).
    NoDwarf,
}

/// Every reason, in the order reports list them.
pub const UNTYPED: [Untyped; 6] = [
    Untyped::NoLocation,
    Untyped::Call,
    Untyped::Indirect,
    Untyped::Join,
    Untyped::Other,
    Untyped::NoDwarf,
];

impl Untyped {
    /// The reason as reports spell it.
    pub fn label(self) -> &'static str {
        match self {
            Untyped::NoLocation => "no location",
            Untyped::Call => "lost across a call",
            Untyped::Indirect => "indirect",
            Untyped::Join => "lost at a join",
            Untyped::Other => "other",
            Untyped::NoDwarf => "no DWARF",
        }
    }
}

/// How many memory operands with a base register were typed, and why the others were
/// not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Operands with a base register other than the stack's (`%rsp`, `%rbp`).
    pub operands: u64,
    /// Typed as a member of a struct or union.
    pub members: u64,
    /// Typed as a pointer to something else (a scalar, an array of scalars).
    pub scalars: u64,
    /// Untyped, by reason (indexed like `UNTYPED`).
    pub untyped: [u64; 6],
    /// Operands based on the stack pointer or the frame pointer (not counted above).
    pub stack: u64,
}

impl Coverage {
    /// Operands typed, as a member or as a scalar.
    pub fn typed(&self) -> u64 {
        self.members + self.scalars
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Coverage) {
        self.operands += other.operands;
        self.members += other.members;
        self.scalars += other.scalars;
        self.stack += other.stack;
        for (a, b) in self.untyped.iter_mut().zip(other.untyped) {
            *a += b;
        }
    }

    /// Counts one untyped operand.
    pub fn miss(&mut self, why: Untyped) {
        self.operands += 1;
        self.untyped[why as usize] += 1;
    }
}

/// One function's coverage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCoverage {
    /// Index into `Image::symbols`.
    pub function: u32,
    /// Operands with a base register other than the stack's.
    pub operands: u32,
    /// Of them, typed (member or scalar).
    pub typed: u32,
}

/// Every typed access of a build, with the names they use and the coverage.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TypedMap {
    /// False when the code was not read (not x86-64, no DWARF): no evidence either way.
    pub supported: bool,
    /// Type names, sorted: `rq`, `sock`, a typedef's name for an anonymous struct.
    pub types: Vec<String>,
    /// Member paths, sorted: `nr_running`, `__sk_common.skc_refcnt`, `arr[2].x`, the
    /// alternatives of a union joined by ` | `.
    pub members: Vec<String>,
    /// Sorted by (type, offset, function, insn): the same with any number of threads.
    pub accesses: Vec<TypedAccess>,
    /// The whole build's coverage.
    pub coverage: Coverage,
    /// Per function with at least one operand, sorted by function.
    pub functions: Vec<FunctionCoverage>,
}

impl TypedMap {
    /// The index of type `name`.
    pub fn type_index(&self, name: &str) -> Option<u32> {
        let i = self.types.binary_search_by(|t| t.as_str().cmp(name)).ok()?;
        u32::try_from(i).ok()
    }

    /// The accesses to type `name`, by offset.
    pub fn of_type(&self, name: &str) -> &[TypedAccess] {
        let Some(ty) = self.type_index(name) else {
            return &[];
        };
        let from = self.accesses.partition_point(|a| a.ty < ty);
        let to = self.accesses.partition_point(|a| a.ty <= ty);
        &self.accesses[from..to]
    }

    /// The member path of `access`, `None` in padding.
    pub fn member(&self, access: &TypedAccess) -> Option<&str> {
        self.members.get(access.member as usize).map(String::as_str)
    }

    /// The accesses to per-CPU object `object` (an index into `Image::symbols`).
    pub fn of_percpu(&self, object: u32) -> impl Iterator<Item = &TypedAccess> + '_ {
        self.accesses.iter().filter(move |a| a.percpu == object)
    }
}
