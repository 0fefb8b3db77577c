//! The `submit` and `bsub` measures: durable submissions through mbatchd's gRPC API and
//! the wall time of the real `bsub`.

use super::*;
pub use basalt_cli::batch::bsub::BsubOpts;
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use basalt_proto::mbatchd::{JobSubmission, SubmitRequest};

/// Concurrent API clients (one connection each).
const CLIENTS: usize = 64;

/// What `bsub [-H] command` sends from `host`.
pub fn submission(host: &str, command: &str, hold: bool) -> JobSubmission {
    build_submission(host, command, hold, None)
}

/// [`submission`] of a job whose output goes to `/dev/null` (`bsub -o /dev/null`), as the
/// Slurm scripts (`sbatch -o /dev/null`) and the HyperQueue measure (output discarded)
/// have theirs: the measures that run jobs compare the batch systems, not the writing
/// of each job's output and LSF's job report into a file kept per job.
pub fn discarding_submission(host: &str, command: &str) -> JobSubmission {
    build_submission(host, command, false, Some("/dev/null"))
}

fn build_submission(host: &str, command: &str, hold: bool, out: Option<&str>) -> JobSubmission {
    let opts = BsubOpts {
        hold,
        out: out.map(|o| (o.to_owned(), false)),
        ..BsubOpts::default()
    };
    submission_with(host, command, &opts)
}

/// What `bsub <opts> command` sends from `host`.
pub fn submission_with(host: &str, command: &str, opts: &BsubOpts) -> JobSubmission {
    use basalt_cli::batch::bsub::{JobCommand, Submitter, build};
    let cmd = JobCommand {
        text: command.into(),
        is_script: false,
        script_name: None,
    };
    // What bsub sends: the submitter's environment, cwd, home and host.
    let who = Submitter {
        cwd: std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        home: std::env::var("HOME").unwrap_or_default(),
        umask: 0o022,
        from_host: host.to_owned(),
        vars: std::env::vars().collect(),
    };
    build(opts, &cmd, &who)
}

/// `perf stat` counting mbatchd's fsync and fdatasync calls, when perf works here.
struct SyncCounter {
    child: Child,
    out: PathBuf,
}

impl SyncCounter {
    fn start(pid: i32, out: PathBuf) -> Option<SyncCounter> {
        let child = Command::new("perf")
            .args([
                "stat",
                "-x,",
                "-e",
                "syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync",
                "-p",
                &pid.to_string(),
                "-o",
            ])
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        // perf needs a moment to attach.
        std::thread::sleep(Duration::from_millis(300));
        Some(SyncCounter { child, out })
    }

    /// (fdatasync, fsync) calls counted.
    fn stop(mut self) -> Option<(u64, u64)> {
        use nix::sys::signal::{Signal, kill};
        let _ = kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            Signal::SIGINT,
        );
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let text = std::fs::read_to_string(&self.out).ok()?;
        let count = |ev: &str| {
            text.lines()
                .find(|l| l.contains(ev))
                .and_then(|l| l.split(',').next())
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Some((count("sys_enter_fdatasync")?, count("sys_enter_fsync")?))
    }
}

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let n = ctx.size(100_000, 10_000);
    let mut out = Vec::new();
    for i in 0..runs {
        let cluster = Cluster::start(ctx, &format!("submit{i}"))?;
        out.push(one_run(ctx, &cluster, n)?);
    }
    Ok(out)
}

/// gRPC clients of a cluster's mbatchd, connected once (connection set-up is not
/// submission), acting as the current user on the cluster's first host.
///
/// Each submission carries a token of its own and is sent again, with that token, when
/// its answer is lost (mbatchd restarting: the channel connects again), as bsub does
/// (issue 29): a job is counted once, and a lost answer never makes a second job.
pub struct Api {
    rt: tokio::runtime::Runtime,
    clients: Vec<MbatchdClient<basalt_runtime::AuthChannel>>,
    /// Tokens are `<prefix>:<counter>`: unique to this process and connection time.
    token_prefix: String,
    next_token: Arc<AtomicUsize>,
}

/// How long one API submission keeps trying before the bench fails.
const API_GIVE_UP: Duration = Duration::from_secs(120);

impl Api {
    pub fn connect(cluster: &Cluster, clients: usize) -> Result<Api> {
        Api::connect_to(&cluster.config()?, &cluster.host, clients)
    }

