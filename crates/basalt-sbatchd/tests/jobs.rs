//! sbatchd running real jobs: the sbatchd library in-process on a fresh loopback
//! address, a real in-process LIM (so sbatchd finds "mbatchd" the normal way), a
//! fake mbatchd that answers SbdHello and records ReportJob, and the real `sbatchd`
//! binary as each job's supervisor.

include!("support/harness.rs");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_job_runs_and_reports() {
    let h = Harness::start("sbd-cmd").await;
    let out = h.work.join("out.%J");
    let spec = h.spec(
        101,
        "env | grep -E '^(LSB_|LS_|LSF_|BASALT_TEST_VAR|HOME=)' | sort; pwd; echo to-stderr >&2",
        false,
        &out.to_string_lossy(),
    );
    let (pid, pgid) = h.start_job(EPOCH, spec.clone()).await.expect("start");
    assert!(pid > 0);
    assert_eq!(pid, pgid, "the job leads its own process group");
    // A repeated StartJob answers the same pid.
    let again = h.start_job(EPOCH, spec).await.expect("repeat");
    assert_eq!(again, (pid, pgid));

    let fin = h.wait_report(101, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 0);
    assert_eq!(fin.state, 64, "DONE");
    assert_eq!(fin.epoch, EPOCH);
    assert!(fin.term_reason.is_empty());
    let reports = h.reports(101);
    let kinds: Vec<i32> = reports.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds.first(),
        Some(&(ReportKind::Started as i32)),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.get(1),
        Some(&(ReportKind::Executing as i32)),
        "{kinds:?}"
    );
    for w in reports.windows(2) {
        assert!(w[1].seq > w[0].seq, "sequence numbers increase: {kinds:?}");
    }
    let exec = &reports[1];
    assert_eq!(exec.exec_cwd, h.work.to_string_lossy());
    assert_eq!(exec.pid, pid);
    assert_eq!(reports[0].host, "hostA");

    let text = read(&h.work.join("out.101"));
    assert!(text.contains("LSB_JOBID=101\n"), "{text}");
    assert!(text.contains("LSB_JOBNAME=job101\n"), "{text}");
    assert!(text.contains("LSB_QUEUE=normal\n"), "{text}");
    assert!(text.contains("LSB_HOSTS=hostA\n"), "{text}");
    assert!(text.contains("LSB_MCPU_HOSTS=hostA 1\n"), "{text}");
    assert!(text.contains("LSB_JOBINDEX=0\n"), "{text}");
    assert!(text.contains("LSB_DJOB_NUMPROC=1\n"), "{text}");
    assert!(text.contains("LSB_EXEC_CLUSTER=basalt\n"), "{text}");
    assert!(text.contains(&format!("LS_JOBPID={pid}\n")), "{text}");
    assert!(
        text.contains("LSB_TRAPSIGS=trap # 15 10 12 2 1\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "LSB_OUTPUTFILE={}\n",
            h.work.join("out.101").display()
        )),
        "{text}"
    );
    assert!(text.contains("BASALT_TEST_VAR=from submission\n"), "{text}");
    assert!(
        text.contains(&format!("LSF_ENVDIR={}\n", h.config.envdir.display())),
        "{text}"
    );
    assert!(text.contains("LSB_JOBFILENAME="), "{text}");
    assert!(
        text.contains("to-stderr\n"),
        "stderr goes to the -o file without -e: {text}"
    );
    assert!(
        text.contains(&format!("\n{}\n", h.work.display())),
        "pwd: {text}"
    );
    assert!(
        text.contains("Subject: Job 101: <job101> in cluster <basalt> Done"),
        "{text}"
    );
    assert_eq!(
        status_line(&text).as_deref(),
        Some("Successfully completed."),
        "{text}"
    );
    assert!(text.contains("The output (if any) is above this job summary."));
    // The job file is cleaned up after the job.
    let jf = text
        .lines()
        .find_map(|l| l.strip_prefix("LSB_JOBFILENAME="))
        .expect("job file name");
    assert!(!Path::new(jf).exists(), "job file {jf} removed");

    // The job's row and directory go once the final report is acknowledged.
    let state = h.state.clone();
    wait_for_async("the job table to be cleaned", DEADLINE, || {
        let state = state.clone();
        async move {
            let left = leftovers(&state);
            (left.is_empty().then_some(()), format!("{left:?}"))
        }
    })
    .await
    .expect("cleanup");

    // An order from an older epoch is refused.
    let err = h
        .start_job(EPOCH - 1, h.spec(102, "true", false, ""))
        .await
        .expect_err("stale epoch");
    assert_eq!(err.code(), tonic::Code::FailedPrecondition, "{err:?}");
    assert!(h.reports(102).is_empty());
    let hellos = h.rec.lock().expect("lock").hellos.clone();
    assert!(
        hellos
            .first()
            .is_some_and(|h| h.restarted && h.host == "hostA")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_scripts_and_errors() {
    let h = Harness::start("sbd-exit").await;
    // exit 3, with a separate -e file.
    let mut spec = h.spec(
        201,
        "echo out; echo err >&2; exit 3",
        false,
        &h.work.join("o.%J").to_string_lossy(),
    );
    spec.err_file = h.work.join("e.%J").to_string_lossy().into_owned();
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(201, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 768);
    assert_eq!(fin.state, 32, "EXIT");
    let out = read(&h.work.join("o.201"));
    assert!(out.starts_with("out\n"), "{out}");
    assert!(!out.contains("err\n"), "{out}");
    assert_eq!(
        status_line(&out).as_deref(),
        Some("Exited with exit code 3."),
        "{out}"
    );
    assert!(out.contains("Subject: Job 201: <job201> in cluster <basalt> Exited"));
    assert_eq!(read(&h.work.join("e.201")), "err\n");

    // A script runs with its own #! interpreter.
    let script = "#!/bin/bash\n# a bash script\necho \"bash=${BASH_VERSION:+yes}\"\nexit 0\n";
    h.start_job(
        EPOCH,
        h.spec(202, script, true, &h.work.join("s.%J").to_string_lossy()),
    )
    .await
    .expect("start script");
    let fin = h.wait_report(202, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 0);
    let out = read(&h.work.join("s.202"));
    assert!(out.starts_with("bash=yes\n"), "{out}");
    assert!(
        out.contains("# LSBATCH: User input\n#!/bin/bash\n# a bash script\n"),
        "{out}"
    );

    // -cwd that does not exist: the job runs in /tmp and says so.
    let mut spec = h.spec(203, "pwd", false, &h.work.join("c.%J").to_string_lossy());
    spec.spec_cwd = "no/such/dir/%J".into();
    h.start_job(EPOCH, spec).await.expect("start");
    let exec = h.wait_report(203, ReportKind::Executing).await;
    assert_eq!(exec.exec_cwd, "/tmp");
    h.wait_report(203, ReportKind::Finished).await;
    let out = read(&h.work.join("c.203"));
    assert!(out.contains("no/such/dir/203"), "{out}");
    assert!(
        out.contains("\n/tmp\n") || out.starts_with("/tmp\n") || out.contains("</tmp>.\n/tmp\n"),
        "{out}"
    );

    // A user that does not exist here (sbatchd as root) cannot start.
    if nix::unistd::geteuid().is_root() {
        let mut spec = h.spec(204, "true", false, "");
        spec.user = "no-such-user-basalt".into();
        let spec_again = spec.clone();
        let err = h.start_job(EPOCH, spec).await.expect_err("unknown user");
        assert!(err.message().contains("no-such-user-basalt"), "{err:?}");
        let failed = h.wait_report(204, ReportKind::StartFailed).await;
        assert!(failed.message.contains("does not exist"), "{failed:?}");
        // Asking again gives the same answer; the job is not run twice.
        let again = h
            .start_job(EPOCH, spec_again)
            .await
            .expect_err("still unknown");
        assert_eq!(again.message(), err.message());
    }

    // RUN limit: killed by sbatchd with TERM_RUNLIMIT.
    let mut spec = h.spec(
        205,
        "sleep 30",
        false,
        &h.work.join("r.%J").to_string_lossy(),
    );
    spec.err_file = h.work.join("re.%J").to_string_lossy().into_owned();
    spec.rlimits[9] = 1;
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(205, ReportKind::Finished).await;
    assert_eq!(fin.term_reason, "TERM_RUNLIMIT");
    assert_ne!(fin.exit_status, 0);
    let out = read(&h.work.join("r.205"));
    assert!(
        out.contains(
            "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code"
        ),
        "{out}"
    );
    let err = read(&h.work.join("re.205"));
    assert!(
        err.lines().any(|l| l.starts_with("TERM_RUNLIMIT:")),
        "the TERM line is in the -e file too: {err}"
    );

    // bmod of a running job (LIMITS): its new run limit ends it; its CPU limit moves.
    h.start_job(EPOCH, h.spec(206, "sleep 30", false, "/dev/null"))
        .await
        .expect("start");
    let pid = h.wait_report(206, ReportKind::Started).await.pid;
    let mut limits = vec![-1i64; 11];
    limits[0] = 100;
    limits[9] = 2;
    let found = h
        .peer()
        .signal_job(spb::SignalJobRequest {
            epoch: EPOCH,
            job_id: 206,
            attempt: 1,
            action: SignalAction::Limits as i32,
            rlimits: limits,
            ..Default::default()
        })
        .await
        .expect("limits order")
        .into_inner()
        .found;
    assert!(found);
    let cpu = wait_for_async("the job's CPU limit to move", DEADLINE, || async move {
        let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
        let line = text
            .lines()
            .find(|l| l.starts_with("Max cpu time"))
            .unwrap_or_default()
            .to_owned();
        let ok = line.split_whitespace().nth(3) == Some("100");
        (ok.then(|| line.clone()), line)
    })
    .await
    .expect("CPU limit");
    assert!(cpu.contains("100"), "{cpu}");
    let fin = h.wait_report(206, ReportKind::Finished).await;
    assert_eq!(fin.term_reason, "TERM_RUNLIMIT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peek_stop_resume_kill() {
    let h = Harness::start("sbd-ctl").await;
    let out = h.work.join("k.%J");
    h.start_job(
        EPOCH,
        h.spec(
            301,
            "echo started; sleep 100",
            false,
            &out.to_string_lossy(),
        ),
    )
    .await
    .expect("start");
    let started = h.wait_report(301, ReportKind::Started).await;
    let pid = started.pid;
    // The job inherits nothing of the job database (SQLite opens close-on-exec).
    let open: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .map(|p| p.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert!(!open.is_empty(), "the job's fds are readable");
    assert!(
        !open.iter().any(|p| p.contains(DB_FILE)),
        "the job holds the job database open: {open:?}"
    );

    // bpeek: the output so far, for the owner only.
    let uid = nix::unistd::getuid().as_raw();
    let client = h.client();
    let peeked = wait_for_async("peek to show the output", DEADLINE, || {
        let mut c = client.clone();
        async move {
            let r = c
                .peek(spb::PeekRequest {
                    job_id: 301,
                    idx: 0,
                    tail_bytes: 0,
                })
                .await
                .map(|r| r.into_inner());
            match r {
                Ok(p) if p.output.starts_with(b"started\n") => (Some(p), String::new()),
                other => (None, format!("{other:?}")),
            }
        }
    })
    .await
    .expect("peek");
    assert!(peeked.path.ends_with("k.301"), "{}", peeked.path);
    let denied = h
        .client_as_user(uid + 12345)
        .peek(spb::PeekRequest {
            job_id: 301,
            idx: 0,
            tail_bytes: 0,
        })
        .await
        .expect_err("another user may not peek");
    assert_eq!(denied.code(), tonic::Code::PermissionDenied);

    // A sample of its resource usage arrives while it runs.
    let ru = h.wait_report(301, ReportKind::Rusage).await;
    assert!(ru.pids.contains(&pid), "{ru:?}");
    assert!(ru.mem_kb > 0);

    // An order without an action (or with an unknown one) is refused: the job runs on.
    for action in [0, 99] {
        let e = h
            .peer()
            .signal_job(spb::SignalJobRequest {
                epoch: EPOCH,
                job_id: 301,
                attempt: 1,
                action,
                ..Default::default()
            })
            .await
            .expect_err("a signal order without an action is refused");
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains("action"), "{e:?}");
    }
    assert!(proc_state(pid).is_some_and(|s| s != 'T'), "the job runs on");

    // STOP: the whole group is stopped (state T); RESUME clears it.
    assert!(h.signal(301, SignalAction::Stop, "").await);
    wait_state(pid, |s| s == Some('T')).await;
    let st = h.wait_report(301, ReportKind::State).await;
    assert_eq!(st.state, 16);
    assert_eq!(st.reasons, 2);
    assert!(h.signal(301, SignalAction::Resume, "").await);
    wait_state(pid, |s| s.is_some() && s != Some('T')).await;
    wait_for_async("a RUN state report", DEADLINE, || async {
        let n = h
            .reports(301)
            .iter()
            .filter(|r| r.kind == ReportKind::State as i32 && r.state == 4)
            .count();
        ((n > 0).then_some(()), String::new())
    })
    .await
    .expect("resumed report");

    // KILL: SIGINT/SIGTERM/SIGKILL sequence; the reason is reported and printed.
    // (The job file's `trap # 15 10 12 2 1` keeps the wrapper shell alive; it ends
    // with the killed command's status.)
    assert!(h.signal(301, SignalAction::Kill, "TERM_OWNER").await);
    let fin = h.wait_report(301, ReportKind::Finished).await;
    assert_eq!(fin.term_reason, "TERM_OWNER");
    assert_ne!(fin.exit_status, 0);
    assert_eq!(fin.state, 32);
    let text = read(&h.work.join("k.301"));
    assert!(
        text.contains("TERM_OWNER: job killed by owner.\nExited with exit code "),
        "{text}"
    );
    let code = basalt_core::job::wait_status_parts(fin.exit_status).0;
    assert!(
        status_line(&text).is_some_and(|l| l == format!("Exited with exit code {code}.")),
        "{text}"
    );
    assert!(proc_state(pid).is_none(), "the job's processes are gone");
    // A finished job is no longer held.
    assert!(!h.signal(301, SignalAction::Kill, "TERM_OWNER").await);
    assert!(!h.signal(399, SignalAction::Kill, "TERM_OWNER").await);

    // No -o: the output is spooled for bpeek and removed afterwards.
    h.start_job(EPOCH, h.spec(302, "echo spooled; sleep 100", false, ""))
        .await
        .expect("start");
    let peeked = wait_for_async("peek of the spool file", DEADLINE, || {
        let mut c = h.client();
        async move {
            let r = c
                .peek(spb::PeekRequest {
                    job_id: 302,
                    idx: 0,
                    tail_bytes: 4,
                })
                .await
                .map(|r| r.into_inner());
            match r {
                Ok(p) if p.output == b"led\n" => (Some(p), String::new()),
                other => (None, format!("{other:?}")),
            }
        }
    })
    .await
    .expect("spool peek");
    assert!(h.signal(302, SignalAction::Kill, "TERM_OWNER").await);
    h.wait_report(302, ReportKind::Finished).await;
    // No -o: the output is mailed when this host has a mail program (and the spool file
    // goes), else it stays in the spool file with the job report (issue 30 item 11).
    // (A mail program that fails keeps it too.)
    if Path::new(&peeked.path).exists() {
        let kept = read(Path::new(&peeked.path));
        assert!(kept.contains("TERM_OWNER"), "{}: {kept}", peeked.path);
        let _ = std::fs::remove_file(&peeked.path);
    } else {
        assert!(
            basalt_sbatchd::mail::program(None).is_some(),
            "without a mail program the output is kept: {}",
            peeked.path
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_job_ack_kills_and_restart_readopts() {
    let mut h = Harness::start("sbd-readopt").await;
    // mbatchd does not know job 401: it is killed and no longer reported.
    h.rec.lock().expect("lock").acks.insert(401, AckKind::NoJob);
    let (pid, _) = h
        .start_job(EPOCH, h.spec(401, "sleep 100", false, ""))
        .await
        .expect("start");
    wait_for_async("the unknown job to be killed", DEADLINE, || async move {
        let st = proc_state(pid);
        (st.is_none().then_some(()), format!("{st:?}"))
    })
    .await
    .expect("killed");
    // Reporting stops after NO_JOB: nothing after the call that got it (its start, and
    // its execution details when they went in the same call), never its end.
    let sent = h.reports(401);
    assert!(
        sent.len() <= 2 && !sent.iter().any(|r| r.kind == ReportKind::Finished as i32),
        "reporting stops after NO_JOB: {sent:?}"
    );

    // A job keeps running while sbatchd restarts, and the new sbatchd reports its end.
    let out = h.work.join("a.%J");
    let (pid, _) = h
        .start_job(
            EPOCH,
            h.spec(
                402,
                "sleep 3; echo after-restart",
                false,
                &out.to_string_lossy(),
            ),
        )
        .await
        .expect("start");
    h.wait_report(402, ReportKind::Executing).await;
    h.stop_sbd().await;
    assert!(proc_state(pid).is_some(), "the job survives sbatchd");
    h.start_sbd().await;
    let status = h
        .client()
        .status(spb::StatusRequest {})
        .await
        .expect("status")
        .into_inner();
    let fin = h.wait_report(402, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 0);
    assert!(
        status.jobs.iter().any(|j| j.job_id == 402 && j.pid == pid) || fin.time > 0,
        "{status:?}"
    );
    let text = read(&h.work.join("a.402"));
    assert!(text.starts_with("after-restart\n"), "{text}");
    assert_eq!(
        status_line(&text).as_deref(),
        Some("Successfully completed.")
    );
    let hellos = h.rec.lock().expect("lock").hellos.clone();
    assert!(hellos.iter().filter(|h| h.restarted).count() >= 2);
    h.stop_sbd().await;
}

/// While sbatchd is down, one job's supervisor is killed (the job runs on), and
/// another job's supervisor and processes vanish with a "reboot" (its recorded boot
/// id is changed). The restarted sbatchd kills the first job and reports both
/// killed by signal 9; the second's end is numbered past anything mbatchd may have
/// seen from the earlier boot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ends_of_jobs_whose_supervisor_died_are_recorded() {
    let mut h = Harness::start("sbd-supdied").await;
    let (orphan, _) = h
        .start_job(EPOCH, h.spec(801, "sleep 100", false, ""))
        .await
        .expect("start");
    let (rebooted, _) = h
        .start_job(EPOCH, h.spec(802, "sleep 100", false, ""))
        .await
        .expect("start");
    for id in [801, 802] {
        h.wait_report(id, ReportKind::Executing).await;
    }
    h.stop_sbd().await;
    let db_path = h.state.join(DB_FILE);
    let stored = JobDb::open(&db_path, false)
        .expect("db")
        .load_all()
        .expect("load");
    let sup = |id: u64| {
        stored
            .iter()
            .find(|j| j.key.0 == id)
            .and_then(|j| j.supervisor.clone())
            .expect("supervisor recorded")
    };
    let kill = |pid: i32| {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    };
    kill(sup(801).pid as i32);
    kill(sup(802).pid as i32);
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(rebooted as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    wait_state(sup(801).pid, |s| s.is_none()).await;
    assert!(
        proc_state(orphan).is_some(),
        "the job outlives its supervisor"
    );
    let conn = rusqlite::Connection::open(&db_path).expect("sqlite");
    conn.execute(
        "UPDATE jobs SET sup_boot = 'an-earlier-boot' WHERE job_id = 802",
        [],
    )
    .expect("update");
    drop(conn);

    h.start_sbd().await;
    let fin = h.wait_report(801, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 9, "killed by signal 9: {fin:?}");
    assert_eq!(fin.state, 32);
    assert_eq!(
        fin.seq,
        h.reports(801).iter().map(|r| r.seq).max().unwrap_or(0)
    );
    assert!(fin.seq < basalt_sbatchd::db::REBOOT_SEQ_GAP);
    wait_state(orphan, |s| s.is_none() || s == Some('Z')).await;
    let fin = h.wait_report(802, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 9);
    assert!(fin.seq > basalt_sbatchd::db::REBOOT_SEQ_GAP, "{fin:?}");
    let state = h.state.clone();
    wait_for_async("both jobs to leave the table", DEADLINE, || {
        let state = state.clone();
        async move {
            let left = leftovers(&state);
            (left.is_empty().then_some(()), format!("{left:?}"))
        }
    })
    .await
    .expect("removed");
    h.stop_sbd().await;
}

/// A job mbatchd no longer lists in its hello answers (e.g. removed while this host
/// was unreachable) is asked about, and killed when mbatchd answers STOP_JOB; jobs
/// it lists are left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_mbatchd_forgot_is_asked_about_and_killed() {
    let h = Harness::start("sbd-reconcile").await;
    let (gone, _) = h
        .start_job(EPOCH, h.spec(701, "sleep 100", false, ""))
        .await
        .expect("start");
    let (kept, _) = h
        .start_job(EPOCH, h.spec(702, "sleep 100", false, ""))
        .await
        .expect("start");
    for id in [701, 702] {
        h.wait_report(id, ReportKind::Executing).await;
    }
    // Hellos come every second: give the listed job a few of them.
    let hellos = || h.rec.lock().expect("lock").hellos.len();
    let before = hellos();
    wait_for_async("three more hellos", DEADLINE, || async move {
        let n = hellos();
        ((n >= before + 3).then_some(()), format!("{n}"))
    })
    .await
    .expect("hellos");
    let listed = h.reports(702);
    assert!(
        listed.windows(2).all(|w| w[1].seq > w[0].seq),
        "a listed job is not asked about: {:?}",
        listed.iter().map(|r| r.seq).collect::<Vec<_>>()
    );

    h.rec.lock().expect("lock").forgotten.insert(701);
    let fin = h.wait_report(701, ReportKind::Finished).await;
    assert_ne!(fin.exit_status, 0);
    assert!(proc_state(gone).is_none(), "the forgotten job was killed");
    let reports = h.reports(701);
    let probe = reports
        .iter()
        .enumerate()
        .find(|(i, r)| {
            r.kind == ReportKind::Rusage as i32 && reports[..*i].iter().any(|e| e.seq == r.seq)
        })
        .map(|(_, r)| r.clone())
        .expect("a probe repeating an acknowledged sequence number");
    assert_eq!(probe.pid, gone);
    // Its story is over for sbatchd once the final report was answered.
    let state = h.state.clone();
    wait_for_async("the forgotten job to leave the table", DEADLINE, || {
        let state = state.clone();
        async move {
            let left = leftovers(&state);
            let gone = !left.iter().any(|l| l.contains("701"));
            (gone.then_some(()), format!("{left:?}"))
        }
    })
    .await
    .expect("removed");
    assert!(
        proc_state(kept).is_some_and(|s| s != 'Z'),
        "the listed job runs on"
    );
    assert!(h.signal(702, SignalAction::Kill, "TERM_OWNER").await);
    h.wait_report(702, ReportKind::Finished).await;
}

/// As root: a job runs as an ordinary user, with that user's identity, and its
/// job file falls back to /tmp/.lsbatch.<uid> when the home does not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_runs_as_the_submitting_user() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: not running as root, so sbatchd cannot switch users");
        return;
    }
    let name = "basaltsbdtest";
    if nix::unistd::User::from_name(name).ok().flatten().is_none() {
        let st = std::process::Command::new("useradd")
            .args([
                "-M",
                "-d",
                "/nonexistent/basaltsbdtest",
                "-s",
                "/bin/sh",
                name,
            ])
            .status();
        match st {
            Ok(s) if s.success() || s.code() == Some(9) => {}
            other => {
                eprintln!("skipped: cannot create a test user ({other:?})");
                return;
            }
        }
    }
    let user = nix::unistd::User::from_name(name)
        .ok()
        .flatten()
        .expect("test user");
    let h = Harness::start("sbd-user").await;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(h.cluster.dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod top");
    std::fs::set_permissions(&h.work, std::fs::Permissions::from_mode(0o777)).expect("chmod work");
    let mut spec = h.spec(
        501,
        "id -un; id -u; echo \"home=$HOME\"; echo \"jf=$LSB_JOBFILENAME\"",
        false,
        &h.work.join("u.%J").to_string_lossy(),
    );
    spec.user = name.into();
    spec.uid = user.uid.as_raw();
    h.start_job(EPOCH, spec).await.expect("start");
    let exec = h.wait_report(501, ReportKind::Executing).await;
    assert_eq!(exec.exec_user, name);
    assert_eq!(exec.exec_uid, user.uid.as_raw());
    let fin = h.wait_report(501, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 0);
    let path = h.work.join("u.501");
    let text = read(&path);
    assert!(
        text.starts_with(&format!(
            "{name}\n{}\nhome=/nonexistent/basaltsbdtest\n",
            user.uid
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("jf=/tmp/.lsbatch.{}/", user.uid)),
        "job file falls back to /tmp: {text}"
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(&path).expect("out file").uid(),
        user.uid.as_raw()
    );
    assert_eq!(
        status_line(&text).as_deref(),
        Some("Successfully completed.")
    );
    assert!(text.contains(&format!("as user <{name}>")), "{text}");
}

/// On the master host sbatchd runs mbatchd, restarts it at once after exit 202, and
/// stops it with SIGTERM when sbatchd stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn supervises_mbatchd_on_the_master() {
    let script = r#"#!/bin/sh
echo "start $$ $*" >> @WORK@/mbd.log
n=$(grep -c start @WORK@/mbd.log)
if [ "$n" -le 1 ]; then exit 202; fi
trap 'echo "term $$" >> @WORK@/mbd.log; exit 0' TERM
while :; do sleep 0.1; done
"#;
    let mut h = Harness::start_with("sbd-mbdsup", Some(script)).await;
    let log = h.work.join("mbd.log");
    let client = h.client();
    let status = wait_for_async("the restarted mbatchd to run", DEADLINE, || {
        let mut c = client.clone();
        let log = log.clone();
        async move {
            let s = c
                .status(spb::StatusRequest {})
                .await
                .map(|r| r.into_inner());
            let text = read(&log);
            match s {
                Ok(s) if s.supervising_mbatchd && text.matches("start").count() == 2 => {
                    (Some(s), text)
                }
                other => (None, format!("{other:?}\n{text}")),
            }
        }
    })
    .await
    .expect("mbatchd supervised");
    let text = read(&log);
    let second = text.lines().nth(1).expect("second start");
    assert!(
        second.starts_with(&format!("start {} ", status.mbatchd_pid)),
        "{text}"
    );
    assert!(
        second.ends_with(&format!("-H hostA -d {}", h.config.envdir.display())),
        "{text}"
    );
    h.stop_sbd().await;
    let text = read(&log);
    assert!(
        text.contains(&format!("term {}", status.mbatchd_pid)),
        "{text}"
    );
}

/// Issue 31 items 2 and 3, on a real sbatchd: a command with quotes, newlines, lines like
/// the wrapper's own and CRLF runs verbatim inside the job wrapper; a command longer than
/// the kernel lets one argument or environment string be (no -J, so its first line is the
/// job's default name and `LSB_JOBNAME`) starts and runs instead of failing with E2BIG.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn awkward_and_huge_commands_run_verbatim() {
    let h = Harness::start("sbd-verbatim").await;
    let payload = "it's \"q\" \\ x\nline2\n'\nExitStat=$?\n# LSBATCH: End user input\nexit 0\nJOB_CLEAN\nEOF\r\nend";
    let cmd = format!(
        "printf '%s' '{}' > verbatim.txt\necho second-line",
        payload.replace('\'', "'\\''")
    );
    h.start_job(
        EPOCH,
        h.spec(301, &cmd, false, &h.work.join("v.%J").to_string_lossy()),
    )
    .await
    .expect("start");
    let fin = h.wait_report(301, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 0);
    assert_eq!(read(&h.work.join("verbatim.txt")), payload);
    let out = read(&h.work.join("v.301"));
    assert!(out.starts_with("second-line\n"), "{out}");
    assert!(!out.contains("not found"), "{out}");

    // 250 KB on one line, no job name: LSB_JOBNAME would be over MAX_ARG_STRLEN (128 KiB).
    let words = "word ".repeat(50_000);
    let mut spec = h.spec(
        302,
        &format!("echo {words}| wc -w"),
        false,
        &h.work.join("h.%J").to_string_lossy(),
    );
    spec.job_name = String::new();
    h.start_job(EPOCH, spec)
        .await
        .expect("start a huge command");
    let fin = h.wait_report(302, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 0, "{fin:?}");
    let out = read(&h.work.join("h.302"));
    assert_eq!(
        out.lines().next().map(str::trim),
        Some("50000"),
        "{}",
        &out[..200.min(out.len())]
    );
}

/// Issue 30 item 5, `bsub -t`: at its termination time a running job gets SIGUSR2 (it may
/// end itself; the exit says TERM_DEADLINE); one that still runs ten minutes later is
/// killed with TERM_DEADLINE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn termination_time_signals_then_kills() {
    let h = Harness::start("sbd-deadline").await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let mut spec = h.spec(
        401,
        "trap 'echo got-usr2; exit 5' USR2; echo started; sleep 60 & wait",
        false,
        &h.work.join("d.%J").to_string_lossy(),
    );
    spec.term_time = now + 2;
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(401, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 5 << 8, "{fin:?}");
    assert_eq!(fin.term_reason, "TERM_DEADLINE");
    let out = read(&h.work.join("d.401"));
    assert!(out.starts_with("started\ngot-usr2\n"), "{out}");

    // Past the termination time by more than the grace: killed at once.
    let mut spec = h.spec(402, "trap '' USR2; sleep 60", false, "");
    spec.term_time = now - 601;
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(402, ReportKind::Finished).await;
    assert_eq!(fin.term_reason, "TERM_DEADLINE");
    assert_ne!(fin.exit_status, 0);
}

/// Issue 30 item 11: the output of a job without `-o` is mailed to the submitter as LSF
/// does (LSB_MAILPROG, `<prog> -oi <recipient>`, the report's subject, the output after
/// the report); with no mail program it is kept next to the job file with the report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_without_o_is_mailed_or_kept() {
    let mut h = Harness::start("sbd-mail").await;
    h.stop_sbd().await;
    let mailbox = h.work.join("mailbox");
    let prog = h.work.join("fake-sendmail");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(
            &prog,
            format!(
                "#!/bin/sh\n{{ echo \"ARGS: $*\"; cat; }} > '{}'\n",
                mailbox.display()
            ),
        )
        .expect("fake sendmail");
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let mut config = (*h.config).clone();
    config.lsf_conf.set("LSB_MAILPROG", &prog.to_string_lossy());
    h.config = Arc::new(config);
    h.start_sbd().await;
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_default();
    // The spool file: next to the job file in ~/.lsbatch (or /tmp/.lsbatch.<uid>).
    let spool_of = |spec: &JobSpec| {
        let name = format!("{}.out", spec.job_file_name);
        let home = Path::new(&spec.sub_home).join(".lsbatch").join(&name);
        let tmp = PathBuf::from(format!("/tmp/.lsbatch.{}", spec.uid)).join(&name);
        (home, tmp)
    };
    let spec = h.spec(501, "echo hello-mail", false, "");
    let (home_spool, tmp_spool) = spool_of(&spec);
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(501, ReportKind::Finished).await;
    assert_eq!(fin.exit_status, 0);
    let mail = read(&mailbox);
    assert!(mail.starts_with(&format!("ARGS: -oi {user}\n")), "{mail}");
    assert!(mail.contains(&format!("\nTo: {user}\n")), "{mail}");
    assert!(
        mail.contains("\nSubject: Job 501: <job501> in cluster <basalt> Done\n"),
        "{mail}"
    );
    assert!(
        mail.ends_with("The output (if any) follows:\n\nhello-mail\n"),
        "{mail}"
    );
    assert!(
        !home_spool.exists() && !tmp_spool.exists(),
        "the mailed output is not kept: {}",
        home_spool.display()
    );

    // No mail program: the output and the report stay in the spool file.
    h.stop_sbd().await;
    let mut config = (*h.config).clone();
    config.lsf_conf.set("LSB_MAILPROG", "/nonexistent/sendmail");
    h.config = Arc::new(config);
    h.start_sbd().await;
    let spec = h.spec(502, "echo kept-output", false, "");
    let (home_spool, tmp_spool) = spool_of(&spec);
    h.start_job(EPOCH, spec).await.expect("start");
    h.wait_report(502, ReportKind::Finished).await;
    let kept_at = if home_spool.exists() {
        home_spool
    } else {
        tmp_spool
    };
    let kept = read(&kept_at);
    assert!(
        kept.starts_with("kept-output\n"),
        "{}: {kept}",
        kept_at.display()
    );
    assert!(kept.contains("Successfully completed."), "{kept}");
    let _ = std::fs::remove_file(&kept_at);
}

