//! `brestart [bsub options] [-f] checkpoint_dir [job_ID | "job_ID[index]"]` (LSF 10.1):
//! restart a checkpointed job from `checkpoint_dir/<job_ID>`. The restarted job is a new
//! job (a new id) with the old job's submission; `-q -m -b -w -W -x -B -N` and `-k`'s
//! period and method change it, `-f` is passed to erestart. Prints bsub's `Job <N> is
//! submitted to queue <q>.`; a refusal is `<reason>. Job not submitted.` on stderr.

use super::bsub::{
    BsubOpts, Chkpnt, ValueCtx, apply, chosen_or_new_token, limits_unit, rejected_line,
    resolve_local_time, submit_until_answered, submitted_line,
};
use super::opts::{Item, Spec};
use basalt_core::job::sub;
use basalt_proto::mbatchd::{JobRef, JobSubmission, SubmitRequest};
use std::process::ExitCode;

const USAGE: &str = "Usage: brestart [-h] [-V] [-x] [-f] [-N] [-B] [-q \"queue_name ...\"]\n                [-m \"host_name ...\"] [-w \"dependency_expression\"] [-b begin_time]\n                [-W [hour:]minute] [-p minutes] [-k method=name]\n                checkpoint_dir [job_ID | \"job_ID[index]\"]\n";

/// What `brestart` parsed: the options over the old job's, the checkpoint directory
/// (absolute), the job and -f.
#[derive(Debug, Clone, PartialEq)]
pub struct Restart {
    pub opts: BsubOpts,
    pub dir: String,
    pub job: JobRef,
    pub force: bool,
}

/// Parse brestart's arguments (`cwd` makes a relative directory absolute).
pub fn parse(items: Vec<Item>, cx: &ValueCtx, cwd: &str) -> Result<Restart, String> {
    let mut o = BsubOpts::default();
    let mut words = Vec::new();
    let mut force = false;
    let mut period = None;
    let mut method = None;
    for it in items {
        match it {
            Item::Arg(a) => words.push(a),
            Item::Opt(n, v) => match n.as_str() {
                "f" => force = true,
                "p" => {
                    let v = v.unwrap_or_default();
                    let m: i64 = v
                        .trim()
                        .parse()
                        .ok()
                        .filter(|m| *m > 0)
                        .ok_or_else(|| format!("{v}: Bad checkpoint period value"))?;
                    period = Some(m * 60);
                }
                "k" => {
                    let v = v.unwrap_or_default();
                    let m = v
                        .trim()
                        .strip_prefix("method=")
                        .filter(|m| !m.is_empty() && !m.contains('/'))
                        .ok_or_else(|| format!("{v}: Bad checkpoint method"))?;
                    method = Some(m.to_owned());
                }
                _ => apply(&mut o, &n, v.as_deref(), cx)?,
            },
        }
    }
    let [dir, id] = words.as_slice() else {
        return Err(USAGE.to_owned());
    };
    let job = super::parse_job_ids(std::slice::from_ref(id))
        .ok()
        .and_then(|r| r.into_iter().next())
        .filter(|r| r.job_id > 0)
        .ok_or_else(|| format!("{id}: Illegal job ID."))?;
    let dir = if dir.starts_with('/') {
        dir.clone()
    } else {
        format!("{}/{dir}", cwd.trim_end_matches('/'))
    };
    o.chkpnt = Some(Chkpnt {
        dir: dir.clone(),
        period,
        init: None,
        method,
    });
    Ok(Restart {
        opts: o,
        dir,
        job,
        force,
    })
}

/// The submission brestart sends: only what it changes, and the job to restart.
pub fn submission(r: &Restart) -> JobSubmission {
    let o = &r.opts;
    let mut options = sub::RESTART | sub::CHKPNT_DIR;
    let mut set = |cond: bool, bit: u32| {
        if cond {
            options |= bit;
        }
    };
    set(r.force, sub::RESTART_FORCE);
    set(o.exclusive, sub::EXCLUSIVE);
    set(o.notify_begin, sub::NOTIFY_BEGIN);
    set(o.notify_end, sub::NOTIFY_END);
    set(o.queue.is_some(), sub::QUEUE);
    set(o.hosts.is_some(), sub::HOST);
    let c = o.chkpnt.clone().unwrap_or_default();
    set(c.period.is_some(), sub::CHKPNT_PERIOD);
    let mut rlimits = vec![-1i64; basalt_core::rlimit::COUNT];
    if let Some(w) = o.limits[basalt_core::rlimit::RUN] {
        rlimits[basalt_core::rlimit::RUN] = w;
    }
    JobSubmission {
        queue: o.queue.clone().unwrap_or_default(),
        asked_hosts: o.hosts.clone().unwrap_or_default(),
        depend_cond: o.depend.clone().unwrap_or_default(),
        begin_time: o.begin.unwrap_or(0),
        rlimits,
        options,
        chkpnt_dir: r.dir.clone(),
        chkpnt_period: c.period.unwrap_or(0),
        chkpnt_method: c.method.unwrap_or_default(),
        restart_job: Some(r.job),
        ..Default::default()
    }
}

