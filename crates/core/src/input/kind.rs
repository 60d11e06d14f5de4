//! Which kind an input file is, decided once from its first bytes when it is opened:
//! no loader or command looks at magic numbers again.

/// The kind of an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An ELF file (a vmlinux, a module, an object file): types from its DWARF or its
    /// `.BTF` section, addresses from its symbol table or a symbol list given beside it.
    Elf,
    /// A raw BTF blob (`/sys/kernel/btf/vmlinux`, `objcopy --only-section=.BTF`): types
    /// only, addresses from a symbol list; its magic gives its byte order.
    RawBtf {
        /// The blob is big-endian.
        big_endian: bool,
    },
    /// A snapshot written by `layout-diff snapshot`.
    Snapshot,
    /// Compressed with `xz` or `zstd` (a distro's `.ko.xz`, `.ko.zst`): refused with how
    /// to decompress it.
    Compressed(Compression),
    /// None of these: refused as not an ELF file.
    Unknown,
}

/// A compression the input is refused for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// `xz`.
    Xz,
    /// `zstd`.
    Zstd,
}

/// The kind of the file whose first bytes are `bytes`.
pub fn decide(bytes: &[u8]) -> Kind {
    if bytes.starts_with(crate::snapshot::MAGIC) {
        Kind::Snapshot
    } else if bytes.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Kind::Compressed(Compression::Xz)
    } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Kind::Compressed(Compression::Zstd)
    } else if bytes.starts_with(b"\x7fELF") {
        Kind::Elf
    } else {
        // `BTF_MAGIC` (0xeb9f) in the file's byte order.
        match bytes {
            [0x9f, 0xeb, ..] => Kind::RawBtf { big_endian: false },
            [0xeb, 0x9f, ..] => Kind::RawBtf { big_endian: true },
            _ => Kind::Unknown,
        }
    }
}

impl Compression {
    /// The line a compressed input is refused with.
    pub(super) fn refusal(self) -> String {
        let (how, ext, command) = match self {
            Compression::Xz => ("xz", "xz", "xz -dk FILE"),
            Compression::Zstd => ("zstd", "zst", "zstd -d FILE"),
        };
        format!("{how}-compressed (a distro's .ko.{ext}?); decompress it first: {command}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_told_by_its_first_bytes() {
        let snapshot = [&crate::snapshot::MAGIC[..], &[5, 0, 0, 0]].concat();
        for (bytes, kind) in [
            (&b"\x7fELF\x02\x01"[..], Kind::Elf),
            (&[0x9f, 0xeb, 1, 0][..], Kind::RawBtf { big_endian: false }),
            (&[0xeb, 0x9f, 1, 0][..], Kind::RawBtf { big_endian: true }),
            (&snapshot[..], Kind::Snapshot),
            (
                &[0xfd, b'7', b'z', b'X', b'Z', 0, 0][..],
                Kind::Compressed(Compression::Xz),
            ),
            (
                &[0x28, 0xb5, 0x2f, 0xfd, 0][..],
                Kind::Compressed(Compression::Zstd),
            ),
            (&b"# README\n"[..], Kind::Unknown),
            (&[0x9f][..], Kind::Unknown),
        ] {
            assert_eq!(decide(bytes), kind, "{bytes:x?}");
        }
    }

    #[test]
    fn a_compressed_input_says_how_to_decompress_it() {
        assert_eq!(
            Compression::Xz.refusal(),
            "xz-compressed (a distro's .ko.xz?); decompress it first: xz -dk FILE"
        );
        assert_eq!(
            Compression::Zstd.refusal(),
            "zstd-compressed (a distro's .ko.zst?); decompress it first: zstd -d FILE"
        );
    }
}