/// The supervisor pools of this test process whose state root is `state`
/// (`sbatchd --job-supervisor <state>`, children of the in-process sbatchd).
fn pools(state: &Path) -> Vec<i32> {
    let me = std::process::id().to_string();
    let want = state.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
                .filter(|pid| {
                    let stat =
                        std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                    let ppid = stat
                        .rsplit_once(')')
                        .and_then(|(_, r)| r.split_whitespace().nth(1).map(str::to_owned));
                    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
                    ppid.as_deref() == Some(me.as_str())
                        && args
                            .windows(2)
                            .any(|w| w[0] == b"--job-supervisor" && w[1] == want)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Jobs are followed by one supervisor process sbatchd starts at its first job. A
/// supervisor killed with SIGKILL leaves its jobs unsupervised: sbatchd sees it gone,
/// kills what is left of each job and records its end (never lost, never left
/// running); the next job gets a new supervisor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_supervisor_ends_its_jobs_and_the_next_job_gets_a_new_one() {
    let h = Harness::start("sbd-pool").await;
    assert!(
        pools(&h.state).is_empty(),
        "no supervisor before the first job"
    );
    let (_, cmd) = h.until_go();
    h.start_job(EPOCH, h.spec(1401, &cmd, false, ""))
        .await
        .expect("start");
    let exec = h.wait_report(1401, ReportKind::Executing).await;
    let first = pools(&h.state);
    assert_eq!(first.len(), 1, "one supervisor: {first:?}");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(first[0]),
        nix::sys::signal::Signal::SIGKILL,
    );
    wait_state(first[0] as u32, |s| s.is_none() || s == Some('Z')).await;

    // Its job is ended by sbatchd: killed, its end recorded and reported.
    let fin = h.wait_report(1401, ReportKind::Finished).await;
    assert_eq!(fin.state, 32, "EXIT: {fin:?}");
    assert_eq!(fin.exit_status & 0x7f, 9, "SIGKILL: {fin:?}");
    wait_state(exec.pid, |s| s.is_none() || s == Some('Z')).await;

    // The next job starts through a new supervisor.
    h.run_true(1402).await;
    let second = pools(&h.state);
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(second, first, "a new supervisor");
}

/// A supervisor sbatchd lets go of (no new job for its idle time) takes no new job
/// but follows the jobs it has to their end, then exits; a job started meanwhile gets
/// a new supervisor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervisor_let_go_of_follows_its_jobs_to_their_end() {
    let h = Harness::start("sbd-pool-retire").await;
    let (go, cmd) = h.until_go();
    h.start_job(EPOCH, h.spec(1601, &cmd, false, ""))
        .await
        .expect("start");
    h.wait_report(1601, ReportKind::Executing).await;
    let first = pools(&h.state);
    assert_eq!(first.len(), 1, "{first:?}");
    // Past the idle time: let go of, still alive with its job.
    tokio::time::sleep(POOL_IDLE + Duration::from_secs(2)).await;
    assert_eq!(pools(&h.state), first, "still following its job");
    h.run_true(1602).await;
    let both = pools(&h.state);
    assert_eq!(both.len(), 2, "the old one and a new one: {both:?}");
    std::fs::write(&go, "").expect("go");
    let fin = h.wait_report(1601, ReportKind::Finished).await;
    assert_eq!((fin.state, fin.exit_status), (64, 0), "{fin:?}");
    wait_state(first[0] as u32, |s| s.is_none() || s == Some('Z')).await;
}

