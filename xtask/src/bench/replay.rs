//! The `replay` measure: mbatchd's start-up replay of a large `lsb.events`.

use super::*;
use basalt_eventlog::{
    Header, JobClean, JobExecute, JobNew, JobSignal, JobStart, JobStartAccept, JobStatus, MbdStart,
    Record, Rusage,
};
use basalt_sched::{Sched, SchedConfig};

const HOSTS: usize = 8;
const T0: i64 = 1_795_339_535;

/// xorshift64*: the mix is the same on every run.
pub(super) struct Rng(pub(super) u64);
impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn host(i: u64) -> String {
    format!("host{}", (b'A' + (i % HOSTS as u64) as u8) as char)
}

/// How a job's life ends in the log.
#[derive(Clone, Copy, PartialEq)]
enum Fate {
    /// Still pending at the end of the log.
    Pending,
    /// Killed while pending.
    KilledPending,
    /// Still running.
    Running,
    Done,
    Exit,
}

fn h(t: i64) -> Header {
    Header::new(t)
}

fn job_new(id: u64, t: i64, rng: &mut Rng) -> Record {
    let users = ["alice", "bob", "carol", "dave", "erin"];
    let u = rng.below(users.len() as u64) as usize;
    let user = users[u];
    let queue = if rng.below(5) == 0 {
        "priority"
    } else {
        "normal"
    };
    let mut options = basalt_core::job::sub::PROJECT_NAME | basalt_core::job::sub::OUT_FILE;
    let res_req = if rng.below(3) == 0 {
        options |= basalt_core::job::sub::RES_REQ;
        "select[mem>1000] rusage[mem=1000]"
    } else {
        ""
    };
    let name = format!("sim{}_{}", id % 97, id);
    JobNew {
        header: h(t),
        job_id: id,
        user_id: 1000 + u as i64,
        options,
        submit_time: t,
        user_name: user.into(),
        queue: queue.into(),
        res_req: res_req.into(),
        from_host: host(id),
        cwd: format!("/home/{user}/project/run{}", id % 13),
        out_file: format!("/home/{user}/project/logs/%J.out"),
        sub_home_dir: format!("/home/{user}"),
        job_file: el::job_file_name(t, id),
        job_name: name,
        command: format!("python train.py --seed {} --epochs 10", id % 1000),
        project_name: "default".into(),
        ..JobNew::default()
    }
    .into()
}

/// The records of `n` events: job lives interleaved as a busy cluster logs them
/// (dispatch some 50 jobs behind submission, finishing some 300 behind, cleaning
/// some 5,000 behind).
pub fn records(n: usize) -> Vec<Record> {
    let mut rng = Rng(0x00dd_ba11_5eed);
    let mut out = Vec::with_capacity(n + 16);
    out.push(
        MbdStart {
            header: h(T0),
            master: "hostA".into(),
            cluster: "bench".into(),
            num_hosts: HOSTS as i64,
            num_queues: 3,
        }
        .into(),
    );
    let mut fates: Vec<Fate> = vec![Fate::Pending];
    let mut id: u64 = 0;
    while out.len() < n {
        id += 1;
        let t = T0 + (id as i64) / 50;
        let fate = match rng.below(100) {
            0..=4 => Fate::Pending,
            5..=7 => Fate::KilledPending,
            8..=14 => Fate::Running,
            15..=24 => Fate::Exit,
            _ => Fate::Done,
        };
        fates.push(fate);
        out.push(job_new(id, t, &mut rng));

        // Dispatch of an earlier job.
        if let Some(d) = id.checked_sub(50).filter(|&d| d > 0) {
            let f = fates[d as usize];
            if f == Fate::KilledPending {
                out.push(signal(d, t));
                out.push(status(d, t, 32, false));
            } else if f != Fate::Pending {
                let pid = 10_000 + (d % 50_000) as i64;
                let hosts = if d % 10 == 0 {
                    vec![host(d), host(d), host(d + 1), host(d + 1)]
                } else {
                    vec![host(d)]
                };
                out.push(
                    JobStart {
                        header: h(t),
                        job_id: d,
                        j_status: 4,
                        host_factor: 1.0,
                        exec_hosts: hosts,
                        ..JobStart::default()
                    }
                    .into(),
                );
                out.push(
                    JobStartAccept {
                        header: h(t),
                        job_id: d,
                        job_pid: pid,
                        job_pgid: pid,
                        ..JobStartAccept::default()
                    }
                    .into(),
                );
                out.push(
                    JobExecute {
                        header: h(t),
                        job_id: d,
                        exec_uid: 1000 + (d % 5) as i64,
                        job_pgid: pid,
                        exec_cwd: "/home/alice/project/run".into(),
                        exec_home: "/home/alice".into(),
                        exec_username: "alice".into(),
                        job_pid: pid,
                        idx: 0,
                    }
                    .into(),
                );
            }
        }
        // Completion of an earlier one.
        if let Some(d) = id.checked_sub(300).filter(|&d| d > 0) {
            match fates[d as usize] {
                Fate::Done => out.push(status(d, t, 64, true)),
                Fate::Exit => {
                    out.push(signal(d, t));
                    out.push(status(d, t, 32, true));
                }
                _ => {}
            }
        }
        // Cleaning (CLEAN_PERIOD later) of a finished one.
        if let Some(d) = id.checked_sub(5_000).filter(|&d| d > 0)
            && matches!(
                fates[d as usize],
                Fate::Done | Fate::Exit | Fate::KilledPending
            )
        {
            out.push(
                JobClean {
                    header: h(t),
                    job_id: d,
                    idx: 0,
                }
                .into(),
            );
        }
    }
    out.truncate(n);
    out
}

