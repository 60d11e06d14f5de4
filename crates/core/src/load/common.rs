//! What two builds of different kinds can be compared on. A DWARF build and a BTF one,
//! an ELF symbol table and a symbol list, a raw BTF blob without addresses: each lacks
//! something the other has. `common_ground` brings both to what they share and says,
//! in sentences for the first screen, what is compared and what is not, so that what
//! one input cannot know is never reported as a change.

use std::collections::HashMap;

use crate::model::{Image, Space, TypesFrom};

/// How a side is named in the sentences.
const SIDES: [&str; 2] = ["OLD", "NEW"];

/// Brings `a` (OLD) and `b` (NEW) to what both describe, and says what that is; no
/// sentence when they are of one kind with real sizes.
///
/// - One side without addresses outside the per-CPU area (a raw BTF blob without
///   `--symbols`): the other's other symbols are set aside; structs and per-CPU
///   variables are compared.
/// - Sizes inferred on a side (a symbol list): a symbol paired by name on both sides
///   takes the smaller of its two sizes on both (each is an upper bound of the true
///   size when its type did not change), so no size change is reported that only the
///   list's spacing made.
/// - DWARF against BTF: what only DWARF has is not compared (the diff of structs
///   compares on members, offsets and sizes already).
pub fn common_ground(a: &mut Image<'_>, b: &mut Image<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    let kinds = [kind(a), kind(b)];
    if kinds[0] != kinds[1] {
        notes.push(format!(
            "inputs of different kinds: OLD {}, NEW {}",
            kinds[0], kinds[1]
        ));
    }
    let bare = [global_less(a), global_less(b)];
    if bare[0] != bare[1] {
        let (without, with) = if bare[0] { (0, 1) } else { (1, 0) };
        a.symbols.retain(|s| s.space == Space::Percpu);
        b.symbols.retain(|s| s.space == Space::Percpu);
        // Symbols dropped: what the link model said of the others no longer holds.
        a.link_alignments = None;
        b.link_alignments = None;
        notes.push(format!(
            "{} has no addresses but its per-CPU variables' (a raw BTF blob without \
--symbols): structs and per-CPU variables are compared; {}'s other data objects and \
functions are not",
            SIDES[without], SIDES[with]
        ));
    }
    if a.types_from != b.types_from
        && a.types_from != TypesFrom::None
        && b.types_from != TypesFrom::None
    {
        notes.push(
            "types from DWARF on one side and BTF on the other: structs are compared on \
members, offsets, sizes and bits; alignment, declaring files and the types of globals \
(BTF describes only per-CPU variables) are not"
                .to_string(),
        );
    }
    let inferred = [a.sizes_inferred, b.sizes_inferred];
    if inferred.iter().any(|&i| i) {
        let sides: Vec<&str> = (0..2).filter(|&i| inferred[i]).map(|i| SIDES[i]).collect();
        let bounded = bound_sizes(a, b);
        if bounded > 0 {
            // Sizes moved: what the link model said of the old ones no longer holds.
            a.link_alignments = None;
            b.link_alignments = None;
        }
        notes.push(format!(
            "{}'s sizes are inferred: a symbol list has no sizes, so each symbol runs to \
the next address (per-CPU variables BTF describes excepted); size changes are not \
compared ({bounded} objects sized as the smaller of their two sizes)",
            sides.join(" and ")
        ));
    }
    notes
}

/// No symbol outside the per-CPU area: a raw BTF blob without a symbol list, whose
/// only addresses are its DATASEC's per-CPU offsets.
fn global_less(i: &Image<'_>) -> bool {
    !i.symbols.iter().any(|s| s.space == Space::Global)
}

/// What an input is, in words.
fn kind(i: &Image<'_>) -> String {
    let types = match i.types_from {
        TypesFrom::Dwarf => "DWARF",
        TypesFrom::Btf => "BTF",
        TypesFrom::None => "no types",
    };
    let symbols = if global_less(i) {
        "no symbols"
    } else if i.sizes_inferred {
        "a symbol list"
    } else {
        "ELF symbols"
    };
    format!("{types}, {symbols}")
}

/// Gives each symbol paired by (space, name) on both sides the smaller of its two
/// sizes (a name found k times on both sides is paired in address order); returns how
/// many changed.
fn bound_sizes(a: &mut Image<'_>, b: &mut Image<'_>) -> usize {
    let by_name = |i: &Image<'_>| {
        let mut seen: HashMap<(Space, String), Vec<usize>> = HashMap::new();
        for (n, s) in i.symbols.iter().enumerate() {
            seen.entry((s.space, s.name.to_string()))
                .or_default()
                .push(n);
        }
        seen
    };
    let (in_a, in_b) = (by_name(a), by_name(b));
    let mut changed = 0;
    for (key, ia) in &in_a {
        let Some(ib) = in_b.get(key).filter(|ib| ib.len() == ia.len()) else {
            continue;
        };
        // The symbols are sorted by (space, place, name): each list is in address order.
        for (&x, &y) in ia.iter().zip(ib) {
            let (sa, sb) = (a.symbols[x].size, b.symbols[y].size);
            if sa != sb {
                let size = sa.min(sb);
                a.symbols[x].size = size;
                b.symbols[y].size = size;
                changed += 1;
            }
        }
    }
    changed
}
