//! `idle` — what the daemons of an idle one-host cluster cost: resident memory and CPU of
//! lim, res (with its worker, when one runs) and sbatchd (the daemons every host runs)
//! and of the master's mbatchd, over a 10 s window (`--quick`: 5 s) after a 3 s
//! settling time. Goals: lim + res + sbatchd
//! under 20 MB RSS together and under 0.5 % CPU.

use super::*;

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let window = Duration::from_secs(ctx.size(10, 5) as u64);
    let cluster = Cluster::start(ctx, "idle")?;
    std::thread::sleep(Duration::from_secs(3));
    let host = cluster.host.clone();
    let mut out = Vec::new();
    for _ in 0..runs {
        let lim = cluster
            .daemon_pid("lim", &host)
            .ok_or_else(|| anyhow!("lim is not running"))?;
        let sbd = cluster
            .daemon_pid("sbatchd", &host)
            .ok_or_else(|| anyhow!("sbatchd is not running"))?;
        cluster
            .daemon_pid("res", &host)
            .ok_or_else(|| anyhow!("res is not running"))?;
        // res and its worker (res --worker, when one runs: it is started at the first
        // connection and retires after a minute idle).
        let res = cluster.pids_of_host("res", &host);
        let cpu_res = || -> Result<f64> {
            res.iter()
                .map(|p| cpu_secs(*p).ok_or_else(|| anyhow!("no /proc/{p}/stat")))
                .sum()
        };
        let mbd = *cluster
            .pids_of("mbatchd")
            .first()
            .ok_or_else(|| anyhow!("mbatchd is not running"))?;
        let cpu = |p: i32| cpu_secs(p).ok_or_else(|| anyhow!("no /proc/{p}/stat"));
        let before = [cpu(lim)?, cpu(sbd)?, cpu(mbd)?, cpu_res()?];
        let t = Instant::now();
        std::thread::sleep(window);
        let secs = t.elapsed().as_secs_f64();
        let after = [cpu(lim)?, cpu(sbd)?, cpu(mbd)?, cpu_res()?];
        let pct = |i: usize| (after[i] - before[i]) / secs * 100.0;
        let rss = |p: i32| {
            rss_kib(p)
                .map(|k| k as f64 / 1024.0)
                .ok_or_else(|| anyhow!("no /proc/{p}/status"))
        };
        let res_mb = res.iter().map(|p| rss(*p)).sum::<Result<f64>>()?;
        let (lim_mb, sbd_mb, mbd_mb) = (rss(lim)?, rss(sbd)?, rss(mbd)?);
        out.push(Run {
            metrics: vec![
                Metric::new("lim + res + sbatchd RSS", "MB", lim_mb + res_mb + sbd_mb)
                    .goal(Goal::AtMost(20.0)),
                Metric::new("lim + res + sbatchd CPU", "%", pct(0) + pct(1) + pct(3))
                    .goal(Goal::AtMost(0.5)),
                Metric::new(
                    "lim + res + sbatchd + mbatchd RSS",
                    "MB",
                    lim_mb + res_mb + sbd_mb + mbd_mb,
                ),
                Metric::new("lim RSS", "MB", lim_mb),
                Metric::new("res RSS", "MB", res_mb),
                Metric::new("sbatchd RSS", "MB", sbd_mb),
                Metric::new("mbatchd RSS (master only)", "MB", mbd_mb),
                Metric::new("mbatchd CPU (master only)", "%", pct(2)),
            ],
            notes: vec![format!(
                "{secs:.1} s window; CPU from /proc utime+stime; MB = MiB; lim samples its \
                 load every {} and exchanges every EXINTERVAL (1 s default)",
                "second"
            )],
        });
    }
    Ok(out)
}
