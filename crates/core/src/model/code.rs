//! Executable bytes of a build: each `SHF_EXECINSTR` section's address and contents,
//! borrowed from the mapped file, for readers of machine code (`access`).

/// One executable section as linked: its bytes start at `address`.
#[derive(Debug, Clone, Copy)]
pub struct CodeSection<'d> {
    /// The section's name.
    pub name: &'d str,
    /// Its link-time address.
    pub address: u64,
    /// Its bytes, as mapped.
    pub bytes: &'d [u8],
}

impl CodeSection<'_> {
    /// The bytes of `[start, end)` when the range lies inside this section.
    pub fn range(&self, start: u64, end: u64) -> Option<&[u8]> {
        let from = usize::try_from(start.checked_sub(self.address)?).ok()?;
        let to = usize::try_from(end.checked_sub(self.address)?).ok()?;
        self.bytes.get(from..to)
    }
}
