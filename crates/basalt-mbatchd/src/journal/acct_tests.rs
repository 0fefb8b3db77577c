//! Issue 49, item 4: every finished job has exactly one `JOB_FINISH` in lsb.acct after a
//! kill -9 of mbatchd at any step of the end of its job. The journal and the core are
//! driven as the owner drives them (one iteration: `commit_as`, then `commit_acct`);
//! a kill is the files as they are at that instant — lsb.events cut after any byte of
//! the iteration's records, or complete with lsb.acct cut after any byte of its — and
//! the restart is what mbatchd runs at start (`open`, then `restore`).

use super::*;
use basalt_config::embedded::{DefaultCluster, DefaultHost};
use basalt_core::job::JobState;
use basalt_sched::{
    Caller, Effect, JobKey, Report, ReportKind, RequeueStates, Sched, SchedConfig, Submission,
    Usage,
};
use std::collections::BTreeMap;

const T: i64 = 1_800_000_000_000;

fn config(dir: &Path) -> SchedConfig {
    let hosts = vec![DefaultHost {
        name: "hostA".into(),
        address: None,
        server: true,
    }];
    let envdir = DefaultCluster::new("basalt", "root", hosts)
        .write(dir)
        .unwrap();
    let config = basalt_config::load(&envdir).unwrap().config;
    SchedConfig::from_config(&config)
}

fn root() -> Caller {
    Caller {
        uid: 0,
        user: "root".into(),
        host: "hostA".into(),
    }
}

fn opts() -> Options {
    Options {
        sync: el::SyncPolicy::None,
        ..Options::default()
    }
}

/// mbatchd's start on `logdir`: open, replay with the records rebuilt, the first
/// iteration committed. The journal, the core, and how many records were rebuilt.
fn start(cfg: &SchedConfig, logdir: &Path, now: i64) -> (Journal, Sched, usize) {
    let (mut j, replayed) = open(logdir, "me", opts()).unwrap();
    let mut s = Sched::new(cfg.clone(), now);
    let rebuilt = j.restore(&mut s, &replayed).unwrap();
    s.lim_update("hostA", 8, 1.0, true, BTreeMap::new());
    s.start(now, "hostA");
    iterate(&mut j, &mut s);
    (j, s, rebuilt)
}

/// One loop iteration's effects made durable, as the owner does it.
fn iterate(j: &mut Journal, s: &mut Sched) {
    let effects = s.take_effects();
    j.commit_as(&effects, true).unwrap();
    j.commit_acct(&effects).unwrap();
}

fn ended(s: &mut Sched, now: i64, key: JobKey, exit_status: i32) {
    let (attempt, seq) = {
        let j = &s.jobs()[&key];
        (j.attempt, j.last_seq + 1)
    };
    s.report(
        now,
        Report {
            host: "hostA".into(),
            key,
            attempt,
            seq,
            time: 0,
            kind: ReportKind::Finished {
                exit_status,
                usage: Usage::default(),
                term_reason: String::new(),
                post_exec: None,
            },
        },
    );
}

/// lsb.acct's records: job id -> how many.
fn records(logdir: &Path) -> BTreeMap<u64, usize> {
    let mut out = BTreeMap::new();
    for f in el::read_acct(&logdir.join(el::ACCT_FILE)).unwrap() {
        *out.entry(f.unwrap().job_id).or_default() += 1;
    }
    out
}

/// Every job the core has ended has its record, once; no other job has one. `ends`:
/// how many times each job ended (a job requeued after its end counts each end).
fn check(s: &Sched, logdir: &Path, ends: &BTreeMap<u64, usize>, ctx: &str) {
    let want: BTreeMap<u64, usize> = ends
        .iter()
        .filter(|e| *e.1 > 0)
        .map(|(k, v)| (*k, *v))
        .collect();
    assert_eq!(records(logdir), want, "{ctx}");
    for (id, _) in s.jobs().keys() {
        assert!(
            ends.contains_key(id),
            "{ctx}: job {id} unknown to the check"
        );
    }
}