/// A supervisor with no job to start for its idle time, and none to follow, exits (an
/// idle host keeps none), and the next job starts a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_supervisor_pool_is_stopped_and_the_next_job_starts_one() {
    let h = Harness::start("sbd-pool-idle").await;
    h.start_job(EPOCH, h.spec(1501, "true", false, ""))
        .await
        .expect("start");
    h.wait_report(1501, ReportKind::Finished).await;
    let first = pools(&h.state);
    assert_eq!(first.len(), 1, "{first:?}");
    let state = h.state.clone();
    wait_for_async("the idle pool to stop", POOL_IDLE + DEADLINE, || {
        let state = state.clone();
        async move {
            let left = pools(&state);
            (left.is_empty().then_some(()), format!("{left:?}"))
        }
    })
    .await
    .expect("idle pool stopped");
    h.run_true(1502).await;
    let second = pools(&h.state);
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(second, first, "a new pool");
}

/// The reports of a job that wait together go to mbatchd as one batch on the report
/// stream (a job's start and its execution details are recorded together), and the
/// jobs of a host share one stream; an mbatchd without `ReportStream` gets each batch
/// in one `ReportJobs` call, and one without `ReportJobs` either gets them one by one,
/// in the same order, none lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_waiting_together_go_in_one_batch_on_one_stream_or_call_or_one_by_one() {
    let h = Harness::start("sbd-batch").await;
    h.run_true(1701).await;
    h.run_true(1704).await;
    let kinds = |id| -> Vec<i32> { h.reports(id).iter().map(|r| r.kind).collect() };
    let seqs = |id| -> Vec<u64> { h.reports(id).iter().map(|r| r.seq).collect() };
    let want = vec![
        ReportKind::Started as i32,
        ReportKind::Executing as i32,
        ReportKind::Finished as i32,
    ];
    for id in [1701, 1704] {
        assert_eq!(kinds(id), want);
        assert_eq!(seqs(id), vec![1, 2, 3]);
    }
    {
        let rec = h.rec.lock().expect("lock");
        assert!(
            rec.stream_batches >= 2 && rec.largest_batch >= 2,
            "{} batches, largest {}",
            rec.stream_batches,
            rec.largest_batch
        );
        assert_eq!(rec.streams, 1, "both jobs on one stream");
        assert_eq!(rec.batches, 0, "no ReportJobs call");
    }

    h.rec.lock().expect("lock").no_stream = true;
    h.run_true(1703).await;
    assert_eq!(kinds(1703), want);
    assert_eq!(seqs(1703), vec![1, 2, 3]);
    assert!(
        h.rec.lock().expect("lock").batches >= 1,
        "ReportJobs instead"
    );

    h.rec.lock().expect("lock").no_batches = true;
    h.run_true(1702).await;
    assert_eq!(kinds(1702), want);
    assert_eq!(seqs(1702), vec![1, 2, 3]);
}

