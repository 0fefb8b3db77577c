//! MultiCluster job forwarding (seed 004, "Job scheduling under the job forwarding
//! model"), the core's part. Both sides of a forward live here:
//!
//! * **Submission cluster.** Phase I is the ordinary pass: a send-jobs queue's limits
//!   decide acceptance at `bsub`, and a job is placed locally if any local host fits.
//!   Phase II ([`Sched::forward_pass`], after each pass): a pending job of a send-jobs
//!   queue that the pass could not place, and that waits for no job-level reason (start
//!   time, dependency, pre-execution retry, array limit, queue inactive), goes to the
//!   remote receive-jobs queue [`choose`] picks from the capacity each remote cluster
//!   last reported ([`Sched::mc_set_remote`]): logged `JOB_FORWARD`, then sent
//!   ([`Effect::McForward`]). The job stays pending here (reason
//!   [`pend::MC_FORWARDED`](basalt_core::job::pend)) until the remote cluster's list of
//!   our jobs ([`Sched::mc_remote_jobs`]) says it started, ended or came back; its start
//!   and end are logged here as JOB_START (hosts `host@cluster`) and JOB_STATUS, so
//!   bjobs, bhist and bacct show it as any job. A refusal or a return is a JOB_STATUS
//!   PEND with [`PEND_MC_RETURNED`]; returns because it could not start are counted, and
//!   after `LSB_MC_INITFAIL_RETRY` of them the job is PSUSP.
//! * **Execution cluster.** Phase III ([`Sched::mc_accept`]): the receive-jobs queue
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
use crate::{Caller, Effect, Event, Job, JobKey, Millis, SchedError, Str, Submission, Usage, secs};
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
}

impl McConfig {
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

/// A candidate of Phase II: a remote queue with room.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<'a> {
    pub cluster: &'a str,
    pub queue: &'a RemoteQueue,
    /// Its room, less the jobs this pass already sent it.
    pub room: u32,
}

