//! `whatif` on members declared inside anonymous structs and unions:
//! testdata/whatif/anon.c (struct pkt, shaped like struct sk_buff) built once per
//! change by testdata/whatif/build.sh. Each prediction from anon-base.elf must give
//! struct pkt the layout pahole 1.32 prints for the variant built with the change
//! (written out below from testdata/whatif/FACTS.md), and put every data object where
//! gcc and ld put it (nm).

mod common;

use common::{load_image as load, object_places as places, run, testdata};
use layout_diff_core::InputFile;
use layout_diff_core::model::{Image, StructLayout};
use layout_diff_core::whatif::{Change, Position, predict};

fn open(variant: &str) -> InputFile {
    InputFile::open(std::path::Path::new(&testdata(&format!(
        "whatif/anon-{variant}.elf"
    ))))
    .expect("fixture opens")
}

fn layout<'a, 'd>(image: &'a Image<'d>, name: &str) -> &'a StructLayout<'d> {
    image
        .structs
        .iter()
        .find(|s| s.name == name)
        .expect("struct in the image")
}

/// Named members (name, offset, size) in declaration order, at every depth.
fn leaves(s: &StructLayout<'_>) -> Vec<(String, u64, u64)> {
    s.flat_members()
        .iter()
        .filter_map(|(_, m)| Some((m.name?.to_string(), m.offset, m.size)))
        .filter(|(n, _, _)| !n.is_empty())
        .collect()
}

/// The anonymous structs and unions (offset, size), outermost first.
fn aggregates(s: &StructLayout<'_>) -> Vec<(u64, u64)> {
    s.flat_members()
        .iter()
        .filter(|(_, m)| m.name.is_none())
        .map(|(_, m)| (m.offset, m.size))
        .collect()
}

/// Each member's hole after it, and each aggregate's holes and padding, outermost first.
type Gaps = Vec<(Vec<u32>, Vec<(u64, u64)>, u64)>;

fn gaps(s: &StructLayout<'_>) -> Gaps {
    let one = |l: &StructLayout<'_>| {
        (
            l.members.iter().map(|m| m.hole).collect(),
            l.holes.iter().map(|h| (h.offset, h.size)).collect(),
            l.padding,
        )
    };
    let mut out = vec![one(s)];
    for (_, m) in s.flat_members() {
        if let Some(n) = &m.nested {
            out.push(one(n));
        }
    }
    out
}

