//! Placement changes the link model makes without touching types: a function aligned
//! (`__aligned(N)` on its definition, or `-falign-functions=N` for its whole file), and
//! an object defined `__read_mostly` again (moved to `.data..read_mostly`). Kept apart
//! from `mod.rs`, which carries struct changes through the types first.

use crate::link::{Edits, LinkMap};
use crate::model::{Image, READ_MOSTLY_START, SymbolKind};

use super::error::PredictError;

/// What `--align-functions` cannot see: GCC does not align the functions it optimises
/// for size.
pub const UNIT_CAVEAT: &str = "-falign-functions: GCC leaves functions it optimizes for size (cold, .text.unlikely) unaligned; the model aligns every function of the unit";

/// Whether `name` names no data object but a function: `--symbol F --align N` then
/// aligns the function.
pub fn names_function_only(image: &Image<'_>, name: &str) -> bool {
    let named = |k: SymbolKind| {
        image
            .symbols
            .iter()
            .any(|s| s.kind == k && s.answers_to(name))
    };
    !named(SymbolKind::Object) && named(SymbolKind::Function)
}

/// The function named `name` (a bare or qualified name), exactly one.
pub fn find_function(image: &Image<'_>, name: &str) -> Result<usize, PredictError> {
    let found: Vec<usize> = image
        .symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == SymbolKind::Function && s.answers_to(name))
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [i] => Ok(*i),
        [] => Err(PredictError::NoFunction(name.to_string())),
        _ => Err(PredictError::AmbiguousFunction {
            name: name.to_string(),
            count: found.len(),
        }),
    }
}

/// Every function of compile unit `unit` (its DWARF name, `kernel/futex/waitwake.c`)
/// aligned to `align`.
pub fn align_unit(
    image: &Image<'_>,
    unit: &str,
    align: u64,
    edits: &mut Edits,
) -> Result<(), PredictError> {
    let mut any = false;
    for (i, s) in image.symbols.iter().enumerate() {
        if s.kind == SymbolKind::Function && s.compile_unit == Some(unit) {
            let was = edits
                .align
                .get(&i)
                .copied()
                .unwrap_or_else(|| image.function_alignment(s.compile_unit));
            edits.align.insert(i, was.max(align));
            any = true;
        }
    }
    if any {
        Ok(())
    } else {
        Err(PredictError::NoUnitFunction(unit.to_string()))
    }
}

/// Object `i` moved into `.data..read_mostly`: in its unit's input section there, at
/// its place by definition line (`DW_AT_decl_line`) in the order the unit's objects
/// there show. The region starts on a line: x86's
/// `READ_MOSTLY_DATA(INTERNODE_CACHE_BYTES)` aligns it to the L1 line.
pub fn move_to_read_mostly(
    image: &Image<'_>,
    map: &mut LinkMap<'_>,
    i: usize,
    name: &str,
) -> Result<(), PredictError> {
    let start = image
        .boundaries
        .iter()
        .find(|b| b.0 == READ_MOSTLY_START)
        .map(|b| b.1)
        .ok_or_else(|| PredictError::NoReadMostlyData(name.to_string()))?;
    let sym = &image.symbols[i];
    if sym.space != crate::model::Space::Global || image.in_read_mostly(sym) {
        return Err(PredictError::NotReadMostlyCandidate(name.to_string()));
    }
    let base = sym.address.wrapping_sub(sym.place);
    let from = start.wrapping_sub(base);
    let places: Vec<u64> = image.symbols.iter().map(|s| s.place).collect();
    if map.move_to_region_from(i, from, image.line_size, &places, &definition_lines(image)) {
        Ok(())
    } else {
        Err(PredictError::ReadMostlyElsewhere(name.to_string()))
    }
}

/// Each symbol's line in its unit's order (`link::ordering_line`), by symbol index: where a moved
/// object goes among its unit's objects (`LinkMap::move_to_region_from`).
pub(super) fn definition_lines<'a>(
    image: &'a Image<'_>,
) -> impl Fn(usize) -> Option<crate::link::SourcePlace> + 'a {
    let vars = image.variables_of_symbols();
    move |k| {
        image
            .symbols
            .get(k)
            .and_then(|s| Some((s, vars.of(s)?)))
            .and_then(|(s, v)| crate::link::ordering_line(s, v))
    }
}