/// Phase II (seed 004): the candidate to forward a job with resource requirement
/// `res_req` to, or None. Candidates (queues with room) are taken in their SNDJOBS_TO
/// order; by default the one with the most room comes first. With
/// MC_PLUGIN_REMOTE_RESOURCE (or MC_PLUGIN_SCHEDULE_ENHANCE) a queue whose hosts do not
/// satisfy the job's `type==`, `same[type]` and `defined()` terms is not suitable, and
/// the next one is considered. MC_PLUGIN_SCHEDULE_ENHANCE orders by available slots
/// (RESOURCE_ONLY: free ones; COUNT_PREEMPTABLE: free and preemptable ones), after the
/// queue priority (HIGH_QUEUE_PRIORITY), the preemptable slots
/// (PREEMPTABLE_QUEUE_PRIORITY) and the pending workload (PENDING_WORKLOAD, least first)
/// when those are asked for.
pub fn choose(cands: &[Candidate<'_>], res_req: &str, policy: Policy) -> Option<usize> {
    let check_resources = policy.remote_resource || policy.enhance.is_some();
    let mut order: Vec<usize> = (0..cands.len()).filter(|&i| cands[i].room > 0).collect();
    // (A stable sort: ties keep the SNDJOBS_TO order.)
    match policy.enhance {
        None => order.sort_by_key(|&i| std::cmp::Reverse(cands[i].room)),
        Some(e) => order.sort_by(|&a, &b| {
            let (qa, qb) = (cands[a].queue, cands[b].queue);
            let avail = |q: &RemoteQueue| {
                if e.count_preemptable {
                    q.free_slots.saturating_add(q.preemptable_slots)
                } else {
                    q.free_slots
                }
            };
            let mut o = std::cmp::Ordering::Equal;
            if e.high_queue_priority {
                o = o.then(qb.priority.cmp(&qa.priority));
            }
            if e.preemptable_queue_priority {
                o = o.then(qb.preemptable_slots.cmp(&qa.preemptable_slots));
            }
            if e.pending_workload {
                o = o.then(qa.pending_slots.cmp(&qb.pending_slots));
            }
            o.then(avail(qb).cmp(&avail(qa)))
                .then(cands[b].room.cmp(&cands[a].room))
        }),
    }
    order
        .into_iter()
        .find(|&i| !check_resources || remote_fits(res_req, cands[i].queue))
}

/// Do the remote queue's hosts satisfy the Boolean terms MC_PLUGIN_REMOTE_RESOURCE
/// supports: `type==name` (`type=name`, `type!=name`), `defined(name)` (and `!`, `&&`,
/// `||`, parentheses around them) in the select part, and `same[type]`? Other terms are
/// not checked (taken as satisfied): the remote cluster decides them.
pub fn remote_fits(res_req: &str, q: &RemoteQueue) -> bool {
    let (select, other) = basalt_config::resreq::sections(res_req);
    if other.iter().any(|(k, b)| k == "same" && b.trim() == "type")
        && q.hosts.iter().all(|(t, _)| t.is_empty())
    {
        return false;
    }
    if select.is_empty() {
        return !q.hosts.is_empty();
    }
    let text = select.join(" && ");
    let Some(expr) = bool_expr::parse(&text) else {
        // Not something these terms make up: the remote cluster decides.
        return true;
    };
    q.hosts.iter().any(|(ty, res)| expr.eval(ty, res))
}

/// A tiny parser of select expressions for [`remote_fits`]: the supported terms, and
/// anything else as "true".
mod bool_expr {
    #[derive(Debug)]
    pub(super) enum E {
        Type(bool, String),
        Defined(String),
        Other,
        Not(Box<E>),
        And(Box<E>, Box<E>),
        Or(Box<E>, Box<E>),
    }

    impl E {
        pub(super) fn eval(&self, ty: &str, res: &[String]) -> bool {
            match self {
                E::Type(eq, n) => (ty == n || n == "any") == *eq,
                E::Defined(n) => res.iter().any(|r| r == n),
                E::Other => true,
                // "not (something unchecked)" stays unchecked.
                E::Not(e) => matches!(**e, E::Other) || !e.eval(ty, res),
                E::And(a, b) => a.eval(ty, res) && b.eval(ty, res),
                E::Or(a, b) => a.eval(ty, res) || b.eval(ty, res),
            }
        }
    }

    fn tokens(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        let b: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_whitespace() {
                i += 1;
            } else if "()".contains(c) {
                out.push(c.to_string());
                i += 1;
            } else if i + 1 < b.len()
                && ["&&", "||", "==", "!=", ">=", "<="].contains(&&*format!("{c}{}", b[i + 1]))
            {
                out.push(format!("{c}{}", b[i + 1]));
                i += 2;
            } else if "!=<>".contains(c) {
                out.push(c.to_string());
                i += 1;
            } else {
                let start = i;
                while i < b.len() && !b[i].is_whitespace() && !"()&|=!<>".contains(b[i]) {
                    i += 1;
                }
                out.push(b[start..i].iter().collect());
            }
        }
        out
    }

    pub(super) fn parse(s: &str) -> Option<E> {
        let toks = tokens(s);
        let mut p = P { t: &toks, i: 0 };
        let e = p.or()?;
        (p.i == toks.len()).then_some(e)
    }

    struct P<'a> {
        t: &'a [String],
        i: usize,
    }

    impl P<'_> {
        fn peek(&self) -> Option<&str> {
            self.t.get(self.i).map(String::as_str)
        }
        fn next(&mut self) -> Option<&str> {
            let t = self.t.get(self.i).map(String::as_str);
            self.i += 1;
            t
        }
        fn or(&mut self) -> Option<E> {
            let mut e = self.and()?;
            while self.peek() == Some("||") {
                self.i += 1;
                e = E::Or(Box::new(e), Box::new(self.and()?));
            }
            Some(e)
        }
        fn and(&mut self) -> Option<E> {
            let mut e = self.unary()?;
            while self.peek() == Some("&&") {
                self.i += 1;
                e = E::And(Box::new(e), Box::new(self.unary()?));
            }
            Some(e)
        }
        fn unary(&mut self) -> Option<E> {
            match self.peek()? {
                "!" => {
                    self.i += 1;
                    Some(E::Not(Box::new(self.unary()?)))
                }
                "(" => {
                    self.i += 1;
                    let e = self.or()?;
                    (self.next()? == ")").then_some(e)
                }
                _ => self.atom(),
            }
        }
        fn atom(&mut self) -> Option<E> {
            let w = self.next()?.to_owned();
            if w == "defined" {
                if self.next()? != "(" {
                    return None;
                }
                let n = self.next()?.to_owned();
                return (self.next()? == ")").then_some(E::Defined(n));
            }
            match self.peek() {
                Some(op @ ("==" | "=" | "!=" | ">" | "<" | ">=" | "<=")) => {
                    let op = op.to_owned();
                    self.i += 1;
                    let v = self.next()?.to_owned();
                    if w == "type" && (op == "==" || op == "=" || op == "!=") {
                        Some(E::Type(op != "!=", v))
                    } else {
                        Some(E::Other)
                    }
                }
                _ => Some(E::Other),
            }
        }
    }
}

