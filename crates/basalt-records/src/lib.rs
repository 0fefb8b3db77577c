//! The Event⇄Record conversion: the core's events (`basalt-sched`) as LSF's event-log
//! records (`basalt-eventlog`) and back, and the JOB_FINISH record of a finished job.
//! Pure: no I/O, no async. mbatchd's journal writes and replays through it; `bevents
//! replay` and the benches apply records through the same `from_record`.

use basalt_core::job::{JobState, sub2};
use basalt_eventlog as el;
use basalt_eventlog as r;
use basalt_sched::{Event, Job, Submission, Usage};

mod modify;

/// `JOB_FORCE` options (LSF's lsbatch.h): plain `brun`, and `brun -f`.
const RUNJOB_OPT_NORMAL: u32 = 0x01;
const RUNJOB_OPT_NOSTOP: u32 = 0x02;
/// `jobRmtAttr` of JOB_FORWARD and JOB_ACCEPT (LSF's lsbatch.h): a remote batch job on
/// the submission side, and on the execution side.
const JOB_RMT_FORWARD: u32 = 0x01;
const JOB_RMT_REMOTE_BATCH: u32 = 0x04;

fn h(time: i64) -> r::Header {
    r::Header::new(time)
}

fn rusage_of(u: &Usage) -> r::Rusage {
    r::Rusage {
        utime: u.utime,
        stime: u.stime,
        maxrss: u.max_mem_kb as f64,
        ..Default::default()
    }
}

/// JOB_SIGACT's signal symbol of a checkpoint, and its action status when ordered.
pub const SIG_CHKPNT: &str = "SIG_CHKPNT";
pub const ACT_START: i64 = 1;

/// `id` or `id[idx]`.
fn key_text(key: basalt_sched::JobKey) -> String {
    if key.1 == 0 {
        key.0.to_string()
    } else {
        format!("{}[{}]", key.0, key.1)
    }
}

/// The job of [`key_text`] (None: "" or not a job).
fn key_of_text(t: &str) -> Option<basalt_sched::JobKey> {
    if t.is_empty() {
        return None;
    }
    match t.split_once('[') {
        Some((id, idx)) => Some((id.parse().ok()?, idx.strip_suffix(']')?.parse().ok()?)),
        None => Some((t.parse().ok()?, 0)),
    }
}