    /// `clients` connections to the mbatchd of `host` of the cluster of `config`.
    pub fn connect_to(config: &basalt_config::Config, host: &str, clients: usize) -> Result<Api> {
        let addr = basalt_runtime::mbd_addr(config, host)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        // Credentials from the LIM's socket, like a command's: part of every request.
        let auth = basalt_runtime::user_auth(config);
        let clients = rt.block_on(async {
            let mut v = Vec::new();
            for _ in 0..clients.max(1) {
                let ch = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
                    .tcp_nodelay(true)
                    .local_address(auth.local_addr())
                    .connect()
                    .await?;
                v.push(MbatchdClient::new(basalt_runtime::AuthService::new(
                    ch,
                    auth.towards(host),
                )));
            }
            anyhow::Ok(v)
        })?;
        Ok(Api {
            rt,
            clients,
            token_prefix: basalt_cli::batch::bsub::submit_token().map_err(anyhow::Error::msg)?,
            next_token: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Submit `n` copies of `job` from every client at once; each acknowledgement's
    /// latency in ms (from the first send to the answer, resends included).
    pub fn submit_all(&self, job: &JobSubmission, n: usize) -> Result<Vec<f64>> {
        Ok(self
            .submit_all_ids(job, n)?
            .into_iter()
            .map(|(_, ms)| ms)
            .collect())
    }

    /// [`Api::submit_all`], with each job's id: (id, latency in ms), in no order.
    pub fn submit_all_ids(&self, job: &JobSubmission, n: usize) -> Result<Vec<(u64, f64)>> {
        let next = Arc::new(AtomicUsize::new(0));
        let acked: Vec<Vec<(u64, f64)>> = self.rt.block_on(async {
            let mut tasks = Vec::new();
            for client in &self.clients {
                let client = client.clone();
                let next = next.clone();
                let job = job.clone();
                let (prefix, tokens) = (self.token_prefix.clone(), self.next_token.clone());
                tasks.push(tokio::spawn(async move {
                    let mut acked = Vec::new();
                    while next.fetch_add(1, Ordering::Relaxed) < n {
                        let s = Instant::now();
                        let token = format!("{prefix}:{}", tokens.fetch_add(1, Ordering::Relaxed));
                        let id = submit_answered(&client, &job, token).await?;
                        acked.push((id, s.elapsed().as_secs_f64() * 1000.0));
                    }
                    anyhow::Ok(acked)
                }));
            }
            let mut all = Vec::new();
            for task in tasks {
                all.push(task.await??);
            }
            anyhow::Ok(all)
        })?;
        Ok(acked.into_iter().flatten().collect())
    }

    /// Submit one job; its id.
    pub fn submit_one(&self, job: &JobSubmission) -> Result<u64> {
        let token = format!(
            "{}:{}",
            self.token_prefix,
            self.next_token.fetch_add(1, Ordering::Relaxed)
        );
        self.rt
            .block_on(submit_answered(&self.clients[0], job, token))
    }
}

/// Send `job` with `token` until mbatchd's answer is known (bsub's loop, see
/// `basalt_cli::batch::bsub::retry`); its id. An error when mbatchd refuses it or does not
/// answer for [`API_GIVE_UP`] (then the job may exist).
async fn submit_answered(
    client: &MbatchdClient<basalt_runtime::AuthChannel>,
    job: &JobSubmission,
    token: String,
) -> Result<u64> {
    use basalt_cli::batch::bsub::{Attempt, CALL_TIMEOUT, Limits, Outcome, submit_loop};
    let req = SubmitRequest {
        job: Some(job.clone()),
        submit_token: token,
    };
    let start = Instant::now();
    let limits = Limits {
        tries: None,
        time: Some(API_GIVE_UP),
    };
    let outcome = submit_loop(
        limits,
        || start.elapsed(),
        tokio::time::sleep,
        |_| {
            // The channel connects again by itself once mbatchd is back.
            let mut client = client.clone();
            let mut call = tonic::Request::new(req.clone());
            call.set_timeout(CALL_TIMEOUT);
            async move {
                match client.submit(call).await {
                    Ok(r) => Attempt::Answered(r.into_inner().job_id),
                    Err(s) => Attempt::Failed(s),
                }
            }
        },
        |_| {},
    )
    .await;
    match outcome {
        Outcome::Accepted(id) => Ok(id),
        Outcome::Refused(s) => bail!("mbatchd refused a submission: {}", s.message()),
        Outcome::Unreachable(why) => bail!("mbatchd cannot be reached: {why}"),
        Outcome::Unknown { why, elapsed, .. } => bail!(
            "mbatchd did not answer a submission for {elapsed:.1?} ({why}): the job may exist (token {})",
            req.submit_token
        ),
    }
}

fn one_run(ctx: &Ctx, cluster: &Cluster, n: usize) -> Result<Run> {
    let config = cluster.config()?;
    let logdir = config.logdir();
    let events = logdir.join(el::EVENTS_FILE);
    let before = count_job_new(&events)?;
    let mbd = cluster.pids_of("mbatchd");
    let Some(&mbd_pid) = mbd.first() else {
        bail!("mbatchd is not running");
    };
    let job = submission(&cluster.host, "sleep 1", true);
    let api = Api::connect(cluster, CLIENTS)?;
    let counter = SyncCounter::start(mbd_pid, ctx.work.join("perf-sync.txt"));
    let t = Instant::now();
    let lat = api.submit_all(&job, n)?;
    let elapsed = t.elapsed().as_secs_f64();
    let syncs = counter.and_then(SyncCounter::stop);
    drop(api);

    if lat.len() != n {
        bail!("{} submissions acknowledged, {n} sent", lat.len());
    }
    // Durability: every acknowledged job is in lsb.events already.
    let logged = count_job_new(&events)? - before;
    if logged < n {
        bail!(
            "{n} jobs acknowledged but only {logged} JOB_NEW records in {}",
            events.display()
        );
    }
    let rate = n as f64 / elapsed;
    let mut notes = vec![format!(
        "{n} held jobs from {CLIENTS} concurrent clients in {elapsed:.2} s; \
         {logged} JOB_NEW records in lsb.events"
    )];
    match syncs {
        Some((fdatasync, fsync)) => notes.push(format!(
            "mbatchd made {fdatasync} fdatasync calls ({:.1} jobs per fdatasync, \
             lsb.events and the job-file spool, one each per group commit) and {fsync} fsync \
             calls ({:.2} per job: directories, job files spooled to info/)",
            n as f64 / fdatasync.max(1) as f64,
            fsync as f64 / n as f64
        )),
        None => notes.push("fsync/fdatasync calls not counted (perf stat unavailable)".into()),
    }
    Ok(Run {
        metrics: vec![
            Metric::new("API submissions, durable", "jobs/s", rate).goal(Goal::AtLeast(20_000.0)),
            Metric::new(
                "API submit latency p50 (64 in flight)",
                "ms",
                percentile(&lat, 50.0),
            ),
            Metric::new(
                "API submit latency p99 (64 in flight)",
                "ms",
                percentile(&lat, 99.0),
            ),
        ],
        notes,
    })
}

fn count_job_new(path: &Path) -> Result<usize> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(text
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"\"JOB_NEW\""))
        .count())
}

