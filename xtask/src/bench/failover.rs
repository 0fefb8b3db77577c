//! `failover` — master failover with the default timings, on a two-host cluster with 20
//! held jobs in the log, two ways:
//! * host loss: the master's lim, sbatchd and mbatchd are killed with SIGKILL;
//! * hung master: the master's LIM is stopped with SIGSTOP (its sbatchd and mbatchd
//!   keep running: that mbatchd must see the new election and resign, releasing the
//!   event-log lock).
//!
//! Each takes the time until `lsid` (asked from hostB) names hostB, and until a `bsub`
//! sent to hostB's mbatchd port is acknowledged (that mbatchd has taken the event-log
//! lock, replayed lsb.events and serves). Goal: under 3 s for both.

use super::*;

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let mut out = Vec::new();
    for i in 0..runs {
        let (lim_s, mbd_s) = once(ctx, &format!("failover{i}"), false)?;
        let (hung_lim_s, hung_mbd_s) = once(ctx, &format!("failover-hung{i}"), true)?;
        out.push(Run {
            metrics: vec![
                Metric::new("kill -9 of the master -> lsid names hostB", "s", lim_s),
                Metric::new(
                    "kill -9 of the master -> submission acknowledged by hostB",
                    "s",
                    mbd_s,
                )
                .goal(Goal::AtMost(3.0)),
                Metric::new(
                    "SIGSTOP of the master's LIM -> lsid names hostB",
                    "s",
                    hung_lim_s,
                ),
                Metric::new(
                    "SIGSTOP of the master's LIM -> submission acknowledged by hostB",
                    "s",
                    hung_mbd_s,
                )
                .goal(Goal::AtMost(3.0)),
            ],
            notes: vec![
                "default timings: EXINTERVAL 1 s, MASTER_INACTIVITY_LIMIT 2, PROBE_TIMEOUT 2 s \
                 (0.25 s for the silent master), event-lock heartbeat 1 s (takeover after 2.5 s \
                 unchanged, counting the time hostB's sbatchd saw it unchanged before the \
                 election); sbatchd asks its LIM for the master every 100 ms; a hung master's \
                 mbatchd resigns once 2 master checks 150 ms apart name another host; 20 held \
                 jobs carried over"
                    .into(),
            ],
        });
    }
    Ok(out)
}

/// One failover: kill -9 of hostA (`hung`: SIGSTOP of hostA's LIM only). The times
/// until `lsid` names hostB and until hostB's mbatchd acknowledges a submission.
fn once(ctx: &Ctx, name: &str, hung: bool) -> Result<(f64, f64)> {
    let mut cluster = Cluster::start_with(ctx, name, 2, |_| Ok(()))?;
    // Some state to carry over: held jobs in the log.
    for _ in 0..20 {
        let o = cluster
            .command("bsub")
            .args(["-H", "sleep", "60"])
            .stdin(Stdio::null())
            .output()?;
        if !o.status.success() {
            bail!("bsub failed: {}", String::from_utf8_lossy(&o.stderr));
        }
    }
    let hostb_addr = basalt_runtime::mbd_addr(&cluster.config()?, "hostB")?;
    let hostb_mbd = hostb_addr.to_string();
    std::thread::sleep(Duration::from_secs(2));
    let lim_a = cluster.daemon_pid("lim", "hostA");
    let signal = |sig| {
        if let Some(pid) = lim_a {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
        }
    };
    let t = Instant::now();
    if hung {
        signal(nix::sys::signal::Signal::SIGSTOP);
    } else {
        cluster.kill_host("hostA");
    }
    // From hostB, and to hostB's mbatchd only (not the old master's, which may still
    // serve until it resigns).
    let from_b = |name: &str| {
        let mut c = cluster.command(name);
        c.env("BASALT_HOST", "hostB").stdin(Stdio::null());
        c
    };
    let to_b = |name: &str| {
        let mut c = from_b(name);
        c.env("BASALT_MBD_ADDR", &hostb_mbd);
        c
    };
    let ok = |mut c: Command| c.output().is_ok_and(|o| o.status.success());
    let measured = (|| {
        let mut lim_s = None;
        // mbatchd listens only once it holds the lock and has replayed the log: poll its
        // port (a command sent to a port nobody listens on retries only every 300 ms),
        // then submit.
        wait_until("hostB's mbatchd to listen", Duration::from_secs(60), || {
            if lim_s.is_none()
                && from_b("lsid")
                    .output()
                    .ok()
                    .filter(|o| o.status.success())
                    .is_some_and(|o| {
                        String::from_utf8_lossy(&o.stdout)
                            .lines()
                            .any(|l| l.trim() == "My master name is hostB")
                    })
            {
                lim_s = Some(t.elapsed().as_secs_f64());
            }
            lim_s.is_some()
                && std::net::TcpStream::connect_timeout(&hostb_addr, Duration::from_millis(200))
                    .is_ok()
        })?;
        let mut bsub = to_b("bsub");
        bsub.args(["-H", "sleep", "60"]);
        if !ok(bsub) {
            bail!("bsub to hostB's mbatchd failed although it listens");
        }
        let mbd_s = t.elapsed().as_secs_f64();
        let mut bjobs = to_b("bjobs");
        bjobs.args(["-u", "all", "-noheader"]);
        let held = bjobs
            .output()
            .map_or(0, |o| String::from_utf8_lossy(&o.stdout).lines().count());
        if held != 21 {
            bail!("the new mbatchd shows {held} of the 21 held jobs");
        }
        Ok((lim_s.unwrap_or(mbd_s), mbd_s))
    })();
    if hung {
        signal(nix::sys::signal::Signal::SIGCONT);
    }
    measured
}
