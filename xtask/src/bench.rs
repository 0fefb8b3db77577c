//! `cargo xtask bench`: measures the performance goals of DESIGN.md on this machine.
//!
//! The command builds the release binaries (`cargo build --release --workspace --bins`,
//! which includes an optimised build of this xtask), then re-runs itself from that build
//! so that the timed loops are optimised code. Each measure runs several times; the
//! summary gives the median, the smallest and largest value and the spread
//! ((max − min) / median), and compares the median with the goal. Results go to
//! `target/bench/results.json` and `target/bench/results.md`.
//!
//! Measures are the entries of [`MEASURES`]: a name, what it measures, how many runs, and
//! a function that does the runs and returns their samples. `--quick` makes every measure
//! smaller (for a smoke run); `--only NAME` (repeatable) picks measures.
//!
//! * `replay` — an `lsb.events` of 1,000,000 records (`--quick`: 100,000) written with
//!   basalt-eventlog's writer, a realistic mix of job lives (submitted, dispatched,
//!   running, finished, killed, cleaned), interleaved in time. Timed: `EventLog::open`
//!   alone (read and parse), and mbatchd's replay (`journal::open`: lock, read, `from_record`,
//!   `Sched::replay` of every event). Goal: under 2 s.
//! * `submit` — a one-host cluster of the release daemons on a loopback address of its
//!   own; 100,000 held jobs (`--quick`: 10,000) submitted through mbatchd's gRPC API by
//!   64 concurrent clients, each job acknowledged only once durable. Goal: 20,000 jobs/s.
//!   Afterwards every acknowledged job must have its `JOB_NEW` in `lsb.events`; the
//!   `fsync`/`fdatasync` calls of mbatchd are counted with `perf stat` when perf works.
//! * `bsub` — wall time of the real release `bsub -H` per call, 200 calls in a row
//!   (`--quick`: 50). Goal: p50 under 5 ms.
//! * `sched`, `query`, `latency`, `drain`, `memory`, `idle`, `failover` — one module each under
//!   `bench/`, documented there.
//!
//! `--vs slurm` adds the Slurm side ([`slurm`]) and a comparison table; `--vs hyperqueue`
//! the same for HyperQueue ([`hyperqueue`]), which it installs from PyPI into
//! `target/hq-venv` (`xtask/hyperqueue/hq-setup.sh`) and runs with a server and a 2-CPU
//! worker of its own. `--vs` is repeatable. A peer's name in `--only` (`--only hyperqueue`)
//! runs that peer's side alone, no Basalt measure.

use anyhow::{Context, Result, anyhow, bail};
use basalt_config::embedded::{DefaultCluster, DefaultHost};
use basalt_eventlog as el;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The options of `cargo xtask bench`.
#[derive(Debug, Clone, Default)]
pub struct Opts {
    pub quick: bool,
    pub only: Vec<String>,
    /// Runs per measure (default: each measure's own).
    pub runs: Option<usize>,
    /// Use the binaries already in target/release.
    pub no_build: bool,
    /// `--vs PEER`: also run the comparable measures against these [`PEERS`] (by name).
    pub vs: Vec<String>,
}

/// One measure: `run(ctx, runs)` does `runs` runs and returns one [`Run`] per run.
pub struct Measure {
    pub name: &'static str,
    pub what: &'static str,
    /// Runs for a full (and a `--quick`) bench.
    pub runs: usize,
    pub quick_runs: usize,
    pub run: fn(&Ctx, usize) -> Result<Vec<Run>>,
}

mod cluster;
mod drain;
pub mod failover;
mod hyperqueue;
mod idle;
mod latency;
mod memory;
mod query;
mod replay;
mod report;
mod sched;
mod slurm;
pub mod submit;
mod whatif;

pub use cluster::*;
use report::*;
pub(crate) use report::{git_commit, machine};

/// The Slurm side of `--vs slurm` (run by [`bench`] itself, not as a measure).
static SLURM: Measure = Measure {
    name: "slurm",
    what: "the same measures against a one-machine Slurm (profile tuned), same invocation",
    runs: 1,
    quick_runs: 1,
    run: |_, _| bail!("the Slurm measures run with --vs slurm"),
};

