//! Issue 28's acceptance on the pure scheduler: a history with a known answer (a queue
//! whose QJOB_LIMIT the changed configuration lifts) gives the wait times worked out by
//! hand; the unchanged configuration replays the recorded dispatch order. The histories
//! are lsb.events files written by the scheduler itself on a simulated clock, read back
//! as any log is.

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use basalt_sched::{SchedConfig, Submission};
use basalt_whatif::{SimOptions, Workload, compare, read_events, simulate};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

const T0: i64 = 1_800_000_000;

/// A cluster of `hosts` hosts with queues `sections` added and lsb.params `params`.
fn config(top: &Path, hosts: usize, sections: &str, params: &str) -> SchedConfig {
    basalt_whatif::load_config(&envdir(top, hosts, sections, params)).expect("load")
}

/// The same, written under `top`: its `LSF_ENVDIR`.
fn envdir(top: &Path, hosts: usize, sections: &str, params: &str) -> PathBuf {
    let spec = (0..hosts)
        .map(|i| DefaultHost {
            name: format!("host{i}"),
            address: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 9, 1 + i as u8))),
            server: true,
        })
        .collect();
    let envdir = DefaultCluster::new("whatif", "root", spec)
        .write(top)
        .expect("config");
    let find = |name: &str| -> PathBuf {
        fn walk(d: &Path, name: &str) -> Option<PathBuf> {
            for e in std::fs::read_dir(d).ok()?.flatten() {
                let p = e.path();
                if p.is_dir() {
                    if let Some(f) = walk(&p, name) {
                        return Some(f);
                    }
                } else if p.file_name().is_some_and(|n| n == name) {
                    return Some(p);
                }
            }
            None
        }
        walk(top, name).expect(name)
    };
    let append = |file: &str, text: &str| {
        let p = find(file);
        let mut all = std::fs::read_to_string(&p).expect("read");
        all.push_str(text);
        std::fs::write(&p, all).expect("write");
    };
    append("lsb.queues", sections);
    if !params.is_empty() {
        let p = find("lsb.params");
        let all = std::fs::read_to_string(&p).expect("read");
        std::fs::write(
            &p,
            all.replace("End Parameters", &format!("{params}\nEnd Parameters")),
        )
        .expect("write");
    }
    envdir
}

/// A workload built by hand: (submit offset s, queue, user, run s) per job.
fn workload(jobs: &[(i64, &str, &str, i64)]) -> Workload {
    let mut w = Workload {
        first: T0,
        last: T0,
        ..Default::default()
    };
    for (i, (at, queue, user, run)) in jobs.iter().enumerate() {
        let id = i as u64 + 1;
        let sub = Submission {
            user: (*user).into(),
            uid: 1000,
            queue: (*queue).into(),
            command: format!("job{id}").into(),
            rlimits: [-1; 11].into(),
            num_processors: 1,
            max_processors: 1,
            submit_time: T0 + at,
            job_file: format!("{}.{id}", T0 + at).into(),
            ..Default::default()
        };
        w.add_job(T0 + at, id, sub, *run);
    }
    w
}

/// Run `w` under `cfg` as "reality" and write what the scheduler logged as an
/// lsb.events file; read it back as a workload.
fn history(dir: &Path, cfg: &SchedConfig, w: &Workload, hosts: &[(String, u32)]) -> Workload {
    let opts = SimOptions {
        hosts: hosts.to_vec(),
        keep_log: true,
        ..Default::default()
    };
    let r = simulate(cfg, w, &opts);
    let mut text =
        String::from("#                                                                 \n");
    for ev in &r.log {
        text.push_str(&basalt_records::to_record(ev).to_line());
        text.push('\n');
    }
    let path = dir.join("lsb.events");
    std::fs::write(&path, text).expect("write log");
    let events = read_events(&[path]).expect("read log");
    Workload::from_events(&events, None, None)
}

const QUEUES: &str = "\nBegin Queue\nQUEUE_NAME = limited\nPRIORITY = 30\nQJOB_LIMIT = 1\nEnd Queue\n\
                      \nBegin Queue\nQUEUE_NAME = open\nPRIORITY = 30\nEnd Queue\n";
const LIFTED: &str = "\nBegin Queue\nQUEUE_NAME = limited\nPRIORITY = 30\nEnd Queue\n\
                      \nBegin Queue\nQUEUE_NAME = open\nPRIORITY = 30\nEnd Queue\n";

