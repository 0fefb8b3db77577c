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

/// The library built in `target` (target/<profile>/): cargo copies it there when it
/// builds basalt-capi for itself, and leaves it in `deps/` only when it builds it as a
/// dependency (of the tests) — the newer of the two.
pub(crate) fn built_library(target: &Path) -> Option<std::path::PathBuf> {
    [target.join(LIBRARY), target.join("deps").join(LIBRARY)]
        .into_iter()
        .filter_map(|p| {
            let modified = std::fs::metadata(&p).ok()?.modified().ok()?;
            Some((modified, p))
        })
        .max_by_key(|(m, _)| *m)
        .map(|(_, p)| p)
}

/// How [`place_library`] puts the library in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A symbolic link to the build (`up`).
    Symlink,
    /// A hard link where the file system allows, else a copy (`install --link`).
    HardLink,
    /// A copy (`install`).
    Copy,
}

/// Put the library of `target` in `libdir` as `how` says; the aliases are symbolic
/// links to it either way.
pub(crate) fn place_library(target: &Path, libdir: &Path, how: Place) -> Result<()> {
    std::fs::create_dir_all(libdir).with_context(|| format!("creating {}", libdir.display()))?;
    let built = built_library(target)
        .ok_or_else(|| anyhow::anyhow!("{LIBRARY} is not built in {}", target.display()))?;
    let lib = libdir.join(LIBRARY);
    let _ = std::fs::remove_file(&lib);
    match how {
        Place::Symlink => std::os::unix::fs::symlink(&built, &lib),
        Place::HardLink => {
            std::fs::hard_link(&built, &lib).or_else(|_| std::fs::copy(&built, &lib).map(|_| ()))
        }
        Place::Copy => std::fs::copy(&built, &lib).map(|_| ()),
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
