//! The supervisor process's loop: it takes jobs from sbatchd's socket, reaps every
//! child (giving each one's resource usage to its job), moves each job on
//! ([`Supervisor::tick`]), serves the jobs' `ctl` sockets and records what the jobs
//! emitted in the job database once per turn.
//!
//! One thread runs the loop, and it forks a mail helper (a job whose output is mailed)
//! and runs ordinary code in it. The only other threads are the short-lived launchers
//! ([`super::launch`]: a job's set-up and the `clone` of its top process, which shares
//! memory and only makes system calls, [`crate::spawn`]) and report writers
//! ([`super::finish`]), which take no lock a forked child takes: they do not log, read
//! the environment or use standard streams, and glibc keeps `malloc` usable across
//! `fork`. Nothing in a turn waits on a job: a launcher's outcome and a report come
//! through the threads' wake-up pipe, the mail helper and leftovers through SIGCHLD (a
//! signalfd) and timers.

use super::Supervisor;
use super::pool::{Request, read_request};
use super::watch::session_of;
use crate::db::{self, JobDb};
use crate::paths;
use crate::state::{Event, EventKind, SupervisorId};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signalfd::SignalFd;
use nix::sys::socket::{MsgFlags, send};
use nix::unistd::Pid;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a final event the database refused is tried again.
const FINAL_RETRY: Duration = Duration::from_secs(1);

/// The supervisor process's state: its request socket, its database connection and
/// the jobs it follows.
pub(super) struct Runner {
    root: PathBuf,
    /// sbatchd's request socket; None once sbatchd closed it (no new job comes).
    sock: Option<OwnedFd>,
    sigfd: SignalFd,
    /// The job database, opened at the first job.
    db: Option<JobDb>,
    me: Option<SupervisorId>,
    jobs: Vec<Supervisor>,
    /// Report writers and launchers wake the loop through this pipe (read end, write
    /// end).
    reports: Option<(OwnedFd, Arc<OwnedFd>)>,
    /// Children reaped before any job knew them: a job's top process can end before
    /// its launcher's outcome (with its pid) is read. Kept for the job that claims
    /// them ([`Runner::claim`]), for at most [`UNCLAIMED_KEEP`].
    unclaimed: Vec<Unclaimed>,
    /// Users looked up for recent jobs.
    users: super::launch::IdentityCache,
    /// Where sbatchd's requests are read ([`super::pool::request_buffer`]).
    request_buf: Vec<u8>,
}

/// A reaped child no job claimed yet.
struct Unclaimed {
    pid: Pid,
    /// Its session (an orphan of a job is claimed by the job whose top process leads it).
    sid: Option<i32>,
    status: i32,
    usage: libc::rusage,
    at: Instant,
}

/// How long a reaped child waits for a job to claim it.
const UNCLAIMED_KEEP: Duration = Duration::from_secs(60);

/// What a descriptor in the poll set belongs to.
#[derive(Clone, Copy)]
enum Source {
    Requests,
    Signals,
    Reports,
    Ctl(usize),
}

