//! MultiCluster job forwarding (seed 004, "Job scheduling under the job forwarding
//! model"), the core's part. Both sides of a forward live here:
//!
//! * **Submission cluster.** Phase I is the ordinary pass: a send-jobs queue's limits
//!   decide acceptance at `bsub`, and a job is placed locally if any local host fits.
//!   Phase II (`Sched::forward_pass`, after each pass): a pending job of a send-jobs
//!   queue that the pass could not place, and that waits for no job-level reason (start
//!   time, dependency, pre-execution retry, array limit, queue inactive), goes to the
//!   remote receive-jobs queue [`choose`] picks from the capacity each remote cluster
//!   last reported ([`Sched::mc_set_remote`](crate::Sched::mc_set_remote)), with the
//!   jobs we forwarded that the report does not count yet (its cluster's list of our
//!   jobs did not name them: [`McJob::listed`](crate::McJob)) added to their queue as
//!   pending there, so a forward takes its queue's room at once, in its pass and the
//!   next ones: logged `JOB_FORWARD`, then sent ([`Effect::McForward`]). The job stays pending here (reason
//!   [`pend::MC_FORWARDED`](basalt_core::job::pend)) until the remote cluster's list of
//!   our jobs ([`Sched::mc_remote_jobs`](crate::Sched::mc_remote_jobs)) says it started, ended or came back; its start
//!   and end are logged here as JOB_START (hosts `host@cluster`) and JOB_STATUS, so
//!   bjobs, bhist and bacct show it as any job. A refusal or a return is a JOB_STATUS
//!   PEND with [`PEND_MC_RETURNED`]; returns because it could not start are counted, and
//!   after `LSB_MC_INITFAIL_RETRY` of them the job is PSUSP.
//! * **Execution cluster.** Phase III ([`Sched::mc_accept`](crate::Sched::mc_accept)): the receive-jobs queue
//!   applies its own acceptance rules (RCVJOBS_FROM, IMPT_JOBBKLG, and every check of an
//!   ordinary submission); an accepted job gets a local id (JOB_NEW, then `JOB_ACCEPT`)
//!   and is scheduled like the others. One not started within MAX_RSCHED_TIME ×
//!   MBD_SLEEP_TIME, or whose start failed, is given back: it ends here EXIT with
//!   [`TERM_MC_RETURN`] / [`TERM_MC_INITFAIL`] (no lsb.acct record) and the submission
//!   cluster sees it returned.
//!
//! Nothing here does I/O: the runtime carries the effects to the other cluster and feeds
//! its answers back.

use crate::schedule::walk::PendReasons;
mod choose;
mod exec;

pub use choose::{Candidate, choose, remote_fits};

use crate::{Effect, Event, Job, JobKey, Millis, Usage, secs};
use basalt_core::job::{JobState, pend, status};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Pending reason of a job that came back from a remote cluster (JOB_STATUS PEND with
/// this reason; the subreason says why: [`RETURN_REJECTED`], [`RETURN_NOT_STARTED`],
/// [`RETURN_START_FAILED`], [`RETURN_LOST`]).
pub const PEND_MC_RETURNED: u32 = pend::MC_RETURNED;
/// The receive-jobs queue refused it (Phase III acceptance).
pub const RETURN_REJECTED: u32 = 1;
/// Not started there within MAX_RSCHED_TIME (counted towards LSB_MC_INITFAIL_RETRY).
pub const RETURN_NOT_STARTED: u32 = 2;
/// Its start failed there (counted towards LSB_MC_INITFAIL_RETRY).
pub const RETURN_START_FAILED: u32 = 3;
/// The remote cluster no longer knows it.
pub const RETURN_LOST: u32 = 4;
/// The term reason of a job the execution cluster gave back because it did not start
/// within MAX_RSCHED_TIME.
pub const TERM_MC_RETURN: &str = "TERM_MC_RETURN";
/// ... because its start failed.
pub const TERM_MC_INITFAIL: &str = "TERM_MC_INITFAIL";
/// MAX_PREEXEC_RETRY's default.
pub const DEFAULT_MAX_PREEXEC_RETRY: u32 = 5;
/// How long a forward nobody confirmed waits before it is sent again (ms).
pub const RESEND_AFTER: Millis = 5000;
/// The submission token of a forwarded job starts so: `mc:<cluster>:<job>.<index>:<attempt>`
/// (a repeated forward gets the job the first one created). Users' tokens may not
/// ([`crate::bounds::check_submit_token`]), so no local submission can answer for a
/// forwarded one, or take one's place.
pub const MC_TOKEN_PREFIX: &str = "mc:";

/// The token of forward `attempt` of `cluster`'s job `src`.
pub(crate) fn forwarded_token(cluster: &str, src: JobKey, attempt: u32) -> String {
    format!("{MC_TOKEN_PREFIX}{cluster}:{}.{}:{attempt}", src.0, src.1)
}

/// The cluster a forwarded job's token names, if `token` is one.
pub(crate) fn forwarded_token_cluster(token: &str) -> Option<&str> {
    token.strip_prefix(MC_TOKEN_PREFIX)?.split(':').next()
}

/// Does a return of this cause count towards LSB_MC_INITFAIL_RETRY?
pub fn counted(cause: u32) -> bool {
    matches!(cause, RETURN_NOT_STARTED | RETURN_START_FAILED)
}

/// MC_PLUGIN_SCHEDULE_ENHANCE (lsb.params).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Enhance {
    pub resource_only: bool,
    pub count_preemptable: bool,
    pub high_queue_priority: bool,
    pub preemptable_queue_priority: bool,
    pub pending_workload: bool,
}

