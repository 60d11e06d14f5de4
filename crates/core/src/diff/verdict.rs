//! The diff's central judgement, as one pure function: given what changed on an
//! object's lines and the evidence that it is hot, is the change flagged, listed as
//! possible, an improvement, or only recorded, and by which rule. `--explain` prints
//! the same decision. Only a change for the worse to something whose evidence is
//! stronger than a type guess is flagged.

use serde::Serialize;

use super::lines::Tie;
use crate::evidence::Strength;

/// The categories a flagged change falls in; `--fail-on` picks which make exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// A hot member of an object now shares a line with another object's written member.
    Neighbour,
    /// A hot member now shares a 128-byte pair of lines (the adjacent-line
    /// prefetcher's unit) with another object's written member: weaker, listed but not
    /// flagged unless `--fail-on adjacent`.
    Adjacent,
    /// A struct member that frequent code writes now shares a line with a member
    /// that other frequent code reads or writes (the typed access map).
    Member,
    /// A line-aligned object is no longer line-aligned.
    Aligned,
    /// A cache-line group grew or changed.
    Group,
    /// A hot function changed phase.
    Text,
    /// A type-only guess gained a written neighbour (off by default).
    Possible,
}

impl Category {
    /// Every category, in `--fail-on`'s order.
    pub const ALL: [Category; 7] = [
        Category::Neighbour,
        Category::Adjacent,
        Category::Member,
        Category::Aligned,
        Category::Group,
        Category::Text,
        Category::Possible,
    ];

    /// The name `--fail-on` takes.
    pub fn name(self) -> &'static str {
        match self {
            Category::Neighbour => "neighbour",
            Category::Adjacent => "adjacent",
            Category::Member => "member",
            Category::Aligned => "aligned",
            Category::Group => "group",
            Category::Text => "text",
            Category::Possible => "possible",
        }
    }

    /// The category `--fail-on` names `s`.
    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == s)
    }

    /// Every name, comma-separated (for help and errors).
    pub fn names() -> String {
        Category::ALL.map(Category::name).join(", ")
    }

    /// Without `--fail-on`: every category standing on evidence and on one line (all
    /// but `possible` and `adjacent`).
    pub fn default_fail_on() -> Vec<Category> {
        Category::ALL
            .into_iter()
            .filter(|&c| c != Category::Possible && c != Category::Adjacent)
            .collect()
    }
}

/// What the judgement of one data object (global or per-CPU) reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ObjectFacts {
    /// The strongest evidence that the object is hot, if any.
    pub hot: Option<Strength>,
    /// Cold by type, section or name (tracing metadata, sysfs attributes, ...).
    pub cold: bool,
    /// In storage freed after boot.
    pub boot_only: bool,
    /// A neighbour on its lines in the new build that was not there before.
    pub gained_neighbour: bool,
    /// One of its hot members now shares a line with a written member of another
    /// object, which it did not before (`diff::sharing`), and what the weightiest such
    /// meeting weighs: written by frequent code that does not write the hot member
    /// (`Tie::Frequent`), by the same code (`CoWritten`), by rare code, by code of
    /// unknown frequency, or only by its type.
    pub meets_written: Option<Tie>,
    /// One of its hot members now shares a 128-byte pair with a member written on
    /// evidence, which it did not before.
    pub meets_adjacent: bool,
    /// Its hot members, which shared their lines with other objects before, are alone
    /// on their lines now.
    pub hot_now_alone: bool,
    /// A hot member's meeting with a written member of another object ended, and no
    /// new one began.
    pub meetings_gone: bool,
    /// It spans more lines than before.
    pub more_lines: bool,
    /// It was line-aligned by declaration (alignment of a line or more) and started a
    /// line, and now does not.
    pub lost_line_alignment: bool,
    /// A member known or measured hot moved to another line of the instance.
    pub hot_member_moved: bool,
    /// Fewer neighbours than before, or it starts a line now and did not.
    pub improved: bool,
    /// Its offset in its line, its line count or its neighbours changed.
    pub line_facts_changed: bool,
    /// Its only evidence says it is read, not written (`__read_mostly`): its lines
    /// matter only when a written neighbour joins them.
    pub read_hot: bool,
}

