//! `bsub`'s `main`: the job's command (arguments, script file, stdin or `bsub>` prompts),
//! the submitter's environment, the submission RPC with its retry token, exit codes.

use super::*;
use basalt_proto::mbatchd::SubmitReply;
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use basalt_runtime::AuthChannel;

/// Is `path` a readable text file (no NUL byte)? Returns its text.
pub(super) fn read_text_file(path: &str) -> Option<String> {
    let p = std::path::Path::new(path);
    if !p.is_file() {
        return None;
    }
    let bytes = std::fs::read(p).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The submission directory: `$PWD` when it names the current directory (keeps
/// symbolic links as the user sees them), else the resolved current directory.
pub fn submission_cwd() -> String {
    use std::os::unix::fs::MetadataExt;
    let cur = std::env::current_dir().unwrap_or_default();
    if let Ok(pwd) = std::env::var("PWD")
        && pwd.starts_with('/')
        && let (Ok(a), Ok(b)) = (std::fs::metadata(&pwd), std::fs::metadata(&cur))
        && a.dev() == b.dev()
        && a.ino() == b.ino()
    {
        return pwd;
    }
    cur.to_string_lossy().into_owned()
}

pub fn current_umask() -> u32 {
    use nix::sys::stat::{Mode, umask};
    let old = umask(Mode::from_bits_truncate(0o022));
    umask(old);
    old.bits()
}

pub fn home_dir(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.dir.to_string_lossy().into_owned())
        .or_else(|| std::env::var("HOME").ok())
        .unwrap_or_default()
}

/// Read the job from a terminal with `bsub> ` prompts until end of file.
pub(super) fn read_from_terminal() -> String {
    let mut text = String::new();
    let stdin = std::io::stdin();
    loop {
        print!("bsub> ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match stdin.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => text.push_str(&line),
        }
    }
    if !text.is_empty() {
        println!();
    }
    text
}

/// `bsub`.
pub fn main(args: Vec<String>) -> ExitCode {
    let items = match opts::parse(&args, &SPEC, true) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("bsub: {e}");
            eprint!("{USAGE}");
            return crate::fail();
        }
    };
    if let Some(code) = super::super::help_or_version(&items, USAGE) {
        return code;
    }
    let config = match super::super::load_config("bsub") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let unit = limits_unit(&config);
    let cx = ValueCtx {
        unit: &unit,
        resolve_time: resolve_local_time,
        max_user_priority: max_user_priority(&config),
    };
    let mut cmdline = BsubOpts::default();
    let words = match apply_items(items, &mut cmdline, &cx) {
        Ok(w) => w,
        Err(e) if e.starts_with("illegal option") => {
            eprintln!("bsub: {e}");
            eprint!("{USAGE}");
            return crate::fail();
        }
        Err(e) => {
            eprintln!("{}", rejected_line(&e));
            return crate::fail();
        }
    };

    let mut cmd = if words.len() == 1
        && let Some(text) = read_text_file(&words[0])
    {
        JobCommand {
            text,
            is_script: true,
            script_name: Some(words[0].clone()),
        }
    } else if !words.is_empty() {
        JobCommand {
            text: words.join(" "),
            is_script: false,
            script_name: None,
        }
    } else {
        let stdin = std::io::stdin();
        let text = if stdin.is_terminal() {
            read_from_terminal()
        } else {
            let mut buf = Vec::new();
            if let Err(e) = stdin.lock().read_to_end(&mut buf) {
                eprintln!(
                    "{}",
                    rejected_line(&format!("Cannot read the job script from stdin: {e}"))
                );
                return crate::fail();
            }
            String::from_utf8_lossy(&buf).into_owned()
        };
        JobCommand {
            text,
            is_script: true,
            script_name: None,
        }
    };
    let body_empty = cmd
        .text
        .lines()
        .all(|l| l.trim().is_empty() || (cmd.is_script && l.trim_start().starts_with('#')));
    if body_empty {
        eprintln!("bsub: Missing command. Job not submitted.");
        return crate::fail();
    }

    // bsub read the job from stdin when no command was given: the esubs get /dev/null.
    let stdin_free = !words.is_empty();
    let mut merged = if cmd.is_script {
        match script_opts(&cmd.text, &cx) {
            Ok((script, warnings)) => {
                for w in warnings {
                    eprintln!("bsub: {w}");
                }
                cmdline.over(script)
            }
            Err(e) => {
                eprintln!("{}", rejected_line(&e));
                return crate::fail();
            }
        }
    } else {
        cmdline
    };

    let job = match submission_for(&config, &mut merged, &mut cmd, stdin_free) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("{}", rejected_line(&e));
            return crate::fail();
        }
    };
    let wait = merged.wait;
    let interactive = merged.interactive;
    if interactive != 0 {
        let refusal = if wait {
            Some("The -K option cannot be used with an interactive job (-I, -Ip, -Is)")
        } else if merged.job_name.as_deref().is_some_and(|n| n.contains('[')) {
            Some("An interactive job (-I, -Ip, -Is) cannot be a job array")
        } else {
            None
        };
        if let Some(r) = refusal {
            eprintln!("{}", rejected_line(r));
            return crate::fail();
        }
    }
    let token = match chosen_or_new_token() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}", rejected_line(&e));
            return crate::fail();
        }
    };
    let submitting = async move {
        let req = SubmitRequest {
            job: Some(job),
            submit_token: token,
        };
        let (r, client) = match submit_until_answered(&config, req, "bsub").await {
            Ok(x) => x,
            Err(code) => return code,
        };
        println!("{}", submitted_line(r.job_id, &r.queue, r.default_queue));
        if interactive != 0 {
            return run_interactive(&config, client, r.job_id, interactive).await;
        }
        if wait {
            return wait_for_job(&config, client, r.job_id).await;
        }
        ExitCode::SUCCESS
    };
    // An interactive job's standard input is read until the job ends: the runtime
    // does not wait for a read still blocked then.
    if interactive != 0 {
        crate::block_on_leaving_reads(submitting).unwrap_or_else(|code| code)
    } else {
        super::super::run(submitting)
    }
}

