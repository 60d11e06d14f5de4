//! The kallsyms tables the kernel's link adds to `.rodata` (`scripts/kallsyms`):
//! read back from a build, then sized again for another symbol list, so a
//! prediction that adds or removes symbols (`whatif --objects`) knows where what
//! follows them lands. The names are compressed by the kernel's greedy pair coding,
//! which is done again here; a build whose tables that does not reproduce exactly
//! is not predicted.

use std::fmt;

use super::align::align_up;

/// One of the tables, in the order the build placed them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// `kallsyms_offsets` (4 bytes a symbol) or `kallsyms_addresses` (8).
    Addresses {
        /// Bytes a symbol.
        entry: u64,
    },
    /// `kallsyms_relative_base`: one pointer.
    RelativeBase,
    /// `kallsyms_num_syms`: one 32-bit count.
    NumSyms,
    /// `kallsyms_names`: each symbol's compressed name after its length.
    Names,
    /// `kallsyms_markers`: a 32-bit offset every 256 symbols.
    Markers,
    /// `kallsyms_seqs_of_names`: each symbol's index in name order.
    SeqsOfNames {
        /// Bytes a symbol: 3 from Linux 6.2 on, 4 in some versions before.
        entry: u64,
    },
    /// `kallsyms_token_table`: the 256 tokens, each expanded and NUL-terminated.
    TokenTable,
    /// `kallsyms_token_index`: a 16-bit offset per token.
    TokenIndex,
}

impl TableKind {
    /// The kind of the table a label starts, by the label's name.
    fn of(label: &str) -> Option<TableKind> {
        Some(match label {
            "kallsyms_offsets" => TableKind::Addresses { entry: 4 },
            "kallsyms_addresses" => TableKind::Addresses { entry: 8 },
            "kallsyms_relative_base" => TableKind::RelativeBase,
            "kallsyms_num_syms" => TableKind::NumSyms,
            "kallsyms_names" => TableKind::Names,
            "kallsyms_markers" => TableKind::Markers,
            "kallsyms_seqs_of_names" => TableKind::SeqsOfNames { entry: 3 },
            "kallsyms_token_table" => TableKind::TokenTable,
            "kallsyms_token_index" => TableKind::TokenIndex,
            _ => return None,
        })
    }
}

/// The labels `scripts/kallsyms` emits, one a table (every version since 4.6).
pub const LABELS: &[&str] = &[
    "kallsyms_offsets",
    "kallsyms_addresses",
    "kallsyms_relative_base",
    "kallsyms_num_syms",
    "kallsyms_names",
    "kallsyms_markers",
    "kallsyms_seqs_of_names",
    "kallsyms_token_table",
    "kallsyms_token_index",
];

/// One table: its label, kind, place in the build and size there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// The label that starts it (`kallsyms_names`).
    pub label: &'static str,
    /// What it holds, which says how its size follows from the symbols.
    pub kind: TableKind,
    /// Its address in the build.
    pub place: u64,
    /// Its size in the build (padding after it not counted).
    pub size: u64,
}

/// A build's kallsyms tables and the symbols they hold.
#[derive(Debug, Clone)]
pub struct Kallsyms {
    /// By place.
    pub tables: Vec<Table>,
    /// Each symbol as the tables hold it, in address order: its `nm` type letter,
    /// then its name.
    pub symbols: Vec<Vec<u8>>,
    /// What each table starts on a multiple of (`ALGN`: `.balign 8` on 64-bit
    /// builds of 6.1, none in later ones), as the build's places bear it out.
    pub align: u64,
    /// The build's tables hold data symbols too (`CONFIG_KALLSYMS_ALL`).
    pub all_symbols: bool,
    /// The first object after the tables and where the bytes before it that no
    /// symbol names end: at their last nonzero byte (merged strings end in a NUL,
    /// what follows is alignment padding), when one lies within a page before it.
    pub after: Option<super::After>,
}

