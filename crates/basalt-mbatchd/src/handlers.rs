//! The owner's answer to each message: the requests of the b* commands and of sbatchds
//! applied to the core (`basalt-sched`), dispatch answers, LIM updates, stop requests.
//! Runs on the owner thread; replies are deferred until the iteration's events are
//! durable.

use crate::dispatch::DispatchError;
use crate::msg::{CtlOutcome, HelloAnswer, JobIds, JobOutcome, JobSignal, Msg, Submitted};
use crate::owner::{Deferred, OwnerState, defer};
use crate::{MbdError, now_ms, views};
use basalt_sched::{Caller, JobKey, JobQuery, Sched, SchedError};
use tracing::{info, warn};

impl OwnerState {
    /// The gauges of a metrics scrape, from the core's counters (no walk over the jobs).
    fn metrics_snapshot(&self) -> crate::metrics::Snapshot {
        use basalt_sched::HostStatus;
        let queues = self
            .sched
            .queues()
            .iter()
            .map(|q| {
                let (_, pend, run, ssusp, ususp) = self.sched.queue_counts(&q.name);
                (q.name.clone(), [pend, run, ssusp, ususp])
            })
            .collect();
        let mut hosts = [0u32; 4];
        for h in self.sched.hosts() {
            let i = match self.sched.host_status(h) {
                HostStatus::Ok => 0,
                HostStatus::Closed(_) => 1,
                HostStatus::Unavail => 2,
                HostStatus::Unreach => 3,
            };
            hosts[i] += 1;
        }
        crate::metrics::Snapshot {
            queues,
            hosts,
            mc_links: self.mc_links.link_status(),
            jobs_in_memory: self.sched.jobs().len() as u64,
            log_writable: self.health.reason().is_none(),
        }
    }

