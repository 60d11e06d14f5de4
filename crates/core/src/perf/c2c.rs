//! Reads the text of `perf c2c report --stdio` (perf has no machine-readable mode):
//! the "Shared Data Cache Line Table" (hot lines by run-time address, with HITM or
//! peer counts) and the "Shared Cache Line Distribution Pareto" (per line, the
//! offsets accessed, with the code address, symbol and source line doing it).
//! Sections are found by title and columns by header words, never by fixed columns,
//! so perf versions and `-d peer` reports read alike. Pure: text in, typed data out.

use serde::Serialize;

const LINE_TABLE: &str = "Shared Data Cache Line Table";
const PARETO: &str = "Shared Cache Line Distribution Pareto";

/// One hot cache line, as perf reported it (run-time addresses).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotLine {
    /// perf's index (rank) of the line.
    pub index: u64,
    /// The line's run-time address.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    /// Load HITM count (`-d peer`: load peer count), the ranking value.
    pub hitm: u64,
    /// The line's share of all HITMs (or peers), as printed, without `%`.
    pub share: Option<f64>,
    /// The offsets of the line accessed (the Pareto table's rows for it).
    pub accesses: Vec<Access>,
}

/// One row of the Pareto table: an offset in the line and the code touching it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Access {
    /// The offset in the line.
    pub offset: u64,
    /// The row's percentages in print order (HITM or peer shares, then stores).
    pub percents: Vec<f64>,
    /// The code address doing the access.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub code_address: Option<u64>,
    /// Code symbol without `+0x..`; perf may have cut it (30 characters by default).
    pub symbol: Option<String>,
    /// The data object perf names, when it does.
    pub object: Option<String>,
    /// The source line perf names, when it does.
    pub source: Option<String>,
}

/// A parsed report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct C2cReport {
    /// Lines in perf's order (by index).
    pub lines: Vec<HotLine>,
}

/// Whether `text` looks like `perf c2c report --stdio` output.
pub fn is_c2c(text: &str) -> bool {
    text.contains(LINE_TABLE)
}

/// What a text that looks like a c2c report lacks to be read as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum C2cError {
    /// No "Shared Data Cache Line Table" title.
    #[error("no \"{LINE_TABLE}\" section")]
    NoLineTable,
    /// The line table has no header row naming the Index and Address columns.
    #[error("\"{LINE_TABLE}\": no header with Index and Address")]
    NoHeader,
    /// The line table has no row with an index and an address.
    #[error("\"{LINE_TABLE}\" has no rows")]
    NoRows,
}

/// Parses a report; the error says what is missing.
pub fn parse(text: &str) -> Result<C2cReport, C2cError> {
    let lines: Vec<&str> = text.lines().collect();
    let table = section(&lines, LINE_TABLE).ok_or(C2cError::NoLineTable)?;
    let header = table
        .iter()
        .rev()
        .find(|l| l.trim_start().starts_with('#') && has_word(l, "Index") && has_word(l, "Address"))
        .ok_or(C2cError::NoHeader)?;
    let total_col = column_end(header, "Total");
    let mut out = Vec::new();
    for row in table.iter().filter(|l| is_row(l)) {
        let cells = cells(row);
        let Some(index) = cells.first().and_then(|(t, _)| t.parse::<u64>().ok()) else {
            continue;
        };
        let Some(address) = cells.iter().find_map(|(t, _)| hex(t)) else {
            continue;
        };
        let hitm = total_col
            .and_then(|c| nearest(&cells, c))
            .and_then(|t| t.parse::<u64>().ok())
            .unwrap_or(0);
        let share = cells.iter().find_map(|(t, _)| percent(t));
        out.push(HotLine {
            index,
            address,
            hitm,
            share,
            accesses: Vec::new(),
        });
    }
    if out.is_empty() {
        return Err(C2cError::NoRows);
    }
    if let Some(pareto) = section(&lines, PARETO) {
        pareto_rows(&pareto, &mut out);
    }
    Ok(C2cReport { lines: out })
}

/// The lines after the title `title` up to the next title block.
fn section<'t>(lines: &[&'t str], title: &str) -> Option<Vec<&'t str>> {
    let at = lines.iter().position(|l| l.trim() == title)?;
    // Skip the `=====` rule under the title.
    let body = lines[at + 1..]
        .iter()
        .skip_while(|l| l.trim_start().starts_with("==="))
        .take_while(|l| !l.trim_start().starts_with("==="))
        .copied()
        .collect();
    Some(body)
}