/// The HyperQueue side of `--vs hyperqueue` (run by [`bench`] itself, not as a measure).
static HYPERQUEUE: Measure = Measure {
    name: "hyperqueue",
    what: "the drain and latency measures against HyperQueue (PyPI wheel, one 2-CPU worker)",
    runs: 1,
    quick_runs: 1,
    run: |_, _| bail!("the HyperQueue measures run with --vs hyperqueue"),
};

/// A scheduler that `--vs` compares Basalt with: its pseudo-measure, its name in the
/// report, the pairs of (Basalt measure, Basalt metric, its metric, higher is better),
/// what to check or install before the build, and its run (`root`, `quick`).
pub struct Peer {
    pub measure: &'static Measure,
    pub label: &'static str,
    pub pairs: &'static [(&'static str, &'static str, &'static str, bool)],
    pub prepare: fn(&Path) -> Result<()>,
    pub run: fn(&Path, bool) -> Result<Run>,
}

/// The peers of `--vs`, in the order they run and are reported.
pub static PEERS: &[Peer] = &[
    Peer {
        measure: &SLURM,
        label: "Slurm",
        pairs: slurm::PAIRS,
        prepare: slurm::check,
        run: slurm::run,
    },
    Peer {
        measure: &HYPERQUEUE,
        label: "HyperQueue",
        pairs: hyperqueue::PAIRS,
        // Installs it when missing, before the long build; the measures run it again.
        prepare: |root| hyperqueue::setup(root).map(drop),
        run: hyperqueue::run,
    },
];

/// Every measure, in the order they run.
pub const MEASURES: &[Measure] = &[
    Measure {
        name: "replay",
        what: "replay of a 1,000,000-event lsb.events (read + parse, and mbatchd's full replay)",
        runs: 5,
        quick_runs: 3,
        run: replay::run,
    },
    Measure {
        name: "sched",
        what: "one scheduling pass of the pure core, 100,000 pending jobs x 5,000 hosts",
        runs: 5,
        quick_runs: 3,
        run: sched::run,
    },
    Measure {
        name: "whatif",
        what: "badmin whatif's simulation: a month of 1,000,000 jobs through the scheduler",
        runs: 1,
        quick_runs: 1,
        run: whatif::run,
    },
    Measure {
        name: "query",
        what: "bjobs -u all, bhosts, bqueues in the pure core with 40,000 pending jobs",
        runs: 5,
        quick_runs: 3,
        run: query::run,
    },
    Measure {
        name: "submit",
        what: "sustained submissions through mbatchd's gRPC API, every acknowledged job durable",
        runs: 3,
        quick_runs: 2,
        run: submit::run,
    },
    Measure {
        name: "bsub",
        what: "wall time of the release `bsub` command per call",
        runs: 3,
        quick_runs: 2,
        run: submit::bsub_run,
    },
    Measure {
        name: "latency",
        what: "submit -> start on an idle cluster, one job at a time",
        runs: 3,
        quick_runs: 1,
        run: latency::run,
    },
    Measure {
        name: "drain",
        what: "10,000 trivial jobs on one 2-slot host, first submit to last finish, vs xargs -P2",
        runs: 2,
        quick_runs: 1,
        run: drain::run,
    },
    Measure {
        name: "memory",
        what: "mbatchd resident memory per pending job at 100,000 and 1,000,000",
        runs: 1,
        quick_runs: 1,
        run: memory::run,
    },
    Measure {
        name: "idle",
        what: "RSS and CPU of the idle daemons of a host (lim + res + sbatchd), and of mbatchd",
        runs: 3,
        quick_runs: 1,
        run: idle::run,
    },
    Measure {
        name: "failover",
        what: "master host lost (kill -9 of its daemons) or hung (its LIM stopped) to a submission acknowledged by the new master, default timings",
        runs: 3,
        quick_runs: 1,
        run: failover::run,
    },
];