/// Start orders on one `StartStream`: each is answered by its tag as soon as its job has
/// started (a job that starts later holds up none), a refusal is answered in-band with
/// the status StartJob would have returned (an order from an older epoch:
/// FAILED_PRECONDITION), and the stream goes on after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_orders_on_one_stream_are_answered_by_tag_and_refusals_in_band() {
    let h = Harness::start("sbd-start-stream").await;
    let order = |tag: u64, epoch: u64, job_id: u64| spb::StartJobRequest {
        epoch,
        job: Some(h.spec(job_id, "true", false, "")),
        tag,
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let mut answers = h
        .peer()
        .start_stream(tokio_stream::wrappers::UnboundedReceiverStream::new(rx))
        .await
        .expect("stream opens")
        .into_inner();
    for (tag, epoch, job) in [(7, EPOCH, 1801), (8, EPOCH - 1, 1802), (9, EPOCH, 1803)] {
        tx.send(order(tag, epoch, job)).expect("send");
    }
    let mut got = BTreeMap::new();
    while got.len() < 3 {
        let a = tokio::time::timeout(DEADLINE, answers.message())
            .await
            .expect("an answer in time")
            .expect("the stream goes on")
            .expect("an answer");
        got.insert(a.tag, a);
    }
    for tag in [7, 9] {
        let a = &got[&tag];
        assert_eq!(a.code, 0, "{a:?}");
        assert!(a.pid > 0 && a.pgid > 0, "{a:?}");
    }
    let refused = &got[&8];
    assert_eq!(
        refused.code,
        tonic::Code::FailedPrecondition as i32,
        "{refused:?}"
    );
    assert!(!refused.message.is_empty(), "{refused:?}");
    for job in [1801, 1803] {
        let fin = h.wait_report(job, ReportKind::Finished).await;
        assert_eq!((fin.state, fin.exit_status), (64, 0), "{fin:?}");
    }
    assert!(h.reports(1802).is_empty(), "the refused order ran nothing");
    // Repeating an order on the stream is answered with the job's pid again.
    tx.send(order(10, EPOCH, 1801)).expect("send");
    let again = tokio::time::timeout(DEADLINE, answers.message())
        .await
        .expect("in time")
        .expect("the stream goes on")
        .expect("an answer");
    assert_eq!((again.tag, again.code), (10, 0), "{again:?}");
    assert_eq!(again.pid, got[&7].pid, "{again:?}");

    // sbatchd stopping ends the stream (mbatchd's side still open): it does not wait for
    // mbatchd to close it.
    let mut h = h;
    let stopping = std::time::Instant::now();
    h.stop_sbd().await;
    assert!(
        stopping.elapsed() < Duration::from_secs(3),
        "sbatchd took {:?} to stop with a start stream open",
        stopping.elapsed()
    );
    let end = tokio::time::timeout(DEADLINE, answers.message())
        .await
        .expect("in time");
    assert!(!matches!(end, Ok(Some(_))), "{end:?}");
    drop(tx);
}

