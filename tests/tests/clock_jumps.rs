//! Issue 29, item 5, "clock jumps of ±1 h (no false failover, no kills by run limit)",
//! on the real binaries: every daemon and command of a 2-host cluster runs with a small
//! preloaded library that adds an offset, read from a file, to the wall clock
//! (`clock_gettime(CLOCK_REALTIME)`; the monotonic clock is left alone), as when NTP
//! or an administrator steps the clock of every host. With a job running under a run
//! limit of one minute, the clock is stepped an hour forward, then an hour back twice;
//! through each step LIM keeps its master, mbatchd keeps every host `ok` (no host unreach or
//! lost) and the job keeps running; after the steps back, an sbatchd killed for good
//! still makes its host `unreach` within seconds.
//!
//! The pure pieces are tested on manual clocks in `basalt-sched/src/clock_jump_tests.rs`
//! and `basalt-sbatchd/src/supervisor/limits.rs`.

use anyhow::{Context, Result, bail};
use basalt_testkit::{ClusterSpec, ProcessCluster, holds_for, skip, wait_for, work_dir};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `clock_gettime` with the wall clocks moved by the whole seconds written in the file
/// `$BASALT_TEST_CLOCK_OFFSET_FILE`. Only open/read/close (no stdio, no allocation):
/// a forked child of a multi-threaded daemon may read the clock.
const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long offset(void) {
    const char *p = getenv("BASALT_TEST_CLOCK_OFFSET_FILE");
    if (!p) return 0;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    long v = 0, sign = 1;
    char *c = buf;
    if (*c == '-') { sign = -1; c++; }
    for (; *c >= '0' && *c <= '9'; c++) v = v * 10 + (*c - '0');
    return sign * v;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    static int (*real)(clockid_t, struct timespec *);
    if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int r = real(id, ts);
    if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) ts->tv_sec += offset();
    return r;
}
"#;

/// Build the shim in `dir`; None when there is no C compiler.
fn build_shim(dir: &Path) -> Result<Option<PathBuf>> {
    let src = dir.join("clockshift.c");
    let lib = dir.join("libclockshift.so");
    std::fs::write(&src, SHIM)?;
    let out = match std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg("-ldl")
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).context("running cc"),
    };
    if !out.status.success() {
        bail!("cc failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(Some(lib))
}

/// What must hold through a step: hostA is LIM's master, both hosts `ok` in bhosts,
/// the job RUN.
fn steady(c: &ProcessCluster, job: u64) -> (bool, String) {
    let master = c.lsid_master();
    let bhosts = c
        .run("bhosts", &[])
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let ok = bhosts
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("ok"))
        .count();
    let stat = basalt_testkit::jobs::jobs(c)
        .ok()
        .and_then(|m| m.get(&job).map(|r| r.stat.clone()))
        .unwrap_or_default();
    (
        master.as_deref() == Some("hostA") && ok == 2 && stat == "RUN",
        format!("master {master:?}, job {stat:?}, bhosts:\n{bhosts}"),
    )
}

/// Everything the daemons logged.
fn daemon_logs(dir: &Path) -> String {
    let mut all = String::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        all.push_str(&String::from_utf8_lossy(
            &std::fs::read(e.path()).unwrap_or_default(),
        ));
    }
    all
}

#[test]
fn a_wall_clock_step_of_an_hour_either_way_fails_no_master_over_and_kills_no_job() -> Result<()> {
    let tmp = std::env::temp_dir().join(format!("basalt-clockshift-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let Some(lib) = build_shim(&tmp)? else {
        skip(
            "a_wall_clock_step_of_an_hour_either_way_...",
            "no C compiler (cc) to build the clock-shifting library",
        );
        return Ok(());
    };
    let offset = tmp.join("offset");
    std::fs::write(&offset, "0")?;
    let mut spec = ClusterSpec::new(2);
    spec.env = vec![
        ("LD_PRELOAD".into(), lib.display().to_string()),
        (
            "BASALT_TEST_CLOCK_OFFSET_FILE".into(),
            offset.display().to_string(),
        ),
    ];
    // sbatchd hellos every second: unreach after 3 s of silence, as the step would seem.
    let c = ProcessCluster::start_batch("clock-jumps", &spec, "BASALT_SBD_HELLO_INTERVAL = 1")?;
    let work = work_dir(c.dir.path())?;
    // A run limit of one minute; the test's steps are over well before it.
    let job = c.bsub(&work, &["-W", "1", "-J", "limited", "sleep", "600"])?;
    wait_for("the job to run", Duration::from_secs(30), || {
        let (ok, seen) = steady(&c, job);
        (ok.then_some(()), seen)
    })?;
    // An hour forward, back to the true time (an hour back), an hour back again.
    for (step, seen, times, label) in [
        ("3600", "stepped by +3600", 1, "an hour forward"),
        (
            "0",
            "stepped by -3600",
            1,
            "an hour back (to the true time)",
        ),
        ("-3600", "stepped by -3600", 2, "an hour back again"),
    ] {
        std::fs::write(&offset, step)?;
        eprintln!("clock_jumps: wall clock stepped {label}");
        // mbatchd saw it (so the daemons' wall clock really moved).
        wait_for(
            &format!("mbatchd to log the step {label}"),
            Duration::from_secs(10),
            || {
                let n = daemon_logs(&c.dir.path().join("log")).matches(seen).count();
                ((n >= times).then_some(()), format!("{n} times {seen:?}"))
            },
        )?;
        holds_for(
            &format!("the master, the hosts and the job after a step {label}"),
            Duration::from_secs(8),
            || steady(&c, job),
        )?;
    }
    // After the steps back, a host that really goes silent is still found out on time
    // (three missed hellos), not once the clock has caught up.
    let mut c = c;
    c.kill9_daemon("sbatchd", "hostB")?;
    wait_for(
        "hostB to be unreach after its sbatchd was killed",
        Duration::from_secs(15),
        || {
            let bhosts = c
                .run("bhosts", &[])
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            let unreach = bhosts.lines().any(|l| {
                let mut w = l.split_whitespace();
                w.next() == Some("hostB") && w.next() == Some("unreach")
            });
            (unreach.then_some(()), bhosts)
        },
    )?;
    std::fs::write(&offset, "0")?;
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}
