//! `cargo xtask deb [--no-build] [--debug] [--out DIR]`: a Debian package of Basalt,
//! built with Debian's own `dpkg-deb` (no packaging crate).
//!
//! Owns the package's metadata and maintainer scripts; the installed tree is
//! [`install`]'s, nothing else.
//!
//! * Input: the workspace's binaries (built release, or debug with `--debug`; already
//!   built with `--no-build`), staged by `install --prefix /usr --destdir <staging>`
//!   (so the configuration in `/etc/basalt`, state in `/var/lib/basalt`, logs in
//!   `/var/log/basalt`), the workspace version and `dpkg --print-architecture`.
//! * Output: `<out>/basalt_<version>_<arch>.deb` (`<out>` defaults to `target/debian`),
//!   its path printed. `DEBIAN/` holds `control`, `conffiles` (every file under `/etc`,
//!   so dpkg keeps an administrator's edits on upgrade), `postinst` (systemd
//!   `daemon-reload` on configure; the units are neither enabled nor started: the
//!   cluster key and the cluster's description come first, docs/admin-guide.md,
//!   Installation) and `prerm` (stops the daemons on remove). The staging directory
//!   `<out>/basalt_<version>_<arch>/` is removed once the package is built.
//!
//! The release package is xz-compressed (dpkg-deb's default); the debug one, with
//! binaries ten times the size, gzip level 1, for speed.

use crate::install;
use anyhow::{Context, Result, bail};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The package's name.
const PACKAGE: &str = "basalt";
/// The workspace version (xtask's is `version.workspace`).
const VERSION: &str = env!("CARGO_PKG_VERSION");

const POSTINST: &str = r#"#!/bin/sh
# postinst of basalt (cargo xtask deb): make systemd see the units; enabling and
# starting them is the administrator's, after the cluster key and the cluster's
# description (docs/admin-guide.md, Installation).
set -e
if [ "$1" = configure ]; then
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload || true
    fi
    if [ ! -e /etc/basalt/basalt.key ]; then
        echo "basalt: make the cluster key (the same on every host) and describe the cluster in"
        echo "  /etc/basalt/lsf.cluster.basalt, then: systemctl enable --now basalt-lim basalt-res basalt-sbatchd"
        echo "  (docs/admin-guide.md, Installation)"
    else
        echo "basalt: upgraded; restart the daemons host by host:"
        echo "  systemctl restart basalt-lim basalt-res basalt-sbatchd"
    fi
fi
exit 0
"#;

const PRERM: &str = r#"#!/bin/sh
# prerm of basalt (cargo xtask deb): stop the daemons before their programs go.
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    systemctl stop basalt-sbatchd basalt-res basalt-lim || true
fi
exit 0
"#;

#[derive(clap::Args, Debug, Clone)]
pub(crate) struct Opts {
    /// Package the binaries already built instead of building them.
    #[arg(long)]
    pub no_build: bool,
    /// Package the debug binaries (target/debug) instead of the release ones.
    #[arg(long)]
    pub debug: bool,
    /// Directory for the .deb (default: target/debian).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Stage the binaries as hard links where the output is on the same file system
    /// (no copy of ~1 GB of debug binaries; the test uses it).
    #[arg(long)]
    pub link: bool,
}

/// The Debian architecture of this machine: `dpkg --print-architecture`, else the
/// Rust one mapped to Debian's name.
pub(crate) fn architecture() -> String {
    let dpkg = Command::new("dpkg")
        .arg("--print-architecture")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|a| !a.is_empty());
    dpkg.unwrap_or_else(|| {
        match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "x86" => "i386",
            "powerpc64" => "ppc64el",
            "riscv64" => "riscv64",
            "s390x" => "s390x",
            other => other,
        }
        .to_owned()
    })
}

/// `DEBIAN/control` for `version`, `arch`, the staged tree taking `installed_kib`.
pub(crate) fn control(version: &str, arch: &str, installed_kib: u64) -> String {
    format!(
        "Package: {PACKAGE}\n\
         Version: {version}\n\
         Architecture: {arch}\n\
         Maintainer: Basalt developers <basalt@localhost>\n\
         Installed-Size: {installed_kib}\n\
         Depends: libc6\n\
         Section: admin\n\
         Priority: optional\n\
         Description: LSF-compatible batch system\n \
         Basalt schedules and runs batch jobs on a cluster of Linux hosts with the\n \
         commands, configuration files and daemons of IBM Spectrum LSF: lim, res,\n \
         sbatchd and mbatchd (systemd units basalt-lim, basalt-res, basalt-sbatchd),\n \
         bsub, bjobs, lsload and the rest. The configuration is in /etc/basalt.\n"
    )
}

