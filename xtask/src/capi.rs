//! LSF's C API as installed and as `up` lays it out: `libbat.so` (built by
//! `basalt-capi`) in the library directory with `liblsf.so` and `liblsbstream.so` as
//! symbolic links to it (one library, LSF's three names: a program linking `-lbat
//! -llsf` loads it once), and the headers in `<include>/lsf/`. lsf.conf names them
//! (`LSF_LIBDIR`, `LSF_INCLUDEDIR`, and `LSF_VERSION`, which pythonlsf's setup reads).

use anyhow::{Context, Result};
use std::path::Path;

/// The library cargo builds.
pub(crate) const LIBRARY: &str = "libbat.so";
/// The other names programs link it by.
pub(crate) const ALIASES: &[&str] = &["liblsf.so", "liblsbstream.so"];
/// The headers, by file name (installed in `<include>/lsf/`).
pub(crate) const HEADERS: &[(&str, &str)] = &[
    (
        "lsf.h",
        include_str!("../../crates/basalt-capi/include/lsf/lsf.h"),
    ),
    (
        "lsbatch.h",
        include_str!("../../crates/basalt-capi/include/lsf/lsbatch.h"),
    ),
];

/// Put the library of `target` in `libdir`: `link` a symbolic link to it (`up`), else a
/// copy (`install`); the aliases are links to it either way.
pub(crate) fn place_library(target: &Path, libdir: &Path, link: bool) -> Result<()> {
    std::fs::create_dir_all(libdir).with_context(|| format!("creating {}", libdir.display()))?;
    let lib = libdir.join(LIBRARY);
    let _ = std::fs::remove_file(&lib);
    if link {
        std::os::unix::fs::symlink(target.join(LIBRARY), &lib)
    } else {
        std::fs::copy(target.join(LIBRARY), &lib).map(|_| ())
    }
    .with_context(|| format!("placing {}", lib.display()))?;
    for alias in ALIASES {
        let p = libdir.join(alias);
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink(LIBRARY, &p)
            .with_context(|| format!("linking {}", p.display()))?;
    }
    Ok(())
}

/// Write the headers into `<include>/lsf/`.
pub(crate) fn place_headers(include: &Path) -> Result<()> {
    let dir = include.join("lsf");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in HEADERS {
        std::fs::write(dir.join(name), text)
            .with_context(|| format!("writing {}", dir.join(name).display()))?;
    }
    Ok(())
}
