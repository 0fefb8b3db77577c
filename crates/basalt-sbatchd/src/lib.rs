//! The slave batch daemon (`sbatchd`), one per batch server host.
//!
//! Owns: the jobs running on this host (the job table, kept in SQLite so a
//! restarted sbatchd re-adopts them), their supervisor, the reports to
//! mbatchd, and — on the master host — the mbatchd process itself.
//!
//! Inputs: the loaded configuration, the host it plays, a bound TCP listener for
//! `basalt.sbatchd.v1.Sbatchd` (`LSB_SBD_PORT`), [`Options`], and a shutdown future;
//! on start, the job table left by an earlier sbatchd.
//! Outputs: the gRPC service (StartJob, SignalJob — kill, stop, resume, signal, limits,
//! checkpoint —, Peek, Status); `SbdHello` and `ReportJob` calls to mbatchd (found through the LIMs); job processes, their
//! output files and LSF's job report; the job table (`<state root>/jobs.db`); an
//! `mbatchd` child on the master host.
//!
//! ## Design
//!
//! * **One owner task** holds the job table in memory ([`owner`]); gRPC handlers,
//!   watchers and reporters talk to it over channels, and it never awaits I/O
//!   itself. Its durable copy is the job database ([`db`]), reached through one
//!   database thread that runs the owner's calls in order.
//! * **One supervisor process for the host's jobs** ([`supervisor`]): one long-lived
//!   `sbatchd --job-supervisor <state root>` (one loop) that sbatchd starts at
//!   the first job (and lets go of after a minute without a new one: it then exits
//!   when its jobs have ended) and hands each job's directory
//!   (`<jobId>.<idx>.<attempt>`) and wake-up pipe ([`pool`]), so a job costs one
//!   `fork` for the job itself and none for its supervision. The supervisor keeps one
//!   connection to the job table, forks each job (own session and process group,
//!   the user's identity, umask, rlimits, nice, redirections, `/bin/sh <job file>`),
//!   reaps every child (it is a child subreaper), samples usage from `/proc`, enforces
//!   the run limit (and whole-job memory/CPU limits) with the kill sequence, serves
//!   kill/stop/resume/signal commands on a Unix socket per job (`ctl` in the job's
//!   directory), writes LSF's job report, and records every event in the job
//!   database before sbatchd can report it (a final one fsynced while sbatchd
//!   reports it). sbatchd takes a
//!   job's new events from the line that comes on its wake-up pipe (or reads them
//!   from the job table when the line holds none, or not all), so a job keeps
//!   running and its exit status stays on disk while sbatchd restarts (systemd
//!   `KillMode=process`).
//! * **What runs the jobs is a seam** ([`runner`], [`Options::runner`]): the supervisor
//!   above ([`JobRunner::Supervisor`], the default, every real host's), or, on a *hollow
//!   host* of a scale test (issue 51: thousands of hosts, each this real sbatchd, in one
//!   process), hollow jobs ([`JobRunner::Hollow`], [`hollow`]): no fork and no process,
//!   a tokio task per job with a fake pid that "runs" for its command's `sleep N` (else
//!   its run limit `-W`, else 0 s), ends with the status `exit M`/`false` ask, and
//!   records the events a supervisor records (started, executing, a usage sample, state
//!   changes, finished with a wait status) in the same job table. The seam is three
//!   calls: hand a recorded job over, where its recorded events come from (the wake-up
//!   pipe, or a channel), and one control command (`KILL`, `STOP`, ...: the job's control
//!   socket, or the hollow job's task); everything else — the job table, StartJob's
//!   answer, the reports to mbatchd, requeue, kill, the job's removal — is the same code.
//!   A hollow host starts no supervisor process and no pool thread, and runs its job
//!   table's calls on tokio's blocking pool instead of a database thread of its own
//!   ([`db::DbHandle::spawn_pooled`]).
//! * **The job table** ([`db`]): `<state root>/jobs.db`, SQLite in WAL mode with a
//!   busy timeout (sbatchd and every supervisor write it), schema versioned in
//!   `PRAGMA user_version` and only growing. Table `jobs`: key (job id, index,
//!   attempt), the job spec with its job file, the launch information, the
//!   supervisor's pid + start time + boot id, state, pid/pgid, the newest event's
//!   sequence number and the newest one mbatchd acknowledged. Table `events`: each
//!   job's events, one report each. Everything survives a crash of sbatchd or of
//!   a supervisor; a job's final event is also fsynced, by its supervisor right after
//!   it wakes sbatchd (one fsync per job, covering everything written before it), and the end
//!   sbatchd records for a job of an earlier boot is numbered far past anything
//!   mbatchd may have seen. The state root is
//!   `--state-dir`, else `BASALT_SBD_STATEDIR/<host>` from lsf.conf, else
//!   `/tmp/.<cluster>.sbd/<host>.<hash of LSF_ENVDIR>` ([`default_state_root`]:
//!   host-local like LSF's `/tmp/.<cluster>.sbd`; per host and per configuration
//!   because several test hosts and clusters share one machine). A lock file
//!   (`sbatchd.lock`) keeps two sbatchds off one root.
//! * **Re-adoption** (also after `kill -9`): on start sbatchd loads every job from
//!   the table. A supervisor still alive (same pid, start time and boot: safe
//!   against pid reuse) is followed again (polled); the events mbatchd has not
//!   acknowledged are resent in order; a job whose final event is recorded is
//!   reported finished; a job whose supervisor died without one is killed (its
//!   process group, when it is of this boot) and reported finished with `SIGKILL`
//!   status (recorded first, and never twice: the table takes one final event per
//!   job, whoever writes it). A supervisor that has not recorded itself yet (sbatchd
//!   died while starting it) gets 10 s to do so. Job directories no row owns are
//!   removed.
//! * **Reports** ([`mbd`]): every event becomes one report with the event's
//!   sequence number (so a resend after a restart is recognised by mbatchd), sent in
//!   order per job (the reports waiting together in one `ReportJobs` call), retried
//!   with back-off until acknowledged, never dropped. The newest acknowledged
//!   sequence number of each job is written to the table once a second (a crash loses
//!   at most that second of acknowledgements: those events are sent again). Ack
//!   `NO_JOB`: reporting stops (recorded in the table at once) and a job still running
//!   is killed (mbatchd logs a dispatch before sending it, so a job it does not know
//!   is a stale copy, e.g. an old attempt after a partition). Ack `STOP_JOB`: the kill
//!   sequence. A job leaves the table once its final report is acknowledged.
//! * **Heartbeat** ([`mbd`]): `SbdHello` at start (`restarted`), at once when the
//!   master changes, and every `hello_interval` (default 5 s); a failed one is retried
//!   every 200 ms for 2 s after a master change (a new master's mbatchd is starting),
//!   then every second. Each lists the jobs this host runs; the reply's
//!   epoch is the newest epoch, and StartJob/SignalJob carrying an older one are
//!   refused (`FAILED_PRECONDITION`). The reply lists the jobs mbatchd believes run
//!   here: a running job two replies in a row leave out (removed or requeued while
//!   this host was unreachable, or lost by mbatchd) is asked about with a usage
//!   report repeating its newest acknowledged sequence number, so that mbatchd's
//!   `NO_JOB`/`STOP_JOB` answer ends it ([`owner`]).
//! * **mbatchd supervision** ([`mbdsup`]): the master comes from the local LIM's master
//!   watch socket the moment the LIM follows another one (the LIMs are asked every
//!   100 ms, [`mbd::MASTER_POLL`], only while it does not answer); on the master host sbatchd runs `mbatchd -H <host> -d <envdir>`
//!   (the `mbatchd` next to its own executable, else in `LSF_SERVERDIR`), restarts it
//!   at once after exit 202 (`MASTER_RECONFIG`) and after the death of an mbatchd that
//!   had reported serving (lock taken, log replayed, port bound; kill -9, a crash), and
//!   after a start-up failure after 1, 2, 4, ... s (capped at 30 s, reset by an
//!   mbatchd that served or ran 60 s — Basalt's choice instead of LSF's 60 s × count),
//!   and sends it SIGTERM when another host becomes master or sbatchd stops. An
//!   mbatchd left running by a killed sbatchd keeps serving; the new sbatchd starts
//!   none while it answers, and starts one when it is gone.
//!
//! * **Load-based suspension** ([`policy`], daemon-behaviour.md §3.2): every
//!   `SBD_SLEEP_TIME` a task takes this host's load from the master LIM, asks the owner
//!   for the jobs running here and lets the pure core `basalt_susp_core::Policy` decide
//!   (thresholds of queue and host, `STOP_COND`/`RESUME_COND`, run windows, brun and
//!   sole-job exceptions, one job per pass). The owner sends the supervisors `STOP 8
//!   <reasons> <subreasons>`, `RESUME`, `KILL <interval> TERM_LOAD|TERM_WINDOW` or
//!   `REASON ...` (still suspended, for another reason); the supervisors record the state
//!   change and it is reported to mbatchd (JOB_STATUS with the reason bits and the load
//!   index as subreason). The queue's `JOB_CONTROLS` (in the job spec) replace SIGSTOP,
//!   SIGCONT and the kill sequence: a signal, or a command run as the job's user with
//!   `LSB_JOBPGIDS`, `LSB_SUSP_REASONS`, ... set ([`supervisor`]).
//!
//! The output of a job without `-o` is mailed to its user as LSF does, or kept next to
//! the job file when there is no mail program ([`mail`]).
//!
//! * **Checkpoint and restart** (LSF's `bsub -k`, `bchkpnt`, `brestart`, the
//!   checkpoint of `bmig`; [`supervisor`]): a checkpointable job gets its checkpoint
//!   directory (`<dir>/<jobId>`, made 0700 by the user, with a copy of the job file)
//!   and `LSB_CHKPNT_DIR`, `LSB_CHKPNT_PERIOD`, `LSB_ECHKPNT_METHOD`, `LSB_CHKFILENAME`.
//!   mbatchd's CHKPNT order runs `echkpnt.<method> [-f] [-k] -d <dir> <pgid>` (in
//!   `LSB_ECHKPNT_METHOD_DIR`, else `LSF_SERVERDIR`) as the job's user, or, for the
//!   `default` method without such a program, Basalt's built-in application-level
//!   checkpoint: the job gets `BASALT_CHKPNT_SIGNAL` (SIGWINCH), saves its state in
//!   `$LSB_CHKPNT_DIR` and creates `$LSB_CHKPNT_DIR/chkpnt.done`. Its outcome is a CHKPNT
//!   report (bounded by `BASALT_CHKPNT_TIMEOUT`, 60 s); with kill the kill sequence
//!   follows a success (`TERM_CHKPNT`). A restarted job (`LSB_RESTART=Y`) first moves
//!   the old job's checkpoint directory to its own and runs `erestart.<method> [-f]
//!   <dir>` (built in: `chkpnt.done` must be there); a failure is a START_FAILED report
//!   marked `restart_failed`; a `LSB_RESTART_CMD` erestart left in `.restart_cmd` runs
//!   instead of the job file. Periodic checkpoints (`LSB_CHKPNT_PERIOD`) are not taken
//!   by sbatchd: the period is only passed to the job.
//!
//! Not done yet: queue pre/post-exec, the process-count limit, `-L` login shells,
//! `LSB_SET_TMPDIR`, `-B`/`-N` notification mails, migration of suspended checkpointable/rerunnable jobs, and mbatchd's lock on
//! load-suspended jobs with an `rusage` duration reservation (`SUSP_MBD_LOCK`).