/// JOB_INCLUDE_POSTPROC=N (LSF's default): the job's end is reported as it ends (DONE,
/// no post-execution status), its post-execution commands run after it, and their status
/// comes in a POST_EXEC report. The job's own LSB_JOB_INCLUDE_POSTPROC=Y, and mbatchd's
/// `include_postproc` (lsb.params / the application profile), hold the end until they
/// have run (one FINISHED report with their status). JOB_POSTPROC_TIMEOUT kills
/// post-execution commands that run too long; their status is then a failure (SIGKILL).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_execution_runs_after_the_reported_end_unless_included_and_times_out() {
    let h = Harness::start("sbd-postproc").await;
    let (go, wait_go) = h.until_go();
    let post_out = h.work.join("post.301");

    // N: FINISHED while the post-execution command still waits, then POST_EXEC.
    let mut spec = h.spec(301, "exit 2", false, "");
    spec.queue_post_cmd = format!("{wait_go}; echo $LSB_JOBEXIT_STAT > {}", post_out.display());
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(301, ReportKind::Finished).await;
    assert_eq!((fin.state, fin.exit_status), (32, 2 << 8), "EXIT: {fin:?}");
    assert!(!fin.has_post_exec, "{fin:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        h.reports(301)
            .iter()
            .all(|r| r.kind != ReportKind::PostExec as i32),
        "the post-execution command still runs"
    );
    assert!(!post_out.exists());
    std::fs::write(&go, "").expect("go");
    let post = h.wait_report(301, ReportKind::PostExec).await;
    assert!(post.has_post_exec && post.post_exec_status == 0, "{post:?}");
    assert_eq!((post.state, post.exit_status), (32, 2 << 8), "{post:?}");
    assert!(post.seq > fin.seq);
    assert_eq!(read(&post_out).trim(), "512");

    // The job's own LSB_JOB_INCLUDE_POSTPROC=Y: one FINISHED report with their status.
    let mut spec = h.spec(302, "true", false, "");
    let env = vec![
        "PATH=/usr/local/bin:/usr/bin:/bin".to_string(),
        "LSB_JOB_INCLUDE_POSTPROC=Y".to_string(),
    ];
    spec.job_file = basalt_core::jobfile::render(&env, "true", false).into_bytes();
    spec.post_exec = "exit 3".into();
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(302, ReportKind::Finished).await;
    assert!(
        fin.has_post_exec && fin.post_exec_status == 3 << 8,
        "{fin:?}"
    );
    assert_eq!(fin.state, 64, "DONE: {fin:?}");

    // mbatchd's include_postproc (lsb.params or the application profile's Y).
    let mut spec = h.spec(303, "true", false, "");
    spec.include_postproc = true;
    spec.queue_post_cmd = "true".into();
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(303, ReportKind::Finished).await;
    assert!(fin.has_post_exec && fin.post_exec_status == 0, "{fin:?}");

    // JOB_POSTPROC_TIMEOUT (1 s here; minutes in lsb.params): killed, a failure.
    let mut spec = h.spec(304, "true", false, "");
    spec.queue_post_cmd = "sleep 60".into();
    spec.postproc_timeout_secs = 1;
    let started = std::time::Instant::now();
    h.start_job(EPOCH, spec).await.expect("start");
    h.wait_report(304, ReportKind::Finished).await;
    let post = h.wait_report(304, ReportKind::PostExec).await;
    assert!(
        post.has_post_exec && post.post_exec_status == 9,
        "SIGKILL: {post:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    for id in [301, 302, 303, 304] {
        let kinds: Vec<i32> = h.reports(id).iter().map(|r| r.kind).collect();
        let fins = kinds
            .iter()
            .filter(|k| **k == ReportKind::Finished as i32)
            .count();
        assert_eq!(fins, 1, "job {id}: one FINISHED report: {kinds:?}");
    }
}