/// How Phase II picks a remote queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// MC_PLUGIN_REMOTE_RESOURCE=Y (lsf.conf): `type==`, `same[type]` and `defined()`
    /// are checked against the remote queue's hosts.
    pub remote_resource: bool,
    pub enhance: Option<Enhance>,
}

/// The MultiCluster part of the core's configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McConfig {
    /// Send-jobs queues: queue -> its SNDJOBS_TO (remote queue, cluster), in order.
    pub send: BTreeMap<String, Vec<(String, String)>>,
    /// Receive-jobs queues: queue -> (RCVJOBS_FROM, IMPT_JOBBKLG; None = infinit).
    pub recv: BTreeMap<String, (Vec<String>, Option<u32>)>,
    /// MAX_RSCHED_TIME × MBD_SLEEP_TIME in ms (None = infinit).
    pub max_rsched_ms: Option<Millis>,
    /// LSB_MC_INITFAIL_RETRY.
    pub initfail_retry: u32,
    /// MAX_PREEXEC_RETRY by queue (its own, else lsb.params', else 5): attempts of a
    /// forwarded job's pre-execution command here before it goes back.
    pub preexec_retry: BTreeMap<String, u32>,
    /// Remote clusters whose jobs this cluster does not take (RemoteClusters RECV_FROM
    /// = N).
    pub no_recv: Vec<String>,
    pub policy: Policy,
    /// lsb.users UserMap: who forwarded jobs run as (import: received here; export:
    /// sent from here).
    pub user_map: basalt_config::batch::UserMap,
}

impl McConfig {
    /// The MultiCluster part of a configuration.
    pub fn from_config(c: &basalt_config::Config) -> McConfig {
        let p = &c.batch.params;
        let queues = &c.batch.queues;
        McConfig {
            send: queues
                .iter()
                .filter(|q| !q.snd_jobs_to.is_empty())
                .map(|q| (q.name.clone(), q.snd_jobs_to.clone()))
                .collect(),
            recv: queues
                .iter()
                .filter(|q| !q.rcv_jobs_from.is_empty())
                .map(|q| (q.name.clone(), (q.rcv_jobs_from.clone(), q.impt_jobbklg)))
                .collect(),
            max_rsched_ms: p
                .max_rsched_time
                .map(|n| i64::from(n) * i64::from(p.mbd_sleep_time_secs.max(1)) * 1000),
            initfail_retry: c.lsf_conf.mc_initfail_retry(),
            preexec_retry: queues
                .iter()
                .map(|q| {
                    let n = crate::config::setting(&q.other, &p.other, "MAX_PREEXEC_RETRY")
                        .unwrap_or(DEFAULT_MAX_PREEXEC_RETRY);
                    (q.name.clone(), n)
                })
                .collect(),
            no_recv: c
                .cluster
                .remote_clusters
                .iter()
                .filter(|r| !r.recv_from)
                .map(|r| r.name.clone())
                .collect(),
            policy: Policy {
                remote_resource: c.lsf_conf.mc_plugin_remote_resource(),
                enhance: p.mc_schedule_enhance.map(|e| Enhance {
                    resource_only: e.resource_only,
                    count_preemptable: e.count_preemptable,
                    high_queue_priority: e.high_queue_priority,
                    preemptable_queue_priority: e.preemptable_queue_priority,
                    pending_workload: e.pending_workload,
                }),
            },
            user_map: c.batch.user_map.clone(),
        }
    }

