//! DESIGN.md target: replay of a 1,000,000-event lsb.events in under 2 s. Ignored by
//! default (it writes ~150 MB); run with
//! `cargo test -p basalt-eventlog --release --test replay_speed -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use basalt_eventlog::*;

/// The records of one job's life, as mbatchd logs them.
fn job_life(id: u64, t: i64) -> Vec<Record> {
    let h = || Header::new(t);
    vec![
        JobNew {
            header: h(),
            job_id: id,
            user_id: 1000,
            user_name: "alice".into(),
            queue: "normal".into(),
            res_req: "select[mem>100]".into(),
            from_host: "submit1".into(),
            cwd: "/home/alice/project/run".into(),
            out_file: "/home/alice/project/run/out.%J".into(),
            sub_home_dir: "/home/alice".into(),
            job_file: job_file_name(t, id),
            job_name: format!("job{id}"),
            command: "python train.py --epochs 10".into(),
            project_name: "default".into(),
            ..JobNew::default()
        }
        .into(),
        JobStart {
            header: h(),
            job_id: id,
            j_status: 4,
            host_factor: 100.0,
            exec_hosts: vec!["node017".into()],
            ..JobStart::default()
        }
        .into(),
        JobStartAccept {
            header: h(),
            job_id: id,
            job_pid: 25592,
            job_pgid: 25592,
            ..JobStartAccept::default()
        }
        .into(),
        JobExecute {
            header: h(),
            job_id: id,
            exec_uid: 1000,
            job_pgid: 25592,
            exec_cwd: "/home/alice/project/run".into(),
            exec_home: "/home/alice".into(),
            exec_username: "alice".into(),
            job_pid: 25592,
            idx: 0,
        }
        .into(),
        JobStatus {
            header: h(),
            job_id: id,
            j_status: 64,
            cpu_time: 12.5,
            end_time: t,
            rusage: Some(Rusage {
                utime: 10.0,
                stime: 2.5,
                maxrss: 40960.0,
                ..Rusage::default()
            }),
            ..JobStatus::default()
        }
        .into(),
        JobStatus {
            header: h(),
            job_id: id,
            j_status: 192,
            ..JobStatus::default()
        }
        .into(),
        JobClean {
            header: h(),
            job_id: id,
            idx: 0,
        }
        .into(),
    ]
}

#[test]
#[ignore = "writes ~150 MB; a release-mode performance check"]
fn replay_a_million_events() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    let mut n = 0usize;
    let mut id = 1;
    while n < 1_000_000 {
        let mut batch = Vec::with_capacity(7000);
        for _ in 0..1000 {
            batch.extend(job_life(id, 1_795_339_535 + id as i64));
            id += 1;
        }
        n += batch.len();
        log.append(&batch).unwrap();
    }
    let size = log.size();
    drop(log);

    let start = Instant::now();
    let mut count = 0usize;
    let (_log, info) = EventLog::open_with(dir.path(), |_| count += 1).unwrap();
    let took = start.elapsed();
    println!(
        "replayed {} records ({} MB) in {:.3} s",
        info.records,
        size / 1_000_000,
        took.as_secs_f64()
    );
    assert_eq!(count, n);
    if !cfg!(debug_assertions) {
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
}