/// What a measure gets.
#[derive(Debug)]
pub struct Ctx {
    pub quick: bool,
    /// target/release.
    pub bin: PathBuf,
    /// Scratch space: target/bench/work.
    pub work: PathBuf,
}

impl Ctx {
    /// `full` normally, `quick` with `--quick`.
    pub fn size(&self, full: usize, quick: usize) -> usize {
        if self.quick { quick } else { full }
    }
}

/// Better is lower or higher than the goal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    AtMost(f64),
    AtLeast(f64),
}

impl Goal {
    fn met(self, v: f64) -> bool {
        match self {
            Goal::AtMost(g) => v <= g,
            Goal::AtLeast(g) => v >= g,
        }
    }

    fn text(self, unit: &str) -> String {
        match self {
            Goal::AtMost(g) => format!("≤ {} {unit}", fmt_num(g)),
            Goal::AtLeast(g) => format!("≥ {} {unit}", fmt_num(g)),
        }
    }
}

/// One number of one run.
#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    pub unit: &'static str,
    pub value: f64,
    pub goal: Option<Goal>,
}

impl Metric {
    pub fn new(name: &str, unit: &'static str, value: f64) -> Metric {
        Metric {
            name: name.to_owned(),
            unit,
            value,
            goal: None,
        }
    }

    pub fn goal(mut self, g: Goal) -> Metric {
        self.goal = Some(g);
        self
    }
}

/// The samples of one run, and facts worth printing (sizes, counts).
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub metrics: Vec<Metric>,
    pub notes: Vec<String>,
}

/// A metric over all runs.
#[derive(Debug, Clone)]
struct Summary {
    measure: &'static str,
    name: String,
    unit: &'static str,
    values: Vec<f64>,
    median: f64,
    min: f64,
    max: f64,
    goal: Option<Goal>,
}

impl Summary {
    fn spread(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median.abs()
        }
    }
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The `p`-th percentile (0..=100) of `v`, nearest rank.
pub fn percentile(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
    s[rank.clamp(1, s.len()) - 1]
}

fn summarize(measure: &'static str, runs: &[Run]) -> Vec<Summary> {
    let mut out: Vec<Summary> = Vec::new();
    for run in runs {
        for m in &run.metrics {
            match out.iter_mut().find(|s| s.name == m.name) {
                Some(s) => s.values.push(m.value),
                None => out.push(Summary {
                    measure,
                    name: m.name.clone(),
                    unit: m.unit,
                    values: vec![m.value],
                    median: 0.0,
                    min: 0.0,
                    max: 0.0,
                    goal: m.goal,
                }),
            }
        }
    }
    for s in &mut out {
        s.median = median(&s.values);
        s.min = s.values.iter().copied().fold(f64::INFINITY, f64::min);
        s.max = s.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    }
    out
}

/// A number with a sensible number of digits.
pub(crate) fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        let s = format!("{:.0}", v);
        // Thousands separators.
        let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// `cargo xtask bench`.