/// A state's code as a JobState (None: unknown).
fn state_of(code: u32) -> Option<JobState> {
    JobState::from_code(code)
}

impl crate::Sched {
    /// The MultiCluster configuration.
    fn mc(&self) -> &McConfig {
        &self.cfg.mc
    }

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
        }
    }

    /// Some job of a send-jobs queue is pending and not forwarded.
    fn mc_waiting(&self) -> bool {
        self.mc().send.keys().any(|q| {
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
        if self.mc().send.is_empty() || self.replaying {
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
        // Jobs sent to each remote queue in this pass (its room shrinks by them).
        let mut planned: BTreeMap<(String, String), u32> = BTreeMap::new();
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
                    let Some(q) = self
                        .mc_remote
                        .get(rc)
                        .and_then(|r| r.queues.as_ref())
                        .and_then(|qs| qs.iter().find(|q| q.name == *rq))
                    else {
                        continue;
                    };
                    let taken = planned.get(&(rc.clone(), rq.clone())).copied().unwrap_or(0);
                    cands.push(Candidate {
                        cluster: rc,
                        queue: q,
                        room: q.room().saturating_sub(taken),
                    });
                }
                let rr = self.job_res_req(&j.sub);
                if let Some(i) = choose(&cands, &rr, self.cfg.mc.policy) {
                    let (c, q) = (cands[i].cluster.to_owned(), cands[i].queue.name.clone());
                    *planned.entry((c.clone(), q.clone())).or_default() += 1;
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
            j.pend_reasons = Arc::new(BTreeMap::from([(pend::MC_FORWARDED, Vec::new())]));
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
                    r.returned == 0 && !state_of(r.state).is_some_and(|s| s.is_finished())
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
        let Some(remote) = state_of(r.state) else {
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
            self.effects.push(Effect::Acct(key));
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

    /// Phase III: take a job `cluster` forwarded (its job `src`, forward `attempt`) into
    /// the receive-jobs queue `sub.queue`, submitted as `caller` — or say why not. A
    /// repeated forward gets the job the first one created: (id, whether it is new).
    pub fn mc_accept(
        &mut self,
        now: Millis,
        cluster: &str,
        src: JobKey,
        attempt: u32,
        caller: &Caller,
        mut sub: Submission,
    ) -> Result<(u64, bool), SchedError> {
        let token = format!("mc:{cluster}:{}.{}:{attempt}", src.0, src.1);
        if let Some(id) = self.known_submission(&token) {
            return Ok((id, false));
        }
        let queue = sub.queue.to_string();
        if self.queue(&queue).is_none() {
            return Err(SchedError::NoQueue);
        }
        if !self.cfg.mc.receives(&queue, cluster) {
            return Err(SchedError::McNotReceiving);
        }
        let limit = self.cfg.mc.recv.get(&queue).and_then(|(_, n)| *n);
        if let Some(n) = limit
            && self.mc_pending_in(&queue) >= n
        {
            return Err(SchedError::McBacklog);
        }
        // What only the submission cluster knows does not travel: its hosts, its jobs.
        sub.asked_hosts.clear();
        sub.depend_cond = Str::EMPTY;
        sub.submit_token = token.into();
        if crate::array::parse(&sub.job_name).is_some() {
            return Err(SchedError::BadJobName);
        }
        let (id, _, _) = self.submit(now, caller, sub)?;
        self.emit(Event::JobAccept {
            time: secs(now),
            key: (id, 0),
            cluster: cluster.to_owned(),
            src,
            attempt,
        });
        Ok((id, true))
    }

    /// MultiCluster jobs pending in `queue`.
    pub fn mc_pending_in(&self, queue: &str) -> u32 {
        self.counts.pending.get(queue).map_or(0, |p| {
            p.iter()
                .filter(|(_, k)| {
                    self.jobs.get(k).is_some_and(|j| {
                        j.state.is_pending()
                            && j.mc.as_ref().is_some_and(|m| !m.src_cluster.is_empty())
                    })
                })
                .count() as u32
        })
    }

    /// The job here that `cluster` forwarded as its `src` (the latest forward).
    pub fn mc_job_from(&self, cluster: &str, src: JobKey) -> Option<JobKey> {
        self.jobs
            .iter()
            .filter(|(_, j)| {
                j.mc.as_ref()
                    .is_some_and(|m| m.src_cluster == *cluster && (m.src_id, m.src_idx) == src)
            })
            .max_by_key(|(_, j)| j.mc.as_ref().map_or(0, |m| m.src_attempt))
            .map(|(k, _)| *k)
    }

    /// The jobs `cluster` forwarded here, as we report them to it.
    pub fn mc_jobs_for(&self, cluster: &str) -> Vec<RemoteJob> {
        self.jobs
            .iter()
            .filter_map(|(k, j)| {
                let m = j.mc.as_deref()?;
                if m.src_cluster != *cluster {
                    return None;
                }
                let returned = match j.term_reason.as_str() {
                    TERM_MC_RETURN if j.state.is_finished() => RETURN_NOT_STARTED,
                    TERM_MC_INITFAIL if j.state.is_finished() => RETURN_START_FAILED,
                    _ => 0,
                };
                Some(RemoteJob {
                    src: (m.src_id, m.src_idx),
                    attempt: m.src_attempt,
                    remote_id: k.0,
                    state: j.state.code(),
                    reasons: j.reasons,
                    subreasons: j.subreasons,
                    hosts: j.hosts.clone(),
                    start_time: j.start_time,
                    end_time: j.end_time,
                    exit_status: j.exit_status,
                    cpu_time: j.cpu_time,
                    term_reason: j.term_reason.to_string(),
                    returned,
                    usage: j.usage.as_deref().cloned(),
                })
            })
            .collect()
    }

    /// Our receive-jobs queues that take jobs from `cluster`, with their capacity.
    pub fn mc_info_for(&self, cluster: &str) -> Vec<RemoteQueue> {
        let free = self.free_slots_by_host();
        self.queues
            .iter()
            .filter(|q| self.cfg.mc.receives(&q.name, cluster))
            .map(|q| {
                let hosts: Vec<usize> = (0..self.hosts.len())
                    .filter(|&i| self.queue_uses_host(q, i))
                    .collect();
                let mut kinds: Vec<(String, Vec<String>)> = hosts
                    .iter()
                    .map(|&i| {
                        let h = &self.hosts[i];
                        let ty = h.statics.strings.get("type").cloned().unwrap_or_default();
                        let mut res = h.statics.booleans.clone();
                        res.sort();
                        (ty, res)
                    })
                    .collect();
                kinds.sort();
                kinds.dedup();
                let preemptable = self.preemptable_slots_of(q);
                let pending_slots = self.counts.pending.get(q.name.as_str()).map_or(0, |p| {
                    p.iter()
                        .filter_map(|(_, k)| self.jobs.get(k))
                        .map(|j| j.slots())
                        .sum()
                });
                RemoteQueue {
                    name: q.name.clone(),
                    priority: q.priority,
                    impt_jobbklg: self.cfg.mc.recv.get(&q.name).and_then(|(_, n)| *n),
                    mc_pending: self.mc_pending_in(&q.name),
                    free_slots: hosts.iter().map(|&i| free[i]).sum(),
                    preemptable_slots: preemptable,
                    pending_slots,
                    hosts: kinds,
                }
            })
            .collect()
    }

    /// Execution side, on every tick: MultiCluster jobs not started within
    /// MAX_RSCHED_TIME go back to their submission cluster.
    pub(crate) fn mc_tick(&mut self, now: Millis) {
        let Some(limit) = self.cfg.mc.max_rsched_ms else {
            return;
        };
        if self.cfg.mc.recv.is_empty() {
            return;
        }
        let late: Vec<JobKey> = self
            .cfg
            .mc
            .recv
            .keys()
            .filter_map(|q| self.counts.pending.get(q.as_str()))
            .flat_map(|p| p.iter().map(|(_, k)| *k))
            .filter(|k| {
                self.jobs.get(k).is_some_and(|j| {
                    j.state == JobState::Pend
                        && j.mc.as_ref().is_some_and(|m| {
                            !m.src_cluster.is_empty() && m.accepted_at * 1000 + limit <= now
                        })
                })
            })
            .collect();
        let t = secs(now);
        for key in late {
            self.mc_give_back(t, key, TERM_MC_RETURN);
        }
    }

    /// End a MultiCluster job here so that its submission cluster takes it back (no
    /// lsb.acct record: it did not run here).
    pub(crate) fn mc_give_back(&mut self, t: i64, key: JobKey, term: &str) {
        self.emit(Event::JobStatus {
            time: t,
            key,
            status: status::EXIT,
            reasons: 0,
            subreasons: 0,
            cpu_time: 0.0,
            end_time: t,
            usage: None,
            exit_status: 0,
            term_reason: term.to_owned(),
        });
    }

    /// Free slots of each host (0 for a host that takes no job now).
    fn free_slots_by_host(&self) -> Vec<u32> {
        self.hosts
            .iter()
            .map(|h| {
                if self.host_status(h) != crate::HostStatus::Ok {
                    return 0;
                }
                h.max_slots().map_or(1, |m| {
                    m.saturating_sub(self.used_slots(&h.name) + h.rsv_slots)
                })
            })
            .collect()
    }

    /// Does queue `q` dispatch to host `i`?
    fn queue_uses_host(&self, q: &crate::Queue, i: usize) -> bool {
        q.hosts.is_empty() || q.hosts.contains(&self.hosts[i].name)
    }

    /// Slots held by running jobs of the queues `q` may preempt.
    fn preemptable_slots_of(&self, q: &crate::Queue) -> u32 {
        self.counts
            .started
            .iter()
            .filter_map(|k| self.jobs.get(k))
            .filter(|j| j.state == JobState::Run)
            .filter(|j| {
                self.queue(&j.queue)
                    .is_some_and(|lo| crate::schedule::preempt::preempts(q, lo).is_some())
            })
            .map(|j| j.slots())
            .sum()
    }

    /// A job that came from another cluster?
    pub(crate) fn came_from_remote(&self, key: JobKey) -> bool {
        self.jobs
            .get(&key)
            .and_then(|j| j.mc.as_ref())
            .is_some_and(|m| !m.src_cluster.is_empty())
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