    pub(crate) fn handle(
        &mut self,
        msg: Msg,
        deferred: &mut Vec<Deferred>,
    ) -> Result<(), MbdError> {
        let now = now_ms();
        match msg {
            Msg::Submit {
                caller,
                sub,
                env,
                is_script,
                app,
                reply,
            } => {
                let command = sub.command.clone();
                let token = sub.submit_token.clone();
                // A resent submission (the client lost the answer): the job it created,
                // answered as the first time. The token is looked up under the user the
                // credential proved, so it never names another user's job.
                if let Some((id, queue, default_queue)) =
                    self.sched.known_submission(&caller.user, &token)
                {
                    info!(
                        job = id,
                        user = %caller.user,
                        "submission {token:?} was already accepted as job {id}"
                    );
                    deferred.push(defer(
                        reply,
                        Ok(Submitted {
                            job_id: id,
                            queue,
                            default_queue,
                        }),
                    ));
                    return Ok(());
                }
                // -app and -G against lsb.applications and lsb.users (and the egroups),
                // which the core does not keep.
                if let Err(e) = basalt_sched::check_app_and_group(
                    &self.config.batch,
                    &self.egroups,
                    &caller.user,
                    &app,
                    &sub.user_group,
                ) {
                    deferred.push(defer(reply, Err(e)));
                    return Ok(());
                }
                // brestart: the old job's submission and job file, restarted from its
                // checkpoint.
                let (sub, restart_file) = match sub.restart_job() {
                    Some(old) => match self.restart_of(&caller, old, &sub) {
                        Ok(x) => x,
                        Err(e) => {
                            deferred.push(defer(reply, Err(e)));
                            return Ok(());
                        }
                    },
                    None => (*sub, None),
                };
                match self.sched.submit(now, &caller, sub) {
                    Ok((id, queue, default_queue)) => {
                        // An array's elements share one submission and one job file.
                        let submit_time = self
                            .sched
                            .jobs()
                            .range((id, 0)..=(id, u32::MAX))
                            .next()
                            .map_or(0, |(_, j)| j.sub.submit_time);
                        let text = match restart_file {
                            Some(bytes) => bytes,
                            None => {
                                basalt_core::jobfile::render(&env, &command, is_script).into_bytes()
                            }
                        };
                        self.spool_job_file(submit_time, id, &text);
                        deferred.push(defer(
                            reply,
                            Ok(Submitted {
                                job_id: id,
                                queue,
                                default_queue,
                            }),
                        ));
                    }
                    Err(e) => deferred.push(defer(reply, Err(e))),
                }
            }
            Msg::Jobs { query, reply } => {
                let out = self.sched.jobs_view(&query);
                // Answered with the iteration: never shows state that is not durable yet.
                deferred.push(defer(reply, out));
            }
            Msg::JobKeys { query, reply } => {
                let out = self.sched.job_keys(&query);
                deferred.push(defer(reply, out));
            }
            Msg::JobsPage { keys, reply } => {
                let out = self.sched.jobs_page(&keys);
                deferred.push(defer(reply, out));
            }
            Msg::Signal {
                caller,
                ids,
                all,
                signal,
                reply,
            } => {
                let out = self.signal(now, &caller, ids, all.as_ref(), &signal);
                deferred.push(defer(reply, out));
            }
            Msg::Switch {
                caller,
                ids,
                queue,
                reply,
            } => {
                let results = self.per_job(&ids, |s, key| {
                    s.switch(now, &caller, key, &queue).map(|()| queue.clone())
                });
                deferred.push(defer(reply, results));
            }
            Msg::Modify {
                caller,
                id,
                change,
                reply,
            } => {
                let key = (id.0, id.1.unwrap_or(0));
                // -app and -G against lsb.applications and lsb.users, as for bsub.
                let app = match &change.app {
                    basalt_sched::Change::Set(a) => a.as_str(),
                    _ => "",
                };
                let group = match &change.user_group {
                    basalt_sched::Change::Set(g) => g.as_str(),
                    _ => "",
                };
                let owner = self
                    .sched
                    .jobs()
                    .range((key.0, 0)..=(key.0, u32::MAX))
                    .next()
                    .map(|(_, j)| j.sub.user.to_string())
                    .unwrap_or_default();
                let r = basalt_sched::check_app_and_group(
                    &self.config.batch,
                    &self.egroups,
                    &owner,
                    app,
                    group,
                )
                .and_then(|()| self.sched.modify(now, &caller, key, *change))
                .map(|()| String::new());
                deferred.push(defer(reply, (key, r)));
            }
            Msg::Move {
                caller,
                ids,
                position,
                from_bottom,
                reply,
            } => {
                let results = self.per_job(&ids, |s, key| {
                    s.move_job(now, &caller, key, position, from_bottom)
                        .map(|p| p.to_string())
                });
                deferred.push(defer(reply, results));
            }
            Msg::Force {
                caller,
                ids,
                hosts,
                force,
                reply,
            } => {
                let results = self.per_job(&ids, |s, key| {
                    s.force(now, &caller, key, &hosts, force)
                        .map(|()| String::new())
                });
                deferred.push(defer(reply, results));
            }
            Msg::Queues { names, reply } => {
                let mut out = self.sched.queues_view(&names);
                for qv in &mut out.queues {
                    qv.share_info = self.sched.share_info_of(&qv.queue.name, now);
                    qv.pool = self.sched.pool_info_of(&qv.queue.name, now);
                }
                out.config_problem = self.config_problem.clone();
                deferred.push(defer(reply, out));
            }
            Msg::Hosts { names, reply } => {
                let mut out = self.sched.hosts_view(&names);
                out.config_problem = self.config_problem.clone();
                deferred.push(defer(reply, out));
            }
            Msg::Apps { names, reply } => {
                let out = self.sched.apps_view(&names);
                deferred.push(defer(reply, out));
            }
            Msg::McLink { cluster, news } => self.mc_link_news(&cluster, news),
            Msg::McIn { cluster, req } => self.mc_incoming(&cluster, req, deferred),
            Msg::Clusters { reply } => {
                let out = self.clusters_reply();
                deferred.push(defer(reply, out));
            }
            Msg::Metrics { reply } => {
                let out = self.metrics_snapshot();
                deferred.push(defer(reply, out));
            }
            Msg::HostPartitions { names, reply } => {
                let out = self.sched.partitions_view(&names, now);
                deferred.push(defer(reply, out));
            }
            Msg::Slots { res_req, reply } => {
                let out = self.sched.slot_windows(now, &res_req);
                deferred.push(defer(reply, out));
            }
            Msg::Users { names, all, reply } => {
                let out = self.sched.users_view(&names, all);
                deferred.push(defer(reply, out));
            }
            Msg::Limits { reply } => {
                let out = (self.sched.limits_view(), self.sched.limit_sections());
                deferred.push(defer(reply, out));
            }
            Msg::Params { reply } => {
                let out = views::params_view(
                    &self.config,
                    &self.sched,
                    self.started,
                    &self.config_problem,
                    &mut self.peaks,
                );
                deferred.push(defer(reply, out));
            }
            Msg::QueueCtl {
                caller,
                op,
                queues,
                message,
                reply,
            } => {
                let results: Vec<CtlOutcome> = queues
                    .into_iter()
                    .map(|q| {
                        let r = self.sched.queue_ctl(now, &caller, op, &q, &message);
                        (q, r)
                    })
                    .collect();
                deferred.push(defer(reply, results));
            }
            Msg::HostCtl {
                caller,
                op,
                hosts,
                message,
                reply,
            } => {
                let results: Vec<CtlOutcome> = hosts
                    .into_iter()
                    .map(|h| {
                        let r = self.sched.host_ctl(now, &caller, op, &h, &message);
                        (h, r)
                    })
                    .collect();
                deferred.push(defer(reply, results));
            }
            Msg::Reconfig {
                caller,
                restart,
                reply,
            } => {
                if caller.uid != 0 && !self.sched.config().admins.contains(&caller.user) {
                    deferred.push(defer(reply, Err(SchedError::Permission)));
                } else {
                    deferred.push(defer(reply, Ok(())));
                    let what = if restart {
                        "badmin mbdrestart"
                    } else {
                        "badmin reconfig"
                    };
                    info!("{what} by {}: restarting with a full replay", caller.user);
                    return Err(MbdError::Reconfig(what.into()));
                }
            }
            Msg::Hello { host, jobs, reply } => {
                let theirs = self.sched.sbd_hello(now, &host, &jobs);
                let out = HelloAnswer {
                    epoch: self.sched.epoch(),
                    jobs: theirs,
                    sbd_sleep_time: self.sched.config().sbd_sleep_time_secs,
                    job_terminate_interval: self.sched.config().job_terminate_interval_secs,
                    hello_interval: self.sched.config().hello_interval_secs,
                };
                deferred.push(defer(reply, out));
            }
            Msg::Report { report, reply } => {
                let ack = report.map(|r| self.sched.report(now, r));
                deferred.push(defer(reply, (ack, self.sched.epoch())));
            }
            Msg::DispatchDone {
                key,
                attempt,
                host,
                result,
            } => match result {
                Ok((pid, pgid)) => self.sched.dispatch_accepted(now, key, attempt, pid, pgid),
                Err(DispatchError::Unreachable(e)) => {
                    warn!(job = key.0, "dispatch to {host} failed: {e}");
                    self.sched.dispatch_failed(now, key, attempt, &host);
                }
                Err(DispatchError::Uncertain(e)) => {
                    warn!(
                        job = key.0,
                        "dispatch to {host} got no answer ({e}); its sbatchd's hellos will \
                         tell whether the job started"
                    );
                    self.sched.dispatch_uncertain(key, attempt, &host);
                }
                Err(DispatchError::Refused(e)) => {
                    warn!(job = key.0, "sbatchd on {host} cannot start the job: {e}");
                    self.sched.start_failed(now, key, attempt);
                }
            },
            Msg::Lim(hosts) => {
                for h in hosts {
                    if let Some(st) = &h.statics {
                        self.sched.lim_static(&h.name, st);
                    }
                    self.sched.lim_lock(&h.name, h.locked);
                    self.sched
                        .lim_update(&h.name, h.ncpus, h.cpu_factor, h.ok, h.load);
                }
                // badmin showstatus: the most hosts, CPUs and slots seen available.
                let clients = views::clients(&self.config);
                self.peaks.see(clients, &self.sched.status_hosts());
            }
            Msg::Resign(master) => {
                warn!("LIM names {master} as master; resigning");
                return Err(MbdError::Resign(master));
            }
            Msg::Shutdown => {
                info!("shutting down");
                return Err(MbdError::Stopped);
            }
        }
        Ok(())
    }