/// Eight one-minute jobs submitted together to a queue limited to one running job, on a
/// 4-slot host: they ran one after another (waits 0, 60, ... 420 s: mean 210 s). With the
/// limit lifted four run at once: waits 0 (4 jobs) and 60 s (4 jobs), mean 30 s; the
/// other queue's jobs and users are reported too.
#[test]
fn lifting_a_queue_slot_limit_gives_the_wait_times_worked_out_by_hand() {
    let dir = tempfile::tempdir().expect("tmp");
    let a = config(&dir.path().join("a"), 1, QUEUES, "JOB_ACCEPT_INTERVAL = 0");
    let b = config(&dir.path().join("b"), 1, LIFTED, "JOB_ACCEPT_INTERVAL = 0");
    let hosts = vec![("host0".to_owned(), 4)];
    let mut jobs: Vec<(i64, &str, &str, i64)> =
        (0..8).map(|_| (0, "limited", "alice", 60)).collect();
    jobs.push((1000, "open", "bob", 30));
    let w = history(dir.path(), &a, &workload(&jobs), &hosts);
    assert_eq!(w.jobs.len(), 9);
    assert_eq!(w.host_peak.get("host0"), Some(&1));
    let opts = SimOptions {
        hosts: hosts.clone(),
        ..Default::default()
    };
    let c = compare(&w, &b, None, &opts);
    let (before, after) = (&c.before.queues["limited"], &c.after.queues["limited"]);
    assert_eq!((before.jobs, before.started), (8, 8));
    assert_eq!(before.wait_mean, 210.0, "{before:?}");
    assert_eq!(before.wait_max, 420.0);
    assert_eq!(after.wait_mean, 30.0, "{after:?}");
    assert_eq!(after.wait_max, 60.0);
    assert_eq!(after.wait_p50, 60.0);
    assert_eq!(c.after.queues["open"].wait_max, 0.0);
    assert_eq!(c.after.users["alice"].jobs, 8);
    // Against a baseline configuration instead of the log: the same answer.
    let c2 = compare(&w, &b, Some(&a), &opts);
    assert_eq!(c2.before.queues["limited"].wait_mean, 210.0);
    assert_eq!(c2.after.queues["limited"].wait_mean, 30.0);
    let table = c.table();
    assert!(table.contains("queue limited"), "{table}");
    assert!(
        table.contains("210 -> 30") || table.contains("240 -> 60"),
        "{table}"
    );
    let json = c.json();
    assert_eq!(json["after"]["queues"]["limited"]["wait_mean"], 30.0);

    // The timelines: 7 slots pending behind the limit at the start as recorded, at most
    // 4 (the host's slots) lifted, none after the eighth minute either way.
    let peak = |tl: &[basalt_whatif::sim::Sample]| tl.iter().map(|s| s.pending).max();
    assert_eq!(peak(&c.before.timeline), Some(7), "{:?}", c.before.timeline);
    assert_eq!(c.before.timeline[0].running_slots, 1);
    assert!(
        peak(&c.after.timeline).is_some_and(|p| p <= 4),
        "{:?}",
        c.after.timeline
    );
    assert!(c.after.timeline.iter().all(|s| s.running_slots <= 4));
    assert!(c.after.timeline.iter().any(|s| s.running_slots == 4));
    for tl in [&c.before.timeline, &c.after.timeline] {
        assert!(tl.len() > 100, "{}", tl.len());
        assert!(
            tl.iter()
                .filter(|s| s.t >= T0 + 480)
                .all(|s| s.pending == 0)
        );
    }
    let svg = c.plot_svg().expect("plot");
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("recorded (1 slots)") && svg.contains("what-if (4 slots)"));
    assert!(svg.contains("time since the start of the window (minutes)"));
    let svg = c2.plot_svg().expect("plot");
    assert!(svg.contains("baseline (4 slots)"), "{svg}");
}

/// The admin guide's example (docs/img/whatif-example.svg): four hours of bursts, every
/// quarter of an hour six 10-minute jobs to a queue limited to two running jobs and two
/// 30-minute jobs to an open one, on a host of 8 slots. Not run by default: it writes the
/// log and both configurations under `$BASALT_WHATIF_EXAMPLE` for `badmin whatif` to be
/// run on them (see the guide).
#[test]
#[ignore]
fn write_the_admin_guide_example() {
    let Some(dir) = std::env::var_os("BASALT_WHATIF_EXAMPLE").map(PathBuf::from) else {
        return;
    };
    let limited = "\nBegin Queue\nQUEUE_NAME = limited\nPRIORITY = 30\nQJOB_LIMIT = 2\nEnd Queue\n\
                   \nBegin Queue\nQUEUE_NAME = open\nPRIORITY = 30\nEnd Queue\n";
    let params = "JOB_ACCEPT_INTERVAL = 0";
    let recorded = envdir(&dir.join("recorded"), 1, limited, params);
    let lifted = envdir(&dir.join("lifted"), 1, LIFTED, params);
    let cfg = basalt_whatif::load_config(&recorded).expect("load");
    let mut jobs: Vec<(i64, &str, &str, i64)> = Vec::new();
    for burst in 0..16 {
        let at = burst * 900;
        for k in 0..6 {
            jobs.push((at + k, "limited", "alice", 480 + 60 * ((burst + k) % 5)));
        }
        for k in 0..2 {
            jobs.push((at + 10 + k, "open", "bob", 1800));
        }
    }
    let w = history(&dir, &cfg, &workload(&jobs), &[("host0".to_owned(), 8)]);
    assert_eq!(w.jobs.len(), 128);
    eprintln!(
        "wrote {}/lsb.events; LSF_ENVDIR={} badmin whatif --events lsb.events --config {} --hosts host0:8",
        dir.display(),
        recorded.display(),
        lifted.display()
    );
}

