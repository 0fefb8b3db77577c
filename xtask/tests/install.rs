//! `cargo xtask install --prefix /opt/basalt --destdir D --no-build --debug --link`: the
//! layout, the units' paths, no path into the source tree. Skipped (with a message)
//! when the debug binaries are not built. (`systemd-analyze verify` of the units is
//! another test's.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

struct Scratch(PathBuf);
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn grep(dir: &Path, needle: &str, found: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            grep(&p, needle, found);
        } else if String::from_utf8_lossy(&std::fs::read(&p).unwrap()).contains(needle) {
            found.push(p);
        }
    }
}

#[test]
fn install_into_a_destdir() {
    // Next to the binaries (same file system: --link makes hard links, no copies).
    let xtask = Path::new(env!("CARGO_BIN_EXE_xtask"));
    let dest = xtask
        .parent()
        .unwrap()
        .join(format!("xtask-install-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dest);
    let _scratch = Scratch(dest.clone());
    let out = Command::new(xtask)
        .args([
            "install",
            "--prefix",
            "/opt/basalt",
            "--no-build",
            "--debug",
            "--link",
            // Every installed command answers --help (exit 0 with its usage).
            "--strict-help",
        ])
        .arg("--destdir")
        .arg(&dest)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() && text.contains("not built in") {
        eprintln!("SKIPPED: the debug binaries are not built; run cargo build --bins first");
        return;
    }
    assert!(out.status.success(), "install failed:\n{text}");

    let root = dest.join("opt/basalt");
    for d in ["lim", "res", "sbatchd", "mbatchd"] {
        assert!(root.join("sbin").join(d).is_file(), "sbin/{d} missing");
        assert!(!root.join("bin").join(d).exists(), "daemon {d} in bin/");
    }
    for c in [
        "bsub", "bjobs", "bkill", "lsid", "lsload", "bhosts", "badmin", "bhist", "bacct",
    ] {
        assert!(root.join("bin").join(c).is_file(), "bin/{c} missing");
    }
    // Units: ExecStart in the prefix's sbin, LSF_ENVDIR the installed configuration.
    for u in ["basalt-lim", "basalt-res", "basalt-sbatchd"] {
        let unit = std::fs::read_to_string(root.join(format!("lib/systemd/system/{u}.service")))
            .unwrap_or_else(|e| panic!("{u}.service: {e}"));
        let daemon = u.trim_start_matches("basalt-");
        assert!(
            unit.contains(&format!("ExecStart=/opt/basalt/sbin/{daemon}\n")),
            "{unit}"
        );
        assert!(!unit.contains("/usr/sbin"), "{unit}");
        assert!(
            unit.contains("Environment=LSF_ENVDIR=/opt/basalt/etc/basalt\n"),
            "{unit}"
        );
    }
    // The configuration template, where the units say.
    let conf = root.join("etc/basalt");
    for f in [
        "lsf.conf",
        "lsf.shared",
        "lsf.cluster.basalt",
        "lsbatch/basalt/configdir/lsb.queues",
        "lsbatch/basalt/configdir/lsb.params",
        "lsbatch/basalt/configdir/lsb.hosts",
    ] {
        assert!(conf.join(f).is_file(), "etc/basalt/{f} missing");
    }
    let lsf_conf = std::fs::read_to_string(conf.join("lsf.conf")).unwrap();
    for line in [
        "LSF_ENVDIR=/opt/basalt/etc/basalt",
        "LSF_SERVERDIR=/opt/basalt/libexec/basalt",
        "LSF_BINDIR=/opt/basalt/bin",
        "LSB_SHAREDIR=/opt/basalt/var/lib/basalt/work",
        "LSF_LOGDIR=/opt/basalt/var/log/basalt",
        "LSF_LIBDIR=/opt/basalt/lib",
        "LSF_INCLUDEDIR=/opt/basalt/include",
        "LSF_VERSION=10.1",
    ] {
        assert!(
            lsf_conf.lines().any(|l| l == line),
            "{line} in:\n{lsf_conf}"
        );
    }
    assert!(!conf.join("basalt.key").exists(), "no key is shipped");
    // LSF's C API: the library under its three names, the headers.
    assert!(root.join("lib/libbat.so").is_file());
    for alias in ["liblsf.so", "liblsbstream.so"] {
        assert_eq!(
            std::fs::read_link(root.join("lib").join(alias)).ok(),
            Some(std::path::PathBuf::from("libbat.so")),
            "{alias}"
        );
    }
    for h in ["lsf.h", "lsbatch.h"] {
        assert!(
            root.join("include/lsf").join(h).is_file(),
            "include/lsf/{h}"
        );
    }
    assert!(root.join("libexec/basalt").is_dir());
    assert!(root.join("var/lib/basalt/work/basalt/logdir").is_dir());
    // Nothing names the source tree (the configuration and the units; the binaries carry
    // their build paths as debug information).
    let mut leaks = Vec::new();
    for d in ["etc", "lib/systemd"] {
        grep(
            &root.join(d),
            &workspace().display().to_string(),
            &mut leaks,
        );
    }
    assert!(leaks.is_empty(), "source-tree paths in {leaks:?}");
    // Every program was asked for --help: either all answer, or the failures are listed.
    assert!(
        text.contains("every installed program answers --help")
            || text.contains("do not answer --help"),
        "{text}"
    );

    // A second install keeps the (edited) configuration.
    std::fs::write(conf.join("lsf.conf"), format!("{lsf_conf}# edited\n")).unwrap();
    let again = Command::new(xtask)
        .args([
            "install",
            "--prefix",
            "/opt/basalt",
            "--no-build",
            "--debug",
            "--link",
        ])
        .arg("--destdir")
        .arg(&dest)
        .output()
        .unwrap();
    assert!(again.status.success());
    assert!(
        std::fs::read_to_string(conf.join("lsf.conf"))
            .unwrap()
            .ends_with("# edited\n")
    );
}