pub mod db;
pub mod hollow;
pub mod lockwatch;
pub mod mail;
pub mod mbd;
pub mod mbdsup;
pub mod metrics;
pub mod owner;
pub mod paths;
pub mod policy;
pub mod pool;
pub mod runner;
pub mod service;
mod spawn;
pub mod state;
pub mod sudoers;
pub mod supervisor;
mod sys;

use basalt_config::Config;
use basalt_runtime::time::{Clock, SystemClock};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;
use thiserror::Error;
use tokio::sync::{Notify, mpsc, watch};
use tracing::{Instrument, info, info_span, warn};

/// Errors that stop sbatchd from starting.
#[derive(Debug, Error)]
pub enum SbdError {
    #[error(transparent)]
    Runtime(#[from] basalt_runtime::RuntimeError),
    #[error("state directory {path}: {reason}")]
    StateDir { path: PathBuf, reason: String },
    #[error("cannot find the sbatchd executable for job supervisors: {0}")]
    Exe(String),
    #[error("cannot start the job supervisor's thread: {0}")]
    PoolThread(std::io::Error),
    #[error("gRPC server: {0}")]
    Serve(#[from] tonic::transport::Error),
    #[error(transparent)]
    Db(#[from] db::DbError),
}

/// How this sbatchd runs, besides the configuration.
#[derive(Debug, Clone)]
pub struct Options {
    /// Start and supervise mbatchd when this host is the master (`--no-mbatchd`
    /// turns it off, for tests that run mbatchd themselves).
    pub supervise_mbatchd: bool,
    /// The state root, used as given (default: [`default_state_root`]).
    pub state_dir: Option<PathBuf>,
    /// The executable run as the job supervisor (default: this process's own).
    pub supervisor_exe: Option<PathBuf>,
    /// The mbatchd executable (default: next to this executable, else `LSF_SERVERDIR`).
    pub mbatchd_exe: Option<PathBuf>,
    /// Milliseconds between usage samples of a running job (default:
    /// `LSF_PIM_SLEEPTIME` seconds from lsf.conf, else 3 s).
    pub sample_ms: Option<u64>,
    /// The wall clock (the system's; tests may give a manual one).
    pub clock: Arc<dyn Clock>,
    /// How long the supervisor is given no new job before it is let go of (default
    /// [`pool::IDLE_STOP`]).
    pub pool_idle: Duration,
    /// What runs the jobs (default: the job supervisor process). With
    /// [`JobRunner::Hollow`], `supervisor_exe` and `pool_idle` are not used.
    pub runner: JobRunner,
}

/// What runs a host's jobs ([`Options::runner`], [`runner`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum JobRunner {
    /// The job supervisor process: a real host.
    #[default]
    Supervisor,
    /// No process: each job is a timer that records a job's events ([`hollow`]); a
    /// hollow host of a scale test, whose sbatchd is otherwise the real one. Its job
    /// table is served from tokio's blocking pool instead of a thread of its own.
    Hollow,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            supervise_mbatchd: true,
            state_dir: None,
            supervisor_exe: None,
            mbatchd_exe: None,
            sample_ms: None,
            clock: Arc::new(SystemClock),
            pool_idle: pool::IDLE_STOP,
            runner: JobRunner::Supervisor,
        }
    }
}

