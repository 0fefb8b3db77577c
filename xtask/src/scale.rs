//! `cargo xtask scale`: the site-scale figures of issue 51 (docs/performance.md, "Scale:
//! hollow hosts"), for each cluster size N: `up --hosts 2 --hollow N --release` (2 real
//! hosts, the master candidates, and N hollow hosts in two `basalt-hollow` processes),
//! the time until every host is `ok`, then on the idle cluster the CPU (from
//! `/proc/<pid>/stat`) and RSS of the master LIM, of mbatchd and of the hollow
//! processes, and the wall time of `lsload`, `lshosts` and `bhosts` of every host; then
//! `down`. Results in `target/bench/scale.{json,md}`.
//!
//! The workload part of the issue (1,000,000 pending jobs, 100,000 one-second jobs,
//! failover, reconfig and host loss at size) is not measured here yet.

use crate::down::{self, Daemon};
use crate::{Build, build_binaries, hollow_hosts, host_names, ports};
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What `scale` runs.
#[derive(Debug, Clone)]
pub(crate) struct Opts {
    /// The cluster sizes (hollow hosts); empty: 100, 1,000 and 10,000 (`quick`: 100 and
    /// 1,000).
    pub hollow: Vec<usize>,
    pub quick: bool,
    pub no_build: bool,
    /// Seconds of the idle measure.
    pub idle_secs: u64,
}

/// The figures of one size.
#[derive(Debug, Clone, Default, serde::Serialize)]
struct Row {
    hollow: usize,
    /// Seconds from `up` until every host is `ok` (None: it did not come up).
    up_secs: Option<f64>,
    why_not: Option<String>,
    lim_cpu_pct: Option<f64>,
    mbatchd_cpu_pct: Option<f64>,
    hollow_cpu_pct: Option<f64>,
    lim_rss_mb: Option<f64>,
    mbatchd_rss_mb: Option<f64>,
    hollow_rss_mb: Option<f64>,
    lsload_ms: Option<f64>,
    lshosts_ms: Option<f64>,
    bhosts_ms: Option<f64>,
}