/// A deterministic workload (three queues of different priorities, staggered
/// submissions, mixed run times, two hosts): the recorded configuration, replayed from
/// the log, dispatches in the recorded order at the recorded times.
#[test]
fn the_unchanged_configuration_replays_the_recorded_dispatch_order() {
    let dir = tempfile::tempdir().expect("tmp");
    let sections = "\nBegin Queue\nQUEUE_NAME = high\nPRIORITY = 70\nEnd Queue\n\
                    \nBegin Queue\nQUEUE_NAME = low\nPRIORITY = 10\nEnd Queue\n";
    let a = config(
        &dir.path().join("a"),
        2,
        sections,
        "JOB_ACCEPT_INTERVAL = 0",
    );
    let hosts = vec![("host0".to_owned(), 2), ("host1".to_owned(), 1)];
    let queues = ["low", "normal", "high"];
    let users = ["ann", "ben", "cai"];
    let jobs: Vec<(i64, &str, &str, i64)> = (0..40)
        .map(|i: i64| {
            (
                (i * 7) % 50,
                queues[(i % 3) as usize],
                users[(i % 2) as usize],
                20 + (i * 13) % 90,
            )
        })
        .collect();
    let mut jobs = jobs;
    jobs.sort_by_key(|j| j.0);
    let w = history(dir.path(), &a, &workload(&jobs), &hosts);
    let opts = SimOptions {
        hosts,
        ..Default::default()
    };
    let f = basalt_whatif::check_fidelity(&w, &a, &opts);
    assert_eq!(f.compared, 40);
    assert!(f.same_order, "{f:?}");
    assert_eq!((f.differ, f.mean_abs_secs), (0, 0.0), "{f:?}");
    // And the high queue waited less than the low one.
    let c = compare(&w, &a, None, &opts);
    assert!(c.after.queues["high"].wait_mean < c.after.queues["low"].wait_mean);
    let _: BTreeMap<String, u32> = c.remapped;
}

/// A submission of `jobs` with `-w cond` / job name `name` (an array: `a[1-4]%2`).
fn submission(id: u64, at: i64, queue: &str, name: &str, cond: &str) -> Submission {
    Submission {
        user: "carol".into(),
        uid: 1000,
        queue: queue.into(),
        command: format!("job{id}").into(),
        job_name: name.into(),
        depend_cond: cond.into(),
        rlimits: [-1; 11].into(),
        num_processors: 1,
        max_processors: 1,
        submit_time: T0 + at,
        job_file: format!("{}.{id}", T0 + at).into(),
        ..Default::default()
    }
}

fn start_of(r: &basalt_whatif::SimResult, key: (u64, u32)) -> Option<i64> {
    r.jobs.get(&key).and_then(|j| j.start).map(|s| s - T0)
}

/// `--from` chooses the jobs reported, not those simulated: job 1, submitted before the
/// window, still holds its slot and satisfies job 2's `done(1)` when it ends (600 s),
/// as in reality; only job 2 is reported, with its recorded wait of 540 s both ways.
#[test]
fn a_job_before_the_window_satisfies_the_dependency_of_one_in_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), 1, QUEUES, "JOB_ACCEPT_INTERVAL = 0");
    let hosts = vec![("host0".to_owned(), 2)];
    let mut w = Workload::default();
    w.add_job(T0, 1, submission(1, 0, "open", "", ""), 600);
    w.add_job(T0 + 60, 2, submission(2, 60, "open", "", "done(1)"), 60);
    let path = dir.path().join("lsb.events");
    let logged = history(dir.path(), &cfg, &w, &hosts);
    assert_eq!(logged.jobs[&(2, 0)].actual.first_start, Some(T0 + 600));
    let events = read_events(&[path]).expect("read log");
    let windowed = Workload::from_events(&events, Some(T0 + 30), None);
    assert!(!windowed.jobs[&(1, 0)].in_window && windowed.jobs[&(2, 0)].in_window);
    let opts = SimOptions {
        hosts,
        ..Default::default()
    };
    let c = compare(&windowed, &cfg, None, &opts);
    assert_eq!(
        (c.before.all.jobs, c.after.all.jobs),
        (1, 1),
        "{}",
        c.table()
    );
    assert_eq!(c.before.all.wait_max, 540.0);
    assert_eq!(c.after.all.wait_max, 540.0, "{}", c.table());
    assert_eq!(c.deps_dropped, 0);
}