pub fn main(args: Vec<String>) -> ExitCode {
    let spec = Spec {
        flags: &["h", "V", "x", "f", "N", "B"],
        valued: &["q", "m", "w", "b", "W", "p", "k"],
    };
    let items = match super::parse_args("brestart", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let config = match super::load_config("brestart") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let unit = limits_unit(&config);
    let cx = ValueCtx {
        unit: &unit,
        resolve_time: resolve_local_time,
        max_user_priority: basalt_core::bounds::DEFAULT_MAX_USER_PRIORITY,
    };
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| "/".to_owned());
    let r = match parse(items, &cx, &cwd) {
        Ok(r) => r,
        Err(e) if e == USAGE => {
            eprint!("{USAGE}");
            return crate::fail();
        }
        Err(e) => {
            eprintln!("{e}");
            return crate::fail();
        }
    };
    // The checkpoint must be there (LSF: `<dir>/<id>: No such file or directory`) when
    // this host sees the directory at all.
    let job_dir = format!(
        "{}/{}",
        r.dir.trim_end_matches('/'),
        basalt_sched::chkpnt::job_dir_name((r.job.job_id, r.job.idx))
    );
    if std::path::Path::new(&r.dir).is_dir() && !std::path::Path::new(&job_dir).is_dir() {
        eprintln!("{job_dir}: No such file or directory. Job not submitted.");
        return crate::fail();
    }
    let job = submission(&r);
    let token = match chosen_or_new_token() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}", rejected_line(&e));
            return crate::fail();
        }
    };
    super::run(async move {
        let req = SubmitRequest {
            job: Some(job),
            submit_token: token,
        };
        match submit_until_answered(&config, req, "brestart").await {
            Ok((a, _)) => {
                println!("{}", submitted_line(a.job_id, &a.queue, a.default_queue));
                ExitCode::SUCCESS
            }
            Err(code) => code,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_time(_: &[u32]) -> Option<i64> {
        Some(1_800_000_000)
    }

    fn parsed(args: &[&str]) -> Result<Restart, String> {
        let spec = Spec {
            flags: &["h", "V", "x", "f", "N", "B"],
            valued: &["q", "m", "w", "b", "W", "p", "k"],
        };
        let words: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let items = super::super::opts::parse(&words, &spec, true).map_err(|e| e.to_string())?;
        let cx = ValueCtx {
            unit: "KB",
            resolve_time: no_time,
            max_user_priority: basalt_core::bounds::DEFAULT_MAX_USER_PRIORITY,
        };
        parse(items, &cx, "/home/alice")
    }

    #[test]
    fn brestart_takes_the_directory_and_job_and_sends_a_restart_of_that_job() {
        let r = parsed(&["-f", "-q", "night", "-m", "hostC", "ckpt", "123"]).expect("parsed");
        assert_eq!(r.dir, "/home/alice/ckpt");
        assert_eq!(r.job.job_id, 123);
        let s = submission(&r);
        assert_eq!(s.restart_job.map(|j| j.job_id), Some(123));
        assert_eq!(s.chkpnt_dir, "/home/alice/ckpt");
        assert_eq!(s.queue, "night");
        assert_eq!(s.asked_hosts, vec!["hostC".to_owned()]);
        let want = sub::RESTART | sub::RESTART_FORCE | sub::CHKPNT_DIR | sub::QUEUE | sub::HOST;
        assert_eq!(s.options & want, want);
        assert_eq!(s.rlimits[basalt_core::rlimit::RUN], -1);
    }

    #[test]
    fn brestart_w_limit_p_period_and_k_method_change_the_restarted_job() {
        let r =
            parsed(&["-W", "10", "-p", "5", "-k", "method=mine", "/c", "7[2]"]).expect("parsed");
        let s = submission(&r);
        assert_eq!(s.rlimits[basalt_core::rlimit::RUN], 600);
        assert_eq!((s.chkpnt_period, s.chkpnt_method.as_str()), (300, "mine"));
        assert_ne!(s.options & sub::CHKPNT_PERIOD, 0);
        assert_eq!(s.restart_job.map(|j| (j.job_id, j.idx)), Some((7, 2)));
    }

    #[test]
    fn brestart_without_a_directory_and_a_job_or_with_a_bad_one_is_refused() {
        assert_eq!(parsed(&["/c"]), Err(USAGE.to_owned()));
        assert_eq!(parsed(&["/c", "x1"]), Err("x1: Illegal job ID.".to_owned()));
        assert!(parsed(&["-p", "0", "/c", "1"]).is_err());
        assert!(parsed(&["-k", "oops", "/c", "1"]).is_err());
    }
}
