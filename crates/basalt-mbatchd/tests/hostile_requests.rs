//! Issue 31: any user can crash mbatchd — no longer. A real mbatchd (in this process, with
//! a real LIM and its event log on disk) gets the requests a hostile user can send, through
//! its gRPC service: the reported crash (a dependency expression nested 5,000 deep), then
//! a fixed set of generated requests from the fuzz target `mbatchd_requests`
//! (`fuzz/src/mbatchd.rs`), each of which must be answered while mbatchd keeps serving.

#[path = "../../../fuzz/src/mbatchd.rs"]
#[allow(dead_code)]
mod hostile;

use basalt_proto::mbatchd as pb;
use hostile::{Op, Target};

fn submission(depend: &str, job_name: &str) -> pb::SubmitRequest {
    pb::SubmitRequest {
        submit_token: String::new(),
        job: Some(pb::JobSubmission {
            command: "true".into(),
            job_name: job_name.into(),
            depend_cond: depend.into(),
            cwd: "/tmp".into(),
            env: vec!["PATH=/usr/bin:/bin".into()],
            rlimits: vec![-1; 11],
            from_host: "hostA".into(),
            ..Default::default()
        }),
    }
}

/// How many generated requests the stable run sends (the fuzz target sends any number).
const GENERATED: usize = 400;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_are_answered_and_mbatchd_keeps_serving() -> anyhow::Result<()> {
    let mut t = Target::start("mbd-hostile").await?;

    // The reported crash: depth 2,000 was accepted, 5,000 and 10,000 overflowed the stack.
    for depth in [2_000usize, 5_000, 10_000, 100_000] {
        let dep = format!("{}done(1){}", "(".repeat(depth), ")".repeat(depth));
        let e = t
            .user
            .submit(submission(&dep, "deep"))
            .await
            .expect_err("an over-deep dependency is refused");
        assert_eq!(
            e.message(),
            "Bad dependency condition syntax",
            "depth {depth}"
        );
        t.serving().await.map_err(anyhow::Error::msg)?;
    }
    let e = t
        .user
        .submit(submission("", &"j".repeat(5_000)))
        .await
        .expect_err("an over-long job name is refused");
    assert_eq!(e.message(), "Bad job name");
    // Nothing refused was logged: no job exists.
    let jobs = t
        .user
        .jobs(pb::JobsRequest {
            user: "all".into(),
            states: u32::MAX,
            ..Default::default()
        })
        .await?
        .into_inner();
    assert!(jobs.jobs.is_empty(), "{:?}", jobs.jobs.len());
    let events = std::fs::read_to_string(t.config.logdir().join("lsb.events")).unwrap_or_default();
    assert!(!events.contains("\"JOB_NEW\""), "a refused job was logged");

    // Generated requests, from fixed seeds: every one answered, mbatchd still serving.
    let mut sent = 0;
    let mut accepted = 0;
    let mut seed = 1u64;
    while sent < GENERATED {
        let ops: Vec<Op> = hostile::ops(&hostile::bytes(seed, 4096), 25);
        seed += 1;
        sent += ops.len();
        accepted += t.drive(&ops).await.map_err(anyhow::Error::msg)?;
        t.kill_all().await;
    }
    // The fuzz target's seeds and regressions (found failures stay as regressions).
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    for dir in ["seeds/mbatchd_requests", "regressions/mbatchd_requests"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir)) else {
            continue;
        };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let ops = hostile::ops(&std::fs::read(&f)?, 64);
            sent += ops.len();
            accepted += t
                .drive(&ops)
                .await
                .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
            t.kill_all().await;
        }
    }
    eprintln!("{sent} generated requests answered, {accepted} accepted");
    assert!(
        accepted > 0 && accepted < sent,
        "{accepted} of {sent} accepted"
    );
    t.stop().await;
    Ok(())
}
