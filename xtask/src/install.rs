//! `cargo xtask install --prefix DIR [--destdir D]`: an installed Basalt, LSF's usual
//! layout, no path into the source tree.
//!
//! ```text
//! <destdir><prefix>/sbin/                 lim res sbatchd mbatchd (daemons)
//! <destdir><prefix>/bin/                  bsub bjobs lsid ... (commands)
//! <destdir><prefix>/lib/                  libbat.so, liblsf.so and liblsbstream.so (links to it): LSF_LIBDIR
//! <destdir><prefix>/include/lsf/          lsf.h lsbatch.h: LSF_INCLUDEDIR
//! <destdir><prefix>/lib/systemd/system/   basalt-{lim,res,sbatchd}.service, ExecStart in <prefix>/sbin,
//!                                         LSF_ENVDIR=<sysconfdir>/basalt
//! <destdir><prefix>/libexec/basalt/       LSF_SERVERDIR (ELIMs, esub, eexec, eauth), empty
//! <destdir><sysconfdir>/basalt/           LSF_ENVDIR: lsf.conf lsf.shared lsf.cluster.basalt lsbatch/basalt/configdir/lsb.*
//! <destdir><localstatedir>/lib/basalt/    LSB_SHAREDIR (work/), BASALT_SBD_STATEDIR (sbd/)
//! <destdir><localstatedir>/log/basalt/    LSF_LOGDIR
//! ```
//!
//! `sysconfdir` is `/etc` for the prefix `/usr` (so the units' `LSF_ENVDIR=/etc/basalt`
//! stays as written), else `<prefix>/etc`; `localstatedir` is `/var` for `/usr`, else
//! `<prefix>/var`. An existing configuration is kept (reinstalling upgrades the
//! programs only). No cluster key is installed: it must be the same on every host, so
//! the administrator makes one and copies it (docs/admin-guide.md, Installation).

use crate::{Build, COMMANDS, DAEMONS, SUPERVISED, build_binaries};
use anyhow::{Context, Result, bail};
use basalt_config::embedded::{DefaultCluster, DefaultHost};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LSF_CONF: &str = include_str!("../../config/install/lsf.conf.in");
/// The units, by file name.
const UNITS: &[(&str, &str)] = &[
    (
        "basalt-lim.service",
        include_str!("../../config/systemd/basalt-lim.service"),
    ),
    (
        "basalt-res.service",
        include_str!("../../config/systemd/basalt-res.service"),
    ),
    (
        "basalt-sbatchd.service",
        include_str!("../../config/systemd/basalt-sbatchd.service"),
    ),
];
/// The cluster name of the template.
const CLUSTER: &str = "basalt";

#[derive(clap::Args, Debug, Clone)]
pub(crate) struct Opts {
    /// Installation prefix, e.g. /usr or /opt/basalt (absolute).
    #[arg(long)]
    pub prefix: PathBuf,
    /// Staging directory put in front of every installed path (for packaging); the
    /// installed files still name the paths without it.
    #[arg(long)]
    pub destdir: Option<PathBuf>,
    /// The configuration goes in <sysconfdir>/basalt (LSF_ENVDIR). Default: /etc for
    /// the prefix /usr, else <prefix>/etc.
    #[arg(long)]
    pub sysconfdir: Option<PathBuf>,
    /// State in <localstatedir>/lib/basalt, logs in <localstatedir>/log/basalt.
    /// Default: /var for the prefix /usr, else <prefix>/var.
    #[arg(long)]
    pub localstatedir: Option<PathBuf>,
    /// Install the binaries already built instead of building them.
    #[arg(long)]
    pub no_build: bool,
    /// Install the debug binaries (target/debug) instead of the release ones.
    #[arg(long)]
    pub debug: bool,
    /// Hard-link the binaries instead of copying them where the destination is on the
    /// same file system (a quick staging install; copies otherwise).
    #[arg(long)]
    pub link: bool,
    /// Fail when an installed program does not answer `--help` (exit 0 and some
    /// output); without it such programs are listed as a warning.
    #[arg(long)]
    pub strict_help: bool,
}

/// Where everything goes (paths as installed, without the destdir).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    pub prefix: PathBuf,
    pub sbin: PathBuf,
    pub bin: PathBuf,
    /// LSF_LIBDIR: libbat.so (and liblsf.so, liblsbstream.so).
    pub lib: PathBuf,
    /// LSF_INCLUDEDIR: lsf/lsf.h, lsf/lsbatch.h.
    pub include: PathBuf,
    pub units: PathBuf,
    pub serverdir: PathBuf,
    pub confdir: PathBuf,
    pub statedir: PathBuf,
    pub logdir: PathBuf,
}