    /// The local users a job of `remote_user` received from `cluster` may run as, in
    /// order: the UserMap import rows' for that user and cluster, else the user of the
    /// same name. (Which of them exists here is mbatchd's to look up:
    /// [`McAccounts`].)
    pub fn import_candidates(&self, cluster: &str, remote_user: &str) -> Vec<String> {
        let mapped = self.user_map.import(cluster, remote_user);
        if mapped.is_empty() {
            vec![remote_user.to_owned()]
        } else {
            mapped.into_iter().map(str::to_owned).collect()
        }
    }

    /// The user name a job of `local_user` carries to `cluster`: the UserMap export
    /// rows' remote user for that user and cluster, else its own.
    pub fn export_name<'a>(&'a self, local_user: &'a str, cluster: &str) -> &'a str {
        self.user_map
            .export(local_user, cluster)
            .unwrap_or(local_user)
    }

    /// Does the receive-jobs queue `queue` take jobs from `cluster`?
    pub fn receives(&self, queue: &str, cluster: &str) -> bool {
        if self.no_recv.iter().any(|c| c == cluster) {
            return false;
        }
        self.recv.get(queue).is_some_and(|(from, _)| {
            from.iter()
                .any(|c| c == cluster || c.eq_ignore_ascii_case("allclusters"))
        })
    }
}

/// What the receiving mbatchd found out for a forwarded job about the users it may run
/// as here: each of [`McConfig::import_candidates`] looked up in this cluster's password
/// database, and the cluster's rules. The core decides with it
/// ([`Sched::mc_accept`](crate::Sched::mc_accept)); the forwarded record's uid is never
/// used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McAccounts {
    /// (user name, its uid here; None: no such user here).
    pub found: Vec<(String, Option<u32>)>,
    /// lsf.conf `LSF_ROOT_REX`: root's jobs may run here.
    pub root_rex: bool,
    /// A personal cluster (its daemons do not run as root): the only user whose jobs
    /// run here.
    pub only: Option<String>,
}

/// One receive-jobs queue of a remote cluster, as its mbatchd reported it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteQueue {
    pub name: String,
    pub priority: u32,
    /// IMPT_JOBBKLG (None = infinit).
    pub impt_jobbklg: Option<u32>,
    /// MultiCluster jobs pending in it.
    pub mc_pending: u32,
    pub free_slots: u32,
    pub preemptable_slots: u32,
    /// Slots its pending jobs ask for.
    pub pending_slots: u32,
    /// Its hosts' (type, resources), one per distinct pair.
    pub hosts: Vec<(String, Vec<String>)>,
}

impl RemoteQueue {
    /// How many more MultiCluster jobs it takes (u32::MAX: no limit).
    pub fn room(&self) -> u32 {
        self.impt_jobbklg
            .map_or(u32::MAX, |n| n.saturating_sub(self.mc_pending))
    }
}

/// What is known of a remote cluster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Remote {
    /// Its receive-jobs queues that take our jobs; None: not reachable now.
    pub queues: Option<Vec<RemoteQueue>>,
    /// When it last answered (ms, 0 = never).
    pub last_contact: Millis,
}

/// A job forwarded by another cluster, as this cluster reports it back (or, on the
/// submission side, as the remote cluster reported it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteJob {
    /// The job in the submission cluster, and which forward of it.
    pub src: JobKey,
    pub attempt: u32,
    /// Its id in the execution cluster.
    pub remote_id: u64,
    pub state: u32,
    pub reasons: u32,
    pub subreasons: u32,
    pub hosts: Vec<String>,
    pub start_time: i64,
    pub end_time: i64,
    pub exit_status: i32,
    pub cpu_time: f64,
    pub term_reason: String,
    /// 0, or [`RETURN_NOT_STARTED`] / [`RETURN_START_FAILED`]: given back.
    pub returned: u32,
    pub usage: Option<Usage>,
}