/// State shared (read-mostly) by sbatchd's tasks.
#[derive(Debug)]
pub struct Shared {
    pub config: Arc<Config>,
    pub host: String,
    pub state_root: PathBuf,
    /// Runs the jobs: hands them to the supervisor ([`pool`]), or runs them hollow
    /// ([`hollow`]).
    pub runner: runner::Runner,
    /// The newest mbatchd epoch seen.
    pub epoch: AtomicU64,
    /// JOB_TERMINATE_INTERVAL (seconds), from lsb.params and then mbatchd's hello reply.
    pub terminate_interval: AtomicU32,
    /// The pid of the mbatchd this sbatchd runs (0 = none).
    pub mbatchd_pid: AtomicU32,
    /// What every job's launch.json starts from (replaced by a reconfiguration).
    pub launch: std::sync::RwLock<state::Launch>,
    /// The configuration in force for what a reconfiguration changes without a restart
    /// (the load policy's thresholds and SBD_SLEEP_TIME, the job-start settings);
    /// `config` stays the one sbatchd started with (addresses, ports, directories).
    pub live: watch::Sender<Arc<Config>>,
    /// Asked by reporters when mbatchd does not answer: find the master again.
    pub relocate: Notify,
    /// This sbatchd's credentials towards mbatchd and the LIMs.
    pub auth: basalt_runtime::Authenticator,
    /// The wall clock.
    pub clock: Arc<dyn Clock>,
    /// The counters of `GET /metrics`.
    pub metrics: metrics::SbdMetrics,
}