/// What pahole prints for struct pkt: its members, its anonymous aggregates (outermost
/// first; pahole prints each on its closing brace) and its size.
struct Pahole {
    leaves: Vec<(&'static str, u64, u64)>,
    aggregates: Vec<(u64, u64)>,
    size: u64,
    /// struct pkt_holder: `last` (offset) and the size.
    holder: (u64, u64),
}

/// Predicts `changes` on anon-base.elf and checks struct pkt against pahole's layout
/// of `variant`, and every object against nm's view of it.
fn predicted_matches_built(variant: &str, changes: &[Change], want: &Pahole) {
    let base_file = open("base");
    let built_file = open(variant);
    assert_ne!(
        places(&load(&base_file)),
        places(&load(&built_file)),
        "{variant} moved something"
    );
    predicted_from_matches_built("base", variant, changes, want);
}

/// The same from anon-`from`.elf (the member layout asserted shows the change even
/// where no object moves).
fn predicted_from_matches_built(from: &str, variant: &str, changes: &[Change], want: &Pahole) {
    let base_file = open(from);
    let base = load(&base_file);
    let built_file = open(variant);
    let built = load(&built_file);
    let p = predict(&base, changes, &[]).expect("prediction");
    assert_eq!(p.reproduced, p.objects, "the unchanged layout is the build");
    let pkt = layout(&p.image, "pkt");
    let want_leaves: Vec<(String, u64, u64)> = want
        .leaves
        .iter()
        .map(|&(n, o, s)| (n.to_string(), o, s))
        .collect();
    assert_eq!(leaves(pkt), want_leaves, "{variant}: members as pahole");
    assert_eq!(
        aggregates(pkt),
        want.aggregates,
        "{variant}: anonymous ones"
    );
    assert_eq!(pkt.size, want.size, "{variant}: size as pahole");
    let holder = layout(&p.image, "pkt_holder");
    let last = holder.members.iter().find(|m| m.name == Some("last"));
    assert_eq!(
        (last.map(|m| m.offset), holder.size),
        (Some(want.holder.0), want.holder.1),
        "{variant}: struct pkt_holder as pahole"
    );
    // Holes and padding as the real build's (which the loader reads as pahole prints
    // them): the anonymous aggregates' own counted again at their new places.
    assert_eq!(gaps(pkt), gaps(layout(&built, "pkt")), "{variant}: holes");
    let (got, real) = (places(&p.image), places(&built));
    assert_eq!(
        got, real,
        "{variant}: every object where the real build put it"
    );
}

fn grow(member: &str, grow: u64) -> Change {
    Change::Member {
        name: "pkt".into(),
        member: member.into(),
        grow,
    }
}

/// Where nm puts an object in the prediction: (address, size).
fn nm(image: &Image<'_>, name: &str) -> (u64, u64) {
    let s = image
        .symbols
        .iter()
        .find(|s| s.name == name)
        .expect("symbol");
    (s.address, s.size)
}

#[test]
fn a_member_grown_inside_an_anonymous_struct_in_a_union_grows_both() {
    // anon-len.elf: u32 len -> u32 len[3] (+8 B). pahole: len 16 (12), proto 28,
    // flags 30; the anonymous struct and its union 32 B (were 24); hash 32, the last
    // union at 40, users 56; size 64 (was 56). nm: pkt_one 0xffffffff82a51180 (0x40
    // B), pkt_ring 0xc0 B, pkt_pcpu 0x40 B at 0x20 and pkt_pcpu_before at 0x60.
    let changes = [grow("len", 8)];
    predicted_matches_built(
        "len",
        &changes,
        &Pahole {
            leaves: vec![
                ("next", 0, 8),
                ("prev", 8, 8),
                ("len", 16, 12),
                ("proto", 28, 2),
                ("flags", 30, 1),
                ("stamp", 0, 16),
                ("hash", 32, 4),
                ("queue", 36, 2),
                ("cloned", 38, 1),
                ("kind", 39, 1),
                ("cookie", 40, 8),
                ("mark", 40, 4),
                ("name", 40, 12),
                ("users", 56, 8),
            ],
            aggregates: vec![(0, 32), (0, 32), (32, 8), (40, 16)],
            size: 64,
            holder: (8, 80),
        },
    );
    let base_file = open("base");
    let base = load(&base_file);
    let p = predict(&base, &changes, &[]).unwrap();
    assert_eq!(nm(&p.image, "pkt_one"), (0xffffffff82a51180, 0x40));
    assert_eq!(nm(&p.image, "pkt_ring").1, 0xc0);
    assert_eq!(nm(&p.image, "pkt_pcpu"), (0x20, 0x40));
    assert_eq!(nm(&p.image, "pkt_pcpu_before"), (0x60, 8));
    // pkt_flex_one is initialised past its type (tail[] = "0123456789": 11 bytes
    // after the 56 of struct pkt, 0x43 B in anon-base.elf): 64 + 11 = 0x4b B.
    assert_eq!(nm(&p.image, "pkt_flex_one"), (0xffffffff82a511e0, 0x4b));
}

#[test]
fn the_largest_member_of_an_anonymous_union_grown_grows_the_union() {
    // anon-name.elf: char name[12] -> [20]. pahole: the union 24 B (align_up(20, 8)),
    // users 56, size 64; pkt_holder 80 B.
    predicted_matches_built(
        "name",
        &[grow("name", 8)],
        &Pahole {
            leaves: vec![
                ("next", 0, 8),
                ("prev", 8, 8),
                ("len", 16, 4),
                ("proto", 20, 2),
                ("flags", 22, 1),
                ("stamp", 0, 16),
                ("hash", 24, 4),
                ("queue", 28, 2),
                ("cloned", 30, 1),
                ("kind", 31, 1),
                ("cookie", 32, 8),
                ("mark", 32, 4),
                ("name", 32, 20),
                ("users", 56, 8),
            ],
            aggregates: vec![(0, 24), (0, 24), (24, 8), (32, 24)],
            size: 64,
            holder: (8, 80),
        },
    );
}

#[test]
fn members_that_are_not_their_unions_largest_grow_it_only_past_the_largest() {
    // anon-union.elf: u32 mark -> mark[3] (12 B, no more than name[12]: the last
    // union stays 16 B) and u64 stamp[2] -> [4] (32 B, more than the struct of 24 B
    // beside it: the first union is 32 B). pahole: hash 32, the last union at 40,
    // users 56, size 64.
    predicted_matches_built(
        "union",
        &[grow("mark", 8), grow("stamp", 16)],
        &Pahole {
            leaves: vec![
                ("next", 0, 8),
                ("prev", 8, 8),
                ("len", 16, 4),
                ("proto", 20, 2),
                ("flags", 22, 1),
                ("stamp", 0, 32),
                ("hash", 32, 4),
                ("queue", 36, 2),
                ("cloned", 38, 1),
                ("kind", 39, 1),
                ("cookie", 40, 8),
                ("mark", 40, 12),
                ("name", 40, 12),
                ("users", 56, 8),
            ],
            aggregates: vec![(0, 32), (0, 24), (32, 8), (40, 16)],
            size: 64,
            holder: (8, 80),
        },
    );
    // mark alone moves nothing: the union keeps its 16 bytes.
    let base_file = open("base");
    let base = load(&base_file);
    let p = predict(&base, &[grow("mark", 8)], &[]).unwrap();
    assert_eq!(layout(&p.image, "pkt").size, 56);
    assert_eq!(p.moved, 0);
}

#[test]
fn a_member_aligned_inside_an_anonymous_struct_aligns_it_and_the_struct() {
    // anon-align.elf: hash __attribute__((aligned(64))). pahole: the second anonymous
    // struct at 64, 64 B (hash 64, queue 68, cloned 70, kind 71); the last union at
    // 128, users 144; size 192, aligned to 64; pkt_holder: last at 64, 320 B. nm:
    // every struct pkt object on a line: pkt_one 0xffffffff82a51440 (0xc0 B),
    // pkt_pcpu at 0x40.
    let changes = [Change::MemberAlign {
        name: "pkt".into(),
        member: "hash".into(),
        align: 64,
    }];
    predicted_matches_built(
        "align",
        &changes,
        &Pahole {
            leaves: vec![
                ("next", 0, 8),
                ("prev", 8, 8),
                ("len", 16, 4),
                ("proto", 20, 2),
                ("flags", 22, 1),
                ("stamp", 0, 16),
                ("hash", 64, 4),
                ("queue", 68, 2),
                ("cloned", 70, 1),
                ("kind", 71, 1),
                ("cookie", 128, 8),
                ("mark", 128, 4),
                ("name", 128, 12),
                ("users", 144, 8),
            ],
            aggregates: vec![(0, 24), (0, 24), (64, 64), (128, 16)],
            size: 192,
            holder: (64, 320),
        },
    );
    let base_file = open("base");
    let base = load(&base_file);
    let p = predict(&base, &changes, &[]).unwrap();
    assert_eq!(layout(&p.image, "pkt").alignment, 64);
    assert_eq!(nm(&p.image, "pkt_one"), (0xffffffff82a51440, 0xc0));
    assert_eq!(nm(&p.image, "pkt_pcpu"), (0x40, 0xc0));
}

#[test]
fn a_member_moved_first_in_its_anonymous_struct_is_laid_out_there() {
    // anon-move.elf: len declared first in its struct. pahole: len 0, a 4-byte hole,
    // next 8, prev 16, proto 24, flags 26; the struct and its union 32 B; size 64.
    predicted_matches_built(
        "move",
        &[Change::MemberMove {
            name: "pkt".into(),
            member: "len".into(),
            after: None,
        }],
        &Pahole {
            leaves: vec![
                ("len", 0, 4),
                ("next", 8, 8),
                ("prev", 16, 8),
                ("proto", 24, 2),
                ("flags", 26, 1),
                ("stamp", 0, 16),
                ("hash", 32, 4),
                ("queue", 36, 2),
                ("cloned", 38, 1),
                ("kind", 39, 1),
                ("cookie", 40, 8),
                ("mark", 40, 4),
                ("name", 40, 12),
                ("users", 56, 8),
            ],
            aggregates: vec![(0, 32), (0, 32), (32, 8), (40, 16)],
            size: 64,
            holder: (8, 80),
        },
    );
}

#[test]
fn a_member_inserted_after_one_in_an_anonymous_struct_lands_in_that_struct() {
    // anon-insert.elf: u64 extra declared after proto. pahole: extra 24 (a 2-byte
    // hole before it), flags 32; the struct and its union 40 B; hash 40, the last
    // union at 48, users 64; size 72. nm: pkt_one 0x48 B at 0xffffffff82a51180.
    let changes = [Change::MemberInsert {
        name: "pkt".into(),
        member: "extra".into(),
        size: 8,
        align: None,
        at: Position::After("proto".into()),
    }];
    predicted_matches_built(
        "insert",
        &changes,
        &Pahole {
            leaves: vec![
                ("next", 0, 8),
                ("prev", 8, 8),
                ("len", 16, 4),
                ("proto", 20, 2),
                ("extra", 24, 8),
                ("flags", 32, 1),
                ("stamp", 0, 16),
                ("hash", 40, 4),
                ("queue", 44, 2),
                ("cloned", 46, 1),
                ("kind", 47, 1),
                ("cookie", 48, 8),
                ("mark", 48, 4),
                ("name", 48, 12),
                ("users", 64, 8),
            ],
            aggregates: vec![(0, 40), (0, 40), (40, 8), (48, 16)],
            size: 72,
            holder: (8, 88),
        },
    );
    let base_file = open("base");
    let base = load(&base_file);
    let p = predict(&base, &changes, &[]).unwrap();
    assert_eq!(nm(&p.image, "pkt_one"), (0xffffffff82a51180, 0x48));
}

#[test]
fn the_command_line_reaches_members_inside_anonymous_aggregates() {
    let base = testdata("whatif/anon-base.elf");
    // The same growth as anon-len.elf, from the command line (nm of anon-len.elf:
    // pkt_one at ffffffff82a51180, 0x40 B).
    let (code, out, err) = run(&[
        "whatif", &base, "--struct", "pkt", "--member", "len=+8", "--nm",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        out.contains("ffffffff82a51180 0000000000000040 d pkt_one\n"),
        "{out}"
    );
    // --insert --first stays in the struct itself: 8 B aligned 8 at 0, the first
    // union at 8 (its 24 B end at 32), the second struct at 32, the last union at 40,
    // users at 56: 64 B (a hand computation; no variant is built for it).
    let (code, out, err) = run(&[
        "whatif", &base, "--struct", "pkt", "--insert", "x=8", "--first", "--format", "json",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pkt = v["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "pkt")
        .expect("struct pkt changed");
    assert_eq!(pkt["size"]["new"], 64, "{pkt}");
}

#[test]
fn a_move_across_anonymous_aggregates_and_an_unknown_member_are_refused() {
    let base = testdata("whatif/anon-base.elf");
    let refused = |args: &[&str]| {
        let mut all = vec!["whatif", base.as_str(), "--struct", "pkt"];
        all.extend_from_slice(args);
        let (code, out, err) = run(&all);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    };
    assert_eq!(
        refused(&["--member", "len", "--after", "hash"]),
        format!(
            "layout-diff: {base}: struct pkt: len is declared in the anonymous struct at \
             offset 0 and hash in the anonymous struct at offset 24: a member moves only \
             among the members of its own struct or union\n"
        )
    );
    assert_eq!(
        refused(&["--member", "users", "--after", "stamp"]),
        format!(
            "layout-diff: {base}: struct pkt: users is declared in the struct itself and \
             stamp in the anonymous union at offset 0: a member moves only among the \
             members of its own struct or union\n"
        )
    );
    assert_eq!(
        refused(&["--member", "lenn=+8"]),
        format!("layout-diff: {base}: struct pkt has no member \"lenn\"\n")
    );
    // C refuses a second member of one name at any depth: so does --insert.
    assert_eq!(
        refused(&["--insert", "hash=4", "--after", "users"]),
        format!("layout-diff: {base}: struct pkt already has a member \"hash\"\n")
    );
}

#[test]
fn suggest_moves_the_member_that_pushed_a_hot_one_within_their_anonymous_struct() {
    // anon-push.elf: len u32 -> u32[15] pushes flags, declared after it in the same
    // anonymous struct, from offset 22 (line 0) to 78 (line 1); anon-hot.txt is a
    // perf data-type profile with flags hot. Fixes, by hand from C's rules:
    // 1. len declared after flags: next 0, prev 8, proto 16, flags 18, len 20..80:
    //    the struct stays 80 B (pkt 112 B, +0 B), flags on line 0: restores;
    // 2. flags declared after prev: flags 16, len 20..80, proto 80: the struct
    //    align_up(82, 8) = 88 B, +8 B per instance, flags on line 0: restores;
    // 3. flags aligned to 64: at 128 (line 2), the struct align_up(129, 64) = 192 B,
    //    pkt align_up(224, 64) = 256 B: +144 B; it does not restore.
    let (code, out, err) = run(&[
        "suggest",
        &testdata("whatif/anon-base.elf"),
        &testdata("whatif/anon-push.elf"),
        "--hot",
        &testdata("whatif/anon-hot.txt"),
        "--format",
        "json",
    ]);
    // A hot member that changed line is information, not a flag (exit 0); suggest
    // still offers to put it back.
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let m = &v["members"][0];
    assert_eq!(
        (&m["struct"], &m["member"], &m["line_old"], &m["line_new"]),
        (
            &serde_json::json!("pkt"),
            &serde_json::json!("flags"),
            &serde_json::json!(0),
            &serde_json::json!(1)
        )
    );
    assert_eq!(m["pushed_by"], serde_json::json!(["len"]));
    assert_eq!(m["note"], serde_json::Value::Null);
    let fixes: Vec<(&str, bool, u64, i64)> = m["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["change"].as_str().unwrap(),
                f["restores"].as_bool().unwrap(),
                f["line"].as_u64().unwrap(),
                f["instance_bytes"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fixes,
        vec![
            ("--struct pkt --member len --after flags", true, 0, 0),
            ("--struct pkt --member flags --after prev", true, 0, 8),
            ("--struct pkt --member flags --align 64", false, 2, 144),
        ]
    );
    assert_eq!(
        m["fixes"][0]["declaration"],
        "/* struct pkt: declare after flags */ u32 len[15];"
    );
    // The members of its anonymous struct that shared its line in anon-base.elf.
    assert_eq!(
        m["rule"],
        "[struct.\"pkt\"]\ntogether = [[\"flags\", \"next\", \"prev\", \"len\"]]\n\
         why = \"a hot member kept on the line it shared (layout-diff suggest)\"\n"
    );
}

#[test]
fn the_first_fix_is_the_build_with_it() {
    // anon-pushfix.elf is anon-push.elf with len declared after flags (suggest's
    // first fix above). pahole: proto 16, flags 18, a 1-byte hole, len 20 (60); the
    // struct and its union 80 B; size 112.
    predicted_from_matches_built(
        "push",
        "pushfix",
        &[Change::MemberMove {
            name: "pkt".into(),
            member: "len".into(),
            after: Some("flags".into()),
        }],
        &Pahole {
            leaves: vec![
                ("next", 0, 8),
                ("prev", 8, 8),
                ("proto", 16, 2),
                ("flags", 18, 1),
                ("len", 20, 60),
                ("stamp", 0, 16),
                ("hash", 80, 4),
                ("queue", 84, 2),
                ("cloned", 86, 1),
                ("kind", 87, 1),
                ("cookie", 88, 8),
                ("mark", 88, 4),
                ("name", 88, 12),
                ("users", 104, 8),
            ],
            aggregates: vec![(0, 80), (0, 80), (80, 8), (88, 16)],
            size: 112,
            holder: (8, 128),
        },
    );
}

#[test]
fn a_member_declared_with_struct_group_grows_in_both_copies() {
    // anon-group.elf: struct pkt_grouped's hash, declared in struct_group(hdr, ...),
    // u32 -> u32[3]. pahole: in the anonymous struct and in hdr alike, proto 8, hash
    // 12 (12), flags 24; each copy and the union 20 B (were 12); tail 32 (was 24);
    // size 40 (was 32). nm: pkt_grouped_one 0x28 B, pkt_last moves 0xffffffff82a51020
    // -> ...28.
    let base_file = open("base");
    let base = load(&base_file);
    let built_file = open("group");
    let built = load(&built_file);
    let changes = [Change::Member {
        name: "pkt_grouped".into(),
        member: "hash".into(),
        grow: 8,
    }];
    let p = predict(&base, &changes, &[]).unwrap();
    let s = layout(&p.image, "pkt_grouped");
    let all: Vec<(Option<&str>, u64, u64)> = s
        .flat_members()
        .iter()
        .map(|(_, m)| (m.name, m.offset, m.size))
        .collect();
    assert_eq!(
        all,
        vec![
            (Some("id"), 0, 8),
            (None, 8, 20),
            (None, 8, 20),
            (Some("proto"), 8, 2),
            (Some("hash"), 12, 12),
            (Some("flags"), 24, 1),
            (Some("hdr"), 8, 20),
            (Some("proto"), 8, 2),
            (Some("hash"), 12, 12),
            (Some("flags"), 24, 1),
            (Some("tail"), 32, 8),
        ]
    );
    assert_eq!(s.size, 40);
    assert_eq!(gaps(s), gaps(layout(&built, "pkt_grouped")), "holes");
    assert_eq!(nm(&p.image, "pkt_grouped_one"), (0xffffffff82a51000, 0x28));
    assert_eq!(nm(&p.image, "pkt_last"), (0xffffffff82a51028, 4));
    assert_eq!(places(&p.image), places(&built));
}
