//! A table as data: column titles and rows of cells, each cell left- or right-aligned.
//! One model, three drawings: text with prettytable-rs (its clean format), a Markdown
//! table and an HTML table.

use std::fmt::{self, Write};

use prettytable::format::{self, Alignment};

use super::html::esc;

/// How a cell's text sits in its column (text and Markdown; HTML leaves it to CSS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Against the column's left edge.
    Left,
    /// Against the column's right edge (numbers).
    Right,
}

/// One cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// What the cell says.
    pub text: String,
    /// How it sits in its column.
    pub align: Align,
}

impl Cell {
    /// A cell set to the left.
    pub fn left(text: impl ToString) -> Cell {
        Cell {
            text: text.to_string(),
            align: Align::Left,
        }
    }

    /// A cell set to the right.
    pub fn right(text: impl ToString) -> Cell {
        Cell {
            text: text.to_string(),
            align: Align::Right,
        }
    }
}

/// Column titles (none: no title row) and rows of cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// The title of each column; a title's alignment is its column's in Markdown.
    pub titles: Vec<Cell>,
    /// The rows, each a cell per column.
    pub rows: Vec<Vec<Cell>>,
}

fn pretty_row(cells: &[Cell]) -> prettytable::Row {
    prettytable::Row::new(
        cells
            .iter()
            .map(|c| {
                let align = match c.align {
                    Align::Left => Alignment::LEFT,
                    Align::Right => Alignment::RIGHT,
                };
                prettytable::Cell::new_align(&c.text, align)
            })
            .collect(),
    )
}

impl Table {
    /// Aligned columns without rules (prettytable-rs's clean format); each line ends
    /// with a newline.
    pub fn text(&self, out: &mut impl Write) -> fmt::Result {
        let mut t = prettytable::Table::new();
        t.set_format(*format::consts::FORMAT_CLEAN);
        if !self.titles.is_empty() {
            t.set_titles(pretty_row(&self.titles));
        }
        for r in &self.rows {
            t.add_row(pretty_row(r));
        }
        write!(out, "{t}")
    }

    /// A Markdown table: the title row, the alignment row (`---`, `---:`), the rows.
    /// An empty cell is drawn as one space; text is written as it is.
    pub fn markdown(&self, out: &mut impl Write) -> fmt::Result {
        let row = |out: &mut dyn Write, cells: &[Cell]| -> fmt::Result {
            for c in cells {
                if c.text.is_empty() {
                    out.write_str("| ")?;
                } else {
                    write!(out, "| {} ", c.text)?;
                }
            }
            out.write_str("|\n")
        };
        row(out, &self.titles)?;
        for c in &self.titles {
            out.write_str(match c.align {
                Align::Left => "|---",
                Align::Right => "|---:",
            })?;
        }
        out.write_str("|\n")?;
        for r in &self.rows {
            row(out, r)?;
        }
        Ok(())
    }

    /// An HTML table of class `class`: titles in `th`, cells in `td`, text escaped; no
    /// newline after it.
    pub fn html(&self, out: &mut impl Write, class: &str) -> fmt::Result {
        write!(out, "<table class=\"{}\">", esc(class))?;
        if !self.titles.is_empty() {
            out.write_str("<tr>")?;
            for c in &self.titles {
                write!(out, "<th>{}</th>", esc(&c.text))?;
            }
            out.write_str("</tr>")?;
        }
        for r in &self.rows {
            out.write_str("<tr>")?;
            for c in r {
                write!(out, "<td>{}</td>", esc(&c.text))?;
            }
            out.write_str("</tr>")?;
        }
        out.write_str("</table>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table {
            titles: vec![Cell::left(""), Cell::right("n"), Cell::left("what")],
            rows: vec![
                vec![Cell::left("a"), Cell::right(1), Cell::left("x<y")],
                vec![Cell::left("bb"), Cell::right(22), Cell::left("")],
            ],
        }
    }

    #[test]
    fn one_table_three_drawings() {
        let t = sample();
        let mut md = String::new();
        t.markdown(&mut md).unwrap();
        assert_eq!(
            md,
            "| | n | what |\n|---|---:|---|\n| a | 1 | x<y |\n| bb | 22 | |\n"
        );
        let mut html = String::new();
        t.html(&mut html, "summary").unwrap();
        assert_eq!(
            html,
            "<table class=\"summary\"><tr><th></th><th>n</th><th>what</th></tr>\
             <tr><td>a</td><td>1</td><td>x&lt;y</td></tr><tr><td>bb</td><td>22</td><td></td></tr></table>"
        );
        // The text is what prettytable-rs draws from its own macros.
        let mut text = String::new();
        t.text(&mut text).unwrap();
        let mut want = prettytable::Table::new();
        want.set_format(*format::consts::FORMAT_CLEAN);
        want.set_titles(prettytable::row!["", r->"n", "what"]);
        want.add_row(prettytable::row!["a", r->1, "x<y"]);
        want.add_row(prettytable::row!["bb", r->22, ""]);
        assert_eq!(text, want.to_string());
    }
}
