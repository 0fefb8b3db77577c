//! `cargo xtask scale`: the site-scale figures of issue 51 (docs/performance.md, "Scale:
//! hollow hosts"), for each cluster size N (hollow hosts; default 100, 1,000 and 10,000,
//! `--quick` 100 and 1,000) on one cluster per size: `up --hosts 2 --hollow N --release`
//! (2 real hosts, the master candidates hostA and hostB, and N hollow hosts in
//! `basalt-hollow` processes: two sharing them evenly, and with the `hostloss` phase
//! N/10 of them in a third process of their own), the time until every host is `ok`,
//! then these phases in this order (`--phases` picks some; each that fails is recorded
//! with its reason and the next one runs):
//!
//! * `idle` — the CPU (from `/proc/<pid>/stat`) and RSS of the master LIM, of mbatchd
//!   and of the hollow processes on the idle cluster, and the wall time of `lsload`,
//!   `lshosts` and `bhosts`.
//! * `throughput` — hostA and hostB closed (`badmin hclose`: the jobs run on the hollow
//!   hosts, 4 slots each), `--jobs` jobs of `sleep 1` (default 100,000; `--quick`
//!   20,000) submitted through mbatchd's API as arrays of 1,000; the time from the first
//!   submission to the last `JOB_FINISH` in lsb.acct, the rate over it and the sustained
//!   rate (between 10 % and 90 % of the finishes), and the check that every element
//!   finished exactly once, `DONE` (its result is a figure: a failure is reported).
//! * `hostloss` — every slot of the group apart filled with `sleep 3600` jobs (`-m` its
//!   hosts), its process killed with SIGKILL; the time until all its hosts are
//!   `unreach`/`unavail` in `bhosts` and `unavail` in `lsload`, until none of their jobs
//!   is `RUN` or `UNKWN` (ended `EXIT`, or requeued, after `BASALT_HOST_LOST_GRACE`),
//!   and how many other hosts left `ok` (or `closed_Adm`, `closed_Full`) meanwhile.
//! * `pending` — queue `idle` inactivated (`badmin qinact`), `--pending` jobs (default
//!   1,000,000; `--quick` 100,000) submitted to it through the API as arrays of 1,000:
//!   the submission's time, mbatchd's RSS before and with them, `bjobs -u all` (time to
//!   its first line and to the whole listing, read as it comes), `bqueues`, and p50/p90
//!   of 20 `bsub -q idle` in a row.
//! * `reconfig` — `badmin reconfig` with those jobs while a `bqueues` loop and a `bsub`
//!   loop run: the time until `badmin` returns and until both loops answer again
//!   (mbatchd restarts to reconfigure; over once both answered for 3 s since their last
//!   failure), and each loop's answers, failures and longest time without an answer.
//! * `mbdkill` — mbatchd killed with SIGKILL (its host's sbatchd starts another, which
//!   replays lsb.events): the time until a submission is acknowledged again.
//! * `failover` — hostA's sbatchd, mbatchd, lim and res killed with SIGKILL: the time
//!   until a submission is acknowledged by hostB's mbatchd (bench's failover measure).
//!
//! Then `down`. Results in `target/bench/scale.{json,md}`: a column per size, a growth
//! factor per step, each phase's failure with its reason below the table. The phases
//! are in [`workload`].

use crate::down::{self, Daemon};
use crate::{Build, build_binaries, hollow_hosts, host_names, ports};
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod table;
mod workload;

/// What `scale` runs (the command line).
#[derive(Debug, Clone, Default)]
pub(crate) struct Opts {
    /// The cluster sizes (hollow hosts); empty: 100, 1,000 and 10,000 (`quick`: 100 and
    /// 1,000).
    pub hollow: Vec<usize>,
    pub quick: bool,
    pub no_build: bool,
    /// Seconds of the idle measure.
    pub idle_secs: u64,
    /// Jobs of the `pending` phase (default 1,000,000; `quick` 100,000).
    pub pending: Option<usize>,
    /// Jobs of the `throughput` phase (default 100,000; `quick` 20,000).
    pub jobs: Option<usize>,
    /// The phases to run (names of [`Phase`]); empty: all.
    pub phases: Vec<String>,
    /// `up --lim-port` of the clusters (None: LSF's default ports).
    pub lim_port: Option<u16>,
}

/// A part of the measure, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Phase {
    Idle,
    Throughput,
    Hostloss,
    Pending,
    Reconfig,
    Mbdkill,
    Failover,
}

