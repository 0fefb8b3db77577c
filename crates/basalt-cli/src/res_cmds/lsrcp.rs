//! `lsrcp [-h] [-V] [-a] source_file target_file`: copy a file between hosts through
//! their RES, as the user: either name may be `host_name:path` (a host of the cluster;
//! a relative path is from the user's working directory, which RES uses when it exists
//! there), the other a path of this host, or both remote. The copy gets the source's
//! permissions; `-a` appends to the target instead. A target that is a directory gets
//! the source's file name in it. Errors say what failed (`lsrcp: hostB:/x: No such file
//! or directory`), exit 255.
//!
//! A failed copy leaves the target as it was. The copy is written to a temporary file in
//! the target's directory (`.lsrcp.XXXXXX`), given the source's permissions, and renamed
//! over the target once complete — on the remote side the same is done by the task's
//! script, which also checks that it received as many bytes as the source has. A target
//! a rename would change into something else — a device or FIFO, a file of another
//! owner or with other hard links, a file whose group cannot be kept, one in a directory
//! that takes no new file — and `-a` are staged in a temporary file elsewhere, then
//! written in place once the transfer is complete. A symbolic link is followed, as a
//! plain write does. Permission to write an existing target is checked as before.

use super::{TaskInputFrom, TaskOutputTo, TaskSetup, run_task_with};
use crate::batch::opts::{self, Item, Spec};
use basalt_config::Config;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub const USAGE: &str = "Usage: lsrcp [-h] [-V] [-a] source_file target_file\n";

const SPEC: Spec = Spec {
    flags: &["h", "V", "a"],
    valued: &[],
};

/// One side of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Local(PathBuf),
    Remote { host: String, path: String },
}

impl Place {
    /// `host:path` when `host` is a cluster host (its canonical name), else a local path.
    pub fn of(config: &Config, s: &str) -> Place {
        if let Some((h, p)) = s.split_once(':')
            && !h.contains('/')
            && let Some(host) = basalt_runtime::canonical_host(config, h)
        {
            return Place::Remote {
                host,
                path: p.to_owned(),
            };
        }
        Place::Local(PathBuf::from(s))
    }
}

/// The last part of a path (for a target that is a directory).
fn base_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// What a remote command's standard error says, without the program's prefix
/// (`cat: /x: No such file or directory` -> `No such file or directory`).
fn reason(stderr: &[u8]) -> String {
    let t = String::from_utf8_lossy(stderr);
    let line = t.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.rsplit(": ").next().unwrap_or(line).trim().to_owned()
}

fn sh(script: &str, args: &[&str]) -> Vec<String> {
    let mut v = vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        script.to_owned(),
        "sh".to_owned(),
    ];
    v.extend(args.iter().map(|a| (*a).to_owned()));
    v
}

/// Read `host:path` into `into` (a file of this host); its permissions.
async fn fetch(
    config: &Config,
    setup: &TaskSetup,
    host: &str,
    path: &str,
    into: std::fs::File,
) -> Result<u32, String> {
    let shown = format!("{host}:{path}");
    let script = "if [ -d \"$1\" ]; then echo \"$1: Is a directory\" >&2; exit 1; fi; \
                  stat -c %a -- \"$1\" >/dev/null && cat -- \"$1\" && stat -c %a -- \"$1\" >&2";
    let (raw, _, err) = run_task_with(
        config,
        host,
        &sh(script, &[path]),
        setup,
        TaskInputFrom::Nothing,
        TaskOutputTo::File(into),
    )
    .await
    .map_err(|e| format!("{host}: {e}"))?;
    if raw != 0 {
        return Err(format!("{shown}: {}", reason(&err)));
    }
    let mode = String::from_utf8_lossy(&err).trim().to_owned();
    u32::from_str_radix(mode.lines().last().unwrap_or("644"), 8)
        .map_err(|_| format!("{shown}: cannot read its permissions"))
}

