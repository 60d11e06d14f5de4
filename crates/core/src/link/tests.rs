//! The link model against a small linker written for the tests: units of objects
//! laid out in link order, each input section aligned to its largest member.

use proptest::prelude::*;

use super::*;
use crate::model::Image;

/// One object of a generated unit: size, and extra bytes before it (in units of its
/// alignment in the unchanged build, as unnamed data the compiler put there).
type Obj = (u64, u64);

const UNITS: [&str; 6] = ["a.c", "b.c", "c.c", "d.c", "e.c", "f.c"];
const NAMES: [&str; 48] = [
    "o0", "o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9", "o10", "o11", "o12", "o13", "o14",
    "o15", "o16", "o17", "o18", "o19", "o20", "o21", "o22", "o23", "o24", "o25", "o26", "o27",
    "o28", "o29", "o30", "o31", "o32", "o33", "o34", "o35", "o36", "o37", "o38", "o39", "o40",
    "o41", "o42", "o43", "o44", "o45", "o46", "o47",
];

/// The alignment the model gives an object without DWARF: its size's, up to 8.
fn natural(size: u64) -> u64 {
    align::floor_pow2(size.clamp(1, 8))
}

/// Lays out `units` as ld does from `start`, with `sizes` overriding by object index.
fn link(start: u64, units: &[Vec<Obj>], sizes: &FxHashMap<usize, u64>) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut end = start;
    let mut i = 0;
    for unit in units {
        let input_align = unit
            .iter()
            .enumerate()
            .map(|(k, &(s, _))| natural(sizes.get(&(i + k)).copied().unwrap_or(s)))
            .max()
            .unwrap_or(1);
        // Unnamed bytes stay as many bytes whatever the sizes: a multiple of the
        // alignment that held in the unchanged build.
        let first_align = unit.iter().map(|&(s, _)| natural(s)).max().unwrap_or(1);
        for (k, &(size, lead)) in unit.iter().enumerate() {
            let lead = lead * if k == 0 { first_align } else { natural(size) };
            let size = sizes.get(&i).copied().unwrap_or(size);
            let own = natural(size);
            let a = if k == 0 { input_align } else { own };
            let place = align_up(end + lead, a);
            out.push((place, size));
            end = place + size;
            i += 1;
        }
    }
    out
}

/// An image whose `.data` objects are the laid-out `placed`, unit by unit.
fn image(units: &[Vec<Obj>], placed: &[(u64, u64)]) -> Image<'static> {
    let mut img = Image::test_empty();
    let mut i = 0;
    for (u, unit) in units.iter().enumerate() {
        for _ in unit {
            let (place, size) = placed[i];
            let mut s = crate::model::Symbol::test_object(NAMES[i], place, size);
            s.compile_unit = Some(UNITS[u]);
            img.symbols.push(s);
            i += 1;
        }
    }
    img
}

fn units_strategy() -> impl Strategy<Value = Vec<Vec<Obj>>> {
    // Object sizes of 1..40 bytes (alignments 1 to 8) with up to 2 alignment units of
    // unnamed bytes before some; 1 to 6 units of 1 to 8 objects.
    prop::collection::vec(
        prop::collection::vec((1u64..40, prop_oneof![4 => Just(0u64), 1 => 0u64..3]), 1..8),
        1..6,
    )
}

proptest! {
    /// Laying a build out again with nothing changed gives back every place.
    #[test]
    fn layout_of_an_unchanged_build_is_the_build(units in units_strategy(), start in 0u64..4096) {
        let placed = link(start, &units, &FxHashMap::default());
        let img = image(&units, &placed);
        let map = LinkMap::build(&img);
        prop_assert_eq!(map.lowered, 0);
        let got = map.layout(&Edits::default());
        for (i, want) in placed.iter().enumerate() {
            prop_assert_eq!(got[&i], *want, "object {}", i);
        }
    }

    /// Resizing one object predicts exactly what the linker makes of the new sizes:
    /// the objects after it in its unit, and the units after, at their alignments.
    #[test]
    fn a_resize_is_predicted_as_the_linker_lays_it(
        units in units_strategy(),
        pick in 0usize..48,
        new_size in 1u64..80,
    ) {
        let count: usize = units.iter().map(Vec::len).sum();
        let which = pick % count;
        let placed = link(0x1000, &units, &FxHashMap::default());
        let map = LinkMap::build(&image(&units, &placed));
        let mut edits = Edits::default();
        edits.size.insert(which, new_size);
        // The object's alignment follows its new size (an untyped object's rule).
        edits.align.insert(which, natural(new_size));
        let want = link(0x1000, &units, &edits.size);
        let got = map.layout(&edits);
        for (i, w) in want.iter().enumerate() {
            prop_assert_eq!(got[&i], *w, "object {}", i);
        }
    }
}