/// A core event as an lsb.events record.
pub fn to_record(ev: &Event) -> el::Record {
    match ev {
        Event::JobNew { time, job_id, sub } => {
            let s = sub;
            el::Record::JobNew(Box::new(r::JobNew {
                header: h(*time),
                job_id: *job_id,
                user_id: i64::from(s.uid),
                options: s.options,
                num_processors: i64::from(s.num_processors),
                submit_time: s.submit_time,
                begin_time: s.begin_time,
                term_time: s.term_time,
                sig_value: 0,
                chkpnt_period: s.extras.as_ref().map_or(0, |x| x.chkpnt_period),
                restart_pid: 0,
                user_name: s.user.to_string(),
                rlimits: *s.rlimits,
                host_spec: String::new(),
                host_factor: 1.0,
                umask: i64::from(s.umask),
                queue: s.queue.to_string(),
                res_req: s.res_req.to_string(),
                from_host: s.from_host.to_string(),
                cwd: s.cwd.to_string(),
                chkpnt_dir: s.chkpnt_dir().to_owned(),
                in_file: s.in_file.to_string(),
                out_file: s.out_file.to_string(),
                err_file: s.err_file.to_string(),
                sub_home_dir: s.sub_home_dir.to_string(),
                job_file: s.job_file.to_string(),
                asked_hosts: s.asked_hosts.clone(),
                depend_cond: s.depend_cond.to_string(),
                pre_exec_cmd: s.pre_exec.to_string(),
                post_exec_cmd: String::new(),
                job_name: s.job_name.to_string(),
                // One line: the record keeps no line break (a script's lines by `;`).
                command: basalt_core::job::one_line_command(&s.command),
                xf: s
                    .files()
                    .iter()
                    .map(|f| r::XFile {
                        sub_fn: f.local.clone(),
                        exec_fn: f.remote.clone(),
                        options: f.ops,
                    })
                    .collect(),
                mail_user: s.mail_user.to_string(),
                project_name: s.project.to_string(),
                nios_port: 0,
                max_num_processors: i64::from(s.max_processors),
                sched_host_type: String::new(),
                login_shell: s.login_shell.to_string(),
                options2: s.options2,
                idx: 0,
                in_file_spool: String::new(),
                command_spool: String::new(),
                job_spool_dir: String::new(),
                user_priority: -1,
                user_group: s.user_group.to_string(),
                abs_run_limit: -1,
                job_group: String::new(),
                job_description: String::new(),
                priority: -1,
                specified_cwd: s.spec_cwd.to_string(),
                is_script: s.options2 & sub2::JOB_CMD_SPOOL != 0,
                // Basalt fields after the mark: the submission token, then (when given)
                // -Ep and -Q.
                basalt_extra: {
                    let mut extra = Vec::new();
                    if !s.submit_token.is_empty() || s.extras.is_some() {
                        extra.push(el::Field::str(s.submit_token.clone()));
                    }
                    if let Some(x) = &s.extras {
                        extra.push(el::Field::str(x.post_exec.clone()));
                        extra.push(el::Field::str(x.requeue_exit_values.clone()));
                        extra.push(el::Field::str(encode_lines(&x.esub_output)));
                        extra.push(el::Field::str(x.app.clone()));
                        if !x.chkpnt_method.is_empty()
                            || x.restart_job.is_some()
                            || x.chkpnt_init != 0
                        {
                            extra.push(el::Field::str(x.chkpnt_method.clone()));
                            extra.push(el::Field::str(
                                x.restart_job.map(key_text).unwrap_or_default(),
                            ));
                            extra.push(el::Field::str(x.chkpnt_init.to_string()));
                        }
                    }
                    extra
                },
                foreign_tail: None,
            }))
        }
        Event::JobStart {
            time,
            key,
            hosts,
            effective_res_req,
        } => el::Record::JobStart(r::JobStart {
            header: h(*time),
            job_id: key.0,
            j_status: JobState::Run.code(),
            job_pid: 0,
            job_pgid: 0,
            host_factor: 1.0,
            exec_hosts: hosts.clone(),
            queue_pre_cmd: String::new(),
            queue_post_cmd: String::new(),
            j_flags: 0,
            idx: key.1,
            user_group: String::new(),
            // The rusage[] alternative it reserves (empty without alternatives).
            effective_res_req: effective_res_req.clone(),
        }),
        Event::JobStartAccept {
            time,
            key,
            pid,
            pgid,
        } => el::Record::JobStartAccept(r::JobStartAccept {
            header: h(*time),
            job_id: key.0,
            job_pid: i64::from(*pid),
            job_pgid: i64::from(*pgid),
            idx: key.1,
            j_flags: 0,
        }),
        Event::JobExecute {
            time,
            key,
            exec_uid,
            exec_user,
            exec_home,
            exec_cwd,
            pid,
        } => el::Record::JobExecute(r::JobExecute {
            header: h(*time),
            job_id: key.0,
            exec_uid: i64::from(*exec_uid),
            job_pgid: i64::from(*pid),
            exec_cwd: exec_cwd.clone(),
            exec_home: exec_home.clone(),
            exec_username: exec_user.clone(),
            job_pid: i64::from(*pid),
            idx: key.1,
        }),
        Event::JobStatus {
            time,
            key,
            status,
            reasons,
            subreasons,
            cpu_time,
            end_time,
            usage,
            exit_status,
            term_reason,
        } => el::Record::JobStatus(r::JobStatus {
            header: h(*time),
            job_id: key.0,
            j_status: *status,
            reason: *reasons,
            subreasons: *subreasons,
            cpu_time: *cpu_time,
            end_time: *end_time,
            rusage: usage.as_ref().map(rusage_of),
            exit_status: *exit_status,
            idx: key.1,
            mem: usage.as_ref().map(|u| r::MemUsage {
                max_mem: u.max_mem_kb as i64,
                avg_mem: u.avg_mem_kb as i64,
            }),
            // Basalt's trailing field: survives replay (TERM_RUNLIMIT, TERM_MEMLIMIT...).
            term_reason: term_reason.clone(),
            basalt_extra: Vec::new(),
        }),
        Event::JobSignal {
            time,
            key,
            uid,
            user,
            signal,
        } => el::Record::JobSignal(r::JobSignal {
            header: h(*time),
            job_id: key.0,
            user_id: i64::from(*uid),
            run_count: 0,
            signal_symbol: signal.clone(),
            idx: key.1,
            user_name: user.clone(),
        }),
        Event::JobSwitch {
            time,
            key,
            uid,
            user,
            queue,
        } => el::Record::JobSwitch(r::JobSwitch {
            header: h(*time),
            user_id: i64::from(*uid),
            job_id: key.0,
            queue: queue.clone(),
            idx: key.1,
            user_name: user.clone(),
        }),
        Event::JobModify {
            time,
            key,
            uid,
            user,
            umask,
            change,
        } => el::Record::JobModify2(Box::new(modify::to_record(
            *time, *key, *uid, user, *umask, change,
        ))),
        Event::JobMove {
            time,
            key,
            uid,
            user,
            position,
            base,
        } => el::Record::JobMove(r::JobMove {
            header: h(*time),
            user_id: i64::from(*uid),
            job_id: key.0,
            position: i64::from(*position),
            base: i64::from(*base),
            idx: key.1,
            user_name: user.clone(),
        }),
        Event::JobMigrate {
            time,
            key,
            uid,
            user,
            hosts,
        } => el::Record::Mig(r::Mig {
            header: h(*time),
            job_id: key.0,
            asked_hosts: hosts.clone(),
            user_id: i64::from(*uid),
            idx: key.1,
            user_name: user.clone(),
        }),
        Event::ChkpntStart {
            time,
            key,
            flags,
            period,
        } => el::Record::JobSigact(r::JobSigact {
            header: h(*time),
            job_id: key.0,
            period: period.unwrap_or(-1),
            pid: 0,
            j_status: JobState::Run.code(),
            reasons: 0,
            flags: i64::from(*flags),
            act_status: ACT_START,
            signal_symbol: SIG_CHKPNT.to_owned(),
            idx: key.1,
        }),
        Event::ChkpntEnd {
            time,
            key,
            ok,
            pid,
            flags,
            period,
            message,
        } => el::Record::Chkpnt(r::Chkpnt {
            header: h(*time),
            job_id: key.0,
            period: *period,
            pid: i64::from(*pid),
            ok: i64::from(*ok),
            flags: i64::from(*flags),
            idx: key.1,
            message: message.clone(),
        }),
        Event::JobForce {
            time,
            key,
            uid,
            user,
            hosts,
            no_stop,
        } => el::Record::JobForce(r::JobForce {
            header: h(*time),
            job_id: key.0,
            user_id: i64::from(*uid),
            idx: key.1,
            options: if *no_stop {
                RUNJOB_OPT_NOSTOP
            } else {
                RUNJOB_OPT_NORMAL
            },
            exec_hosts: hosts.clone(),
            user_name: user.clone(),
        }),
        Event::JobClean { time, key } => el::Record::JobClean(r::JobClean {
            header: h(*time),
            job_id: key.0,
            idx: key.1,
        }),
        Event::JobForward {
            time,
            key,
            cluster,
            queue,
        } => el::Record::JobForward(r::JobForward {
            header: h(*time),
            job_id: key.0,
            num_reser_hosts: 0,
            cluster: cluster.clone(),
            idx: key.1,
            job_rmt_attr: JOB_RMT_FORWARD,
            queue: queue.clone(),
        }),
        Event::JobAccept {
            time,
            key,
            cluster,
            src,
            attempt,
        } => el::Record::JobAccept(r::JobAccept {
            header: h(*time),
            job_id: key.0,
            remote_jid: src.0,
            cluster: cluster.clone(),
            idx: key.1,
            job_rmt_attr: JOB_RMT_REMOTE_BATCH,
            remote_idx: src.1,
            attempt: *attempt,
        }),
        Event::QueueCtrl {
            time,
            op,
            queue,
            uid,
            user,
            message,
        } => el::Record::QueueCtrl(r::QueueCtrl {
            header: h(*time),
            op_code: i64::from(*op),
            queue: queue.clone(),
            user_id: i64::from(*uid),
            user_name: user.clone(),
            message: message.clone(),
        }),
        Event::HostCtrl {
            time,
            op,
            host,
            uid,
            user,
            message,
        } => el::Record::HostCtrl(r::HostCtrl {
            header: h(*time),
            op_code: i64::from(*op),
            host: host.clone(),
            user_id: i64::from(*uid),
            user_name: user.clone(),
            message: message.clone(),
        }),
        Event::MbdStart {
            time,
            master,
            cluster,
            num_hosts,
            num_queues,
            epoch: _,
        } => el::Record::MbdStart(r::MbdStart {
            header: h(*time),
            master: master.clone(),
            cluster: cluster.clone(),
            num_hosts: i64::from(*num_hosts),
            num_queues: i64::from(*num_queues),
        }),
        Event::MbdDie {
            time,
            master,
            exit_code,
        } => el::Record::MbdDie(r::MbdDie {
            header: h(*time),
            master: master.clone(),
            num_remove_jobs: 0,
            exit_code: i64::from(*exit_code),
            message: String::new(),
        }),
        Event::LogSwitch {
            time,
            last_job_id,
            fairshare,
        } => el::Record::LogSwitch(r::LogSwitch {
            header: h(*time),
            last_job_id: *last_job_id,
            fairshare: fairshare
                .iter()
                .map(|(queue, user, cpu, run)| r::FsUsage {
                    queue: queue.clone(),
                    user: user.clone(),
                    cpu_seconds: *cpu,
                    run_seconds: *run,
                })
                .collect(),
        }),
    }
}