/// The remote side of a copy to `host:path` (see the module's documentation): `$1` the
/// target, `$2` the mode, `$3` the source's name (for a target that is a directory), `$4`
/// the number of bytes to expect (empty: unknown), `$5` 1 to append. The data comes on
/// standard input.
pub(crate) const SEND_SCRIPT: &str = r#"t="$1"; mode="$2"; size="$4"; append="$5"
if [ -d "$t" ]; then t="$t/$3"; fi
if [ -L "$t" ]; then r=$(readlink -f -- "$t") && t="$r"; fi
if [ -e "$t" ] && [ ! -w "$t" ]; then echo "$t: Permission denied" >&2; exit 1; fi
tmp=
trap 'rm -f -- "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
replace=0
if [ "$append" != 1 ]; then
  if [ ! -e "$t" ]; then replace=1
  elif [ -f "$t" ] && [ -O "$t" ] && [ "$(stat -c %h -- "$t")" = 1 ]; then replace=1; fi
fi
if [ $replace = 1 ]; then
  tmp=$(mktemp -- "$(dirname -- "$t")/.lsrcp.XXXXXX" 2>/dev/null) || { tmp=; replace=0; }
  if [ $replace = 1 ] && [ -e "$t" ]; then
    chgrp -- "$(stat -c %g -- "$t")" "$tmp" 2>/dev/null || replace=0
  fi
fi
if [ -z "$tmp" ]; then tmp=$(mktemp) || exit 1; fi
cat > "$tmp" || exit 1
if [ -n "$size" ] && [ "$(stat -c %s -- "$tmp")" != "$size" ]; then
  echo "$t: the copy ended after $(stat -c %s -- "$tmp") of $size bytes: Connection lost" >&2
  exit 1
fi
if [ $replace = 1 ]; then
  chmod "$mode" "$tmp" && mv -f -- "$tmp" "$t" && tmp= && exit 0
  exit 1
fi
if [ "$append" = 1 ]; then cat -- "$tmp" >> "$t"; else cat -- "$tmp" > "$t"; fi && chmod "$mode" "$t"
"#;

/// Write `from` (a file of this host, `size` bytes when known) to `host:path` with
/// permissions `mode` (appending with `append`).
#[allow(clippy::too_many_arguments)]
async fn send(
    config: &Config,
    setup: &TaskSetup,
    from: std::fs::File,
    size: Option<u64>,
    (host, path): (&str, &str),
    source_name: &str,
    mode: u32,
    append: bool,
) -> Result<(), String> {
    let mode = format!("{:o}", mode & 0o7777);
    let size = size.map(|s| s.to_string()).unwrap_or_default();
    let append = if append { "1" } else { "0" };
    let (raw, _, err) = run_task_with(
        config,
        host,
        &sh(SEND_SCRIPT, &[path, &mode, source_name, &size, append]),
        setup,
        TaskInputFrom::File(from),
        TaskOutputTo::Kept,
    )
    .await
    .map_err(|e| format!("{host}: {e}"))?;
    if raw != 0 {
        return Err(format!("{host}:{path}: {}", reason(&err)));
    }
    Ok(())
}

/// A copy's target on this host while the copy is made (see the module's
/// documentation): a temporary file, renamed over the target or written into it once
/// the copy is complete. Dropped without [`LocalTarget::commit`], it leaves the target
/// as it was.
#[derive(Debug)]
pub(crate) struct LocalTarget {
    target: PathBuf,
    how: Staging,
}

#[derive(Debug)]
enum Staging {
    /// In the target's directory, renamed over it.
    Replace(tempfile::NamedTempFile),
    /// Elsewhere, then written into the target (appended to it with `-a`).
    InPlace { tmp: std::fs::File, append: bool },
}

