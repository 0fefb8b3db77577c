//! `badmin whatif`: the workload an event log recorded, replayed through the scheduler
//! under another configuration ([`basalt_whatif`]), and what would have changed.
//!
//! ```text
//! badmin whatif --events lsb.events.1 lsb.events [--config ENVDIR] [--baseline ENVDIR]
//!               [--hosts "hostA:4 hostB:8" | --hosts 100x8] [--from T] [--to T]
//!               [--wake seconds] [-json] [--plot FILE.svg]
//! ```
//!
//! Times are seconds since the epoch or `yyyy/mm/dd[/HH:MM]` (local time). Without
//! `--config` the configuration of `LSF_ENVDIR` is the changed one; without
//! `--baseline` the comparison is with what the log recorded (and how far the baseline
//! — `LSF_ENVDIR`'s configuration — replays from it is said). `--plot` also writes an SVG
//! plot of both sides' slots pending and utilisation over time.

use basalt_whatif::{SimOptions, Workload};
use std::path::PathBuf;
use std::process::ExitCode;

pub const USAGE: &str =
    "Usage: badmin whatif --events file ... [--config envdir] [--baseline envdir]
              [--hosts \"host:slots ...\" | --hosts <count>x<slots>] [--from time] [--to time]
              [--wake seconds] [-json] [--plot file.svg]
";

/// What `badmin whatif` was asked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub events: Vec<PathBuf>,
    pub config: Option<PathBuf>,
    pub baseline: Option<PathBuf>,
    pub hosts: Option<String>,
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub wake: Option<i64>,
    pub json: bool,
    /// `--plot`: where to write the SVG plot.
    pub plot: Option<PathBuf>,
}

/// `1800000000`, or `yyyy/mm/dd[/HH:MM]` in local time.
pub fn parse_time(v: &str) -> Option<i64> {
    if let Ok(t) = v.parse::<i64>() {
        return Some(t);
    }
    let parts: Vec<&str> = v.split('/').collect();
    let (y, m, d) = (
        parts.first()?.parse::<i32>().ok()?,
        parts.get(1)?.parse::<i32>().ok()?,
        parts.get(2)?.parse::<i32>().ok()?,
    );
    let (hh, mm) = match parts.get(3) {
        Some(hm) => {
            let (h, m) = hm.split_once(':')?;
            (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?)
        }
        None => (0, 0),
    };
    if parts.len() > 4 || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    super::timefmt::local_to_epoch(y, m - 1, d, hh, mm)
}

/// Parse the arguments after `whatif`.
pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut i = 0;
    while i < args.len() {
        let opt = args[i].trim_start_matches('-');
        let value = |i: usize| -> Result<&String, String> {
            args.get(i + 1)
                .filter(|v| !v.starts_with('-') || v.parse::<i64>().is_ok())
                .ok_or_else(|| format!("{}: a value is needed", args[i]))
        };
        match opt {
            "events" => {
                let mut n = 0;
                while let Some(f) = args.get(i + 1).filter(|v| !v.starts_with('-')) {
                    a.events.push(PathBuf::from(f));
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    return Err("--events: at least one event log is needed".to_owned());
                }
            }
            "config" => {
                a.config = Some(PathBuf::from(value(i)?));
                i += 1;
            }
            "baseline" => {
                a.baseline = Some(PathBuf::from(value(i)?));
                i += 1;
            }
            "hosts" => {
                a.hosts = Some(value(i)?.clone());
                i += 1;
            }
            "from" | "to" => {
                let v = value(i)?;
                let t = parse_time(v).ok_or_else(|| format!("{v}: bad time"))?;
                if opt == "from" {
                    a.from = Some(t);
                } else {
                    a.to = Some(t);
                }
                i += 1;
            }
            "wake" => {
                let v = value(i)?;
                a.wake = Some(
                    v.parse::<i64>()
                        .ok()
                        .filter(|s| *s > 0)
                        .ok_or_else(|| format!("{v}: bad number of seconds"))?,
                );
                i += 1;
            }
            "json" => a.json = true,
            "plot" => {
                let v = value(i)?;
                if !v.to_ascii_lowercase().ends_with(".svg") || v.len() <= 4 {
                    return Err(format!(
                        "--plot {v}: the plot is SVG only: give a file name ending in .svg"
                    ));
                }
                a.plot = Some(PathBuf::from(v));
                i += 1;
            }
            _ => return Err(format!("{}: unknown option", args[i])),
        }
        i += 1;
    }
    if a.events.is_empty() {
        return Err("--events: at least one event log is needed".to_owned());
    }
    Ok(a)
}

