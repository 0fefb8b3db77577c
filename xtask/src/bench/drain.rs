//! `drain` — 10,000 trivial jobs (`true`) on one host with 2 slots (`--quick`: 1,000),
//! from the first submission to the last JOB_FINISH in lsb.acct, two ways: one job array
//! of N elements (a single `bsub -J "d[1-N]" -o /dev/null true`), and N separate jobs
//! submitted through the API by 64 clients while the first ones already run; their output
//! goes to `/dev/null`, as the Slurm script's and HyperQueue's do. Each is compared with
//! `seq N | xargs -P2 -I{} true` measured in the same run: the goal is at least 30 % of
//! xargs' rate.

use super::submit::{Api, discarding_submission};
use super::*;

fn xargs(n: usize) -> Result<f64> {
    let t = Instant::now();
    let st = Command::new("sh")
        .args(["-c", &format!("seq {n} | xargs -P2 -I{{}} true")])
        .status()
        .context("running xargs")?;
    if !st.success() {
        bail!("xargs failed");
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Wait until `n` more JOB_FINISH records than `before` are in lsb.acct.
fn wait_finished(acct: &mut LineCounter, before: usize, n: usize) -> Result<()> {
    let end = Instant::now() + Duration::from_secs(1800);
    loop {
        let done = acct.poll()? - before;
        if done >= n {
            return Ok(());
        }
        if Instant::now() > end {
            bail!("only {done} of {n} jobs finished after 30 minutes");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let n = ctx.size(10_000, 1_000);
    let cluster = Cluster::start_with(ctx, "drain", 1, |p| {
        p.edit_lsb("lsb.hosts", "default     !", "default     2")?;
        p.edit_lsb(
            "lsb.params",
            "End Parameters",
            "MAX_JOB_ARRAY_SIZE = 1000000\nEnd Parameters",
        )
    })?;
    let config = cluster.config()?;
    let mut acct = LineCounter::new(config.logdir().join("lsb.acct"), b"\"JOB_FINISH\"");
    let api = Api::connect(&cluster, 64)?;
    let job = discarding_submission(&cluster.host, "true");
    let mut out = Vec::new();
    for r in 0..runs {
        let x = xargs(n)?;

        let before = acct.poll()?;
        let t = Instant::now();
        let o = cluster
            .command("bsub")
            .args(["-J", &format!("drain{r}[1-{n}]"), "-o", "/dev/null", "true"])
            .stdin(Stdio::null())
            .output()?;
        if !o.status.success() {
            bail!(
                "bsub of the array failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        wait_finished(&mut acct, before, n)?;
        let array = t.elapsed().as_secs_f64();

        let before = acct.poll()?;
        let t = Instant::now();
        api.submit_all(&job, n)?;
        let submitted = t.elapsed().as_secs_f64();
        wait_finished(&mut acct, before, n)?;
        let jobs = t.elapsed().as_secs_f64();

        let rate = |s: f64| n as f64 / s;
        out.push(Run {
            metrics: vec![
                Metric::new("xargs -P2 true", "jobs/s", rate(x)),
                Metric::new("drain, one array", "jobs/s", rate(array)),
                Metric::new("drain, one array, of xargs' rate", "%", x / array * 100.0)
                    .goal(Goal::AtLeast(30.0)),
                Metric::new("drain, separate jobs via the API", "jobs/s", rate(jobs)),
                Metric::new(
                    "drain, separate jobs via the API, of xargs' rate",
                    "%",
                    x / jobs * 100.0,
                )
                .goal(Goal::AtLeast(30.0)),
            ],
            notes: vec![format!(
                "{n} jobs `true`; xargs {x:.2} s, array {array:.2} s, separate jobs {jobs:.2} s \
                 (their submission took {submitted:.2} s of it); one host, MXJ 2"
            )],
        });
    }
    Ok(out)
}
