//! The diff's central judgement, as one pure function: given what changed on an
//! object's lines and the evidence that it is hot, is the change flagged, listed as
//! possible, an improvement, or only recorded, and by which rule. `--explain` prints
//! the same decision. Only a change for the worse to something whose evidence is
//! stronger than a type guess is flagged.

use serde::Serialize;

use crate::evidence::Strength;

/// The categories a flagged change falls in; `--fail-on` picks which make exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// A hot object gained a written neighbour.
    Neighbour,
    /// A hot member moved to another line.
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
    pub const ALL: [Category; 6] = [
        Category::Neighbour,
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
            Category::Member => "member",
            Category::Aligned => "aligned",
            Category::Group => "group",
            Category::Text => "text",
            Category::Possible => "possible",
        }
    }

    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == s)
    }

    /// Every name, comma-separated (for help and errors).
    pub fn names() -> String {
        Category::ALL.map(Category::name).join(", ")
    }

    /// Without `--fail-on`: every category standing on evidence (all but `possible`).
    pub fn default_fail_on() -> Vec<Category> {
        Category::ALL
            .into_iter()
            .filter(|&c| c != Category::Possible)
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
    /// One of those neighbours is written at run time: writable, not read-mostly or
    /// cold, and its type holds a lock, an atomic or a counter (inferred) or it has
    /// evidence of its own.
    pub gained_written_neighbour: bool,
    /// One of those written neighbours is hot itself (measured, known or declared):
    /// false sharing between two things with evidence.
    pub gained_hot_written_neighbour: bool,
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
    #[serde(flatten)]
    pub verdict: Verdict,
    pub rule: &'static str,
}

fn decided(verdict: Verdict, rule: &'static str) -> Decision {
    Decision { verdict, rule }
}

/// Judges one data object; the rules are tried in order and the first that applies
/// decides.
pub fn judge_object(f: &ObjectFacts) -> Decision {
    let evidenced = f.hot.is_some_and(|s| s > Strength::Inferred);
    if f.boot_only && !evidenced {
        return decided(Verdict::Quiet, "boot-only storage is freed after boot");
    }
    if f.lost_line_alignment {
        return decided(
            Verdict::Flag(Category::Aligned),
            "a line-aligned object is no longer line-aligned",
        );
    }
    if evidenced && f.gained_hot_written_neighbour {
        return decided(
            Verdict::Flag(Category::Neighbour),
            "a hot object gained a written neighbour on its lines that is hot too",
        );
    }
    // A member's own evidence makes the struct flagged; an instance is flagged for it
    // only when the instance itself is known or measured hot.
    if f.hot >= Some(Strength::Known) && f.hot_member_moved {
        return decided(
            Verdict::Flag(Category::Member),
            "a hot member moved to another line",
        );
    }
    if f.cold && !evidenced {
        return decided(Verdict::Quiet, "cold by type, section or name");
    }
    if evidenced && f.gained_written_neighbour {
        return decided(
            Verdict::Possible,
            "a hot object gained a neighbour that only its type says is written (a lock or an atomic)",
        );
    }
    if f.hot == Some(Strength::Inferred) && f.gained_written_neighbour {
        return decided(
            Verdict::Possible,
            "only its type suggests it is hot (a lock or an atomic), and it gained a written neighbour",
        );
    }
    if f.read_hot && !f.gained_written_neighbour {
        return decided(
            Verdict::Quiet,
            "read-mostly: only a written neighbour would matter, and none came",
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
            "a hot object's lines changed, but no written neighbour came and no hot member moved line",
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
            Verdict::Flag(Category::Member),
            "a hot member moved to another line",
        )
    } else {
        decided(Verdict::Changed, "no hot member moved line")
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

    /// `__read_mostly` data: a written neighbour is the risk, nothing else is.
    #[test]
    fn read_mostly_matters_only_with_a_written_neighbour() {
        let read_mostly = ObjectFacts {
            hot: Some(Declared),
            read_hot: true,
            gained_neighbour: true,
            more_lines: true,
            ..facts()
        };
        assert_eq!(judge_object(&read_mostly).verdict, Verdict::Quiet);
        let typed = ObjectFacts {
            gained_written_neighbour: true,
            ..read_mostly
        };
        assert_eq!(judge_object(&typed).verdict, Verdict::Possible);
        let hot = ObjectFacts {
            gained_hot_written_neighbour: true,
            ..typed
        };
        assert_eq!(
            judge_object(&hot).verdict,
            Verdict::Flag(Category::Neighbour)
        );
    }

    /// One row per rule, and the rows where evidence decides.
    #[test]
    fn object_truth_table() {
        let neighbour = ObjectFacts {
            gained_neighbour: true,
            gained_written_neighbour: true,
            gained_hot_written_neighbour: true,
            ..facts()
        };
        let typed_neighbour = ObjectFacts {
            gained_hot_written_neighbour: false,
            ..neighbour
        };
        let rows: &[(&str, ObjectFacts, Verdict)] = &[
            (
                "measured + written neighbour",
                ObjectFacts {
                    hot: Some(Measured),
                    ..neighbour
                },
                Verdict::Flag(Category::Neighbour),
            ),
            (
                "known + written neighbour",
                ObjectFacts {
                    hot: Some(Known),
                    ..neighbour
                },
                Verdict::Flag(Category::Neighbour),
            ),
            (
                "declared + written neighbour",
                ObjectFacts {
                    hot: Some(Declared),
                    ..neighbour
                },
                Verdict::Flag(Category::Neighbour),
            ),
            (
                "inferred + written neighbour",
                ObjectFacts {
                    hot: Some(Inferred),
                    ..neighbour
                },
                Verdict::Possible,
            ),
            (
                "known + neighbour written by type only",
                ObjectFacts {
                    hot: Some(Known),
                    ..typed_neighbour
                },
                Verdict::Possible,
            ),
            (
                "measured + neighbour written by type only",
                ObjectFacts {
                    hot: Some(Measured),
                    ..typed_neighbour
                },
                Verdict::Possible,
            ),
            (
                "declared + neighbour written by type only",
                ObjectFacts {
                    hot: Some(Declared),
                    ..typed_neighbour
                },
                Verdict::Possible,
            ),
            (
                "inferred + neighbour written by type only",
                ObjectFacts {
                    hot: Some(Inferred),
                    ..typed_neighbour
                },
                Verdict::Possible,
            ),
            (
                "no evidence + written neighbour",
                neighbour,
                Verdict::Changed,
            ),
            (
                "cold + inferred",
                ObjectFacts {
                    hot: Some(Inferred),
                    cold: true,
                    ..neighbour
                },
                Verdict::Quiet,
            ),
            (
                "cold but known",
                ObjectFacts {
                    hot: Some(Known),
                    cold: true,
                    ..neighbour
                },
                Verdict::Flag(Category::Neighbour),
            ),
            (
                "boot-only + inferred",
                ObjectFacts {
                    hot: Some(Inferred),
                    boot_only: true,
                    ..neighbour
                },
                Verdict::Quiet,
            ),
            (
                "known + unwritten neighbour",
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
                Verdict::Flag(Category::Member),
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
        assert_eq!(
            judge_struct(false, true).verdict,
            Verdict::Flag(Category::Member)
        );
        assert_eq!(judge_struct(false, false).verdict, Verdict::Changed);
    }
}
