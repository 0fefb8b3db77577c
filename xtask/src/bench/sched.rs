//! `sched` — one scheduling pass of the pure core (`basalt_sched::Sched::schedule`) with
//! 100,000 pending jobs over 5,000 simulated 2-slot hosts (`--quick`: 20,000 over 1,000).
//! The first pass places a job on every free slot (10,000 dispatches); the second finds
//! every slot taken and places nothing — the pass mbatchd runs after a job's end or a
//! submission while the cluster is full, which stops once no host has a free slot; the
//! third visits every pending job (the refresh of their reasons that a tick makes due a
//! second later, or a pass after any other change). Goal: under 100 ms.

use super::*;
use basalt_sched::{Caller, Effect, Sched, SchedConfig, Submission};
use std::collections::BTreeMap;

const NOW: i64 = 1_800_000_000_000;

pub(super) fn config(ctx: &Ctx, hosts: usize) -> Result<(SchedConfig, Vec<String>)> {
    let top = ctx.work.join("sched-config");
    let _ = std::fs::remove_dir_all(&top);
    let names: Vec<String> = (0..hosts).map(|i| format!("h{i:05}")).collect();
    let spec = names
        .iter()
        .enumerate()
        .map(|(i, n)| DefaultHost {
            name: n.clone(),
            address: Some(IpAddr::V4(Ipv4Addr::new(
                127,
                200,
                (i / 250) as u8,
                1 + (i % 250) as u8,
            ))),
            server: true,
        })
        .collect();
    let envdir = DefaultCluster::new("bench", "root", spec).write(&top)?;
    let loaded = basalt_config::load(&envdir).map_err(|e| anyhow!("{e}"))?;
    let _ = std::fs::remove_dir_all(&top);
    Ok((SchedConfig::from_config(&loaded.config), names))
}

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let hosts = ctx.size(5_000, 1_000);
    let jobs = ctx.size(100_000, 20_000);
    let (cfg, names) = config(ctx, hosts)?;
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
        s.take_effects();

        let (first, placed) = timed_pass(&mut s, NOW + 1);
        let (again_ms, placed_again) = timed_pass(&mut s, NOW + 2);
        // A second later the tick makes a pass over every pending job due.
        s.tick(NOW + 2 + 1000);
        if !s.needs_pass() {
            bail!("no pass due a second after a pass that stopped early");
        }
        let (every, placed_third) = timed_pass(&mut s, NOW + 2 + 1000);
        // One LIM poll as mbatchd applies it: every host's load, by host name.
        let t = Instant::now();
        for h in &names {
            s.lim_update(h, 2, 1.0, true, BTreeMap::from([("r1m".to_owned(), 0.5)]));
        }
        let poll = t.elapsed().as_secs_f64() * 1000.0;
        if placed != hosts * 2 || placed_again != 0 || placed_third != 0 {
            bail!(
                "the pass placed {placed} jobs on {hosts} 2-slot hosts, then {placed_again}, \
                 then {placed_third}"
            );
        }
        let mut pass = Metric::new(
            &format!("pass placing {placed} of {jobs} pending on {hosts} hosts"),
            "ms",
            first,
        );
        let mut again = Metric::new(
            &format!("pass with every slot taken ({} pending)", jobs - placed),
            "ms",
            again_ms,
        );
        let mut visit_all = Metric::new(
            &format!(
                "pass visiting every pending job, every slot taken ({} pending)",
                jobs - placed
            ),
            "ms",
            every,
        );
        if jobs == 100_000 && hosts == 5_000 {
            pass = pass.goal(Goal::AtMost(100.0));
            again = again.goal(Goal::AtMost(100.0));
            visit_all = visit_all.goal(Goal::AtMost(100.0));
        }
        out.push(Run {
            metrics: vec![
                pass,
                again,
                visit_all,
                Metric::new(
                    &format!("LIM poll: the load of {hosts} hosts applied"),
                    "ms",
                    poll,
                ),
            ],
            notes: vec![format!(
                "{jobs} jobs of 20 users in the default queue, {hosts} hosts with 2 slots, \
                 all up; pure core, one thread"
            )],
        });
    }
    Ok(out)
}

/// One scheduling pass at `now`: how long it took (ms) and how many jobs it dispatched.
fn timed_pass(s: &mut Sched, now: i64) -> (f64, usize) {
    let t = Instant::now();
    s.schedule(now);
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let placed = s
        .take_effects()
        .iter()
        .filter(|e| matches!(e, Effect::Dispatch { .. }))
        .count();
    (ms, placed)
}
