//! The file-level facts every report starts with: which file, which target, which
//! build, which line size and where it came from. Part of the model because every
//! stage that reports (show, diff, check) names the image the same way.

use serde::Serialize;

use super::Image;

/// The file-level facts every report starts with.
#[derive(Debug, Clone, Serialize)]
pub struct Header {
    /// The input's path, as given.
    pub file: String,
    /// Its architecture (`x86_64`).
    pub arch: String,
    /// Its GNU build-id, in hex, when it has one.
    pub build_id: Option<String>,
    /// The kernel release the build names (`Image::kernel_version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_version: Option<String>,
    /// The line size its lines are counted in.
    pub line_size: u64,
    /// `target` or `--line-size`.
    pub line_size_from: &'static str,
    /// What the image cannot tell (types from BTF: other globals' types), said once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    /// Where the symbols' sizes came from when they are not the objects' own
    /// (`SIZES_NOTE`: a symbol list), said wherever a size is printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<&'static str>,
    /// Why a symbol list gave next to no data objects (`NO_DATA_NOTE`), when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbols: Option<&'static str>,
}

/// The note for a relocatable object (a kernel module `.ko`).
pub const REL_NOTE: &str = "relocatable object (a module?): placement is per section and \
relative to the section's start; final addresses are known only at load time";

/// The note for an image whose symbols came from a symbol list.
pub const SIZES_NOTE: &str = "sizes inferred: the symbol list has no sizes, so each symbol \
runs to the next address (per-CPU variables BTF describes excepted); a size may include \
padding and unnamed bytes";

/// The note for a symbol list that names no data objects.
pub const NO_DATA_NOTE: &str = "the symbol list names next to no data objects (a /proc/kallsyms of a \
kernel built without CONFIG_KALLSYMS_ALL lists functions only): globals are not placed; \
per-CPU variables come from BTF";

/// The note for an image whose types came from BTF.
pub const BTF_NOTE: &str = "types from BTF: structs and per-CPU variables are described; \
other globals are placed from the symbol table, their types and members unknown";

impl Header {
    /// The header of `image`.
    pub fn of(image: &Image<'_>) -> Header {
        Header {
            file: image.path.display().to_string(),
            arch: image.arch.clone(),
            build_id: image.build_id.clone(),
            kernel_version: image.kernel_version.clone(),
            line_size: image.line_size,
            line_size_from: if image.line_size_overridden {
                "--line-size"
            } else {
                "target"
            },
            note: if image.types_from == crate::model::TypesFrom::Btf {
                Some(BTF_NOTE)
            } else if image.file_kind == "rel" {
                Some(REL_NOTE)
            } else {
                None
            },
            sizes: image.sizes_inferred.then_some(SIZES_NOTE),
            // Fewer data objects than one per hundred functions: section markers only.
            symbols: (image.sizes_inferred
                && image.count(
                    crate::model::SymbolKind::Object,
                    crate::model::Space::Global,
                ) * 100
                    < image.count(
                        crate::model::SymbolKind::Function,
                        crate::model::Space::Global,
                    ))
            .then_some(NO_DATA_NOTE),
        }
    }
}