/// What the judgement concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "category")]
pub enum Verdict {
    /// A change for the worse to something hot: counted, and fails the run when its
    /// category is in `--fail-on`.
    Flag(Category),
    /// A change for the worse that only a type guess calls hot: listed, counted by
    /// pattern, fails only with `--fail-on possible`.
    Possible,
    /// Sharing went away or it now starts a line: shown for hot objects.
    Improvement,
    /// Its line facts changed, nothing for the worse with evidence.
    Changed,
    /// Nothing that can matter (boot-only, cold, same lines and neighbours).
    Quiet,
}

/// A verdict and the rule that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// What was decided.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The rule that decided it, as `explain` names it.
    pub rule: &'static str,
}

fn decided(verdict: Verdict, rule: &'static str) -> Decision {
    Decision { verdict, rule }
}

/// Judges one data object; the rules are tried in order and the first that applies
/// decides.
pub fn judge_object(f: &ObjectFacts) -> Decision {
    let evidenced = f.hot.is_some_and(|s| s > Strength::Inferred);
    sharing_verdict(f, evidenced).unwrap_or_else(|| lines_verdict(f, evidenced))
}

/// The rules of `judge_object` on storage, alignment and sharing (`evidenced`: more
/// than inferred evidence of hotness); none when none applies.
fn sharing_verdict(f: &ObjectFacts, evidenced: bool) -> Option<Decision> {
    if f.boot_only && !evidenced {
        return Some(decided(
            Verdict::Quiet,
            "boot-only storage is freed after boot",
        ));
    }
    if f.lost_line_alignment {
        return Some(decided(
            Verdict::Flag(Category::Aligned),
            "a line-aligned object is no longer line-aligned",
        ));
    }
    if evidenced && f.meets_written == Some(Tie::Frequent) {
        return Some(decided(
            Verdict::Flag(Category::Neighbour),
            "a hot member now shares a line with a member of another object that frequent code writes (known or measured hot, or called directly by such code), code that does not write the hot member",
        ));
    }
    if evidenced && let Some(rule) = demoted(f.meets_written) {
        return Some(decided(Verdict::Changed, rule));
    }
    if f.cold && !evidenced {
        return Some(decided(Verdict::Quiet, "cold by type, section or name"));
    }
    if evidenced && f.meets_written == Some(Tie::Typed) {
        return Some(decided(
            Verdict::Possible,
            "a hot member now shares a line with a member of another object that only its type says is written (no code touches it)",
        ));
    }
    if f.hot == Some(Strength::Inferred) && f.meets_written.is_some() {
        return Some(decided(
            Verdict::Possible,
            "only its type suggests it is hot (a lock or an atomic), and that member now shares a line with a written member",
        ));
    }
    if evidenced && f.meets_adjacent {
        return Some(decided(
            Verdict::Flag(Category::Adjacent),
            "a hot member now shares a 128-byte pair of lines with a written member of another object (the code writes it, or it is known hot)",
        ));
    }
    if evidenced && (f.hot_now_alone || f.meetings_gone) {
        return Some(decided(
            Verdict::Improvement,
            "its hot members no longer share a line with another object's written members",
        ));
    }
    None
}

/// The rule that lists, and does not flag, a new meeting whose other side is not
/// written by frequent code of its own.
fn demoted(tie: Option<Tie>) -> Option<&'static str> {
    match tie? {
        Tie::CoWritten => Some(
            "a hot member now shares a line with a member the same code writes (co-written): true sharing, cheaper on one line than on two",
        ),
        Tie::RareWriter => Some(
            "a hot member now shares a line with a written member of another object, but its writers run rarely (rare writer): not contended",
        ),
        Tie::Unknown => Some(
            "a hot member now shares a line with a written member of another object whose writers' frequency is unknown: listed, not flagged",
        ),
        Tie::Frequent | Tie::Typed => None,
    }
}

