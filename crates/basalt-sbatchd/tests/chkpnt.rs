//! Checkpointing and restart with real jobs: the built-in `default` method (the job
//! takes a signal, saves its state and creates `chkpnt.done`), external
//! `echkpnt.<method>` / `erestart.<method>` programs in LSF_SERVERDIR, the kill after a
//! checkpoint (TERM_CHKPNT), and restarts that succeed, fail (START_FAILED marked
//! `restart_failed`) or run erestart's LSB_RESTART_CMD.

#![allow(dead_code)]

include!("support/harness.rs");

/// lsf.conf of these tests: a short checkpoint timeout.
const CONF: &str = "BASALT_CHKPNT_TIMEOUT=2";

impl Harness {
    /// mbatchd's CHKPNT order (bchkpnt [-k] [-f], bmig's with `migrate`).
    async fn chkpnt(&self, job_id: u64, kill: bool, force: bool, migrate: bool) -> bool {
        self.send_signal(spb::SignalJobRequest {
            epoch: EPOCH,
            job_id,
            idx: 0,
            attempt: 1,
            action: SignalAction::Chkpnt as i32,
            terminate_interval: 2,
            chkpnt_kill: kill,
            chkpnt_force: force,
            chkpnt_migrate: migrate,
            ..Default::default()
        })
        .await
    }

    /// Wait until job `job_id` has `n` CHKPNT reports; returns them.
    async fn wait_chkpnts(&self, job_id: u64, n: usize) -> Vec<mpb::JobReport> {
        wait_for_async(
            &format!("job {job_id}: {n} CHKPNT report(s)"),
            DEADLINE,
            || async move {
                let all: Vec<mpb::JobReport> = self
                    .reports(job_id)
                    .into_iter()
                    .filter(|r| r.kind == ReportKind::Chkpnt as i32)
                    .collect();
                let seen = format!("{all:?}");
                ((all.len() >= n).then_some(all), seen)
            },
        )
        .await
        .expect("CHKPNT reports")
    }

    /// A checkpointable job (method `method`) checkpointing to `<work>/ck/<job_id>`.
    fn chkpnt_spec(&self, job_id: u64, command: &str, method: &str) -> JobSpec {
        let mut spec = self.spec(job_id, command, false, "");
        spec.chkpnt_dir = self
            .work
            .join("ck")
            .join(job_id.to_string())
            .to_string_lossy()
            .into_owned();
        spec.chkpnt_method = method.to_owned();
        spec
    }

    /// LSF_SERVERDIR of the test cluster.
    fn serverdir(&self) -> PathBuf {
        let d = self
            .config
            .lsf_conf
            .get("LSF_SERVERDIR")
            .expect("LSF_SERVERDIR in lsf.conf");
        self.config.resolve_path(d)
    }

    /// Install an executable script `name` in LSF_SERVERDIR.
    fn install(&self, name: &str, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        let p = self.serverdir().join(name);
        std::fs::write(&p, text).expect("script");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// No FINISHED report of job `job_id` for a moment, and its top process is there.
    async fn still_runs(&self, job_id: u64, pid: u32) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            self.reports(job_id)
                .iter()
                .all(|r| r.kind != ReportKind::Finished as i32),
            "job {job_id} ended"
        );
        assert!(proc_state(pid).is_some(), "job {job_id} is gone");
    }
}

/// Wait until `path` exists.
async fn wait_file(path: &Path) -> String {
    wait_for_async(&format!("{}", path.display()), DEADLINE, || async move {
        let text = std::fs::read_to_string(path).ok();
        (text, String::new())
    })
    .await
    .expect("file")
}