/// Why a build's kallsyms tables are not modelled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unmodelled {
    /// No label of the tables, or not the four every version has.
    #[error("the build has no kallsyms tables")]
    Missing,
    /// A table's bytes are not in its section.
    #[error("{0} lies outside the section that holds it")]
    OutOfBounds(&'static str),
    /// A name's length or codes run out of the section.
    #[error("kallsyms_names does not decode: {0}")]
    Names(&'static str),
    /// A token is not NUL-terminated within a symbol's length.
    #[error("the token table does not decode")]
    Tokens,
    /// The compression done again gives another size than the build's table.
    #[error(
        "compressing the build's own symbols again gives {what} of {got} bytes, the build has {built}"
    )]
    NotReproduced {
        /// The table (`kallsyms_names`, `kallsyms_token_table`).
        what: &'static str,
        /// Its size as compressed again.
        got: u64,
        /// Its size in the build.
        built: u64,
    },
    /// The tables' places follow from no one alignment of each.
    #[error("no alignment of the tables gives the build's places of them")]
    Places,
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} B)", self.label, self.size)
    }
}

/// Reads `len` bytes at an address of the build (`None` outside its sections).
pub type Bytes<'a> = dyn Fn(u64, usize) -> Option<&'a [u8]> + 'a;

impl Kallsyms {
    /// The tables at `labels` (label name and address, any order), read through
    /// `bytes`; checked by compressing the symbols again, which must give the build's
    /// table sizes and places.
    /// `next` is the place of the first object after the tables, if any.
    pub fn read(
        labels: &[(&str, u64)],
        bytes: &Bytes<'_>,
        big_endian: bool,
        next: Option<u64>,
    ) -> Result<Kallsyms, Unmodelled> {
        let tables = tables_at(labels);
        let at = |kind: TableKind| tables.iter().find(|t| t.kind == kind).map(|t| t.place);
        let (Some(num), Some(names), Some(table), Some(index)) = (
            at(TableKind::NumSyms),
            at(TableKind::Names),
            at(TableKind::TokenTable),
            at(TableKind::TokenIndex),
        ) else {
            return Err(Unmodelled::Missing);
        };
        let count = bytes(num, 4).ok_or(Unmodelled::OutOfBounds("kallsyms_num_syms"))?;
        let count = u32_at(count, big_endian) as usize;
        let tokens = read_tokens(bytes, table, index, big_endian)?;
        let (symbols, names_size) = decode_names(names, count, bytes, &tokens)?;
        let all_symbols = symbols
            .iter()
            .any(|s| matches!(s.first(), Some(b'd' | b'D' | b'b' | b'B' | b'r' | b'R')));
        let mut k = Kallsyms {
            tables,
            symbols,
            align: 1,
            all_symbols,
            after: None,
        };
        // The seqs table's entry (3 bytes from Linux 6.2 on, 4 in the versions
        // between) as the place after it bears out.
        let measured = |kind: TableKind| {
            let i = k.tables.iter().position(|t| t.kind == kind)?;
            Some(k.tables.get(i + 1)?.place - k.tables[i].place)
        };
        if let Some(span) = measured(TableKind::SeqsOfNames { entry: 3 })
            && span >= 4 * count as u64
            && let Some(t) = k
                .tables
                .iter_mut()
                .find(|t| t.label == "kallsyms_seqs_of_names")
        {
            t.kind = TableKind::SeqsOfNames { entry: 4 };
        }
        let packed = compress(&k.symbols);
        let built_tokens: u64 = tokens.iter().map(|t| t.len() as u64 + 1).sum();
        if packed.names != names_size {
            return Err(Unmodelled::NotReproduced {
                what: "kallsyms_names",
                got: packed.names,
                built: names_size,
            });
        }
        if packed.tokens != built_tokens {
            return Err(Unmodelled::NotReproduced {
                what: "kallsyms_token_table",
                got: packed.tokens,
                built: built_tokens,
            });
        }
        let sizes = k.sizes_of(count as u64, &packed);
        for (t, size) in k.tables.iter_mut().zip(&sizes) {
            t.size = *size;
        }
        k.align = [8, 4, 2, 1]
            .into_iter()
            .find(|&a| {
                k.tables
                    .windows(2)
                    .all(|w| align_up(w[0].place + w[0].size, a) == w[1].place)
            })
            .ok_or(Unmodelled::Places)?;
        let end = k.tables.last().map_or(0, |t| t.place + t.size);
        k.after = next
            .filter(|&p| p >= end)
            .and_then(|place| after_tables(bytes, end, place));
        Ok(k)
    }