impl Layout {
    pub(crate) fn new(
        prefix: &Path,
        sysconfdir: Option<&Path>,
        localstatedir: Option<&Path>,
    ) -> Result<Layout> {
        for (what, p) in [
            ("--prefix", Some(prefix)),
            ("--sysconfdir", sysconfdir),
            ("--localstatedir", localstatedir),
        ] {
            if let Some(p) = p.filter(|p| !p.is_absolute()) {
                bail!("{what} {} must be an absolute path", p.display());
            }
        }
        let usr = prefix == Path::new("/usr");
        let etc = sysconfdir.map(Path::to_path_buf).unwrap_or_else(|| {
            if usr {
                PathBuf::from("/etc")
            } else {
                prefix.join("etc")
            }
        });
        let var = localstatedir.map(Path::to_path_buf).unwrap_or_else(|| {
            if usr {
                PathBuf::from("/var")
            } else {
                prefix.join("var")
            }
        });
        Ok(Layout {
            prefix: prefix.to_path_buf(),
            sbin: prefix.join("sbin"),
            bin: prefix.join("bin"),
            lib: prefix.join("lib"),
            include: prefix.join("include"),
            units: prefix.join("lib/systemd/system"),
            serverdir: prefix.join("libexec/basalt"),
            confdir: etc.join("basalt"),
            statedir: var.join("lib/basalt"),
            logdir: var.join("log/basalt"),
        })
    }
}

/// `path` under `destdir`.
fn staged(destdir: Option<&Path>, path: &Path) -> PathBuf {
    match destdir {
        Some(d) => d.join(path.strip_prefix("/").unwrap_or(path)),
        None => path.to_path_buf(),
    }
}

/// A unit of `config/systemd/` for `layout`: the programs in its sbin, its LSF_ENVDIR.
pub(crate) fn rewrite_unit(text: &str, layout: &Layout) -> String {
    let sbin = format!("{}/", layout.sbin.display());
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let exec = [
            "ExecStart=",
            "ExecStartPre=",
            "ExecStartPost=",
            "ExecReload=",
            "ExecStop=",
        ]
        .iter()
        .any(|k| line.starts_with(k));
        if exec {
            out.push_str(&line.replace("/usr/sbin/", &sbin));
        } else if line.starts_with("Environment=LSF_ENVDIR=") {
            out.push_str(&format!(
                "Environment=LSF_ENVDIR={}",
                layout.confdir.display()
            ));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The configuration template for `layout`: (path relative to the configuration
/// directory, contents).
pub(crate) fn config_files(layout: &Layout) -> Vec<(PathBuf, String)> {
    let hosts = ["hostA", "hostB", "hostC"]
        .iter()
        .map(|n| DefaultHost {
            name: (*n).to_owned(),
            address: None,
            server: true,
        })
        .collect();
    let spec = DefaultCluster::new(CLUSTER, "root", hosts);
    // Everything but lsf.conf comes from the embedded default (it names no path);
    // lsf.conf is the installed layout's.
    let mut files: Vec<(PathBuf, String)> = spec
        .render(Path::new("/nonexistent"))
        .into_iter()
        .filter_map(|(rel, text)| {
            let rel = rel.strip_prefix("conf").ok()?.to_path_buf();
            (rel != Path::new("lsf.conf")).then_some((rel, text))
        })
        .collect();
    let conf = LSF_CONF
        .replace("@CONFDIR@", &layout.confdir.display().to_string())
        .replace("@STATEDIR@", &layout.statedir.display().to_string())
        .replace("@SERVERDIR@", &layout.serverdir.display().to_string())
        .replace("@BINDIR@", &layout.bin.display().to_string())
        .replace("@LIBDIR@", &layout.lib.display().to_string())
        .replace("@INCLUDEDIR@", &layout.include.display().to_string())
        .replace("@LOGDIR@", &layout.logdir.display().to_string());
    files.insert(0, (PathBuf::from("lsf.conf"), conf));
    files
}

/// Copy (or, with `link`, hard-link) `from` to `to`, replacing it: a running binary is
/// unlinked, not overwritten.
fn copy_program(from: &Path, to: &Path, link: bool) -> Result<()> {
    let _ = std::fs::remove_file(to);
    if link && std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// Files under `dir` (recursively) whose text contains `needle`.
pub(crate) fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            found.extend(files_containing(&p, needle));
        } else if std::fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle)) {
            found.push(p);
        }
    }
    found.sort();
    found
}

