//! The check that `form` (writing) and `read` (reading) agree on the model's fields: the
//! reader walks each record field by field, so a field written in one order and read in
//! another would swap values silently. Every field of every struct layout, member and
//! variable gets a value of its own here, and the whole image must read back as it was.
//! The fields are named by destructuring without `..`: a field the model gains fails to
//! compile here until it is given a value too.

use std::path::Path;

use super::form;
use super::read::{Types, Wanted, read};
use crate::model::{Image, Member, StructLayout, TypeGaps, Variable};

/// Hands out values no other field has.
struct Counter(u64);

impl Counter {
    fn u64(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }

    fn u32(&mut self) -> u32 {
        u32::try_from(self.u64()).expect("small")
    }

    /// Alternately true and false, so two bools of one record differ.
    fn flag(&mut self) -> bool {
        self.u64().is_multiple_of(2)
    }
}

fn distinct_layout(s: &mut StructLayout<'_>, n: &mut Counter) {
    let StructLayout {
        name: _,
        kind: _,
        decl_file: _,
        size,
        alignment,
        explicit_alignment,
        members,
        holes: _,
        bit_holes: _,
        padding,
        bit_padding,
        pre_hole,
        pre_bit_hole,
        packed,
        typedef,
        // A snapshot holds C layouts only: always false.
        rust: _,
    } = s;
    (*size, *alignment, *explicit_alignment) = (n.u64(), n.u64(), Some(n.u64()));
    (*padding, *bit_padding, *pre_hole, *pre_bit_hole) = (n.u64(), n.u64(), n.u64(), n.u64());
    (*packed, *typedef) = (n.flag(), n.flag());
    for m in members {
        distinct_member(m, n);
    }
}

fn distinct_member(m: &mut Member<'_>, n: &mut Counter) {
    let Member {
        name: _,
        ctype: _,
        offset,
        size,
        bit_offset,
        bit_size,
        flexible,
        nested,
        alignment,
        hole,
        bit_hole,
        type_gaps,
        pointee,
        natural_alignment,
    } = m;
    (*offset, *size) = (n.u64(), n.u64());
    (*bit_offset, *bit_size, *alignment) = (Some(n.u32()), Some(n.u32()), Some(n.u32()));
    (*flexible, *hole, *bit_hole, *natural_alignment) = (n.flag(), n.u32(), n.u32(), n.u32());
    *type_gaps = TypeGaps {
        padding: n.u32(),
        bit_padding: n.u32(),
        holes: n.u32(),
        bit_holes: n.u32(),
        flexible: n.flag(),
        embedded_flexible: n.flag(),
    };
    for inner in [nested, pointee].into_iter().flatten() {
        distinct_layout(inner, n);
    }
}

/// The address, the struct id and the file stay: the reader checks their order and
/// range.
fn distinct_variable(v: &mut Variable<'_>, n: &mut Counter) {
    let Variable {
        name: _,
        address: _,
        ctype: _,
        size,
        layout: _,
        is_array,
        alignment,
        decl_file: _,
        decl_line,
        declared,
    } = v;
    (*size, *is_array, *alignment) = (Some(n.u64()), n.flag(), Some(n.u64()));
    (*decl_line, *declared) = (Some(n.u32()), Some(n.u32()));
}

/// `image` written as a snapshot's two parts and read back, with everything kept.
fn round_trip(image: &Image<'_>) -> String {
    let form = form::from_image(image, &[], None);
    let names = postcard::to_stdvec(&form.names).unwrap();
    let records = super::form::records_bytes(&form.records).unwrap();
    let types = Types::default();
    let wanted = Wanted {
        listing: true,
        dwarf: true,
        typed: true,
    };
    let back = read(&names, &types, &records, Path::new("x"), wanted).unwrap();
    records_of(&back)
}

/// The first line where `a` and `b` differ, with its number, or `None` when equal.
fn first_difference(a: &str, b: &str) -> Option<(usize, String, String)> {
    let (mut x, mut y) = (a.lines(), b.lines());
    for n in 1.. {
        match (x.next(), y.next()) {
            (None, None) => return None,
            (l, r) if l != r => {
                return Some((n, l.unwrap_or("").to_string(), r.unwrap_or("").to_string()));
            }
            _ => {}
        }
    }
    None
}

/// What a snapshot holds of an image's records, as text. A type read back is borrowed
/// from the snapshot's type table, where the load shared it: the same type.
fn records_of(image: &Image<'_>) -> String {
    format!(
        "{:#?}\n{:#?}\n{:#?}\n{:#?}\n{}",
        image.sections, image.symbols, image.structs, image.variables, image.units
    )
    .replace("ctype: Borrowed(", "ctype: Shared(")
}

#[test]
fn every_field_of_every_record_reads_back_as_written() {
    let root = testdata!();
    let file = crate::input::InputFile::open(&root.join("old.elf")).unwrap();
    let options = crate::load::LoadOptions {
        pahole_text: true,
        ..crate::load::LoadOptions::default()
    };
    let mut image = file.load(&options).unwrap();
    // The fixture as it is: nothing lost.
    let plain = records_of(&image);
    assert_eq!(first_difference(&round_trip(&image), &plain), None);
    let mut n = Counter(0);
    for s in &mut image.structs {
        distinct_layout(std::sync::Arc::make_mut(s), &mut n);
    }
    for v in &mut image.variables {
        distinct_variable(v, &mut n);
    }
    assert_eq!((image.structs.len(), image.variables.len()), (25, 47));
    // The values changed (the first struct's size is now 1), and read back as given.
    assert_eq!(image.structs[0].size, 1);
    let distinct = records_of(&image);
    assert_ne!(first_difference(&distinct, &plain), None);
    assert_eq!(first_difference(&round_trip(&image), &distinct), None);
}

#[test]
fn the_link_alignments_read_back_as_the_link_model_finds_them() {
    let root = testdata!();
    let file = crate::input::InputFile::open(&root.join("old.elf")).unwrap();
    let image = file.load(&crate::load::LoadOptions::default()).unwrap();
    assert_eq!(image.stored_alignments(), None);
    let found = crate::link::LinkMap::build(&image).alignments(image.symbols.len());
    let form = form::from_image(&image, &[], None);
    let names = postcard::to_stdvec(&form.names).unwrap();
    let records = super::form::records_bytes(&form.records).unwrap();
    let types = Types::default();
    let wanted = Wanted {
        listing: false,
        dwarf: true,
        typed: true,
    };
    let mut back = read(&names, &types, &records, Path::new("x"), wanted).unwrap();
    assert_eq!(back.stored_alignments(), Some(found.as_slice()));
    let placed = found.iter().flatten().count();
    let aligned_64 = found.iter().flatten().filter(|a| a.own == 64).count();
    assert_eq!((found.len(), placed, aligned_64), (64, 64, 5));
    // Another line size, or symbols dropped: the stored ones no longer hold.
    back.line_size = 128;
    assert_eq!(back.stored_alignments(), None);
    back.line_size = 64;
    back.symbols.pop();
    assert_eq!(back.stored_alignments(), None);
    // A read without units cannot use what was found with them.
    let bare = Wanted {
        listing: false,
        dwarf: false,
        typed: false,
    };
    let without = read(&names, &types, &records, Path::new("x"), bare).unwrap();
    assert_eq!(without.link_alignments, None);
}
