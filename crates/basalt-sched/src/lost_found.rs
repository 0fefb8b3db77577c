//! The queue `lost_and_found`: where the jobs of a queue removed from lsb.queues go.
//!
//! A reconfiguration (`badmin reconfig`, `badmin mbdrestart`) is a replay of lsb.events
//! with the new configuration. A logged event that puts a job in a queue the
//! configuration no longer has — its JOB_NEW, a JOB_SWITCH or a bmod `-q` (JOB_MODIFY2)
//! — puts it in `lost_and_found` instead, which is created then, as LSF's mbatchd does
//! (`openlava:lsbatch/daemons/mbd.log.c` replay_newjob, replay_switchjob; `lostFoundQueue`
//! in mbd.init.c). Nothing is logged for the move, as in LSF: every replay makes it again
//! from the job's own records, so the job's submission keeps the queue it was submitted to
//! (`bhist` shows it) and a job whose queue comes back in a later configuration is in it
//! again. Running jobs move too and go on running.
//!
//! The queue has LSF's properties: closed and inactive, job limits of 0 per user and per
//! processor (nothing is dispatched from it even if an administrator activates it),
//! priority 1, users `nobody`, LSF's description. Its jobs wait there (pending reason:
//! the queue is inactive) until `bswitch` moves them to a real queue; nothing can be
//! submitted or switched to it. `bqueues` shows it while it holds an unfinished job; with
//! none it is as if it did not exist, and the next reconfiguration does not create it
//! unless a job needs it. A queue of that name in lsb.queues is an ordinary queue.

use crate::{Queue, Sched, Str};
use std::collections::BTreeMap;

/// The queue the jobs of a deleted queue go to.
pub const LOST_AND_FOUND: &str = "lost_and_found";

/// LSF's description of the queue (`lostFoundQueue`).
pub const DESCRIPTION: &str = "This queue is created by the system to hold the jobs that were in the queues being removed from the configuration by the LSF Administrator.  Jobs in this queue will not be started unless they are switched to other queues.";

/// LSF's DEF_PRIO, the priority of a queue that sets none.
const PRIORITY: u32 = 1;

/// The queue as LSF creates it.
fn queue() -> Queue {
    Queue {
        name: LOST_AND_FOUND.to_owned(),
        description: DESCRIPTION.to_owned(),
        priority: PRIORITY,
        nice: None,
        open: false,
        active: false,
        message: String::new(),
        qjob_limit: None,
        ujob_limit: Some(0),
        hjob_limit: None,
        pjob_limit: Some(0.0),
        hosts: Vec::new(),
        users_all: false,
        users: vec!["nobody".to_owned()],
        users_except: Vec::new(),
        administrators: Vec::new(),
        res_req: String::new(),
        exclusive: false,
        slot_reserve: None,
        backfill: false,
        fairshare: String::new(),
        user_shares: Vec::new(),
        fs_factors: Default::default(),
        slot_pool: String::new(),
        slot_share: 0,
        preempt: Default::default(),
        preemption: String::new(),
        terminate_on_preempt: false,
        max_job_preempt: None,
        no_preempt_run_time: None,
        no_preempt_finish_time: None,
        rerunnable: false,
        interactive: String::new(),
        load_sched: BTreeMap::new(),
        load_stop: BTreeMap::new(),
        job_controls: BTreeMap::new(),
        pre_exec: String::new(),
        post_exec: String::new(),
        job_starter: String::new(),
        host_pref: BTreeMap::new(),
        others_pref: 0,
        pre_post_exec_user: String::new(),
        success_exit_values: Vec::new(),
        requeue: Default::default(),
        preexec_retry_limit: None,
        preexec_retry_exit: false,
        max_job_requeue: None,
        chkpnt: None,
        mig_minutes: None,
        job_accept_interval: None,
        settings: BTreeMap::new(),
        rlimits: [None; 11],
        run_window: String::new(),
        dispatch_window: String::new(),
        resume_cond: None,
        run_windows: None,
        dispatch_windows: None,
        // LSF's `USERS: nobody` (its only user), `HOSTS: all`.
        shown: crate::hosts_queues::QueueShown {
            users: vec!["nobody".to_owned()],
            hosts: vec!["all".to_owned()],
            ..Default::default()
        },
    }
}

impl Sched {
    /// The queue a logged event puts a job in when it names queue `name`: `name` when the
    /// configuration has it, else `lost_and_found` (created now if it is not there yet).
    pub(crate) fn queue_or_lost(&mut self, name: &str) -> Str {
        if self.queue(name).is_some() {
            return self.strs.intern_text(name);
        }
        if self.queue(LOST_AND_FOUND).is_none() {
            self.queues.push(queue());
        }
        self.strs.intern_text(LOST_AND_FOUND)
    }

    /// Is `q` the `lost_and_found` queue the core created (not one of lsb.queues)?
    pub(crate) fn is_lost_and_found(&self, q: &Queue) -> bool {
        q.name == LOST_AND_FOUND && !self.cfg.queues.iter().any(|c| c.name == q.name)
    }

    /// Is job `j` in the core's lost_and_found because the configuration has no queue of
    /// the name it was submitted to (so its JOB_NEW puts it there again on replay)?
    pub(crate) fn lost_by_config(&self, j: &crate::Job) -> bool {
        *j.queue == *LOST_AND_FOUND
            && self.queue(&j.sub.queue).is_none()
            && self
                .queue(LOST_AND_FOUND)
                .is_some_and(|q| self.is_lost_and_found(q))
    }

    /// A queue `bqueues` does not show: the core's `lost_and_found` holding no
    /// unfinished job.
    pub(crate) fn queue_hidden(&self, q: &Queue) -> bool {
        self.is_lost_and_found(q) && self.queue_counts(&q.name).0 == 0
    }
}
