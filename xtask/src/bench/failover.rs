//! `failover` — master failover with the default timings, on a three-host cluster with 20
//! held jobs in the log and a job running on hostC, two ways:
//! * host loss: the master's lim, sbatchd and mbatchd are killed with SIGKILL;
//! * hung master: the master's LIM is stopped with SIGSTOP (its sbatchd and mbatchd
//!   keep running: that mbatchd must see the new election and resign, releasing the
//!   event-log lock).
//!
//! Each takes the time until `lsid` (asked from hostB) names hostB, until `lsid` names
//! hostB on every host but the lost one (asked from hostB and from hostC: hostC is
//! neither the old nor the new master), until a `bsub` sent to hostB's mbatchd port is
//! acknowledged (that mbatchd has taken the event-log lock, replayed lsb.events and
//! serves), and until hostC's running job is `RUN` in hostB's mbatchd (`bjobs` run on
//! hostC; the start of the streak of `RUN` answers that lasted a second: not `UNKWN`
//! while hostC's LIM has not reported to the new master). Goal: under 3 s for each.

use super::*;

/// How long hostC's job must stay `RUN` in the new mbatchd's answers to count.
const RUN_HELD: Duration = Duration::from_secs(1);

/// A command of the cluster of `envdir` (binaries in `bin`) run as on `host`, sent to
/// the mbatchd at `mbd` when given (as `Cluster::command` makes it, from another host).
pub fn command_on(bin: &Path, envdir: &Path, host: &str, name: &str, mbd: Option<&str>) -> Command {
    let mut c = Command::new(bin.join(name));
    c.env("LSF_ENVDIR", envdir)
        .env("BASALT_HOST", host)
        .env_remove("LSF_SERVER_HOSTS")
        .env_remove("BASALT_MBD_ADDR")
        .stdin(Stdio::null());
    if let Some(a) = mbd {
        c.env("BASALT_MBD_ADDR", a);
    }
    c
}

/// Whether something accepts connections at `addr` (within 200 ms). A lost mbatchd's
/// successor listens only once it holds the event-log lock and has replayed lsb.events;
/// polling its port tells when to send the submission that times the failover (a
/// command sent to a port nobody listens on retries only every 300 ms).
pub fn listens(addr: std::net::SocketAddr) -> bool {
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

/// The times of one failover, in seconds from the loss.
struct Times {
    /// `lsid` asked from hostB names hostB.
    lsid_b: f64,
    /// `lsid` names hostB on every host but the lost one.
    lsid_all: f64,
    /// A submission is acknowledged by hostB's mbatchd.
    mbd: f64,
    /// hostC's running job is `RUN` in hostB's mbatchd (and stays so).
    run_c: f64,
}

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let mut out = Vec::new();
    for i in 0..runs {
        let lost = once(ctx, &format!("failover{i}"), false)?;
        let hung = once(ctx, &format!("failover-hung{i}"), true)?;
        let mut metrics = Vec::new();
        for (how, t) in [
            ("kill -9 of the master", &lost),
            ("SIGSTOP of the master's LIM", &hung),
        ] {
            metrics.extend([
                Metric::new(&format!("{how} -> lsid names hostB"), "s", t.lsid_b),
                Metric::new(
                    &format!("{how} -> every host names hostB (lsid on hostB and hostC)"),
                    "s",
                    t.lsid_all,
                )
                .goal(Goal::AtMost(3.0)),
                Metric::new(
                    &format!("{how} -> submission acknowledged by hostB"),
                    "s",
                    t.mbd,
                )
                .goal(Goal::AtMost(3.0)),
                Metric::new(
                    &format!("{how} -> hostC's running job RUN in hostB's mbatchd"),
                    "s",
                    t.run_c,
                )
                .goal(Goal::AtMost(3.0)),
            ]);
        }
        out.push(Run {
            metrics,
            notes: vec![
                "three hosts; default timings: EXINTERVAL 1 s, MASTER_INACTIVITY_LIMIT 2, \
                 RETRY_LIMIT 2, PROBE_TIMEOUT 2 s (0.25 s for the silent master), event-lock \
                 heartbeat 1 s (takeover after 2.5 s unchanged, counting the time hostB's \
                 sbatchd saw it unchanged before the election); hosts that are not master \
                 follow the new master at its takeover; sbatchd asks its LIM for the master \
                 every 100 ms and retries a failed hello every 200 ms; a hung master's \
                 mbatchd resigns once 2 master checks 150 ms apart name another host; 20 held \
                 jobs carried over, one job running on hostC"
                    .into(),
            ],
        });
    }
    Ok(out)
}

