//! `cargo xtask up --subnet` / `down` on the built binaries: `down` ends a running job;
//! `down` stops an mbatchd whose sbatchd was killed (no pid file names it, its parent is
//! init), and the cluster starts again after it.
//! Skipped (with a message) when the daemons and commands are not built in the target
//! directory (`cargo build --bins`): `up --no-build` uses them as they are.

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn xtask() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.env("RUST_BACKTRACE", "0");
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A loopback /24 whose LSF ports are all free on its .1 (tried from a start derived
/// from the pid and `salt`, one per test).
fn free_subnet(salt: u32) -> Option<[u8; 3]> {
    let pid = std::process::id() + 13 * salt;
    (0..200u32).find_map(|k| {
        let b = 100 + ((pid + k) % 100) as u8;
        let c = ((pid / 100 + 7 * k) % 250) as u8;
        let a = Ipv4Addr::new(127, b, c, 1);
        [7869, 6878, 6881, 6882]
            .iter()
            .all(|p| TcpListener::bind((a, *p)).is_ok())
            .then_some([127, b, c])
    })
}

/// Runs `down` on drop, so a failed test leaves nothing running.
struct Cluster(PathBuf);
impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = xtask().arg("down").arg("--dir").arg(&self.0).output();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Pids of processes whose environment has `LSF_ENVDIR=envdir` and a `LSB_JOBID`.
fn job_pids(envdir: &Path) -> Vec<i32> {
    let want = format!("LSF_ENVDIR={}", envdir.display());
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                let vars: Vec<&[u8]> = env.split(|b| *b == 0).collect();
                vars.contains(&want.as_bytes()) && vars.iter().any(|v| v.starts_with(b"LSB_JOBID="))
            })
        })
        .filter(|pid| {
            // Not a zombie.
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.trim_start().to_owned()))
                .is_some_and(|r| !r.starts_with('Z'))
        })
        .collect()
}

/// `up --no-build` on a fresh subnet in a directory of its own; None (after saying
/// why) when the binaries are not built or no subnet is free.
fn up(name: &str, salt: u32, extra: &[&str]) -> Option<Cluster> {
    let Some(net) = free_subnet(salt) else {
        eprintln!("SKIPPED: no loopback /24 with the LSF ports free");
        return None;
    };
    let subnet = format!("{}.{}.{}", net[0], net[1], net[2]);
    let top = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&top);
    let up = xtask()
        .args(["up", "--no-build", "--subnet", &subnet, "--dir"])
        .arg(&top)
        .args(extra)
        .output()
        .expect("running xtask up");
    let cluster = Cluster(top);
    if !up.status.success() && text(&up).contains("not built in") {
        eprintln!("SKIPPED: the daemons and commands are not built; run cargo build --bins first");
        return None;
    }
    assert!(up.status.success(), "up failed:\n{}", text(&up));
    Some(cluster)
}

/// Live mbatchd processes whose command line names `envdir`.
fn mbatchds(envdir: &Path) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let args: Vec<&[u8]> = c.split(|b| *b == 0).collect();
                args.first().is_some_and(|a| a.ends_with(b"/mbatchd"))
                    && args.contains(&envdir.as_os_str().as_encoded_bytes())
            })
        })
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.trim_start().to_owned()))
                .is_some_and(|r| !r.starts_with('Z'))
        })
        .collect()
}

/// The parent of `pid`.
fn ppid(pid: i32) -> Option<i32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Issue 49, item 5: the master's sbatchd is killed with SIGKILL, leaving its mbatchd
/// running with no pid file and init (or a subreaper) as its parent, holding the
/// mbatchd port and the event-log lock. `down` stops it and says so, and the cluster
/// starts again (`up --keep-config`).
#[test]
fn down_stops_an_mbatchd_left_by_a_killed_sbatchd() {
    let Some(cluster) = up("orphan", 1, &[]) else {
        return;
    };
    let top = cluster.0.clone();
    let envdir = top.join("conf");
    let mbd = mbatchds(&envdir);
    assert_eq!(mbd.len(), 1, "one mbatchd: {mbd:?}");
    let mbd = mbd[0];
    let sbd: i32 = std::fs::read_to_string(top.join("run/sbatchd.hostA.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(ppid(mbd), Some(sbd), "mbatchd is sbatchd's child");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(sbd),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while ppid(mbd) == Some(sbd) {
        assert!(Instant::now() < deadline, "mbatchd was not reparented");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        mbatchds(&envdir).contains(&mbd),
        "mbatchd outlived its sbatchd"
    );

    let down = xtask().args(["down", "--dir"]).arg(&top).output().unwrap();
    assert!(down.status.success(), "down failed:\n{}", text(&down));
    let left = mbatchds(&envdir);
    assert!(
        left.is_empty(),
        "mbatchd still running after down: {left:?}\n{}",
        text(&down)
    );
    assert!(
        text(&down).contains(&format!(
            "Stopped mbatchd for hostA (pid {mbd}, not started by up"
        )),
        "down names the mbatchd it stopped:\n{}",
        text(&down)
    );

    let again = xtask()
        .args(["up", "--no-build", "--keep-config", "--dir"])
        .arg(&top)
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "up after down failed:\n{}",
        text(&again)
    );
    drop(cluster);
    assert!(mbatchds(&envdir).is_empty(), "the cluster's drop ran down");
}

#[test]
fn down_ends_the_running_jobs() {
    let Some(net) = free_subnet(0) else {
        eprintln!("SKIPPED: no loopback /24 with the LSF ports free");
        return;
    };
    let subnet = format!("{}.{}.{}", net[0], net[1], net[2]);
    let top = std::env::temp_dir().join(format!("xtask-updown-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&top);
    let up = xtask()
        .args(["up", "--no-build", "--subnet", &subnet, "--dir"])
        .arg(&top)
        .output()
        .expect("running xtask up");
    let cluster = Cluster(top.clone());
    if !up.status.success() && text(&up).contains("not built in") {
        eprintln!(
            "SKIPPED: the daemons and commands are not built ({}); run cargo build --bins first",
            text(&up)
                .lines()
                .find(|l| l.contains("not built"))
                .unwrap_or("")
        );
        return;
    }
    assert!(up.status.success(), "up failed:\n{}", text(&up));
    let out = text(&up);
    assert!(
        out.contains("1 host(s) (hostA)"),
        "one host named hostA on the subnet:\n{out}"
    );
    let conf = std::fs::read_to_string(top.join("conf/lsf.cluster.basalt")).unwrap();
    assert!(conf.contains(&format!("{subnet}.1")), "{conf}");

    let envdir = top.join("conf");
    let bsub = Command::new(top.join("bin/bsub"))
        .args(["sleep", "600"])
        .env("LSF_ENVDIR", &envdir)
        .output()
        .unwrap();
    assert!(bsub.status.success(), "bsub: {}", text(&bsub));
    let deadline = Instant::now() + Duration::from_secs(60);
    let pids = loop {
        let p = job_pids(&envdir);
        if !p.is_empty() {
            break p;
        }
        assert!(Instant::now() < deadline, "the job never started");
        std::thread::sleep(Duration::from_millis(100));
    };

    let down = xtask().args(["down", "--dir"]).arg(&top).output().unwrap();
    assert!(down.status.success(), "down failed:\n{}", text(&down));
    assert!(
        text(&down).contains("Ended 1 job(s)"),
        "down reports the job:\n{}",
        text(&down)
    );
    for pid in pids {
        let gone = !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            });
        assert!(gone, "job process {pid} still running after down");
    }
    assert!(job_pids(&envdir).is_empty());
    drop(cluster);
}