    /// Each table's size for `count` symbols compressed as `packed`, in `tables`'
    /// order.
    fn sizes_of(&self, count: u64, packed: &Packed) -> Vec<u64> {
        self.tables
            .iter()
            .map(|t| match t.kind {
                TableKind::Addresses { entry } | TableKind::SeqsOfNames { entry } => entry * count,
                TableKind::RelativeBase => 8,
                TableKind::NumSyms => 4,
                TableKind::Names => packed.names,
                TableKind::Markers => 4 * count.div_ceil(256),
                TableKind::TokenTable => packed.tokens,
                TableKind::TokenIndex => 512,
            })
            .collect()
    }

    /// Each table's size, in `tables`' order, when the tables hold `symbols`.
    pub fn sizes(&self, symbols: &[Vec<u8>]) -> Vec<u64> {
        self.sizes_of(symbols.len() as u64, &compress(symbols))
    }
}

/// The tables the labels (name and address) start, in place order, sizes unknown.
fn tables_at(labels: &[(&str, u64)]) -> Vec<Table> {
    let mut tables: Vec<Table> = labels
        .iter()
        .filter_map(|&(name, place)| {
            let label = LABELS.iter().find(|l| **l == name)?;
            Some(Table {
                label,
                kind: TableKind::of(name)?,
                place,
                size: 0,
            })
        })
        .collect();
    tables.sort_by_key(|t| t.place);
    tables
}

/// The `u32` in the first four bytes of `b`.
fn u32_at(b: &[u8], big_endian: bool) -> u32 {
    let a = [b[0], b[1], b[2], b[3]];
    if big_endian {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

/// The 256 tokens of the token table at `table`, through its index at `index`.
fn read_tokens<'b>(
    bytes: &Bytes<'b>,
    table: u64,
    index: u64,
    big_endian: bool,
) -> Result<Vec<&'b [u8]>, Unmodelled> {
    let index = bytes(index, 512).ok_or(Unmodelled::OutOfBounds("kallsyms_token_index"))?;
    let mut tokens: Vec<&[u8]> = Vec::with_capacity(256);
    for k in 0..256 {
        let pair = [index[2 * k], index[2 * k + 1]];
        let off = match big_endian {
            true => u16::from_be_bytes(pair),
            false => u16::from_le_bytes(pair),
        } as u64;
        // A token is at most a symbol's length (KSYM_NAME_LEN, 512).
        let text = (1..=9)
            .map(|p| 1usize << p)
            .find_map(|len| {
                let b = bytes(table + off, len)?;
                b.iter().position(|&c| c == 0).map(|end| &b[..end])
            })
            .ok_or(Unmodelled::Tokens)?;
        tokens.push(text);
    }
    Ok(tokens)
}

/// The object after the tables (which end at `end`), at `place`, and where the
/// unnamed bytes before it end; none when those bytes cannot be read or end before
/// the tables do.
fn after_tables(bytes: &Bytes<'_>, end: u64, place: u64) -> Option<super::After> {
    let from = end.max(place.saturating_sub(4096));
    let tail = bytes(from, (place - from) as usize)?;
    let data_end = tail
        .iter()
        .rposition(|&c| c != 0)
        .map_or(from, |i| from + i as u64 + 1);
    (data_end > end || from == end).then_some(super::After { place, data_end })
}

/// The symbols of `kallsyms_names` at `place`, expanded through `tokens`, and the
/// table's size.
fn decode_names(
    place: u64,
    count: usize,
    bytes: &Bytes<'_>,
    tokens: &[&[u8]],
) -> Result<(Vec<Vec<u8>>, u64), Unmodelled> {
    let mut at = place;
    let mut symbols = Vec::with_capacity(count);
    for _ in 0..count {
        let head = bytes(at, 1).ok_or(Unmodelled::Names("it runs past its section"))?[0];
        // The length in ULEB128 of one or two bytes (one byte before Linux 6.1).
        let (len, skip) = if head & 0x80 == 0 {
            (head as usize, 1usize)
        } else {
            let next = bytes(at + 1, 1).ok_or(Unmodelled::Names("it runs past its section"))?[0];
            ((head & 0x7f) as usize | (next as usize) << 7, 2)
        };
        if len == 0 {
            return Err(Unmodelled::Names("a symbol of length 0"));
        }
        let coded =
            bytes(at + skip as u64, len).ok_or(Unmodelled::Names("it runs past its section"))?;
        let mut name = Vec::with_capacity(2 * len);
        for &c in coded {
            name.extend_from_slice(tokens[c as usize]);
        }
        symbols.push(name);
        at += (skip + len) as u64;
    }
    Ok((symbols, at - place))
}