/// Every file under `dir` (recursively), sorted.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let p = e
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        let meta =
            std::fs::symlink_metadata(&p).with_context(|| format!("reading {}", p.display()))?;
        if meta.is_dir() {
            out.extend(files_under(&p)?);
        } else {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// `DEBIAN/conffiles` of the tree staged in `root`: every file under its `/etc`.
pub(crate) fn conffiles(root: &Path) -> Result<String> {
    let mut text = String::new();
    for f in files_under(&root.join("etc"))? {
        let rel = f.strip_prefix(root).context("a file outside the staging")?;
        text.push_str(&format!("/{}\n", rel.display()));
    }
    Ok(text)
}

/// Give the staged tree Debian's modes: directories 0755, programs 0755, other files
/// 0644 (whatever the umask of the build); its size in KiB (per file, rounded up).
fn normalize(dir: &Path) -> Result<u64> {
    let mut kib = 0;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("chmod {}", dir.display()))?;
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let p = e
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        let meta =
            std::fs::symlink_metadata(&p).with_context(|| format!("reading {}", p.display()))?;
        if meta.is_dir() {
            kib += normalize(&p)? + 1;
        } else if meta.is_file() {
            let mode = if meta.permissions().mode() & 0o111 != 0 {
                0o755
            } else {
                0o644
            };
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode))
                .with_context(|| format!("chmod {}", p.display()))?;
            kib += meta.len().div_ceil(1024);
        }
    }
    Ok(kib)
}

fn write_file(path: &Path, text: &str, mode: u32) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("chmod {}", path.display()))
}

/// Check that `dpkg-deb` can be run.
fn check_dpkg_deb() -> Result<()> {
    match Command::new("dpkg-deb").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => bail!(
            "dpkg-deb --version failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "dpkg-deb not found: install dpkg (Debian: apt-get install dpkg) to build the package"
        ),
        Err(e) => Err(e).context("running dpkg-deb"),
    }
}

/// Build the package; its path.
pub(crate) fn deb(workspace: &Path, opts: &Opts) -> Result<PathBuf> {
    check_dpkg_deb()?;
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| crate::target_dir("debian"));
    let out = if out.is_absolute() {
        out
    } else {
        std::env::current_dir()
            .context("the current directory")?
            .join(out)
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let arch = architecture();
    let name = format!("{PACKAGE}_{VERSION}_{arch}");
    let staging = out.join(&name);
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing the old staging {}", staging.display()))?;
    }
    std::fs::create_dir_all(&staging).with_context(|| format!("creating {}", staging.display()))?;

    install::install(
        workspace,
        &install::Opts {
            prefix: PathBuf::from("/usr"),
            destdir: Some(staging.clone()),
            sysconfdir: None,
            localstatedir: None,
            no_build: opts.no_build,
            debug: opts.debug,
            link: opts.link,
            strict_help: false,
        },
    )
    .context("staging the installation")?;

    let kib = normalize(&staging)?;
    let debian = staging.join("DEBIAN");
    std::fs::create_dir_all(&debian).with_context(|| format!("creating {}", debian.display()))?;
    std::fs::set_permissions(&debian, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("chmod {}", debian.display()))?;
    write_file(
        &debian.join("control"),
        &control(VERSION, &arch, kib),
        0o644,
    )?;
    write_file(&debian.join("conffiles"), &conffiles(&staging)?, 0o644)?;
    write_file(&debian.join("postinst"), POSTINST, 0o755)?;
    write_file(&debian.join("prerm"), PRERM, 0o755)?;

    let deb = out.join(format!("{name}.deb"));
    let mut build = Command::new("dpkg-deb");
    build.arg("--root-owner-group");
    if opts.debug {
        build.args(["-Zgzip", "-z1"]);
    }
    build.arg("--build").arg(&staging).arg(&deb);
    eprintln!("Building {} with dpkg-deb...", deb.display());
    let st = build.status().context("running dpkg-deb")?;
    if !st.success() {
        bail!(
            "dpkg-deb --build failed ({st}); the staged tree is in {}",
            staging.display()
        );
    }
    std::fs::remove_dir_all(&staging)
        .with_context(|| format!("removing the staging {}", staging.display()))?;
    println!("{}", deb.display());
    Ok(deb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_fields() {
        let c = control("1.2.3", "amd64", 42);
        for line in [
            "Package: basalt",
            "Version: 1.2.3",
            "Architecture: amd64",
            "Maintainer: Basalt developers <basalt@localhost>",
            "Installed-Size: 42",
            "Section: admin",
            "Priority: optional",
            "Depends: libc6",
            "Description: LSF-compatible batch system",
        ] {
            assert!(c.lines().any(|l| l == line), "{line} in:\n{c}");
        }
        // The body: continuation lines, one space in front, none empty.
        let body: Vec<&str> = c
            .lines()
            .skip_while(|l| !l.starts_with("Description:"))
            .skip(1)
            .collect();
        assert!(!body.is_empty());
        assert!(
            body.iter()
                .all(|l| l.starts_with(' ') && l.trim().len() > 1),
            "{c}"
        );
        assert!(c.ends_with('\n'));
    }

    #[test]
    fn scripts() {
        for s in [POSTINST, PRERM] {
            assert!(s.starts_with("#!/bin/sh\n"));
            assert!(s.contains("\nset -e\n"));
            assert!(s.contains("[ -d /run/systemd/system ]"));
        }
        assert!(
            !POSTINST
                .lines()
                .any(|l| l.trim_start().starts_with("systemctl enable"))
        );
        assert!(PRERM.contains("systemctl stop basalt-sbatchd basalt-res basalt-lim || true"));
    }

    #[test]
    fn arch_is_a_debian_name() {
        let a = architecture();
        assert!(!a.is_empty() && a != "x86_64" && a != "aarch64", "{a}");
    }
}
