//! What the scan of one function and the tracking of its arguments share: the
//! argument registers, what a function does with each argument, and which operand
//! accesses change memory. Its own module so that neither of the two reads the other.

use iced_x86::{OpAccess, Register};

/// The System V argument registers, in order (argument 0 is `rdi`).
pub(super) const ARGS: [Register; 6] = [
    Register::RDI,
    Register::RSI,
    Register::RDX,
    Register::RCX,
    Register::R8,
    Register::R9,
];

/// An unmodified argument handed on: `own_arg` of the scanned function is passed as
/// `callee_arg` of `callee` (a call or a tail jump).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pass {
    pub callee: u32,
    pub callee_arg: u8,
    pub own_arg: u8,
}

/// Per argument: what the function itself does with it.
#[derive(Debug, Clone, Default)]
pub(super) struct ArgFacts {
    /// Bit `i`: a memory write whose base register still holds argument `i`.
    pub writes: u8,
    pub passes: Vec<Pass>,
}

/// Whether an operand access changes the operand.
pub(super) fn writes(access: OpAccess) -> bool {
    matches!(
        access,
        OpAccess::Write | OpAccess::CondWrite | OpAccess::ReadWrite | OpAccess::ReadCondWrite
    )
}