/// What compressing a symbol list gives: the names table's size and the token
/// table's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packed {
    /// `kallsyms_names`'s size: each compressed name after its length.
    pub names: u64,
    /// `kallsyms_token_table`'s size: each token expanded, NUL-terminated.
    pub tokens: u64,
}

/// Compresses `symbols` as `scripts/kallsyms` does: every byte a symbol uses stands
/// for itself; each free code, from 255 down, becomes the pair of codes that occurs
/// most often (the lowest pair on a tie), replaced in every symbol left to right,
/// until no pair occurs. Returns the sizes of the tables this gives.
pub fn compress(symbols: &[Vec<u8>]) -> Packed {
    let pack = pack(symbols);
    let names = pack
        .codes
        .iter()
        .map(|s| s.len() as u64 + if s.len() <= 0x7f { 1 } else { 2 })
        .sum();
    let tokens = (0..=255u8).map(|c| pack.expand(c).len() as u64 + 1).sum();
    Packed { names, tokens }
}

/// The compressed symbols and the code table (`compress`).
struct Pack {
    codes: Vec<Vec<u8>>,
    table: [[u8; 2]; 256],
    len: [u8; 256],
}

impl Pack {
    /// The bytes code `c` stands for.
    fn expand(&self, c: u8) -> Vec<u8> {
        match self.len[c as usize] {
            0 => Vec::new(),
            1 => vec![c],
            _ => {
                let [a, b] = self.table[c as usize];
                let mut out = self.expand(a);
                out.extend(self.expand(b));
                out
            }
        }
    }
}

fn pack(symbols: &[Vec<u8>]) -> Pack {
    // The symbols in one buffer, each after a NUL: no name holds one, and code 0 is
    // the last a pair can take, so no pair searched for holds one before that.
    let mut buf: Vec<u8> = Vec::with_capacity(symbols.iter().map(|s| s.len() + 1).sum());
    let mut profit = vec![0i64; 0x10000];
    let mut table = [[0u8; 2]; 256];
    let mut len = [0u8; 256];
    for s in symbols {
        buf.push(0);
        buf.extend_from_slice(s);
        count_pairs(s, &mut profit, 1);
        for &c in s {
            table[c as usize] = [c, 0];
            len[c as usize] = 1;
        }
    }
    for code in (0..256usize).rev() {
        if len[code] != 0 {
            continue;
        }
        let mut best = 0;
        for (pair, &p) in profit.iter().enumerate() {
            if p > profit[best] {
                best = pair;
            }
        }
        if profit[best] <= 0 {
            break;
        }
        let pair = [best as u8, (best >> 8) as u8];
        table[code] = pair;
        len[code] = 2;
        if code == 0 {
            // The last code: its pair replaced symbol by symbol (a NUL is a code now).
            let mut codes = split(&buf);
            for s in &mut codes {
                *s = replaced(s, pair, 0);
            }
            return Pack { codes, table, len };
        }
        replace_all(&mut buf, pair, code as u8, &mut profit);
    }
    Pack {
        codes: split(&buf),
        table,
        len,
    }
}

/// The symbols of a buffer of NUL-led symbols.
fn split(buf: &[u8]) -> Vec<Vec<u8>> {
    buf.split(|&c| c == 0).skip(1).map(<[u8]>::to_vec).collect()
}

/// `s` with each `pair` from the left replaced by `code`.
fn replaced(s: &[u8], pair: [u8; 2], code: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut k = 0;
    while k < s.len() {
        if k + 1 < s.len() && s[k] == pair[0] && s[k + 1] == pair[1] {
            out.push(code);
            k += 2;
        } else {
            out.push(s[k]);
            k += 1;
        }
    }
    out
}