/// Run `prog --help`: None when it exits 0 with some output, else what went wrong.
pub(crate) fn help_problem(prog: &Path) -> Option<String> {
    let mut child = match Command::new(prog)
        .arg("--help")
        .env_remove("LSF_ENVDIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return Some(format!("does not start: {e}")),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Some("did not exit within 10 s".to_owned());
            }
        }
    }
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => return Some(e.to_string()),
    };
    let first = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .next()
            .unwrap_or("")
            .to_owned()
    };
    if !out.status.success() {
        Some(format!(
            "exit {}: {}",
            out.status
                .code()
                .map(|c| c.to_string())
                .unwrap_or_else(|| out.status.to_string()),
            first(&out.stderr)
        ))
    } else if out.stdout.is_empty() && out.stderr.is_empty() {
        Some("no output".to_owned())
    } else {
        None
    }
}

/// Load the configuration installed in `staged_conf` (named `confdir` inside its own
/// files) from a scratch copy whose directory keywords point at the copy.
fn validate_installed(staged_conf: &Path, confdir: &Path) -> Result<()> {
    let scratch = std::env::temp_dir().join(format!("basalt-install-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    copy_tree(staged_conf, &scratch)?;
    let conf = scratch.join("lsf.conf");
    let text = std::fs::read_to_string(&conf)?;
    let from = confdir.display().to_string();
    let to = scratch.display().to_string();
    let text: String = text
        .lines()
        .map(|l| match l.split_once('=') {
            Some((k, v)) if ["LSF_ENVDIR", "LSF_CONFDIR", "LSB_CONFDIR"].contains(&k) => {
                format!("{k}={}\n", v.replacen(&from, &to, 1))
            }
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&conf, text)?;
    let r = basalt_config::load(&scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    r.map(|_| ()).map_err(|e| {
        anyhow::anyhow!(
            "the installed configuration in {} is invalid:\n{e}",
            staged_conf.display()
        )
    })
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)?.filter_map(Result::ok) {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

pub(crate) fn install(workspace: &Path, opts: &Opts) -> Result<()> {
    let layout = Layout::new(
        &opts.prefix,
        opts.sysconfdir.as_deref(),
        opts.localstatedir.as_deref(),
    )?;
    if let Some(d) = opts.destdir.as_deref().filter(|d| !d.is_absolute()) {
        bail!("--destdir {} must be an absolute path", d.display());
    }
    let dest = opts.destdir.as_deref();
    let target = build_binaries(Build {
        release: !opts.debug,
        no_build: opts.no_build,
    })?;
    let at = |p: &Path| staged(dest, p);

    // Programs.
    let mut programs = Vec::new();
    for (dir, names) in [
        (
            &layout.sbin,
            DAEMONS.iter().chain(SUPERVISED).collect::<Vec<_>>(),
        ),
        (&layout.bin, COMMANDS.iter().collect()),
    ] {
        std::fs::create_dir_all(at(dir))
            .with_context(|| format!("creating {}", at(dir).display()))?;
        for name in names {
            let to = at(dir).join(name);
            copy_program(&target.join(name), &to, opts.link)?;
            programs.push(to);
        }
    }
    println!(
        "installed {} daemons in {} and {} commands in {}",
        DAEMONS.len() + SUPERVISED.len(),
        at(&layout.sbin).display(),
        COMMANDS.len(),
        at(&layout.bin).display()
    );

    // LSF's C API: the library and the headers.
    let how = if opts.link {
        crate::capi::Place::HardLink
    } else {
        crate::capi::Place::Copy
    };
    crate::capi::place_library(&target, &at(&layout.lib), how)?;
    crate::capi::place_headers(&at(&layout.include))?;
    println!(
        "installed LSF's C API: {} ({}) in {}, headers in {}",
        crate::capi::LIBRARY,
        crate::capi::ALIASES.join(", "),
        at(&layout.lib).display(),
        at(&layout.include).join("lsf").display()
    );

    // Units.
    std::fs::create_dir_all(at(&layout.units))?;
    for (name, text) in UNITS {
        std::fs::write(at(&layout.units).join(name), rewrite_unit(text, &layout))?;
    }
    println!(
        "installed {} systemd units in {}",
        UNITS.len(),
        at(&layout.units).display()
    );

    // Directories the configuration names.
    for d in [&layout.serverdir, &layout.logdir] {
        std::fs::create_dir_all(at(d))?;
    }
    std::fs::create_dir_all(at(&layout
        .statedir
        .join("work")
        .join(CLUSTER)
        .join("logdir")))?;
    std::fs::create_dir_all(at(&layout.statedir.join("sbd")))?;

    // The configuration template, unless there is a configuration already.
    let conf = at(&layout.confdir);
    if conf.join("lsf.conf").exists() {
        println!(
            "kept the configuration in {} (lsf.conf exists)",
            conf.display()
        );
    } else {
        for (rel, text) in config_files(&layout) {
            let path = conf.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, text)?;
        }
        println!(
            "installed the configuration template in {} (edit lsf.cluster.{CLUSTER}; add basalt.key)",
            conf.display()
        );
    }
    validate_installed(&conf, &layout.confdir)?;

    // No path into the source tree in anything that names paths.
    let needle = workspace.display().to_string();
    let mut leaks = files_containing(&conf, &needle);
    leaks.extend(files_containing(&at(&layout.units), &needle));
    if !leaks.is_empty() {
        bail!(
            "installed files name the source tree {needle}:\n  {}",
            leaks
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }

    // Every program answers --help.
    let problems: Vec<String> = programs
        .iter()
        .filter_map(|p| {
            help_problem(p).map(|why| {
                format!(
                    "{}: {why}",
                    p.file_name().unwrap_or_default().to_string_lossy()
                )
            })
        })
        .collect();
    if problems.is_empty() {
        println!("every installed program answers --help");
    } else {
        let msg = format!(
            "{} of {} installed programs do not answer --help (exit 0 with output):\n  {}",
            problems.len(),
            programs.len(),
            problems.join("\n  ")
        );
        if opts.strict_help {
            bail!(msg);
        }
        eprintln!("warning: {msg}");
    }
    println!(
        "Basalt is installed under {}{}.",
        dest.map(|d| d.display().to_string()).unwrap_or_default(),
        layout.prefix.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        let usr = Layout::new(Path::new("/usr"), None, None).unwrap();
        assert_eq!(usr.confdir, Path::new("/etc/basalt"));
        assert_eq!(usr.sbin, Path::new("/usr/sbin"));
        assert_eq!(usr.units, Path::new("/usr/lib/systemd/system"));
        assert_eq!(usr.statedir, Path::new("/var/lib/basalt"));
        let opt = Layout::new(Path::new("/opt/basalt"), None, None).unwrap();
        assert_eq!(opt.confdir, Path::new("/opt/basalt/etc/basalt"));
        assert_eq!(opt.logdir, Path::new("/opt/basalt/var/log/basalt"));
        let etc = Layout::new(Path::new("/opt/b"), Some(Path::new("/etc")), None).unwrap();
        assert_eq!(etc.confdir, Path::new("/etc/basalt"));
        assert!(Layout::new(Path::new("opt"), None, None).is_err());
        assert_eq!(
            staged(Some(Path::new("/tmp/d")), Path::new("/usr/bin")),
            Path::new("/tmp/d/usr/bin")
        );
    }

    #[test]
    fn units_name_the_prefix() {
        let l = Layout::new(Path::new("/opt/basalt"), None, None).unwrap();
        for (_, text) in UNITS {
            let u = rewrite_unit(text, &l);
            assert!(!u.contains("/usr/sbin"), "{u}");
            assert!(u.contains("ExecStart=/opt/basalt/sbin/"), "{u}");
            assert!(
                u.contains("Environment=LSF_ENVDIR=/opt/basalt/etc/basalt\n"),
                "{u}"
            );
            assert!(u.contains("EnvironmentFile=-/etc/default/basalt"), "{u}");
        }
        // For /usr the units stay as written.
        let usr = Layout::new(Path::new("/usr"), None, None).unwrap();
        for (_, text) in UNITS {
            assert_eq!(rewrite_unit(text, &usr), *text);
        }
    }

    #[test]
    fn the_template_names_the_layout() {
        let l = Layout::new(Path::new("/opt/basalt"), None, None).unwrap();
        let files = config_files(&l);
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(
            names,
            [
                "lsf.conf",
                "lsf.shared",
                "lsf.cluster.basalt",
                "lsbatch/basalt/configdir/lsb.params",
                "lsbatch/basalt/configdir/lsb.queues",
                "lsbatch/basalt/configdir/lsb.hosts"
            ]
        );
        let conf = &files[0].1;
        assert!(
            conf.contains("LSF_ENVDIR=/opt/basalt/etc/basalt\n"),
            "{conf}"
        );
        assert!(conf.contains("LSB_SHAREDIR=/opt/basalt/var/lib/basalt/work\n"));
        assert!(!conf.contains('@'), "{conf}");
        for (_, text) in &files {
            assert!(!text.contains("/nonexistent"), "{text}");
        }
    }
}