impl Shared {
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// A copy of the launch template in force.
    pub fn launch(&self) -> state::Launch {
        match self.launch.read() {
            Ok(l) => l.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// `badmin reconfig` (DaemonControl RECONFIG): re-read the configuration files and
    /// put the load thresholds, SBD_SLEEP_TIME and the job-start settings in force for
    /// what comes next; running jobs go on untouched. Files that do not load are
    /// reported (file and line) and the configuration in force stays.
    pub fn reconfigure(&self, opts: &Options) -> Result<String, String> {
        let loaded = basalt_config::load(&self.config.envdir).map_err(|e| {
            format!(
                "the configuration files do not load; sbatchd on {} goes on with the \
                 configuration it has:\n{e}",
                self.host
            )
        })?;
        for w in &loaded.warnings {
            warn!("configuration: {w}");
        }
        let new = Arc::new(loaded.config);
        let launch = launch_template(&new, &self.host, opts);
        self.terminate_interval.store(
            new.batch.params.job_terminate_interval_secs,
            Ordering::SeqCst,
        );
        match self.launch.write() {
            Ok(mut l) => *l = launch,
            Err(poisoned) => *poisoned.into_inner() = launch,
        }
        self.live.send_replace(new);
        info!("reconfigured: lsb.* re-read");
        Ok(format!(
            "sbatchd on {} re-read its configuration",
            self.host
        ))
    }
}

/// Resolves once `stop` turns true (or its sender is gone).
pub(crate) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// The state root for `host` when none is given ([`basalt_runtime::sbd_state_root`]).
pub fn default_state_root(config: &Config, host: &str) -> PathBuf {
    basalt_runtime::sbd_state_root(config, host)
}

fn yes(v: Option<&str>) -> bool {
    v.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "y" | "yes" | "1"))
}