/// The rules of `judge_object` on its lines and neighbours, once no rule of
/// `sharing_verdict` applied.
fn lines_verdict(f: &ObjectFacts, evidenced: bool) -> Decision {
    if f.read_hot {
        return decided(
            Verdict::Quiet,
            "read-mostly: only a written member on its lines would matter, and none came",
        );
    }
    if evidenced && f.hot_member_moved {
        return decided(
            Verdict::Changed,
            "a hot member moved to another line: information, not a flag; what matters is who shares its new line",
        );
    }
    let worse = f.gained_neighbour || f.more_lines;
    if !worse && f.improved {
        return decided(
            Verdict::Improvement,
            "same or fewer lines and neighbours, and fewer neighbours or now line-aligned",
        );
    }
    if !worse {
        return decided(
            Verdict::Quiet,
            "same or fewer lines and neighbours: never flagged, whatever its offset",
        );
    }
    if evidenced {
        return decided(
            Verdict::Changed,
            "a hot object's lines changed, but no written member of another object came to a hot member's line and no hot member moved line",
        );
    }
    if f.line_facts_changed {
        return decided(Verdict::Changed, "no evidence that it is hot");
    }
    decided(Verdict::Quiet, "nothing on its lines changed")
}

/// Judges one function whose start mod the line size or line count changed. Most
/// functions change phase in every build (functions are aligned to 16 bytes, not to a
/// line), so only measurement or a request by name flags one; a known-hot function's
/// change is shown, not flagged.
pub fn judge_function(hot: Option<Strength>, pinned: bool) -> Decision {
    if pinned {
        decided(
            Verdict::Flag(Category::Text),
            "a function asked for by name changed its start in its line",
        )
    } else if hot == Some(Strength::Measured) {
        decided(
            Verdict::Flag(Category::Text),
            "a function measured hot changed its start in its line",
        )
    } else if hot == Some(Strength::Known) {
        decided(
            Verdict::Changed,
            "a known-hot function changed phase, as most functions do in every build: flagged only when measured (--hot with perf report --sort sym)",
        )
    } else {
        decided(Verdict::Changed, "no evidence that the function is hot")
    }
}

/// Judges one struct whose layout changed.
pub fn judge_struct(group_flagged: bool, hot_member_moved: bool) -> Decision {
    if group_flagged {
        decided(
            Verdict::Flag(Category::Group),
            "a cache-line group grew beyond its lines or changed members",
        )
    } else if hot_member_moved {
        decided(
            Verdict::Changed,
            "a hot member moved to another line: information, not a flag; what matters is who shares its new line",
        )
    } else {
        decided(Verdict::Changed, "no hot member moved line")
    }
}

