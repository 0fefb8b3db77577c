//! The daemons of a cluster directory (`cargo xtask up`), and `down` (their jobs, then
//! the daemons) and `status`.
//!
//! Which processes are the cluster's daemons: those `up` started have their pid in
//! `<dir>/run`, but not every daemon of the cluster was started by `up` — mbatchd is
//! started by the master's sbatchd, `lsadmin limstartup` and `badmin hstartup` start
//! daemons, and an administrator may start one by hand (`mbatchd --recover`, an mbatchd
//! run in a shell to read its messages). One whose starter died (an sbatchd killed)
//! lives on with init as its parent, holding its port and the event-log lock, and every
//! later start of the cluster fails. So every process is looked at: one whose program
//! is `lim`, `res`, `sbatchd` or `mbatchd` belongs to the cluster when it was started
//! from `<dir>/bin`, or runs on the cluster's configuration (`-d <dir>/conf` on its
//! command line, or `LSF_ENVDIR=<dir>/conf` in its environment, as every daemon of the
//! cluster inherits it), or holds the cluster's event-log lock (the mbatchd named in
//! `#lsb.event.lock` with the cluster's `lsb.events` open). The processes that carry
//! jobs and tasks (`sbatchd --job-supervisor`, `res --worker`) are not daemons here:
//! they end with their jobs (ended first, or kept with `--keep-jobs`).
//!
//! `down` signals every daemon found (SIGTERM), looks again until none is left — a
//! daemon started meanwhile (an sbatchd restarting its mbatchd while it stops) is
//! found and signalled in turn — and after 10 s sends SIGKILL to what remains; it
//! names each daemon it stopped and how it was found.

use crate::{DAEMONS, HOLLOW, SUPERVISED, jobs, multi};
use anyhow::Result;
use basalt_config::embedded::DefaultCluster;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(crate) fn pid_dir(top: &Path) -> PathBuf {
    top.join("run")
}

/// Running daemons recorded in `<top>/run`: (pid file, pid, alive).
pub(crate) fn recorded(top: &Path) -> Vec<(PathBuf, i32, bool)> {
    let Ok(entries) = std::fs::read_dir(pid_dir(top)) else {
        return Vec::new();
    };
    let mut out: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "pid"))
        .filter_map(|e| {
            let pid: i32 = std::fs::read_to_string(e.path())
                .ok()?
                .trim()
                .parse()
                .ok()?;
            Some((e.path(), pid, is_ours(pid, top)))
        })
        .collect();
    out.sort();
    out
}

/// How a process was found to be a daemon of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// Its pid file in `<dir>/run` (`up` started it).
    PidFile,
    /// Its program is in `<dir>/bin`.
    Bin,
    /// It runs on the cluster's configuration directory (`-d` or `LSF_ENVDIR`).
    Config,
    /// It holds the cluster's event-log lock.
    LockHolder,
}

/// A daemon of a cluster directory.
#[derive(Debug, Clone)]
pub(crate) struct Daemon {
    pub pid: i32,
    /// `lim`, `res`, `sbatchd` or `mbatchd`.
    pub name: String,
    /// Its host (`-H`), when its command line names one.
    pub host: Option<String>,
    pub found: Found,
    /// The cluster directory.
    pub top: PathBuf,
}

impl Daemon {
    /// `mbatchd for hostA (pid 123, not started by up: runs on <dir>/conf; parent 1)`.
    pub(crate) fn describe(&self, killed: bool) -> String {
        let host = self
            .host
            .as_deref()
            .map(|h| format!(" for {h}"))
            .unwrap_or_default();
        let mut notes = vec![format!("pid {}", self.pid)];
        match self.found {
            Found::PidFile => {}
            Found::Bin => notes.push(format!(
                "not started by up: runs {}",
                self.top.join("bin").join(&self.name).display()
            )),
            Found::Config => notes.push(format!(
                "not started by up: runs on {}",
                DefaultCluster::envdir(&self.top).display()
            )),
            Found::LockHolder => notes.push("not started by up: holds the event-log lock".into()),
        }
        if killed {
            notes.push("SIGKILL".into());
        }
        format!("{}{host} ({})", self.name, notes.join(", "))
    }
}

/// The arguments of a NUL-separated command line.
fn args(cmdline: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    if v.last().is_some_and(|a| a.is_empty()) {
        v.pop();
    }
    v
}