fn u32_of(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

/// An lsb.events record as a core event (None for records Basalt does not replay).
pub fn from_record(rec: &el::Record) -> Option<Event> {
    Some(match rec {
        el::Record::JobNew(n) => {
            let sub = Submission {
                user: n.user_name.as_str().into(),
                uid: u32_of(n.user_id),
                options: n.options,
                options2: n.options2,
                num_processors: u32_of(n.num_processors),
                max_processors: u32_of(n.max_num_processors),
                submit_time: n.submit_time,
                begin_time: n.begin_time,
                term_time: n.term_time,
                rlimits: n.rlimits.into(),
                umask: u32_of(n.umask),
                queue: n.queue.as_str().into(),
                res_req: n.res_req.as_str().into(),
                from_host: n.from_host.as_str().into(),
                cwd: n.cwd.as_str().into(),
                in_file: n.in_file.as_str().into(),
                out_file: n.out_file.as_str().into(),
                err_file: n.err_file.as_str().into(),
                sub_home_dir: n.sub_home_dir.as_str().into(),
                job_file: n.job_file.as_str().into(),
                asked_hosts: n.asked_hosts.clone(),
                depend_cond: n.depend_cond.as_str().into(),
                pre_exec: n.pre_exec_cmd.as_str().into(),
                job_name: n.job_name.as_str().into(),
                command: n.command.as_str().into(),
                mail_user: n.mail_user.as_str().into(),
                project: n.project_name.as_str().into(),
                login_shell: n.login_shell.as_str().into(),
                spec_cwd: n.specified_cwd.as_str().into(),
                user_group: n.user_group.as_str().into(),
                submit_token: n
                    .basalt_extra
                    .first()
                    .map(|f| f.text().to_owned())
                    .unwrap_or_default()
                    .into(),
                extras: {
                    let text = |i: usize| {
                        n.basalt_extra
                            .get(i)
                            .map(|f| f.text().to_owned())
                            .unwrap_or_default()
                    };
                    let x = basalt_sched::SubExtras {
                        post_exec: text(1),
                        requeue_exit_values: text(2),
                        esub_output: decode_lines(&text(3)),
                        app: text(4),
                        chkpnt_dir: n.chkpnt_dir.clone(),
                        chkpnt_period: n.chkpnt_period,
                        chkpnt_method: text(5),
                        restart_job: key_of_text(&text(6)),
                        chkpnt_init: text(7).parse().unwrap_or(0),
                        files: n
                            .xf
                            .iter()
                            .map(|x| basalt_sched::FileTransfer {
                                local: x.sub_fn.clone(),
                                remote: x.exec_fn.clone(),
                                ops: x.options,
                            })
                            .collect(),
                    };
                    (x != basalt_sched::SubExtras::default()).then(|| Box::new(x))
                },
            };
            Event::JobNew {
                time: n.header.time,
                job_id: n.job_id,
                sub: Box::new(sub),
            }
        }
        el::Record::JobStart(s) => Event::JobStart {
            time: s.header.time,
            key: (s.job_id, s.idx),
            hosts: s.exec_hosts.clone(),
            effective_res_req: s.effective_res_req.clone(),
        },
        el::Record::JobStartAccept(a) => Event::JobStartAccept {
            time: a.header.time,
            key: (a.job_id, a.idx),
            pid: u32_of(a.job_pid),
            pgid: u32_of(a.job_pgid),
        },
        el::Record::JobExecute(x) => Event::JobExecute {
            time: x.header.time,
            key: (x.job_id, x.idx),
            exec_uid: u32_of(x.exec_uid),
            exec_user: x.exec_username.clone(),
            exec_home: x.exec_home.clone(),
            exec_cwd: x.exec_cwd.clone(),
            pid: u32_of(x.job_pid),
        },
        el::Record::JobStatus(s) => Event::JobStatus {
            time: s.header.time,
            key: (s.job_id, s.idx),
            status: s.j_status,
            reasons: s.reason,
            subreasons: s.subreasons,
            cpu_time: s.cpu_time,
            end_time: s.end_time,
            usage: s.rusage.as_ref().map(|ru| Usage {
                utime: ru.utime.max(0.0),
                stime: ru.stime.max(0.0),
                max_mem_kb: s
                    .mem
                    .as_ref()
                    .map_or(ru.maxrss.max(0.0) as u64, |m| m.max_mem.max(0) as u64),
                avg_mem_kb: s.mem.as_ref().map_or(0, |m| m.avg_mem.max(0) as u64),
                ..Default::default()
            }),
            exit_status: s.exit_status,
            // "" for records without Basalt's tail: the core then derives TERM_OWNER /
            // TERM_ADMIN from the JOB_SIGNAL that ordered the kill.
            term_reason: s.term_reason.clone(),
        },
        el::Record::JobSignal(s) => Event::JobSignal {
            time: s.header.time,
            key: (s.job_id, s.idx),
            uid: u32_of(s.user_id),
            user: s.user_name.clone(),
            signal: s.signal_symbol.clone(),
        },
        el::Record::JobSwitch(s) => Event::JobSwitch {
            time: s.header.time,
            key: (s.job_id, s.idx),
            uid: u32_of(s.user_id),
            user: s.user_name.clone(),
            queue: s.queue.clone(),
        },
        el::Record::JobModify2(m) => return modify::from_record(m),
        el::Record::JobMove(m) => Event::JobMove {
            time: m.header.time,
            key: (m.job_id, m.idx),
            uid: u32_of(m.user_id),
            user: m.user_name.clone(),
            position: u32_of(m.position),
            base: u32_of(m.base),
        },
        el::Record::JobForce(f) => Event::JobForce {
            time: f.header.time,
            key: (f.job_id, f.idx),
            uid: u32_of(f.user_id),
            user: f.user_name.clone(),
            hosts: f.exec_hosts.clone(),
            no_stop: f.options & RUNJOB_OPT_NOSTOP != 0,
        },
        el::Record::JobSigact(a) if a.signal_symbol == SIG_CHKPNT && a.act_status == ACT_START => {
            Event::ChkpntStart {
                time: a.header.time,
                key: (a.job_id, a.idx),
                flags: u32::try_from(a.flags).unwrap_or(0),
                period: (a.period >= 0).then_some(a.period),
            }
        }
        el::Record::Chkpnt(c) => Event::ChkpntEnd {
            time: c.header.time,
            key: (c.job_id, c.idx),
            ok: c.ok != 0,
            pid: u32::try_from(c.pid).unwrap_or(0),
            flags: u32::try_from(c.flags).unwrap_or(0),
            period: c.period,
            message: c.message.clone(),
        },
        el::Record::Mig(m) => Event::JobMigrate {
            time: m.header.time,
            key: (m.job_id, m.idx),
            uid: u32_of(m.user_id),
            user: m.user_name.clone(),
            hosts: m.asked_hosts.clone(),
        },
        el::Record::JobClean(c) => Event::JobClean {
            time: c.header.time,
            key: (c.job_id, c.idx),
        },
        el::Record::JobForward(f) => Event::JobForward {
            time: f.header.time,
            key: (f.job_id, f.idx),
            cluster: f.cluster.clone(),
            queue: f.queue.clone(),
        },
        el::Record::JobAccept(a) => Event::JobAccept {
            time: a.header.time,
            key: (a.job_id, a.idx),
            cluster: a.cluster.clone(),
            src: (a.remote_jid, a.remote_idx),
            attempt: a.attempt,
        },
        el::Record::QueueCtrl(q) => Event::QueueCtrl {
            time: q.header.time,
            op: u32_of(q.op_code),
            queue: q.queue.clone(),
            uid: u32_of(q.user_id),
            user: q.user_name.clone(),
            message: q.message.clone(),
        },
        el::Record::HostCtrl(c) => Event::HostCtrl {
            time: c.header.time,
            op: u32_of(c.op_code),
            host: c.host.clone(),
            uid: u32_of(c.user_id),
            user: c.user_name.clone(),
            message: c.message.clone(),
        },
        el::Record::MbdStart(m) => Event::MbdStart {
            time: m.header.time,
            master: m.master.clone(),
            cluster: m.cluster.clone(),
            num_hosts: u32_of(m.num_hosts),
            num_queues: u32_of(m.num_queues),
            epoch: 0,
        },
        el::Record::MbdDie(d) => Event::MbdDie {
            time: d.header.time,
            master: d.master.clone(),
            exit_code: i32::try_from(d.exit_code).unwrap_or(0),
        },
        el::Record::LogSwitch(l) => Event::LogSwitch {
            time: l.header.time,
            last_job_id: l.last_job_id,
            fairshare: l
                .fairshare
                .iter()
                .map(|f| {
                    (
                        f.queue.clone(),
                        f.user.clone(),
                        f.cpu_seconds,
                        f.run_seconds,
                    )
                })
                .collect(),
        },
        _ => return None,
    })
}

/// The [`r::EndKey`] of the record [`finish_record`] makes of `j` (without making it).
pub fn end_key(j: &Job) -> r::EndKey {
    (
        j.id,
        j.idx,
        j.sub.submit_time,
        j.start_time,
        j.end_time,
        j.state.code(),
        j.exit_status,
    )
}

/// The JOB_FINISH record of a finished job (lsb.acct).
pub fn finish_record(j: &Job) -> r::JobFinish {
    let s = &j.sub;
    let mut ru = rusage_of(j.usage());
    if ru.utime == 0.0 && ru.stime == 0.0 && j.cpu_time > 0.0 {
        ru.utime = j.cpu_time;
    }
    r::JobFinish {
        header: h(j.end_time),
        job_id: j.id,
        user_id: i64::from(s.uid),
        options: s.options,
        num_processors: i64::from(s.num_processors),
        submit_time: s.submit_time,
        begin_time: s.begin_time,
        term_time: s.term_time,
        start_time: j.start_time,
        user_name: s.user.to_string(),
        queue: j.queue.to_string(),
        res_req: s.res_req.to_string(),
        depend_cond: s.depend_cond.to_string(),
        pre_exec_cmd: s.pre_exec.to_string(),
        post_exec_cmd: String::new(),
        from_host: s.from_host.to_string(),
        cwd: s.cwd.to_string(),
        in_file: s.in_file.to_string(),
        out_file: s.out_file.to_string(),
        err_file: s.err_file.to_string(),
        job_file: s.job_file.to_string(),
        asked_hosts: s.asked_hosts.clone(),
        exec_hosts: j.hosts.clone(),
        j_status: j.state.code(),
        host_factor: 1.0,
        job_name: s.job_name.to_string(),
        command: basalt_core::job::one_line_command(&s.command),
        rusage: ru,
        mail_user: s.mail_user.to_string(),
        project_name: s.project.to_string(),
        exit_status: j.exit_status,
        max_num_processors: i64::from(s.max_processors),
        login_shell: s.login_shell.to_string(),
        idx: j.idx,
        max_rmem: j.usage().max_mem_kb as i64,
        max_rswap: j.usage().swap_kb as i64,
        in_file_spool: String::new(),
        command_spool: String::new(),
        basalt_extra: Vec::new(),
        foreign_tail: None,
    }
}

/// A multi-line text in one lsb.events field (which cannot hold a newline): `%` and the
/// line breaks percent-encoded (`%25`, `%0A`, `%0D`).
fn encode_lines(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\n', "%0A")
        .replace('\r', "%0D")
}

/// The inverse of [`encode_lines`].
fn decode_lines(s: &str) -> String {
    s.replace("%0A", "\n")
        .replace("%0D", "\r")
        .replace("%25", "%")
}

#[cfg(test)]
mod tests;