/// Replaces each `pair` in `buf` from the left by `code`, in place, and counts the
/// pairs each replacement removes and makes: what counting every changed symbol's
/// pairs again gives, for the bytes around each replacement only.
fn replace_all(buf: &mut Vec<u8>, pair: [u8; 2], code: u8, profit: &mut [i64]) {
    let finder = memchr::memmem::Finder::new(&pair);
    let index = |a: u8, b: u8| a as usize | (b as usize) << 8;
    let (mut read, mut write) = (0, 0);
    while let Some(found) = finder.find(&buf[read..]) {
        let at = read + found;
        buf.copy_within(read..at, write);
        write += at - read;
        // The byte before, as replaced already (none after a NUL), and the one after.
        let before = buf[write - 1];
        let after = buf.get(at + 2).copied().filter(|&c| c != 0);
        profit[index(pair[0], pair[1])] -= 1;
        if before != 0 {
            profit[index(before, pair[0])] -= 1;
            profit[index(before, code)] += 1;
        }
        if let Some(after) = after {
            profit[index(pair[1], after)] -= 1;
            profit[index(code, after)] += 1;
        }
        buf[write] = code;
        write += 1;
        read = at + 2;
    }
    buf.copy_within(read.., write);
    write += buf.len() - read;
    buf.truncate(write);
}