impl Phase {
    pub(crate) const ALL: [Phase; 7] = [
        Phase::Idle,
        Phase::Throughput,
        Phase::Hostloss,
        Phase::Pending,
        Phase::Reconfig,
        Phase::Mbdkill,
        Phase::Failover,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Throughput => "throughput",
            Phase::Hostloss => "hostloss",
            Phase::Pending => "pending",
            Phase::Reconfig => "reconfig",
            Phase::Mbdkill => "mbdkill",
            Phase::Failover => "failover",
        }
    }
}

/// The run the options ask for.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    sizes: Vec<usize>,
    pending: usize,
    jobs: usize,
    /// In run order, each once.
    phases: Vec<Phase>,
}

fn plan(o: &Opts) -> Result<Plan> {
    let sizes = if !o.hollow.is_empty() {
        o.hollow.clone()
    } else if o.quick {
        vec![100, 1_000]
    } else {
        vec![100, 1_000, 10_000]
    };
    if sizes.contains(&0) {
        bail!("--hollow: a size of 0 hollow hosts measures nothing (the host loss needs some)");
    }
    let pending = o
        .pending
        .unwrap_or(if o.quick { 100_000 } else { 1_000_000 });
    let jobs = o.jobs.unwrap_or(if o.quick { 20_000 } else { 100_000 });
    if pending == 0 || jobs == 0 {
        bail!("--pending and --jobs must be at least 1 (leave a phase out with --phases)");
    }
    let mut phases = Vec::new();
    for name in &o.phases {
        match Phase::ALL.iter().find(|p| p.name() == name.trim()) {
            Some(p) => phases.push(*p),
            None => bail!(
                "--phases: unknown phase {name:?}; the phases are {}",
                Phase::ALL.map(Phase::name).join(", ")
            ),
        }
    }
    if phases.is_empty() {
        phases = Phase::ALL.to_vec();
    }
    phases.sort();
    phases.dedup();
    Ok(Plan {
        sizes,
        pending,
        jobs,
        phases,
    })
}

/// Longest time without an answer of a loop of commands, and how many answered.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub(crate) struct Probe {
    pub answered: usize,
    pub failed: usize,
    pub longest_secs: f64,
}

/// The figures of one size (None: not measured; see `failed` and `skipped`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Row {
    pub hollow: usize,
    /// Seconds from `up` until every host is `ok` (None: it did not come up).
    pub up_secs: Option<f64>,
    pub why_not: Option<String>,
    /// Phase -> why it failed.
    pub failed: BTreeMap<&'static str, String>,
    /// Phases not asked for.
    pub skipped: Vec<&'static str>,
    // idle
    pub lim_cpu_pct: Option<f64>,
    pub mbatchd_cpu_pct: Option<f64>,
    pub hollow_cpu_pct: Option<f64>,
    pub lim_rss_mb: Option<f64>,
    pub mbatchd_rss_mb: Option<f64>,
    pub hollow_rss_mb: Option<f64>,
    pub lsload_ms: Option<f64>,
    pub lshosts_ms: Option<f64>,
    pub bhosts_ms: Option<f64>,
    // throughput
    pub tput_jobs: Option<usize>,
    pub tput_submit_secs: Option<f64>,
    /// First submission to last finish.
    pub tput_secs: Option<f64>,
    pub tput_rate: Option<f64>,
    /// Between 10 % and 90 % of the finishes.
    pub tput_sustained_rate: Option<f64>,
    pub tput_acct_ok: Option<bool>,
    pub tput_acct: Option<String>,
    // hostloss
    pub lost_hosts: Option<usize>,
    /// Jobs running on them when their process was killed.
    pub lost_running: Option<usize>,
    pub lost_bhosts_secs: Option<f64>,
    pub lost_lsload_secs: Option<f64>,
    pub lost_jobs_secs: Option<f64>,
    pub lost_jobs_exit: Option<usize>,
    pub lost_jobs_requeued: Option<usize>,
    /// Other hosts seen neither `ok` nor closed by the administrator or full meanwhile.
    pub lost_others_disturbed: Option<usize>,
    /// What was seen of them: `host status` (ten at most).
    pub lost_others_seen: Vec<String>,
    // pending
    pub pending_jobs: Option<usize>,
    pub pending_submit_secs: Option<f64>,
    pub mbatchd_rss_before_mb: Option<f64>,
    pub mbatchd_rss_pending_mb: Option<f64>,
    pub bjobs_first_secs: Option<f64>,
    pub bjobs_all_secs: Option<f64>,
    pub bjobs_lines: Option<usize>,
    pub bqueues_pending_ms: Option<f64>,
    pub bsub_p50_ms: Option<f64>,
    pub bsub_p90_ms: Option<f64>,
    // reconfig
    /// Until `badmin reconfig` returned.
    pub reconfig_secs: Option<f64>,
    /// Until the command loops answer again (mbatchd restarts to reconfigure).
    pub reconfig_done_secs: Option<f64>,
    pub reconfig_bqueues: Option<Probe>,
    pub reconfig_bsub: Option<Probe>,
    // mbdkill, failover
    pub mbdkill_secs: Option<f64>,
    pub failover_secs: Option<f64>,
}

