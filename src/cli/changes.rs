//! `whatif`'s changes read from clap's own matches, in command-line order: the one
//! parser of the grammar `Change::to_args` spells (`--struct NAME --member M --align N`
//! is one change, so the order of the flags is the meaning, which clap's per-flag
//! vectors lose; `ArgMatches::indices_of` gives it back).

use clap::ArgMatches;
use clap::parser::ValueSource;
use layout_diff_core::whatif::{Change, Position, Size};

/// A change given wrongly on the command line; its text is the one line printed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChangeError {
    /// Neither a change nor an object file.
    #[error(
        "no change given (--struct NAME=+N, --struct NAME --member M=+N, \
         --struct NAME --align N, --symbol NAME --align N, --percpu-aligned NAME)"
    )]
    NoChange,
    /// `--struct NAME=SIZE` whose size is no number.
    #[error("--struct {value}: {number:?}: {reason}")]
    BadSize {
        /// The value given.
        value: String,
        /// The part read as a number.
        number: String,
        /// Why it is none.
        reason: std::num::ParseIntError,
    },
    /// `--member` before any `--struct`.
    #[error("--member {0}: give --struct NAME before it")]
    MemberWithoutStruct(String),
    /// `--member M=...` that is not a growth.
    #[error("--member {0}: expected MEMBER=+N")]
    BadGrowth(String),
    /// `--insert` before any `--struct`.
    #[error("--insert {0}: give --struct NAME before it")]
    InsertWithoutStruct(String),
    /// `--insert` not `MEMBER=N` with N above 0.
    #[error("--insert {0}: expected MEMBER=N (its size in bytes, more than 0)")]
    BadInsert(String),
    /// `--insert` not followed by where it goes.
    #[error("--insert {member}={size}: say where it goes (--after MEMBER, --first or --at OFFSET)")]
    InsertNeedsPlace {
        /// The member to insert.
        member: String,
        /// Its size in bytes.
        size: u64,
    },
    /// `--at` without an `--insert` before it.
    #[error("--at {0}: give --struct NAME --insert M=N before it")]
    AtWithoutInsert(String),
    /// `--at` that is no offset.
    #[error("--at {0}: expected a byte offset")]
    BadOffset(String),
    /// `--after` without a `--member` or `--insert` before it.
    #[error("--after {0}: give --struct NAME --member M before it")]
    AfterWithoutMember(String),
    /// `--first` without a `--member` or `--insert` before it.
    #[error("--first: give --struct NAME --member M before it")]
    FirstWithoutMember,
    /// `--align` that is no power of two.
    #[error("--align {0}: expected a power of two")]
    NotPowerOfTwo(String),
    /// `--align` with nothing before it to align.
    #[error("--align {0}: give --struct or --symbol before it")]
    AlignWithoutTarget(String),
    /// `--align-functions` without `=`.
    #[error("--align-functions {0}: expected UNIT=N")]
    UnitWithoutAlignment(String),
    /// `--align-functions UNIT=N` whose N is no power of two.
    #[error("--align-functions {0}: expected a power of two after =")]
    UnitNotPowerOfTwo(String),
}

/// The change flags: clap's id of each and its spelling.
const FLAGS: [(&str, &str); 12] = [
    ("structs", "--struct"),
    ("symbols", "--symbol"),
    ("members", "--member"),
    ("aligns", "--align"),
    ("percpu_aligned", "--percpu-aligned"),
    ("percpu_aligned_definition", "--percpu-aligned-definition"),
    ("after", "--after"),
    ("first", "--first"),
    ("align_functions", "--align-functions"),
    ("read_mostly", "--read-mostly"),
    ("inserts", "--insert"),
    ("at", "--at"),
];

/// The changes `whatif`'s matches give, in order; with `objects` (recompiled object
/// files may be the whole change) none is no error, and every other mistake is.
pub fn from_matches(matches: &ArgMatches, objects: bool) -> Result<Vec<Change>, ChangeError> {
    let changes = parse(flags_in_order(matches))?;
    if changes.is_empty() && !objects {
        return Err(ChangeError::NoChange);
    }
    Ok(changes)
}