fn is_row(l: &str) -> bool {
    let t = l.trim();
    !t.is_empty() && !t.starts_with('#') && !t.starts_with("---")
}

fn has_word(l: &str, w: &str) -> bool {
    l.split_whitespace().any(|x| x == w)
}

/// Tokens with the column just past their last character.
fn cells(l: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in l.char_indices().chain(std::iter::once((l.len(), ' '))) {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((&l[s..i], i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    out
}

/// End column of the first header word `w` (numbers are right-aligned under it).
fn column_end(header: &str, w: &str) -> Option<usize> {
    cells(header)
        .into_iter()
        .find(|(t, _)| *t == w)
        .map(|(_, e)| e)
}

/// The cell whose end is closest to `col` (within two columns).
fn nearest<'t>(cells: &[(&'t str, usize)], col: usize) -> Option<&'t str> {
    cells
        .iter()
        .filter(|(_, e)| e.abs_diff(col) <= 2)
        .min_by_key(|(_, e)| e.abs_diff(col))
        .map(|(t, _)| *t)
}

fn hex(t: &str) -> Option<u64> {
    let h = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    u64::from_str_radix(h, 16).ok()
}

fn percent(t: &str) -> Option<f64> {
    t.strip_suffix('%')?.parse().ok()
}

/// Fills `accesses` from the Pareto table: a block header row (index, counts, line
/// address) followed by one row per offset.
fn pareto_rows(rows: &[&str], lines: &mut [HotLine]) {
    let mut current: Option<usize> = None;
    for row in rows.iter().filter(|l| is_row(l)) {
        let cells: Vec<&str> = cells(row).into_iter().map(|(t, _)| t).collect();
        let is_block_header = cells.iter().all(|t| !t.ends_with('%'))
            && cells.last().and_then(|t| hex(t)).is_some()
            && cells.first().and_then(|t| t.parse::<u64>().ok()).is_some();
        if is_block_header {
            let address = cells.last().and_then(|t| hex(t));
            let index = cells.first().and_then(|t| t.parse::<u64>().ok());
            current = lines
                .iter()
                .position(|l| Some(l.address) == address)
                .or_else(|| lines.iter().position(|l| Some(l.index) == index));
            continue;
        }
        let Some(i) = current else { continue };
        if let Some(a) = access(&cells) {
            lines[i].accesses.push(a);
        }
    }
}

