//! Orders for running jobs: signals from mbatchd (kill, stop, resume, signal, limits,
//! checkpoint), the load policy's view and decisions, peek, and the commands sent to a
//! supervisor's control socket.

use super::{Key, Owner, PeekTarget};
use basalt_core::job::status as jstat;
use basalt_proto::sbatchd::{SignalAction, SignalJobRequest};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;
use tonic::Status;
use tracing::{Instrument, info, warn};

impl Owner {
    pub(super) fn signal(
        &mut self,
        req: SignalJobRequest,
        reply: oneshot::Sender<Result<bool, Status>>,
    ) {
        let Some(key) = self.find(req.job_id, req.idx, req.attempt) else {
            let _ = reply.send(Ok(false));
            return;
        };
        let Some(job) = self.jobs.get(&key) else {
            let _ = reply.send(Ok(false));
            return;
        };
        if !job.running() {
            let _ = reply.send(Ok(false));
            return;
        }
        // The service refuses a missing or unknown action before it gets here.
        let Ok(action) = SignalAction::try_from(req.action) else {
            let _ = reply.send(Err(Status::invalid_argument(format!(
                "signal order of unknown action {}",
                req.action
            ))));
            return;
        };
        let cmd = match action {
            SignalAction::Unspecified => {
                let _ = reply.send(Err(Status::invalid_argument(
                    "signal order without an action (kill, stop, resume or signal)",
                )));
                return;
            }
            SignalAction::Kill => {
                let ti = if req.terminate_interval > 0 {
                    req.terminate_interval
                } else {
                    self.shared.terminate_interval.load(Ordering::SeqCst)
                };
                let reason = if req.term_reason.trim().is_empty() {
                    "-".to_owned()
                } else {
                    req.term_reason
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join("_")
                };
                format!("KILL {ti} {reason}")
            }
            SignalAction::Stop => format!("STOP {} {} 0", req.stop_state, req.reasons),
            SignalAction::Resume => "RESUME".to_owned(),
            SignalAction::Limits => {
                if req.rlimits.len() != 11 {
                    let _ = reply.send(Err(Status::invalid_argument(
                        "limits order without the job's 11 limits",
                    )));
                    return;
                }
                let values: Vec<String> = req.rlimits.iter().map(i64::to_string).collect();
                format!("LIMITS {}", values.join(" "))
            }
            SignalAction::Signal => match basalt_core::job::signal_number(&req.signal) {
                Some(n) => format!("SIG {n}"),
                None => {
                    let _ = reply.send(Err(Status::invalid_argument(format!(
                        "{}: Unknown signal",
                        req.signal
                    ))));
                    return;
                }
            },
            // The supervisor answers at once; the outcome comes as a CHKPNT report.
            SignalAction::Chkpnt => format!(
                "CHKPNT {} {} {}",
                u8::from(req.chkpnt_kill),
                u8::from(req.chkpnt_force),
                u8::from(req.chkpnt_migrate)
            ),
        };
        info!("job {} idx {} attempt {}: {cmd}", key.0, key.1, key.2);
        self.send_ctl(key, cmd, Some(reply));
    }

    /// Send a command to the job's supervisor (in a task); answer `reply` with found.
    pub(super) fn send_ctl(
        &self,
        key: Key,
        cmd: String,
        reply: Option<oneshot::Sender<Result<bool, Status>>>,
    ) {
        let Some(job) = self.jobs.get(&key) else {
            if let Some(r) = reply {
                let _ = r.send(Ok(false));
            }
            return;
        };
        let ctl = job.ctl.clone();
        let runner = self.shared.runner.clone();
        tokio::spawn(
            async move {
                match runner.control(key, &ctl, &cmd).await {
                    Ok(answer) if answer.starts_with("OK") => {}
                    Ok(answer) => {
                        warn!("job {}: supervisor refused {cmd}: {}", key.0, answer.trim())
                    }
                    Err(e) => warn!("job {}: supervisor did not take {cmd}: {e}", key.0),
                }
                if let Some(r) = reply {
                    let _ = r.send(Ok(true));
                }
            }
            .in_current_span(),
        );
    }

