//! The cold-path floor: map the file, find its DWARF, and walk every DIE of every unit
//! in parallel, skipping each entry's attributes (sizes only) and decoding none, or (the
//! `parse` floor) parsing every attribute as gimli's entries cursor does. A full load
//! cannot be faster than the first; `bench-walk` times both beside the real diff.

use rayon::prelude::*;

use std::path::Path;

use super::{DwarfCopies, elf};
use crate::error::{Error, Result};

/// Units and DIEs walked in one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Walked {
    /// Compile units walked.
    pub units: usize,
    /// DIEs walked.
    pub dies: u64,
}

/// Walks every DIE of the ELF file `bytes` at `path` (see the module note), parsing
/// each one's attributes when `parse`.
pub fn walk_dies(path: &Path, bytes: &[u8], copies: &DwarfCopies, parse: bool) -> Result<Walked> {
    let elf = elf::read(path, bytes, &copies.0)?;
    let Some(debug) = elf.debug else {
        return Ok(Walked::default());
    };
    let dwarf = debug.dwarf(path)?;
    let err = |e: gimli::Error| Error::Dwarf {
        path: path.to_path_buf(),
        section: ".debug_info",
        offset: 0,
        message: e.to_string(),
    };
    let mut headers = Vec::new();
    let mut iter = dwarf.units();
    while let Some(h) = iter.next().map_err(err)? {
        headers.push(h);
    }
    let units = headers.len();
    let dies = headers
        .into_par_iter()
        .map(|h| -> gimli::Result<u64> {
            let unit = dwarf.unit(h)?;
            let mut n = 0u64;
            if parse {
                let mut cursor = unit.entries();
                while cursor.next_dfs()?.is_some() {
                    n += 1;
                }
                return Ok(n);
            }
            let mut raw = unit.entries_raw(None)?;
            while !raw.is_empty() {
                if let Some(abbrev) = raw.read_abbreviation()? {
                    raw.skip_attributes(abbrev.attributes())?;
                    n += 1;
                }
            }
            Ok(n)
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))
        .map_err(err)?;
    Ok(Walked { units, dies })
}
