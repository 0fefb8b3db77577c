//! `Attach`: an interactive batch job's standard streams (`bsub -I`, `-Ip`, `-Is`),
//! taken from the job's supervisor on this host and relayed to bsub.
//!
//! The job's control socket is `<sbatchd state root>/ctl/<jobId>.<idx>.<attempt>` (the
//! latest attempt); RES sends `ATTACH <user>` there and gets `OK <pgid> <mask>` with the
//! job's ends of its pipes or the master of its pseudo-terminal as `SCM_RIGHTS`
//! descriptors (see sbatchd's `supervisor::interactive`), `WAIT` while the job's
//! pre-execution commands run, or `ERR ...`. The supervisor checks the user: the job's,
//! or root.

use crate::service::{Sink, feed, kill_group, relay, relay_terminal};
use basalt_proto::res::{AttachJob, Started, TaskInput, TaskOutput, task_output};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tonic::{Status, Streaming};
use tracing::{info, warn};

/// The mask bits of the supervisor's answer (sbatchd `supervisor::interactive`).
const STDIN: u8 = 1;
const STDOUT: u8 = 2;
const STDERR: u8 = 4;
const PTY: u8 = 8;

/// How long a job's control socket is looked for (mbatchd may say RUN a moment before
/// sbatchd has the job).
const FIND_WAIT: Duration = Duration::from_secs(20);
/// How often the supervisor is asked again.
const RETRY: Duration = Duration::from_millis(100);

/// What the supervisor answered.
#[derive(Debug)]
pub(crate) enum Answer {
    Handed {
        pgid: i32,
        ends: Vec<(u8, OwnedFd)>,
    },
    /// The job's pre-execution commands run: ask again.
    Wait,
    /// No supervisor has the job (yet, or any more).
    NotFound,
    Denied,
    Refused(String),
}

/// The control socket of job `job_id[idx]`'s latest attempt under `ctl_dir`.
fn control_socket(ctl_dir: &Path, job_id: u64, idx: u32) -> Option<PathBuf> {
    let prefix = format!("{job_id}.{idx}.");
    std::fs::read_dir(ctl_dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let attempt: u32 = name.to_str()?.strip_prefix(&prefix)?.parse().ok()?;
            Some((attempt, e.path()))
        })
        .max_by_key(|(a, _)| *a)
        .map(|(_, p)| p)
}

