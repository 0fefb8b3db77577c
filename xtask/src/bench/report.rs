//! The bench report: the machine and commit, `results.md` and `results.json`, and the
//! comparisons with the peers of `--vs` (Slurm, HyperQueue).

use super::*;

pub(crate) fn machine() -> String {
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

pub(crate) fn git_commit(root: &Path) -> String {
    Command::new("git")
        .current_dir(root)
        .args(["describe", "--always", "--dirty"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

pub(super) fn render_md(
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
    for peer in PEERS {
        let cmp = comparison(results, peer);
        if cmp.is_empty() {
            continue;
        }
        s.push_str(&format!(
            "\n## Basalt and {}, same machine, same run\n\n",
            peer.label
        ));
        s.push_str(&format!(
            "| metric | Basalt | {} | Basalt is |\n|---|---:|---:|---|\n",
            peer.label
        ));
        for c in &cmp {
            s.push_str(&format!(
                "| {} / {} | {} {} | {} {} | {} |\n",
                c.basalt_metric,
                c.peer_metric,
                fmt_num(c.basalt),
                c.unit,
                fmt_num(c.peer),
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

/// One row of the comparison with a peer.
pub(super) struct Compared {
    basalt_metric: String,
    peer_metric: String,
    unit: &'static str,
    basalt: f64,
    peer: f64,
    higher_is_better: bool,
}

impl Compared {
    /// How many times better (or worse) Basalt's median is.
    fn factor(&self) -> f64 {
        if self.higher_is_better {
            self.basalt / self.peer
        } else {
            self.peer / self.basalt
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

/// The pairs of `peer` found in the results (metric names match by prefix).
pub(super) fn comparison(
    results: &[(&Measure, Vec<Run>, Vec<Summary>)],
    peer: &Peer,
) -> Vec<Compared> {
    let find = |measure: &str, prefix: &str| {
        results
            .iter()
            .filter(|(m, _, _)| m.name == measure)
            .flat_map(|(_, _, sums)| sums)
            .find(|x| x.name.starts_with(prefix))
    };
    let mut out = Vec::new();
    for (measure, ours, theirs, higher) in peer.pairs {
        if let (Some(b), Some(s)) = (find(measure, ours), find(peer.measure.name, theirs))
            && b.unit == s.unit
        {
            out.push(Compared {
                basalt_metric: b.name.clone(),
                peer_metric: s.name.clone(),
                unit: b.unit,
                basalt: b.median,
                peer: s.median,
                higher_is_better: *higher,
            });
        }
    }
    out
}

pub(super) fn render_json(
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
    let mut out = json!({
        "quick": opts.quick,
        "time": at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        "commit": git_commit(root),
        "machine": machine(),
        "measures": measures,
    });
    // "vs_slurm": [{"basalt_metric", "slurm_metric", "basalt", "slurm", ...}], and so on.
    for peer in PEERS {
        let name = peer.measure.name;
        let cmp: Vec<_> = comparison(results, peer)
            .iter()
            .map(|c| {
                let mut row = serde_json::Map::new();
                row.insert("basalt_metric".into(), json!(c.basalt_metric));
                row.insert(format!("{name}_metric"), json!(c.peer_metric));
                row.insert("unit".into(), json!(c.unit));
                row.insert("basalt".into(), json!(c.basalt));
                row.insert(name.into(), json!(c.peer));
                row.insert("higher_is_better".into(), json!(c.higher_is_better));
                row.insert("basalt_factor".into(), json!(c.factor()));
                serde_json::Value::Object(row)
            })
            .collect();
        out[format!("vs_{name}")] = json!(cmp);
    }
    out
}
