//! mbatchd and its event log under failure: a full disk (a small tmpfs mounted on the log
//! directory; needs root), a second mbatchd trying the same log directory, and a lock
//! taken over behind a running mbatchd's back.

mod common;

use basalt_proto::mbatchd as pb;
use basalt_testkit::wait_for_async;
use common::*;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A tmpfs mounted for the test; unmounted (lazily) when dropped.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

fn mount_tmpfs(dir: &Path, size: &str) -> anyhow::Result<Mount> {
    std::fs::create_dir_all(dir)?;
    let st = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "basalt-test"])
        .arg(dir)
        .status()?;
    anyhow::ensure!(st.success(), "mount -t tmpfs on {} failed", dir.display());
    Ok(Mount(dir.to_path_buf()))
}

fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// Fill the filesystem holding `dir` with a file until a write fails.
fn fill(dir: &Path) -> anyhow::Result<PathBuf> {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path)?;
    let chunk = vec![b'x'; 4096];
    for _ in 0..1_000_000 {
        if f.write_all(&chunk).is_err() || f.sync_data().is_err() {
            return Ok(path);
        }
    }
    anyhow::bail!("{} never filled up", dir.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_full_refuses_new_work_keeps_queries_and_recovers() -> anyhow::Result<()> {
    if !is_root() {
        eprintln!(
            "SKIPPED disk_full_refuses_new_work_keeps_queries_and_recovers: \
             mounting a small tmpfs needs root"
        );
        return Ok(());
    }
    let mut mount = None;
    let s = setup_with("mbd-diskfull", |envdir| {
        mount = Some(mount_tmpfs(&load_config(envdir)?.logdir(), "1m")?);
        Ok(())
    })
    .await?;
    let _mount = mount;
    let logdir = s.config.logdir();
    let mut client = s.client.clone();

    let mut acked: Vec<u64> = Vec::new();
    for i in 0..3 {
        let r = client
            .submit(submission("long sleep", &format!("before{i}"), ""))
            .await?;
        acked.push(r.into_inner().job_id);
    }
    let mut with_token = submission("long sleep", "tokened", "");
    with_token.submit_token = "before-the-disk-filled".into();
    let tokened = client.submit(with_token.clone()).await?.into_inner();
    acked.push(tokened.job_id);

    let filler = fill(&logdir)?;
    // The last page of lsb.events may still take a record or two; keep submitting until
    // the log refuses.
    let mut refusal = None;
    for i in 0..500 {
        match client
            .submit(submission("long sleep", &format!("full{i}"), ""))
            .await
        {
            Ok(r) => acked.push(r.into_inner().job_id),
            Err(st) => {
                refusal = Some(st);
                break;
            }
        }
    }
    let st = refusal.ok_or_else(|| anyhow::anyhow!("no submission was refused"))?;
    assert_eq!(st.code(), tonic::Code::ResourceExhausted, "{st:?}");
    assert!(
        st.message().contains("Cannot write the event log")
            && st.message().contains("No space left"),
        "{}",
        st.message()
    );
    // Issue 49 item 8: a resend of a logged submission (its bsub lost the answer) is
    // answered with its job even now: it needs no new event, and bsub then never
    // reports a job that exists as not submitted.
    let again = client.submit(with_token.clone()).await?.into_inner();
    assert_eq!(again, tokened, "a resend while the disk is full");

    // Queries still work and show every acknowledged job.
    let jobs = all_jobs(&s.config)
        .await
        .ok_or_else(|| anyhow::anyhow!("bjobs failed while the disk is full"))?;
    for id in &acked {
        assert!(jobs.iter().any(|j| j.job_id == *id), "job {id} missing");
    }
    // Other changes are refused as well, with the reason.
    let kill = client
        .signal(pb::SignalRequest {
            ids: vec![pb::JobRef {
                job_id: acked[0],
                idx: 0,
                has_idx: false,
            }],
            kind: pb::SignalKind::Kill as i32,
            ..Default::default()
        })
        .await;
    let st = kill
        .err()
        .ok_or_else(|| anyhow::anyhow!("bkill accepted"))?;
    assert_eq!(st.code(), tonic::Code::ResourceExhausted, "{st:?}");

    // Room again: submissions are accepted within a few probes.
    std::fs::remove_file(&filler)?;
    let config = s.config.clone();
    let later = wait_for_async(
        "a submission to be accepted again",
        Duration::from_secs(30),
        || {
            let config = config.clone();
            async move {
                let Some(mut c) = user_client(&config, Duration::from_secs(2)) else {
                    return (None, "no channel".into());
                };
                match c.submit(submission("long sleep", "after", "")).await {
                    Ok(r) => (Some(r.into_inner().job_id), String::new()),
                    Err(st) => (None, format!("{:?}: {}", st.code(), st.message())),
                }
            }
        },
    )
    .await?;
    acked.push(later);

    let mut sorted = acked.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        acked.len(),
        "a job id was given twice: {acked:?}"
    );

    // After a restart, exactly the acknowledged jobs exist.
    let _ = s.mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), s.mbd.task).await;
    let mbd = start_mbd(s.config.clone()).await?;
    let want = acked.clone();
    let jobs = wait_jobs(&s.config, "the acknowledged jobs after a restart", |jobs| {
        want.iter().all(|id| jobs.iter().any(|j| j.job_id == *id))
    })
    .await?;
    let names: Vec<&str> = jobs.iter().map(|j| j.job_name.as_str()).collect();
    assert_eq!(
        jobs.len(),
        acked.len(),
        "only acknowledged jobs survive: {names:?}"
    );
    let _ = mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), mbd.task).await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_mbatchd_cannot_open_the_log() -> anyhow::Result<()> {
    let s = setup("mbd-lock2").await?;
    let logdir = s.config.logdir();
    let mut client = s.client.clone();
    client.submit(submission("long sleep", "one", "")).await?;
    let before = std::fs::read(logdir.join("lsb.events"))?;

    // Another host's mbatchd: it waits for heartbeats to stop, which they do not.
    let dir = logdir.clone();
    let started = std::time::Instant::now();
    let other = tokio::task::spawn_blocking(move || {
        basalt_mbatchd::journal::open(&dir, "hostB", basalt_mbatchd::journal::Options::default())
            .map(|_| ())
    })
    .await?;
    let err = other
        .err()
        .ok_or_else(|| anyhow::anyhow!("the second open succeeded"))?;
    assert!(
        matches!(err, basalt_mbatchd::journal::JournalError::Held { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("hostA:"), "{err}");
    assert!(started.elapsed() >= Duration::from_secs(5));
    let after = std::fs::read(logdir.join("lsb.events"))?;
    assert!(
        after.starts_with(&before),
        "the log was modified by the loser"
    );

    // The first mbatchd still works.
    client.submit(submission("long sleep", "two", "")).await?;
    let _ = s.mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), s.mbd.task).await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mbatchd_stops_writing_when_its_lock_is_taken_over() -> anyhow::Result<()> {
    let s = setup("mbd-locklost").await?;
    let logdir = s.config.logdir();
    let mut client = s.client.clone();
    client.submit(submission("long sleep", "one", "")).await?;

    // Another mbatchd judged the lock stale and replaced it.
    let lock = logdir.join(basalt_eventlog::LOCK_FILE);
    std::fs::rename(&lock, logdir.join("old-lock"))?;
    std::fs::write(&lock, "hostB:4242")?;
    let len = std::fs::metadata(logdir.join("lsb.events"))?.len();

    let r = client.submit(submission("long sleep", "two", "")).await;
    assert!(r.is_err(), "a submission was acknowledged without the lock");
    let ended = tokio::time::timeout(Duration::from_secs(10), s.mbd.task).await;
    assert!(ended.is_ok(), "mbatchd kept running without its lock");
    assert_eq!(
        std::fs::metadata(logdir.join("lsb.events"))?.len(),
        len,
        "mbatchd wrote to the log after losing its lock"
    );
    assert_eq!(std::fs::read_to_string(&lock)?, "hostB:4242");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_log_carries_on_when_the_shared_copy_is_full_and_resyncs() -> anyhow::Result<()> {
    if !is_root() {
        eprintln!(
            "SKIPPED duplicate_log_carries_on_when_the_shared_copy_is_full_and_resyncs: \
             mounting a small tmpfs needs root"
        );
        return Ok(());
    }
    let mut mount = None;
    let mut local = PathBuf::new();
    let s = setup_with("mbd-duplog", |envdir| {
        local = envdir.parent().unwrap_or(envdir).join("local-logdir");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(envdir.join("lsf.conf"))?;
        writeln!(f, "LSB_LOCALDIR={}", local.display())?;
        mount = Some(mount_tmpfs(&load_config(envdir)?.logdir(), "1m")?);
        Ok(())
    })
    .await?;
    let _mount = mount;
    let shared = s.config.logdir();
    assert_eq!(s.config.local_logdir().as_deref(), Some(local.as_path()));
    let mut client = s.client.clone();
    let mut acked = Vec::new();
    for i in 0..3 {
        let r = client
            .submit(submission("long sleep", &format!("before{i}"), ""))
            .await?;
        acked.push(r.into_inner().job_id);
    }
    let events = |dir: &Path| std::fs::read(dir.join("lsb.events")).unwrap_or_default();
    assert_eq!(events(&shared), events(&local), "the copies differ");

    // The shared copy cannot take anything: work goes on, logged in the local copy.
    let filler = fill(&shared)?;
    for i in 0..20 {
        let r = client
            .submit(submission("long sleep", &format!("full{i}"), ""))
            .await?;
        acked.push(r.into_inner().job_id);
    }
    assert!(events(&local).len() > events(&shared).len());

    // Room again: the shared copy is brought up to date.
    std::fs::remove_file(&filler)?;
    let (sh, lo) = (shared.clone(), local.clone());
    wait_for_async(
        "the shared copy to catch up",
        Duration::from_secs(30),
        || {
            let (sh, lo) = (sh.clone(), lo.clone());
            async move {
                let same = events(&sh) == events(&lo);
                (same.then_some(()), "copies differ".into())
            }
        },
    )
    .await?;
    client.submit(submission("long sleep", "after", "")).await?;
    assert_eq!(events(&shared), events(&local));

    // A restart from the local copy alone (the shared one lost its last records).
    let _ = s.mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), s.mbd.task).await;
    let full = events(&local);
    let lines: Vec<&[u8]> = full.split_inclusive(|&b| b == b'\n').collect();
    let cut: Vec<u8> = lines[..lines.len() - 5].concat();
    std::fs::write(shared.join("lsb.events"), &cut)?;
    let mbd = start_mbd(s.config.clone()).await?;
    let want = acked.clone();
    wait_jobs(
        &s.config,
        "every acknowledged job after a restart",
        |jobs| want.iter().all(|id| jobs.iter().any(|j| j.job_id == *id)),
    )
    .await?;
    assert!(
        events(&shared).starts_with(&full),
        "the shared copy was not repaired"
    );
    let _ = mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), mbd.task).await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn torn_tail_is_cut_and_a_damaged_record_needs_recover() -> anyhow::Result<()> {
    let s = setup("mbd-damage").await?;
    let logdir = s.config.logdir();
    let mut client = s.client.clone();
    let mut ids = Vec::new();
    for i in 0..4 {
        let r = client
            .submit(submission("long sleep", &format!("j{i}"), ""))
            .await?;
        ids.push(r.into_inner().job_id);
    }
    let _ = s.mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), s.mbd.task).await;
    let path = logdir.join("lsb.events");

    // A torn tail (a crash in the middle of a write): cut off, everything else kept.
    let good = std::fs::read(&path)?;
    let mut torn = good.clone();
    torn.extend_from_slice(b"\"JOB_NEW\" \"10.1\" 17953 99 0 3355");
    std::fs::write(&path, &torn)?;
    let mbd = start_mbd(s.config.clone()).await?;
    let want = ids.clone();
    wait_jobs(&s.config, "the jobs after a torn tail", |jobs| {
        want.iter().all(|id| jobs.iter().any(|j| j.job_id == *id))
    })
    .await?;
    let now = std::fs::read(&path)?;
    assert!(now.starts_with(&good), "an intact record was lost");
    assert!(
        !now.windows(5).any(|w| w == b"17953"),
        "the torn tail is still there"
    );
    let _ = mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), mbd.task).await;

    // A damaged record with good ones after it: mbatchd refuses to start.
    let text = std::fs::read_to_string(&path)?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let victim = lines
        .iter()
        .position(|l| l.starts_with("\"JOB_NEW\"") && l.contains("\"j1\""))
        .ok_or_else(|| anyhow::anyhow!("no JOB_NEW of j1"))?;
    lines[victim] = lines[victim].replacen("\"JOB_NEW\" \"10.1\" ", "\"JOB_NEW\" \"10.1\" x", 1);
    std::fs::write(&path, lines.join("\n") + "\n")?;
    let addr = basalt_runtime::mbd_addr(&s.config, "hostA")?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let r = basalt_mbatchd::run(s.config.clone(), "hostA", listener, std::future::pending()).await;
    let err = r
        .err()
        .ok_or_else(|| anyhow::anyhow!("mbatchd started over a damaged log"))?;
    let msg = err.to_string();
    assert!(msg.contains(&format!("lsb.events:{}", victim + 1)), "{msg}");
    assert!(msg.contains("mbatchd --recover"), "{msg}");

    // mbatchd --recover keeps every intact record and says what it dropped.
    let envdir = s.lims.dir.path().join("conf");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mbatchd"))
        .args(["--recover", "-H", "hostA", "-d"])
        .arg(&envdir)
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("dropped 1 line(s)") && stdout.contains(&format!("line {}", victim + 1)),
        "{stdout}"
    );
    let mbd = start_mbd(s.config.clone()).await?;
    let lost = ids[1];
    let want: Vec<u64> = ids.iter().copied().filter(|&i| i != lost).collect();
    let jobs = wait_jobs(&s.config, "the intact jobs after --recover", |jobs| {
        want.iter().all(|id| jobs.iter().any(|j| j.job_id == *id))
    })
    .await?;
    assert!(
        jobs.iter().all(|j| j.job_id != lost),
        "the job of the dropped JOB_NEW came back"
    );
    let _ = mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), mbd.task).await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_submission_gets_the_job_it_created() -> anyhow::Result<()> {
    let s = setup("mbd-token").await?;
    let mut client = s.client.clone();
    let mut req = submission("long sleep", "once", "");
    req.submit_token = "hostA:42:abc:0123456789abcdef".into();
    let first = client.submit(req.clone()).await?.into_inner().job_id;
    let again = client.submit(req.clone()).await?.into_inner().job_id;
    assert_eq!(first, again, "a resend created another job");
    let other = client
        .submit(pb::SubmitRequest {
            submit_token: "hostA:42:abc:other".into(),
            ..req.clone()
        })
        .await?
        .into_inner()
        .job_id;
    assert_ne!(other, first);

    // The token is in the log: a restarted mbatchd still knows it.
    let _ = s.mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), s.mbd.task).await;
    let mbd = start_mbd(s.config.clone()).await?;
    let config = s.config.clone();
    let after = wait_for_async(
        "the restarted mbatchd to answer",
        Duration::from_secs(30),
        || {
            let (config, req) = (config.clone(), req.clone());
            async move {
                let Some(mut c) = user_client(&config, Duration::from_secs(2)) else {
                    return (None, "no channel".into());
                };
                match c.submit(req).await {
                    Ok(r) => (Some(r.into_inner().job_id), String::new()),
                    Err(st) => (None, st.message().to_owned()),
                }
            }
        },
    )
    .await?;
    assert_eq!(after, first, "the token was forgotten by the restart");
    let jobs = all_jobs(&s.config).await.unwrap_or_default();
    assert_eq!(jobs.iter().filter(|j| j.job_name == "once").count(), 2);
    let _ = mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), mbd.task).await;
    Ok(())
}