    /// The jobs the load policy decides about: started, not finished, not ending.
    pub(super) fn policy_jobs(&self) -> Vec<basalt_susp_core::JobView> {
        use basalt_susp_core::JobState as P;
        self.jobs
            .iter()
            .filter(|(_, j)| j.running() && !j.ending && j.pid != 0 && j.reports.is_some())
            .filter_map(|(k, j)| {
                let state = match j.state {
                    jstat::RUN => P::Run,
                    jstat::SSUSP => P::Ssusp {
                        reasons: j.reasons,
                        subreasons: j.subreasons,
                    },
                    jstat::USUSP => P::Ususp,
                    _ => return None,
                };
                Some(basalt_susp_core::JobView {
                    key: *k,
                    queue: j.spec.queue.clone(),
                    start_time: j.start_ms,
                    state,
                    forced: j.spec.forced,
                })
            })
            .collect()
    }

    /// Carry out the load policy's decisions through the jobs' supervisors. The
    /// state is taken at once (the supervisor's event confirms it) so the next
    /// pass does not act on the same job twice. A decision made on a state that
    /// changed meanwhile (bstop, bresume, the job ended) is dropped.
    pub(super) fn policy_actions(&mut self, actions: Vec<basalt_susp_core::Action>) {
        use basalt_susp_core::Action;
        for a in actions {
            let key = match &a {
                Action::Suspend { key, .. }
                | Action::Resume { key }
                | Action::Terminate { key, .. }
                | Action::Reason { key, .. } => *key,
            };
            let Some(j) = self.jobs.get(&key) else {
                continue;
            };
            let still = j.running()
                && match &a {
                    Action::Suspend { .. } => j.state == jstat::RUN,
                    Action::Resume { .. } | Action::Reason { .. } => {
                        j.state == jstat::SSUSP
                            && j.reasons & basalt_core::job::susp::USER_STOP == 0
                    }
                    Action::Terminate { .. } => matches!(j.state, jstat::RUN | jstat::SSUSP),
                };
            if !still {
                continue;
            }
            let (key, cmd) = match a {
                Action::Suspend {
                    key,
                    reasons,
                    subreasons,
                } => {
                    if let Some(j) = self.jobs.get_mut(&key) {
                        j.state = jstat::SSUSP;
                        j.reasons = reasons;
                        j.subreasons = subreasons;
                    }
                    info!(
                        "job {} idx {} attempt {}: suspending ({})",
                        key.0,
                        key.1,
                        key.2,
                        basalt_core::job::susp_reason_text(reasons, subreasons).trim()
                    );
                    (key, format!("STOP {} {reasons} {subreasons}", jstat::SSUSP))
                }
                Action::Resume { key } => {
                    if let Some(j) = self.jobs.get_mut(&key) {
                        j.state = jstat::RUN;
                        j.reasons = 0;
                        j.subreasons = 0;
                    }
                    info!("job {} idx {} attempt {}: resuming", key.0, key.1, key.2);
                    (key, "RESUME".to_owned())
                }
                Action::Terminate { key, term_reason } => {
                    let ti = self.shared.terminate_interval.load(Ordering::SeqCst);
                    info!(
                        "job {} idx {} attempt {}: terminating ({term_reason})",
                        key.0, key.1, key.2
                    );
                    (key, format!("KILL {ti} {term_reason}"))
                }
                Action::Reason {
                    key,
                    reasons,
                    subreasons,
                } => {
                    if let Some(j) = self.jobs.get_mut(&key) {
                        j.reasons = reasons;
                        j.subreasons = subreasons;
                    }
                    (
                        key,
                        format!("REASON {} {reasons} {subreasons}", jstat::SSUSP),
                    )
                }
            };
            self.send_ctl(key, cmd, None);
        }
    }

    /// Where job `job_id[idx]`'s output goes, for its owner (or root) `uid`.
    pub(super) fn peek(&self, job_id: u64, idx: u32, uid: u32) -> Result<PeekTarget, Status> {
        let key = self
            .find(job_id, idx, 0)
            .ok_or_else(|| Status::not_found("No matching job found"))?;
        let job = self
            .jobs
            .get(&key)
            .ok_or_else(|| Status::not_found("No matching job found"))?;
        let allowed = uid == 0 || uid == job.spec.uid || Some(uid) == job.exec_uid;
        if !allowed {
            return Err(Status::permission_denied("User permission denied"));
        }
        Ok(PeekTarget {
            path: job.out_path.clone(),
        })
    }
}

/// One command to a job's control socket (`path`); returns its reply line.
pub async fn ctl_call(path: &Path, cmd: &str) -> Result<String, String> {
    let call = async {
        let mut s = tokio::net::UnixStream::connect(&path)
            .await
            .map_err(|e| format!("connect {}: {e}", path.display()))?;
        s.write_all(format!("{cmd}\n").as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        BufReader::new(s)
            .read_line(&mut line)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(line)
    };
    tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .map_err(|_| "timed out".to_owned())?
}