/// Adds `by` to the count of each pair of adjacent codes in `s`.
fn count_pairs(s: &[u8], profit: &mut [i64], by: i64) {
    for w in s.windows(2) {
        profit[w[0] as usize | (w[1] as usize) << 8] += by;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn the_most_frequent_pair_takes_the_highest_free_code() {
        // "ab" occurs 3 times: code 255 becomes "ab"; then "Tab" pairs (T, 255) twice
        // against (255, c) once... each symbol shrinks by one byte per replacement.
        let p = compress(&syms(&["Tab", "tab", "Tabc"]));
        // After "ab" -> 255: T?, t?, T?c. Then (T,255) occurs twice -> 254: ?, t?, ?c.
        // Then (254,'c') once, (t,255) once: the lower pair value wins the tie.
        // The lowest pair index is (t=0x74,255=0xff): 0xff74 against (254=0xfe,'c'=0x63):
        // 0x63fe, so (254,c) -> 253: [254], [t,255], [253]; then (t,255) -> 252.
        assert_eq!(p.names, 2 + 2 + 2);
        // Tokens: 5 real bytes (T a b t c) and 4 pairs: "ab", "Tab", "Tabc", "tab";
        // 247 empty codes of 1 byte each.
        assert_eq!(p.tokens, (5 * 2) + (3 + 4 + 5 + 4) + 247);
    }

    #[test]
    fn overlapping_pairs_are_replaced_left_to_right() {
        // "aaa": (a,a) twice in the counts, replaced once (left), leaving [255, a].
        let p = compress(&syms(&["aaa"]));
        // Then (255, a) once -> 254: [254].
        assert_eq!(p.names, 2);
        assert_eq!(p.tokens, 2 + 3 + 4 + 253);
    }

    fn tables(
        labels: &[(&'static str, u64)],
        blob: &[u8],
        base: u64,
    ) -> Result<Kallsyms, Unmodelled> {
        let bytes = |at: u64, len: usize| {
            let from = usize::try_from(at.checked_sub(base)?).ok()?;
            blob.get(from..from.checked_add(len)?)
        };
        Kallsyms::read(labels, &bytes, false, None)
    }

    /// The tables `scripts/kallsyms` of 6.1 writes for `symbols`, at 0x1000; with
    /// `plain`, the names uncompressed (each code itself), which it never writes
    /// when a pair repeats.
    fn blob_of(symbols: &[&str], plain: bool) -> (Vec<(&'static str, u64)>, Vec<u8>) {
        let pack = pack(&syms(symbols));
        let mut blob = Vec::new();
        let mut labels = Vec::new();
        let pad = |blob: &mut Vec<u8>| blob.resize(blob.len().next_multiple_of(8), 0);
        labels.push(("kallsyms_offsets", 0x1000 + blob.len() as u64));
        for i in 0..symbols.len() as u32 {
            blob.extend_from_slice(&(i * 16).to_le_bytes());
        }
        pad(&mut blob);
        labels.push(("kallsyms_relative_base", 0x1000 + blob.len() as u64));
        blob.extend_from_slice(&0xffff_ffff_8100_0000u64.to_le_bytes());
        labels.push(("kallsyms_num_syms", 0x1000 + blob.len() as u64));
        blob.extend_from_slice(&(symbols.len() as u32).to_le_bytes());
        pad(&mut blob);
        labels.push(("kallsyms_names", 0x1000 + blob.len() as u64));
        for (s, codes) in symbols.iter().zip(&pack.codes) {
            let codes = if plain { s.as_bytes() } else { codes };
            blob.push(codes.len() as u8);
            blob.extend_from_slice(codes);
        }
        pad(&mut blob);
        labels.push(("kallsyms_markers", 0x1000 + blob.len() as u64));
        blob.extend_from_slice(&0u32.to_le_bytes());
        pad(&mut blob);
        labels.push(("kallsyms_token_table", 0x1000 + blob.len() as u64));
        let table_start = blob.len();
        let mut offsets = Vec::new();
        for c in 0..=255u8 {
            offsets.push((blob.len() - table_start) as u16);
            let token = match plain {
                true if symbols.iter().any(|s| s.as_bytes().contains(&c)) => vec![c],
                true => Vec::new(),
                false => pack.expand(c),
            };
            blob.extend_from_slice(&token);
            blob.push(0);
        }
        pad(&mut blob);
        labels.push(("kallsyms_token_index", 0x1000 + blob.len() as u64));
        for o in offsets {
            blob.extend_from_slice(&o.to_le_bytes());
        }
        (labels, blob)
    }

    #[test]
    fn the_tables_read_back_and_reproduce_their_sizes() {
        let (labels, blob) = blob_of(&["Tab", "tab", "Tabc", "dx"], false);
        let k = tables(&labels, &blob, 0x1000).unwrap();
        assert_eq!(k.symbols, syms(&["Tab", "tab", "Tabc", "dx"]));
        assert_eq!(k.align, 8);
        assert!(k.all_symbols, "a 'd' symbol is data");
        let sizes: Vec<(&str, u64, u64)> = k
            .tables
            .iter()
            .map(|t| (t.label, t.place, t.size))
            .collect();
        // Each symbol compresses to one code (5 pairs: ab, Tab, Tabc, tab, dx);
        // tokens: 7 bytes (T a b t c d x) of 2 B, the 5 pairs of 3+4+5+4+3 B, and
        // 244 empty codes of 1 B.
        assert_eq!(
            sizes,
            [
                ("kallsyms_offsets", 0x1000, 16),
                ("kallsyms_relative_base", 0x1010, 8),
                ("kallsyms_num_syms", 0x1018, 4),
                ("kallsyms_names", 0x1020, 8),
                ("kallsyms_markers", 0x1028, 4),
                ("kallsyms_token_table", 0x1030, 14 + 19 + 244),
                ("kallsyms_token_index", 0x1148, 512),
            ]
        );
        // One symbol more: offsets +4 B, names +2 B; the token table +4 B: two empty
        // codes become "e" and "y" (2 B each) and one the pair "ey" (3 B).
        let mut more = k.symbols.clone();
        more.push(b"ey".to_vec());
        assert_eq!(k.sizes(&more), [20, 8, 4, 10, 4, 277 + 4, 512]);
    }

    #[test]
    fn tables_the_compression_does_not_give_are_refused() {
        // Names stored plain, where scripts/kallsyms compresses them to one code.
        let (labels, blob) = blob_of(&["Tab", "tab"], true);
        assert_eq!(
            tables(&labels, &blob, 0x1000).unwrap_err(),
            Unmodelled::NotReproduced {
                what: "kallsyms_names",
                got: 4,
                built: 8
            }
        );
        assert_eq!(
            tables(&labels[..2], &blob, 0x1000).unwrap_err(),
            Unmodelled::Missing
        );
    }
}