/// Raising one object's alignment raises its unit's input section: the whole unit
/// starts on the new boundary, as `____cacheline_aligned_in_smp` on `root_user` does.
#[test]
fn raising_an_alignment_moves_its_input_section() {
    let units = vec![vec![(24, 0), (8, 0)], vec![(8, 0), (40, 0)], vec![(4, 0)]];
    let placed = link(0, &units, &FxHashMap::default());
    assert_eq!(placed, vec![(0, 24), (24, 8), (32, 8), (40, 40), (80, 4)]);
    let map = LinkMap::build(&image(&units, &placed));
    let mut edits = Edits::default();
    edits.align.insert(3, 64);
    let got = map.layout(&edits);
    let got: Vec<(u64, u64)> = (0..5).map(|i| got[&i]).collect();
    // Unit b.c now starts at 64; its second object at 128 (64-aligned); c.c follows.
    assert_eq!(got, vec![(0, 24), (24, 8), (64, 8), (128, 40), (168, 4)]);
}

/// Moving an object to the end region puts it in a new input section at its unit's
/// place in link order among the region's sections, aligned as asked.
#[test]
fn an_object_moved_to_the_aligned_region_lands_in_link_order() {
    // a.c, b.c, c.c plain; then the region: a.c's and c.c's aligned objects.
    let mut img = Image::test_empty();
    let objs: [(&str, &str, u64, u64); 5] = [
        ("o0", "a.c", 0, 8),
        ("o1", "b.c", 8, 8),
        ("o2", "c.c", 16, 8),
        ("o3", "a.c", 64, 64),
        ("o4", "c.c", 128, 64),
    ];
    for (name, unit, place, size) in objs {
        let mut s = crate::model::Symbol::test_object(name, place, size);
        s.compile_unit = Some(unit);
        img.symbols.push(s);
    }
    // Code gives the link order a.c, b.c, c.c.
    for (k, unit) in ["a.c", "b.c", "c.c"].iter().enumerate() {
        let mut f = crate::model::Symbol::test_object("f", 0x10000 + 16 * k as u64, 16);
        f.kind = SymbolKind::Function;
        f.section = ".text";
        f.compile_unit = Some(unit);
        img.symbols.push(f);
    }
    // o3 and o4 asked for a line (`DEFINE_PER_CPU_ALIGNED`); the rest their size's.
    let mut map = LinkMap::build_with(&img, &|s| align::Asked {
        alignment: if s.size == 64 { 64 } else { 8 },
        explicit: s.size == 64,
        raisable: false,
    });
    assert!(map.move_to_end_region(1, 64, &|_| None));
    let got = map.layout(&Edits::default());
    let got: Vec<u64> = (0..5).map(|i| got[&i].0).collect();
    // b.c's object leaves the plain run (c.c's follows a.c's) and lands between a.c's
    // and c.c's aligned objects.
    assert_eq!(got, vec![0, 128, 8, 64, 192]);
}

/// `__read_mostly` back: the object leaves its unit's plain data for the read-mostly
/// region, which starts on a line (`READ_MOSTLY_DATA(64)`), last of its unit there.
#[test]
fn an_object_moved_to_the_read_mostly_region_goes_last_of_its_unit_there() {
    // One unit (as one input section in the map): o0 (48 B), o1 (8 B), o2 (4 B, lost
    // __read_mostly) in plain data up to 0x3c; the read-mostly data from 0x40 (the
    // script's ALIGN(64)) holds o3 (4 B).
    let mut img = Image::test_empty();
    for (name, place, size) in [("o0", 0, 48), ("o1", 48, 8), ("o2", 56, 4), ("o3", 64, 4)] {
        let mut s = crate::model::Symbol::test_object(name, place, size);
        s.compile_unit = Some("a.c");
        img.symbols.push(s);
    }
    let mut map = LinkMap::build_with(&img, &|s| align::Asked {
        alignment: natural(s.size),
        explicit: false,
        raisable: false,
    });
    let places: Vec<u64> = img.symbols.iter().map(|s| s.place).collect();
    // The region starts where plain data ends (the boundary symbol, 0x3c).
    // No definition lines known: last of its unit.
    assert!(map.move_to_region_from(2, 0x3c, 64, &places, &|_| None));
    let got = map.layout(&Edits::default());
    let got: Vec<u64> = (0..4).map(|i| got[&i].0).collect();
    // o3 stays on the line at 0x40 although plain data now ends at 0x38; o2 follows it.
    assert_eq!(got, vec![0, 48, 0x44, 0x40]);
    // Already in the region: refused.
    assert!(!map.move_to_region_from(3, 0x3c, 64, &places, &|_| None));
}

