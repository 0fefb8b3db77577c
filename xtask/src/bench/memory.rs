//! `memory` — mbatchd's resident memory per pending job: an lsb.events with N held
//! jobs (JOB_NEW records like bsub's, 100,000 and 1,000,000; `--quick`: 10,000 and
//! 100,000) is written before the cluster starts, mbatchd replays it, and its RSS once it
//! serves is compared with an mbatchd that replayed an empty log. Goal: under 1 KB per job.

use super::*;
use basalt_eventlog::{Header, JobNew, MbdStart};

const T0: i64 = 1_795_339_535;

fn write_log(logdir: &Path, n: usize, user: &str, host: &str) -> Result<()> {
    std::fs::create_dir_all(logdir)?;
    let (mut log, _) = el::EventLog::open(logdir)?;
    log.append(&[MbdStart {
        header: Header::new(T0),
        master: host.into(),
        cluster: "bench".into(),
        ..MbdStart::default()
    }
    .into()])?;
    let uid = i64::from(nix::unistd::getuid().as_raw());
    let mut batch = Vec::with_capacity(10_000);
    for id in 1..=n as u64 {
        let t = T0 + (id / 1000) as i64;
        batch.push(
            JobNew {
                header: Header::new(t),
                job_id: id,
                user_id: uid,
                options: basalt_core::job::sub::PROJECT_NAME | basalt_core::job::sub::OUT_FILE,
                options2: basalt_core::job::sub2::HOLD,
                num_processors: 1,
                max_num_processors: 1,
                submit_time: t,
                user_name: user.into(),
                queue: "normal".into(),
                from_host: host.into(),
                cwd: format!("/home/{user}/project/run{}", id % 13),
                out_file: format!("/home/{user}/project/logs/%J.out"),
                sub_home_dir: format!("/home/{user}"),
                job_file: el::job_file_name(t, id),
                job_name: format!("sim{}_{id}", id % 97),
                command: format!("python train.py --seed {} --epochs 10", id % 1000),
                project_name: "default".into(),
                rlimits: [-1; el::rlimit::COUNT],
                ..JobNew::default()
            }
            .into(),
        );
        if batch.len() == 10_000 {
            log.append(&batch)?;
            batch.clear();
        }
    }
    log.append(&batch)?;
    Ok(())
}

/// Start a cluster whose lsb.events holds `n` held jobs; mbatchd's RSS (KiB) once it
/// serves, and how long the start took.
fn mbatchd_rss(ctx: &Ctx, n: usize) -> Result<(u64, f64)> {
    let user = crate::current_user();
    let t = Instant::now();
    let cluster = Cluster::start_with(ctx, &format!("memory{n}"), 1, |p| {
        write_log(&p.config.logdir(), n, &user, "hostA")
    })?;
    let took = t.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(2));
    let pid = *cluster
        .pids_of("mbatchd")
        .first()
        .ok_or_else(|| anyhow!("mbatchd is not running"))?;
    let rss = rss_kib(pid).ok_or_else(|| anyhow!("no RSS for mbatchd"))?;
    let shown = cluster.output("bqueues", &["normal"]).unwrap_or_default();
    if n > 0 && !shown.contains(&n.to_string()) {
        bail!("bqueues does not count the {n} jobs: {shown}");
    }
    Ok((rss, took))
}

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let sizes = if ctx.quick {
        [10_000, 100_000]
    } else {
        [100_000, 1_000_000]
    };
    let mut out = Vec::new();
    for _ in 0..runs {
        let (base, _) = mbatchd_rss(ctx, 0)?;
        let mut metrics = vec![Metric::new(
            "mbatchd RSS, empty log",
            "MB",
            base as f64 / 1024.0,
        )];
        let mut notes = Vec::new();
        for n in sizes {
            let (rss, took) = mbatchd_rss(ctx, n)?;
            let per_job = (rss.saturating_sub(base) * 1024) as f64 / n as f64;
            let mut m = Metric::new(&format!("per pending job at {n}"), "B", per_job);
            if n >= 100_000 {
                m = m.goal(Goal::AtMost(1024.0));
            }
            metrics.push(m);
            metrics.push(Metric::new(
                &format!("mbatchd RSS with {n} pending"),
                "MB",
                rss as f64 / 1024.0,
            ));
            notes.push(format!(
                "{n} held jobs replayed from lsb.events; cluster up and serving in {took:.1} s"
            ));
        }
        out.push(Run { metrics, notes });
    }
    Ok(out)
}
