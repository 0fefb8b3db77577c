//! The daemons a run directory started (`cargo xtask up`): their pid files in
//! `<dir>/run`, the ones other daemons started since (found by command line), and
//! `down` (their jobs, then the daemons) and `status`.

use crate::{DAEMONS, jobs, multi};
use anyhow::Result;
use basalt_config::embedded::DefaultCluster;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
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

/// Our daemons of `top` running without a pid file among `known`.
pub(crate) fn unrecorded(top: &Path, known: &[(&PathBuf, PathBuf, i32, bool)]) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id() as i32;
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != me && !known.iter().any(|k| k.2 == *pid))
        .filter(|pid| is_ours(*pid, top))
        .collect()
}

/// True when `pid` is alive and runs one of our binaries (guards against pid reuse).
pub(crate) fn is_ours(pid: i32, top: &Path) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let cmdline = String::from_utf8_lossy(&cmdline);
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let zombie = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
    !zombie
        && DAEMONS.iter().any(|d| cmdline.contains(d))
        && cmdline.contains(&*top.join("bin").to_string_lossy())
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
    let stopped = if tops
        .iter()
        .all(|t| recorded(t).is_empty() && unrecorded(t, &[]).is_empty())
    {
        None
    } else {
        Some(stop(&tops))
    };
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
    match stopped {
        Some(n) => println!("Stopped {n} daemon(s)."),
        None => println!("No Basalt daemons recorded in {}.", recorded_where(top)),
    }
    Ok(())
}

/// Where `down` and `status` look for daemons of `top`, for their messages.
pub(crate) fn recorded_where(top: &Path) -> String {
    let members = multi::members(top);
    if members.is_empty() {
        pid_dir(top).display().to_string()
    } else {
        format!(
            "{} or in the run directories of clusters {} under {}",
            pid_dir(top).display(),
            members.join(" "),
            top.display()
        )
    }
}

/// Stop the daemons recorded in each directory of `tops` (SIGTERM, then SIGKILL after
/// 10 s) and forget them; how many were running.
pub(crate) fn stop(tops: &[PathBuf]) -> usize {
    let mut daemons: Vec<(&PathBuf, PathBuf, i32, bool)> = tops
        .iter()
        .flat_map(|t| {
            recorded(t)
                .into_iter()
                .map(move |(file, pid, alive)| (t, file, pid, alive))
        })
        .collect();
    // Daemons started since by other daemons (`lsadmin limstartup`, `badmin hstartup`)
    // have no pid file: find them by their command line.
    for t in tops {
        for pid in unrecorded(t, &daemons) {
            daemons.push((t, PathBuf::new(), pid, true));
        }
    }
    for (_, _, pid, alive) in &daemons {
        if *alive {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGTERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while daemons.iter().any(|(t, _, pid, _)| is_ours(*pid, t)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    for (t, file, pid, _) in &daemons {
        if is_ours(*pid, t) {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
        if !file.as_os_str().is_empty() {
            let _ = std::fs::remove_file(file);
        }
    }
    daemons.iter().filter(|d| d.3).count()
}

pub(crate) fn status(top: &Path) -> Result<()> {
    let tops = multi::all_tops(top);
    if tops.iter().all(|t| recorded(t).is_empty()) {
        println!("No Basalt daemons recorded in {}.", recorded_where(top));
        return Ok(());
    }
    for t in &tops {
        let daemons = recorded(t);
        let indent = if t == top {
            ""
        } else {
            if daemons.is_empty() {
                continue;
            }
            let name = t
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            println!("Cluster {name} ({}):", t.display());
            "  "
        };
        for (file, pid, alive) in daemons {
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            println!(
                "{indent}{name:<24} pid {pid:<8} {}",
                if alive { "running" } else { "not running" }
            );
        }
    }
    Ok(())
}