impl crate::Sched {
    /// What is known of each remote cluster (bclusters).
    pub fn mc_remotes(&self) -> &BTreeMap<String, Remote> {
        &self.mc_remote
    }

    /// The remote cluster a job runs (or waits) in for us, if it is forwarded.
    pub(crate) fn forwarded_to(&self, key: JobKey) -> Option<String> {
        let j = self.jobs.get(&key)?;
        let m = j.mc.as_ref()?;
        (!m.fwd_cluster.is_empty()).then(|| m.fwd_cluster.to_string())
    }

    /// The remote cluster `cluster` answered with its receive-jobs queues that take our
    /// jobs (None: it could not be reached). New room makes a pass due.
    pub fn mc_set_remote(&mut self, now: Millis, cluster: &str, queues: Option<Vec<RemoteQueue>>) {
        let r = self.mc_remote.entry(cluster.to_owned()).or_default();
        if queues.is_some() {
            r.last_contact = now;
        }
        let more_room = match (&r.queues, &queues) {
            (None, Some(_)) => true,
            (Some(old), Some(new)) => new.iter().any(|q| {
                old.iter()
                    .find(|o| o.name == q.name)
                    .is_none_or(|o| q.room() > o.room() || q.free_slots > o.free_slots)
            }),
            _ => false,
        };
        r.queues = queues;
        if more_room && self.mc_waiting() {
            self.dirty = true;
            self.fresh_only = false;
        }
    }

    /// Some job of a send-jobs queue is pending and not forwarded.
    fn mc_waiting(&self) -> bool {
        self.cfg.mc.send.keys().any(|q| {
            self.counts.pending.get(q.as_str()).is_some_and(|p| {
                p.iter().any(|(_, k)| {
                    self.jobs
                        .get(k)
                        .is_some_and(|j| j.state == JobState::Pend && !is_forwarded(j))
                })
            })
        })
    }

    /// Phase II, after a pass: forward the pending jobs of send-jobs queues the pass
    /// could not place.
    pub(crate) fn forward_pass(&mut self, now: Millis) {
        if self.cfg.mc.send.is_empty() || self.replaying {
            return;
        }
        let t = secs(now);
        let mut queues: Vec<(u32, String)> = self
            .queues
            .iter()
            .filter(|q| self.cfg.mc.send.contains_key(&q.name))
            .filter(|q| q.active && self.queue_windows_open(q))
            .map(|q| (u32::MAX - q.priority, q.name.clone()))
            .collect();
        queues.sort();
        // Each remote queue as Phase II sees it: as its cluster last reported it, plus the
        // jobs we sent it that the report does not count yet (before this pass, and in
        // it as they are sent).
        let mut seen = self.mc_unreported();
        let mut sends: Vec<(JobKey, String, String)> = Vec::new();
        for (_, qname) in queues {
            let Some(targets) = self.cfg.mc.send.get(&qname) else {
                continue;
            };
            let Some(pending) = self.counts.pending.get(qname.as_str()) else {
                continue;
            };
            for (_, key) in pending.iter() {
                let Some(j) = self.jobs.get(key) else {
                    continue;
                };
                if j.state != JobState::Pend || is_forwarded(j) || !forwardable(&j.pend_reasons) {
                    continue;
                }
                // (An array's elements are not forwarded: they share one submission.)
                if j.is_element() {
                    continue;
                }
                let refused = j.mc.as_ref().map(|m| &m.refused);
                let mut cands = Vec::new();
                for (rq, rc) in targets {
                    if refused.is_some_and(|r| {
                        r.iter()
                            .any(|(c, q, until)| *c == **rc && *q == **rq && *until > now)
                    }) {
                        continue;
                    }
                    let Some(q) = seen.get(&(rc.clone(), rq.clone())) else {
                        continue;
                    };
                    cands.push(Candidate {
                        cluster: rc,
                        queue: q,
                        room: choice_room(q),
                    });
                }
                let rr = self.job_res_req(&j.sub);
                if let Some(i) = choose(&cands, &rr, self.cfg.mc.policy) {
                    let (c, q) = (cands[i].cluster.to_owned(), cands[i].queue.name.clone());
                    let slots = j.slots();
                    if let Some(v) = seen.get_mut(&(c.clone(), q.clone())) {
                        take(v, 1, slots);
                    }
                    sends.push((*key, c, q));
                }
            }
        }
        for (key, cluster, queue) in sends {
            self.emit(Event::JobForward {
                time: t,
                key,
                cluster: cluster.clone(),
                queue: queue.clone(),
            });
            let attempt = self.mc_sent(key, now);
            self.effects.push(Effect::McForward {
                key,
                cluster,
                queue,
                attempt,
            });
        }
    }

