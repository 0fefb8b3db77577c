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
//!   `Sched::on_event` for every event). Goal: under 2 s.
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
//! `--vs slurm` adds the Slurm side ([`slurm`]) and a comparison table.

use anyhow::{Context, Result, anyhow, bail};
use basalt_config::embedded::{DefaultCluster, DefaultHost};
use basalt_eventlog as el;
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
    /// `--vs slurm`: also run the comparable measures against Slurm.
    pub vs_slurm: bool,
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

mod drain;
mod failover;
mod idle;
mod latency;
mod memory;
mod query;
mod sched;
mod slurm;

/// The Slurm side of `--vs slurm` (run by [`bench`] itself, not as a measure).
static SLURM: Measure = Measure {
    name: "slurm",
    what: "the same measures against a one-machine Slurm (profile tuned), same invocation",
    runs: 1,
    quick_runs: 1,
    run: |_, _| bail!("the Slurm measures run with --vs slurm"),
};

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
        what: "RSS and CPU of the idle daemons of a host (lim + sbatchd), and of mbatchd",
        runs: 3,
        quick_runs: 1,
        run: idle::run,
    },
    Measure {
        name: "failover",
        what: "kill -9 of the master's daemons to a new mbatchd serving, default timings",
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
fn fmt_num(v: f64) -> String {
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
        if !MEASURES.iter().any(|m| m.name == name) {
            bail!(
                "unknown measure {name:?}; the measures are: {}",
                MEASURES
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if opts.vs_slurm {
        slurm::check(root)?;
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
        if opts.vs_slurm {
            args.extend(["--vs".to_owned(), "slurm".to_owned()]);
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
        let t = Instant::now();
        let samples = (m.run)(&ctx, runs).with_context(|| format!("measure {}", m.name))?;
        eprintln!("   done in {:.1} s", t.elapsed().as_secs_f64());
        let summary = summarize(m.name, &samples);
        results.push((m, samples, summary));
    }
    let _ = std::fs::remove_dir_all(&ctx.work);
    if opts.vs_slurm {
        eprintln!("== slurm: {}", SLURM.what);
        let t = Instant::now();
        let run = slurm::run(root, opts.quick).context("measure slurm")?;
        eprintln!("   done in {:.1} s", t.elapsed().as_secs_f64());
        let runs = vec![run];
        let summary = summarize(SLURM.name, &runs);
        results.push((&SLURM, runs, summary));
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

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mem_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(0);
    format!(
        "{cpus} CPUs, {:.0} GiB, Linux {}",
        mem_kb as f64 / 1_048_576.0,
        kernel.trim()
    )
}

fn git_commit(root: &Path) -> String {
    Command::new("git")
        .current_dir(root)
        .args(["describe", "--always", "--dirty"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn render_md(
    results: &[(&Measure, Vec<Run>, Vec<Summary>)],
    opts: &Opts,
    at: SystemTime,
) -> String {
    let mut s = String::new();
    s.push_str("# cargo xtask bench\n\n");
    s.push_str(&format!(
        "{}; {}; {} s since the epoch.\n\n",
        if opts.quick {
            "--quick (reduced sizes)"
        } else {
            "full sizes"
        },
        machine(),
        at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    ));
    s.push_str("| measure | metric | median | min | max | spread | goal | met |\n");
    s.push_str("|---|---|---:|---:|---:|---:|---|---|\n");
    for (_, _, sums) in results {
        for x in sums {
            s.push_str(&format!(
                "| {} | {} | {} {} | {} | {} | {:.0} % | {} | {} |\n",
                x.measure,
                x.name,
                fmt_num(x.median),
                x.unit,
                fmt_num(x.min),
                fmt_num(x.max),
                x.spread() * 100.0,
                x.goal.map_or(String::new(), |g| g.text(x.unit)),
                x.goal
                    .map_or("", |g| if g.met(x.median) { "yes" } else { "**no**" }),
            ));
        }
    }
    let cmp = comparison(results);
    if !cmp.is_empty() {
        s.push_str("\n## Basalt and Slurm, same machine, same run\n\n");
        s.push_str("| metric | Basalt | Slurm | Basalt is |\n|---|---:|---:|---|\n");
        for c in &cmp {
            s.push_str(&format!(
                "| {} / {} | {} {} | {} {} | {} |\n",
                c.basalt_metric,
                c.slurm_metric,
                fmt_num(c.basalt),
                c.unit,
                fmt_num(c.slurm),
                c.unit,
                c.verdict()
            ));
        }
    }
    for (m, runs, _) in results {
        let notes: Vec<&String> = runs.iter().flat_map(|r| &r.notes).collect();
        if notes.is_empty() {
            continue;
        }
        s.push_str(&format!("\n**{}** — {}\n\n", m.name, m.what));
        for (i, r) in runs.iter().enumerate() {
            for n in &r.notes {
                s.push_str(&format!("- run {}: {n}\n", i + 1));
            }
        }
    }
    s
}

/// One row of the Slurm comparison.
struct Compared {
    basalt_metric: String,
    slurm_metric: String,
    unit: &'static str,
    basalt: f64,
    slurm: f64,
    higher_is_better: bool,
}

impl Compared {
    /// How many times better (or worse) Basalt's median is.
    fn factor(&self) -> f64 {
        if self.higher_is_better {
            self.basalt / self.slurm
        } else {
            self.slurm / self.basalt
        }
    }

    fn verdict(&self) -> String {
        let f = self.factor();
        if f >= 1.0 {
            format!("{} × better", fmt_num(f))
        } else {
            format!("{} × worse", fmt_num(1.0 / f))
        }
    }
}

/// The pairs of [`slurm::PAIRS`] found in the results (metric names match by prefix).
fn comparison(results: &[(&Measure, Vec<Run>, Vec<Summary>)]) -> Vec<Compared> {
    let find = |measure: &str, prefix: &str| {
        results
            .iter()
            .filter(|(m, _, _)| m.name == measure)
            .flat_map(|(_, _, sums)| sums)
            .find(|x| x.name.starts_with(prefix))
    };
    let mut out = Vec::new();
    for (measure, ours, theirs, higher) in slurm::PAIRS {
        if let (Some(b), Some(s)) = (find(measure, ours), find(SLURM.name, theirs))
            && b.unit == s.unit
        {
            out.push(Compared {
                basalt_metric: b.name.clone(),
                slurm_metric: s.name.clone(),
                unit: b.unit,
                basalt: b.median,
                slurm: s.median,
                higher_is_better: *higher,
            });
        }
    }
    out
}

fn render_json(
    root: &Path,
    results: &[(&Measure, Vec<Run>, Vec<Summary>)],
    opts: &Opts,
    at: SystemTime,
) -> serde_json::Value {
    use serde_json::json;
    let measures: Vec<_> = results
        .iter()
        .map(|(m, runs, sums)| {
            json!({
                "name": m.name,
                "what": m.what,
                "runs": runs.len(),
                "metrics": sums.iter().map(|x| json!({
                    "name": x.name,
                    "unit": x.unit,
                    "values": x.values,
                    "median": x.median,
                    "min": x.min,
                    "max": x.max,
                    "spread": x.spread(),
                    "goal": x.goal.map(|g| match g {
                        Goal::AtMost(v) => json!({"at_most": v}),
                        Goal::AtLeast(v) => json!({"at_least": v}),
                    }),
                    "met": x.goal.map(|g| g.met(x.median)),
                })).collect::<Vec<_>>(),
                "notes": runs.iter().map(|r| r.notes.clone()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let cmp: Vec<_> = comparison(results)
        .iter()
        .map(|c| {
            json!({
                "basalt_metric": c.basalt_metric,
                "slurm_metric": c.slurm_metric,
                "unit": c.unit,
                "basalt": c.basalt,
                "slurm": c.slurm,
                "higher_is_better": c.higher_is_better,
                "basalt_factor": c.factor(),
            })
        })
        .collect();
    json!({
        "quick": opts.quick,
        "vs_slurm": cmp,
        "time": at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        "commit": git_commit(root),
        "machine": machine(),
        "measures": measures,
    })
}

// ------------------------------------------------------------------------------- cluster

/// A Basalt cluster of release daemons (lim and sbatchd on every host, and the mbatchd the
/// master's sbatchd starts), hosts hostA, hostB, ... on loopback addresses of their own,
/// with Basalt's default timings and log level. Stopped and removed on drop.
pub struct Cluster {
    pub top: PathBuf,
    pub envdir: PathBuf,
    pub bin: PathBuf,
    /// The first host (the master at start).
    pub host: String,
    pub hosts: Vec<String>,
    /// (daemon, host, process).
    children: Vec<(String, String, Child)>,
}

/// A 127.a.b.0/24 whose .1 LIM port nobody has bound.
fn free_loopback(port: u16) -> Result<(u8, u8)> {
    let mut x = u64::from(std::process::id())
        ^ SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
    for _ in 0..1000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = 1 + (x % 254) as u8;
        let b = ((x >> 8) % 256) as u8;
        let addr = Ipv4Addr::new(127, a, b, 1);
        if std::net::TcpListener::bind((addr, port)).is_ok() {
            return Ok((a, b));
        }
    }
    bail!("no free loopback address found")
}

fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) -> Result<()> {
    let end = Instant::now() + limit;
    loop {
        if ok() {
            return Ok(());
        }
        if Instant::now() > end {
            bail!("timed out after {limit:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Where a cluster's files go before its daemons start: `top` and the configuration
/// (LSF_ENVDIR); lsb.* are in `top/conf/lsbatch/bench/configdir`.
pub struct Prepared<'a> {
    pub top: &'a Path,
    pub config: &'a basalt_config::Config,
}

impl Prepared<'_> {
    /// Replace `old` by `new` in a file of the batch configuration directory.
    pub fn edit_lsb(&self, file: &str, old: &str, new: &str) -> Result<()> {
        let path = self.top.join("conf/lsbatch/bench/configdir").join(file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        if !text.contains(old) {
            bail!("{} has no {old:?}", path.display());
        }
        std::fs::write(&path, text.replacen(old, new, 1))?;
        Ok(())
    }
}

impl Cluster {
    /// One host, the embedded default configuration.
    pub fn start(ctx: &Ctx, name: &str) -> Result<Cluster> {
        Cluster::start_with(ctx, name, 1, |_| Ok(()))
    }

    /// `n` hosts; `prepare` may change the configuration or write files (an lsb.events to
    /// replay) before any daemon starts. Returns once mbatchd answers `bhosts` with every
    /// host ok.
    pub fn start_with(
        ctx: &Ctx,
        name: &str,
        n: usize,
        prepare: impl FnOnce(&Prepared) -> Result<()>,
    ) -> Result<Cluster> {
        for b in ["lim", "sbatchd", "mbatchd", "bsub", "bhosts", "lsid"] {
            if !ctx.bin.join(b).exists() {
                bail!("{} is not built", ctx.bin.join(b).display());
            }
        }
        let top = ctx.work.join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&top);
        std::fs::create_dir_all(top.join("log"))?;
        let (a, b) = free_loopback(7869)?;
        let user = crate::current_user();
        let hosts: Vec<String> = (0..n)
            .map(|i| format!("host{}", (b'A' + (i % 26) as u8) as char))
            .collect();
        let mut spec = DefaultCluster::new(
            "bench",
            &user,
            hosts
                .iter()
                .enumerate()
                .map(|(i, h)| DefaultHost {
                    name: h.clone(),
                    address: Some(IpAddr::V4(Ipv4Addr::new(127, a, b, 1 + i as u8))),
                    server: true,
                })
                .collect(),
        );
        spec.root_rex = nix::unistd::geteuid().is_root();
        let envdir = spec
            .write(&top)
            .with_context(|| format!("writing a configuration in {}", top.display()))?;
        let config = basalt_config::load(&envdir)
            .map(|l| l.config)
            .map_err(|e| anyhow!("{e}"))?;
        prepare(&Prepared {
            top: &top,
            config: &config,
        })?;
        let mut c = Cluster {
            top,
            envdir,
            bin: ctx.bin.clone(),
            host: hosts[0].clone(),
            hosts,
            children: Vec::new(),
        };
        for h in c.hosts.clone() {
            c.spawn("lim", &h)?;
        }
        let master = format!("My master name is {}", c.host);
        wait_until("LIM to elect a master", Duration::from_secs(30), || {
            c.output("lsid", &[])
                .is_some_and(|o| o.lines().any(|l| l.trim() == master))
        })?;
        for h in c.hosts.clone() {
            c.spawn("sbatchd", &h)?;
        }
        c.wait_serving(Duration::from_secs(300))?;
        Ok(c)
    }

    /// Wait until mbatchd answers `bhosts` with every host of the cluster ok.
    pub fn wait_serving(&self, limit: Duration) -> Result<()> {
        wait_until("mbatchd to answer bhosts", limit, || self.serving())
    }

    /// Whether mbatchd answers `bhosts` with every host that still runs an sbatchd ok.
    pub fn serving(&self) -> bool {
        let live: Vec<&String> = self
            .hosts
            .iter()
            .filter(|h| {
                self.children
                    .iter()
                    .any(|(d, ch, _)| d == "sbatchd" && ch == *h)
            })
            .collect();
        self.output("bhosts", &[]).is_some_and(|o| {
            live.iter().all(|h| {
                o.lines()
                    .any(|l| l.split_whitespace().take(2).eq([h.as_str(), "ok"]))
            })
        })
    }

    fn spawn(&mut self, daemon: &str, host: &str) -> Result<()> {
        let log = std::fs::File::create(self.top.join("log").join(format!("{daemon}.{host}.log")))?;
        let child = Command::new(self.bin.join(daemon))
            .args(["-H", host])
            .env("LSF_ENVDIR", &self.envdir)
            .env_remove("BASALT_LOG")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {daemon} for {host}"))?;
        self.children
            .push((daemon.to_owned(), host.to_owned(), child));
        Ok(())
    }

    /// kill -9 a host's lim and sbatchd (the harness's children) and its mbatchd.
    pub fn kill_host(&mut self, host: &str) {
        use nix::sys::signal::{Signal, kill};
        for (_, _, c) in self.children.iter_mut().filter(|(_, h, _)| h == host) {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.children.retain(|(_, h, _)| h != host);
        for pid in self.pids_of_host("mbatchd", host) {
            let _ = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
    }

    /// Pid of the harness's `daemon` for `host`.
    pub fn daemon_pid(&self, daemon: &str, host: &str) -> Option<i32> {
        self.children
            .iter()
            .find(|(d, h, _)| d == daemon && h == host)
            .map(|(_, _, c)| c.id() as i32)
    }

    /// A command of the cluster, acting from its first host.
    pub fn command(&self, name: &str) -> Command {
        let mut c = Command::new(self.bin.join(name));
        c.env("LSF_ENVDIR", &self.envdir)
            .env("BASALT_HOST", &self.host)
            .env_remove("LSF_SERVER_HOSTS")
            .env_remove("BASALT_MBD_ADDR");
        c
    }

    fn output(&self, name: &str, args: &[&str]) -> Option<String> {
        self.command(name)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    }

    pub fn config(&self) -> Result<basalt_config::Config> {
        basalt_config::load(&self.envdir)
            .map(|l| l.config)
            .map_err(|e| anyhow!("{e}"))
    }

    /// Pids of processes with this cluster's LSF_ENVDIR running `bin/<name>`.
    pub fn pids_of(&self, name: &str) -> Vec<i32> {
        self.pids_where(name, |_| true)
    }

    /// Like [`Cluster::pids_of`], for the processes started with `-H host`.
    pub fn pids_of_host(&self, name: &str, host: &str) -> Vec<i32> {
        self.pids_where(name, |args| {
            args.windows(2)
                .any(|w| w[0] == b"-H" && w[1] == host.as_bytes())
        })
    }

    fn pids_where(&self, name: &str, args_ok: impl Fn(&[&[u8]]) -> bool) -> Vec<i32> {
        let exe = self.bin.join(name);
        let exe = exe.canonicalize().unwrap_or(exe);
        let needle = format!("LSF_ENVDIR={}", self.envdir.display());
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return out;
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let is_bin = std::fs::read_link(e.path().join("exe")).is_ok_and(|p| p == exe);
            if !is_bin {
                continue;
            }
            let ours = std::fs::read(e.path().join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()));
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            if ours && args_ok(&args) {
                out.push(pid);
            }
        }
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        // sbatchd stops its mbatchd on SIGTERM; then everything else.
        for (_, _, c) in self.children.iter().rev() {
            let _ = kill(Pid::from_raw(c.id() as i32), Signal::SIGTERM);
        }
        let end = Instant::now() + Duration::from_secs(5);
        for (_, _, c) in &mut self.children {
            while Instant::now() < end && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        for pid in self.pids_of("mbatchd") {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = std::fs::remove_dir_all(&self.top);
    }
}

/// Counts the lines of a growing file that start with a prefix, reading only what was
/// appended since the last call (lsb.acct's JOB_FINISH records while a drain runs).
pub struct LineCounter {
    path: PathBuf,
    prefix: &'static [u8],
    offset: u64,
    partial: Vec<u8>,
    count: usize,
}

impl LineCounter {
    pub fn new(path: PathBuf, prefix: &'static [u8]) -> LineCounter {
        LineCounter {
            path,
            prefix,
            offset: 0,
            partial: Vec::new(),
            count: 0,
        }
    }

    /// Matching complete lines so far.
    pub fn poll(&mut self) -> Result<usize> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(self.count),
            Err(e) => return Err(e).with_context(|| format!("opening {}", self.path.display())),
        };
        f.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        self.offset += buf.len() as u64;
        self.partial.extend_from_slice(&buf);
        if let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') {
            let done: Vec<u8> = self.partial.drain(..=end).collect();
            self.count += done
                .split(|&b| b == b'\n')
                .filter(|l| l.starts_with(self.prefix))
                .count();
        }
        Ok(self.count)
    }
}

/// Resident set size of a process, KiB.
pub fn rss_kib(pid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// User + system CPU time of a process, seconds.
pub fn cpu_secs(pid: i32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state is field 3, utime 14, stime 15 (1-based in proc(5)).
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    Some((utime + stime) / hz)
}

// -------------------------------------------------------------------------------- replay

mod replay {
    use super::*;
    use basalt_eventlog::{
        Header, JobClean, JobExecute, JobNew, JobSignal, JobStart, JobStartAccept, JobStatus,
        MbdStart, Record, Rusage,
    };
    use basalt_sched::{Sched, SchedConfig};

    const HOSTS: usize = 8;
    const T0: i64 = 1_795_339_535;

    /// xorshift64*: the mix is the same on every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
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

            // (b) mbatchd's replay: the records become core events applied by on_event.
            let t = Instant::now();
            // Exactly mbatchd's start: take the lock, open lsb.events and lsb.acct with
            // the records turned into core events as they are read, then on_event.
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
            let mut seconds =
                Metric::new("mbatchd replay (open + from_record + on_event)", "s", full);
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
}

// -------------------------------------------------------------------------------- submit

pub mod submit {
    use super::*;
    use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
    use basalt_proto::mbatchd::{Caller, JobSubmission, SubmitRequest};

    /// Concurrent API clients (one connection each).
    const CLIENTS: usize = 64;

    /// What `bsub [-H] command` sends from `host`.
    pub fn submission(host: &str, command: &str, hold: bool) -> JobSubmission {
        use basalt_cli::batch::bsub::{BsubOpts, JobCommand, Submitter, build};
        let opts = BsubOpts {
            hold,
            ..BsubOpts::default()
        };
        let cmd = JobCommand {
            text: command.into(),
            is_script: false,
            script_name: None,
        };
        // What bsub sends: the submitter's environment, cwd, home and host.
        let who = Submitter {
            cwd: std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            home: std::env::var("HOME").unwrap_or_default(),
            umask: 0o022,
            from_host: host.to_owned(),
            vars: std::env::vars().collect(),
        };
        build(&opts, &cmd, &who)
    }

    /// `perf stat` counting mbatchd's fsync and fdatasync calls, when perf works here.
    struct SyncCounter {
        child: Child,
        out: PathBuf,
    }

    impl SyncCounter {
        fn start(pid: i32, out: PathBuf) -> Option<SyncCounter> {
            let child = Command::new("perf")
                .args([
                    "stat",
                    "-x,",
                    "-e",
                    "syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync",
                    "-p",
                    &pid.to_string(),
                    "-o",
                ])
                .arg(&out)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .ok()?;
            // perf needs a moment to attach.
            std::thread::sleep(Duration::from_millis(300));
            Some(SyncCounter { child, out })
        }

        /// (fdatasync, fsync) calls counted.
        fn stop(mut self) -> Option<(u64, u64)> {
            use nix::sys::signal::{Signal, kill};
            let _ = kill(
                nix::unistd::Pid::from_raw(self.child.id() as i32),
                Signal::SIGINT,
            );
            let end = Instant::now() + Duration::from_secs(5);
            while Instant::now() < end && matches!(self.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
            let text = std::fs::read_to_string(&self.out).ok()?;
            let count = |ev: &str| {
                text.lines()
                    .find(|l| l.contains(ev))
                    .and_then(|l| l.split(',').next())
                    .and_then(|v| v.trim().parse::<u64>().ok())
            };
            Some((count("sys_enter_fdatasync")?, count("sys_enter_fsync")?))
        }
    }

    pub fn run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
        let n = ctx.size(100_000, 10_000);
        let mut out = Vec::new();
        for i in 0..runs {
            let cluster = Cluster::start(ctx, &format!("submit{i}"))?;
            out.push(one_run(ctx, &cluster, n)?);
        }
        Ok(out)
    }

    /// gRPC clients of a cluster's mbatchd, connected once (connection set-up is not
    /// submission), acting as the current user on the cluster's first host.
    pub struct Api {
        rt: tokio::runtime::Runtime,
        clients: Vec<MbatchdClient<basalt_runtime::AuthChannel>>,
        caller: Caller,
    }

    impl Api {
        pub fn connect(cluster: &Cluster, clients: usize) -> Result<Api> {
            let config = cluster.config()?;
            let addr = basalt_runtime::mbd_addr(&config, &cluster.host)?;
            let uid = nix::unistd::getuid().as_raw();
            let caller = Caller {
                uid,
                gid: nix::unistd::getgid().as_raw(),
                user: basalt_cli::batch::user_name(uid),
                host: cluster.host.clone(),
            };
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            // Credentials from the LIM's socket, like a command's: part of every request.
            let auth = basalt_runtime::user_auth(&config);
            let clients = rt.block_on(async {
                let mut v = Vec::new();
                for _ in 0..clients.max(1) {
                    let ch = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
                        .tcp_nodelay(true)
                        .local_address(auth.local_addr())
                        .connect()
                        .await?;
                    v.push(MbatchdClient::new(
                        tonic::service::interceptor::InterceptedService::new(
                            ch,
                            auth.towards(&cluster.host),
                        ),
                    ));
                }
                anyhow::Ok(v)
            })?;
            Ok(Api {
                rt,
                clients,
                caller,
            })
        }

        fn request(&self, job: &JobSubmission) -> SubmitRequest {
            SubmitRequest {
                protocol: Some(basalt_proto::PROTOCOL),
                caller: Some(self.caller.clone()),
                job: Some(job.clone()),
                submit_token: String::new(),
            }
        }

        /// Submit `n` copies of `job` from every client at once; each acknowledgement's
        /// latency in ms.
        pub fn submit_all(&self, job: &JobSubmission, n: usize) -> Result<Vec<f64>> {
            let next = Arc::new(AtomicUsize::new(0));
            let lat: Vec<Vec<f64>> = self.rt.block_on(async {
                let mut tasks = Vec::new();
                for client in &self.clients {
                    let mut client = client.clone();
                    let next = next.clone();
                    let req = self.request(job);
                    tasks.push(tokio::spawn(async move {
                        let mut lat = Vec::new();
                        while next.fetch_add(1, Ordering::Relaxed) < n {
                            let s = Instant::now();
                            client.submit(req.clone()).await?;
                            lat.push(s.elapsed().as_secs_f64() * 1000.0);
                        }
                        anyhow::Ok(lat)
                    }));
                }
                let mut all = Vec::new();
                for task in tasks {
                    all.push(task.await??);
                }
                anyhow::Ok(all)
            })?;
            Ok(lat.into_iter().flatten().collect())
        }

        /// Submit one job; its id.
        pub fn submit_one(&self, job: &JobSubmission) -> Result<u64> {
            let mut client = self.clients[0].clone();
            let req = self.request(job);
            let r = self.rt.block_on(client.submit(req))?.into_inner();
            Ok(r.job_id)
        }
    }

    fn one_run(ctx: &Ctx, cluster: &Cluster, n: usize) -> Result<Run> {
        let config = cluster.config()?;
        let logdir = config.logdir();
        let events = logdir.join(el::EVENTS_FILE);
        let before = count_job_new(&events)?;
        let mbd = cluster.pids_of("mbatchd");
        let Some(&mbd_pid) = mbd.first() else {
            bail!("mbatchd is not running");
        };
        let job = submission(&cluster.host, "sleep 1", true);
        let api = Api::connect(cluster, CLIENTS)?;
        let counter = SyncCounter::start(mbd_pid, ctx.work.join("perf-sync.txt"));
        let t = Instant::now();
        let lat = api.submit_all(&job, n)?;
        let elapsed = t.elapsed().as_secs_f64();
        let syncs = counter.and_then(SyncCounter::stop);
        drop(api);

        if lat.len() != n {
            bail!("{} submissions acknowledged, {n} sent", lat.len());
        }
        // Durability: every acknowledged job is in lsb.events already.
        let logged = count_job_new(&events)? - before;
        if logged < n {
            bail!(
                "{n} jobs acknowledged but only {logged} JOB_NEW records in {}",
                events.display()
            );
        }
        let rate = n as f64 / elapsed;
        let mut notes = vec![format!(
            "{n} held jobs from {CLIENTS} concurrent clients in {elapsed:.2} s; \
             {logged} JOB_NEW records in lsb.events"
        )];
        match syncs {
            Some((fdatasync, fsync)) => notes.push(format!(
                "mbatchd made {fdatasync} fdatasync calls ({:.1} jobs per fdatasync, \
                 lsb.events group commits) and {fsync} fsync calls ({:.2} per job: the \
                 spooled job files and their directory)",
                n as f64 / fdatasync.max(1) as f64,
                fsync as f64 / n as f64
            )),
            None => notes.push("fsync/fdatasync calls not counted (perf stat unavailable)".into()),
        }
        Ok(Run {
            metrics: vec![
                Metric::new("API submissions, durable", "jobs/s", rate)
                    .goal(Goal::AtLeast(20_000.0)),
                Metric::new(
                    "API submit latency p50 (64 in flight)",
                    "ms",
                    percentile(&lat, 50.0),
                ),
                Metric::new(
                    "API submit latency p99 (64 in flight)",
                    "ms",
                    percentile(&lat, 99.0),
                ),
            ],
            notes,
        })
    }

    fn count_job_new(path: &Path) -> Result<usize> {
        let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        Ok(text
            .split(|&b| b == b'\n')
            .filter(|l| l.starts_with(b"\"JOB_NEW\""))
            .count())
    }

    /// `bsub -H sleep 1`, one call after another.
    pub fn bsub_run(ctx: &Ctx, runs: usize) -> Result<Vec<Run>> {
        let calls = ctx.size(200, 50);
        let cluster = Cluster::start(ctx, "bsub")?;
        let mut out = Vec::new();
        for _ in 0..runs {
            let mut ms = Vec::with_capacity(calls);
            for i in 0..calls + 5 {
                let t = Instant::now();
                let o = cluster
                    .command("bsub")
                    .args(["-H", "sleep", "1"])
                    .stdin(Stdio::null())
                    .output()
                    .context("running bsub")?;
                let took = t.elapsed().as_secs_f64() * 1000.0;
                if !o.status.success() {
                    bail!(
                        "bsub failed: {}{}",
                        String::from_utf8_lossy(&o.stdout),
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
                // The first calls warm the page cache and the LIM's answers.
                if i >= 5 {
                    ms.push(took);
                }
            }
            out.push(Run {
                metrics: vec![
                    Metric::new("bsub wall time p50", "ms", percentile(&ms, 50.0))
                        .goal(Goal::AtMost(5.0)),
                    Metric::new("bsub wall time p90", "ms", percentile(&ms, 90.0)),
                    Metric::new(
                        "bsub calls in a row",
                        "jobs/s",
                        ms.len() as f64 / (ms.iter().sum::<f64>() / 1000.0),
                    ),
                ],
                notes: vec![format!("{calls} calls of `bsub -H sleep 1` in a row")],
            });
        }
        Ok(out)
    }
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
    }
}