/// The value following `flag` in `args`.
fn arg_after<'a>(args: &[&'a [u8]], flag: &str) -> Option<&'a [u8]> {
    args.iter()
        .position(|a| *a == flag.as_bytes())
        .and_then(|i| args.get(i + 1).copied())
}

fn as_path(b: &[u8]) -> &Path {
    Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b))
}

/// The daemon name of a process with this command line, when it is one of ours (not a
/// job supervisor or a RES worker).
fn daemon_name(args: &[&[u8]]) -> Option<String> {
    let prog = as_path(args.first()?);
    let name = prog.file_name()?.to_str()?;
    if !DAEMONS
        .iter()
        .chain(SUPERVISED)
        .chain(std::iter::once(&HOLLOW))
        .any(|d| *d == name)
    {
        return None;
    }
    if args
        .iter()
        .any(|a| *a == b"--job-supervisor" || *a == b"--worker")
    {
        return None;
    }
    Some(name.to_owned())
}

/// Is the process of this command line and environment a daemon of the cluster in
/// `top`: its name, its host (`-H`), and how it is seen to be the cluster's.
pub(crate) fn daemon_of(
    cmdline: &[u8],
    environ: &[u8],
    top: &Path,
) -> Option<(String, Option<String>, Found)> {
    let args = args(cmdline);
    let name = daemon_name(&args)?;
    let host = arg_after(&args, "-H").map(|h| String::from_utf8_lossy(h).into_owned());
    let envdir = DefaultCluster::envdir(top);
    let found = if as_path(args[0]).starts_with(top.join("bin")) {
        Found::Bin
    } else {
        match arg_after(&args, "-d") {
            // `-d` wins over the environment (an inherited LSF_ENVDIR of another cluster).
            Some(d) if as_path(d) == envdir => Found::Config,
            Some(_) => return None,
            None => {
                let env = jobs::env_value(environ, "LSF_ENVDIR")?;
                if as_path(env) != envdir {
                    return None;
                }
                Found::Config
            }
        }
    };
    Some((name, host, found))
}

/// (state, ppid) from `/proc/<pid>/stat`.
fn stat_of(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    Some((state, ppid))
}

/// The process `pid` exists and is not a zombie.
pub(crate) fn alive(pid: i32) -> bool {
    stat_of(pid).is_some_and(|(s, _)| s != 'Z')
}

/// True when `pid` is alive and is a daemon of the cluster in `top` (guards against pid
/// reuse).
pub(crate) fn is_ours(pid: i32, top: &Path) -> bool {
    alive(pid) && daemon_at(pid, top).is_some()
}

/// `daemon_of` for a live process.
fn daemon_at(pid: i32, top: &Path) -> Option<(String, Option<String>, Found)> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    daemon_of(&cmdline, &environ, top)
}

/// The mbatchd holding the event-log lock of the cluster in `top`: the pid the lock
/// file names, when that process is an mbatchd with the cluster's `lsb.events` open.
fn lock_holder(top: &Path) -> Option<Daemon> {
    let loaded = basalt_config::load(&DefaultCluster::envdir(top)).ok()?;
    let logdir = loaded.config.logdir();
    let holder = std::fs::read_to_string(logdir.join(basalt_eventlog::LOCK_FILE)).ok()?;
    let (host, pid) = holder.trim().rsplit_once(':')?;
    let pid: i32 = pid.parse().ok()?;
    if pid <= 1 || pid == std::process::id() as i32 || !alive(pid) {
        return None;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let name = daemon_name(&args(&cmdline))?;
    let events = logdir.join(basalt_eventlog::EVENTS_FILE);
    let holds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .filter_map(Result::ok)
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == events));
    (name == "mbatchd" && holds).then(|| Daemon {
        pid,
        name,
        host: Some(host.to_owned()),
        found: Found::LockHolder,
        top: top.to_path_buf(),
    })
}

