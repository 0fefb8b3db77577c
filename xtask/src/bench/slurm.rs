//! `--vs slurm`: the comparable measures run against a one-machine Slurm (slurmctld +
//! slurmd + munged, the `tuned` profile: Slurm's high-throughput advice for a small node)
//! in the same invocation, with the scripts in `xtask/slurm/` (from the project's peer
//! benchmarks): drain of N trivial jobs (an sbatch loop and one job array), submit →
//! start on an idle cluster and the sbatch call, a loop of held submissions, and daemon
//! memory idle and with N pending jobs. Nothing is installed here: when Slurm or its
//! configuration is missing the bench says what to run and stops before measuring.

use super::*;

/// What the scripts need, and where the profile's configuration must be.
fn bench_var() -> PathBuf {
    std::env::var_os("BENCH_VAR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/lib/lsfbench"))
}

fn on_path(cmd: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| {
            let f = d.join(cmd);
            f.is_file()
        })
    })
}

/// Fail with what to do unless Slurm can be measured here.
pub fn check(root: &Path) -> Result<()> {
    let setup = root.join("xtask/slurm/slurm-setup.sh");
    let mut missing: Vec<String> = [
        "slurmctld",
        "slurmd",
        "munged",
        "munge",
        "sbatch",
        "squeue",
        "scontrol",
        "sinfo",
        "scancel",
    ]
    .iter()
    .filter(|c| !on_path(c))
    .map(|c| (*c).to_owned())
    .collect();
    let conf = bench_var().join("slurm/tuned/slurm.conf");
    if !conf.exists() {
        missing.push(conf.display().to_string());
    }
    if !nix::unistd::getuid().is_root() {
        missing.push("root (the scripts start slurmctld and slurmd as root)".into());
    }
    if !missing.is_empty() {
        bail!(
            "--vs slurm needs a one-machine Slurm set up for benchmarking; missing: {}.\n\
             Install and configure it (as root; Debian packages slurm-wlm, slurm-client and \
             munge, configurations under {}) with:\n    sudo bash {}\nthen run the bench again.",
            missing.join(", "),
            bench_var().display(),
            setup.display()
        );
    }
    Ok(())
}

/// Run one script; its `RESULT` lines as metric -> values (and unit).
fn script(root: &Path, name: &str, args: &[&str]) -> Result<BTreeMap<String, Vec<f64>>> {
    let path = root.join("xtask/slurm").join(name);
    eprintln!("   {} {}", path.display(), args.join(" "));
    let o = Command::new("bash")
        .arg(&path)
        .args(args)
        .env("RESULTS", root.join("target/bench/slurm-results.txt"))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", path.display()))?;
    let out = parse_results(&String::from_utf8_lossy(&o.stdout));
    if out.is_empty() {
        bail!(
            "{name} printed no results (exit {:?}): {}",
            o.status.code(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    Ok(out)
}

/// The `RESULT <time>\t<peer>\t<profile>\t<metric>\t<value>\t<unit>` lines of a script's
/// output as metric -> values.
pub(super) fn parse_results(text: &str) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for l in text.lines() {
        let Some(rest) = l.strip_prefix("RESULT ") else {
            continue;
        };
        let f: Vec<&str> = rest.split('\t').collect();
        if let (Some(metric), Some(v)) = (f.get(3), f.get(4).and_then(|v| v.parse::<f64>().ok())) {
            out.entry((*metric).to_owned()).or_default().push(v);
        }
    }
    out
}

fn med(m: &BTreeMap<String, Vec<f64>>, key: &str) -> Result<f64> {
    m.get(key)
        .filter(|v| !v.is_empty())
        .map(|v| median(v))
        .ok_or_else(|| anyhow!("no {key} in the Slurm results"))
}

/// The Slurm measures: one run.
pub fn run(root: &Path, quick: bool) -> Result<Run> {
    let n = if quick { 200 } else { 1000 };
    let lat_n = if quick { 5 } else { 20 };
    let mem_n = if quick { 1000 } else { 10_000 };
    let (ns, lats, mems) = (n.to_string(), lat_n.to_string(), mem_n.to_string());
    let drain = script(root, "slurm-drain.sh", &["tuned", &ns, "1"])?;
    let lat = script(root, "slurm-latency.sh", &["tuned", &lats])?;
    let submit = script(root, "slurm-submit.sh", &["tuned", &ns, "1"])?;
    let mem = script(root, "slurm-memory.sh", &["tuned", &mems, "1"])?;
    let nf = n as f64;
    let idle_kib = med(&mem, "rss_slurmctld_idle_kib")?
        + med(&mem, "rss_slurmd_idle_kib")?
        + med(&mem, "rss_munged_idle_kib").unwrap_or(0.0);
    let ctld_idle = med(&mem, "rss_slurmctld_idle_kib")?;
    let ctld_pending = med(&mem, &format!("rss_slurmctld_pending{mem_n}_kib"))?;
    Ok(Run {
        metrics: vec![
            Metric::new(
                "drain, sbatch loop",
                "jobs/s",
                nf / med(&drain, &format!("drain_loop_{n}_s"))?,
            ),
            Metric::new(
                "drain, one array",
                "jobs/s",
                nf / med(&drain, &format!("drain_array_{n}_s"))?,
            ),
            Metric::new(
                "sbatch -> start p50",
                "ms",
                med(&lat, "latency_submit_to_start_s")? * 1000.0,
            ),
            Metric::new(
                "sbatch wall time p50",
                "ms",
                med(&lat, "latency_sbatch_call_s")? * 1000.0,
            ),
            Metric::new(
                "sbatch calls in a row",
                "jobs/s",
                nf / med(&submit, &format!("submit_loop_{n}_s"))?,
            ),
            Metric::new(
                "slurmctld + slurmd + munged RSS, idle",
                "MB",
                idle_kib / 1024.0,
            ),
            Metric::new(
                &format!("slurmctld per pending job at {mem_n}"),
                "B",
                (ctld_pending - ctld_idle) * 1024.0 / mem_n as f64,
            ),
        ],
        notes: vec![format!(
            "Slurm {} profile `tuned`; drain and submission loop of {n} jobs, {lat_n} \
             latency samples, {mem_n} pending for memory",
            slurm_version()
        )],
    })
}

fn slurm_version() -> String {
    Command::new("slurmctld")
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Pairs of (Basalt measure, Basalt metric, Slurm metric, higher is better); metric
/// names match by prefix.
pub const PAIRS: &[(&str, &str, &str, bool)] = &[
    ("drain", "drain, one array", "drain, one array", true),
    (
        "drain",
        "drain, separate jobs via the API",
        "drain, sbatch loop",
        true,
    ),
    ("latency", "bsub -> start p50", "sbatch -> start p50", false),
    ("bsub", "bsub wall time p50", "sbatch wall time p50", false),
    ("bsub", "bsub calls in a row", "sbatch calls in a row", true),
    (
        "idle",
        "lim + res + sbatchd + mbatchd RSS",
        "slurmctld + slurmd + munged RSS, idle",
        false,
    ),
    (
        "memory",
        "per pending job at",
        "slurmctld per pending job at",
        false,
    ),
];