/// One failover: kill -9 of hostA (`hung`: SIGSTOP of hostA's LIM only).
fn once(ctx: &Ctx, name: &str, hung: bool) -> Result<Times> {
    let mut cluster = Cluster::start_with(ctx, name, 3, |_| Ok(()))?;
    // Some state to carry over: held jobs in the log, and a job running on hostC.
    let submit = |args: &[&str]| -> Result<String> {
        let o = cluster
            .command("bsub")
            .args(args)
            .stdin(Stdio::null())
            .output()?;
        if !o.status.success() {
            bail!("bsub failed: {}", String::from_utf8_lossy(&o.stderr));
        }
        // `Job <N> is submitted to ...`
        let out = String::from_utf8_lossy(&o.stdout);
        out.split(['<', '>'])
            .nth(1)
            .filter(|id| id.parse::<u64>().is_ok())
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("no job id in bsub's answer {out:?}"))
    };
    for _ in 0..20 {
        submit(&["-H", "sleep", "60"])?;
    }
    let on_c = submit(&["-m", "hostC", "sleep", "600"])?;
    let config = cluster.config()?;
    let hosta_mbd = basalt_runtime::mbd_addr(&config, "hostA")?.to_string();
    let hostb_addr = basalt_runtime::mbd_addr(&config, "hostB")?;
    let hostb_mbd = hostb_addr.to_string();
    let (bin, envdir) = (cluster.bin.clone(), cluster.envdir.clone());
    let on = |host: &str, name: &str, mbd: Option<&str>| command_on(&bin, &envdir, host, name, mbd);
    // The state of hostC's job as `bjobs` on hostC shows it from the mbatchd at `mbd`.
    let stat_c = |mbd: &str| -> Option<String> {
        let o = on("hostC", "bjobs", Some(mbd))
            .args(["-u", "all", "-o", "stat", "-noheader", &on_c])
            .output()
            .ok()?;
        let out = String::from_utf8_lossy(&o.stdout);
        Some(out.lines().next()?.trim().to_owned())
    };
    wait_until("hostC's job to run", Duration::from_secs(60), || {
        stat_c(&hosta_mbd).as_deref() == Some("RUN")
    })?;
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
    let names_b = |host: &str| {
        on(host, "lsid", None)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .is_some_and(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .any(|l| l.trim() == "My master name is hostB")
            })
    };
    let measured = (|| {
        let mut lsid: BTreeMap<&str, f64> = BTreeMap::new();
        let mut listening = false;
        // The start of the current streak of RUN answers (None: the last one was not).
        let mut run_since: Option<f64> = None;
        let look_c = |listening: bool, run_since: &mut Option<f64>| {
            // Only once hostB's mbatchd listens: a command sent to a port nobody listens
            // on retries only every 300 ms.
            if !listening {
                return;
            }
            if stat_c(&hostb_mbd).as_deref() == Some("RUN") {
                run_since.get_or_insert(t.elapsed().as_secs_f64());
            } else {
                *run_since = None;
            }
        };
        // mbatchd listens only once it holds the lock and has replayed the log: poll its
        // port, then submit.
        wait_until(
            "every host to name hostB and hostB's mbatchd to listen",
            Duration::from_secs(60),
            || {
                for h in ["hostB", "hostC"] {
                    if !lsid.contains_key(h) && names_b(h) {
                        lsid.insert(h, t.elapsed().as_secs_f64());
                    }
                }
                listening = listening || listens(hostb_addr);
                look_c(listening, &mut run_since);
                lsid.len() == 2 && listening
            },
        )?;
        let mut bsub = on("hostB", "bsub", Some(&hostb_mbd));
        bsub.args(["-H", "sleep", "60"]);
        if !bsub.output().is_ok_and(|o| o.status.success()) {
            bail!("bsub to hostB's mbatchd failed although it listens");
        }
        let mbd = t.elapsed().as_secs_f64();
        wait_until(
            "hostC's job to be RUN in hostB's mbatchd for a second",
            Duration::from_secs(60),
            || {
                look_c(true, &mut run_since);
                run_since.is_some_and(|s| t.elapsed().as_secs_f64() - s >= RUN_HELD.as_secs_f64())
            },
        )?;
        let mut bjobs = on("hostB", "bjobs", Some(&hostb_mbd));
        bjobs.args(["-u", "all", "-o", "stat", "-noheader"]);
        let held = bjobs.output().map_or(0, |o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.trim() == "PSUSP")
                .count()
        });
        if held != 21 {
            bail!("the new mbatchd shows {held} of the 21 held jobs");
        }
        Ok(Times {
            lsid_b: lsid.get("hostB").copied().unwrap_or(mbd),
            lsid_all: lsid.values().copied().fold(0.0, f64::max),
            mbd,
            run_c: run_since.unwrap_or(mbd),
        })
    })();
    if hung {
        signal(nix::sys::signal::Signal::SIGCONT);
    }
    measured
}