/// Each change flag given, with its value (none for `--first`), in command-line order.
fn flags_in_order(matches: &ArgMatches) -> Vec<(&'static str, String)> {
    let mut given: Vec<(usize, &'static str, String)> = Vec::new();
    for (id, flag) in FLAGS {
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let Some(indices) = matches.indices_of(id) else {
            continue;
        };
        if id == "first" {
            given.extend(indices.map(|i| (i, flag, String::new())));
            continue;
        }
        let values = matches.get_raw(id).into_iter().flatten();
        given.extend(
            indices
                .zip(values)
                .map(|(i, v)| (i, flag, v.to_string_lossy().into_owned())),
        );
    }
    given.sort_by_key(|&(i, _, _)| i);
    given.into_iter().map(|(_, f, v)| (f, v)).collect()
}

/// What the flags before the next one are about.
enum Target {
    None,
    Struct(String),
    Symbol(String),
    /// `--member M` without a size: a struct's member, for --align/--after/--first.
    Member(String, String),
    /// `--insert M=N`: a new member, waiting for where (and --align).
    Insert(String, String, u64, Option<u64>),
}

/// The changes the flags give, read in order.
fn parse(flags: Vec<(&'static str, String)>) -> Result<Vec<Change>, ChangeError> {
    let mut out = Vec::new();
    let mut target = Target::None;
    for (flag, value) in flags {
        // An insert waits for where it goes; any other change first is a mistake.
        if let Target::Insert(_, member, size, _) = &target
            && !matches!(flag, "--align" | "--after" | "--at" | "--first")
        {
            return Err(insert_needs_place(member, *size));
        }
        if let Some(change) = step(&mut target, flag, value)? {
            out.push(change);
        }
    }
    if let Target::Insert(_, member, size, _) = &target {
        return Err(insert_needs_place(member, *size));
    }
    Ok(out)
}

/// One flag read against what came before it: the change it completes, if any.
fn step(target: &mut Target, flag: &str, value: String) -> Result<Option<Change>, ChangeError> {
    let change = match flag {
        "--first" => first(target)?,
        "--struct" => return struct_flag(target, value),
        "--symbol" => {
            *target = Target::Symbol(value);
            return Ok(None);
        }
        "--insert" => return insert_flag(target, value),
        "--at" => at(target, value)?,
        "--member" => return member(target, value),
        "--after" => after(target, value)?,
        "--align" => return align(target, value),
        "--align-functions" => unit_align(&value)?,
        "--read-mostly" => Change::ReadMostly { name: value },
        "--percpu-aligned-definition" => Change::PercpuAligned {
            name: value,
            declaration: false,
        },
        _ => Change::PercpuAligned {
            name: value,
            declaration: true,
        },
    };
    Ok(Some(change))
}

/// `--first`: the member being inserted goes first, or the member moves first.
fn first(target: &mut Target) -> Result<Change, ChangeError> {
    Ok(match &*target {
        Target::Insert(name, member, size, align) => {
            let c = insert(name, member, *size, *align, Position::First);
            *target = Target::Struct(name.clone());
            c
        }
        Target::Member(name, member) => Change::MemberMove {
            name: name.clone(),
            member: member.clone(),
            after: None,
        },
        _ => return Err(ChangeError::FirstWithoutMember),
    })
}

/// `--struct NAME=SIZE` resizes a struct; `--struct NAME` makes it the target.
fn struct_flag(target: &mut Target, value: String) -> Result<Option<Change>, ChangeError> {
    Ok(Some(match value.split_once('=') {
        Some((name, size)) => Change::Resize {
            name: name.to_string(),
            size: parse_size(size).map_err(|(number, reason)| ChangeError::BadSize {
                value: value.clone(),
                number,
                reason,
            })?,
        },
        None => {
            *target = Target::Struct(value);
            return Ok(None);
        }
    }))
}

/// `--insert MEMBER=SIZE`: a member to insert into the target struct, placed by the
/// next flag.
fn insert_flag(target: &mut Target, value: String) -> Result<Option<Change>, ChangeError> {
    let name = match &*target {
        Target::Struct(name) | Target::Member(name, _) => name.clone(),
        _ => return Err(ChangeError::InsertWithoutStruct(value)),
    };
    let parsed = value.split_once('=').and_then(|(m, n)| {
        let n: u64 = n.strip_prefix('+').unwrap_or(n).parse().ok()?;
        (!m.is_empty() && n > 0).then(|| (m.to_string(), n))
    });
    let Some((member, size)) = parsed else {
        return Err(ChangeError::BadInsert(value));
    };
    *target = Target::Insert(name, member, size, None);
    Ok(None)
}

/// `--at OFFSET`: the member being inserted goes at that offset.
fn at(target: &mut Target, value: String) -> Result<Change, ChangeError> {
    let Target::Insert(name, member, size, align) = &*target else {
        return Err(ChangeError::AtWithoutInsert(value));
    };
    let offset = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
    .ok_or_else(|| ChangeError::BadOffset(value.clone()))?;
    let c = insert(name, member, *size, *align, Position::Offset(offset));
    *target = Target::Struct(name.clone());
    Ok(c)
}

/// `--member NAME=+N` grows a member of the target struct; `--member NAME` makes it
/// the target.
fn member(target: &mut Target, value: String) -> Result<Option<Change>, ChangeError> {
    let name = match &*target {
        Target::Struct(name) | Target::Member(name, _) => name.clone(),
        _ => return Err(ChangeError::MemberWithoutStruct(value)),
    };
    let Some((member, grow)) = value.split_once('=') else {
        *target = Target::Member(name, value);
        return Ok(None);
    };
    let grow = match parse_size(grow) {
        Ok(Size::Grow(n)) => n,
        _ => return Err(ChangeError::BadGrowth(value)),
    };
    Ok(Some(Change::Member {
        name,
        member: member.to_string(),
        grow,
    }))
}

/// `--after MEMBER`: the member being inserted, or the target member, goes after it.
fn after(target: &mut Target, value: String) -> Result<Change, ChangeError> {
    Ok(match &*target {
        Target::Insert(name, member, size, align) => {
            let c = insert(name, member, *size, *align, Position::After(value));
            *target = Target::Struct(name.clone());
            c
        }
        Target::Member(name, member) => Change::MemberMove {
            name: name.clone(),
            member: member.clone(),
            after: Some(value),
        },
        _ => return Err(ChangeError::AfterWithoutMember(value)),
    })
}

/// `--align N`: the alignment of the member being inserted, or of the target.
fn align(target: &mut Target, value: String) -> Result<Option<Change>, ChangeError> {
    let align: u64 = value
        .parse()
        .ok()
        .filter(|a: &u64| a.is_power_of_two())
        .ok_or_else(|| ChangeError::NotPowerOfTwo(value.clone()))?;
    Ok(Some(match target {
        Target::Insert(_, _, _, a) => {
            *a = Some(align);
            return Ok(None);
        }
        Target::Struct(name) => Change::StructAlign {
            name: name.clone(),
            align,
        },
        Target::Symbol(name) => Change::SymbolAlign {
            name: name.clone(),
            align,
        },
        Target::Member(name, member) => Change::MemberAlign {
            name: name.clone(),
            member: member.clone(),
            align,
        },
        Target::None => return Err(ChangeError::AlignWithoutTarget(value)),
    }))
}

/// An inserted member, placed.
fn insert(name: &str, member: &str, size: u64, align: Option<u64>, at: Position) -> Change {
    Change::MemberInsert {
        name: name.to_string(),
        member: member.to_string(),
        size,
        align,
        at,
    }
}

fn insert_needs_place(member: &str, size: u64) -> ChangeError {
    ChangeError::InsertNeedsPlace {
        member: member.to_string(),
        size,
    }
}

/// `+N`, `-N` or `N`; the error is the part that is no number and why.
fn parse_size(s: &str) -> Result<Size, (String, std::num::ParseIntError)> {
    let num = |t: &str| t.parse::<u64>().map_err(|e| (t.to_string(), e));
    match s.as_bytes().first() {
        Some(b'+') => Ok(Size::Grow(num(&s[1..])?)),
        Some(b'-') => Ok(Size::Shrink(num(&s[1..])?)),
        _ => Ok(Size::Exactly(num(s)?)),
    }
}

/// `UNIT=N` of `--align-functions`.
fn unit_align(value: &str) -> Result<Change, ChangeError> {
    let (unit, align) = value
        .rsplit_once('=')
        .ok_or_else(|| ChangeError::UnitWithoutAlignment(value.to_string()))?;
    let align: u64 = align
        .parse()
        .ok()
        .filter(|a: &u64| a.is_power_of_two())
        .ok_or_else(|| ChangeError::UnitNotPowerOfTwo(value.to_string()))?;
    Ok(Change::FunctionsAligned {
        unit: unit.to_string(),
        align,
    })
}

#[cfg(test)]
mod tests;
