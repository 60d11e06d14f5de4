//! Fitting text to a terminal: a line longer than the width is broken at spaces, its
//! continuation lines indented past the line's own indent so they read as one item; a
//! word longer than a whole line is cut there. The width is a parameter, never a
//! constant buried in a renderer.

/// The width of the default text reports, in columns.
pub const WIDTH: usize = 100;

/// `line` as lines of at most `width` columns (characters; every report string is
/// ASCII or single-width), broken at spaces. Continuation lines are indented by the
/// line's indent plus 4 (plus 2 for an unindented line).
pub fn fit(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width {
        return vec![line.to_string()];
    }
    let body = line.trim_start_matches(' ');
    let indent = line.len() - body.len();
    let hang = " ".repeat(if indent == 0 { 2 } else { indent + 4 }.min(width / 2));
    let mut out = Vec::new();
    let mut current = " ".repeat(indent);
    let mut fresh = true;
    // Each word with the run of spaces before it, kept inside a line, dropped at a break.
    let mut rest = body;
    while !rest.is_empty() {
        let gap = rest.len() - rest.trim_start_matches(' ').len();
        let after = &rest[gap..];
        let end = after.find(' ').unwrap_or(after.len());
        let (space, word) = (&rest[..gap], &after[..end]);
        rest = &after[end..];
        if word.is_empty() {
            break;
        }
        let len = current.chars().count();
        if !fresh && len + space.len() + word.chars().count() > width {
            out.push(std::mem::replace(&mut current, hang.clone()));
            fresh = true;
        }
        if !fresh {
            current.push_str(space);
        }
        current.push_str(word);
        fresh = false;
        while current.chars().count() > width {
            let cut: String = current.chars().take(width).collect();
            let tail: String = current.chars().skip(width).collect();
            out.push(cut);
            current = format!("{hang}{tail}");
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// Every line of `text` fitted to `width` (`fit`), each ending in a newline.
pub fn fit_text(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for line in text.lines() {
        for l in fit(line, width) {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn a_short_line_is_left_alone() {
        assert_eq!(fit("  a b  c", 10), ["  a b  c"]);
        assert_eq!(fit("a  b  cc", 6), ["a  b", "  cc"]);
    }

    #[test]
    fn a_long_line_breaks_at_spaces_under_its_indent() {
        assert_eq!(
            fit("  one two three four", 12),
            ["  one two", "      three", "      four"]
        );
        assert_eq!(fit("alpha beta gamma", 11), ["alpha beta", "  gamma"]);
    }

    #[test]
    fn a_word_longer_than_the_width_is_cut() {
        assert_eq!(fit("x abcdefghij", 6), ["x", "  abcd", "  efgh", "  ij"]);
    }
}