/// Issue 49 item 3: a submission token is the submitting user's own. Another user who
/// sends the same token gets a job of their own (never the first user's), each user's
/// resend gets their own job — after a restart (replay) too — and the answer to a resend
/// names the default queue as the first answer did. A token of the form a forwarded
/// MultiCluster job's carries (`mc:`) is refused, so no local submission can take a
/// forwarded job's place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue49_item3_submission_tokens_are_scoped_by_user() -> anyhow::Result<()> {
    if !is_root() {
        eprintln!(
            "SKIPPED issue49_item3_submission_tokens_are_scoped_by_user: a second user \
             submits only to a cluster run by root"
        );
        return Ok(());
    }
    let s = setup("mbd-token-scope").await?;
    let mut alice = s.client.clone();
    let mut mallory = client_as(&s.config, 4242, "mallory")?;
    let mut req = submission("long sleep", "mine", "");
    req.submit_token = "predictable-token-1".into();
    let first = alice.submit(req.clone()).await?.into_inner();
    assert!(first.default_queue, "{first:?}");
    let again = alice.submit(req.clone()).await?.into_inner();
    assert_eq!(again.job_id, first.job_id, "a resend created another job");
    assert_eq!(
        (again.queue.as_str(), again.default_queue),
        (first.queue.as_str(), true),
        "the resend's answer differs from the first: {again:?}"
    );

    // Mallory reuses alice's token: her own job, not alice's.
    let theirs = mallory.submit(req.clone()).await?.into_inner();
    assert_ne!(
        theirs.job_id, first.job_id,
        "mallory was answered with alice's job"
    );
    let theirs_again = mallory.submit(req.clone()).await?.into_inner();
    assert_eq!(theirs_again.job_id, theirs.job_id);
    let jobs = all_jobs(&s.config).await.unwrap_or_default();
    let owner = |id: u64| {
        jobs.iter()
            .find(|j| j.job_id == id)
            .map(|j| j.user.clone())
            .unwrap_or_default()
    };
    assert_eq!(owner(theirs.job_id), "mallory");
    assert_ne!(owner(first.job_id), "mallory");

    // A forwarded job's token cannot be sent by a user.
    let mut forged = req.clone();
    forged.submit_token = "mc:east:12.0:1".into();
    let st = alice
        .submit(forged)
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("a submission with an mc: token was accepted"))?;
    assert_eq!(st.code(), tonic::Code::InvalidArgument, "{st:?}");

    // A restarted mbatchd (the tokens rebuilt from lsb.events) answers the same.
    let _ = s.mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), s.mbd.task).await;
    let mbd = start_mbd(s.config.clone()).await?;
    let config = s.config.clone();
    let resend = |uid: u32, user: &'static str| {
        let (config, req) = (config.clone(), req.clone());
        async move {
            wait_for_async(
                "the restarted mbatchd to answer",
                Duration::from_secs(30),
                || {
                    let (config, req) = (config.clone(), req.clone());
                    async move {
                        let c = if uid == 0 {
                            user_client(&config, Duration::from_secs(2))
                        } else {
                            client_as(&config, uid, user).ok()
                        };
                        let Some(mut c) = c else {
                            return (None, "no channel".into());
                        };
                        match c.submit(req).await {
                            Ok(r) => (Some(r.into_inner()), String::new()),
                            Err(st) => (None, st.message().to_owned()),
                        }
                    }
                },
            )
            .await
        }
    };
    let a = resend(0, "").await?;
    assert_eq!(
        a.job_id, first.job_id,
        "alice's token was lost by the restart"
    );
    assert!(a.default_queue, "{a:?}");
    let m = resend(4242, "mallory").await?;
    assert_eq!(
        m.job_id, theirs.job_id,
        "mallory's token was lost by the restart"
    );
    let jobs = all_jobs(&s.config).await.unwrap_or_default();
    assert_eq!(jobs.iter().filter(|j| j.job_name == "mine").count(), 2);
    let _ = mbd.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), mbd.task).await;
    Ok(())
}