    /// Apply `f` to every job the ids name. A whole array (`123`) is answered once, as
    /// LSF does: success when any element accepted, else the first element's error.
    fn per_job(
        &mut self,
        ids: &[(u64, Option<u32>)],
        mut f: impl FnMut(&mut Sched, JobKey) -> Result<String, SchedError>,
    ) -> Vec<JobOutcome> {
        let mut out = Vec::new();
        for &(id, idx) in ids {
            let keys = self.sched.expand(&[(id, idx)]);
            let whole_array =
                idx.is_none() && keys.iter().any(|k| matches!(k, Ok((_, i)) if *i > 0));
            if whole_array {
                let mut first_err = None;
                let mut ok = None;
                for key in keys.into_iter().flatten() {
                    match f(&mut self.sched, key) {
                        Ok(d) => {
                            ok.get_or_insert(d);
                        }
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                let r = match (ok, first_err) {
                    (Some(d), _) => Ok(d),
                    (None, Some(e)) => Err(e),
                    (None, None) => Err(SchedError::NoJob),
                };
                out.push(((id, 0), r));
                continue;
            }
            for k in keys {
                out.push(match k {
                    Ok(key) => {
                        let r = f(&mut self.sched, key);
                        (key, r)
                    }
                    Err(key) => (key, Err(SchedError::NoJob)),
                });
            }
        }
        out
    }

    fn signal(
        &mut self,
        now: i64,
        caller: &Caller,
        mut ids: JobIds,
        all: Option<&JobQuery>,
        signal: &JobSignal,
    ) -> Vec<JobOutcome> {
        if let Some(q) = all {
            // Job 0: every job of the caller (or of -u for administrators) the action
            // applies to.
            let (jobs, _) = self.sched.query(q);
            ids.extend(jobs.iter().map(|j| (j.id, Some(j.idx))));
        }
        self.per_job(&ids, |s, key| match signal {
            JobSignal::Kill { remove, as_done } => s
                .kill(now, caller, key, *remove, *as_done)
                .map(|()| String::new()),
            JobSignal::Stop => s.stop(now, caller, key).map(|()| String::new()),
            JobSignal::Resume => s.resume(now, caller, key).map(|()| String::new()),
            JobSignal::Signal(sig) => s.send_signal(now, caller, key, sig).map(|()| String::new()),
            JobSignal::Requeue { states, hold } => s
                .requeue(now, caller, key, *states, *hold)
                .map(|()| String::new()),
            JobSignal::Migrate { hosts, force } => s
                .migrate_job(now, caller, key, hosts, *force)
                .map(|()| String::new()),
            JobSignal::Chkpnt {
                kill,
                force,
                period,
            } => s
                .checkpoint(now, caller, key, *kill, *force, *period)
                .map(|()| String::new()),
        })
    }
}

impl OwnerState {
    /// `brestart` of `old`: the new job's submission ([`basalt_sched::Sched::restart_submission`])
    /// and its job file — the old job's, from the spool while it is there, else the copy
    /// sbatchd put in the checkpoint directory (LSB_CHKFILENAME).
    fn restart_of(
        &self,
        caller: &Caller,
        old: basalt_sched::JobKey,
        given: &basalt_sched::Submission,
    ) -> Result<(basalt_sched::Submission, Option<Vec<u8>>), SchedError> {
        let force = given.options & basalt_core::job::sub::RESTART_FORCE != 0;
        let sub = self.sched.restart_submission(caller, old, given, force)?;
        let old_file = self
            .sched
            .jobs()
            .get(&old)
            .map(|j| j.sub.job_file.to_string())
            .unwrap_or_default();
        let dir =
            std::path::Path::new(sub.chkpnt_dir()).join(basalt_sched::chkpnt::job_dir_name(old));
        let bytes = match self.journal.job_file(&old_file) {
            Ok(b) => b,
            Err(_) => std::fs::read(dir.join(&old_file)).map_err(|e| {
                SchedError::BadArgument(format!(
                    "{}: cannot read the checkpointed job file: {e}",
                    dir.join(&old_file).display()
                ))
            })?,
        };
        Ok((sub, Some(bytes)))
    }

    /// Spool a new job's file (made durable with the iteration's events); a failure
    /// stops acknowledging work like a failed append.
    pub(crate) fn spool_job_file(&mut self, submit_time: i64, id: u64, bytes: &[u8]) {
        match self.journal.spool(submit_time, id, bytes) {
            Ok(()) => self
                .spooled
                .push(basalt_eventlog::job_file_name(submit_time, id)),
            Err(e) => {
                if self.write_failure.is_none() {
                    self.write_failure = Some(e);
                }
            }
        }
    }
}