/// gcc emits a unit's objects of one section last-defined first
/// (`kernel/workqueue.o`'s `.data..read_mostly`: `system_freezable_power_efficient_wq`
/// (line 373) at 0 down to `system_wq` (line 361) at 0x30): an object put back takes
/// its place by its definition line among its unit's objects there.
#[test]
fn an_object_moved_to_the_read_mostly_region_takes_its_place_by_definition_line() {
    // Plain data: p0 (8 B), m (4 B, line 20) to 0x0c; the read-mostly data from 0x40:
    // r30 (4 B, line 30), r10 (8 B, line 10), lines running down.
    let mut img = Image::test_empty();
    for (name, place, size) in [("p0", 0, 8), ("m", 8, 4), ("r30", 64, 4), ("r10", 72, 8)] {
        let mut s = crate::model::Symbol::test_object(name, place, size);
        s.compile_unit = Some("a.c");
        img.symbols.push(s);
    }
    let build = || {
        LinkMap::build_with(&img, &|s| align::Asked {
            alignment: natural(s.size),
            explicit: false,
            raisable: false,
        })
    };
    let places: Vec<u64> = img.symbols.iter().map(|s| s.place).collect();
    // The four places after moving m (index 1) with definition lines `lines`.
    let moved = |lines: [Option<u32>; 4]| {
        let mut map = build();
        let line = |i: usize| {
            lines.get(i).copied().flatten().map(|line| SourcePlace {
                line,
                header: false,
            })
        };
        assert!(map.move_to_region_from(1, 0x0c, 64, &places, &line));
        let got = map.layout(&Edits::default());
        (0..4).map(|i| got[&i].0).collect::<Vec<u64>>()
    };
    // Line 20 goes between 30 and 10: r30 at 0x40, m at 0x44, r10 at 0x48.
    assert_eq!(
        moved([None, Some(20), Some(30), Some(10)]),
        vec![0, 0x44, 0x40, 0x48]
    );
    // Lines running up (`-fno-toplevel-reorder`): 10 then 30, m between them.
    assert_eq!(
        moved([None, Some(20), Some(10), Some(30)]),
        vec![0, 0x44, 0x40, 0x48]
    );
    // Line 40, defined after both (lines down): first, at 0x40; r30 at 0x44, r10 0x48.
    assert_eq!(
        moved([None, Some(40), Some(30), Some(10)]),
        vec![0, 0x40, 0x44, 0x48]
    );
}

/// GCC aligns an array it vectorises further than its type (the replay's
/// `sysctl_lowmem_reserve_ratio`, `int[3]`: 0x938 after `min_free_kbytes` ended at
/// 0x934, then 0x930 once `min_free_kbytes` moved away). The model takes the gap as
/// that alignment, not as bytes kept: the array follows its neighbour's move.
#[test]
fn a_gap_before_an_array_is_its_raised_alignment() {
    // One unit: a, b, c (4 B each) at 0, 4, 8; arr (int[3], 12 B) at 0x10: 4 bytes
    // after c's end that 4-byte alignment does not explain, and 8-byte does.
    let mut img = Image::test_empty();
    for (name, place, size) in [("a", 0, 4), ("b", 4, 4), ("c", 8, 4), ("arr", 0x10, 12)] {
        let mut s = crate::model::Symbol::test_object(name, place, size);
        s.compile_unit = Some("a.c");
        img.symbols.push(s);
    }
    let build = |raisable: bool| {
        LinkMap::build_with(&img, &|s| align::Asked {
            alignment: 4,
            explicit: false,
            raisable: raisable && s.name == "arr",
        })
    };
    let at = |map: &LinkMap<'_>, c_size: u64| {
        let mut edits = Edits::default();
        edits.size.insert(2, c_size);
        map.layout(&edits)[&3].0
    };
    let raised = build(true);
    // c gone (0 B, as min_free_kbytes left .data): arr at 8, aligned to 8 from 8.
    assert_eq!(at(&raised, 0), 8);
    // c grown to 8 B (ends 0x10): arr at 0x10.
    assert_eq!(at(&raised, 8), 0x10);
    // Not raisable: the 4 unexplained bytes are kept and follow c's end.
    let plain = build(false);
    assert_eq!(at(&plain, 0), 0xc);
    assert_eq!(at(&plain, 8), 0x14);
}

