//! The change grammar read through clap, as `layout-diff whatif` reads it: exact
//! changes and exact one-line errors, and every change kind round-tripped through
//! `Change::to_args` (a property test).

use clap::CommandFactory;
use layout_diff_core::whatif::{Change, Position, Size};
use proptest::prelude::*;

use super::{ChangeError, from_matches};
use crate::cli::args::Cli;

/// The changes of `layout-diff whatif vmlinux WORDS...`, as the binary reads them.
fn read(words: &[&str]) -> Result<Vec<Change>, ChangeError> {
    let matches = Cli::command()
        .try_get_matches_from(["layout-diff", "whatif", "vmlinux"].iter().chain(words))
        .unwrap_or_else(|e| panic!("{words:?}: {e}"));
    let whatif = matches.subcommand_matches("whatif").expect("whatif");
    from_matches(whatif, whatif.get_raw("objects").is_some())
}

/// A change's spelling read back.
fn read_spelled(spelled: &str) -> Result<Vec<Change>, ChangeError> {
    read(&spelled.split(' ').collect::<Vec<_>>())
}

fn s(x: &str) -> String {
    x.to_string()
}

#[test]
fn a_member_is_aligned_or_moved_after_another_or_first() {
    let got = read(&[
        "--struct",
        "msg_queue",
        "--member",
        "tail",
        "--align",
        "64",
        "--member",
        "extra",
        "--after",
        "tail",
        "--member",
        "head",
        "--first",
    ]);
    assert_eq!(
        got,
        Ok(vec![
            Change::MemberAlign {
                name: s("msg_queue"),
                member: s("tail"),
                align: 64
            },
            Change::MemberMove {
                name: s("msg_queue"),
                member: s("extra"),
                after: Some(s("tail"))
            },
            Change::MemberMove {
                name: s("msg_queue"),
                member: s("head"),
                after: None
            },
        ])
    );
    let err = |words: &[&str]| read(words).unwrap_err().to_string();
    assert_eq!(
        err(&["--after", "tail"]),
        "--after tail: give --struct NAME --member M before it"
    );
    assert_eq!(
        err(&["--symbol", "x", "--first"]),
        "--first: give --struct NAME --member M before it"
    );
}

/// `--first` once for each member it places: clap refused a second one before, so two
/// moves to first had no spelling.
#[test]
fn first_is_given_once_for_each_member() {
    let first = |member: &str| Change::MemberMove {
        name: s("mce"),
        member: s(member),
        after: None,
    };
    assert_eq!(
        read(&[
            "--struct", "mce", "--member", "ip", "--first", "--member", "status", "--first"
        ]),
        Ok(vec![first("ip"), first("status")])
    );
}

#[test]
fn an_insert_takes_its_alignment_then_its_place() {
    let got = read(&[
        "--struct", "rec", "--insert", "flags=4", "--after", "addr", "--insert", "pad=12",
        "--align", "64", "--at", "0x10", "--insert", "first=+8", "--first",
    ])
    .unwrap();
    let insert = |member: &str, size, align, at| Change::MemberInsert {
        name: s("rec"),
        member: s(member),
        size,
        align,
        at,
    };
    assert_eq!(
        got,
        vec![
            insert("flags", 4, None, Position::After(s("addr"))),
            insert("pad", 12, Some(64), Position::Offset(16)),
            insert("first", 8, None, Position::First),
        ]
    );
    let err = |words: &[&str]| read(words).unwrap_err().to_string();
    let no_place = "--insert x=4: say where it goes (--after MEMBER, --first or --at OFFSET)";
    assert_eq!(err(&["--struct", "rec", "--insert", "x=4"]), no_place);
    assert_eq!(
        err(&["--struct", "rec", "--insert", "x=4", "--struct", "a=+8"]),
        no_place
    );
    assert_eq!(
        err(&["--struct", "rec", "--insert", "x=0", "--first"]),
        "--insert x=0: expected MEMBER=N (its size in bytes, more than 0)"
    );
    assert_eq!(
        err(&["--insert", "x=4"]),
        "--insert x=4: give --struct NAME before it"
    );
    assert_eq!(
        err(&["--struct", "rec", "--insert", "x=4", "--at", "ten"]),
        "--at ten: expected a byte offset"
    );
    assert_eq!(
        err(&["--at", "8"]),
        "--at 8: give --struct NAME --insert M=N before it"
    );
}