/// Judges a struct's lines by who shares them (`struct_lines`): `None` when nothing
/// there decides.
pub fn judge_struct_lines(new_meeting: bool, ended: bool) -> Option<Decision> {
    if new_meeting {
        Some(decided(
            Verdict::Flag(Category::Member),
            "a member frequent code writes now shares a line with a member that other frequent code reads or writes",
        ))
    } else if ended {
        Some(decided(
            Verdict::Improvement,
            "a member frequent code writes no longer shares a line with a member other frequent code touches, and no such meeting began",
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Strength::*;

    fn facts() -> ObjectFacts {
        ObjectFacts {
            line_facts_changed: true,
            ..ObjectFacts::default()
        }
    }

    /// `__read_mostly` data: a written member on its lines is the risk, nothing else is.
    #[test]
    fn read_mostly_matters_only_with_a_written_member_on_its_line() {
        let read_mostly = ObjectFacts {
            hot: Some(Declared),
            read_hot: true,
            gained_neighbour: true,
            more_lines: true,
            ..facts()
        };
        assert_eq!(judge_object(&read_mostly).verdict, Verdict::Quiet);
        let typed = ObjectFacts {
            meets_written: Some(Tie::Typed),
            ..read_mostly
        };
        assert_eq!(judge_object(&typed).verdict, Verdict::Possible);
        let written = ObjectFacts {
            meets_written: Some(Tie::Frequent),
            ..typed
        };
        assert_eq!(
            judge_object(&written).verdict,
            Verdict::Flag(Category::Neighbour)
        );
    }

    /// A new meeting flags only when frequent code that does not write the hot member
    /// writes the other side; co-written, rare and unknown writers are listed
    /// (`Changed`, with the rule naming which), a type guess is `Possible`.
    #[test]
    fn a_meeting_flags_only_with_a_frequent_writer_of_its_own() {
        let verdict = |tie| {
            let f = ObjectFacts {
                hot: Some(Known),
                gained_neighbour: true,
                meets_written: Some(tie),
                ..facts()
            };
            let d = judge_object(&f);
            (
                d.verdict,
                d.rule.split(':').next().unwrap_or("").to_string(),
            )
        };
        assert_eq!(verdict(Tie::Frequent).0, Verdict::Flag(Category::Neighbour));
        assert_eq!(
            verdict(Tie::CoWritten),
            (
                Verdict::Changed,
                "a hot member now shares a line with a member the same code writes (co-written)"
                    .to_string()
            )
        );
        assert_eq!(verdict(Tie::RareWriter).0, Verdict::Changed);
        assert!(verdict(Tie::RareWriter).1.contains("(rare writer)"));
        assert_eq!(verdict(Tie::Unknown).0, Verdict::Changed);
        assert!(verdict(Tie::Unknown).1.contains("frequency is unknown"));
        assert_eq!(verdict(Tie::Typed).0, Verdict::Possible);
    }

    /// One row per rule, and the rows where evidence decides.
    #[test]
    fn object_truth_table() {
        let meets = ObjectFacts {
            gained_neighbour: true,
            meets_written: Some(Tie::Frequent),
            ..facts()
        };
        let typed = ObjectFacts {
            meets_written: Some(Tie::Typed),
            ..meets
        };
        let adjacent = ObjectFacts {
            gained_neighbour: true,
            meets_adjacent: true,
            ..facts()
        };
        let alone = ObjectFacts {
            gained_neighbour: true,
            hot_now_alone: true,
            ..facts()
        };
        let rows: &[(&str, ObjectFacts, Verdict)] = &[
            (
                "measured + written member on its line",
                ObjectFacts {
                    hot: Some(Measured),
                    ..meets
                },
                Verdict::Flag(Category::Neighbour),
            ),
            (
                "known + written member on its line",
                ObjectFacts {
                    hot: Some(Known),
                    ..meets
                },
                Verdict::Flag(Category::Neighbour),
            ),
            (
                "declared + written member on its line",
                ObjectFacts {
                    hot: Some(Declared),
                    ..meets
                },
                Verdict::Flag(Category::Neighbour),
            ),
            (
                "inferred + written member on its line",
                ObjectFacts {
                    hot: Some(Inferred),
                    ..meets
                },
                Verdict::Possible,
            ),
            (
                "known + member written by type only",
                ObjectFacts {
                    hot: Some(Known),
                    ..typed
                },
                Verdict::Possible,
            ),
            (
                "measured + member written by type only",
                ObjectFacts {
                    hot: Some(Measured),
                    ..typed
                },
                Verdict::Possible,
            ),
            (
                "inferred + member written by type only",
                ObjectFacts {
                    hot: Some(Inferred),
                    ..typed
                },
                Verdict::Possible,
            ),
            ("no evidence + written member", meets, Verdict::Changed),
            (
                "known + written member across the 128-byte pair",
                ObjectFacts {
                    hot: Some(Known),
                    ..adjacent
                },
                Verdict::Flag(Category::Adjacent),
            ),
            (
                "inferred + written member across the pair",
                ObjectFacts {
                    hot: Some(Inferred),
                    ..adjacent
                },
                Verdict::Changed,
            ),
            (
                "known, hot members alone now, cold tail gained a neighbour",
                ObjectFacts {
                    hot: Some(Known),
                    ..alone
                },
                Verdict::Improvement,
            ),
            (
                "known, a meeting ended and none began",
                ObjectFacts {
                    hot: Some(Known),
                    meetings_gone: true,
                    gained_neighbour: true,
                    ..facts()
                },
                Verdict::Improvement,
            ),
            (
                "cold + inferred",
                ObjectFacts {
                    hot: Some(Inferred),
                    cold: true,
                    ..meets
                },
                Verdict::Quiet,
            ),
            (
                "cold but known",
                ObjectFacts {
                    hot: Some(Known),
                    cold: true,
                    ..meets
                },
                Verdict::Flag(Category::Neighbour),
            ),
            (
                "boot-only + inferred",
                ObjectFacts {
                    hot: Some(Inferred),
                    boot_only: true,
                    ..meets
                },
                Verdict::Quiet,
            ),
            (
                "known + neighbour with no written member on a hot member's line",
                ObjectFacts {
                    hot: Some(Known),
                    gained_neighbour: true,
                    ..facts()
                },
                Verdict::Changed,
            ),
            (
                "known + member moved",
                ObjectFacts {
                    hot: Some(Known),
                    hot_member_moved: true,
                    ..facts()
                },
                Verdict::Changed,
            ),
            (
                "inferred + member moved",
                ObjectFacts {
                    hot: Some(Inferred),
                    hot_member_moved: true,
                    ..facts()
                },
                Verdict::Quiet,
            ),
            (
                "lost line alignment",
                ObjectFacts {
                    hot: Some(Declared),
                    lost_line_alignment: true,
                    ..facts()
                },
                Verdict::Flag(Category::Aligned),
            ),
            (
                "known, fewer neighbours",
                ObjectFacts {
                    hot: Some(Known),
                    improved: true,
                    ..facts()
                },
                Verdict::Improvement,
            ),
            (
                "known, offset only",
                ObjectFacts {
                    hot: Some(Known),
                    ..facts()
                },
                Verdict::Quiet,
            ),
            (
                "known, more lines",
                ObjectFacts {
                    hot: Some(Known),
                    more_lines: true,
                    ..facts()
                },
                Verdict::Changed,
            ),
            (
                "nothing, more lines",
                ObjectFacts {
                    more_lines: true,
                    ..facts()
                },
                Verdict::Changed,
            ),
            (
                "nothing changed on its lines",
                ObjectFacts {
                    gained_neighbour: true,
                    line_facts_changed: false,
                    ..ObjectFacts::default()
                },
                Verdict::Quiet,
            ),
        ];
        for (what, f, want) in rows {
            assert_eq!(judge_object(f).verdict, *want, "{what}");
        }
    }

    /// Whatever the evidence, an object with the same or fewer lines and neighbours is
    /// never flagged.
    #[test]
    fn same_or_fewer_lines_and_neighbours_is_never_flagged() {
        for hot in [
            None,
            Some(Inferred),
            Some(Declared),
            Some(Known),
            Some(Measured),
        ] {
            for cold in [false, true] {
                for improved in [false, true] {
                    let f = ObjectFacts {
                        hot,
                        cold,
                        improved,
                        ..facts()
                    };
                    let v = judge_object(&f).verdict;
                    assert!(
                        !matches!(v, Verdict::Flag(_) | Verdict::Possible),
                        "{f:?}: {v:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn functions_and_structs() {
        assert_eq!(judge_function(Some(Known), false).verdict, Verdict::Changed);
        assert_eq!(
            judge_function(Some(Measured), false).verdict,
            Verdict::Flag(Category::Text)
        );
        assert_eq!(
            judge_function(None, true).verdict,
            Verdict::Flag(Category::Text)
        );
        assert_eq!(judge_function(None, false).verdict, Verdict::Changed);
        assert_eq!(
            judge_function(Some(Inferred), false).verdict,
            Verdict::Changed
        );
        assert_eq!(
            judge_struct(true, false).verdict,
            Verdict::Flag(Category::Group)
        );
        assert_eq!(
            judge_struct(true, true).verdict,
            Verdict::Flag(Category::Group)
        );
        assert_eq!(judge_struct(false, true).verdict, Verdict::Changed);
        assert_eq!(judge_struct(false, false).verdict, Verdict::Changed);
    }
}