/// `badmin whatif ...`.
pub fn main(args: &[String]) -> ExitCode {
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("badmin whatif: {e}");
            eprint!("{USAGE}");
            return crate::fail();
        }
    };
    match run(&a) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("badmin whatif: {e}");
            crate::fail()
        }
    }
}

/// Run the what-if; its report.
pub fn run(a: &Args) -> Result<String, basalt_whatif::WhatIfError> {
    let events = basalt_whatif::read_events(&a.events)?;
    let w = Workload::from_events(&events, a.from, a.to);
    if !w.jobs.values().any(|j| j.in_window) {
        return Err(basalt_whatif::WhatIfError::Empty);
    }
    let current = basalt_runtime::envdir();
    // The configuration in force (what the log recorded), read once.
    let recorded = basalt_whatif::load_config(&current)?;
    let cfg = match &a.config {
        Some(d) => basalt_whatif::load_config(d)?,
        None => recorded.clone(),
    };
    let baseline = match &a.baseline {
        Some(d) => Some(basalt_whatif::load_config(d)?),
        None => None,
    };
    let hosts = match &a.hosts {
        Some(h) => basalt_whatif::parse_hosts(h)?,
        None => basalt_whatif::default_hosts(&cfg, &w),
    };
    let opts = SimOptions {
        hosts,
        wake_secs: a.wake.unwrap_or(60),
        ..Default::default()
    };
    // Against the log: also how far the configuration in force replays from it.
    let c = match &baseline {
        Some(b) => basalt_whatif::compare(&w, &cfg, Some(b), &opts),
        None => basalt_whatif::compare_with_log(&w, &cfg, &recorded, &opts),
    };
    if let Some(path) = &a.plot {
        let svg = c.plot_svg()?;
        std::fs::write(path, svg).map_err(|error| basalt_whatif::WhatIfError::WritePlot {
            path: path.clone(),
            error,
        })?;
    }
    Ok(if a.json {
        format!("{:#}\n", c.json())
    } else {
        c.table()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn whatif_takes_event_logs_configurations_hosts_and_a_window() {
        let a = parse(&args(&[
            "--events",
            "lsb.events.1",
            "lsb.events",
            "--config",
            "/new",
            "--baseline",
            "/old",
            "--hosts",
            "10x4",
            "--from",
            "1800000000",
            "--to",
            "1800086400",
            "-json",
            "--plot",
            "out/whatif.svg",
        ]))
        .expect("parse");
        assert_eq!(
            a.events,
            vec![PathBuf::from("lsb.events.1"), PathBuf::from("lsb.events")]
        );
        assert_eq!(a.config, Some(PathBuf::from("/new")));
        assert_eq!(a.baseline, Some(PathBuf::from("/old")));
        assert_eq!(a.hosts.as_deref(), Some("10x4"));
        assert_eq!((a.from, a.to), (Some(1_800_000_000), Some(1_800_086_400)));
        assert!(a.json);
        assert_eq!(a.plot, Some(PathBuf::from("out/whatif.svg")));
        let plain = parse(&args(&["--events", "e"])).expect("parse");
        assert_eq!((plain.plot, plain.json), (None, false));
        assert!(parse(&args(&["--events", "e", "--plot", "A.SVG"])).is_ok());
        let e = parse(&args(&["--events", "e", "--plot", "q.png"])).expect_err("png");
        assert!(e.contains("ending in .svg"), "{e}");
        assert!(parse(&args(&["--events", "e", "--plot", ".svg"])).is_err());
        assert!(
            parse(&args(&["--events", "e", "--plot"])).is_err(),
            "no file"
        );
        assert!(parse(&args(&["--config", "/x"])).is_err(), "no event log");
        assert!(parse(&args(&["--events"])).is_err());
        assert!(parse(&args(&["--events", "e", "--from", "soon"])).is_err());
        assert!(parse(&args(&["--events", "e", "--bogus"])).is_err());
        assert!(parse_time("2026/11/27/10:30").is_some());
        assert_eq!(parse_time("2026/13/01"), None);
    }
}
