//! `whatif` — `badmin whatif`'s simulation: a month of history replayed through the
//! production scheduler on a simulated clock (1,000,000 jobs over 30 days on 500 hosts
//! of 8 slots, about a third of the slots busy; `--quick`: 100,000 jobs on 50 hosts, the
//! same load). Goal (issue 28): a month of 1,000,000 jobs in under a minute.

use super::replay::Rng;
use super::*;
use basalt_sched::Submission;
use basalt_whatif::{SimOptions, Workload};

const T0: i64 = 1_800_000_000;

/// `n` jobs of 50 users submitted over `days`, running 1 minute to 2 hours.
fn workload(n: usize, days: i64) -> Workload {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let span = days * 86_400;
    let mut w = Workload {
        first: T0,
        last: T0 + span,
        ..Default::default()
    };
    for i in 0..n {
        let id = i as u64 + 1;
        let at = T0 + (i as i64 * span) / n as i64;
        let user = format!("user{:02}", rng.below(50));
        let sub = Submission {
            user: user.as_str().into(),
            uid: 1000,
            queue: "normal".into(),
            command: "./simulate".into(),
            rlimits: [-1; 11].into(),
            num_processors: 1,
            max_processors: 1,
            submit_time: at,
            job_file: format!("{at}.{id}").into(),
            ..Default::default()
        };
        w.add_job(at, id, sub, 60 + rng.below(7140) as i64);
    }
    w
}

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let n = ctx.size(1_000_000, 100_000);
    let days = 30;
    let hosts = ctx.size(500, 50);
    let (cfg, names) = sched::config(ctx, hosts)?;
    let w = workload(n, days);
    let opts = SimOptions {
        hosts: names.iter().map(|h| (h.clone(), 8)).collect(),
        ..Default::default()
    };
    let mut out = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let r = basalt_whatif::simulate(&cfg, &w, &opts);
        let secs = t.elapsed().as_secs_f64();
        let started = r.jobs.values().filter(|j| j.start.is_some()).count();
        if started != n {
            bail!("{started} of {n} jobs started in the simulation");
        }
        let mut seconds = Metric::new("simulation of the workload", "s", secs);
        if n == 1_000_000 {
            seconds = seconds.goal(Goal::AtMost(60.0));
        }
        out.push(Run {
            metrics: vec![
                seconds,
                Metric::new("simulated jobs", "jobs/s", n as f64 / secs)
                    .goal(Goal::AtLeast(1_000_000.0 / 60.0)),
            ],
            notes: vec![format!(
                "{n} jobs over {days} days on {hosts} hosts of 8 slots, runs of 1 to 120 minutes"
            )],
        });
    }
    Ok(out)
}