/// Ask the supervisor for the job's streams (blocking; bounded by socket timeouts).
pub(crate) fn ask(ctl_dir: &Path, job_id: u64, idx: u32, user: &str) -> Answer {
    let Some(path) = control_socket(ctl_dir, job_id, idx) else {
        return Answer::NotFound;
    };
    let Ok(stream) = UnixStream::connect(&path) else {
        return Answer::NotFound;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    if (&stream)
        .write_all(format!("ATTACH {user}\n").as_bytes())
        .is_err()
    {
        return Answer::NotFound;
    }
    let (text, fds) = match crate::sys::recv_with_fds(stream.as_raw_fd(), 4) {
        Ok(r) => r,
        Err(e) => return Answer::Refused(format!("the job's supervisor: {e}")),
    };
    let text = String::from_utf8_lossy(&text).trim().to_owned();
    let mut words = text.split_whitespace();
    match words.next() {
        Some("OK") => {
            let pgid = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
            let mask: u8 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
            let bits = [STDIN, STDOUT, STDERR, PTY]
                .into_iter()
                .filter(|b| mask & b != 0);
            let ends: Vec<(u8, OwnedFd)> = bits.zip(fds).collect();
            Answer::Handed { pgid, ends }
        }
        Some("WAIT") => Answer::Wait,
        Some("ERR") if text.contains("permission") => Answer::Denied,
        _ => Answer::Refused(text),
    }
}

/// Serve one Attach stream: find the job, take its streams, relay them until the job's
/// output ends; a client that goes away kills the job (the kill sequence, through its
/// supervisor).
pub(crate) fn serve(
    live: crate::service::Live,
    host: String,
    ctl_dir: PathBuf,
    user: String,
    a: AttachJob,
    input: Streaming<TaskInput>,
    tx: mpsc::Sender<Result<TaskOutput, Status>>,
) {
    tokio::spawn(async move {
        let (job_id, idx) = (a.job_id, a.idx);
        let since = Instant::now();
        let (pgid, ends) = loop {
            let (dir, u) = (ctl_dir.clone(), user.clone());
            let answer = tokio::task::spawn_blocking(move || ask(&dir, job_id, idx, &u))
                .await
                .unwrap_or_else(|e| Answer::Refused(e.to_string()));
            let status = match answer {
                Answer::Handed { pgid, ends } => break (pgid, ends),
                Answer::Wait => None,
                Answer::NotFound if since.elapsed() < FIND_WAIT => None,
                Answer::NotFound => Some(Status::not_found(format!(
                    "Job <{}> is not running on host <{host}>",
                    if idx > 0 {
                        format!("{job_id}[{idx}]")
                    } else {
                        job_id.to_string()
                    }
                ))),
                Answer::Denied => Some(Status::permission_denied("User permission denied")),
                Answer::Refused(why) => Some(Status::failed_precondition(why)),
            };
            if let Some(s) = status {
                let _ = tx.send(Err(s)).await;
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(RETRY) => {}
                () = tx.closed() => return,
            }
        };
        info!(job = job_id, %user, "interactive job attached");
        let group = Pid::from_raw(pgid);
        let started = TaskOutput {
            what: Some(task_output::What::Started(Started {
                pid: u32::try_from(pgid).unwrap_or(0),
                host: host.clone(),
            })),
        };
        let _ = tx.send(Ok(started)).await;
        let mut relays = Vec::new();
        let mut sink = Sink::Closed;
        for (bit, fd) in ends {
            match bit {
                PTY => match relay_terminal(std::fs::File::from(fd), &tx) {
                    Ok((out, terminal)) => {
                        if a.rows > 0 && a.cols > 0 {
                            terminal.set_window(a.rows, a.cols);
                        }
                        relays.push(out);
                        sink = terminal;
                    }
                    Err(e) => warn!("the job's terminal: {e}"),
                },
                STDIN => match tokio::net::unix::pipe::Sender::from_owned_fd(fd) {
                    Ok(w) => sink = Sink::Pipe(Box::new(w)),
                    Err(e) => warn!("the job's standard input: {e}"),
                },
                _ => {
                    let wrap = if bit == STDOUT {
                        task_output::What::Stdout
                    } else {
                        task_output::What::Stderr
                    };
                    match tokio::net::unix::pipe::Receiver::from_owned_fd(fd) {
                        Ok(r) => relays.push(tokio::spawn(relay(r, tx.clone(), wrap))),
                        Err(e) => warn!("the job's output: {e}"),
                    }
                }
            }
        }
        let feeding = tokio::spawn(feed(input, sink, group));
        let ended = async {
            for r in relays {
                let _ = r.await;
            }
        };
        tokio::select! {
            () = ended => {}
            () = tx.closed() => {
                warn!(job = job_id, "bsub gone; killing the interactive job");
                let dir = ctl_dir.clone();
                let _ = tokio::task::spawn_blocking(move || kill(&dir, job_id, idx)).await;
                kill_group(group, Signal::SIGHUP);
            }
        }
        feeding.abort();
        drop(live);
    });
}

/// The kill sequence for the job, through its supervisor.
fn kill(ctl_dir: &Path, job_id: u64, idx: u32) {
    let Some(path) = control_socket(ctl_dir, job_id, idx) else {
        return;
    };
    if let Ok(stream) = UnixStream::connect(path) {
        let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
        let _ = (&stream).write_all(b"KILL 10 -\n");
    }
}
