//! The access map as data: which function touches which data object, where and how,
//! as the machine code of a build says (the `access` module reads it from the code). It
//! lives with the model because an image carries it, a snapshot keeps it, and the diff
//! and `show` read it.

use serde::{Deserialize, Serialize};

/// How an instruction uses the object it references.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store.
    Write,
    /// A read-modify-write without a `lock` prefix (`addl $1,x(%rip)`).
    ReadWrite,
    /// A `lock`-prefixed instruction or `xchg` with memory.
    Atomic,
    /// The object's address put in a register (`lea`, `mov $X`); `callee` is the
    /// function that receives it as an argument, `writes` whether that function writes
    /// through that argument.
    Address {
        /// The function receiving the address (index into `Image::symbols`), when found.
        callee: Option<u32>,
        /// That function writes through the argument.
        writes: bool,
    },
}

/// How the instruction spells the object's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// `x(%rip)` (or `%gs:x(%rip)`).
    RipRelative,
    /// A fixed displacement, possibly with base and index registers.
    Absolute,
    /// An immediate (`mov $X,%reg`).
    Immediate,
}

/// One instruction's reference to one data object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Access {
    /// The instruction's address.
    pub insn: u64,
    /// The function it belongs to (index into `Image::symbols`).
    pub function: u32,
    /// The object referenced (index into `Image::symbols`).
    pub object: u32,
    /// Byte offset into the object of the address the instruction computes.
    pub offset: u64,
    /// Operand bytes; 0 when unknown and for addresses.
    pub size: u8,
    /// A base or index register takes part: the element or member varies.
    pub indexed: bool,
    /// How the address is spelled.
    pub form: Form,
    /// How the object is used.
    pub kind: AccessKind,
}

/// A function that writes through some of its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writer {
    /// Index into `Image::symbols`.
    pub function: u32,
    /// Bit `i` set: writes through argument `i` (0: `rdi`, 1: `rsi`, ... 5: `r9`).
    pub args: u8,
}

/// What was decoded, and the operands that named no data object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Functions decoded.
    pub functions: u64,
    /// Instructions decoded.
    pub instructions: u64,
    /// Bytes that decode to no instruction.
    pub invalid: u64,
    /// Operands and address immediates that point into a function.
    pub to_code: u64,
    /// RIP-relative operands that land in no symbol (strings, labels, padding).
    pub rip_unresolved: u64,
}

/// Every data reference of a build's code, and the functions that write through
/// their arguments.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AccessMap {
    /// False when the code was not read (not x86-64): no evidence either way.
    pub supported: bool,
    /// Sorted by (object, offset, function, insn, ...): the same with any number of
    /// threads.
    pub refs: Vec<Access>,
    /// Sorted by function.
    pub writers: Vec<Writer>,
    /// What was decoded.
    pub counts: Counts,
    /// Every direct call or tail jump from one function to the start of another, as
    /// `(callee, caller)`, sorted, each once: the direct call graph, by callee.
    pub calls: Vec<(u32, u32)>,
    /// The functions whose address is taken, sorted, each once: loaded by code
    /// (`lea f(%rip)`) or stored in data (an ops table, a handler pointer); such a
    /// function may be called through a pointer, which the call graph does not see.
    pub taken: Vec<u32>,
}

impl AccessKind {
    /// Whether the reference changes the object: a store, a read-modify-write, an
    /// atomic, or its address handed to a function that writes through it.
    pub fn writes(self) -> bool {
        match self {
            AccessKind::Read => false,
            AccessKind::Address { writes, .. } => writes,
            AccessKind::Write | AccessKind::ReadWrite | AccessKind::Atomic => true,
        }
    }
}

impl AccessMap {
    /// The order of `refs`: by object, then offset, function and instruction.
    pub fn ref_key(a: &Access) -> (u32, u64, u32, u64, AccessKind, Form) {
        (a.object, a.offset, a.function, a.insn, a.kind, a.form)
    }

    /// The references to `object` (an index into `Image::symbols`), by offset.
    pub fn of_object(&self, object: u32) -> &[Access] {
        let from = self.refs.partition_point(|a| a.object < object);
        let to = self.refs.partition_point(|a| a.object <= object);
        &self.refs[from..to]
    }

    /// The direct callers of `function` (each once, by index).
    pub fn callers_of(&self, function: u32) -> impl Iterator<Item = u32> + '_ {
        let from = self.calls.partition_point(|c| c.0 < function);
        let to = self.calls.partition_point(|c| c.0 <= function);
        self.calls[from..to].iter().map(|c| c.1)
    }

    /// Whether `function`'s address is taken (`taken`).
    pub fn address_taken(&self, function: u32) -> bool {
        self.taken.binary_search(&function).is_ok()
    }

    /// Whether `function` writes through its argument `arg` (0-based).
    pub fn writes_through(&self, function: u32, arg: u8) -> bool {
        self.writers
            .binary_search_by_key(&function, |w| w.function)
            .is_ok_and(|i| arg < 8 && self.writers[i].args & (1 << arg) != 0)
    }
}
