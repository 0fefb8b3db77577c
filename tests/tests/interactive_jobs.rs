//! Interactive batch jobs on a 3-host loopback cluster (issue 21, seed 001 "Interactive
//! Batch Job Support"): `bsub -I` schedules the job like any other, then connects its
//! standard streams to bsub through the execution host's RES (stdin piped in, stdout
//! and stderr apart, the exit code returned); `bsub -Ip` runs it under a pseudo-terminal
//! of the terminal's size (a pty of the test's); `bkill` ends the job and bsub with it;
//! bsub killed takes its job with it; queues accept interactive jobs, batch jobs or
//! both (INTERACTIVE). The daemons run in the test process (`InProcessBatch`); bsub,
//! bkill and bjobs are the real binaries.

use anyhow::{Result, anyhow};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for, work_dir};
use std::io::{BufRead, Write};
use std::process::{Child, Stdio};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(30);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The job id of bsub's `Job <N> is submitted ...` line.
fn job_id(line: &str) -> Result<u64> {
    basalt_testkit::jobs::job_id(line).ok_or_else(|| anyhow!("no job id in {line:?}"))
}

/// `bsub` started with `args` (no input, its error output dropped) once it has said
/// `Job <N> is submitted`: the process, the job id and the rest of its output.
fn submitted(
    c: &InProcessBatch,
    cwd: &std::path::Path,
    args: &[&str],
) -> Result<(Child, u64, std::io::BufReader<std::process::ChildStdout>)> {
    let mut child = c
        .command("bsub")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let out = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
    let mut reader = std::io::BufReader::new(out);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    Ok((child, job_id(&line)?, reader))
}

/// Wait until `bjobs` shows job `id` in `state`.
fn wait_state(c: &InProcessBatch, id: u64, state: &str) -> Result<()> {
    wait_for(&format!("job {id} to be {state}"), LONG, || {
        let out = c
            .stdout_ok("bjobs", &["-a", &id.to_string()])
            .unwrap_or_default();
        let st = out
            .lines()
            .nth(1)
            .and_then(|l| l.split_whitespace().nth(2))
            .unwrap_or("")
            .to_owned();
        ((st == state).then_some(()), out)
    })
}

/// Wait for `child` to exit (bounded).
fn wait_exit(child: &mut Child) -> Result<std::process::ExitStatus> {
    wait_for("bsub to exit", LONG, || match child.try_wait() {
        Ok(Some(s)) => (Some(s), String::new()),
        other => (None, format!("{other:?}")),
    })
}

