//! The submission a user sent, held against [`basalt_core::bounds`] before anything is
//! logged: every length, count and range, and the syntax of what mbatchd parses (array
//! specs, dependency expressions). `bsub` runs the same check before it sends, so a user
//! sees the refusal either way with LSF's message.

use crate::SchedError;
use crate::types::Submission;
use basalt_core::bounds::*;

fn too_long(what: &str, max: usize) -> SchedError {
    SchedError::BadArgument(format!(
        "Bad argument: {what} is longer than {max} characters"
    ))
}

fn no_nul(what: &str, v: &str) -> Result<(), SchedError> {
    if v.contains('\0') {
        return Err(SchedError::BadArgument(format!(
            "Bad argument: {what} contains a NUL character"
        )));
    }
    Ok(())
}

fn text(what: &str, v: &str, max: usize) -> Result<(), SchedError> {
    if v.len() > max {
        return Err(too_long(what, max));
    }
    no_nul(what, v)
}

/// Check a submission's fields (not its environment: [`check_env`]).
pub fn check_submission(s: &Submission) -> Result<(), SchedError> {
    if s.job_name.len() > MAX_JOB_NAME || s.job_name.contains(['\0', '\n']) {
        return Err(SchedError::BadJobName);
    }
    if s.command.len() > MAX_COMMAND {
        return Err(too_long("the job command", MAX_COMMAND));
    }
    no_nul("the job command", &s.command)?;
    if s.res_req.len() > MAX_RES_REQ || s.res_req.contains('\0') {
        return Err(SchedError::BadResReq);
    }
    if s.depend_cond.contains('\0') || crate::depend::parse(&s.depend_cond).is_err() {
        return Err(SchedError::BadDependency);
    }
    for (what, v) in [
        ("the output file name (-o)", &s.out_file),
        ("the error file name (-e)", &s.err_file),
        ("the input file name (-i)", &s.in_file),
        ("the working directory (-cwd)", &s.spec_cwd),
        ("the submission directory", &s.cwd),
        ("the home directory", &s.sub_home_dir),
        ("the login shell (-L)", &s.login_shell),
    ] {
        text(what, v, MAX_PATH)?;
    }
    for (what, v) in [
        ("the queue name", &s.queue),
        ("the project name (-P)", &s.project),
        ("the user group name (-G)", &s.user_group),
        ("the mail user (-u)", &s.mail_user),
        ("the submission host", &s.from_host),
    ] {
        text(what, v, MAX_NAME)?;
    }
    text("the pre-execution command (-E)", &s.pre_exec, MAX_PRE_EXEC)?;
    text(
        "the post-execution command (-Ep)",
        s.post_exec(),
        MAX_PRE_EXEC,
    )?;
    text(
        "the requeue exit values (-Q)",
        s.requeue_exit_values(),
        MAX_NAME,
    )?;
    text(
        "the esub output for eexec",
        s.esub_output(),
        basalt_core::bounds::MAX_ESUB_OUTPUT,
    )?;
    if let Err(e) = basalt_config::batch::RequeueValues::parse(s.requeue_exit_values()) {
        return Err(SchedError::BadArgument(format!(
            "Bad argument: requeue exit values (-Q): {e}"
        )));
    }
    if s.asked_hosts.len() > MAX_ASKED_HOSTS
        || s.asked_hosts
            .iter()
            .any(|h| h.is_empty() || h.len() > MAX_NAME || h.contains('\0'))
    {
        return Err(SchedError::BadHost);
    }
    if s.num_processors > MAX_PROCESSORS || s.max_processors > MAX_PROCESSORS {
        return Err(SchedError::TooManyProcessors);
    }
    for t in [s.begin_time, s.term_time] {
        if !(0..=MAX_TIME).contains(&t) {
            return Err(SchedError::BadTime);
        }
    }
    if s.begin_time > 0 && s.term_time > 0 && s.begin_time > s.term_time {
        return Err(SchedError::StartAfterTerm);
    }
    if s.rlimits.iter().any(|l| *l < -1) {
        return Err(SchedError::BadArgument(
            "Bad argument: a resource limit is negative".into(),
        ));
    }
    for (i, name) in [
        (basalt_core::rlimit::RUN, "RUNLIMIT"),
        (basalt_core::rlimit::CPU, "CPULIMIT"),
    ] {
        if s.rlimits.get(i).is_some_and(|l| *l > MAX_TIME_LIMIT) {
            return Err(SchedError::BadArgument(format!(
                "Bad argument: {name} value is too big (at most {MAX_TIME_LIMIT} seconds)"
            )));
        }
    }
    if s.umask > 0o7777 {
        return Err(SchedError::BadArgument("Bad argument: umask".into()));
    }
    Ok(())
}

/// Check a submission token a user sent: at most [`MAX_SUBMIT_TOKEN`] bytes, no control
/// character, and not of the form of a forwarded job's ([`crate::mc::MC_TOKEN_PREFIX`]).
pub fn check_submit_token(token: &str) -> Result<(), SchedError> {
    if token.len() > MAX_SUBMIT_TOKEN {
        return Err(SchedError::BadArgument(format!(
            "Bad argument: the submission token is longer than {MAX_SUBMIT_TOKEN} characters"
        )));
    }
    if token.chars().any(char::is_control) {
        return Err(SchedError::BadArgument(
            "Bad argument: the submission token contains a control character".into(),
        ));
    }
    if token.starts_with(crate::mc::MC_TOKEN_PREFIX) {
        return Err(SchedError::BadArgument(format!(
            "Bad argument: submission tokens starting with {} are reserved for MultiCluster \
             forwarding",
            crate::mc::MC_TOKEN_PREFIX
        )));
    }
    Ok(())
}

