//! `latency` — submit → start on an idle one-host cluster: from just before the
//! submission until the job's first command runs (the job writes `date +%s%N`, as the
//! Slurm script does), one job at a time, each after the previous one finished; 200
//! jobs (`--quick`: 30), through the API and through the real `bsub` command, output to
//! `/dev/null` (`-o /dev/null`, as the Slurm script's `sbatch -o /dev/null`). Goal: p50
//! under 5 ms (the API path; bsub adds its own start-up, measured by `bsub`).

use super::submit::{Api, discarding_submission};
use super::*;

fn epoch_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Wait for the job's start file; the time it wrote, ns since the epoch.
fn started(file: &Path) -> Result<u128> {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(ns) = text.trim().parse::<u128>()
        {
            return Ok(ns);
        }
        if Instant::now() > end {
            bail!("{} did not appear within 60 s", file.display());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let n = ctx.size(200, 30);
    let cluster = Cluster::start(ctx, "latency")?;
    let config = cluster.config()?;
    let mut acct = LineCounter::new(config.logdir().join("lsb.acct"), b"\"JOB_FINISH\"");
    let api = Api::connect(&cluster, 1)?;
    let dir = cluster.top.join("lat");
    std::fs::create_dir_all(&dir)?;
    std::thread::sleep(Duration::from_secs(1));
    let mut out = Vec::new();
    let mut k = 0u64;
    for _ in 0..runs {
        let mut by_api = Vec::new();
        let mut by_bsub = Vec::new();
        for i in 0..n + 3 {
            for use_api in [true, false] {
                k += 1;
                let f = dir.join(k.to_string());
                let cmd = format!("date +%s%N > {f}.tmp && mv {f}.tmp {f}", f = f.display());
                let before = acct.poll()?;
                let t0 = epoch_ns();
                if use_api {
                    api.submit_one(&discarding_submission(&cluster.host, &cmd))?;
                } else {
                    let o = cluster
                        .command("bsub")
                        .args(["-o", "/dev/null"])
                        .arg(&cmd)
                        .stdin(Stdio::null())
                        .output()?;
                    if !o.status.success() {
                        bail!("bsub failed: {}", String::from_utf8_lossy(&o.stderr));
                    }
                }
                let ms = started(&f)?.saturating_sub(t0) as f64 / 1e6;
                // The first jobs warm caches; every job ends before the next is sent.
                if i >= 3 {
                    if use_api {
                        by_api.push(ms);
                    } else {
                        by_bsub.push(ms);
                    }
                }
                wait_until("the job to finish", Duration::from_secs(60), || {
                    acct.poll().is_ok_and(|c| c > before)
                })?;
            }
        }
        out.push(Run {
            metrics: vec![
                Metric::new("API submit -> start p50", "ms", percentile(&by_api, 50.0))
                    .goal(Goal::AtMost(5.0)),
                Metric::new("API submit -> start p99", "ms", percentile(&by_api, 99.0)),
                Metric::new("bsub -> start p50", "ms", percentile(&by_bsub, 50.0)),
                Metric::new("bsub -> start p99", "ms", percentile(&by_bsub, 99.0)),
            ],
            notes: vec![format!(
                "{n} jobs each way, one at a time; the start is when the job's `date` ran"
            )],
        });
    }
    Ok(out)
}
