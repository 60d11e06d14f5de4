//! Why a snapshot's parts cannot be read or written, apart from the file it came
//! from: `bad` in `mod.rs` adds the path and the words "bad snapshot".

/// What is wrong with a snapshot's decoded parts, or why they could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// A check the reader makes on what it decoded failed (an index out of range,
    /// records out of order, structs nested too deep).
    #[error("{0}")]
    Invalid(&'static str),
    /// The parts do not decode as the format's shape.
    #[error("cannot decode: {0}")]
    Decode(postcard::Error),
    /// The model does not encode.
    #[error("{0}")]
    Encode(postcard::Error),
    /// A part larger than a snapshot holds.
    #[error("a part of {0} bytes is too large for a snapshot")]
    TooLarge(usize),
    /// LZ4 refused a part.
    #[error("{0}")]
    Compress(String),
}