/// The submission of the merged options and command from this process (bsub, and
/// libbat's `lsb_submit`): the esubs run and applied, the submitter's directory, home,
/// umask, host and environment, mbatchd's bounds checked. `Err`: why the job is not
/// submitted (LSF's text, without `. Job not submitted.`).
pub fn submission_for(
    config: &basalt_config::Config,
    merged: &mut BsubOpts,
    cmd: &mut JobCommand,
    stdin_free: bool,
) -> Result<JobSubmission, String> {
    let (env_changes, esub_output) =
        run_esubs(config, merged, cmd, stdin_free)?.ok_or_else(|| ABORTED.to_owned())?;
    let who = Submitter {
        cwd: submission_cwd(),
        home: home_dir(nix::unistd::getuid().as_raw()),
        umask: current_umask(),
        from_host: super::super::local_host(config),
        vars: std::env::vars_os()
            .filter(|(k, _)| k != SUBMIT_TOKEN_ENV)
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect(),
    };
    let mut job = build(merged, cmd, &who);
    apply_env(&mut job.env, &env_changes);
    // esub | eexec: what the esubs printed goes to the job's eexec (as text, at most
    // basalt_core::bounds::MAX_ESUB_OUTPUT bytes).
    if esub_output.len() > basalt_core::bounds::MAX_ESUB_OUTPUT {
        return Err(format!(
            "The esub output for eexec is longer than {} bytes",
            basalt_core::bounds::MAX_ESUB_OUTPUT
        ));
    }
    job.esub_output = String::from_utf8_lossy(&esub_output).into_owned();
    check_bounds(&job)?;
    Ok(job)
}

/// Send a submission (bsub, brestart) until mbatchd's answer is known (see
/// [`super::retry`]). The request carries a token, so sending it again after a lost
/// answer (mbatchd died or the master moved) cannot create a second job: mbatchd answers
/// a repeat with the job the first one created. A pending job threshold (MAX_PEND_JOBS)
/// is tried again every SUB_TRY_INTERVAL seconds. `LSB_NTRIES` (tries in all) and
/// `BASALT_CMD_TIMEOUT` (seconds in all), from the environment or lsf.conf, bound the
/// loop; without them it goes on until the answer comes. A refusal, or giving up, prints
/// why and is the command's exit code: 255 when the job does not exist,
/// [`EXIT_MAYBE_SUBMITTED`] when it may.
pub(crate) async fn submit_until_answered(
    config: &basalt_config::Config,
    req: SubmitRequest,
    cmd: &str,
) -> Result<(SubmitReply, MbatchdClient<AuthChannel>), ExitCode> {
    match submit_outcome(config, &req, None).await {
        Outcome::Accepted(x) => Ok(x),
        Outcome::Refused(s) => {
            eprintln!("{}", rejected_line(&super::super::status_text(&s)));
            Err(crate::fail())
        }
        Outcome::Unreachable(why) => {
            eprintln!("{why}");
            Err(crate::fail())
        }
        Outcome::Unknown {
            why,
            tries,
            elapsed,
        } => {
            eprint!(
                "{}",
                maybe_submitted_text(
                    cmd,
                    &why,
                    tries,
                    elapsed,
                    name_hint(req.job.as_ref()).as_deref(),
                    &req.submit_token
                )
            );
            Err(ExitCode::from(EXIT_MAYBE_SUBMITTED))
        }
    }
}