pub(crate) fn scale(root: &Path, o: &Opts) -> Result<()> {
    let sizes = if !o.hollow.is_empty() {
        o.hollow.clone()
    } else if o.quick {
        vec![100, 1_000]
    } else {
        vec![100, 1_000, 10_000]
    };
    build_binaries(Build {
        release: true,
        no_build: o.no_build,
    })?;
    let mut rows = Vec::new();
    for n in sizes {
        eprintln!("scale: {n} hollow hosts");
        let top = root.join("target/scale").join(format!("n{n}"));
        let _ = down::stop(std::slice::from_ref(&top));
        let _ = std::fs::remove_dir_all(&top);
        let t0 = Instant::now();
        let up = crate::up(
            host_names(2, Some([127, 0, 77]))?,
            hollow_hosts(n)?,
            top.clone(),
            "basalt",
            Build {
                release: true,
                no_build: true,
            },
            false,
            ports::Ports::plan(None)?,
        );
        let mut row = Row {
            hollow: n,
            ..Row::default()
        };
        match up {
            Ok(()) => {
                row.up_secs = Some(t0.elapsed().as_secs_f64());
                measure(&top, o.idle_secs, &mut row);
                let _ = down::stop(std::slice::from_ref(&top));
            }
            Err(e) => row.why_not = Some(format!("{e:#}")),
        }
        eprintln!("scale: {row:?}");
        rows.push(row);
    }
    let out = root.join("target/bench");
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("scale.json"), serde_json::to_string_pretty(&rows)?)?;
    let md = table(&rows);
    std::fs::write(out.join("scale.md"), &md)?;
    println!("{md}");
    println!(
        "Wrote {} and {}",
        out.join("scale.json").display(),
        out.join("scale.md").display()
    );
    Ok(())
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
    let before: Vec<Option<u64>> = [&lim, &mbd, &hollow].iter().map(|p| cpu_ticks(p)).collect();
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs(idle_secs.max(1)));
    let secs = t.elapsed().as_secs_f64();
    let after: Vec<Option<u64>> = [&lim, &mbd, &hollow].iter().map(|p| cpu_ticks(p)).collect();
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .map_or(100.0, |v| v as f64);
    let pct = |k: usize| -> Option<f64> {
        let (a, b) = (before[k]?, after[k]?);
        Some(b.saturating_sub(a) as f64 / hz / secs * 100.0)
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

/// utime + stime of `pids`, in clock ticks (None: none of them, or one is gone).
fn cpu_ticks(pids: &[i32]) -> Option<u64> {
    if pids.is_empty() {
        return None;
    }
    let mut sum = 0;
    for p in pids {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        // The fields after the command name in parentheses: state is the 3rd field,
        // utime the 14th and stime the 15th of the whole line.
        let rest = stat.rsplit_once(')')?.1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let utime: u64 = f.get(11)?.parse().ok()?;
        let stime: u64 = f.get(12)?.parse().ok()?;
        sum += utime + stime;
    }
    Some(sum)
}

/// The resident memory of `pids` together, in MB.
fn rss_mb(pids: &[i32]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    let mut kb = 0u64;
    for p in pids {
        let status = std::fs::read_to_string(format!("/proc/{p}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        kb += line.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    }
    Some(kb as f64 / 1024.0)
}

fn cell(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "—".to_owned(), |v| format!("{v:.1} {unit}"))
}

/// The results as a Markdown table, one column per size.
fn table(rows: &[Row]) -> String {
    let mut s = String::from("| hollow hosts |");
    for r in rows {
        let _ = write!(s, " {} |", r.hollow);
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(rows.len()));
    s.push('\n');
    type Get = fn(&Row) -> String;
    let lines: [(&str, Get); 8] = [
        ("`up` until every host is `ok`", |r| {
            r.up_secs.map_or_else(
                || format!("not up: {}", r.why_not.as_deref().unwrap_or("?")),
                |v| format!("{v:.1} s"),
            )
        }),
        ("master LIM CPU, idle", |r| cell(r.lim_cpu_pct, "%")),
        ("mbatchd CPU, idle", |r| cell(r.mbatchd_cpu_pct, "%")),
        ("hollow processes' CPU, idle", |r| {
            cell(r.hollow_cpu_pct, "%")
        }),
        ("master LIM / mbatchd RSS", |r| {
            format!(
                "{} / {}",
                cell(r.lim_rss_mb, "MB"),
                cell(r.mbatchd_rss_mb, "MB")
            )
        }),
        ("hollow processes' RSS", |r| cell(r.hollow_rss_mb, "MB")),
        ("`lsload` / `lshosts`", |r| {
            format!("{} / {}", cell(r.lsload_ms, "ms"), cell(r.lshosts_ms, "ms"))
        }),
        ("`bhosts`", |r| cell(r.bhosts_ms, "ms")),
    ];
    for (name, get) in lines {
        let _ = write!(s, "| {name} |");
        for r in rows {
            let v = get(r).replace('|', "/").replace('\n', " ");
            let _ = write!(s, " {v} |");
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_a_column_per_size_and_says_why_one_did_not_come_up() {
        let rows = vec![
            Row {
                hollow: 100,
                up_secs: Some(1.04),
                lim_cpu_pct: Some(4.0),
                lsload_ms: Some(16.2),
                ..Row::default()
            },
            Row {
                hollow: 1000,
                why_not: Some("the cluster did not come up within 40 s".into()),
                ..Row::default()
            },
        ];
        let t = table(&rows);
        assert!(
            t.starts_with("| hollow hosts | 100 | 1000 |\n|---|---|---|\n"),
            "{t}"
        );
        assert!(t.contains("| `up` until every host is `ok` | 1.0 s | not up: the cluster did not come up within 40 s |"), "{t}");
        assert!(t.contains("| master LIM CPU, idle | 4.0 % | — |"), "{t}");
    }

    #[test]
    fn cpu_and_memory_of_this_process_are_read() {
        let me = [std::process::id() as i32];
        assert!(cpu_ticks(&me).is_some());
        assert!(rss_mb(&me).is_some_and(|m| m > 0.0));
        assert!(cpu_ticks(&[]).is_none());
    }
}
