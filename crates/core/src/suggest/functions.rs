//! Fixes for hot functions whose start moved within its line (their phase): the
//! function aligned to a line (`__aligned` on its definition), or every function of
//! its file (`-falign-functions`). Each is laid out by the link model and checked by
//! diffing the predicted build against OLD again; its cost is the bytes `.text` grows
//! by and the functions after it that move.

use serde::Serialize;

use super::section_end;
use crate::diff::FunctionChange;
use crate::model::{Image, SymbolKind};
use crate::whatif::Change;

/// One candidate fix for one function, checked.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionFix {
    /// The change, as `whatif` takes it.
    pub change: String,
    /// What to paste: the attribute on the definition, or the Makefile line.
    pub declaration: String,
    /// Whether the predicted build gives the function back OLD's start modulo the line
    /// (then the diff no longer flags it).
    pub restores: bool,
    /// Its start modulo the line after the change.
    pub phase: u64,
    /// Lines its code covers after the change.
    pub lines: u64,
    /// When it does not restore OLD's start (OLD's was not on a line, which no
    /// alignment gives back): whether it starts a line and covers no more lines than
    /// in OLD, the best an alignment can do.
    pub no_more_lines: bool,
    /// Bytes the change adds to the end of the function's output section.
    pub section_bytes: i64,
    /// Functions other than the changed ones that move, and the most any moves.
    pub shifted: usize,
    /// The most any of them moves, in bytes.
    pub max_shift: i64,
    /// Flags in the whole predicted diff against OLD.
    pub flags_after: usize,
}

/// The fixes for one flagged function, restoring first, then cheapest.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionSuggestion {
    /// The flagged function.
    pub function: String,
    /// Its compile unit, as DWARF names it.
    pub unit: Option<String>,
    /// Its address in OLD and NEW (hex strings in JSON).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address_old: u64,
    /// Its address in NEW.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address_new: u64,
    /// Start modulo the line size, OLD and NEW.
    pub phase_old: u64,
    /// Its start modulo the line size in NEW.
    pub phase_new: u64,
    /// Lines its code covers, OLD and NEW.
    pub lines_old: u64,
    /// The lines its code covers in NEW.
    pub lines_new: u64,
    /// The fixes, restoring first, then cheapest.
    pub fixes: Vec<FunctionFix>,
    /// A `check` rule that keeps it at the start of a line.
    pub rule: String,
}

/// Functions considered per run (each candidate costs one prediction and one diff).
const MAX_FUNCTIONS: usize = 8;

/// The suggestions for every function the diff flags for its phase.
pub fn suggest_functions(
    old: &Image<'_>,
    new: &super::base::Base<'_, '_>,
    functions: &[Box<FunctionChange<'_>>],
) -> Vec<FunctionSuggestion> {
    functions
        .iter()
        .filter(|f| f.flagged)
        .take(MAX_FUNCTIONS)
        .map(|f| for_function(old, new, f))
        .collect()
}

fn for_function(
    old: &Image<'_>,
    new: &super::base::Base<'_, '_>,
    f: &FunctionChange<'_>,
) -> FunctionSuggestion {
    let name = f.name.to_string();
    let line = new.line_size.max(1);
    let sym = new
        .symbols
        .iter()
        .find(|s| s.kind == SymbolKind::Function && f.name.is(&s.qualified_name()));
    let unit = sym.and_then(|s| s.compile_unit);
    let size = |i: &Image<'_>| {
        i.symbols
            .iter()
            .find(|s| s.kind == SymbolKind::Function && f.name.is(&s.qualified_name()))
            .map_or(0, |s| s.size)
    };
    let lines_old = covered(f.address.old, size(old), line);
    let lines_new = covered(f.address.new, size(new), line);
    let mut candidates = vec![(
        Change::SymbolAlign {
            name: name.clone(),
            align: line,
        },
        format!(
            "__attribute__((__aligned__({line}))) ... {}(...)  /* on its definition{} */",
            f.name.name,
            unit.map_or(String::new(), |u| format!(" in {u}"))
        ),
    )];
    if let Some(u) = unit {
        candidates.push((
            Change::FunctionsAligned {
                unit: u.to_string(),
                align: line,
            },
            makefile_line(u, line),
        ));
    }
    let mut fixes: Vec<FunctionFix> = candidates
        .into_iter()
        .filter_map(|candidate| function_fix(new, f, sym, candidate, (lines_old, lines_new)))
        .collect();
    fixes.sort_by_key(|x| {
        (
            !x.restores,
            !x.no_more_lines,
            x.section_bytes,
            x.shifted,
            x.flags_after,
        )
    });
    FunctionSuggestion {
        unit: unit.map(str::to_string),
        address_old: f.address.old,
        address_new: f.address.new,
        phase_old: f.phase.old,
        phase_new: f.phase.new,
        lines_old,
        lines_new,
        fixes,
        rule: format!(
            "[function.\"{name}\"]\nalign = {line}\nwhy = \"a hot function kept at the start of a line (layout-diff suggest)\"\n"
        ),
        function: name,
    }
}