pub(crate) fn scale(root: &Path, o: &Opts) -> Result<()> {
    let plan = plan(o)?;
    build_binaries(Build {
        release: true,
        no_build: o.no_build,
    })?;
    let started = Instant::now();
    let mut rows = Vec::new();
    for &n in &plan.sizes {
        eprintln!("scale: {n} hollow hosts");
        let t = Instant::now();
        let row = one_size(root, o, &plan, n);
        eprintln!(
            "scale: {n} hollow hosts done in {:.0} s: {row:?}",
            t.elapsed().as_secs_f64()
        );
        rows.push(row);
    }
    let out = root.join("target/bench");
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("scale.json"), serde_json::to_string_pretty(&rows)?)?;
    let mut md = format!(
        "# cargo xtask scale\n\n{}; commit {}; --pending {} --jobs {}; phases {}; {:.0} s in all.\n\n",
        crate::bench::machine(),
        crate::bench::git_commit(root),
        plan.pending,
        plan.jobs,
        plan.phases
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(","),
        started.elapsed().as_secs_f64()
    );
    md.push_str(&table::table(&rows));
    std::fs::write(out.join("scale.md"), &md)?;
    println!("{md}");
    println!(
        "Wrote {} and {}",
        out.join("scale.json").display(),
        out.join("scale.md").display()
    );
    Ok(())
}

/// Start the cluster of `n` hollow hosts, run the phases of `plan`, stop it.
fn one_size(root: &Path, o: &Opts, plan: &Plan, n: usize) -> Row {
    let mut row = Row {
        hollow: n,
        ..Row::default()
    };
    let top = root.join("target/scale").join(format!("n{n}"));
    let _ = down::stop(std::slice::from_ref(&top));
    let _ = std::fs::remove_dir_all(&top);
    // The group the host loss kills: a tenth of the hosts, in a process of their own.
    let apart = if plan.phases.contains(&Phase::Hostloss) {
        (n / 10).max(1)
    } else {
        0
    };
    let t0 = Instant::now();
    let up = ports::Ports::plan(o.lim_port).and_then(|p| {
        crate::up(
            host_names(2, Some([127, 0, 77]))?,
            crate::HollowHosts {
                hosts: hollow_hosts(n)?,
                apart,
            },
            top.clone(),
            "basalt",
            Build {
                release: true,
                no_build: true,
            },
            false,
            p,
        )
    });
    if let Err(e) = up {
        row.why_not = Some(format!("{e:#}"));
        let _ = down::stop(std::slice::from_ref(&top));
        return row;
    }
    row.up_secs = Some(t0.elapsed().as_secs_f64());
    match workload::Scaled::new(&top, n, apart) {
        Ok(c) => {
            for phase in Phase::ALL {
                if !plan.phases.contains(&phase) {
                    row.skipped.push(phase.name());
                    continue;
                }
                eprintln!("scale: {n} hollow hosts: {}", phase.name());
                let t = Instant::now();
                let r = match phase {
                    Phase::Idle => {
                        measure(&top, o.idle_secs, &mut row);
                        Ok(())
                    }
                    Phase::Throughput => c.throughput(plan.jobs, &mut row),
                    Phase::Hostloss => c.hostloss(&mut row),
                    Phase::Pending => c.pending(plan.pending, &mut row),
                    Phase::Reconfig => c.reconfig(&mut row),
                    Phase::Mbdkill => c.mbdkill(&mut row),
                    Phase::Failover => c.failover(&mut row),
                };
                eprintln!(
                    "scale: {n} hollow hosts: {} {} in {:.1} s",
                    phase.name(),
                    if r.is_ok() { "done" } else { "FAILED" },
                    t.elapsed().as_secs_f64()
                );
                if let Err(e) = r {
                    eprintln!("scale: {}: {e:#}", phase.name());
                    row.failed.insert(phase.name(), format!("{e:#}"));
                }
            }
        }
        Err(e) => {
            row.failed.insert("workload", format!("{e:#}"));
        }
    }
    let _ = down::stop(std::slice::from_ref(&top));
    row
}

