//! `query` — what `bjobs -u all`, `bhosts` and `bqueues` cost mbatchd's owner thread with
//! 40,000 pending jobs (the same with `--quick`: the goal is stated at that size), in the
//! pure core: [`basalt_sched::Sched::jobs_view`] for every user (the query and, per row,
//! the job with its shown state and position in its queue: exactly what the owner thread
//! does before the gRPC service turns the view into the reply, timed apart); and for every
//! host and queue the status and slot counts. While it runs no
//! submission is served, so it must stay short. Goal (issue 18): `bjobs -u all` under
//! 200 ms. A submission timed right after the query shows the core goes on at once.

use super::*;
use basalt_sched::{Caller, JobQuery, Sched, Submission};
use std::collections::BTreeMap;

const NOW: i64 = 1_800_000_000_000;

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let hosts = ctx.size(1_000, 1_000);
    let pending = ctx.size(40_000, 40_000);
    // Two slots per host: the first pass starts 2 × hosts jobs, the rest stay pending.
    let jobs = pending + 2 * hosts;
    let (cfg, names) = super::sched::config(ctx, hosts)?;
    let users: Vec<Caller> = (0..20)
        .map(|u| Caller {
            uid: 1000 + u,
            user: format!("user{u:02}"),
            host: names[0].clone(),
        })
        .collect();
    let mut out = Vec::new();
    for _ in 0..runs {
        let mut s = Sched::new(cfg.clone(), NOW);
        for h in &names {
            s.lim_update(h, 2, 1.0, true, BTreeMap::new());
        }
        s.start(NOW, &names[0]);
        for i in 0..jobs {
            let sub = Submission {
                command: format!("./simulate --case {i}").into(),
                rlimits: [-1; 11].into(),
                ..Submission::default()
            };
            s.submit(NOW, &users[i % users.len()], sub)
                .map_err(|e| anyhow!("submit: {e:?}"))?;
        }
        s.schedule(NOW + 1);
        s.take_effects();

        // bjobs -u all: the owner thread's view, then the service's translation.
        let t = Instant::now();
        let view = s.jobs_view(&JobQuery::default());
        let bjobs = t.elapsed().as_secs_f64() * 1000.0;
        let t = Instant::now();
        let reply = basalt_wire::jobs_reply(&view, false);
        let translate = t.elapsed().as_secs_f64() * 1000.0;
        let mut positions: u64 = 0;
        let mut unknown = 0usize;
        for v in &view.jobs {
            if v.state == basalt_core::job::JobState::Unkwn {
                unknown += 1;
            }
            positions += u64::from(v.position);
        }
        let listed = reply.jobs.len();
        let pend = view
            .jobs
            .iter()
            .filter(|v| v.job.state.is_pending())
            .count();
        drop((view, reply));

        // bhosts and bqueues: status and counts of every host and queue.
        let t = Instant::now();
        let mut slots = 0u32;
        for h in s.hosts() {
            let _ = s.host_status(h);
            slots += s.host_counts(&h.name).0;
        }
        for q in s.queues() {
            slots += s.queue_counts(&q.name).0;
        }
        let counts = t.elapsed().as_secs_f64() * 1000.0;

        // The next submission right after: the owner thread is free again.
        let t = Instant::now();
        s.submit(
            NOW + 2,
            &users[0],
            Submission {
                command: "true".into(),
                rlimits: [-1; 11].into(),
                ..Submission::default()
            },
        )
        .map_err(|e| anyhow!("submit: {e:?}"))?;
        let submit = t.elapsed().as_secs_f64() * 1000.0;

        // Positions 1..=pend in the one queue: their sum tells they were all computed.
        let expected = (pend as u64) * (pend as u64 + 1) / 2;
        if pend != pending || positions != expected || unknown != 0 {
            bail!(
                "{listed} rows, {pend} pending (wanted {pending}), position sum {positions} \
                 (wanted {expected}), {unknown} unknown"
            );
        }
        let mut bjobs_m = Metric::new(
            &format!("bjobs -u all: owner thread's view of {listed} rows (state, position)"),
            "ms",
            bjobs,
        );
        if pending == 40_000 {
            bjobs_m = bjobs_m.goal(Goal::AtMost(200.0));
        }
        out.push(Run {
            metrics: vec![
                bjobs_m,
                Metric::new(
                    "bjobs -u all: the service's wire reply (off the owner thread)",
                    "ms",
                    translate,
                ),
                Metric::new(
                    &format!("bhosts + bqueues: status and counts of {hosts} hosts"),
                    "ms",
                    counts,
                ),
                Metric::new("a submission right after", "ms", submit),
            ],
            notes: vec![format!(
                "{pend} pending and {} running jobs of 20 users in the default queue, \
                 {hosts} hosts with 2 slots; pure core, one thread ({slots} slots counted)",
                listed - pend
            )],
        });
    }
    Ok(out)
}