    /// The receive-jobs queues of the remote clusters that answered, by (cluster,
    /// queue), as Phase II counts them: as last reported, with the jobs we forwarded
    /// there that the remote cluster's last list of our jobs did not name (it reported
    /// before they arrived) counted as pending there and as taking free slots — so a
    /// job just forwarded counts against its queue's room at once, not only after the
    /// next report.
    fn mc_unreported(&self) -> BTreeMap<(String, String), RemoteQueue> {
        let mut out: BTreeMap<(String, String), RemoteQueue> = BTreeMap::new();
        for (cluster, r) in &self.mc_remote {
            for q in r.queues.iter().flatten() {
                out.insert((cluster.clone(), q.name.clone()), q.clone());
            }
        }
        for qname in self.cfg.mc.send.keys() {
            let Some(pending) = self.counts.pending.get(qname.as_str()) else {
                continue;
            };
            for (_, key) in pending.iter() {
                let Some(j) = self.jobs.get(key).filter(|j| j.state == JobState::Pend) else {
                    continue;
                };
                let Some(m) = j.mc.as_deref().filter(|m| !m.fwd_cluster.is_empty()) else {
                    continue;
                };
                if m.listed {
                    continue;
                }
                let at = (m.fwd_cluster.to_string(), m.fwd_queue.to_string());
                if let Some(q) = out.get_mut(&at) {
                    take(q, 1, j.slots());
                }
            }
        }
        out
    }

    /// The forward of `key` was (re)sent at `now`: its attempt number.
    fn mc_sent(&mut self, key: JobKey, now: Millis) -> u32 {
        match self.jobs.get_mut(&key).and_then(|j| j.mc.as_mut()) {
            Some(m) => {
                m.sent_at = now;
                m.forwards
            }
            None => 0,
        }
    }

    pub(crate) fn apply_forward(&mut self, time: i64, key: JobKey, cluster: &str, queue: &str) {
        let (c, q) = (self.strs.intern_text(cluster), self.strs.intern_text(queue));
        if let Some(j) = self.jobs.get_mut(&key) {
            let m = j.mc.get_or_insert_with(Default::default);
            m.fwd_cluster = c;
            m.fwd_queue = q;
            m.fwd_time = time;
            m.forwards += 1;
            m.remote_id = 0;
            m.sent_at = 0;
            m.listed = false;
            j.pend_reasons = Arc::new(BTreeMap::from([(pend::MC_FORWARDED, Vec::new())]));
            let queue = j.queue.clone();
            self.counts.touch(&queue, key);
        }
    }

    pub(crate) fn apply_accept(
        &mut self,
        time: i64,
        key: JobKey,
        cluster: &str,
        src: JobKey,
        attempt: u32,
    ) {
        let c = self.strs.intern_text(cluster);
        if let Some(j) = self.jobs.get_mut(&key) {
            let m = j.mc.get_or_insert_with(Default::default);
            m.src_cluster = c;
            m.src_id = src.0;
            m.src_idx = src.1;
            m.src_attempt = attempt;
            m.accepted_at = time;
        }
    }

    /// The submission of job `key` as it is sent to `cluster` ([`Effect::McForward`]):
    /// its user name is the UserMap export's for that cluster, when there is one (the
    /// receiving cluster decides who runs it from that name:
    /// [`Sched::mc_owner`](crate::Sched::mc_owner)).
    pub fn mc_forward_submission(&self, key: JobKey, cluster: &str) -> Option<crate::Submission> {
        let j = self.job(key)?;
        let mut sub = (*j.sub).clone();
        let name = self.cfg.mc.export_name(&sub.user, cluster);
        if *name != *sub.user {
            sub.user = name.into();
        }
        Some(sub)
    }

