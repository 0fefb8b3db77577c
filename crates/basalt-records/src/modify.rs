//! bmod's change ([`Modify`]) as a `JOB_MODIFY2` record and back.
//!
//! LSF's encoding: an option given a new value has its bit in `options` (`options2` for
//! `-oo`/`-eo`) and its value in the record; an option reset (`-Xn`) has its bit in
//! `delOptions`; limits are `-1` (unchanged), the new value, or `-2` (reset);
//! `beginTime`/`termTime` `0` (unchanged), the new time or `-2`; processors
//! `2147483646` (unchanged) or the new count. What LSF's record has no room for (`-Ep`,
//! `-Q`, `-app`, `-cwd`, `-G`) goes after Basalt's mark with its own set/reset bits.

use basalt_core::job::{sub, sub2};
use basalt_eventlog as r;
use basalt_eventlog::modify as mb;
use basalt_sched::{Change, Event, JobKey, Modify};

/// The job id string of a key (`103`, `103[4]`).
fn job_id_str(key: JobKey) -> String {
    if key.1 == 0 {
        key.0.to_string()
    } else {
        format!("{}[{}]", key.0, key.1)
    }
}

/// Record a change of one option: `bit` in `options` and the value, or in `del`.
fn text(c: &Change<String>, bit: u32, options: &mut u32, del: &mut u32, out: &mut String) {
    match c {
        Change::Keep => {}
        Change::Set(v) => {
            *options |= bit;
            v.clone_into(out);
        }
        Change::Reset => *del |= bit,
    }
}

/// A Basalt option: its set/reset bit and value.
fn basalt(c: &Change<String>, set: u32, reset: u32, bits: &mut u32, out: &mut String) {
    match c {
        Change::Keep => {}
        Change::Set(v) => {
            *bits |= set;
            v.clone_into(out);
        }
        Change::Reset => *bits |= reset,
    }
}

fn onoff(c: &Change<()>, bit: u32, options: &mut u32, del: &mut u32) {
    match c {
        Change::Keep => {}
        Change::Set(()) => *options |= bit,
        Change::Reset => *del |= bit,
    }
}

fn number(c: &Change<i64>, keep: i64) -> i64 {
    match c {
        Change::Keep => keep,
        Change::Set(v) => *v,
        Change::Reset => mb::DELETE_NUMBER,
    }
}

/// The JOB_MODIFY2 of a logged [`Event::JobModify`].
pub(crate) fn to_record(
    time: i64,
    key: JobKey,
    uid: u32,
    user: &str,
    umask: u32,
    m: &Modify,
) -> r::JobModify2 {
    let mut rec = r::JobModify2 {
        header: r::Header::new(time),
        job_id_str: job_id_str(key),
        options: sub::MODIFY,
        options2: 0,
        del_options: 0,
        user_id: i64::from(uid),
        user_name: user.to_owned(),
        submit_time: time,
        umask: i64::from(umask),
        num_processors: mb::DEFAULT_NUMPRO,
        max_num_processors: mb::DEFAULT_NUMPRO,
        begin_time: number(&m.begin_time, 0),
        term_time: number(&m.term_time, 0),
        ..Default::default()
    };
    let (o, d) = (&mut rec.options, &mut rec.del_options);
    text(&m.job_name, sub::JOB_NAME, o, d, &mut rec.job_name);
    text(&m.queue, sub::QUEUE, o, d, &mut rec.queue);
    match &m.hosts {
        Change::Keep => {}
        Change::Set(h) => {
            *o |= sub::HOST;
            rec.asked_hosts = h.clone();
        }
        Change::Reset => *d |= sub::HOST,
    }
    text(&m.res_req, sub::RES_REQ, o, d, &mut rec.res_req);
    text(&m.depend_cond, sub::DEPEND_COND, o, d, &mut rec.depend_cond);
    text(&m.in_file, sub::IN_FILE, o, d, &mut rec.in_file);
    for (c, bit, over, out) in [
        (
            &m.out_file,
            sub::OUT_FILE,
            sub2::OUT_OVERWRITE,
            &mut rec.out_file,
        ),
        (
            &m.err_file,
            sub::ERR_FILE,
            sub2::ERR_OVERWRITE,
            &mut rec.err_file,
        ),
    ] {
        match c {
            Change::Keep => {}
            Change::Set((path, overwrite)) => {
                *o |= bit;
                if *overwrite {
                    rec.options2 |= over;
                }
                path.clone_into(out);
            }
            Change::Reset => *d |= bit,
        }
    }
    text(&m.pre_exec, sub::PRE_EXEC, o, d, &mut rec.pre_exec_cmd);
    text(&m.mail_user, sub::MAIL_USER, o, d, &mut rec.mail_user);
    text(&m.project, sub::PROJECT_NAME, o, d, &mut rec.project_name);
    text(&m.login_shell, sub::LOGIN_SHELL, o, d, &mut rec.login_shell);
    if let Change::Set(c) = &m.command {
        rec.options2 |= sub2::MODIFY_CMD;
        rec.command = basalt_core::job::one_line_command(c);
    }
    onoff(&m.exclusive, sub::EXCLUSIVE, o, d);
    onoff(&m.rerunnable, sub::RERUNNABLE, o, d);
    onoff(&m.notify_begin, sub::NOTIFY_BEGIN, o, d);
    onoff(&m.notify_end, sub::NOTIFY_END, o, d);
    for (i, c) in m.rlimits.iter().enumerate() {
        rec.rlimits[i] = number(c, -1);
    }
    match m.procs {
        Change::Keep => {}
        Change::Set((min, max)) => {
            rec.num_processors = i64::from(min);
            rec.max_num_processors = i64::from(max);
        }
        Change::Reset => {
            rec.num_processors = mb::DEL_NUMPRO;
            rec.max_num_processors = mb::DEL_NUMPRO;
        }
    }
    let b = &mut rec.basalt_options;
    basalt(
        &m.post_exec,
        mb::POST_EXEC,
        mb::POST_EXEC_DEL,
        b,
        &mut rec.post_exec_cmd,
    );
    basalt(
        &m.requeue_exit_values,
        mb::REQUEUE,
        mb::REQUEUE_DEL,
        b,
        &mut rec.requeue_exit_values,
    );
    basalt(&m.app, mb::APP, mb::APP_DEL, b, &mut rec.app);
    basalt(&m.spec_cwd, mb::CWD, mb::CWD_DEL, b, &mut rec.specified_cwd);
    basalt(
        &m.user_group,
        mb::USER_GROUP,
        mb::USER_GROUP_DEL,
        b,
        &mut rec.user_group,
    );
    rec
}