/// Jobs 1-4 run; 1 ends; the log is switched (1 is carried over); then one iteration
/// ends 2 and 3 and requeues 3 (`brequeue -d`): the iteration a kill may hit anywhere.
/// After each kill: the restart rebuilds what lsb.acct lacks — one record per end
/// lsb.events has, none for one it lost — and a second restart rebuilds nothing; then
/// sbatchd's repeated report of the ends lsb.events lost ends those jobs with their
/// record, and every job's ends have one record each.
#[test]
fn every_end_has_one_record_after_a_kill_at_any_step_of_its_iteration() {
    // tmpfs when there is one: every start syncs the log directory.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .unwrap();
    let cfg = config(dir.path());
    let live = dir.path().join("live");
    let (mut j, mut s, _) = start(&cfg, &live, T);
    for i in 1..=4 {
        let sub = Submission {
            command: format!("job {i}").into(),
            rlimits: [-1; 11].into(),
            ..Default::default()
        };
        s.submit(T, &root(), sub).unwrap();
    }
    s.schedule(T);
    iterate(&mut j, &mut s);
    assert!((1..=4).all(|id| s.jobs()[&(id, 0)].state == JobState::Run));
    ended(&mut s, T + 1000, (1, 0), 0);
    iterate(&mut j, &mut s);
    let co = s.carry_over(T + 2000);
    j.switch(T / 1000 + 2, &co.carried, &co.appended).unwrap();
    s.replay(&co.appended);
    assert_eq!(records(&live), BTreeMap::from([(1, 1)]));

    let snapshot = |logdir: &Path| {
        (
            std::fs::read(logdir.join(el::EVENTS_FILE)).unwrap(),
            std::fs::read(logdir.join(el::ACCT_FILE)).unwrap(),
        )
    };
    let (ev0, acct0) = snapshot(&live);
    // The iteration under test.
    ended(&mut s, T + 3000, (2, 0), 0);
    ended(&mut s, T + 3000, (3, 0), 256);
    let states = RequeueStates {
        done: true,
        exit: true,
        running: false,
    };
    s.requeue(T + 3000, &root(), (3, 0), states, false).unwrap();
    let effects = s.take_effects();
    let acct_effects = effects
        .iter()
        .filter(|e| matches!(e, Effect::Acct(_)))
        .count();
    assert_eq!(acct_effects, 2, "{effects:?}");
    j.commit_as(&effects, true).unwrap();
    j.commit_acct(&effects).unwrap();
    let (ev1, acct1) = snapshot(&live);
    j.release();
    assert!(ev1.len() > ev0.len() && acct1.len() > acct0.len());
    assert!(ev1.starts_with(&ev0) && acct1.starts_with(&acct0));
    // The files at each instant of the iteration: lsb.events written up to any byte
    // (lsb.acct not yet), then lsb.acct up to any byte.
    let mut kills: Vec<(usize, usize)> =
        (ev0.len()..=ev1.len()).map(|e| (e, acct0.len())).collect();
    kills.extend((acct0.len() + 1..=acct1.len()).map(|a| (ev1.len(), a)));
    let mut rebuilt_any = 0;
    for (n, (e, a)) in kills.iter().copied().enumerate() {
        let ctx = format!(
            "kill with lsb.events at {e} of {}, lsb.acct at {a} of {}",
            ev1.len(),
            acct1.len()
        );
        let logdir = dir.path().join(format!("k{n}"));
        std::fs::create_dir_all(&logdir).unwrap();
        std::fs::write(logdir.join(el::EVENTS_FILE), &ev1[..e]).unwrap();
        std::fs::write(logdir.join(el::ACCT_FILE), &acct1[..a]).unwrap();
        for f in std::fs::read_dir(&live).unwrap() {
            let f = f.unwrap();
            let name = f.file_name().to_string_lossy().into_owned();
            if name.starts_with("lsb.events.") {
                std::fs::copy(f.path(), logdir.join(&name)).unwrap();
            }
        }

        let (jn, s2, rebuilt) = start(&cfg, &logdir, T + 10_000);
        rebuilt_any += usize::from(rebuilt > 0);
        let state = |id: u64| s2.jobs()[&(id, 0)].state;
        let mut ends = BTreeMap::from([(1, 1), (4, 0)]);
        ends.insert(2, usize::from(state(2) != JobState::Run));
        ends.insert(3, usize::from(state(3) != JobState::Run));
        check(&s2, &logdir, &ends, &format!("{ctx}: after the restart"));
        if a == acct1.len() {
            assert_eq!(rebuilt, 0, "{ctx}: lsb.acct was complete");
        }
        jn.release();
        let (jn, s2, rebuilt) = start(&cfg, &logdir, T + 11_000);
        assert_eq!(rebuilt, 0, "{ctx}: the second restart");
        check(
            &s2,
            &logdir,
            &ends,
            &format!("{ctx}: after a second restart"),
        );
        drop(s2);
        jn.release();

        // sbatchd reports again the ends lsb.events lost; a requeued job 3 runs again
        // and ends.
        let (mut jn, mut s2, _) = start(&cfg, &logdir, T + 12_000);
        for id in [2, 3] {
            if s2.jobs()[&(id, 0)].state == JobState::Run {
                ended(&mut s2, T + 13_000, (id, 0), 0);
                *ends.entry(id).or_default() += 1;
            }
        }
        iterate(&mut jn, &mut s2);
        s2.schedule(T + 14_000);
        iterate(&mut jn, &mut s2);
        if s2.jobs()[&(3, 0)].state == JobState::Run {
            ended(&mut s2, T + 15_000, (3, 0), 0);
            *ends.entry(3).or_default() += 1;
            iterate(&mut jn, &mut s2);
        }
        check(
            &s2,
            &logdir,
            &ends,
            &format!("{ctx}: after the ends were reported again"),
        );
        jn.release();
        std::fs::remove_dir_all(&logdir).unwrap();
    }
    assert!(
        rebuilt_any > 0,
        "no kill instant left lsb.acct short of an end lsb.events had"
    );
}