    /// The remote cluster answered the forward `attempt` of `key`: accepted as its job
    /// `Ok(id)`, or refused (`Err(why)`: the job comes back and that queue is not asked
    /// again for it for a scheduling interval).
    pub fn mc_forward_answer(
        &mut self,
        now: Millis,
        key: JobKey,
        attempt: u32,
        answer: Result<u64, String>,
    ) {
        let Some(j) = self.jobs.get_mut(&key) else {
            return;
        };
        let Some(m) = j.mc.as_mut() else {
            return;
        };
        if m.forwards != attempt || m.fwd_cluster.is_empty() || j.state.is_finished() {
            return;
        }
        match answer {
            Ok(id) => m.remote_id = id,
            Err(why) => {
                let until = now + i64::from(self.cfg.mbd_sleep_time_secs.max(1)) * 1000;
                m.refused.retain(|(_, _, u)| *u > now);
                m.refused
                    .push((m.fwd_cluster.clone(), m.fwd_queue.clone(), until));
                let _ = why;
                self.emit(crate::state_change(
                    secs(now),
                    key,
                    status::PEND,
                    PEND_MC_RETURNED,
                    RETURN_REJECTED,
                ));
                // Refused queues are skipped until `until`: a pass is due then.
                if self.next_retry == 0 || until < self.next_retry {
                    self.next_retry = until;
                }
            }
        }
    }

    /// The remote cluster `cluster` listed the jobs we forwarded to it: their starts,
    /// state changes and ends are logged here; returned or lost ones come back; a
    /// forward it does not know is sent again; a job that ended here (bkill) but still
    /// lives there is killed there.
    pub fn mc_remote_jobs(&mut self, now: Millis, cluster: &str, jobs: Vec<RemoteJob>) {
        let by_src: BTreeMap<(JobKey, u32), RemoteJob> =
            jobs.into_iter().map(|r| ((r.src, r.attempt), r)).collect();
        let mine: Vec<JobKey> = self
            .jobs
            .iter()
            .filter(|(_, j)| {
                j.mc.as_ref()
                    .is_some_and(|m| m.fwd_cluster == *cluster && m.forwards > 0)
            })
            .map(|(k, _)| *k)
            .collect();
        let t = secs(now);
        for key in mine {
            let Some(j) = self.jobs.get(&key) else {
                continue;
            };
            let Some(m) = j.mc.as_deref() else {
                continue;
            };
            let attempt = m.forwards;
            let r = by_src.get(&(key, attempt));
            if j.state.is_finished() {
                if r.is_some_and(|r| {
                    r.returned == 0
                        && !JobState::from_code(r.state).is_some_and(|s| s.is_finished())
                }) {
                    self.effects.push(Effect::McControl {
                        key,
                        cluster: cluster.to_owned(),
                        signal: "KILL".into(),
                    });
                }
                continue;
            }
            let Some(r) = r else {
                if let Some(m) = self.jobs.get_mut(&key).and_then(|j| j.mc.as_mut()) {
                    m.listed = false;
                }
                let Some(m) = self.jobs.get(&key).and_then(|j| j.mc.as_deref()) else {
                    continue;
                };
                if m.remote_id != 0 {
                    self.mc_return(t, key, RETURN_LOST);
                } else if now - m.sent_at >= RESEND_AFTER {
                    let queue = m.fwd_queue.to_string();
                    self.mc_sent(key, now);
                    self.effects.push(Effect::McForward {
                        key,
                        cluster: cluster.to_owned(),
                        queue,
                        attempt,
                    });
                }
                continue;
            };
            if let Some(m) = self.jobs.get_mut(&key).and_then(|j| j.mc.as_mut()) {
                m.remote_id = r.remote_id;
                m.listed = true;
            }
            if r.returned != 0 {
                self.mc_return(t, key, r.returned);
                continue;
            }
            self.mc_follow(t, key, cluster, r);
        }
    }