/// A `-w` condition naming a job the logs do not have (older than the oldest log) is
/// dropped, and the report says how many: the job starts as if it were satisfied.
#[test]
fn a_dependency_on_a_job_older_than_the_logs_is_dropped_and_reported() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), 1, QUEUES, "JOB_ACCEPT_INTERVAL = 0");
    let mut w = Workload::default();
    w.add_job(
        T0,
        5,
        submission(5, 0, "open", "", "done(3) && exit(4)"),
        60,
    );
    w.add_job(T0 + 10, 6, submission(6, 10, "open", "", "ended(5)"), 60);
    let opts = SimOptions {
        hosts: vec![("host0".to_owned(), 2)],
        ..Default::default()
    };
    let r = simulate(&cfg, &w, &opts);
    assert_eq!(r.deps_dropped, 1);
    assert_eq!(start_of(&r, (5, 0)), Some(0));
    assert_eq!(
        start_of(&r, (6, 0)),
        Some(60),
        "job 6 still waits for job 5"
    );
    let c = compare(&w, &cfg, Some(&cfg), &opts);
    assert!(
        c.table()
            .contains("1 job(s) depend on jobs older than the logs"),
        "{}",
        c.table()
    );
    assert_eq!(c.json()["deps_dropped"], 1);
}

/// A bswitch recorded in the log is replayed at its time: job 2 waited behind job 1 in
/// the queue limited to one running job until it was switched to the open queue at
/// 100 s, where it started at once. Without the switch it would have waited 600 s. A
/// switch to a queue the tried configuration does not have is not replayed, and said.
#[test]
fn a_recorded_bswitch_is_replayed_at_its_time() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(&dir.path().join("a"), 1, QUEUES, "JOB_ACCEPT_INTERVAL = 0");
    let hosts = vec![("host0".to_owned(), 2)];
    let mut w = Workload::default();
    w.add_job(T0, 1, submission(1, 0, "limited", "", ""), 600);
    w.add_job(T0, 2, submission(2, 0, "limited", "", ""), 600);
    w.controls.push(basalt_sched::Event::JobSwitch {
        time: T0 + 100,
        key: (2, 0),
        uid: 1000,
        user: "carol".to_owned(),
        queue: "open".to_owned(),
    });
    let logged = history(dir.path(), &cfg, &w, &hosts);
    assert_eq!(logged.controls.len(), 1, "the log has the JOB_SWITCH");
    assert_eq!(logged.jobs[&(2, 0)].actual.first_start, Some(T0 + 100));
    assert_eq!(logged.jobs[&(2, 0)].queue, "open");
    let opts = SimOptions {
        hosts,
        ..Default::default()
    };
    let r = simulate(&cfg, &logged, &opts);
    assert_eq!(start_of(&r, (2, 0)), Some(100));
    let f = basalt_whatif::report::fidelity(&logged, &r);
    assert_eq!((f.compared, f.differ), (2, 0));
    // A configuration without the queue `open`: the switch is not replayed.
    let only = "\nBegin Queue\nQUEUE_NAME = limited\nPRIORITY = 30\nQJOB_LIMIT = 1\nEnd Queue\n";
    let other = config(&dir.path().join("b"), 1, only, "JOB_ACCEPT_INTERVAL = 0");
    let r = simulate(&other, &logged, &opts);
    assert_eq!(r.controls_skipped, 1);
    assert_eq!(start_of(&r, (2, 0)), Some(600));
}

/// An array's `%k` limit holds in the simulation: four one-minute elements limited to
/// two at once on a 4-slot host start at 0, 0, 60 and 60 s.
#[test]
fn array_elements_keep_their_running_limit() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), 1, QUEUES, "JOB_ACCEPT_INTERVAL = 0");
    let mut w = Workload::default();
    w.add_job(T0, 7, submission(7, 0, "open", "a[1-4]%2", ""), 60);
    let proto = w.jobs.remove(&(7, 0)).expect("job 7");
    for idx in 1..=4 {
        let mut e = proto.clone();
        e.key = (7, idx);
        w.jobs.insert((7, idx), e);
    }
    let opts = SimOptions {
        hosts: vec![("host0".to_owned(), 4)],
        ..Default::default()
    };
    let r = simulate(&cfg, &w, &opts);
    let starts: Vec<Option<i64>> = (1..=4).map(|i| start_of(&r, (7, i))).collect();
    assert_eq!(starts, [Some(0), Some(0), Some(60), Some(60)]);
}