fn text_of(options: u32, del: u32, bit: u32, v: &str) -> Change<String> {
    if options & bit != 0 {
        Change::Set(v.to_owned())
    } else if del & bit != 0 {
        Change::Reset
    } else {
        Change::Keep
    }
}

fn basalt_of(bits: u32, set: u32, reset: u32, v: &str) -> Change<String> {
    if bits & set != 0 {
        Change::Set(v.to_owned())
    } else if bits & reset != 0 {
        Change::Reset
    } else {
        Change::Keep
    }
}

fn onoff_of(options: u32, del: u32, bit: u32) -> Change<()> {
    if options & bit != 0 {
        Change::Set(())
    } else if del & bit != 0 {
        Change::Reset
    } else {
        Change::Keep
    }
}

fn number_of(v: i64, keep: i64) -> Change<i64> {
    if v == keep {
        Change::Keep
    } else if v == mb::DELETE_NUMBER {
        Change::Reset
    } else {
        Change::Set(v)
    }
}

/// The event of a JOB_MODIFY2 (None: its job id does not parse).
pub(crate) fn from_record(rec: &r::JobModify2) -> Option<Event> {
    let key = rec.job_key()?;
    let (o, d) = (rec.options, rec.del_options);
    let file = |bit: u32, over: u32, path: &str| {
        if o & bit != 0 {
            Change::Set((path.to_owned(), rec.options2 & over != 0))
        } else if d & bit != 0 {
            Change::Reset
        } else {
            Change::Keep
        }
    };
    let mut m = Modify {
        job_name: text_of(o, d, sub::JOB_NAME, &rec.job_name),
        queue: text_of(o, d, sub::QUEUE, &rec.queue),
        hosts: if o & sub::HOST != 0 {
            Change::Set(rec.asked_hosts.clone())
        } else if d & sub::HOST != 0 {
            Change::Reset
        } else {
            Change::Keep
        },
        res_req: text_of(o, d, sub::RES_REQ, &rec.res_req),
        depend_cond: text_of(o, d, sub::DEPEND_COND, &rec.depend_cond),
        in_file: text_of(o, d, sub::IN_FILE, &rec.in_file),
        out_file: file(sub::OUT_FILE, sub2::OUT_OVERWRITE, &rec.out_file),
        err_file: file(sub::ERR_FILE, sub2::ERR_OVERWRITE, &rec.err_file),
        pre_exec: text_of(o, d, sub::PRE_EXEC, &rec.pre_exec_cmd),
        mail_user: text_of(o, d, sub::MAIL_USER, &rec.mail_user),
        project: text_of(o, d, sub::PROJECT_NAME, &rec.project_name),
        login_shell: text_of(o, d, sub::LOGIN_SHELL, &rec.login_shell),
        exclusive: onoff_of(o, d, sub::EXCLUSIVE),
        rerunnable: onoff_of(o, d, sub::RERUNNABLE),
        notify_begin: onoff_of(o, d, sub::NOTIFY_BEGIN),
        notify_end: onoff_of(o, d, sub::NOTIFY_END),
        begin_time: number_of(rec.begin_time, 0),
        term_time: number_of(rec.term_time, 0),
        procs: match rec.num_processors {
            mb::DEFAULT_NUMPRO => Change::Keep,
            mb::DEL_NUMPRO => Change::Reset,
            n => {
                let min = u32::try_from(n.max(1)).unwrap_or(u32::MAX);
                let max = match rec.max_num_processors {
                    mb::DEFAULT_NUMPRO | mb::DEL_NUMPRO => min,
                    x => u32::try_from(x.max(1)).unwrap_or(u32::MAX).max(min),
                };
                Change::Set((min, max))
            }
        },
        post_exec: basalt_of(
            rec.basalt_options,
            mb::POST_EXEC,
            mb::POST_EXEC_DEL,
            &rec.post_exec_cmd,
        ),
        requeue_exit_values: basalt_of(
            rec.basalt_options,
            mb::REQUEUE,
            mb::REQUEUE_DEL,
            &rec.requeue_exit_values,
        ),
        app: basalt_of(rec.basalt_options, mb::APP, mb::APP_DEL, &rec.app),
        spec_cwd: basalt_of(rec.basalt_options, mb::CWD, mb::CWD_DEL, &rec.specified_cwd),
        user_group: basalt_of(
            rec.basalt_options,
            mb::USER_GROUP,
            mb::USER_GROUP_DEL,
            &rec.user_group,
        ),
        command: if rec.options2 & sub2::MODIFY_CMD != 0 {
            Change::Set(rec.command.clone())
        } else {
            Change::Keep
        },
        ..Default::default()
    };
    for (i, v) in rec.rlimits.iter().enumerate() {
        m.rlimits[i] = number_of(*v, -1);
    }
    Some(Event::JobModify {
        time: rec.header.time,
        key,
        uid: u32::try_from(rec.user_id).unwrap_or(0),
        user: rec.user_name.clone(),
        umask: u32::try_from(rec.umask).unwrap_or(0o022),
        change: Box::new(m),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of change survives the record: written, parsed back, converted.
    #[test]
    fn a_change_goes_through_job_modify2_and_back() {
        let mut m = Modify {
            job_name: Change::Set("n".into()),
            queue: Change::Set("short".into()),
            hosts: Change::Set(vec!["hostA".into(), "hostB".into()]),
            res_req: Change::Reset,
            depend_cond: Change::Set("done(3)".into()),
            in_file: Change::Reset,
            out_file: Change::Set(("o.%J".into(), true)),
            err_file: Change::Reset,
            pre_exec: Change::Set("true".into()),
            mail_user: Change::Set("bob".into()),
            project: Change::Set("proj".into()),
            login_shell: Change::Reset,
            procs: Change::Set((2, 4)),
            begin_time: Change::Set(1_900_000_000),
            term_time: Change::Reset,
            exclusive: Change::Set(()),
            rerunnable: Change::Reset,
            notify_begin: Change::Keep,
            notify_end: Change::Set(()),
            post_exec: Change::Set("echo done".into()),
            requeue_exit_values: Change::Reset,
            app: Change::Set("fluent".into()),
            spec_cwd: Change::Reset,
            user_group: Change::Set("g1".into()),
            command: Change::Set("sleep 5; echo 'new'".into()),
            ..Default::default()
        };
        m.rlimits[basalt_core::rlimit::RUN] = Change::Set(600);
        m.rlimits[basalt_core::rlimit::RSS] = Change::Reset;
        let ev = Event::JobModify {
            time: 1_800_000_000,
            key: (7, 3),
            uid: 1000,
            user: "alice".into(),
            umask: 0o022,
            change: Box::new(m),
        };
        let line = crate::to_record(&ev).to_line();
        assert!(
            line.starts_with("\"JOB_MODIFY2\" \"10.1\" 1800000000 \"7[3]\" "),
            "{line}"
        );
        let back = basalt_eventlog::parse_line(&line)
            .expect("parse")
            .expect("a record");
        assert_eq!(crate::from_record(&back), Some(ev));
    }
}