/// One offset row: percentages, then the offset (`0x..`), node and counts, the code
/// address, then `[k] symbol`, the object `[...]` and `file:line`.
fn access(cells: &[&str]) -> Option<Access> {
    let percents: Vec<f64> = cells.iter().filter_map(|t| percent(t)).collect();
    let mut rest = cells.iter().skip_while(|t| hex(t).is_none());
    let offset = hex(rest.next()?)?;
    let rest: Vec<&str> = rest.copied().collect();
    let code_address = rest.iter().find_map(|t| hex(t));
    let marker = rest
        .iter()
        .position(|t| matches!(*t, "[k]" | "[.]" | "[g]"));
    let symbol = marker
        .and_then(|m| rest.get(m + 1))
        .map(|s| s.split('+').next().unwrap_or(s).to_string());
    let after = marker.map_or(rest.len(), |m| m + 2);
    let object = rest
        .get(after)
        .filter(|t| t.starts_with('['))
        .map(|t| t.to_string());
    let source = rest
        .get(after..)
        .unwrap_or(&[])
        .iter()
        .find(|t| !t.starts_with('[') && t.contains(':'))
        .map(|t| t.to_string());
    Some(Access {
        offset,
        percents,
        code_address,
        symbol,
        object,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEER: &str = "\
=================================================
           Shared Data Cache Line Table
=================================================
#
#        ----------- Cacheline ----------      Tot  ------- Load Peer -------
# Index             Address  Node  PA cnt     Peer    Total    Local   Remote
# .....  ..................  ....  ......  .......  .......  .......  .......
#
      0  0xffff800081c51000     0      90   80.00%       40       30       10
      1  0xffff000012345600     0      10   20.00%       10       10        0

=================================================
      Shared Cache Line Distribution Pareto
=================================================
#   ----- Peer -----  -- Store Refs --  --------- Data address ---------
#      Rmt      Lcl   L1 Hit  L1 Miss            Offset  Node  PA cnt        Code address  ...  Symbol                          Object             Source:Line
  -------------------------------------------------------------
      0       10       30        5        0  0xffff800081c51000
  -------------------------------------------------------------
         100.00%   75.00%  100.00%    0.00%              0x10     0       1  0xffff8000800f0a14  ...  [k] a_function_name_cut_at_thir   [kernel.kallsyms]  fork.c:12
";

    #[test]
    fn peer_columns_and_cut_symbols() {
        let r = parse(PEER).unwrap();
        assert_eq!(r.lines.len(), 2);
        assert_eq!(
            (
                r.lines[0].index,
                r.lines[0].address,
                r.lines[0].hitm,
                r.lines[0].share
            ),
            (0, 0xffff800081c51000, 40, Some(80.0))
        );
        assert_eq!((r.lines[1].hitm, r.lines[1].share), (10, Some(20.0)));
        assert_eq!(r.lines[1].accesses, []);
        let a = &r.lines[0].accesses;
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].offset, 0x10);
        assert_eq!(a[0].percents, [100.0, 75.0, 100.0, 0.0]);
        assert_eq!(a[0].code_address, Some(0xffff8000800f0a14));
        assert_eq!(a[0].symbol.as_deref(), Some("a_function_name_cut_at_thir"));
        assert_eq!(a[0].object.as_deref(), Some("[kernel.kallsyms]"));
        assert_eq!(a[0].source.as_deref(), Some("fork.c:12"));
    }

    #[test]
    fn every_prefix_of_the_fixture_parses_or_fails_cleanly() {
        let text = std::fs::read_to_string(testdata!().join("check/c2c.txt")).unwrap();
        let text = text.as_str();
        let full = parse(text).unwrap();
        assert_eq!(full.lines.len(), 5);
        assert_eq!(full.lines[0].accesses.len(), 3);
        // A cut report (perf killed, a paste cut short) never panics.
        for end in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
            let _ = parse(&text[..end]);
        }
        // Nor does one with every line shuffled into the wrong section.
        let mut lines: Vec<&str> = text.lines().collect();
        lines.reverse();
        let _ = parse(&lines.join("\n"));
    }

    /// Indented as pasted in a mail, 5-level paging heap addresses, a source column
    /// holding `symbol+offset` (no debug info), HITM columns as perf 6.x prints them.
    const INDENTED: &str = "\
  =================================================
             Shared Data Cache Line Table
  =================================================
  #
  #        ----------- Cacheline ----------      Tot  ------- Load Hitm -------    Total    Total    Total
  # Index             Address  Node  PA cnt     Hitm    Total  LclHitm  RmtHitm  records    Loads   Stores
  # .....  ..................  ....  ......  .......  .......  .......  .......  .......  .......  .......
  #
        0  0xff2a00004c8a3b00     0     811  100.00%      977      960       17     1402     1390       12

  =================================================
        Shared Cache Line Distribution Pareto
  =================================================
  #
    -------------------------------------------------------------
        0       17      960      388        0  0xff2a00004c8a3b00
    -------------------------------------------------------------
     12.50%   31.25%    3.00%    0.00%                0x8     0       1  0xffffffff8a0c1d2e       401       207       199     1313        48  [k] pipe_buf_release_fast       [kernel.kallsyms]  pipe_buf_release_fast+30         0  2
";

    #[test]
    fn indented_reports_and_sources_without_line_numbers() {
        let r = parse(INDENTED).unwrap();
        assert_eq!(r.lines.len(), 1);
        assert_eq!(
            (r.lines[0].address, r.lines[0].hitm),
            (0xff2a00004c8a3b00, 977)
        );
        let a = &r.lines[0].accesses[0];
        assert_eq!((a.offset, a.code_address), (0x8, Some(0xffffffff8a0c1d2e)));
        assert_eq!(a.symbol.as_deref(), Some("pipe_buf_release_fast"));
        assert_eq!(a.source, None);
    }

    #[test]
    fn not_a_report() {
        assert!(!is_c2c("root_user\ninit_*\n"));
        assert_eq!(parse("root_user\n"), Err(C2cError::NoLineTable));
        assert_eq!(
            C2cError::NoLineTable.to_string(),
            "no \"Shared Data Cache Line Table\" section"
        );
        let empty = "  Shared Data Cache Line Table\n# Index  Address  Total\n";
        assert_eq!(
            parse(empty).unwrap_err().to_string(),
            "\"Shared Data Cache Line Table\" has no rows"
        );
    }
}