/// [`submit_until_answered`] without the printing of its outcome (libbat's
/// `lsb_submit`): the notes while it waits (a pending job threshold) still go to stderr.
/// `bound`: the time limit when neither `LSB_NTRIES` nor `BASALT_CMD_TIMEOUT` sets one
/// (`None`: none, as bsub).
pub async fn submit_outcome(
    config: &basalt_config::Config,
    req: &SubmitRequest,
    bound: Option<std::time::Duration>,
) -> Outcome<(SubmitReply, MbatchdClient<AuthChannel>)> {
    let mut limits = Limits::from_settings(|k| setting(config, k));
    if limits.tries.is_none() && limits.time.is_none() {
        limits.time = bound;
    }
    let started = std::time::Instant::now();
    submit_loop(
        limits,
        || started.elapsed(),
        tokio::time::sleep,
        |remaining| send_once(config, req.clone(), remaining),
        |line| eprintln!("{line}"),
    )
    .await
}

/// An lsf.conf setting, the environment first.
fn setting(config: &basalt_config::Config, key: &str) -> Option<String> {
    std::env::var(key)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| config.lsf_conf.get(key).map(|v| v.to_string()))
}

/// What `bjobs -J` finds the job by: its -J name, else a one-line command.
fn name_hint(job: Option<&basalt_proto::mbatchd::JobSubmission>) -> Option<String> {
    let job = job?;
    if !job.job_name.is_empty() {
        Some(job.job_name.clone())
    } else if !job.is_script && !job.command.is_empty() && !job.command.contains('\n') {
        Some(job.command.clone())
    } else {
        None
    }
}

/// One try: find mbatchd (the master may have moved), connect and send.
async fn send_once(
    config: &basalt_config::Config,
    req: SubmitRequest,
    remaining: Option<std::time::Duration>,
) -> Attempt<(SubmitReply, MbatchdClient<AuthChannel>)> {
    use std::time::Duration;
    let floor = Duration::from_millis(200);
    let per_try = remaining
        .unwrap_or(Duration::from_secs(3))
        .clamp(floor, Duration::from_secs(3));
    let mut client = match super::super::connect_mbatchd_once(config, per_try).await {
        Ok(c) => c,
        Err(super::super::ConnectTry::Again(e)) => {
            return Attempt::NotSent {
                lim: e == super::super::ConnectError::LsfDown,
                why: e.to_string(),
            };
        }
        Err(super::super::ConnectTry::Final(e)) => return Attempt::Fatal(e.to_string()),
    };
    let mut call = tonic::Request::new(req);
    call.set_timeout(remaining.map_or(CALL_TIMEOUT, |r| r.clamp(floor, CALL_TIMEOUT)));
    match client.submit(call).await {
        Ok(r) => Attempt::Answered((r.into_inner(), client)),
        Err(s) => Attempt::Failed(s),
    }
}

/// Run the submission's esubs, if any (`LSF_SERVERDIR/esub`, `LSB_ESUB_METHOD`, `-a`),
/// and apply what they wrote to `LSB_SUB_MODIFY_FILE` to the options and the command.
/// What the esubs left for the job: `LSB_SUB_MODIFY_ENVFILE` assignments and their
/// standard output.
pub type EsubOutcome = (Vec<Assignment>, Vec<u8>);

/// `Ok(None)`: an esub refused the job; `Ok(Some((vars, out)))`: the
/// `LSB_SUB_MODIFY_ENVFILE` assignments for the job's environment and what the esubs
/// wrote to their standard output (for the job's eexec).
pub fn run_esubs(
    config: &basalt_config::Config,
    o: &mut BsubOpts,
    cmd: &mut JobCommand,
    keep_stdin: bool,
) -> Result<Option<EsubOutcome>, String> {
    let method = esub_method(config);
    let esubs = plan(
        &config.serverdir(),
        method.as_deref(),
        o.esub_apps.as_deref(),
    )?;
    if esubs.is_empty() {
        return Ok(Some((Vec::new(), Vec::new())));
    }
    let parm = parm_file(o, cmd, with_command_line(config));
    match run(&esubs, &parm, o.esub_apps.as_deref(), keep_stdin)? {
        Verdict::Aborted => Ok(None),
        Verdict::Accepted {
            modify,
            env,
            stdout,
        } => {
            for w in apply_modify(o, cmd, &modify)? {
                eprintln!("bsub: {w}");
            }
            Ok(Some((env, stdout)))
        }
    }
}

/// The submission's token: the caller's ([`SUBMIT_TOKEN_ENV`]) or a new one.
pub fn chosen_or_new_token() -> Result<String, String> {
    match token_from_env(std::env::var(SUBMIT_TOKEN_ENV).ok())? {
        Some(t) => Ok(t),
        None => submit_token(),
    }
}

/// A new token for one submission: 128 bits from the system's random source, as 32 hex
/// digits — unguessable, so that nobody can send a request that mbatchd would take for
/// a resend of this one (and mbatchd looks tokens up under the submitting user anyway).
/// `Err` when the system gives no random bytes.
pub fn submit_token() -> Result<String, String> {
    let mut rnd = [0u8; 16];
    getrandom::fill(&mut rnd).map_err(|e| format!("Cannot make a submission token: {e}"))?;
    Ok(rnd.iter().map(|b| format!("{b:02x}")).collect())
}