fn launch_template(config: &Config, host: &str, opts: &Options) -> state::Launch {
    let admin = config.cluster.admins.first().cloned().unwrap_or_else(|| {
        nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .map_or_else(|| "lsfadmin".to_owned(), |u| u.name)
    });
    let dir = |k: &str| {
        config
            .lsf_conf
            .get(k)
            .filter(|v| !v.is_empty())
            .map(|v| config.resolve_path(v).to_string_lossy().into_owned())
    };
    let sample_ms = opts.sample_ms.unwrap_or_else(|| {
        config
            .lsf_conf
            .get("LSF_PIM_SLEEPTIME")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|s| *s > 0)
            .map_or(3000, |s| s * 1000)
    });
    state::Launch {
        refuse_root: !basalt_auth::root_rex(config),
        host: host.to_owned(),
        cluster: config.cluster_name.clone(),
        sender: format!("{admin}@{host}"),
        envdir: config.envdir.to_string_lossy().into_owned(),
        bindir: dir("LSF_BINDIR"),
        serverdir: dir("LSF_SERVERDIR"),
        libdir: dir("LSF_LIBDIR"),
        terminate_interval: config.batch.params.job_terminate_interval_secs,
        sample_ms,
        // LSB_JOB_MEMLIMIT=Y: the per-job limit LSF enforces, not the per-process one
        // of the OS; LSB_MEMLIMIT_ENFORCE=Y: both.
        enforce_memlimit: yes(config.lsf_conf.get("LSB_JOB_MEMLIMIT"))
            || yes(config.lsf_conf.get("LSB_MEMLIMIT_ENFORCE")),
        os_memlimit_too: !yes(config.lsf_conf.get("LSB_JOB_MEMLIMIT"))
            && yes(config.lsf_conf.get("LSB_MEMLIMIT_ENFORCE")),
        mail_prog: mail::program(
            config
                .lsf_conf
                .get("LSB_MAILPROG")
                .map(|p| config.resolve_path(p.trim()).to_string_lossy().into_owned())
                .as_deref(),
        ),
        mail_to: config.lsf_conf.get("LSB_MAILTO").map(str::to_owned),
        echkpnt_method_dir: dir("LSB_ECHKPNT_METHOD_DIR"),
        echkpnt_keep_output: yes(config.lsf_conf.get("LSB_ECHKPNT_KEEP_OUTPUT")),
        chkpnt_timeout_secs: config
            .lsf_conf
            .get("BASALT_CHKPNT_TIMEOUT")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0),
        chkpnt_signal: config
            .lsf_conf
            .get("BASALT_CHKPNT_SIGNAL")
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty()),
    }
}