fn signal(id: u64, t: i64) -> Record {
    JobSignal {
        header: h(t),
        job_id: id,
        user_id: 1000,
        run_count: 0,
        signal_symbol: "KILL".into(),
        idx: 0,
        user_name: "alice".into(),
    }
    .into()
}

fn status(id: u64, t: i64, st: u32, ran: bool) -> Record {
    JobStatus {
        header: h(t),
        job_id: id,
        j_status: st,
        cpu_time: if ran { 12.5 } else { 0.0 },
        end_time: t,
        rusage: ran.then(|| Rusage {
            utime: 10.0,
            stime: 2.5,
            maxrss: 40_960.0,
            ..Rusage::default()
        }),
        exit_status: if st == 32 { 9 } else { 0 },
        term_reason: if st == 32 {
            "TERM_OWNER".into()
        } else {
            String::new()
        },
        ..JobStatus::default()
    }
    .into()
}

/// The scheduler configuration of an 8-host cluster (the hosts the records use).
fn sched_config(ctx: &Ctx) -> Result<SchedConfig> {
    let top = ctx.work.join("replay-config");
    let hosts = (0..HOSTS as u64)
        .map(|i| DefaultHost {
            name: host(i),
            address: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + i as u8))),
            server: true,
        })
        .collect();
    let envdir = DefaultCluster::new("bench", "root", hosts).write(&top)?;
    let loaded = basalt_config::load(&envdir).map_err(|e| anyhow!("{e}"))?;
    Ok(SchedConfig::from_config(&loaded.config))
}

pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
    let n = ctx.size(1_000_000, 100_000);
    let logdir = ctx.work.join("replay-logdir");
    let _ = std::fs::remove_dir_all(&logdir);
    let cfg = sched_config(ctx)?;

    let t = Instant::now();
    let recs = records(n);
    let (mut log, _) = el::EventLog::open(&logdir)?;
    for chunk in recs.chunks(10_000) {
        log.append(chunk)?;
    }
    let bytes = log.size();
    drop(log);
    drop(recs);
    eprintln!(
        "   wrote {n} records ({:.0} MB) in {:.1} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let mut out = Vec::new();
    for _ in 0..runs {
        // (a) The reader alone.
        let t = Instant::now();
        let (log, replay) = el::EventLog::open(&logdir)?;
        let read = t.elapsed().as_secs_f64();
        drop(log);
        if replay.records.len() != n {
            bail!("read {} records back, wrote {n}", replay.records.len());
        }
        drop(replay);

        // (b) mbatchd's replay: the records become core events applied by Sched::replay.
        let t = Instant::now();
        // Exactly mbatchd's start: take the lock, open lsb.events and lsb.acct with
        // the records turned into core events as they are read, then Sched::replay.
        let mut sched = Sched::new(cfg.clone(), T0 * 1000);
        let (log, replay) = basalt_mbatchd::journal::open(
            &logdir,
            "bench",
            basalt_mbatchd::journal::Options::default(),
        )?;
        let events = replay.events;
        sched.replay(&events);
        let full = t.elapsed().as_secs_f64();
        let jobs = sched.jobs().len();
        let pending = sched
            .jobs()
            .values()
            .filter(|j| !sched.shown_state(j).is_finished())
            .count();
        drop(log);
        let n_ev = events.len();
        // Freeing a million records is not part of a replay mbatchd does once.
        drop((sched, events));

        // The goal is 1,000,000 events in 2 s; a --quick log is held to the same rate.
        let mut seconds = Metric::new(
            "mbatchd replay (open + from_record + Sched::replay)",
            "s",
            full,
        );
        if n == 1_000_000 {
            seconds = seconds.goal(Goal::AtMost(2.0));
        }
        out.push(Run {
            metrics: vec![
                Metric::new("EventLog::open (read + parse)", "s", read),
                Metric::new("read + parse rate", "events/s", n as f64 / read),
                seconds,
                Metric::new("mbatchd replay rate", "events/s", n as f64 / full)
                    .goal(Goal::AtLeast(500_000.0)),
            ],
            notes: vec![format!(
                "{n} records, {:.0} MB, {n_ev} core events; {jobs} jobs in memory \
                 after replay ({pending} unfinished); warm page cache",
                bytes as f64 / 1e6
            )],
        });
    }
    let _ = std::fs::remove_dir_all(&logdir);
    Ok(out)
}
