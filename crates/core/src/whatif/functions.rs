//! Placement changes the link model makes without touching types: a function aligned
//! (`__aligned(N)` on its definition, or `-falign-functions=N` for its whole file), and
//! an object defined `__read_mostly` again (moved to `.data..read_mostly`). Kept apart
//! from `mod.rs`, which carries struct changes through the types first.

use crate::link::{Edits, LinkMap};
use crate::model::{Image, READ_MOSTLY_START, SymbolKind};

use super::Change;

/// What `--align-functions` cannot see: GCC does not align the functions it optimises
/// for size.
pub const UNIT_CAVEAT: &str = "-falign-functions: GCC leaves functions it optimizes for size (cold, .text.unlikely) unaligned; the model aligns every function of the unit";

/// `UNIT=N` of `--align-functions`.
pub fn parse_unit_align(value: &str) -> Result<Change, String> {
    let (unit, align) = value
        .rsplit_once('=')
        .ok_or_else(|| format!("--align-functions {value}: expected UNIT=N"))?;
    let align: u64 = align
        .parse()
        .ok()
        .filter(|a: &u64| a.is_power_of_two())
        .ok_or_else(|| format!("--align-functions {value}: expected a power of two after ="))?;
    Ok(Change::FunctionsAligned {
        unit: unit.to_string(),
        align,
    })
}

/// Whether `name` names no data object but a function: `--symbol F --align N` then
/// aligns the function.
pub fn names_function_only(image: &Image<'_>, name: &str) -> bool {
    let named = |k: SymbolKind| {
        image
            .symbols
            .iter()
            .any(|s| s.kind == k && s.any_name(|n| n == name))
    };
    !named(SymbolKind::Object) && named(SymbolKind::Function)
}

/// The function named `name` (a bare or qualified name), exactly one.
pub fn find_function(image: &Image<'_>, name: &str) -> Result<usize, String> {
    let found: Vec<usize> = image
        .symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == SymbolKind::Function && s.any_name(|n| n == name))
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [i] => Ok(*i),
        [] => Err(format!("no function named {name:?} in the build")),
        _ => Err(format!(
            "{name:?} names {} functions; qualify it as FILE:NAME",
            found.len()
        )),
    }
}

/// Every function of compile unit `unit` (its DWARF name, `kernel/futex/waitwake.c`)
/// aligned to `align`.
pub fn align_unit(
    image: &Image<'_>,
    unit: &str,
    align: u64,
    edits: &mut Edits,
) -> Result<(), String> {
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
        Err(format!(
            "--align-functions: no function of unit {unit:?} in the build"
        ))
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
) -> Result<(), String> {
    let start = image
        .boundaries
        .iter()
        .find(|b| b.0 == READ_MOSTLY_START)
        .map(|b| b.1)
        .ok_or_else(|| {
            format!(
                "--read-mostly {name}: the build has no read-mostly data the model can find \
                 (x86's .data..read_mostly before _edata)"
            )
        })?;
    let sym = &image.symbols[i];
    if sym.space != crate::model::Space::Global || image.in_read_mostly(sym) {
        return Err(format!(
            "--read-mostly {name}: not a global object outside the read-mostly data"
        ));
    }
    let base = sym.address.wrapping_sub(sym.place);
    let from = start.wrapping_sub(base);
    let places: Vec<u64> = image.symbols.iter().map(|s| s.place).collect();
    if map.move_to_region_from(i, from, image.line_size, &places, &definition_lines(image)) {
        Ok(())
    } else {
        Err(format!(
            "--read-mostly {name}: not in the same output section as the read-mostly data"
        ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_alignment_is_read_as_unit_equals_a_power_of_two() {
        assert_eq!(
            parse_unit_align("kernel/futex/waitwake.c=64"),
            Ok(Change::FunctionsAligned {
                unit: "kernel/futex/waitwake.c".into(),
                align: 64
            })
        );
        assert_eq!(
            parse_unit_align("fn.c=48"),
            Err("--align-functions fn.c=48: expected a power of two after =".into())
        );
        assert_eq!(
            parse_unit_align("fn.c"),
            Err("--align-functions fn.c: expected UNIT=N".into())
        );
    }
}
