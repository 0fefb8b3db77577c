//! `failover` — master failover with the default timings: a two-host cluster; the
//! master's lim, sbatchd and mbatchd are killed with SIGKILL, and the time is taken until
//! `lsid` names hostB and until the mbatchd hostB's sbatchd starts answers `bhosts`
//! (it has taken the event-log lock over and replayed lsb.events). Goal: under 10 s.

use super::*;

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let mut out = Vec::new();
    for i in 0..runs {
        let mut cluster = Cluster::start_with(ctx, &format!("failover{i}"), 2, |_| Ok(()))?;
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
        std::thread::sleep(Duration::from_secs(2));
        let t = Instant::now();
        cluster.kill_host("hostA");
        wait_until("lsid to name hostB", Duration::from_secs(60), || {
            cluster
                .output("lsid", &[])
                .is_some_and(|o| o.lines().any(|l| l.trim() == "My master name is hostB"))
        })?;
        let lim_s = t.elapsed().as_secs_f64();
        cluster.wait_serving(Duration::from_secs(60))?;
        let mbd_s = t.elapsed().as_secs_f64();
        let held = cluster
            .output("bjobs", &["-u", "all", "-noheader"])
            .map_or(0, |o| o.lines().count());
        if held != 20 {
            bail!("the new mbatchd shows {held} of the 20 held jobs");
        }
        out.push(Run {
            metrics: vec![
                Metric::new("kill -9 of the master -> lsid names hostB", "s", lim_s),
                Metric::new("kill -9 of the master -> new mbatchd serving", "s", mbd_s)
                    .goal(Goal::AtMost(10.0)),
            ],
            notes: vec![
                "default timings: EXINTERVAL 1 s, MASTER_INACTIVITY_LIMIT 2, PROBE_TIMEOUT 2 s, \
                 event-lock heartbeat 1 s (takeover after 2.5 s unchanged); 20 held jobs \
                 carried over"
                    .into(),
            ],
        });
    }
    Ok(out)
}
