//! RES on a 3-host loopback cluster (issue 21): `lsrun` runs a task on the host it is
//! asked for (or the best one) through that host's RES (`-P`: under a pseudo-terminal,
//! driven here from a pty of the test's), `lsgrun` on each host (in turn or with `-p`
//! at once), `lsrcp` copies files both ways with their permissions (and `bsub -f` with
//! it), `blaunch` starts a job's tasks on its hosts and they end with it, with the
//! task's output, exit code and death by signal coming back, standard input piped in,
//! signals forwarded, LSF's messages for an unknown host and a command that does not
//! exist, the task gone when the client is killed, a task of a second user running
//! with that user's uid, a task going on through a restart of its RES (served by the
//! old RES's worker), and a worker stopped or retiring when idle. The daemons run in
//! the test process (`InProcessBatch`) with the built `res` as their worker; `lsrun`
//! is the real binary.

use anyhow::{Context as _, Result, bail};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, is_root, skip, wait_for, work_dir};
use std::io::{BufRead as _, Read as _, Write as _};
use std::process::{Output, Stdio};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(30);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The pids of the RES workers (`res --worker`) of `host` in the cluster of `envdir`
/// running now.
fn workers(envdir: &std::path::Path, host: &str) -> Vec<i32> {
    let needle = format!("LSF_ENVDIR={}", envdir.display());
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let environ = std::fs::read(e.path().join("environ")).unwrap_or_default();
            let live = !std::fs::read_to_string(e.path().join("stat"))
                .unwrap_or_default()
                .contains(") Z ");
            args.contains(&&b"--worker"[..])
                && args.windows(2).any(|w| w == [&b"-H"[..], host.as_bytes()])
                && environ.split(|b| *b == 0).any(|v| v == needle.as_bytes())
                && live
        })
        .filter_map(|e| e.file_name().to_str().and_then(|p| p.parse().ok()))
        .collect()
}

/// `lsrun -m host sh -c script` started, once the task has printed its first line,
/// "ready": the client and the rest of its output.
fn ready_task(
    c: &InProcessBatch,
    cwd: &std::path::Path,
    host: &str,
    script: &str,
    stdin: Stdio,
) -> Result<(
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
)> {
    let mut child = c
        .command("lsrun")
        .args(["-m", host, "sh", "-c", script])
        .current_dir(cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .spawn()?;
    let mut out = std::io::BufReader::new(child.stdout.take().context("stdout")?);
    let mut line = String::new();
    out.read_line(&mut line)?;
    if line != "ready\n" {
        bail!("the task on {host} said {line:?} first");
    }
    Ok((child, out))
}

/// A `Run` of `true` on the RES of `host`, sent from hostA's address with the credential
/// `cred` as it is (not a fresh one): the task's wait status, or the refusal.
fn run_with_credential(
    c: &InProcessBatch,
    host: &str,
    cred: &[u8],
) -> Result<std::result::Result<Option<i32>, tonic::Status>> {
    use basalt_proto::res::{TaskInput, TaskStart, res_client::ResClient, task_input, task_output};
    let config = basalt_config::load(&c.envdir)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .config;
    let addr = basalt_runtime::res_addr(&config, host)?;
    let local = basalt_runtime::host_addr(&config, "hostA")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let ch = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
            .local_address(Some(local))
            .timeout(LONG)
            .connect()
            .await?;
        let start = TaskInput {
            what: Some(task_input::What::Start(TaskStart {
                argv: vec!["true".into()],
                env: vec!["PATH=/usr/bin:/bin".into()],
                cwd: "/tmp".into(),
                umask: 0o22,
                ..Default::default()
            })),
        };
        let eof = TaskInput {
            what: Some(task_input::What::StdinEof(true)),
        };
        let mut req = tonic::Request::new(tokio_stream::iter(vec![start, eof]));
        req.metadata_mut().insert_bin(
            basalt_auth::CRED_METADATA,
            tonic::metadata::BinaryMetadataValue::from_bytes(cred),
        );
        if let Ok(v) = basalt_proto::protocol_text().parse() {
            req.metadata_mut()
                .insert(basalt_proto::PROTOCOL_METADATA, v);
        }
        let mut out = match ResClient::new(ch).run(req).await {
            Ok(r) => r.into_inner(),
            Err(s) => return Ok(Err(s)),
        };
        let mut status = None;
        loop {
            match out.message().await {
                Ok(Some(m)) => {
                    if let Some(task_output::What::Exited(x)) = m.what {
                        status = Some(x);
                    }
                }
                Ok(None) => break,
                Err(s) => return Ok(Err(s)),
            }
        }
        Ok(Ok(status))
    })
}

