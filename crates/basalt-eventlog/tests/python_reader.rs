//! An independent reader: `tests/independent_reader.py` (python3 stdlib, written from the
//! spec alone) reads an lsb.events written by Basalt; its view of every record (type,
//! version, field count, job id, JOB_NEW name and command) must match what was written.
//! Skipped, with a message saying why, when python3 is not installed.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use basalt_eventlog::*;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/independent_reader.py");

fn python3_available() -> Result<(), String> {
    match Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("`python3 --version` exited with {s}")),
        Err(e) => Err(format!("cannot run python3: {e}")),
    }
}

/// Run the script on `events` with a deadline; return its stdout.
fn run_reader(events: &Path, out: &Path) -> String {
    let stdout = std::fs::File::create(out).unwrap();
    let mut child = Command::new("python3")
        .arg(SCRIPT)
        .arg(events)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the python reader did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut err).unwrap();
    }
    assert!(status.success(), "python reader failed: {status}\n{err}");
    std::fs::read_to_string(out).unwrap()
}

fn records() -> Vec<Record> {
    let t = 1_795_339_535;
    let job = |id: u64, name: &str, command: &str, asked: &[&str]| JobNew {
        header: Header::new(t),
        job_id: id,
        user_id: 1000,
        user_name: "alice".into(),
        queue: "normal".into(),
        from_host: "vm".into(),
        cwd: "/home/alice/my run".into(),
        job_file: job_file_name(t, id),
        asked_hosts: asked.iter().map(|s| s.to_string()).collect(),
        job_name: name.into(),
        command: command.into(),
        project_name: "default".into(),
        specified_cwd: "/scratch/%J".into(),
        ..JobNew::default()
    };
    vec![
        LoadIndex {
            header: Header::new(t),
            names: vec!["r15s".into(), "r1m".into()],
        }
        .into(),
        MbdStart {
            header: Header::new(t),
            master: "vm".into(),
            cluster: "basalt".into(),
            num_hosts: 1,
            num_queues: 2,
        }
        .into(),
        job(101, "plain", "sleep 30", &[]).into(),
        job(
            102,
            "myjob",
            r#"env | grep -E "^LSB_|^LSF_|^LS_" | sort"#,
            &[],
        )
        .into(),
        job(
            103,
            "with \"quotes\" and  spaces",
            "echo \"\"\nline two",
            &["hostA", "hostB"],
        )
        .into(),
        JobStart {
            header: Header::new(t + 5),
            job_id: 101,
            j_status: 4,
            host_factor: 100.0,
            exec_hosts: vec!["vm".into(), "vm".into()],
            ..JobStart::default()
        }
        .into(),
        JobStatus {
            header: Header::new(t + 9),
            job_id: 101,
            j_status: 64,
            cpu_time: 0.0236,
            end_time: t + 9,
            rusage: Some(Rusage {
                utime: 0.5,
                ..Rusage::default()
            }),
            mem: Some(MemUsage {
                max_mem: 10,
                avg_mem: 5,
            }),
            ..JobStatus::default()
        }
        .into(),
        JobSwitch {
            header: Header::new(t + 10),
            user_id: 1000,
            job_id: 102,
            queue: "lowq".into(),
            idx: 0,
            user_name: "alice".into(),
        }
        .into(),
        JobMove {
            header: Header::new(t + 11),
            user_id: 1000,
            job_id: 103,
            position: 1,
            base: 1,
            idx: 0,
            user_name: "alice".into(),
        }
        .into(),
        QueueCtrl {
            header: Header::new(t + 12),
            op_code: 2,
            queue: "lowq".into(),
            user_id: 0,
            user_name: "root".into(),
            message: "said \"no\"".into(),
        }
        .into(),
        LogSwitch {
            header: Header::new(t + 13),
            last_job_id: 103,
            fairshare: vec![],
        }
        .into(),
    ]
}

#[test]
fn python_reader_agrees() {
    if let Err(why) = python3_available() {
        eprintln!("SKIPPED python_reader_agrees: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let recs = records();
    let (mut log, _) = EventLog::open(dir.path()).unwrap();
    log.append(&recs).unwrap();
    drop(log);
    let events = dir.path().join(EVENTS_FILE);
    let text = std::fs::read_to_string(&events).unwrap();
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), recs.len());

    let out = run_reader(&events, &dir.path().join("reader.out"));
    let seen: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), recs.len(), "{out}");
    for (i, ((rec, line), v)) in recs.iter().zip(&lines).zip(&seen).enumerate() {
        let ctx = format!("record {i}: {line}\npython: {v}");
        assert_eq!(v["line"], i + 2, "{ctx}");
        assert_eq!(v["type"], rec.kind(), "{ctx}");
        assert_eq!(v["version"], "10.1", "{ctx}");
        assert_eq!(v["nfields"], split_fields(line).unwrap().len(), "{ctx}");
        match rec.job_id() {
            Some(id) => assert_eq!(v["job_id"], id, "{ctx}"),
            None => assert!(v.get("job_id").is_none(), "{ctx}"),
        }
        if let Record::JobNew(j) = rec {
            assert_eq!(v["job_name"], j.job_name.as_str(), "{ctx}");
            assert_eq!(v["command"], j.command.replace('\n', ""), "{ctx}");
        }
    }
}