/// Create the state root (0700) and lock it for this sbatchd.
fn lock_state_root(root: &std::path::Path) -> Result<nix::fcntl::Flock<std::fs::File>, SbdError> {
    use std::os::unix::fs::DirBuilderExt;
    let err = |reason: String| SbdError::StateDir {
        path: root.to_path_buf(),
        reason,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(root)
        .map_err(|e| err(e.to_string()))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join("sbatchd.lock"))
        .map_err(|e| err(format!("lock file: {e}")))?;
    let mut lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| {
            err(format!(
                "in use by another sbatchd ({e}); give each sbatchd its own state directory (--state-dir or BASALT_SBD_STATEDIR)"
            ))
        })?;
    use std::io::Write;
    let _ = lock.set_len(0);
    let _ = writeln!(lock, "{}", std::process::id());
    Ok(lock)
}

/// Open the job database under the state root, read every job in it, and remove job
/// directories (of an older sbatchd) and control sockets no job owns.
fn open_job_table(root: &std::path::Path) -> Result<(db::JobDb, Vec<db::StoredJob>), SbdError> {
    let jobs = db::JobDb::open(&root.join(db::DB_FILE), true)?;
    jobs.checkpoint();
    let found = jobs.load_all()?;
    let owned = |key: db::Key| found.iter().any(|j| j.key == key);
    if let Ok(entries) = std::fs::read_dir(root) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(key) = name.to_str().and_then(paths::parse_state_dir_name) else {
                continue;
            };
            if owned(key) {
                continue;
            }
            let dir = entry.path();
            if dir.join("spec.pb").exists() {
                tracing::warn!(
                    "{} was left by an sbatchd from before the job database; its job is not re-adopted",
                    dir.display()
                );
                continue;
            }
            tracing::debug!("removing {}: no job owns it", dir.display());
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    state::make_ctl_dir(root).map_err(|e| SbdError::StateDir {
        path: root.join(state::CTL_SOCKET),
        reason: format!("cannot make the control sockets' directory: {e}"),
    })?;
    // Sockets of jobs no longer in the table (their supervisor is gone with them).
    if let Ok(entries) = std::fs::read_dir(root.join(state::CTL_SOCKET)) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let ours = name
                .to_str()
                .and_then(paths::parse_state_dir_name)
                .is_some_and(owned);
            if !ours {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Ok((jobs, found))
}

/// Run sbatchd with default [`Options`] until `shutdown` resolves.
pub async fn run(
    config: Arc<Config>,
    host: &str,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), SbdError> {
    run_with(config, host, listener, Options::default(), shutdown).await
}

/// Run sbatchd until `shutdown` resolves. Job supervisors keep running after it
/// returns; a later sbatchd on the same state root re-adopts them.
pub async fn run_with(
    config: Arc<Config>,
    host: &str,
    listener: tokio::net::TcpListener,
    opts: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), SbdError> {
    let me = basalt_runtime::canonical_host(&config, host)
        .ok_or_else(|| basalt_runtime::RuntimeError::UnknownHost(host.to_owned()))?;
    let span = info_span!("sbatchd", host = %me);
    async move {
        let state_root = opts
            .state_dir
            .clone()
            .unwrap_or_else(|| default_state_root(&config, &me));
        let lock_root = state_root.clone();
        let lock = tokio::task::spawn_blocking(move || lock_state_root(&lock_root))
            .await
            .map_err(|e| SbdError::StateDir {
                path: state_root.clone(),
                reason: e.to_string(),
            })??;
        let runner = match opts.runner {
            JobRunner::Supervisor => {
                let supervisor_exe = match &opts.supervisor_exe {
                    Some(p) => p.clone(),
                    None => std::env::current_exe().map_err(|e| SbdError::Exe(e.to_string()))?,
                };
                // The supervisor's environment: a fixed PATH, and this
                // daemon's log filter and time zone.
                let mut pool_env = vec![(
                    std::ffi::OsString::from("PATH"),
                    std::ffi::OsString::from(supervisor::env::DEFAULT_PATH),
                )];
                pool_env
                    .extend(std::env::vars_os().filter(|(k, _)| k == "BASALT_LOG" || k == "TZ"));
                let pool =
                    pool::Pool::start(supervisor_exe, state_root.clone(), pool_env, opts.pool_idle)
                        .map_err(SbdError::PoolThread)?;
                runner::Runner::Supervisor(pool)
            }
            JobRunner::Hollow => {
                info!("hollow host: jobs run no process and write no output");
                runner::Runner::Hollow(hollow::Hollow::new(
                    tokio::runtime::Handle::current(),
                    opts.clock.clone(),
                ))
            }
        };
        let keys = basalt_runtime::cluster_keys(&config)?;
        let verifier = basalt_runtime::verifier_in(
            &config,
            &me,
            keys.clone(),
            &state_root.join("replay").join("sbatchd"),
        )?;
        let serving = basalt_runtime::serving(&config, verifier.clone());
        let shared = Arc::new(Shared {
            auth: basalt_runtime::daemon_auth(&config, &me, keys),
            clock: opts.clock.clone(),
            launch: std::sync::RwLock::new(launch_template(&config, &me, &opts)),
            live: watch::channel(config.clone()).0,
            terminate_interval: AtomicU32::new(config.batch.params.job_terminate_interval_secs),
            config: config.clone(),
            host: me.clone(),
            state_root: state_root.clone(),
            runner,
            epoch: AtomicU64::new(0),
            mbatchd_pid: AtomicU32::new(0),
            relocate: Notify::new(),
            metrics: metrics::SbdMetrics::default(),
        });
        info!(
            "sbatchd starting on {me}; state directory {}",
            state_root.display()
        );

        let (stop_tx, stop_rx) = watch::channel(false);
        let (owner_tx, owner_rx) = mpsc::channel(4096);
        let (master_tx, master_rx) = watch::channel::<Option<String>>(None);
        let (client_tx, client_rx) = watch::channel(None);

        let open_root = state_root.clone();
        let (jobs, found) = tokio::task::spawn_blocking(move || open_job_table(&open_root))
            .await
            .map_err(|e| SbdError::StateDir {
                path: state_root.clone(),
                reason: e.to_string(),
            })??;
        let db = match opts.runner {
            JobRunner::Supervisor => db::DbHandle::spawn(jobs)?,
            JobRunner::Hollow => {
                db::DbHandle::spawn_pooled(jobs, &tokio::runtime::Handle::current())
            }
        };
        if !found.is_empty() {
            info!(
                "re-adopting {} job(s) from {}",
                found.len(),
                state_root.join(db::DB_FILE).display()
            );
        }
        let owner = tokio::spawn(
            owner::Owner::new(shared.clone(), db, owner_tx.clone(), client_rx.clone())
                .run(owner_rx, found)
                .in_current_span(),
        );
        let masters = tokio::spawn(
            mbd::master_watch(shared.clone(), master_tx, stop_rx.clone()).in_current_span(),
        );
        let hello = tokio::spawn(
            mbd::hello_loop(
                shared.clone(),
                owner_tx.clone(),
                master_rx.clone(),
                client_tx,
                stop_rx.clone(),
            )
            .in_current_span(),
        );
        let policy = tokio::spawn(
            policy::run(
                shared.clone(),
                owner_tx.clone(),
                master_rx.clone(),
                stop_rx.clone(),
            )
            .in_current_span(),
        );
        let mbdsup = opts.supervise_mbatchd.then(|| {
            tokio::spawn(
                mbdsup::supervise(
                    shared.clone(),
                    opts.mbatchd_exe.clone(),
                    master_rx.clone(),
                    stop_rx.clone(),
                )
                .in_current_span(),
            )
        });

        let control = basalt_runtime::control::Control::current();
        let control_service = {
            let (shared, opts) = (shared.clone(), opts.clone());
            basalt_runtime::control::ControlService::new(
                basalt_proto::common::Daemon::Sbatchd,
                &me,
                config.clone(),
                verifier.clone(),
                control.clone(),
                Arc::new(basalt_runtime::control::check_all_files),
            )
            .with_reload(Arc::new(move || shared.reconfigure(&opts)))
        };
        let service = service::SbdService::new(owner_tx.clone(), verifier, stop_rx.clone());
        let router = serving
            .builder()
            .add_service(control_service.server())
            .add_service(
                basalt_proto::sbatchd::sbatchd_server::SbatchdServer::new(service.clone())
                    .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
            )
            .add_service(
                basalt_proto::sbatchd::sbatchd_peer_server::SbatchdPeerServer::new(service)
                    .max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES),
            );
        let metrics_server = {
            let ip = listener
                .local_addr()
                .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |a| a.ip());
            let (owner_tx, shared) = (owner_tx.clone(), shared.clone());
            basalt_runtime::metrics::start(
                "sbatchd",
                ip,
                config.lsf_conf.sbd_metrics_port(),
                move || {
                    let (owner_tx, shared) = (owner_tx.clone(), shared.clone());
                    async move {
                        let (reply, rx) = tokio::sync::oneshot::channel();
                        let states = match owner_tx.send(owner::Msg::Status { reply }).await {
                            Ok(()) => rx
                                .await
                                .map(|s| s.jobs.iter().map(|j| j.state).collect())
                                .unwrap_or_default(),
                            Err(_) => Vec::new(),
                        };
                        metrics::render(&shared.metrics, states, shared.epoch())
                    }
                },
            )
            .await
        };
        let mut server_stop = stop_rx.clone();
        let server = tokio::spawn(async move {
            serving
                .serve(router, listener, async move {
                    let _ = server_stop.wait_for(|s| *s).await;
                })
                .await
        });
        control.or_shutdown(shutdown).await;
        if let Some(m) = metrics_server {
            m.abort();
        }
        match &shared.runner {
            runner::Runner::Supervisor(_) => {
                info!("sbatchd shutting down; job supervisors keep running")
            }
            runner::Runner::Hollow(h) => info!(
                "sbatchd shutting down; its {} hollow job(s) end with it",
                h.running()
            ),
        }
        let _ = stop_tx.send(true);
        if let Some(m) = mbdsup {
            let _ = m.await;
        }
        let served = server.await;
        let _ = owner_tx.send(owner::Msg::Shutdown).await;
        let _ = owner.await;
        shared.runner.stop();
        masters.abort();
        hello.abort();
        policy.abort();
        drop(lock);
        match served {
            Ok(r) => r.map_err(SbdError::from),
            Err(_) => Ok(()),
        }
    }
    .instrument(span)
    .await
}