/// The fix `change` (spelled `declaration`) makes to hot function `f` (`sym` in
/// NEW, covering `lines` before and after), predicted and diffed; none when the
/// prediction fails or the function is not in NEW.
fn function_fix(
    new: &super::base::Base<'_, '_>,

    f: &FunctionChange<'_>,
    sym: Option<&crate::model::Symbol<'_>>,
    (change, declaration): (Change, String),
    (lines_old, lines_new): (u64, u64),
) -> Option<FunctionFix> {
    let name = f.name.to_string();
    let line = new.line_size.max(1);
    let p = new.predict(std::slice::from_ref(&change)).ok()?;
    let sym = sym?;
    let changed: Vec<&str> = match &change {
        Change::SymbolAlign { .. } => vec![sym.name],
        _ => Vec::new(),
    };
    let after = new.judge(&p.image);
    let now = after.functions.iter().find(|a| a.name.is(&name));
    let (phase, lines) = p
        .image
        .symbols
        .iter()
        .find(|s| s.kind == SymbolKind::Function && f.name.is(&s.qualified_name()))
        .map_or((f.phase.new, lines_new), |s| {
            (s.address % line, covered(s.address, s.size, line))
        });
    let restores = now.is_none_or(|a| !a.flagged) && phase == f.phase.old;
    let (moved, most) = new.shifts(
        &p.image,
        (SymbolKind::Function, sym.space, sym.section),
        &changed,
    );
    Some(FunctionFix {
        change: super::change_args(&change),
        declaration,
        restores,
        phase,
        lines,
        no_more_lines: !restores && phase == 0 && lines <= lines_old,
        section_bytes: section_end(&p.image, SymbolKind::Function, sym.space, sym.section) as i64
            - section_end(new, SymbolKind::Function, sym.space, sym.section) as i64,
        shifted: moved,
        max_shift: most,
        flags_after: after.flagged,
    })
}

/// Lines `size` bytes from `address` cover (a zero-sized function: its start's one).
fn covered(address: u64, size: u64, line: u64) -> u64 {
    crate::layout::place(address, size, line).lines
}

/// Kbuild's per-file flag for unit `kernel/futex/waitwake.c`:
/// `CFLAGS_waitwake.o += -falign-functions=64`, in `kernel/futex/Makefile`.
pub(super) fn makefile_line(unit: &str, line: u64) -> String {
    let (dir, file) = unit.rsplit_once('/').unwrap_or(("", unit));
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    let makefile = if dir.is_empty() {
        "Makefile".to_string()
    } else {
        format!("{dir}/Makefile")
    };
    format!("CFLAGS_{stem}.o += -falign-functions={line}  /* in {makefile} */")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_makefile_line_names_the_object_and_its_directory() {
        assert_eq!(
            makefile_line("kernel/futex/waitwake.c", 64),
            "CFLAGS_waitwake.o += -falign-functions=64  /* in kernel/futex/Makefile */"
        );
        assert_eq!(
            makefile_line("fn.c", 64),
            "CFLAGS_fn.o += -falign-functions=64  /* in Makefile */"
        );
    }
}