/// Check the job's environment (`NAME=value` strings): each entry and the whole must fit
/// in what the kernel lets a program start with, or every command the job runs fails.
pub fn check_env(env: &[String]) -> Result<(), SchedError> {
    let mut total = 0usize;
    for kv in env {
        let name = kv.split('=').next().unwrap_or(kv);
        if kv.len() > MAX_ENV_ENTRY {
            return Err(SchedError::BadArgument(format!(
                "Bad argument: environment variable {} is longer than {MAX_ENV_ENTRY} characters",
                basalt_core::bounds::truncate(name, 64)
            )));
        }
        no_nul("an environment variable", kv)?;
        total += kv.len() + 1;
        if total > MAX_ENV_TOTAL {
            return Err(SchedError::BadArgument(format!(
                "Bad argument: the job environment is larger than {MAX_ENV_TOTAL} bytes"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Submission {
        Submission {
            command: "true".into(),
            num_processors: 1,
            max_processors: 1,
            rlimits: [-1; 11].into(),
            ..Default::default()
        }
    }

    fn refused(f: impl FnOnce(&mut Submission)) -> String {
        let mut s = ok();
        f(&mut s);
        match check_submission(&s) {
            Err(e) => match e {
                SchedError::BadArgument(m) => m,
                e => e.to_string(),
            },
            Ok(()) => panic!("accepted: {s:?}"),
        }
    }

    #[test]
    fn an_over_long_or_over_deep_value_is_refused_with_lsfs_message() {
        assert!(check_submission(&ok()).is_ok());
        assert_eq!(
            refused(|s| s.job_name = "j".repeat(MAX_JOB_NAME + 1).into()),
            "Bad job name"
        );
        assert_eq!(refused(|s| s.job_name = "a\nb".into()), "Bad job name");
        assert_eq!(
            refused(|s| s.depend_cond =
                format!("{}done(1){}", "(".repeat(5000), ")".repeat(5000)).into()),
            "Bad dependency condition syntax"
        );
        assert_eq!(
            refused(|s| s.res_req = "x".repeat(MAX_RES_REQ + 1).into()),
            "Bad resource requirement syntax"
        );
        assert_eq!(
            refused(|s| s.out_file = format!("/tmp/{}", "%J".repeat(MAX_PATH)).into()),
            "Bad argument: the output file name (-o) is longer than 4095 characters"
        );
        assert_eq!(
            refused(|s| s.asked_hosts = vec!["h".repeat(MAX_NAME + 1)]),
            "Bad host name, host group name or cluster name"
        );
        assert_eq!(
            refused(|s| s.asked_hosts = vec!["h".into(); MAX_ASKED_HOSTS + 1]),
            "Bad host name, host group name or cluster name"
        );
        assert_eq!(
            refused(|s| s.num_processors = MAX_PROCESSORS + 1),
            "Too many processors requested"
        );
        assert_eq!(refused(|s| s.begin_time = -5), "Bad time specification");
        assert_eq!(
            refused(|s| {
                s.begin_time = 2000;
                s.term_time = 1000
            }),
            "Start time is later than termination time"
        );
        assert!(refused(|s| s.command = "x".repeat(MAX_COMMAND + 1).into()).contains("longer"));
        assert!(refused(|s| s.command = "a\0b".into()).contains("NUL"));
        assert!(refused(|s| s.project = "p".repeat(MAX_NAME + 1).into()).contains("project"));
        // At the bounds: accepted.
        let mut s = ok();
        s.job_name = "j".repeat(MAX_JOB_NAME).into();
        s.out_file = "o".repeat(MAX_PATH).into();
        s.command = "x".repeat(MAX_COMMAND).into();
        assert!(check_submission(&s).is_ok());
    }

    /// Issue 49 item 11: run and CPU time limits whose seconds do not fit LSF's int are
    /// refused (a hand-made request of `-W 99999999999` once was logged as it came).
    #[test]
    fn issue49_item11_time_limits_fit_lsfs_int() {
        use basalt_core::rlimit::{CPU, RUN};
        let limit = |i: usize, v: i64| {
            let mut l = [-1i64; 11];
            l[i] = v;
            l
        };
        for (i, name) in [(RUN, "RUNLIMIT"), (CPU, "CPULIMIT")] {
            assert_eq!(
                refused(|s| s.rlimits = limit(i, 99_999_999_999 * 60).into()),
                format!("Bad argument: {name} value is too big (at most 2147483647 seconds)")
            );
            assert!(!refused(|s| s.rlimits = limit(i, i64::from(i32::MAX) + 1).into()).is_empty());
            let mut s = ok();
            s.rlimits = limit(i, i64::from(i32::MAX)).into();
            assert!(check_submission(&s).is_ok());
        }
    }

    #[test]
    fn the_environment_must_fit_what_a_program_can_start_with() {
        assert!(check_env(&["A=b".into(), "PATH=/bin".into()]).is_ok());
        let big = format!("BIG={}", "x".repeat(MAX_ENV_ENTRY));
        let e = check_env(&[big]).map_err(|e| match e {
            SchedError::BadArgument(m) => m,
            e => e.to_string(),
        });
        assert_eq!(
            e,
            Err(format!(
                "Bad argument: environment variable BIG is longer than {MAX_ENV_ENTRY} characters"
            ))
        );
        let many: Vec<String> = (0..40)
            .map(|i| format!("V{i}={}", "y".repeat(64 * 1024)))
            .collect();
        assert!(check_env(&many).is_err());
    }
}