impl Runner {
    pub(super) fn new(root: &Path, sock: OwnedFd, sigfd: SignalFd) -> Runner {
        Runner {
            root: root.to_path_buf(),
            sock: Some(sock),
            sigfd,
            db: None,
            me: SupervisorId::of(std::process::id()),
            jobs: Vec::new(),
            unclaimed: Vec::new(),
            users: super::launch::IdentityCache::default(),
            request_buf: super::pool::request_buffer(),
            reports: match nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK) {
                Ok((r, w)) => Some((r, Arc::new(w))),
                Err(e) => {
                    // Reports are then noticed at the loop's next turn (at most 60 s).
                    tracing::error!("job supervisor: pipe: {e}");
                    None
                }
            },
        }
    }

    /// Run until sbatchd closed the socket and every job has ended; returns the exit
    /// code.
    ///
    /// # Safety
    ///
    /// No thread but this one, launchers and report writers (see the module's
    /// documentation).
    #[allow(unsafe_code)]
    pub(super) unsafe fn run(&mut self) -> i32 {
        loop {
            while let Ok(Some(_)) = self.sigfd.read_signal() {}
            self.reap();
            let now = Instant::now();
            let mut next: Option<Instant> = None;
            for job in &mut self.jobs {
                if let Some(t) = job.tick(now) {
                    next = Some(next.map_or(t, |n| n.min(t)));
                }
            }
            if self.claim(now) {
                // A job has the end of a process it just learnt of: tick it at once.
                next = Some(now);
            }
            if let Some(t) = self.flush(now) {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
            if self.sock.is_none() && self.jobs.is_empty() {
                return 0;
            }
            let ms = next.map_or(60_000, |t| {
                t.saturating_duration_since(Instant::now())
                    .as_millis()
                    .clamp(0, 60_000) as u16
            });
            let ready = match self.poll(ms) {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!("job supervisor: poll: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            };
            for source in ready {
                match source {
                    Source::Signals => {}
                    Source::Reports => self.drain_reports(),
                    Source::Requests => self.take_request(),
                    Source::Ctl(i) => {
                        if let Some(j) = self.jobs.get_mut(i) {
                            j.serve_ctl();
                        }
                    }
                }
            }
        }
    }

    /// Wait up to `ms` for a request, a signal, a report writer's or launcher's
    /// wake-up or a `ctl` connection;
    /// returns what is ready.
    fn poll(&self, ms: u16) -> nix::Result<Vec<Source>> {
        let mut fds = Vec::with_capacity(2 + self.jobs.len());
        let mut sources = Vec::with_capacity(2 + self.jobs.len());
        if let Some(s) = &self.sock {
            fds.push(PollFd::new(s.as_fd(), PollFlags::POLLIN));
            sources.push(Source::Requests);
        }
        fds.push(PollFd::new(self.sigfd.as_fd(), PollFlags::POLLIN));
        sources.push(Source::Signals);
        if let Some((r, _)) = &self.reports {
            fds.push(PollFd::new(r.as_fd(), PollFlags::POLLIN));
            sources.push(Source::Reports);
        }
        for (i, j) in self.jobs.iter().enumerate() {
            if let Some(l) = &j.listener
                && matches!(
                    j.phase,
                    super::Phase::Running | super::Phase::Hook | super::Phase::Restarting
                )
            {
                fds.push(PollFd::new(l.as_fd(), PollFlags::POLLIN));
                sources.push(Source::Ctl(i));
            }
        }
        match nix::poll::poll(&mut fds, PollTimeout::from(ms)) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(e),
        }
        let ready = PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR;
        Ok(fds
            .iter()
            .zip(sources)
            .filter(|(f, _)| f.revents().is_some_and(|r| r.intersects(ready)))
            .map(|(_, s)| s)
            .collect())
    }

    /// Empty the launchers' and report writers' wake-up pipe (the jobs look at their
    /// threads' outcomes when they are ticked next).
    fn drain_reports(&self) {
        let Some((r, _)) = &self.reports else { return };
        let mut buf = [0u8; 64];
        while let Ok(n) = nix::unistd::read(r, &mut buf) {
            if n < buf.len() {
                break;
            }
        }
    }

    /// Read one request from sbatchd and answer it.
    fn take_request(&mut self) {
        let Some(sock) = self.sock.as_ref() else {
            return;
        };
        let answer = match read_request(sock.as_raw_fd(), &mut self.request_buf) {
            Request::Closed => {
                tracing::debug!(
                    "job supervisor: sbatchd closed its socket; {} job(s) left to follow",
                    self.jobs.len()
                );
                self.sock = None;
                return;
            }
            Request::Nothing => return,
            Request::Bad(why) => format!("ERR {why}"),
            Request::Start { name, wake, job } => {
                self.start_job(&name, wake, job, Instant::now());
                format!("OK {}", std::process::id())
            }
        };
        if let Some(sock) = self.sock.as_ref() {
            match send(sock.as_raw_fd(), answer.as_bytes(), MsgFlags::MSG_NOSIGNAL) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => self.sock = None,
            }
        }
    }

    /// Take the job named `name` (`<jobId>.<idx>.<attempt>`). A job that cannot be
    /// followed has its wake-up pipe closed at once: sbatchd then records it as never
    /// started.
    fn start_job(
        &mut self,
        name: &str,
        wake: OwnedFd,
        handed: Option<Box<crate::state::HandedJob>>,
        born: Instant,
    ) {
        let dir = self.root.join(name);
        let Some(key) = paths::parse_state_dir_name(name) else {
            tracing::error!("job supervisor: {name} is not a job directory");
            return;
        };
        // sbatchd is woken through the pipe; never block on it.
        let _ = nix::fcntl::fcntl(
            &wake,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        );
        if self.db.is_none() {
            match JobDb::open(&self.root.join(db::DB_FILE), false) {
                Ok(d) => self.db = Some(d),
                Err(e) => {
                    tracing::error!("job supervisor {}: {e}", dir.display());
                    return;
                }
            }
        }
        let Some(jobs) = self.db.as_mut() else { return };
        // The job as sbatchd recorded it a moment ago (a new row, no events): no need
        // to read it back.
        let handed = handed.map(|h| db::StoredJob {
            key,
            created: h.created,
            spec: h.spec,
            launch: h.launch,
            supervisor: h.supervisor,
            state: 0,
            pid: 0,
            pgid: 0,
            last_seq: 0,
            acked_seq: 0,
            abandoned: false,
            events: Vec::new(),
        });
        let stored = match handed.map_or_else(|| jobs.job(key), |h| Ok(Some(h))) {
            Ok(Some(j)) => j,
            Ok(None) => {
                tracing::error!(
                    "job supervisor {}: the job is not in the job table",
                    dir.display()
                );
                return;
            }
            Err(e @ db::DbError::Corrupt { .. }) => {
                tracing::error!("job supervisor {}: {e}", dir.display());
                let mut ev = Event {
                    kind: EventKind::StartFailed,
                    time: basalt_runtime::time::now_secs(),
                    message: e.to_string(),
                    ..Default::default()
                };
                if let Err(e) = jobs.append_event(key, &mut ev) {
                    tracing::error!("job supervisor {}: {e}", dir.display());
                }
                let _ = nix::unistd::write(&wake, b"\n");
                return;
            }
            Err(e) => {
                tracing::error!("job supervisor {}: {e}", dir.display());
                return;
            }
        };
        // sbatchd records the supervisor it hands the job to; one started since (the
        // one it knew had died) records itself.
        if let Some(me) = &self.me
            && stored.supervisor.as_ref() != Some(me)
            && let Err(e) = jobs.set_supervisor(key, me)
        {
            tracing::error!("job supervisor {}: {e}", dir.display());
            return;
        }
        if !stored.events.is_empty() || stored.last_seq > 0 {
            // Started before (or declared dead by sbatchd): never run a job twice.
            tracing::error!(
                "job supervisor {}: the job already has a history; not starting it again",
                dir.display()
            );
            return;
        }
        let ctl = crate::state::ctl_socket(&self.root, key);
        let mut sup = Supervisor::new(dir, ctl, stored, wake, born);
        sup.notify = self.reports.as_ref().map(|(_, w)| Arc::clone(w));
        sup.steps.mark("open");
        sup.begin(&mut self.users);
        self.jobs.push(sup);
    }

    /// Reap every ended child, giving its status and resource usage to the job it was
    /// part of: a job's own process (top, helper, command) by pid, an orphan by its
    /// session.
    fn reap(&mut self) {
        loop {
            // Look at the next ended child without reaping it, so that an orphan's
            // session can still be read from /proc.
            // SAFETY: siginfo_t is plain data; waitid fills it.
            #[allow(unsafe_code)]
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: a valid pointer to a siginfo_t; no other argument is a pointer.
            #[allow(unsafe_code)]
            let r = unsafe {
                libc::waitid(
                    libc::P_ALL,
                    0,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                )
            };
            if r != 0 {
                if Errno::last() == Errno::EINTR {
                    continue;
                }
                return;
            }
            // SAFETY: waitid succeeded with WEXITED: si_pid is set (0: none ended).
            #[allow(unsafe_code)]
            let pid = unsafe { info.si_pid() };
            if pid <= 0 {
                return;
            }
            let pid = Pid::from_raw(pid);
            let mut sid = None;
            let owner = self.jobs.iter().position(|j| j.owns_pid(pid)).or_else(|| {
                sid = session_of(pid);
                self.jobs.iter().position(|j| j.leads(sid))
            });
            let mut status: libc::c_int = 0;
            // SAFETY: rusage is plain data that wait4 fills.
            #[allow(unsafe_code)]
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: valid pointers to a c_int and a rusage.
            #[allow(unsafe_code)]
            let got = unsafe { libc::wait4(pid.as_raw(), &mut status, libc::WNOHANG, &mut ru) };
            if got != pid.as_raw() {
                if got < 0 && Errno::last() == Errno::EINTR {
                    continue;
                }
                return;
            }
            let launching = self.jobs.iter().any(|j| j.expects_children());
            match owner.and_then(|i| self.jobs.get_mut(i)) {
                Some(j) => j.on_reaped(pid, status, &ru),
                None if launching => {
                    self.unclaimed.push(Unclaimed {
                        pid,
                        sid,
                        status,
                        usage: ru,
                        at: Instant::now(),
                    });
                }
                None => {}
            }
        }
    }

    /// Give the reaped children kept in [`Runner::unclaimed`] to the jobs that now know
    /// them; drop those kept too long. Returns whether a job got one.
    fn claim(&mut self, now: Instant) -> bool {
        if self.unclaimed.is_empty() {
            return false;
        }
        let mut claimed = false;
        let jobs = &mut self.jobs;
        self.unclaimed.retain(|u| {
            let owner = jobs
                .iter_mut()
                .find(|j| j.owns_pid(u.pid) || j.leads(u.sid));
            match owner {
                Some(j) => {
                    j.on_reaped(u.pid, u.status, &u.usage);
                    claimed = true;
                    false
                }
                None => now.duration_since(u.at) < UNCLAIMED_KEEP,
            }
        });
        claimed
    }

    /// Record what the jobs emitted this turn and wake sbatchd for each, then make the
    /// jobs' ends durable (one `fdatasync` while sbatchd reads and reports them); a job
    /// whose end is on record leaves. Returns when a refused final event is due again.
    fn flush(&mut self, now: Instant) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        // A final event was committed this turn: sync once sbatchd has been woken.
        let mut unsynced = false;
        for job in &mut self.jobs {
            if job.outbox.is_empty() {
                continue;
            }
            if let Some(t) = job.retry_at
                && t > now
            {
                next = Some(next.map_or(t, |n| n.min(t)));
                continue;
            }
            let has_final = job.outbox.iter().any(|e| e.kind.is_final());
            let Some(jobs) = self.db.as_mut() else {
                job.outbox.clear();
                continue;
            };
            match jobs.append_events_then_sync(job.key, &mut job.outbox) {
                Ok(_) => {
                    job.wake_with(&job.outbox);
                    job.outbox.clear();
                    job.retry_at = None;
                    job.done = has_final;
                    unsynced |= has_final;
                }
                Err(err @ (db::DbError::Finished { .. } | db::DbError::NoJob { .. })) => {
                    job.outbox.clear();
                    if has_final {
                        tracing::warn!(
                            "job supervisor {}: the job's end is not recorded here: {err}",
                            job.dir.display()
                        );
                        job.done = true;
                    } else {
                        // sbatchd gave this job up (it thought its supervisor dead):
                        // the job must not run on unrecorded.
                        tracing::error!(
                            "job supervisor {}: {err}; killing the job",
                            job.dir.display()
                        );
                        job.start_kill(0, "-");
                    }
                    job.wake();
                }
                Err(err) if has_final => {
                    if job.retries.is_multiple_of(60) {
                        tracing::error!(
                            "job supervisor {}: cannot record the job's end ({err}); retrying every second",
                            job.dir.display()
                        );
                    }
                    job.retries = job.retries.saturating_add(1);
                    let t = now + FINAL_RETRY;
                    job.retry_at = Some(t);
                    next = Some(next.map_or(t, |n| n.min(t)));
                }
                Err(err) => {
                    tracing::error!("job supervisor {}: {err}", job.dir.display());
                    job.outbox.clear();
                }
            }
        }
        if unsynced
            && let Some(jobs) = self.db.as_mut()
            && let Err(e) = jobs.sync_log()
        {
            // The ends are committed; the next checkpoint writes them out.
            tracing::error!("job supervisor: {e}");
        }
        self.jobs.retain_mut(|j| {
            if j.done {
                j.steps.mark("final");
                j.steps.log(j.key);
            }
            !j.done
        });
        next
    }
}