pub fn bench(root: &Path, opts: &Opts) -> Result<()> {
    for name in &opts.only {
        if !MEASURES.iter().any(|m| m.name == name) && !PEERS.iter().any(|p| p.measure.name == name)
        {
            bail!(
                "unknown measure {name:?}; the measures are: {} (and the peers of --vs: {})",
                MEASURES
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", "),
                PEERS
                    .iter()
                    .map(|p| p.measure.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    // A peer named by --only runs as if --vs named it.
    let only = |name: &str| opts.only.iter().any(|o| o == name);
    let peers: Vec<&Peer> = PEERS
        .iter()
        .filter(|p| opts.vs.iter().any(|v| v == p.measure.name) || only(p.measure.name))
        .collect();
    for p in &peers {
        (p.prepare)(root)?;
    }
    let target = target_dir(root);
    let bin = target.join("release");
    if !opts.no_build {
        eprintln!("Building the release binaries (cargo build --release --workspace --bins)...");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .current_dir(root)
            .args(["build", "--release", "--workspace", "--bins"])
            .status()
            .context("running cargo build")?;
        if !st.success() {
            bail!("cargo build --release failed");
        }
    }
    if cfg!(debug_assertions) {
        // The timed loops (replay, the gRPC clients) must be optimised code: hand over to
        // the release build of this xtask that the build above made.
        let me = bin.join("xtask");
        if !me.exists() {
            bail!(
                "{} is missing (run without --no-build to build it)",
                me.display()
            );
        }
        let mut args = vec!["bench".to_owned(), "--no-build".to_owned()];
        if opts.quick {
            args.push("--quick".into());
        }
        for o in &opts.only {
            args.extend(["--only".to_owned(), o.clone()]);
        }
        if let Some(r) = opts.runs {
            args.extend(["--runs".to_owned(), r.to_string()]);
        }
        for v in &opts.vs {
            args.extend(["--vs".to_owned(), v.clone()]);
        }
        let st = Command::new(&me)
            .args(&args)
            .status()
            .with_context(|| format!("running {}", me.display()))?;
        if !st.success() {
            bail!("the benchmark failed");
        }
        return Ok(());
    }

    let out_dir = target.join("bench");
    let work = out_dir.join("work");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let ctx = Ctx {
        quick: opts.quick,
        bin,
        work,
    };
    let started = SystemTime::now();
    let mut results: Vec<(&Measure, Vec<Run>, Vec<Summary>)> = Vec::new();
    for m in MEASURES {
        if !opts.only.is_empty() && !opts.only.iter().any(|o| o == m.name) {
            continue;
        }
        let runs = opts
            .runs
            .unwrap_or(if opts.quick { m.quick_runs } else { m.runs })
            .max(1);
        eprintln!("== {} ({runs} runs): {}", m.name, m.what);
        settle_disk();
        let t = Instant::now();
        let samples = (m.run)(&ctx, runs).with_context(|| format!("measure {}", m.name))?;
        eprintln!("   done in {:.1} s", t.elapsed().as_secs_f64());
        let summary = summarize(m.name, &samples);
        results.push((m, samples, summary));
    }
    let _ = std::fs::remove_dir_all(&ctx.work);
    for p in peers {
        let m = p.measure;
        eprintln!("== {}: {}", m.name, m.what);
        settle_disk();
        let t = Instant::now();
        let run = (p.run)(root, opts.quick).with_context(|| format!("measure {}", m.name))?;
        eprintln!("   done in {:.1} s", t.elapsed().as_secs_f64());
        let runs = vec![run];
        let summary = summarize(m.name, &runs);
        results.push((m, runs, summary));
    }

    let md = render_md(&results, opts, started);
    println!("{md}");
    let json = render_json(root, &results, opts, started);
    std::fs::create_dir_all(&out_dir)?;
    let jpath = out_dir.join("results.json");
    let mpath = out_dir.join("results.md");
    std::fs::write(&jpath, serde_json::to_string_pretty(&json)? + "\n")
        .with_context(|| format!("writing {}", jpath.display()))?;
    std::fs::write(&mpath, md).with_context(|| format!("writing {}", mpath.display()))?;
    eprintln!("Wrote {} and {}", jpath.display(), mpath.display());
    Ok(())
}

/// Write out what earlier measures (and the build) left dirty in the page cache before a
/// measure starts: each measure is taken on a machine whose disk is not still flushing
/// another's files (hundreds of MB after the submission measure; the kernel then
/// throttles every writer and each `fsync` waits behind that writeback).
fn settle_disk() {
    nix::unistd::sync();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&[7.0], 90.0), 7.0);
        let runs = vec![
            Run {
                metrics: vec![Metric::new("x", "s", 1.0).goal(Goal::AtMost(2.0))],
                notes: vec![],
            },
            Run {
                metrics: vec![Metric::new("x", "s", 3.0)],
                notes: vec![],
            },
            Run {
                metrics: vec![Metric::new("x", "s", 2.0)],
                notes: vec![],
            },
        ];
        let s = summarize("m", &runs);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].median, s[0].min, s[0].max), (2.0, 1.0, 3.0));
        assert_eq!(s[0].spread(), 1.0);
        assert!(Goal::AtMost(2.0).met(s[0].median));
        assert!(!Goal::AtLeast(2.5).met(s[0].median));
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_num(1_234_567.0), "1,234,567");
        assert_eq!(fmt_num(20_000.0), "20,000");
        assert_eq!(fmt_num(512.4), "512");
        assert_eq!(fmt_num(1.234), "1.23");
        assert_eq!(fmt_num(0.0123), "0.012");
    }

    #[test]
    fn replay_log_is_a_realistic_mix() {
        let recs = replay::records(60_000);
        assert_eq!(recs.len(), 60_000);
        let count = |k: &str| recs.iter().filter(|r| r.kind() == k).count();
        for k in [
            "JOB_NEW",
            "JOB_START",
            "JOB_START_ACCEPT",
            "JOB_EXECUTE",
            "JOB_STATUS",
            "JOB_SIGNAL",
            "JOB_CLEAN",
        ] {
            assert!(count(k) > 100, "{k}: {}", count(k));
        }
        // Every record maps to a core event, and writes and reads back.
        for r in recs.iter().step_by(97) {
            assert!(basalt_mbatchd::journal::from_record(r).is_some(), "{r:?}");
            let back = el::parse_line(&r.to_line()).ok().flatten();
            assert_eq!(back.as_ref(), Some(r));
        }
    }

    #[test]
    fn every_measure_has_a_unique_name() {
        for (i, m) in MEASURES.iter().enumerate() {
            assert!(MEASURES[..i].iter().all(|o| o.name != m.name));
            assert!(m.runs >= 1 && m.quick_runs >= 1);
        }
        for (i, p) in PEERS.iter().enumerate() {
            assert!(MEASURES.iter().all(|m| m.name != p.measure.name));
            assert!(PEERS[..i].iter().all(|o| o.measure.name != p.measure.name));
            // Every pair names a Basalt measure.
            for (measure, _, _, _) in p.pairs {
                assert!(MEASURES.iter().any(|m| m.name == *measure), "{measure}");
            }
        }
    }

    #[test]
    fn peer_results_are_compared() {
        let text = "noise\nRESULT 2026-01-01T00:00:00Z\thyperqueue\tv0\tlat_ms\t2.5\tms\n\
                    RESULT 2026-01-01T00:00:00Z\thyperqueue\tv0\tlat_ms\t3.5\tms\n";
        let r = slurm::parse_results(text);
        assert_eq!(r.get("lat_ms"), Some(&vec![2.5, 3.5]));
        let basalt = vec![Run {
            metrics: vec![
                Metric::new("API submit -> start p50", "ms", 2.0),
                Metric::new("API submit -> start p99", "ms", 4.0),
            ],
            notes: vec![],
        }];
        let hq = vec![Run {
            metrics: vec![
                Metric::new("API submit -> start p50", "ms", 20.0),
                Metric::new("API submit -> start p99", "ms", 2.0),
            ],
            notes: vec![],
        }];
        let latency = MEASURES.iter().find(|m| m.name == "latency").unwrap();
        let results = vec![
            (latency, basalt.clone(), summarize("latency", &basalt)),
            (&HYPERQUEUE, hq.clone(), summarize(HYPERQUEUE.name, &hq)),
        ];
        let md = render_md(&results, &Opts::default(), UNIX_EPOCH);
        assert!(
            md.contains("## Basalt and HyperQueue, same machine, same run"),
            "{md}"
        );
        assert!(!md.contains("Basalt and Slurm"), "{md}");
        assert!(md.contains("| 2.00 ms | 20.0 ms | 10.0 × better |"), "{md}");
        assert!(md.contains("| 4.00 ms | 2.00 ms | 2.00 × worse |"), "{md}");
        let json = render_json(Path::new("."), &results, &Opts::default(), UNIX_EPOCH);
        assert_eq!(json["vs_hyperqueue"][0]["hyperqueue"], 20.0);
        assert_eq!(json["vs_slurm"].as_array().map(Vec::len), Some(0));
    }
}