/// An object at another's place (x86's `jiffies`, the linker script's alias of
/// `jiffies_64`), or within its bytes, lies inside it: a change to its placement must
/// name the host.
#[test]
fn an_alias_or_a_part_has_a_host() {
    // a (8 B) at 0; alias (8 B) at 0; part (4 B) at 4; b (8 B) at 8.
    let mut img = Image::test_empty();
    for (name, place, size) in [("a", 0, 8), ("alias", 0, 8), ("part", 4, 4), ("b", 8, 8)] {
        let mut s = crate::model::Symbol::test_object(name, place, size);
        s.compile_unit = Some("a.c");
        img.symbols.push(s);
    }
    let map = LinkMap::build_with(&img, &|s| align::Asked {
        alignment: natural(s.size),
        explicit: false,
        raisable: false,
    });
    let hosts: Vec<Option<usize>> = (0..4).map(|i| map.host(i)).collect();
    assert_eq!(hosts, vec![None, Some(0), Some(0), None]);
}

/// GCC makes the symbol of an object a header declares with a section attribute
/// (`extern __read_mostly int scheduler_running;`) at that declaration, before the
/// unit's own lines make theirs, and emits last-made first: `.bss`'s `num_cpus_frozen`
/// (kernel/sched/core.c line 9417, declared nowhere else) made `__read_mostly` lands
/// first among core.c's read-mostly objects, whose definition lines run both ways.
/// Its zero-size neighbour `__key.5` (a lock class key without lockdep) stays where
/// it was, after what came before it.
#[test]
fn an_object_made_by_its_own_line_goes_before_those_a_header_made() {
    // .bss: n0 (4 B, a.c), key (0 B, inside m's place), m (4 B, line 9417), n1 (4 B).
    // .data..read_mostly from 0x1000: h1 (line 9172), h2 (line 140), h3 (line 149),
    // each declared in a header first.
    let mut img = Image::test_empty();
    let objs: [(&str, &str, u64, u64); 7] = [
        ("n0", ".bss", 0x100, 4),
        ("m", ".bss", 0x104, 4),
        ("key", ".bss", 0x104, 0),
        ("n1", ".bss", 0x108, 4),
        ("h1", ".data", 0x1000, 1),
        ("h2", ".data", 0x1004, 4),
        ("h3", ".data", 0x1008, 4),
    ];
    for (name, section, place, size) in objs {
        let mut s = crate::model::Symbol::test_object(name, place, size);
        s.compile_unit = Some("core.c");
        s.section = section;
        img.symbols.push(s);
    }
    img.symbols
        .sort_by_key(|s| (s.section != ".bss", s.place, std::cmp::Reverse(s.size)));
    let index = |n: &str| img.symbols.iter().position(|s| s.name == n).unwrap();
    let mut map = LinkMap::build_with(&img, &|s| align::Asked {
        alignment: natural(s.size.max(1)),
        explicit: false,
        raisable: false,
    });
    let places: Vec<u64> = img.symbols.iter().map(|s| s.place).collect();
    let lines = |i: usize| {
        let (line, header) = match img.symbols[i].name {
            "m" => (9417, false),
            "h1" => (9172, true),
            "h2" => (140, true),
            "h3" => (149, true),
            _ => return None,
        };
        Some(SourcePlace { line, header })
    };
    assert!(map.move_to_region_from(index("m"), 0x1000, 64, &places, &lines));
    let got = map.layout(&Edits::default());
    let at = |n: &str| got[&index(n)].0;
    // m first in the region, the header-made ones after it.
    assert_eq!(
        [at("m"), at("h1"), at("h2"), at("h3")],
        [0x1000, 0x1004, 0x1008, 0x100c]
    );
    // .bss closes up behind it; the label stays after n0.
    assert_eq!([at("n0"), at("key"), at("n1")], [0x100, 0x104, 0x104]);
    assert_eq!(map.moved_sections(&img).get(&index("m")), Some(&".data"));
}