/// A job taking part in the built-in method: on SIGWINCH it writes its counter to
/// `$LSB_CHKPNT_DIR/count` and creates `chkpnt.done`.
fn cooperative(ready: &Path) -> String {
    format!(
        "n=0; trap 'n=$((n+1)); echo $n > \"$LSB_CHKPNT_DIR/count\"; \
         touch \"$LSB_CHKPNT_DIR/chkpnt.done\"' WINCH; \
         echo \"$LSB_CHKPNT_DIR $LSB_ECHKPNT_METHOD $LSB_CHKFILENAME ${{LSB_RESTART:-N}}\" > {}; \
         while :; do sleep 0.1; done",
        ready.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_method_checkpoints_a_cooperating_job_and_kills_it_when_asked() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::start_full("sbd-ck-default", None, CONF).await;
    let ready = h.work.join("ready.601");
    let spec = h.chkpnt_spec(601, &cooperative(&ready), "");
    let dir = PathBuf::from(&spec.chkpnt_dir);
    let copy = dir.join(&spec.job_file_name);
    h.start_job(EPOCH, spec).await.expect("start");
    let pid = h.wait_report(601, ReportKind::Started).await.pid;
    // The job's checkpoint directory (0700), its job file's copy, its variables.
    let env = wait_file(&ready).await;
    assert_eq!(
        env.trim(),
        format!("{} default {} N", dir.display(), copy.display())
    );
    let md = std::fs::metadata(&dir).expect("checkpoint directory");
    assert_eq!(md.permissions().mode() & 0o777, 0o700);
    assert!(read(&copy).contains("sleep 0.1"), "the job file's copy");

    // A checkpoint: the job saved its state; it runs on.
    assert!(h.chkpnt(601, false, false, false).await);
    let r = h.wait_chkpnts(601, 1).await;
    assert!(r[0].chkpnt_ok, "{r:?}");
    assert_eq!((r[0].pid, r[0].message.as_str()), (0, ""));
    assert_eq!(read(&dir.join("count")).trim(), "1");
    h.still_runs(601, pid).await;

    // A stopped job is continued for its checkpoint, and stopped again after it.
    assert!(h.signal(601, SignalAction::Stop, "").await);
    wait_state(pid, |s| s == Some('T')).await;
    assert!(h.chkpnt(601, false, false, false).await);
    let r = h.wait_chkpnts(601, 2).await;
    assert!(r[1].chkpnt_ok, "{r:?}");
    assert_eq!(read(&dir.join("count")).trim(), "2");
    wait_state(pid, |s| s == Some('T')).await;
    assert!(h.signal(601, SignalAction::Resume, "").await);
    wait_state(pid, |s| s.is_some() && s != Some('T')).await;

    // With kill: checkpointed, then killed (TERM_CHKPNT).
    assert!(h.chkpnt(601, true, false, false).await);
    let r = h.wait_chkpnts(601, 3).await;
    assert!(r[2].chkpnt_ok, "{r:?}");
    let fin = h.wait_report(601, ReportKind::Finished).await;
    assert_eq!(fin.term_reason, "TERM_CHKPNT", "{fin:?}");
    assert_eq!(read(&dir.join("count")).trim(), "3");
    // The checkpoint stays for a restart.
    assert!(dir.join("chkpnt.done").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_the_job_ignores_fails_and_leaves_it_running() {
    let h = Harness::start_full("sbd-ck-ignored", None, CONF).await;
    let (go, wait_go) = h.until_go();
    h.start_job(EPOCH, h.chkpnt_spec(611, &wait_go, "default"))
        .await
        .expect("start");
    let pid = h.wait_report(611, ReportKind::Started).await.pid;
    let started = std::time::Instant::now();
    // Even with kill: a failed checkpoint does not kill the job.
    assert!(h.chkpnt(611, true, false, false).await);
    let r = h.wait_chkpnts(611, 1).await;
    assert!(!r[0].chkpnt_ok, "{r:?}");
    let dir = h.work.join("ck/611");
    assert_eq!(
        r[0].message,
        format!(
            "the job did not write {}/chkpnt.done within 2 s of SIGWINCH",
            dir.display()
        )
    );
    assert!(started.elapsed() >= Duration::from_millis(1900));
    h.still_runs(611, pid).await;

    // A job that is not checkpointable: refused at once, it runs on.
    let (_, wait) = h.until_go();
    h.start_job(EPOCH, h.spec(612, &wait, false, ""))
        .await
        .expect("start");
    let pid2 = h.wait_report(612, ReportKind::Started).await.pid;
    assert!(h.chkpnt(612, true, false, false).await);
    let r = h.wait_chkpnts(612, 1).await;
    assert!(!r[0].chkpnt_ok);
    assert_eq!(r[0].message, "the job is not checkpointable");
    h.still_runs(612, pid2).await;
    // A job this host does not hold: not found.
    assert!(!h.chkpnt(699, false, false, false).await);

    // The job ends before it writes its checkpoint (the signal killed it).
    let (_, wait3) = h.until_go();
    h.start_job(
        EPOCH,
        h.chkpnt_spec(613, &format!("trap 'exit 3' WINCH; {wait3}"), ""),
    )
    .await
    .expect("start");
    h.wait_report(613, ReportKind::Started).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(h.chkpnt(613, false, false, false).await);
    let r = h.wait_chkpnts(613, 1).await;
    assert!(!r[0].chkpnt_ok);
    assert_eq!(r[0].message, "the job ended before writing its checkpoint");
    let fin = h.wait_report(613, ReportKind::Finished).await;
    assert!(
        fin.seq > r[0].seq,
        "the checkpoint's end is reported before the job's"
    );

    std::fs::write(&go, "").expect("go");
    for id in [611, 612] {
        let fin = h.wait_report(id, ReportKind::Finished).await;
        assert_eq!(fin.state, 64, "DONE: {fin:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_echkpnt_gets_lsf_arguments_and_environment() {
    let h = Harness::start_full("sbd-ck-echkpnt", None, CONF).await;
    h.install(
        "echkpnt.rec",
        "#!/bin/sh\n{ echo \"ARGS $*\"; echo \"JOBID=$LSB_JOBID IDX=$LSB_JOBINDEX\"; \
         echo \"DIR=$LSB_CHKPNT_DIR\"; echo \"CHK=$LSB_CHKFILENAME\"; \
         echo \"METHOD=$LSB_ECHKPNT_METHOD\"; echo \"SERVERDIR=$LSF_SERVERDIR\"; \
         echo \"MIG=${LSB_CHKPNT_MIG:-N}\"; echo \"USER=$USER\"; echo \"PWD=$(pwd)\"; \
         } >> \"$LSB_CHKPNT_DIR/echkpnt.args\"\nexit 0\n",
    );
    h.install(
        "echkpnt.bad",
        "#!/bin/sh\necho first >&2\necho 'checkpoint refused: no space' >&2\necho >&2\nexit 3\n",
    );
    h.install("echkpnt.slow", "#!/bin/sh\nsleep 30\n");
    let (go, wait_go) = h.until_go();
    let spec = h.chkpnt_spec(621, &wait_go, "rec");
    let dir = PathBuf::from(&spec.chkpnt_dir);
    let copy = dir.join(&spec.job_file_name);
    h.start_job(EPOCH, spec).await.expect("start");
    let pid = h.wait_report(621, ReportKind::Started).await.pid;

    // A migration's checkpoint, forced: -f, -d <dir>, the process group.
    assert!(h.chkpnt(621, false, true, true).await);
    let r = h.wait_chkpnts(621, 1).await;
    assert!(r[0].chkpnt_ok, "{r:?}");
    assert!(r[0].pid > 0 && r[0].pid != pid, "echkpnt's pid: {r:?}");
    let args = read(&dir.join("echkpnt.args"));
    let me = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .expect("own user");
    let want = format!(
        "ARGS -f -d {dir} {pid}\nJOBID=621 IDX=0\nDIR={dir}\nCHK={copy}\nMETHOD=rec\n\
         SERVERDIR={sd}\nMIG=Y\nUSER={user}\nPWD={pwd}\n",
        dir = dir.display(),
        copy = copy.display(),
        sd = h.serverdir().display(),
        user = me.name,
        pwd = h.work.display(),
    );
    assert_eq!(args, want);
    h.still_runs(621, pid).await;

    // With kill: -k, then the kill sequence (TERM_CHKPNT).
    assert!(h.chkpnt(621, true, false, false).await);
    let r = h.wait_chkpnts(621, 2).await;
    assert!(r[1].chkpnt_ok, "{r:?}");
    let fin = h.wait_report(621, ReportKind::Finished).await;
    assert_eq!(fin.term_reason, "TERM_CHKPNT", "{fin:?}");
    let args = read(&dir.join("echkpnt.args"));
    assert!(
        args.contains(&format!("ARGS -k -d {} {pid}\n", dir.display())),
        "{args}"
    );

    // A failing one: its last line of errors; a missing one; one that takes too long.
    for (id, method) in [(622, "bad"), (623, "nosuch"), (624, "slow")] {
        let (_, wait) = h.until_go();
        h.start_job(EPOCH, h.chkpnt_spec(id, &wait, method))
            .await
            .expect("start");
        let pid = h.wait_report(id, ReportKind::Started).await.pid;
        assert!(h.chkpnt(id, true, false, false).await);
        let r = h.wait_chkpnts(id, 1).await;
        assert!(!r[0].chkpnt_ok, "{r:?}");
        let want = match method {
            "bad" => "echkpnt.bad exited with status 3: checkpoint refused: no space".to_owned(),
            "nosuch" => format!("echkpnt.nosuch: not found in {}", h.serverdir().display()),
            _ => "echkpnt.slow did not finish within 2 s".to_owned(),
        };
        assert_eq!(r[0].message, want);
        h.still_runs(id, pid).await;
    }
    std::fs::write(&go, "").expect("go");
    for id in [622, 623, 624] {
        h.wait_report(id, ReportKind::Finished).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_run_erestart_then_the_job_or_its_restart_command() {
    let h = Harness::start_full("sbd-ck-restart", None, CONF).await;
    let ck = h.work.join("ck");
    let restart_spec = |id: u64, command: &str, method: &str| {
        let mut spec = h.chkpnt_spec(id, command, method);
        spec.restart = true;
        spec
    };
    let saved = |dir: &Path| {
        std::fs::create_dir_all(dir).expect("checkpoint dir");
        std::fs::write(dir.join("chkpnt.done"), "").expect("chkpnt.done");
    };

    // Built in, the checkpoint of job 700 moved to job 701's directory: the job file runs
    // again with LSB_RESTART=Y.
    saved(&ck.join("700"));
    let out = h.work.join("r.701");
    let mut spec = restart_spec(
        701,
        &format!(
            "echo \"$LSB_RESTART $LSB_OLD_JOBID $(cat $LSB_CHKPNT_DIR/chkpnt.done && echo saved)\" > {}",
            out.display()
        ),
        "",
    );
    spec.restart_from_dir = ck.join("700").to_string_lossy().into_owned();
    spec.restart_old_job = "700".into();
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(701, ReportKind::Finished).await;
    assert_eq!((fin.state, fin.exit_status), (64, 0), "{fin:?}");
    assert_eq!(read(&out).trim(), "Y 700 saved");
    // Moved, the old name a symbolic link to the new directory (as LSF).
    assert_eq!(
        std::fs::read_link(ck.join("700")).expect("a link"),
        ck.join("701")
    );
    assert!(ck.join("701/chkpnt.done").exists());

    // Built in, no checkpoint: the job does not run.
    std::fs::create_dir_all(ck.join("702")).expect("dir");
    let marker = h.work.join("ran.702");
    let spec = restart_spec(702, &format!("touch {}", marker.display()), "default");
    let e = h.start_job(EPOCH, spec).await.expect_err("no checkpoint");
    assert!(e.message().contains("chkpnt.done is missing"), "{e:?}");
    let sf = h.wait_report(702, ReportKind::StartFailed).await;
    assert!(sf.restart_failed, "{sf:?}");
    assert_eq!(
        sf.message,
        format!(
            "no checkpoint in {} (chkpnt.done is missing)",
            ck.join("702").display()
        )
    );
    assert!(!marker.exists());

    // No checkpoint directory at all.
    let sf_msg = h
        .start_job(EPOCH, restart_spec(703, "true", ""))
        .await
        .expect_err("no directory");
    assert!(
        sf_msg.message().contains("no checkpoint directory"),
        "{sf_msg:?}"
    );
    assert!(
        h.wait_report(703, ReportKind::StartFailed)
            .await
            .restart_failed
    );

    // erestart.<m> writes LSB_RESTART_CMD: that command runs instead of the job file,
    // with the job's environment.
    let cmd_out = h.work.join("cmd.704");
    h.install(
        "erestart.cmd",
        &format!(
            "#!/bin/sh\necho \"ARGS $*\" > {args}\n\
             echo 'LSB_RESTART_CMD=echo \"restarted $LSB_RESTART $LSB_JOBID\" > {out}' \
             > \"$LSB_CHKPNT_DIR/.restart_cmd\"\n",
            args = h.work.join("args.704").display(),
            out = cmd_out.display()
        ),
    );
    std::fs::create_dir_all(ck.join("704")).expect("dir");
    let marker = h.work.join("ran.704");
    let mut spec = restart_spec(704, &format!("touch {}", marker.display()), "cmd");
    spec.restart_force = true;
    h.start_job(EPOCH, spec).await.expect("start");
    let fin = h.wait_report(704, ReportKind::Finished).await;
    assert_eq!(fin.state, 64, "{fin:?}");
    assert_eq!(read(&cmd_out).trim(), "restarted Y 704");
    assert_eq!(
        read(&h.work.join("args.704")).trim(),
        format!("ARGS -f {}", ck.join("704").display())
    );
    assert!(!marker.exists(), "the job file did not run");

    // A failing erestart: START_FAILED with its last line of errors.
    h.install(
        "erestart.fail",
        "#!/bin/sh\necho 'cannot restore' >&2\nexit 2\n",
    );
    std::fs::create_dir_all(ck.join("705")).expect("dir");
    let _ = h
        .start_job(EPOCH, restart_spec(705, "true", "fail"))
        .await
        .expect_err("erestart fails");
    let sf = h.wait_report(705, ReportKind::StartFailed).await;
    assert!(sf.restart_failed, "{sf:?}");
    assert_eq!(
        sf.message,
        "erestart.fail exited with status 2: cannot restore"
    );

    // Killed while erestart runs: erestart goes and the job never runs (its start
    // fails, not as a failed restart: mbatchd ends it).
    h.install("erestart.slow", "#!/bin/sh\nsleep 30\n");
    std::fs::create_dir_all(ck.join("706")).expect("dir");
    let marker = h.work.join("ran.706");
    let spec = restart_spec(706, &format!("touch {}", marker.display()), "slow");
    let (started, found) = tokio::join!(h.start_job(EPOCH, spec), async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        h.signal(706, SignalAction::Kill, "TERM_OWNER").await
    });
    assert!(found, "the restarting job is held");
    let e = started.expect_err("killed");
    assert!(
        e.message().contains("killed (TERM_OWNER) while restarting"),
        "{e:?}"
    );
    let sf = h.wait_report(706, ReportKind::StartFailed).await;
    assert!(!sf.restart_failed, "{sf:?}");
    assert!(!marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_method_output_goes_to_the_checkpoint_directory() {
    let h = Harness::start_full(
        "sbd-ck-keep",
        None,
        "BASALT_CHKPNT_TIMEOUT=2\nLSB_ECHKPNT_KEEP_OUTPUT=Y",
    )
    .await;
    h.install(
        "echkpnt.noisy",
        "#!/bin/sh\necho saved\necho 'no room' >&2\nexit 4\n",
    );
    let (go, wait_go) = h.until_go();
    let spec = h.chkpnt_spec(631, &wait_go, "noisy");
    let dir = PathBuf::from(&spec.chkpnt_dir);
    h.start_job(EPOCH, spec).await.expect("start");
    h.wait_report(631, ReportKind::Started).await;
    assert!(h.chkpnt(631, false, false, false).await);
    let r = h.wait_chkpnts(631, 1).await;
    assert!(!r[0].chkpnt_ok, "{r:?}");
    assert_eq!(
        r[0].message,
        format!(
            "echkpnt.noisy exited with status 4 (its errors are in {}/echkpnt.err)",
            dir.display()
        )
    );
    assert_eq!(read(&dir.join("echkpnt.out")), "saved\n");
    assert_eq!(read(&dir.join("echkpnt.err")), "no room\n");
    std::fs::write(&go, "").expect("go");
    h.wait_report(631, ReportKind::Finished).await;
}

/// Seed 001: "eexec is run at job start-up and completion time, and when checkpointing
/// is initiated. The environment variable LS_EXEC_T is set to START, END, and CHKPNT,
/// respectively" — with what the esubs printed on its standard input; the checkpoint
/// method runs after it, whatever its exit status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eexec_runs_with_ls_exec_t_chkpnt_when_checkpointing_is_initiated() {
    let h = Harness::start_full("sbd-ck-eexec", None, CONF).await;
    let log = h.work.join("eexec.log");
    h.install(
        "eexec",
        &format!(
            "#!/bin/sh\necho \"$LS_EXEC_T $(cat) $LSB_JOBID\" >> {}\nexit 7\n",
            log.display()
        ),
    );
    h.install(
        "echkpnt.after",
        &format!(
            "#!/bin/sh\necho \"echkpnt $LS_EXEC_T\" >> {}\n",
            log.display()
        ),
    );
    let (go, wait_go) = h.until_go();
    // The job itself runs (after eexec START) once `running` exists.
    let running = h.work.join("running.641");
    let cmd = format!("touch {}; {wait_go}", running.display());
    let mut spec = h.chkpnt_spec(641, &cmd, "after");
    spec.eexec_input = "from esub".into();
    h.start_job(EPOCH, spec).await.expect("start");
    h.wait_report(641, ReportKind::Started).await;
    wait_file(&running).await;
    assert!(h.chkpnt(641, false, false, false).await);
    let r = h.wait_chkpnts(641, 1).await;
    assert!(r[0].chkpnt_ok, "{r:?}");
    assert_eq!(
        read(&log),
        "START from esub 641\nCHKPNT from esub 641\nechkpnt \n",
        "eexec START, then CHKPNT before the method (which does not see LS_EXEC_T)"
    );
    std::fs::write(&go, "").expect("go");
    h.wait_report(641, ReportKind::Finished).await;
}
