//! Files of a job's process: the private copy of the job file and the `-o`/`-e`
//! output paths.

use crate::paths;
use basalt_proto::sbatchd::JobSpec;
use nix::unistd::Uid;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The `-o`/`-e` path after `%J`/`%I` substitution; a directory gets LSF's
/// `<jobId>.out` (`<jobId>_<idx>.out` for array elements) inside it.
pub(super) fn output_path(given: &str, spec: &JobSpec, ext: &str) -> String {
    let p = paths::substitute(given, spec.job_id, spec.idx);
    if p.ends_with('/') || Path::new(&p).is_dir() {
        let name = if spec.is_array || spec.idx != 0 {
            format!("{}_{}.{ext}", spec.job_id, spec.idx)
        } else {
            format!("{}.{ext}", spec.job_id)
        };
        Path::new(&p).join(name).to_string_lossy().into_owned()
    } else {
        p
    }
}

pub(super) fn open_output(path: &str, overwrite: bool) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).mode(0o666);
    if overwrite {
        o.write(true).truncate(true);
    } else {
        o.append(true);
    }
    o.open(path)
}

/// A directory only `uid` may use: created 0700, or existing, a real directory
/// (not a symlink) owned by `uid` when `strict`.
fn private_dir(dir: &Path, uid: Uid, strict: bool) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let md = if strict {
        std::fs::symlink_metadata(dir)?
    } else {
        std::fs::metadata(dir)?
    };
    if !md.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    if strict && md.uid() != uid.as_raw() {
        return Err(std::io::Error::other(format!(
            "owned by uid {}, not {}",
            md.uid(),
            uid
        )));
    }
    Ok(())
}

/// Copy the job file to `~/.lsbatch/<name>` (or `/tmp/.lsbatch.<uid>/<name>` when
/// the home is not usable), mode 0700, never overwriting another job's file or kept
/// spool file: a taken name gets a `.1`, `.2`, ... suffix.
pub(super) fn place_job_file(
    home: &str,
    uid: Uid,
    name: &str,
    bytes: &[u8],
) -> Result<PathBuf, String> {
    let name = if name.is_empty() || name.contains('/') {
        format!("{}.job", std::process::id())
    } else {
        name.to_owned()
    };
    let mut dirs: Vec<(PathBuf, bool)> = Vec::new();
    if !home.is_empty() && home != "/" {
        dirs.push((Path::new(home).join(".lsbatch"), false));
    }
    dirs.push((PathBuf::from(format!("/tmp/.lsbatch.{uid}")), true));
    let mut errors = Vec::new();
    for (dir, strict) in dirs {
        if let Err(e) = private_dir(&dir, uid, strict) {
            errors.push(format!("{}: {e}", dir.display()));
            continue;
        }
        for n in 0..1000u32 {
            let path = if n == 0 {
                dir.join(&name)
            } else {
                dir.join(format!("{name}.{n}"))
            };
            // A name whose spool file is still there (a finished job's output kept
            // for want of a mail program) is taken too: the spool is `<name>.out`.
            if Path::new(&format!("{}.out", path.display())).exists() {
                continue;
            }
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o700)
                .open(&path)
            {
                Ok(mut f) => {
                    f.write_all(bytes)
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    errors.push(format!("{}: {e}", path.display()));
                    break;
                }
            }
        }
    }
    Err(format!("cannot create the job file: {}", errors.join("; ")))
}