/// Every live daemon of the clusters in `tops` (see the module's documentation).
pub(crate) fn find(tops: &[PathBuf]) -> Vec<Daemon> {
    let me = std::process::id() as i32;
    let mut found: BTreeMap<i32, Daemon> = BTreeMap::new();
    let pids: Vec<i32> = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .collect()
        })
        .unwrap_or_default();
    for top in tops {
        let files: BTreeMap<i32, PathBuf> = recorded(top)
            .into_iter()
            .map(|(file, pid, _)| (pid, file))
            .collect();
        for &pid in &pids {
            if pid == me || found.contains_key(&pid) || !alive(pid) {
                continue;
            }
            if let Some((name, host, how)) = daemon_at(pid, top) {
                let how = if files.contains_key(&pid) {
                    Found::PidFile
                } else {
                    how
                };
                found.insert(
                    pid,
                    Daemon {
                        pid,
                        name,
                        host,
                        found: how,
                        top: top.clone(),
                    },
                );
            }
        }
        if let Some(d) = lock_holder(top) {
            found.entry(d.pid).or_insert(d);
        }
    }
    found.into_values().collect()
}

/// Stop the cluster(s) started from `top`: its own daemons and, after `up --clusters`,
/// every cluster's; first their jobs, unless `keep_jobs`.
pub(crate) fn down(top: &Path, keep_jobs: bool) -> Result<()> {
    let tops = multi::all_tops(top);
    let envdirs: Vec<PathBuf> = tops.iter().map(|t| DefaultCluster::envdir(t)).collect();
    // First the jobs, while the daemons run, so the jobs' ends are recorded.
    let (mut ended, mut killed) = if keep_jobs {
        (0, 0)
    } else {
        jobs::end_jobs(&envdirs, Duration::from_secs(10))
    };
    let stopped = stop(&tops);
    if keep_jobs {
        let left: std::collections::BTreeSet<_> =
            jobs::find(&envdirs).into_iter().map(|p| p.job).collect();
        if !left.is_empty() {
            println!("Left {} job(s) running (--keep-jobs).", left.len());
        }
    } else {
        // A job dispatched while the daemons were stopping.
        let (e, k) = jobs::end_jobs(&envdirs, Duration::from_secs(5));
        ended += e;
        killed += k;
        if ended > 0 {
            let forced = if killed > 0 {
                format!(" ({killed} with SIGKILL)")
            } else {
                String::new()
            };
            println!("Ended {ended} job(s){forced}.");
        }
    }
    if stopped.is_empty() {
        println!("No Basalt daemons running from {}.", recorded_where(top));
    } else {
        println!("Stopped {} daemon(s).", stopped.len());
    }
    Ok(())
}

/// Where `down` and `status` look for daemons of `top`, for their messages.
pub(crate) fn recorded_where(top: &Path) -> String {
    let members = multi::members(top);
    if members.is_empty() {
        top.display().to_string()
    } else {
        format!(
            "{} or the directories of clusters {} under it",
            top.display(),
            members.join(" ")
        )
    }
}

/// A daemon `stop` stopped, and whether it needed SIGKILL.
#[derive(Debug, Clone)]
pub(crate) struct Stopped {
    pub daemon: Daemon,
    pub killed: bool,
}