    /// Log here what the remote cluster says of a job it has for us.
    fn mc_follow(&mut self, t: i64, key: JobKey, cluster: &str, r: &RemoteJob) {
        let Some(remote) = JobState::from_code(r.state) else {
            return;
        };
        let Some(j) = self.jobs.get(&key) else {
            return;
        };
        let local = j.state;
        if let Some(u) = &r.usage
            && let Some(j) = self.jobs.get_mut(&key)
        {
            j.usage = Some(Box::new(u.clone()));
        }
        let ran = remote.is_started() || (remote.is_finished() && r.start_time > 0);
        if !local.is_started() && ran {
            self.emit(Event::JobStart {
                time: if r.start_time > 0 { r.start_time } else { t },
                key,
                hosts: r.hosts.iter().map(|h| format!("{h}@{cluster}")).collect(),
                effective_res_req: String::new(),
            });
        }
        if remote.is_finished() {
            let st = if remote == JobState::Done {
                status::DONE
            } else {
                status::EXIT
            };
            self.emit(Event::JobStatus {
                time: if r.end_time > 0 { r.end_time } else { t },
                key,
                status: st,
                reasons: r.reasons,
                subreasons: r.subreasons,
                cpu_time: r.cpu_time,
                end_time: r.end_time,
                usage: r.usage.clone(),
                exit_status: r.exit_status,
                term_reason: r.term_reason.clone(),
            });
            return;
        }
        let now_local = self.jobs.get(&key).map(|j| (j.state, j.reasons));
        if remote.is_started() && now_local != Some((remote, r.reasons)) {
            self.emit(crate::state_change(
                t,
                key,
                r.state,
                r.reasons,
                r.subreasons,
            ));
        }
    }

    /// The job comes back from where it was forwarded (`cause`): pending again here, and
    /// PSUSP once it came back LSB_MC_INITFAIL_RETRY times without starting.
    fn mc_return(&mut self, t: i64, key: JobKey, cause: u32) {
        self.emit(crate::state_change(
            t,
            key,
            status::PEND,
            PEND_MC_RETURNED,
            cause,
        ));
        let returns = self
            .jobs
            .get(&key)
            .and_then(|j| j.mc.as_ref())
            .map_or(0, |m| m.returns);
        let limit = self.cfg.mc.initfail_retry;
        if counted(cause) && limit > 0 && returns >= limit {
            self.emit(crate::state_change(
                t,
                key,
                status::PSUSP,
                basalt_core::job::susp::ADMIN_STOP,
                PEND_MC_RETURNED,
            ));
        }
    }
}

/// `jobs` more MultiCluster jobs, asking `slots` slots, pending in remote queue `q`.
fn take(q: &mut RemoteQueue, jobs: u32, slots: u32) {
    q.mc_pending = q.mc_pending.saturating_add(jobs);
    q.pending_slots = q.pending_slots.saturating_add(slots);
    q.free_slots = q.free_slots.saturating_sub(slots);
}

/// A queue's room as Phase II orders the queues: IMPT_JOBBKLG less its pending
/// MultiCluster jobs; without IMPT_JOBBKLG every queue has room, and the one with fewer
/// such jobs pending has more.
fn choice_room(q: &RemoteQueue) -> u32 {
    match q.impt_jobbklg {
        Some(_) => q.room(),
        None => u32::MAX.saturating_sub(q.mc_pending),
    }
}

/// Forwarded and waiting (or running) in a remote cluster.
pub(crate) fn is_forwarded(j: &Job) -> bool {
    j.mc.as_ref().is_some_and(|m| !m.fwd_cluster.is_empty())
}

/// May a job pending for these reasons be forwarded? Not when it waits for itself (start
/// time, dependency, a pre-execution retry, its array's limit) or its queue (inactive,
/// windows closed): only when no local host could take it.
fn forwardable(reasons: &PendReasons) -> bool {
    !reasons.keys().any(|c| {
        matches!(
            *c,
            pend::NEW_JOB
                | pend::START_TIME
                | pend::DEPEND
                | pend::DEPEND_INVALID
                | pend::PRE_EXEC
                | pend::QUEUE_INACT
                | pend::QUEUE_WINDOW
                | crate::PEND_ARRAY_LIMIT
        )
    })
}