#[test]
fn bsub_i_connects_an_interactive_job_to_the_terminal_and_returns_its_exit_code() -> Result<()> {
    let c = InProcessBatch::start("interactive", &ClusterSpec::new(3), "")?;
    let work = work_dir(c.dir.path())?;

    // -I: stdin piped in, the job's output on stdout, the exit code returned; bsub's
    // own lines on stderr.
    let mut child = c
        .command("bsub")
        .args(["-I", "-m", "hostB", "tr", "a-z", "A-Z"])
        .current_dir(&work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(b"hello\ninteractive\n")?;
    }
    let o = child.wait_with_output()?;
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let mut lines = out.lines();
    let id = job_id(lines.next().unwrap_or(""))?;
    assert_eq!(lines.collect::<Vec<_>>(), ["HELLO", "INTERACTIVE"], "{out}");
    assert!(err.contains("<<Waiting for dispatch ...>>\n"), "{err}");
    assert!(err.contains("<<Starting on hostB>>\n"), "{err}");
    // bjobs -l says what kind of job it was; it is on record like any job.
    let long = c
        .stdout_ok("bjobs", &["-l", &id.to_string()])
        .unwrap_or_default();
    assert!(
        long.replace("\n                     ", "")
            .contains("Interactive mode,"),
        "{long}"
    );

    // The exit code, standard error apart, and the job's environment.
    let o = c
        .command("bsub")
        .args([
            "-I",
            "-m",
            "hostC",
            "sh -c 'echo out; echo \"err $LSB_INTERACTIVE\" >&2; test -t 1 || echo no-tty; exit 7'",
        ])
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()?;
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(7), "{out}{err}");
    assert!(out.ends_with("\nout\nno-tty\n"), "{out}");
    assert!(err.contains("err Y\n"), "{err}");
    assert!(err.contains("<<Starting on hostC>>"), "{err}");

    // -Ip: under a pseudo-terminal of this terminal's size (set when bsub attaches,
    // before what is typed reaches it).
    let (mut master, slave) = basalt_testkit::jobs::test_pty(33, 101)?;
    let mut child = c
        .command("bsub")
        .args([
            "-Ip",
            "-m",
            "hostB",
            "sh -c 'test -t 0 && test -t 1 && echo is-a-tty; read x; stty size; echo got-$x'",
        ])
        .current_dir(&work)
        .stdin(slave.try_clone()?)
        .stdout(slave.try_clone()?)
        .stderr(slave)
        .spawn()?;
    master.write_all(b"typed\r")?;
    let status = wait_exit(&mut child)?;
    let seen = basalt_testkit::jobs::read_pty(master);
    assert_eq!(status.code(), Some(0), "{seen}");
    assert!(seen.contains("is-a-tty"), "{seen:?}");
    assert!(seen.contains("33 101"), "{seen:?}");
    assert!(seen.contains("got-typed"), "{seen:?}");
    let id = job_id(&seen)?;
    let long = c
        .stdout_ok("bjobs", &["-l", &id.to_string()])
        .unwrap_or_default();
    assert!(
        long.replace("\n                     ", "")
            .contains("Interactive pseudo-terminal mode,"),
        "{long}"
    );

    // bkill ends the job, and bsub with it (the job's exit code: killed by SIGINT).
    let (mut child, id, _out) = submitted(&c, &work, &["-I", "-m", "hostC", "sleep 600"])?;
    wait_state(&c, id, "RUN")?;
    c.ok("bkill", &[&id.to_string()])?;
    let status = wait_exit(&mut child)?;
    assert!(status.code().is_some_and(|c| c > 128), "{status:?}");
    wait_state(&c, id, "EXIT")?;

    // bsub going away takes its job with it.
    let (mut child, id, mut out) = submitted(
        &c,
        &work,
        &["-I", "-m", "hostB", "echo attached; exec sleep 600"],
    )?;
    // Its output came: bsub is attached (the job's streams are RES's) before it goes.
    let mut line = String::new();
    out.read_line(&mut line)?;
    assert_eq!(line, "attached\n");
    child.kill()?;
    let _ = child.wait();
    wait_state(&c, id, "EXIT")?;

    // A job whose bsub went away before it started: bkill ends it at once (its end is
    // not held for an attach that will not come).
    let (mut child, id, _out) = submitted(&c, &work, &["-I", "-H", "-m", "hostC", "sleep 600"])?;
    child.kill()?;
    let _ = child.wait();
    c.ok("bresume", &[&id.to_string()])?;
    wait_state(&c, id, "RUN")?;
    c.ok("bkill", &[&id.to_string()])?;
    wait_state(&c, id, "EXIT")?;

    // INTERACTIVE = NO / ONLY in lsb.queues.
    c.add_queues(
        "\nBegin Queue\nQUEUE_NAME = batchonly\nPRIORITY = 20\nINTERACTIVE = NO\nEnd Queue\n\
         \nBegin Queue\nQUEUE_NAME = ionly\nPRIORITY = 20\nINTERACTIVE = ONLY\nEnd Queue\n\
         \nBegin Queue\nQUEUE_NAME = again\nPRIORITY = 20\nREQUEUE_EXIT_VALUES = 3\nEnd Queue\n",
    )?;
    refused(
        &c,
        &["-I", "-q", "batchonly", "true"],
        "Queue does not accept interactive jobs. Job not submitted.",
    )?;
    refused(
        &c,
        &["-q", "ionly", "true"],
        "Queue only accepts interactive jobs. Job not submitted.",
    )?;
    let o = c
        .command("bsub")
        .args(["-I", "-q", "ionly", "echo", "only-here"])
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).ends_with("only-here\n"));
    // A job requeued by its exit value runs again, and bsub attaches to that run too.
    let o = c
        .command("bsub")
        .args([
            "-I",
            "-q",
            "again",
            "if [ -e marker ]; then echo second; exit 0; fi; touch marker; echo first; exit 3",
        ])
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()?;
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(out.ends_with("\nfirst\nsecond\n"), "{out}");

    // -I with -K is refused.
    refused(&c, &["-I", "-K", "true"], "Job not submitted.")?;
    Ok(())
}

/// `bsub args` is refused: exit 255, `message` on its standard error.
fn refused(c: &InProcessBatch, args: &[&str], message: &str) -> Result<()> {
    let o = c.command("bsub").args(args).stdin(Stdio::null()).output()?;
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(255), "{err}");
    assert!(err.contains(message), "{err}");
    Ok(())
}
