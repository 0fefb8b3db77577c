//! `lsrcp [-h] [-V] [-a] source_file target_file`: copy a file between hosts through
//! their RES, as the user: either name may be `host_name:path` (a host of the cluster;
//! a relative path is from the user's working directory, which RES uses when it exists
//! there), the other a path of this host, or both remote. The copy gets the source's
//! permissions; `-a` appends to the target instead. A target that is a directory gets
//! the source's file name in it. Errors say what failed (`lsrcp: hostB:/x: No such file
//! or directory`), exit 255.

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

/// Write `from` (a file of this host) to `host:path` with permissions `mode`
/// (appending with `append`).
async fn send(
    config: &Config,
    setup: &TaskSetup,
    from: std::fs::File,
    (host, path): (&str, &str),
    source_name: &str,
    mode: u32,
    append: bool,
) -> Result<(), String> {
    let redirect = if append { ">>" } else { ">" };
    let script = format!(
        "t=\"$1\"; if [ -d \"$t\" ]; then t=\"$t/$3\"; fi; cat {redirect} \"$t\" && chmod \"$2\" \"$t\""
    );
    let mode = format!("{:o}", mode & 0o7777);
    let (raw, _, err) = run_task_with(
        config,
        host,
        &sh(&script, &[path, &mode, source_name]),
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

/// Open a local target (a directory gets `source_name` in it).
fn open_local(
    path: &Path,
    source_name: &str,
    append: bool,
) -> Result<(std::fs::File, PathBuf), String> {
    let target = if path.is_dir() {
        path.join(source_name)
    } else {
        path.to_path_buf()
    };
    let f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(&target)
        .map_err(|e| format!("{}: {e}", target.display()))?;
    Ok((f, target))
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
            match to {
                Place::Local(dst) => {
                    let (mut out, target) = open_local(dst, &source_name, append)?;
                    let mut file = file;
                    std::io::copy(&mut file, &mut out)
                        .map_err(|e| format!("{}: {e}", target.display()))?;
                    if !append {
                        let _ = std::fs::set_permissions(
                            &target,
                            std::fs::Permissions::from_mode(mode),
                        );
                    }
                    Ok(())
                }
                Place::Remote { host, path } => {
                    send(
                        config,
                        &setup,
                        file,
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
            let (out, target) = open_local(dst, &source_name, append)?;
            let mode = fetch(config, &setup, host, path, out).await?;
            if !append {
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode))
                    .map_err(|e| format!("{}: {e}", target.display()))?;
            }
            Ok(())
        }
        (Place::Remote { host, path }, Place::Remote { host: h2, path: p2 }) => {
            let tmp = tempfile::tempfile().map_err(|e| format!("a temporary file: {e}"))?;
            let copy = tmp.try_clone().map_err(|e| e.to_string())?;
            let mode = fetch(config, &setup, host, path, copy).await?;
            let mut tmp = tmp;
            std::io::Seek::rewind(&mut tmp).map_err(|e| e.to_string())?;
            send(config, &setup, tmp, (h2, p2), &source_name, mode, append).await
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
}
