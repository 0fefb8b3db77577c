//! `cargo xtask deb --no-build --debug --out D`: a package dpkg reads, named basalt at
//! the workspace version, with the daemons, commands, units and configuration of
//! `install --prefix /usr`, the configuration as conffiles, and no text file naming the
//! source tree. Skipped (with a message) when `dpkg-deb` is not on PATH or the debug
//! binaries are not built (`cargo build --bins`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

struct Scratch(PathBuf);
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dpkg_deb(args: &[&str], deb: &Path) -> String {
    let out = Command::new("dpkg-deb")
        .args(args)
        .arg(deb)
        .output()
        .expect("running dpkg-deb");
    assert!(out.status.success(), "dpkg-deb {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Text files (UTF-8, no NUL) under `dir` containing `needle`.
fn text_files_naming(dir: &Path, needle: &str, found: &mut Vec<PathBuf>, seen: &mut usize) {
    for e in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let p = e.path();
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            text_files_naming(&p, needle, found, seen);
        } else if meta.is_file() {
            let bytes = std::fs::read(&p).unwrap();
            if bytes.contains(&0) {
                continue;
            }
            if let Ok(t) = std::str::from_utf8(&bytes) {
                *seen += 1;
                if t.contains(needle) {
                    found.push(p);
                }
            }
        }
    }
}

#[test]
fn deb_package() {
    if Command::new("dpkg-deb").arg("--version").output().is_err() {
        eprintln!("SKIPPED: dpkg-deb is not on PATH (Debian: apt-get install dpkg)");
        return;
    }
    let tmp = std::env::temp_dir().join(format!("xtask-deb-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let _scratch = Scratch(tmp.clone());
    let out_dir = tmp.join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["deb", "--no-build", "--debug", "--link", "--out"])
        .arg(&out_dir)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("running xtask deb");
    if !out.status.success() && text(&out).contains("not built in") {
        eprintln!("SKIPPED: the debug binaries are not built; run cargo build --bins first");
        return;
    }
    assert!(out.status.success(), "xtask deb failed:\n{}", text(&out));

    let version = env!("CARGO_PKG_VERSION");
    let debs: Vec<PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    assert_eq!(debs.len(), 1, "only the package is left in --out: {debs:?}");
    let deb = &debs[0];
    let name = deb.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("basalt_{version}_")) && name.ends_with(".deb"),
        "{name}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l == deb.display().to_string()),
        "the path is printed:\n{}",
        text(&out)
    );

    let info = dpkg_deb(&["--info"], deb);
    let field = |k: &str| {
        info.lines()
            .find_map(|l| l.trim_start().strip_prefix(&format!("{k}: ")))
            .map(str::to_owned)
    };
    assert_eq!(field("Package").as_deref(), Some("basalt"), "{info}");
    assert_eq!(field("Version").as_deref(), Some(version), "{info}");
    let arch = field("Architecture").unwrap_or_default();
    assert!(name.ends_with(&format!("_{arch}.deb")), "{name} vs {arch}");
    for k in [
        "Maintainer",
        "Depends",
        "Description",
        "Section",
        "Priority",
    ] {
        assert!(field(k).is_some(), "{k} in:\n{info}");
    }

    let contents = dpkg_deb(&["--contents"], deb);
    let paths: Vec<&str> = contents
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .collect();
    for p in [
        "./usr/sbin/lim",
        "./usr/sbin/sbatchd",
        "./usr/sbin/mbatchd",
        "./usr/sbin/res",
        "./usr/bin/bsub",
        "./usr/bin/lsadmin",
        "./usr/lib/systemd/system/basalt-lim.service",
        "./usr/lib/systemd/system/basalt-res.service",
        "./usr/lib/systemd/system/basalt-sbatchd.service",
        "./etc/basalt/lsf.conf",
        "./etc/basalt/lsf.cluster.basalt",
    ] {
        assert!(paths.contains(&p), "{p} missing from:\n{contents}");
    }
    assert!(
        !paths.iter().any(|p| p.ends_with("basalt.key")),
        "no key is shipped"
    );
    // root/root, whoever built it.
    assert!(
        contents
            .lines()
            .all(|l| l.split_whitespace().nth(1) == Some("root/root")),
        "{contents}"
    );

    // The control archive: conffiles and the maintainer scripts.
    let control = tmp.join("control");
    let e = Command::new("dpkg-deb")
        .arg("-e")
        .arg(deb)
        .arg(&control)
        .output()
        .unwrap();
    assert!(e.status.success(), "dpkg-deb -e: {}", text(&e));
    let conffiles = std::fs::read_to_string(control.join("conffiles")).unwrap();
    let conffiles: Vec<&str> = conffiles.lines().collect();
    assert!(conffiles.contains(&"/etc/basalt/lsf.conf"), "{conffiles:?}");
    assert!(
        conffiles.contains(&"/etc/basalt/lsbatch/basalt/configdir/lsb.queues"),
        "{conffiles:?}"
    );
    assert!(
        conffiles.iter().all(|c| c.starts_with("/etc/")),
        "{conffiles:?}"
    );
    use std::os::unix::fs::PermissionsExt;
    for s in ["postinst", "prerm"] {
        let meta = std::fs::metadata(control.join(s)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o755, "{s}");
        let script = std::fs::read_to_string(control.join(s)).unwrap();
        assert!(script.contains("\nset -e\n"), "{s}:\n{script}");
        let sh = Command::new("sh").arg("-n").arg(control.join(s)).output();
        if let Ok(sh) = sh {
            assert!(sh.status.success(), "sh -n {s}: {}", text(&sh));
        }
    }

    // The installed tree names no path of the source tree.
    let root = tmp.join("root");
    let x = Command::new("dpkg-deb")
        .arg("-x")
        .arg(deb)
        .arg(&root)
        .output()
        .unwrap();
    assert!(x.status.success(), "dpkg-deb -x: {}", text(&x));
    let (mut leaks, mut seen) = (Vec::new(), 0);
    text_files_naming(
        &root,
        &workspace().display().to_string(),
        &mut leaks,
        &mut seen,
    );
    assert!(seen >= 9, "only {seen} text files in the package");
    assert!(leaks.is_empty(), "source-tree paths in {leaks:?}");
}