/// `bsub <opts> -R span[ptile=1] -o <out> <script>`: a job of a slot a host, which finds
/// blaunch on its PATH (the cluster's commands, as LSF_BINDIR on the submitter's PATH).
fn spread_job(
    c: &InProcessBatch,
    cwd: &std::path::Path,
    opts: &[&str],
    out: &str,
    script: &str,
) -> Result<Output> {
    Ok(c.command("bsub")
        .env("PATH", c.path_with_commands())
        .current_dir(cwd)
        .args(opts)
        .args(["-R", "span[ptile=1]", "-o", out, script])
        .output()?)
}

/// The temporary files of copies in `dir` (`.lsrcp.*`): (name, size).
fn lsrcp_temporaries(dir: &std::path::Path) -> Vec<(String, u64)> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(".lsrcp."))
                .map(|e| {
                    let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                    (e.file_name().to_string_lossy().into_owned(), len)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Issue 49, item 9: a failed `lsrcp` leaves an existing target as it was — a remote
/// source that does not exist copied to a local file and to a remote one, and a copy to
/// a remote file whose `lsrcp` is killed halfway (its source a FIFO the test writes half
/// a copy into) — and leaves no temporary file behind.
fn lsrcp_failures_leave_the_target(c: &InProcessBatch, work: &std::path::Path) -> Result<()> {
    const KEPT: &str = "data that must stay\n";
    let kept = work.join("kept.txt");
    std::fs::write(&kept, KEPT)?;
    let missing = format!("hostB:{}/nothing-here", work.display());
    for to in [
        kept.display().to_string(),
        format!("hostC:{}", kept.display()),
    ] {
        let o = c
            .command("lsrcp")
            .args([&missing, &to])
            .current_dir(work)
            .output()?;
        assert_eq!(o.status.code(), Some(255), "{missing} -> {to}");
        assert_eq!(
            std::fs::read_to_string(&kept)?,
            KEPT,
            "the failed copy {missing} -> {to} changed the target"
        );
    }

    let fifo = work.join("half.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU)?;
    let mut lsrcp = c
        .command("lsrcp")
        .args([
            fifo.display().to_string(),
            format!("hostB:{}", kept.display()),
        ])
        .current_dir(work)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    // Opened once lsrcp opens it to read.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo)?;
    writer.write_all(b"half a copy\n")?;
    wait_for(
        "the remote side of the copy to have its first bytes",
        LONG,
        || {
            let now = std::fs::read_to_string(&kept).unwrap_or_default();
            let tmp = lsrcp_temporaries(work);
            (
                (now != KEPT || tmp.iter().any(|(_, n)| *n > 0)).then_some(()),
                format!("target {now:?}, temporary files {tmp:?}"),
            )
        },
    )?;
    lsrcp.kill()?;
    lsrcp.wait()?;
    drop(writer);
    // RES ends the task of the client gone; the copy's temporary file goes with it.
    wait_for("the killed copy's temporary file to go", LONG, || {
        let tmp = lsrcp_temporaries(work);
        (tmp.is_empty().then_some(()), format!("{tmp:?}"))
    })?;
    assert_eq!(
        std::fs::read_to_string(&kept)?,
        KEPT,
        "the copy killed halfway changed the target"
    );
    std::fs::remove_file(&fifo)?;
    Ok(())
}

fn lsrun(c: &InProcessBatch, cwd: &std::path::Path, args: &[&str]) -> Result<Output> {
    Ok(c.command("lsrun")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()?)
}

#[test]
fn lsrun_runs_tasks_through_res_with_their_streams_status_and_signals() -> Result<()> {
    let mut c = InProcessBatch::start("res-lsrun", &ClusterSpec::new(3), "")?;
    let work = work_dir(c.dir.path())?;

    // Output, the host it ran on (-v), the working directory.
    let o = lsrun(
        &c,
        &work,
        &["-v", "-m", "hostB", "sh", "-c", "pwd; echo to-err >&2"],
    )?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), format!("{}\n", work.display()));
    let err = text(&o.stderr);
    assert!(err.contains("<<Execute sh on remote host hostB>>"), "{err}");
    assert!(err.contains("to-err\n"), "{err}");

    // The exit code, and death by a signal (128 + it).
    let o = lsrun(&c, &work, &["-m", "hostC", "sh", "-c", "exit 3"])?;
    assert_eq!(o.status.code(), Some(3));
    let o = lsrun(&c, &work, &["-m", "hostC", "sh", "-c", "kill -TERM $$"])?;
    assert_eq!(o.status.code(), Some(128 + 15));

    // Standard input piped in.
    let mut child = c
        .command("lsrun")
        .args(["-m", "hostB", "tr", "a-z", "A-Z"])
        .current_dir(&work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(b"piped in\n")?;
    }
    let o = child.wait_with_output()?;
    assert_eq!(text(&o.stdout), "PIPED IN\n");

    // Without -m: the best host of the local host's type.
    let o = lsrun(&c, &work, &["true"])?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    // -P: under a pseudo-terminal there, of this terminal's size (a pty of the test's).
    let (master, slave) = basalt_testkit::jobs::test_pty(30, 100)?;
    let mut child = c
        .command("lsrun")
        .args([
            "-P",
            "-m",
            "hostB",
            "sh",
            "-c",
            "test -t 0 && test -t 1 && echo is-a-tty; stty size",
        ])
        .current_dir(&work)
        .stdin(slave.try_clone()?)
        .stdout(slave.try_clone()?)
        .stderr(slave)
        .spawn()?;
    let status = child.wait()?;
    let seen = basalt_testkit::jobs::read_pty(master);
    assert_eq!(status.code(), Some(0), "{seen}");
    assert!(seen.contains("is-a-tty"), "{seen:?}");
    assert!(seen.contains("30 100"), "{seen:?}");
    // Without -P the task's streams are no terminal.
    let o = lsrun(
        &c,
        &work,
        &["-m", "hostB", "sh", "-c", "test -t 1 || echo not-a-tty"],
    )?;
    assert_eq!(text(&o.stdout), "not-a-tty\n");

    // lsplace: where lsrun would go; -n 0 every eligible host.
    let o = c.command("lsplace").args(["-n", "0"]).output()?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut placed: Vec<String> = text(&o.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    placed.sort();
    assert_eq!(placed, vec!["hostA", "hostB", "hostC"]);
    let o = c.command("lsplace").args(["hostC"]).output()?;
    assert_eq!(text(&o.stdout), "hostC\n");
    let o = c
        .command("lsplace")
        .args(["-R", "select[mem>100000000]"])
        .output()?;
    assert_eq!(o.status.code(), Some(255));
    assert!(text(&o.stderr).contains("Not enough host(s) currently eligible"));

    // LSF's messages, exit 255.
    let o = lsrun(&c, &work, &["-m", "nosuch", "true"])?;
    assert_eq!(o.status.code(), Some(255));
    assert!(
        text(&o.stderr).contains("Unknown host <nosuch>"),
        "{}",
        text(&o.stderr)
    );
    let o = lsrun(&c, &work, &["-m", "hostB", "no-such-command-here"])?;
    assert_eq!(o.status.code(), Some(255));
    assert!(
        text(&o.stderr).contains("no-such-command-here: Command not found"),
        "{}",
        text(&o.stderr)
    );

    // A signal to lsrun goes to the task.
    let ready = work.join("ready");
    let script = format!(
        "trap 'echo got USR1; exit 7' USR1; touch {}; while :; do sleep 0.1; done",
        ready.display()
    );
    let child = c
        .command("lsrun")
        .args(["-m", "hostC", "sh", "-c", &script])
        .current_dir(&work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()?;
    wait_for("the task to be ready", LONG, || {
        (ready.exists().then_some(()), String::new())
    })?;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGUSR1,
    )?;
    let o = child.wait_with_output()?;
    assert_eq!(o.status.code(), Some(7));
    assert_eq!(text(&o.stdout), "got USR1\n");

    // The client killed: its task goes too.
    let pid_file = work.join("task.pid");
    let script = format!("echo $$ > {}; exec sleep 600", pid_file.display());
    let mut child = c
        .command("lsrun")
        .args(["-m", "hostB", "sh", "-c", &script])
        .current_dir(&work)
        .stdin(Stdio::null())
        .spawn()?;
    let pid = wait_for("the task's pid", LONG, || {
        let p = std::fs::read_to_string(&pid_file).unwrap_or_default();
        (p.trim().parse::<i32>().ok(), p)
    })?;
    child.kill()?;
    let _ = child.wait();
    wait_for("the task to be killed with its client", LONG, || {
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        ((!alive).then_some(()), format!("pid {pid} alive"))
    })?;

    // A RES restarted (`systemctl restart basalt-res`): the task it runs goes on, its
    // streams both ways and its status coming back, served by the old RES's worker
    // until it ends, while the new RES (and a worker of its own) serves new tasks.
    let (mut child, mut out) = ready_task(
        &c,
        &work,
        "hostB",
        "echo ready; read x; echo got-$x; exit 7",
        Stdio::piped(),
    )?;
    let old = workers(&c.envdir, "hostB");
    assert_eq!(old.len(), 1, "{old:?}");
    c.restart_res("hostB", None)?;
    let o = lsrun(&c, &work, &["-m", "hostB", "echo", "new-res"])?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "new-res\n");
    let both = workers(&c.envdir, "hostB");
    assert!(both.len() == 2 && both.contains(&old[0]), "{both:?}");
    let mut stdin = child.stdin.take().context("stdin")?;
    stdin.write_all(b"after-restart\n")?;
    drop(stdin);
    let status = basalt_testkit::wait_child(&mut child, LONG)?;
    let mut rest = String::new();
    out.read_to_string(&mut rest)?;
    assert_eq!(status.and_then(|s| s.code()), Some(7), "{rest}");
    assert_eq!(rest, "got-after-restart\n");
    wait_for(
        "the old RES's worker to end with its last task",
        LONG,
        || {
            let now = workers(&c.envdir, "hostB");
            (
                (!now.contains(&old[0]) && now.len() == 1).then_some(()),
                format!("{now:?}"),
            )
        },
    )?;

    // A worker stopped (SIGTERM) ends its tasks, whose status still reaches their
    // client; the RES starts another at its next connection.
    let (mut child, _out) = ready_task(
        &c,
        &work,
        "hostC",
        "echo ready; exec sleep 600",
        Stdio::null(),
    )?;
    let worker = match workers(&c.envdir, "hostC")[..] {
        [pid] => pid,
        ref other => bail!("expected one RES worker on hostC, found {other:?}"),
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(worker),
        nix::sys::signal::Signal::SIGTERM,
    )?;
    let status = basalt_testkit::wait_child(&mut child, LONG)?;
    assert_eq!(status.and_then(|s| s.code()), Some(128 + 15));
    wait_for("the stopped worker to end", LONG, || {
        let now = workers(&c.envdir, "hostC");
        ((!now.contains(&worker)).then_some(()), format!("{now:?}"))
    })?;
    let o = lsrun(&c, &work, &["-m", "hostC", "echo", "next-worker"])?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "next-worker\n");

    // A worker with nothing to serve retires; the RES starts another at its next
    // connection (the handover to the retired one fails, and is made again).
    c.restart_res("hostC", Some(Duration::from_millis(300)))?;
    let o = lsrun(&c, &work, &["-m", "hostC", "echo", "first"])?;
    assert_eq!(text(&o.stdout), "first\n", "{}", text(&o.stderr));
    let first = workers(&c.envdir, "hostC");
    assert_eq!(first.len(), 1, "{first:?}");
    wait_for("the idle worker to retire", LONG, || {
        let now = workers(&c.envdir, "hostC");
        (now.is_empty().then_some(()), format!("{now:?}"))
    })?;
    let o = lsrun(&c, &work, &["-m", "hostC", "echo", "second"])?;
    assert_eq!(text(&o.stdout), "second\n", "{}", text(&o.stderr));
    let second = workers(&c.envdir, "hostC");
    assert!(
        second.len() == 1 && second != first,
        "{second:?} after {first:?}"
    );

    // Issue 49, item 2: a credential the retired worker accepted is refused by the one
    // after it (the worker that kept its replay cache in memory only took it again).
    let config = basalt_config::load(&c.envdir)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .config;
    let cred = basalt_runtime::user_auth(&config)
        .towards("hostC")
        .credential_for("/basalt.res.v1.Res/Run", None)?
        .1;
    let ran = run_with_credential(&c, "hostC", &cred)?;
    assert!(matches!(ran, Ok(Some(0))), "a fresh credential: {ran:?}");
    let used = workers(&c.envdir, "hostC");
    let again = run_with_credential(&c, "hostC", &cred)?;
    assert!(
        matches!(&again, Err(s) if s.code() == tonic::Code::PermissionDenied),
        "replayed to the same worker: {again:?}"
    );
    wait_for("the worker that took it to retire", LONG, || {
        let now = workers(&c.envdir, "hostC");
        (
            (!now.iter().any(|p| used.contains(p))).then_some(()),
            format!("{now:?}"),
        )
    })?;
    let after = run_with_credential(&c, "hostC", &cred)?;
    assert!(
        matches!(&after, Err(s) if s.code() == tonic::Code::PermissionDenied),
        "replayed to the next worker: {after:?}"
    );

    // lsgrun: every host in turn; -p all at once; a failing host's exit code.
    let o = c
        .command("lsgrun")
        .args(["-v", "-m", "hostA hostB hostC", "sh", "-c", "echo ran"])
        .current_dir(&work)
        .output()?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "ran\nran\nran\n");
    let err = text(&o.stderr);
    for h in ["hostA", "hostB", "hostC"] {
        assert!(
            err.contains(&format!("<<Execute sh on remote host {h}>>")),
            "{err}"
        );
    }
    let marks = work.join("marks");
    std::fs::create_dir_all(&marks)?;
    let o = c
        .command("lsgrun")
        .args(["-p", "sh", "-c", &format!("touch {}/$$", marks.display())])
        .current_dir(&work)
        .output()?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_dir(&marks)?.count(),
        3,
        "a task on each of the 3 hosts"
    );
    let hosts_file = work.join("hosts");
    std::fs::write(&hosts_file, "hostB # the second\nhostC\n")?;
    let o = c
        .command("lsgrun")
        .args(["-f", &hosts_file.to_string_lossy(), "sh", "-c", "exit 5"])
        .current_dir(&work)
        .output()?;
    assert_eq!(o.status.code(), Some(5));

    // lsrcp both ways (and remote to remote), permissions kept, -a appends, errors.
    use std::os::unix::fs::PermissionsExt;
    let src = work.join("src.sh");
    std::fs::write(&src, "#!/bin/sh\necho copied\n")?;
    std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o750))?;
    let remote = work.join("remote.sh");
    let back = work.join("back.sh");
    let via = work.join("via.sh");
    for (from, to) in [
        (
            src.display().to_string(),
            format!("hostB:{}", remote.display()),
        ),
        (
            format!("hostB:{}", remote.display()),
            format!("hostC:{}", via.display()),
        ),
        (
            format!("hostC:{}", via.display()),
            back.display().to_string(),
        ),
    ] {
        let o = c
            .command("lsrcp")
            .args([&from, &to])
            .current_dir(&work)
            .output()?;
        assert_eq!(
            o.status.code(),
            Some(0),
            "{from} -> {to}: {}",
            text(&o.stderr)
        );
    }
    for f in [&remote, &via, &back] {
        assert_eq!(std::fs::read_to_string(f)?, "#!/bin/sh\necho copied\n");
        assert_eq!(
            std::fs::metadata(f)?.permissions().mode() & 0o777,
            0o750,
            "{f:?}"
        );
    }
    let o = c
        .command("lsrcp")
        .args([
            "-a",
            &src.display().to_string(),
            &format!("hostB:{}", back.display()),
        ])
        .current_dir(&work)
        .output()?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&back)?.matches("copied").count(), 2);
    let o = c
        .command("lsrcp")
        .args([&format!("hostB:{}/nothing-here", work.display()), "x"])
        .current_dir(&work)
        .output()?;
    assert_eq!(o.status.code(), Some(255));
    assert!(
        text(&o.stderr).contains("nothing-here: No such file or directory"),
        "{}",
        text(&o.stderr)
    );
    lsrcp_failures_leave_the_target(&c, &work)?;

    // bsub -f: the submission host's file to the job's directory before it runs, its
    // result back after it (lsrcp through the submission host's RES).
    let job_dir = work.join("job-dir");
    std::fs::create_dir_all(&job_dir)?;
    std::fs::write(work.join("in.txt"), "to upper\n")?;
    let o = c
        .command("bsub")
        .env("BASALT_HOST", "hostA")
        .current_dir(&work)
        .args([
            "-K",
            "-cwd",
            &job_dir.to_string_lossy(),
            "-o",
            &work.join("f-job.out").to_string_lossy(),
            "-f",
            "in.txt > in.txt",
            "-f",
            "out.txt < out.txt",
            "tr a-z A-Z < in.txt > out.txt",
        ])
        .output()?;
    let job_out = std::fs::read_to_string(work.join("f-job.out")).unwrap_or_default();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}{job_out}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(job_dir.join("in.txt"))?,
        "to upper\n"
    );
    assert_eq!(std::fs::read_to_string(work.join("out.txt"))?, "TO UPPER\n");

    // blaunch inside a job on three hosts: a task per slot; then tasks killed with the
    // job by bkill. (Jobs find it in LSF_BINDIR, on the submitter's PATH.)
    let out = work.join("blaunch.out");
    let o = spread_job(
        &c,
        &work,
        &["-K", "-n", "3"],
        &out.to_string_lossy(),
        "blaunch sh -c 'echo task' && blaunch -z \"$(echo $LSB_HOSTS | cut -d' ' -f2)\" echo one",
    )?;
    let job_out = std::fs::read_to_string(&out).unwrap_or_default();
    assert_eq!(o.status.code(), Some(0), "{}{job_out}", text(&o.stderr));
    let lines = |want: &str| job_out.lines().filter(|l| *l == want).count();
    assert_eq!(lines("task"), 3, "{job_out}");
    assert_eq!(lines("one"), 1, "{job_out}");

    // The tasks' usage is the job's: CPU burnt by a task on another host shows in the
    // job's CPU time (bjobs -l; the job report; lsb.acct through bacct).
    let o = spread_job(
        &c,
        &work,
        &["-K", "-n", "2"],
        "/dev/null",
        "blaunch -z \"$(echo $LSB_HOSTS | cut -d' ' -f2)\" sh -c \
         'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'",
    )?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let id = basalt_testkit::jobs::job_id(&text(&o.stdout))
        .ok_or_else(|| anyhow::anyhow!("bsub: {}", text(&o.stdout)))?;
    let long = c
        .stdout_ok("bjobs", &["-l", &id.to_string()])
        .unwrap_or_default()
        .replace("\n                     ", "");
    let cpu: f64 = long
        .split("The CPU time used is ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no CPU time in {long}"))?;
    assert!(cpu >= 0.1, "the remote task's CPU time is counted: {long}");
    let pids = work.join("blaunch.pids");
    let o = spread_job(
        &c,
        &work,
        &["-n", "2"],
        "/dev/null",
        &format!(
            "blaunch sh -c 'echo $$ >> {}; exec sleep 600'",
            pids.display()
        ),
    )?;
    let id = basalt_testkit::jobs::job_id(&text(&o.stdout))
        .ok_or_else(|| anyhow::anyhow!("bsub: {}", text(&o.stderr)))?;
    let task_pids: Vec<i32> = wait_for("both tasks to run", LONG, || {
        let p: Vec<i32> = std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        ((p.len() == 2).then(|| p.clone()), format!("{p:?}"))
    })?;
    c.ok("bkill", &[&id.to_string()])?;
    wait_for("the job's remote tasks to end with it", LONG, || {
        let alive: Vec<i32> = task_pids
            .iter()
            .copied()
            .filter(|p| {
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(*p), None).is_ok()
                    && !std::fs::read_to_string(format!("/proc/{p}/stat"))
                        .unwrap_or_default()
                        .contains(") Z ")
            })
            .collect();
        (alive.is_empty().then_some(()), format!("{alive:?} alive"))
    })?;
    // Outside a job blaunch refuses.
    let o = c
        .command("blaunch")
        .args(["true"])
        .env_remove("LSB_JOBID")
        .output()?;
    assert_eq!(o.status.code(), Some(255));

    // esub | eexec (seed 001): "lsrun invokes esub, and the RES runs eexec before
    // starting the task", what esub printed on eexec's standard input, LS_EXEC_T=START,
    // LS_JOBPID the process that becomes the task; not for lsrcp's copies.
    let serverdir = c.dir.path().join("serverdir");
    let eexec_log = work.join("eexec.log");
    {
        use std::os::unix::fs::PermissionsExt;
        let write = |name: &str, body: String| -> Result<()> {
            let p = serverdir.join(name);
            std::fs::write(&p, body)?;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
            Ok(())
        };
        write(
            "esub",
            "#!/bin/sh\n[ \"$LSF_INVOKE_CMD\" = lsrun ] || exit 0\n\
             grep -q 'abort-me' \"$LSB_SUB_PARM_FILE\" && exit $LSB_SUB_ABORT_VALUE\n\
             echo token-from-esub\n"
                .to_owned(),
        )?;
        write(
            "eexec",
            format!(
                "#!/bin/sh\necho \"$(cat) $LS_EXEC_T $LS_JOBPID\" >> {}\n",
                eexec_log.display()
            ),
        )?;
    }
    let o = lsrun(&c, &work, &["-m", "hostB", "sh", "-c", "echo $$"])?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let task_pid = text(&o.stdout).trim().to_owned();
    assert_eq!(
        std::fs::read_to_string(&eexec_log)?,
        format!("token-from-esub START {task_pid}\n")
    );
    let o = lsrun(&c, &work, &["-m", "hostB", "echo", "abort-me"])?;
    assert_eq!(o.status.code(), Some(255));
    assert!(
        text(&o.stderr).contains("Request aborted by esub"),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    std::fs::write(work.join("copy.src"), "x")?;
    c.ok(
        "lsrcp",
        &[
            &work.join("copy.src").to_string_lossy(),
            &format!("hostC:{}", work.join("copy.dst").display()),
        ],
    )?;
    assert_eq!(std::fs::read_to_string(work.join("copy.dst"))?, "x");
    assert_eq!(
        std::fs::read_to_string(&eexec_log)?.lines().count(),
        1,
        "no eexec for a refused task or a copy"
    );
    std::fs::remove_file(serverdir.join("esub"))?;
    std::fs::remove_file(serverdir.join("eexec"))?;

    // A second user's task runs with that user's uid.
    if !is_root() {
        skip("lsrun as a second user", "creating a test user needs root");
        return Ok(());
    }
    let Some((uid, gid)) = basalt_testkit::jobs::test_user("basalt-rx") else {
        bail!("cannot create the test user basalt-rx");
    };
    use std::os::unix::process::CommandExt;
    let o = c
        .command("lsrun")
        .args(["-m", "hostB", "id", "-u"])
        .current_dir("/tmp")
        .stdin(Stdio::null())
        .uid(uid)
        .gid(gid)
        .output()?;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), uid.to_string());
    Ok(())
}