#[test]
fn changes_are_read_in_order_with_their_targets() {
    let got = read(&[
        "--struct",
        "mce=+8",
        "--struct=user_struct",
        "--align",
        "64",
        "--symbol",
        "root_user",
        "--align=64",
        "--struct",
        "rq",
        "--member",
        "lock=+4",
        "--percpu-aligned",
        "mces_seen",
        "--format",
        "json",
    ]);
    assert_eq!(
        got,
        Ok(vec![
            Change::Resize {
                name: s("mce"),
                size: Size::Grow(8)
            },
            Change::StructAlign {
                name: s("user_struct"),
                align: 64
            },
            Change::SymbolAlign {
                name: s("root_user"),
                align: 64
            },
            Change::Member {
                name: s("rq"),
                member: s("lock"),
                grow: 4
            },
            Change::PercpuAligned {
                name: s("mces_seen"),
                declaration: true,
            },
        ])
    );
    let err = |words: &[&str]| read(words).unwrap_err().to_string();
    assert_eq!(
        err(&["--align", "64"]),
        "--align 64: give --struct or --symbol before it"
    );
    assert_eq!(
        err(&["--symbol", "x", "--align", "48"]),
        "--align 48: expected a power of two"
    );
    assert_eq!(
        err(&["--struct", "mce=12x"]),
        "--struct mce=12x: \"12x\": invalid digit found in string"
    );
    assert_eq!(
        err(&["--struct", "rq", "--member", "lock=4"]),
        "--member lock=4: expected MEMBER=+N"
    );
    assert_eq!(
        err(&["--member", "lock=+4"]),
        "--member lock=+4: give --struct NAME before it"
    );
    assert_eq!(
        err(&["--format", "json"]),
        ChangeError::NoChange.to_string()
    );
    assert_eq!(
        ChangeError::NoChange.to_string(),
        "no change given (--struct NAME=+N, --struct NAME --member M=+N, --struct NAME \
         --align N, --symbol NAME --align N, --percpu-aligned NAME)"
    );
}

/// A parse error is kept when object files are given too; no change at all is then
/// no error (the objects may be the whole change).
#[test]
fn objects_keep_every_parse_error() {
    assert_eq!(
        read(&["--struct", "mce=12x", "--objects", "x.o"])
            .unwrap_err()
            .to_string(),
        "--struct mce=12x: \"12x\": invalid digit found in string"
    );
    assert_eq!(read(&["--objects", "x.o"]), Ok(Vec::new()));
}

#[test]
fn unit_alignment_is_read_as_unit_equals_a_power_of_two() {
    assert_eq!(
        read(&["--align-functions", "kernel/futex/waitwake.c=64"]),
        Ok(vec![Change::FunctionsAligned {
            unit: s("kernel/futex/waitwake.c"),
            align: 64
        }])
    );
    let err = |words: &[&str]| read(words).unwrap_err().to_string();
    assert_eq!(
        err(&["--align-functions", "fn.c=48"]),
        "--align-functions fn.c=48: expected a power of two after ="
    );
    assert_eq!(
        err(&["--align-functions", "fn.c"]),
        "--align-functions fn.c: expected UNIT=N"
    );
}

/// A C identifier.
fn ident() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_]{0,10}"
}

/// A symbol as the report names it: bare, or qualified by its file.
fn symbol() -> impl Strategy<Value = String> {
    prop_oneof![
        ident(),
        (ident(), ident()).prop_map(|(f, n)| format!("{f}.c:{n}"))
    ]
}

/// A power of two.
fn power_of_two() -> impl Strategy<Value = u64> {
    (0u32..64).prop_map(|k| 1u64 << k)
}

/// Every kind of change, with every field drawn.
fn change() -> impl Strategy<Value = Change> {
    let size = prop_oneof![
        any::<u64>().prop_map(Size::Grow),
        any::<u64>().prop_map(Size::Shrink),
        any::<u64>().prop_map(Size::Exactly),
    ];
    let position = prop_oneof![
        Just(Position::First),
        ident().prop_map(Position::After),
        any::<u64>().prop_map(Position::Offset),
    ];
    let unit = "[a-z]{1,6}(/[a-z_]{1,6}){0,2}\\.c";
    prop_oneof![
        (ident(), size).prop_map(|(name, size)| Change::Resize { name, size }),
        (ident(), ident(), any::<u64>()).prop_map(|(name, member, grow)| Change::Member {
            name,
            member,
            grow
        }),
        (ident(), power_of_two()).prop_map(|(name, align)| Change::StructAlign { name, align }),
        (symbol(), power_of_two()).prop_map(|(name, align)| Change::SymbolAlign { name, align }),
        (symbol(), any::<bool>())
            .prop_map(|(name, declaration)| Change::PercpuAligned { name, declaration }),
        (ident(), ident(), power_of_two()).prop_map(|(name, member, align)| {
            Change::MemberAlign {
                name,
                member,
                align,
            }
        }),
        (ident(), ident(), proptest::option::of(ident())).prop_map(|(name, member, after)| {
            Change::MemberMove {
                name,
                member,
                after,
            }
        }),
        (unit, power_of_two()).prop_map(|(unit, align)| Change::FunctionsAligned { unit, align }),
        symbol().prop_map(|name| Change::ReadMostly { name }),
        (
            ident(),
            ident(),
            1..=u64::MAX,
            proptest::option::of(power_of_two()),
            position
        )
            .prop_map(|(name, member, size, align, at)| Change::MemberInsert {
                name,
                member,
                size,
                align,
                at,
            }),
    ]
}

proptest! {
    /// Every change, spelled as arguments, reads back as itself through clap.
    #[test]
    fn every_change_kind_round_trips_through_its_spelling(c in change()) {
        prop_assert_eq!(read_spelled(&c.to_args()), Ok(vec![c]));
    }

    /// Changes spelled one after another read back as themselves, in order.
    #[test]
    fn changes_in_a_row_round_trip_in_order(all in proptest::collection::vec(change(), 1..6)) {
        let spelled: Vec<String> = all.iter().map(Change::to_args).collect();
        prop_assert_eq!(read_spelled(&spelled.join(" ")), Ok(all));
    }
}
