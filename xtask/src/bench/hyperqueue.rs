//! `--vs hyperqueue`: the comparable measures run against HyperQueue in the same
//! invocation, from its PyPI wheel (`hyperqueue`, pinned by `xtask/hyperqueue/hq-setup.sh`,
//! which installs it into `target/hq-venv` when it is not there yet). The wheel embeds the
//! server and the worker in its Python extension and ships no `hq` command, so
//! `xtask/hyperqueue/hq-bench.py` drives it through its Python API: one server and one
//! worker with 2 CPUs in a process of their own with a private server directory under
//! `target/bench/hq`, stopped at the end whatever happens; a drain of N `true` tasks as one
//! job (the API's job array) and as N separate jobs submitted one after the other while the
//! first run, each next to `xargs -P2 true` run just before; and submit → start on the idle
//! cluster, one job at a time. N and the latency jobs are the sizes of Basalt's `drain` and
//! `latency` (10,000 and 200; `--quick`: 1,000 and 30).

use super::*;

fn venv(root: &Path) -> PathBuf {
    target_dir(root).join("hq-venv")
}

/// Install HyperQueue unless it is there already; its version (`v0.27.0`).
pub fn setup(root: &Path) -> Result<String> {
    let script = root.join("xtask/hyperqueue/hq-setup.sh");
    let o = Command::new("bash")
        .arg(&script)
        .arg(venv(root))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !o.status.success() {
        bail!(
            "--vs hyperqueue: {} failed ({}); it installs the `hyperqueue` wheel from PyPI \
             into {} and needs python3 with venv",
            script.display(),
            o.status,
            venv(root).display()
        );
    }
    let text = String::from_utf8_lossy(&o.stdout);
    Ok(text.lines().last().unwrap_or_default().trim().to_owned())
}

fn med(m: &BTreeMap<String, Vec<f64>>, key: &str) -> Result<f64> {
    m.get(key)
        .filter(|v| !v.is_empty())
        .map(|v| median(v))
        .ok_or_else(|| anyhow!("no {key} in the HyperQueue results"))
}

fn samples<'a>(m: &'a BTreeMap<String, Vec<f64>>, key: &str) -> Result<&'a [f64]> {
    m.get(key)
        .filter(|v| !v.is_empty())
        .map(|v| v.as_slice())
        .ok_or_else(|| anyhow!("no {key} in the HyperQueue results"))
}

/// The HyperQueue measures: one run.
pub fn run(root: &Path, quick: bool) -> Result<Run> {
    let version = setup(root)?;
    let n = if quick { 1_000 } else { 10_000 };
    let lat_n = if quick { 30 } else { 200 };
    let top = target_dir(root).join("bench/hq");
    let _ = std::fs::remove_dir_all(&top);
    std::fs::create_dir_all(&top).with_context(|| format!("creating {}", top.display()))?;
    let script = root.join("xtask/hyperqueue/hq-bench.py");
    let python = venv(root).join("bin/python");
    eprintln!(
        "   {} {} run {} {n} {lat_n}",
        python.display(),
        script.display(),
        top.display()
    );
    let o = Command::new(&python)
        .arg(&script)
        .args(["run", &top.to_string_lossy(), &n.to_string()])
        .arg(lat_n.to_string())
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    let res = slurm::parse_results(&String::from_utf8_lossy(&o.stdout));
    if !o.status.success() || res.is_empty() {
        bail!(
            "hq-bench.py failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let x = med(&res, &format!("xargs_true_{n}_s"))?;
    let array = med(&res, &format!("drain_array_{n}_s"))?;
    let jobs = med(&res, &format!("drain_separate_{n}_s"))?;
    let submitted = med(&res, &format!("drain_separate_submitpart_{n}_s"))?;
    let lat = samples(&res, "latency_submit_to_start_ms")?;
    let call = samples(&res, "submit_call_ms")?;
    let rate = |s: f64| n as f64 / s;
    let _ = std::fs::remove_dir_all(&top);
    Ok(Run {
        metrics: vec![
            Metric::new("xargs -P2 true", "jobs/s", rate(x)),
            Metric::new("drain, one job of N tasks", "jobs/s", rate(array)),
            Metric::new("drain, one job, of xargs' rate", "%", x / array * 100.0),
            Metric::new("drain, separate jobs via the API", "jobs/s", rate(jobs)),
            Metric::new(
                "drain, separate jobs via the API, of xargs' rate",
                "%",
                x / jobs * 100.0,
            ),
            Metric::new("API submit -> start p50", "ms", percentile(lat, 50.0)),
            Metric::new("API submit -> start p99", "ms", percentile(lat, 99.0)),
            Metric::new("API submit call p50", "ms", percentile(call, 50.0)),
        ],
        notes: vec![format!(
            "HyperQueue {version} from the PyPI wheel (Python API: the wheel has no `hq` \
             command), one server and one worker with 2 CPUs; {n} tasks `true` with output \
             discarded; xargs {x:.2} s, one job of {n} tasks (one `Client.submit`) {array:.2} s, \
             {n} one-task jobs submitted one after the other by one client {jobs:.2} s (their \
             submission took {submitted:.2} s of it); finish seen by polling the server every \
             10 ms; {} latency jobs one at a time, the start is when the job's `date` ran",
            lat.len()
        )],
    })
}

/// Pairs of (Basalt measure, Basalt metric, HyperQueue metric, higher is better); metric
/// names match by prefix.
pub const PAIRS: &[(&str, &str, &str, bool)] = &[
    (
        "drain",
        "drain, one array",
        "drain, one job of N tasks",
        true,
    ),
    (
        "drain",
        "drain, one array, of xargs' rate",
        "drain, one job, of xargs' rate",
        true,
    ),
    (
        "drain",
        "drain, separate jobs via the API",
        "drain, separate jobs via the API",
        true,
    ),
    (
        "drain",
        "drain, separate jobs via the API, of xargs' rate",
        "drain, separate jobs via the API, of xargs' rate",
        true,
    ),
    (
        "latency",
        "API submit -> start p50",
        "API submit -> start p50",
        false,
    ),
    (
        "latency",
        "API submit -> start p99",
        "API submit -> start p99",
        false,
    ),
];