/// `bsub -H sleep 1`, one call after another.
pub fn bsub_run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let calls = ctx.size(200, 50);
    let cluster = Cluster::start(ctx, "bsub")?;
    let mut out = Vec::new();
    for _ in 0..runs {
        let mut ms = Vec::with_capacity(calls);
        for i in 0..calls + 5 {
            let t = Instant::now();
            let o = cluster
                .command("bsub")
                .args(["-H", "sleep", "1"])
                .stdin(Stdio::null())
                .output()
                .context("running bsub")?;
            let took = t.elapsed().as_secs_f64() * 1000.0;
            if !o.status.success() {
                bail!(
                    "bsub failed: {}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            // The first calls warm the page cache and the LIM's answers.
            if i >= 5 {
                ms.push(took);
            }
        }
        out.push(Run {
            metrics: vec![
                Metric::new("bsub wall time p50", "ms", percentile(&ms, 50.0))
                    .goal(Goal::AtMost(5.0)),
                Metric::new("bsub wall time p90", "ms", percentile(&ms, 90.0)),
                Metric::new(
                    "bsub calls in a row",
                    "jobs/s",
                    ms.len() as f64 / (ms.iter().sum::<f64>() / 1000.0),
                ),
            ],
            notes: vec![format!("{calls} calls of `bsub -H sleep 1` in a row")],
        });
    }
    Ok(out)
}