/// Issue 50, item 1: a job killed while its pre-execution command runs — one that exits
/// 0 when interrupted — never ran its command; its end is EXIT with the kill's term
/// reason and exit code 130 (`KILLED_WAIT_STATUS`), never the pre-execution command's 0,
/// and its post-execution command sees that status in LSB_JOBEXIT_STAT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_killed_during_its_pre_execution_ends_exit_130_not_0() {
    let h = Harness::start("sbd-killpre").await;
    let trapped = h.work.join("pre.trapped");
    let ran = h.work.join("job.ran");
    let post_out = h.work.join("post.stat");
    let mut spec = h.spec(311, &format!("touch {}", ran.display()), false, "");
    spec.queue_pre_cmd = format!(
        "trap 'exit 0' INT TERM; touch {}; while true; do sleep 0.1; done",
        trapped.display()
    );
    spec.queue_post_cmd = format!("echo $LSB_JOBEXIT_STAT > {}", post_out.display());
    h.start_job(EPOCH, spec).await.expect("start");
    h.wait_report(311, ReportKind::Started).await;
    wait_for_async("the pre-execution command to run", DEADLINE, || async {
        (trapped.exists().then_some(()), String::new())
    })
    .await
    .expect("pre-execution command");
    assert!(h.signal(311, SignalAction::Kill, "TERM_ADMIN").await);
    let fin = h.wait_report(311, ReportKind::Finished).await;
    assert_eq!(
        (fin.state, fin.exit_status, fin.term_reason.as_str()),
        (32, basalt_core::job::KILLED_WAIT_STATUS, "TERM_ADMIN"),
        "{fin:?}"
    );
    let post = h.wait_report(311, ReportKind::PostExec).await;
    assert_eq!(
        post.exit_status,
        basalt_core::job::KILLED_WAIT_STATUS,
        "{post:?}"
    );
    assert_eq!(read(&post_out).trim(), "33280");
    assert!(!ran.exists(), "the job's command never ran");
}