/// Stop every daemon of the clusters in `tops` (SIGTERM; again for any that appears
/// meanwhile; SIGKILL to those left after 10 s), print a line for each, and forget
/// their pid files. What was stopped.
pub(crate) fn stop(tops: &[PathBuf]) -> Vec<Stopped> {
    let mut seen: BTreeMap<i32, Stopped> = BTreeMap::new();
    let term_until = Instant::now() + Duration::from_secs(10);
    let kill_until = term_until + Duration::from_secs(5);
    loop {
        let running = find(tops);
        if running.is_empty() {
            break;
        }
        let now = Instant::now();
        for d in running {
            let pid = Pid::from_raw(d.pid);
            if now >= term_until {
                let _ = kill(pid, Signal::SIGKILL);
                if let Some(s) = seen.get_mut(&d.pid) {
                    s.killed = true;
                }
            } else if !seen.contains_key(&d.pid) {
                let _ = kill(pid, Signal::SIGTERM);
            }
            seen.entry(d.pid).or_insert(Stopped {
                daemon: d,
                killed: now >= term_until,
            });
        }
        if now >= kill_until {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for t in tops {
        for (file, pid, _) in recorded(t) {
            if !is_ours(pid, t) {
                let _ = std::fs::remove_file(file);
            }
        }
    }
    let stopped: Vec<Stopped> = seen.into_values().collect();
    for s in &stopped {
        let still = alive(s.daemon.pid);
        println!(
            "{} {}.",
            if still { "Could not stop" } else { "Stopped" },
            s.daemon.describe(s.killed)
        );
    }
    stopped
}

pub(crate) fn status(top: &Path) -> Result<()> {
    let tops = multi::all_tops(top);
    let running = find(&tops);
    let files: Vec<(PathBuf, PathBuf, i32, bool)> = tops
        .iter()
        .flat_map(|t| {
            recorded(t)
                .into_iter()
                .map(move |(f, pid, alive)| (t.clone(), f, pid, alive))
        })
        .collect();
    if running.is_empty() && files.is_empty() {
        println!("No Basalt daemons running from {}.", recorded_where(top));
        return Ok(());
    }
    for t in &tops {
        let mine: Vec<&Daemon> = running.iter().filter(|d| d.top == *t).collect();
        let dead: Vec<&(PathBuf, PathBuf, i32, bool)> =
            files.iter().filter(|f| f.0 == *t && !f.3).collect();
        let indent = if t == top {
            ""
        } else {
            if mine.is_empty() && dead.is_empty() {
                continue;
            }
            let name = t
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            println!("Cluster {name} ({}):", t.display());
            "  "
        };
        for d in mine {
            println!("{indent}running: {}", d.describe(false));
        }
        for (_, file, pid, _) in dead {
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            println!("{indent}not running: {name} (pid file with pid {pid})");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_config::embedded::DefaultHost;
    use std::process::Command;

    /// A cluster directory with the default configuration, removed when dropped.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str) -> Scratch {
        let top = std::env::temp_dir().join(format!("xtask-down-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&top);
        let hosts = vec![DefaultHost {
            name: "hostA".into(),
            address: None,
            server: true,
        }];
        DefaultCluster::new("basalt", &crate::current_user(), hosts)
            .write(&top)
            .unwrap();
        Scratch(top)
    }

    /// A stand-in for a daemon: a copy of `sleep` named `name` in `dir` (not the
    /// cluster's `bin`).
    fn fake(dir: &Path, name: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let exe = dir.join(name);
        std::fs::copy("/bin/sleep", &exe).unwrap();
        exe
    }

    /// Alive and not a zombie.
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
    }

    /// Wait until `pid` runs `exe` (its exec is done).
    fn wait_exec(pid: i32, exe: &Path) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if cmd.starts_with(exe.as_os_str().as_encoded_bytes()) {
                return;
            }
            assert!(Instant::now() < deadline, "{} never started", exe.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Start `exe 600` through a shell that exits at once (its parent is gone, as an
    /// mbatchd whose sbatchd was killed), with `env`; its pid.
    fn orphan(exe: &Path, env: &[(&str, &Path)]) -> i32 {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("\"$0\" 600 </dev/null >/dev/null 2>&1 & echo $!")
            .arg(exe)
            .env_remove("LSF_ENVDIR");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        wait_exec(pid, exe);
        pid
    }

    /// Issue 49, item 5: an mbatchd of the cluster that `up` did not start and no pid
    /// file names, whose parent is gone (started by hand for the cluster's configuration,
    /// or left by a killed sbatchd), is stopped by `down`, and said so.
    #[test]
    fn down_stops_an_orphaned_mbatchd_it_did_not_start() {
        let top = scratch("orphan");
        let exe = fake(&top.0.join("elsewhere"), "mbatchd");
        let envdir = DefaultCluster::envdir(&top.0);
        let pid = orphan(&exe, &[("LSF_ENVDIR", &envdir)]);
        // Another cluster's daemon of the same name is left alone.
        let other = scratch("other");
        let other_pid = orphan(&exe, &[("LSF_ENVDIR", &DefaultCluster::envdir(&other.0))]);
        let stopped = stop(std::slice::from_ref(&top.0));
        let gone = !alive(pid);
        let other_alive = alive(other_pid);
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        let _ = kill(Pid::from_raw(other_pid), Signal::SIGKILL);
        assert!(gone, "the orphaned mbatchd (pid {pid}) is still running");
        assert!(other_alive, "another cluster's mbatchd was stopped");
        assert_eq!(stopped.len(), 1, "{stopped:?}");
        let d = &stopped[0].daemon;
        assert_eq!(
            (d.pid, d.name.as_str(), &d.found),
            (pid, "mbatchd", &Found::Config)
        );
        assert!(
            d.describe(false).contains("not started by up"),
            "{}",
            d.describe(false)
        );
    }

    /// The mbatchd named by the cluster's event-log lock, with the cluster's lsb.events
    /// open, is the cluster's whatever its command line and environment say; one that
    /// the lock names but that has not the file open is not.
    #[test]
    fn down_stops_the_holder_of_the_event_log_lock() {
        let top = scratch("holder");
        let exe = fake(&top.0.join("elsewhere"), "mbatchd");
        let logdir = basalt_config::load(&DefaultCluster::envdir(&top.0))
            .unwrap()
            .config
            .logdir();
        std::fs::create_dir_all(&logdir).unwrap();
        let events = logdir.join(basalt_eventlog::EVENTS_FILE);
        std::fs::write(&events, "").unwrap();
        // Not the lock's holder: the file is not open.
        let stranger = orphan(&exe, &[]);
        std::fs::write(
            logdir.join(basalt_eventlog::LOCK_FILE),
            format!("hostA:{stranger}"),
        )
        .unwrap();
        assert!(find(std::slice::from_ref(&top.0)).is_empty());
        // The holder: lsb.events is its standard input.
        let holder = {
            let mut c = Command::new(&exe);
            c.arg("600").env_remove("LSF_ENVDIR");
            c.stdin(std::fs::File::open(&events).unwrap())
                .stdout(std::process::Stdio::null());
            c.spawn().unwrap()
        };
        let pid = holder.id() as i32;
        wait_exec(pid, &exe);
        std::fs::write(
            logdir.join(basalt_eventlog::LOCK_FILE),
            format!("hostA:{pid}"),
        )
        .unwrap();
        let stopped = stop(std::slice::from_ref(&top.0));
        let mut holder = holder;
        let status = holder.wait().unwrap();
        let _ = kill(Pid::from_raw(stranger), Signal::SIGKILL);
        assert_eq!(
            stopped
                .iter()
                .map(|s| (s.daemon.pid, s.daemon.found.clone()))
                .collect::<Vec<_>>(),
            [(pid, Found::LockHolder)]
        );
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(Signal::SIGTERM as i32));
    }

    /// Which command lines and environments are a cluster's daemons.
    #[test]
    fn daemons_are_recognised_by_program_and_configuration() {
        let top = Path::new("/tmp/c");
        let cmd = |v: &[&str]| v.join("\0").into_bytes();
        let env = b"PATH=/bin\0LSF_ENVDIR=/tmp/c/conf\0".as_slice();
        let none = b"PATH=/bin\0".as_slice();
        // Started by up, from <dir>/bin.
        assert_eq!(
            (daemon_of(&cmd(&["/tmp/c/bin/lim", "-H", "hostA"]), env, top)),
            Some(("lim".into(), Some("hostA".into()), Found::Bin))
        );
        // Started by sbatchd from the build directory, with -d.
        assert_eq!(
            (daemon_of(
                &cmd(&[
                    "/src/target/debug/mbatchd",
                    "-H",
                    "hostA",
                    "-d",
                    "/tmp/c/conf"
                ]),
                none,
                top
            )),
            Some(("mbatchd".into(), Some("hostA".into()), Found::Config))
        );
        // By hand, with LSF_ENVDIR.
        assert_eq!(
            (daemon_of(&cmd(&["mbatchd"]), env, top)),
            Some(("mbatchd".into(), None, Found::Config))
        );
        // Another cluster's: its -d says so, whatever it inherited.
        assert_eq!(
            daemon_of(&cmd(&["mbatchd", "-d", "/tmp/d/conf"]), env, top),
            None
        );
        assert_eq!(
            daemon_of(&cmd(&["sbatchd"]), b"LSF_ENVDIR=/tmp/c/confx\0", top),
            None
        );
        // Not daemons: a command, the job supervisor, a RES worker, a program whose
        // name only contains a daemon's.
        for c in [
            cmd(&["/tmp/c/bin/bsub", "sleep", "1"]),
            cmd(&["/tmp/c/bin/sbatchd", "--job-supervisor", "/x"]),
            cmd(&["/tmp/c/bin/res", "--worker"]),
            cmd(&["/tmp/c/bin/mbatchd-helper"]),
            cmd(&["/usr/bin/lsres", "-d", "/tmp/c/conf"]),
        ] {
            assert_eq!(daemon_of(&c, env, top), None, "{c:?}");
        }
    }
}