impl LocalTarget {
    /// The target for `path` (a directory gets `source_name` in it); refused as opening
    /// it for writing would be (a missing directory, no permission).
    pub(crate) fn open(path: &Path, source_name: &str, append: bool) -> Result<Self, String> {
        use std::os::unix::fs::MetadataExt;
        let mut target = if path.is_dir() {
            path.join(source_name)
        } else {
            path.to_path_buf()
        };
        let shown = |t: &Path, e: &dyn std::fmt::Display| format!("{}: {e}", t.display());
        // A symbolic link: what it names is written, as a plain write does.
        if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink())
            && let Ok(real) = std::fs::canonicalize(&target)
        {
            target = real;
        }
        let existing = std::fs::metadata(&target).ok();
        if existing.is_some() {
            // Permission to write it, checked without changing it.
            std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|e| shown(&target, &e))?;
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let replaceable = !append
            && existing.as_ref().is_none_or(|m| {
                m.is_file() && m.uid() == nix::unistd::geteuid().as_raw() && m.nlink() == 1
            });
        if replaceable {
            match tempfile::Builder::new().prefix(".lsrcp.").tempfile_in(&dir) {
                Ok(tmp) => {
                    let group_kept = existing.as_ref().is_none_or(|m| {
                        std::os::unix::fs::fchown(tmp.as_file(), None, Some(m.gid())).is_ok()
                    });
                    if group_kept {
                        return Ok(LocalTarget {
                            target,
                            how: Staging::Replace(tmp),
                        });
                    }
                }
                // A directory that does not exist: as opening the target would say.
                Err(e) if existing.is_none() && e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(shown(&target, &e));
                }
                Err(_) => {}
            }
        }
        if existing.is_none() {
            // Can the target be created at all? (Nothing is left if it can.)
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&target)
                .map_err(|e| shown(&target, &e))?;
            let _ = std::fs::remove_file(&target);
        }
        let tmp = tempfile::tempfile().map_err(|e| format!("a temporary file: {e}"))?;
        Ok(LocalTarget {
            target,
            how: Staging::InPlace { tmp, append },
        })
    }

    /// The target's path.
    pub(crate) fn path(&self) -> &Path {
        &self.target
    }

    /// Where to write the copy.
    pub(crate) fn file(&self) -> Result<std::fs::File, String> {
        match &self.how {
            Staging::Replace(t) => t.as_file().try_clone(),
            Staging::InPlace { tmp, .. } => tmp.try_clone(),
        }
        .map_err(|e| format!("a temporary file: {e}"))
    }

    /// The copy is complete: make it the target, with permissions `mode` (unless
    /// appending). `mode_must`: a failure to set them is an error (else it is ignored, as
    /// a local copy always did).
    pub(crate) fn commit(self, mode: u32, mode_must: bool) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let shown = |e: &dyn std::fmt::Display| format!("{}: {e}", self.target.display());
        let perms = std::fs::Permissions::from_mode(mode);
        match self.how {
            Staging::Replace(tmp) => {
                tmp.as_file()
                    .set_permissions(perms)
                    .and_then(|()| tmp.as_file().sync_data())
                    .map_err(|e| shown(&e))?;
                tmp.persist(&self.target).map_err(|e| shown(&e.error))?;
                Ok(())
            }
            Staging::InPlace { mut tmp, append } => {
                std::io::Seek::rewind(&mut tmp).map_err(|e| format!("a temporary file: {e}"))?;
                let mut out = std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .append(append)
                    .truncate(!append)
                    .open(&self.target)
                    .map_err(|e| shown(&e))?;
                std::io::copy(&mut tmp, &mut out).map_err(|e| shown(&e))?;
                if !append {
                    let set = std::fs::set_permissions(&self.target, perms);
                    if mode_must {
                        set.map_err(|e| shown(&e))?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// Copy `from` to `to`.
pub async fn copy(config: &Config, from: &Place, to: &Place, append: bool) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let setup = TaskSetup {
        file_op: true,
        ..TaskSetup::here(false)
    };
    let source_name = match from {
        Place::Local(p) => base_name(&p.to_string_lossy()),
        Place::Remote { path, .. } => base_name(path),
    };
    match (from, to) {
        (Place::Local(src), Place::Local(_)) | (Place::Local(src), Place::Remote { .. }) => {
            let file = std::fs::File::open(src).map_err(|e| format!("{}: {e}", src.display()))?;
            let meta = file
                .metadata()
                .map_err(|e| format!("{}: {e}", src.display()))?;
            if meta.is_dir() {
                return Err(format!("{}: Is a directory", src.display()));
            }
            let mode = meta.permissions().mode();
            // A regular file's size is known: the remote side checks it got all of it.
            let size = meta.is_file().then_some(meta.len());
            match to {
                Place::Local(dst) => {
                    let target = LocalTarget::open(dst, &source_name, append)?;
                    let mut out = target.file()?;
                    let mut file = file;
                    std::io::copy(&mut file, &mut out)
                        .map_err(|e| format!("{}: {e}", target.path().display()))?;
                    target.commit(mode, false)
                }
                Place::Remote { host, path } => {
                    send(
                        config,
                        &setup,
                        file,
                        size,
                        (host, path),
                        &source_name,
                        mode,
                        append,
                    )
                    .await
                }
            }
        }
        (Place::Remote { host, path }, Place::Local(dst)) => {
            let target = LocalTarget::open(dst, &source_name, append)?;
            let mode = fetch(config, &setup, host, path, target.file()?).await?;
            target.commit(mode, true)
        }
        (Place::Remote { host, path }, Place::Remote { host: h2, path: p2 }) => {
            let tmp = tempfile::tempfile().map_err(|e| format!("a temporary file: {e}"))?;
            let copy = tmp.try_clone().map_err(|e| e.to_string())?;
            let mode = fetch(config, &setup, host, path, copy).await?;
            let mut tmp = tmp;
            let size = tmp.metadata().map_err(|e| e.to_string())?.len();
            std::io::Seek::rewind(&mut tmp).map_err(|e| e.to_string())?;
            send(
                config,
                &setup,
                tmp,
                Some(size),
                (h2, p2),
                &source_name,
                mode,
                append,
            )
            .await
        }
    }
}

/// What `lsrcp` was asked: `-a`, the source and the target.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    append: bool,
    src: String,
    dst: String,
}

/// `Ok(None)`: `-h` or `-V`.
fn parse(args: &[String]) -> Result<Option<Args>, String> {
    let mut append = false;
    let mut names = Vec::new();
    for it in opts::parse(args, &SPEC, false).map_err(|e| e.to_string())? {
        match it {
            Item::Arg(a) => names.push(a),
            Item::Opt(n, _) if n == "h" || n == "V" => return Ok(None),
            Item::Opt(_, _) => append = true,
        }
    }
    match <[String; 2]>::try_from(names) {
        Ok([src, dst]) => Ok(Some(Args { append, src, dst })),
        Err(_) => Err("a source and a target file are required".to_owned()),
    }
}

/// `lsrcp`.
pub fn main(args: Vec<String>) -> ExitCode {
    let a = match super::parsed("lsrcp", &args, USAGE, parse(&args)) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let (src, dst, append) = (&a.src, &a.dst, a.append);
    let config = match crate::load_config("lsrcp") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (from, to) = (Place::of(&config, src), Place::of(&config, dst));
    match crate::block_on_leaving_reads(copy(&config, &from, &to, append)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("lsrcp: {e}");
            crate::fail()
        }
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_drop_the_programs_prefix() {
        assert_eq!(
            reason(b"cat: /x: No such file or directory\n"),
            "No such file or directory"
        );
        assert_eq!(base_name("/a/b/c.txt"), "c.txt");
    }

    #[test]
    fn a_source_and_a_target_and_maybe_append() {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            parse(&s(&["-a", "x", "hostB:y"])),
            Ok(Some(Args {
                append: true,
                src: "x".into(),
                dst: "hostB:y".into()
            }))
        );
        assert_eq!(parse(&s(&["-h"])), Ok(None));
        assert!(parse(&s(&["x"])).is_err());
        assert!(parse(&s(&["-z", "x", "y"])).is_err());
    }

    /// What is in `dir`, sorted (to see that no temporary file is left).
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn mode_of(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    /// Issue 49, item 9: a copy to a local file that fails before it is complete leaves
    /// the target as it was (no truncation, no temporary file left); a complete one
    /// replaces it, with the source's permissions, through a symbolic link too; `-a`
    /// appends only a complete copy; a target with other hard links is written in place.
    #[test]
    fn a_failed_local_copy_leaves_the_target_as_it_was() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        std::fs::write(&target, "data that must stay\n").unwrap();
        let t = LocalTarget::open(&target, "src", false).unwrap();
        t.file().unwrap().write_all(b"half a co").unwrap();
        drop(t); // The copy failed.
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "data that must stay\n"
        );
        assert_eq!(names(dir.path()), ["target.txt"]);

        let t = LocalTarget::open(&target, "src", false).unwrap();
        t.file().unwrap().write_all(b"new\n").unwrap();
        t.commit(0o640, true).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
        assert_eq!(mode_of(&target), 0o640);
        assert_eq!(names(dir.path()), ["target.txt"]);

        // -a: only a complete copy is appended.
        let t = LocalTarget::open(&target, "src", true).unwrap();
        t.file().unwrap().write_all(b"partial").unwrap();
        drop(t);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
        let t = LocalTarget::open(&target, "src", true).unwrap();
        t.file().unwrap().write_all(b"more\n").unwrap();
        t.commit(0o600, true).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\nmore\n");
        assert_eq!(mode_of(&target), 0o640, "-a keeps the target's permissions");

        // A directory gets the source's name; a symbolic link is followed.
        let t = LocalTarget::open(dir.path(), "src.sh", false).unwrap();
        t.file().unwrap().write_all(b"in the directory").unwrap();
        t.commit(0o750, true).unwrap();
        assert_eq!(mode_of(&dir.path().join("src.sh")), 0o750);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let t = LocalTarget::open(&link, "src", false).unwrap();
        t.file().unwrap().write_all(b"through the link\n").unwrap();
        t.commit(0o644, true).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "through the link\n"
        );

        // Hard links: written in place, every name sees the copy; a failed copy
        // changes none.
        let other = dir.path().join("other-name");
        std::fs::hard_link(&target, &other).unwrap();
        let t = LocalTarget::open(&target, "src", false).unwrap();
        t.file().unwrap().write_all(b"cut").unwrap();
        drop(t);
        assert_eq!(
            std::fs::read_to_string(&other).unwrap(),
            "through the link\n"
        );
        let t = LocalTarget::open(&target, "src", false).unwrap();
        t.file().unwrap().write_all(b"both names\n").unwrap();
        t.commit(0o644, true).unwrap();
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "both names\n");

        // A target whose directory does not exist is refused before any copy.
        let e = LocalTarget::open(&dir.path().join("no/such/x"), "src", false).unwrap_err();
        assert!(e.contains("no/such/x") && e.contains("No such file"), "{e}");
        assert_eq!(
            names(dir.path()),
            ["link", "other-name", "src.sh", "target.txt"]
        );
    }

    /// The remote side of a copy ([`SEND_SCRIPT`], run here by `sh` as RES runs it):
    /// standard input cut short of the source's size leaves the target as it was, with
    /// no temporary file; a complete copy replaces it with the mode; `-a` appends; a
    /// directory gets the source's name.
    #[test]
    fn the_remote_side_replaces_the_target_only_with_a_complete_copy() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        std::fs::write(&target, "keep me\n").unwrap();
        let run = |target: &Path, data: &[u8], size: &str, append: &str| {
            let mut c = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(SEND_SCRIPT)
                .arg("sh")
                .arg(target)
                .args(["640", "src", size, append])
                .stdin(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin.take().unwrap().write_all(data).unwrap();
            let o = c.wait_with_output().unwrap();
            (
                o.status.success(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        };
        let (ok, err) = run(&target, b"new con", "12", "0");
        assert!(!ok);
        assert!(err.contains("ended after 7 of 12 bytes"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
        assert_eq!(names(dir.path()), ["t"]);

        let (ok, err) = run(&target, b"new content\n", "12", "0");
        assert!(ok, "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new content\n");
        assert_eq!(mode_of(&target), 0o640);
        assert_eq!(names(dir.path()), ["t"]);

        let (ok, _) = run(&target, b"par", "5", "1");
        assert!(!ok);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new content\n");
        let (ok, err) = run(&target, b"more\n", "5", "1");
        assert!(ok, "{err}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "new content\nmore\n"
        );

        let (ok, err) = run(dir.path(), b"x", "", "0");
        assert!(ok, "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("src")).unwrap(),
            "x"
        );
        assert_eq!(names(dir.path()), ["src", "t"]);
    }
}