/// Issue 53, item 6: the protocol version is checked once, from the request's metadata
/// (the server layer); orders whose body carries none (the field is gone) are served by
/// sbatchd and by the LIM (the unfixed daemons checked a body field again and refused
/// them: "incompatible protocol version None"), and so is an order of an older mbatchd
/// that still sets the field (its field 1, now reserved, is skipped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orders_without_a_protocol_in_their_body_are_served() {
    let h = Harness::start("sbd-proto").await;
    let order = spb::SignalJobRequest {
        epoch: EPOCH,
        job_id: 999,
        idx: 0,
        attempt: 1,
        action: SignalAction::Kill as i32,
        ..Default::default()
    };
    let found = h
        .peer()
        .signal_job(order)
        .await
        .map(|r| r.into_inner().found);
    assert!(matches!(found, Ok(false)), "{found:?}");
    let start = h
        .peer()
        .start_job(spb::StartJobRequest {
            epoch: EPOCH,
            job: Some(h.spec(998, "true", false, "")),
            ..Default::default()
        })
        .await;
    assert!(start.is_ok(), "{start:?}");
    h.wait_report(998, ReportKind::Finished).await;
    let keys = basalt_runtime::cluster_keys(&h.config).expect("cluster key");
    let auth = basalt_runtime::daemon_auth(&h.config, "hostA", keys);
    // An mbatchd from before still sends its version in field 1 too: served alike.
    let addr = basalt_runtime::sbd_addr(&h.config, "hostA").expect("sbd addr");
    let ch = basalt_runtime::auth_channel(addr, "hostA", DEADLINE, &auth).expect("channel");
    let mut grpc = tonic::client::Grpc::new(ch);
    grpc.ready().await.expect("channel ready");
    let old: Result<Response<spb::SignalJobReply>, Status> = grpc
        .unary(
            Request::new(OldSignalJobRequest {
                protocol: Some(basalt_proto::PROTOCOL),
                epoch: EPOCH,
                job_id: 999,
                idx: 0,
                attempt: 1,
                action: SignalAction::Kill as i32,
            }),
            tonic::codegen::http::uri::PathAndQuery::from_static(
                "/basalt.sbatchd.v1.SbatchdPeer/SignalJob",
            ),
            tonic_prost::ProstCodec::default(),
        )
        .await;
    let old = old.map(|r| r.into_inner().found);
    assert!(matches!(old, Ok(false)), "{old:?}");
    let mut lim = basalt_runtime::lim_peer_channel(&h.config, "hostA", DEADLINE, &auth)
        .expect("LIM peer client");
    let probe = lim
        .probe(basalt_proto::lim::ProbeRequest {
            from: "hostA".into(),
        })
        .await
        .map(|r| r.into_inner().host);
    assert!(matches!(&probe, Ok(host) if host == "hostA"), "{probe:?}");
}

/// The head of a `SignalJobRequest` as an mbatchd from before issue 53 encoded it: its
/// protocol version in field 1 (now reserved).
#[derive(Clone, PartialEq, prost::Message)]
struct OldSignalJobRequest {
    #[prost(message, optional, tag = "1")]
    protocol: Option<basalt_proto::common::ProtocolVersion>,
    #[prost(uint64, tag = "2")]
    epoch: u64,
    #[prost(uint64, tag = "3")]
    job_id: u64,
    #[prost(uint32, tag = "4")]
    idx: u32,
    #[prost(uint32, tag = "5")]
    attempt: u32,
    #[prost(enumeration = "SignalAction", tag = "6")]
    action: i32,
}