/// The idle figures of the cluster in `top`.
fn measure(top: &Path, idle_secs: u64, row: &mut Row) {
    // Let the start-up settle.
    std::thread::sleep(Duration::from_secs(10));
    let daemons = down::find(&[top.to_path_buf()]);
    let pick = |name: &str, host: Option<&str>| -> Vec<i32> {
        daemons
            .iter()
            .filter(|d: &&Daemon| d.name == name && (host.is_none() || d.host.as_deref() == host))
            .map(|d| d.pid)
            .collect()
    };
    let lim = pick("lim", Some("hostA"));
    let mbd = pick("mbatchd", None);
    let hollow = pick(crate::HOLLOW, None);
    let before: Vec<Option<f64>> = [&lim, &mbd, &hollow].iter().map(|p| cpu_secs(p)).collect();
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs(idle_secs.max(1)));
    let secs = t.elapsed().as_secs_f64();
    let after: Vec<Option<f64>> = [&lim, &mbd, &hollow].iter().map(|p| cpu_secs(p)).collect();
    let pct = |k: usize| -> Option<f64> {
        let (a, b) = (before[k]?, after[k]?);
        Some((b - a).max(0.0) / secs * 100.0)
    };
    row.lim_cpu_pct = pct(0);
    row.mbatchd_cpu_pct = pct(1);
    row.hollow_cpu_pct = pct(2);
    row.lim_rss_mb = rss_mb(&lim);
    row.mbatchd_rss_mb = rss_mb(&mbd);
    row.hollow_rss_mb = rss_mb(&hollow);
    let envdir = basalt_config::embedded::DefaultCluster::envdir(top);
    let timed = |cmd: &str| -> Option<f64> {
        let t = Instant::now();
        let out = Command::new(top.join("bin").join(cmd))
            .env("LSF_ENVDIR", &envdir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| t.elapsed().as_secs_f64() * 1000.0)
    };
    row.lsload_ms = timed("lsload");
    row.lshosts_ms = timed("lshosts");
    row.bhosts_ms = timed("bhosts");
}

/// User + system CPU time of `pids` together, seconds (None: none of them, or one is
/// gone).
fn cpu_secs(pids: &[i32]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|p| crate::bench::cpu_secs(*p)).sum()
}

/// The resident memory of `pids` together, in MB.
fn rss_mb(pids: &[i32]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    let mut kb = 0u64;
    for p in pids {
        kb += crate::bench::rss_kib(*p)?;
    }
    Some(kb as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_give_the_issue_sizes_quick_ones_and_the_phases_in_order() {
        let full = plan(&Opts::default()).unwrap();
        assert_eq!(full.sizes, vec![100, 1_000, 10_000]);
        assert_eq!((full.pending, full.jobs), (1_000_000, 100_000));
        assert_eq!(full.phases, Phase::ALL.to_vec());
        let quick = plan(&Opts {
            quick: true,
            ..Opts::default()
        })
        .unwrap();
        assert_eq!(quick.sizes, vec![100, 1_000]);
        assert_eq!((quick.pending, quick.jobs), (100_000, 20_000));
        let some = plan(&Opts {
            quick: true,
            hollow: vec![300],
            pending: Some(20_000),
            jobs: Some(5_000),
            phases: vec!["failover".into(), "pending".into(), "failover".into()],
            ..Opts::default()
        })
        .unwrap();
        assert_eq!(some.sizes, vec![300]);
        assert_eq!((some.pending, some.jobs), (20_000, 5_000));
        assert_eq!(some.phases, vec![Phase::Pending, Phase::Failover]);
        let bad = plan(&Opts {
            phases: vec!["drain".into()],
            ..Opts::default()
        });
        let e = format!("{:#}", bad.unwrap_err());
        assert!(e.contains("unknown phase \"drain\""), "{e}");
        assert!(
            e.contains("idle, throughput, hostloss, pending, reconfig, mbdkill, failover"),
            "{e}"
        );
        assert!(
            plan(&Opts {
                jobs: Some(0),
                ..Opts::default()
            })
            .is_err()
        );
        assert!(
            plan(&Opts {
                hollow: vec![0],
                ..Opts::default()
            })
            .is_err()
        );
    }

    #[test]
    fn cpu_and_memory_of_this_process_are_read() {
        let me = [std::process::id() as i32];
        assert!(cpu_secs(&me).is_some());
        assert!(rss_mb(&me).is_some_and(|m| m > 0.0));
        assert!(cpu_secs(&[]).is_none());
    }
}
