//! What-if replay (`badmin whatif`): the workload an lsb.events recorded, run through
//! the production scheduler on a simulated clock under another configuration (or host
//! set), and what would have changed — per queue and per user, wait-time percentiles,
//! slowdown, utilisation, preemptions — against what happened or against a baseline
//! configuration.
//!
//! Inputs: event log files (lsb.events, lsb.events.N; LSF, OpenLava or Basalt layout),
//! configuration directories (`LSF_ENVDIR`s), the hosts. Outputs: a [`Comparison`]
//! (table or JSON) and an SVG plot of both sides' queue lengths (slots pending) and
//! utilisation over time ([`Comparison::plot_svg`]). The pieces: [`workload`] (what the
//! log recorded), [`sim`] (the simulation, [`basalt_sched::Sched`] itself), [`report`]
//! (the figures and timelines), [`plot`] (the plot, drawn with `plotters`).

pub mod plot;
pub mod report;
pub mod sim;
pub mod workload;

pub use report::{Comparison, Fidelity, Side, Stats};
pub use sim::{SimOptions, SimResult, simulate};
pub use workload::{Outcome, WJob, Workload};

use basalt_sched::{Event, SchedConfig};
use std::path::{Path, PathBuf};

/// Why a what-if could not be run.
#[derive(Debug, thiserror::Error)]
pub enum WhatIfError {
    #[error("{path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{0}")]
    Config(String),
    #[error("bad host list <{0}>: expected `host:slots ...` or `<count>x<slots>`")]
    Hosts(String),
    #[error("the event logs hold no job submitted in the window")]
    Empty,
    #[error("cannot draw the plot: {0}")]
    Plot(String),
    #[error("{path}: cannot write the plot: {error}")]
    WritePlot {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// The events of `files`, oldest file first (give them oldest first: `lsb.events.2
/// lsb.events.1 lsb.events`); lines that are not records (headers, other types) are
/// skipped.
pub fn read_events(files: &[PathBuf]) -> Result<Vec<Event>, WhatIfError> {
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(path).map_err(|error| WhatIfError::Read {
            path: path.clone(),
            error,
        })?;
        for line in text.lines() {
            if let Ok(Some(rec)) = basalt_eventlog::parse_line(line)
                && let Some(ev) = basalt_records::from_record(&rec)
            {
                out.push(ev);
            }
        }
    }
    Ok(out)
}

/// The scheduler's configuration from `LSF_ENVDIR` `dir`.
pub fn load_config(dir: &Path) -> Result<SchedConfig, WhatIfError> {
    let loaded = basalt_config::load(dir).map_err(|e| WhatIfError::Config(e.to_string()))?;
    Ok(SchedConfig::from_config(&loaded.config))
}

/// `--hosts`: `hostA:4 hostB:8` (names and slots) or `100x8` (100 hosts `sim0001`...
/// of 8 slots).
pub fn parse_hosts(spec: &str) -> Result<Vec<(String, u32)>, WhatIfError> {
    let bad = || WhatIfError::Hosts(spec.to_owned());
    let spec = spec.trim();
    if let Some((n, slots)) = spec.split_once('x')
        && let (Ok(n), Ok(slots)) = (n.parse::<u32>(), slots.parse::<u32>())
    {
        if n == 0 || slots == 0 || n > 1_000_000 {
            return Err(bad());
        }
        return Ok((1..=n).map(|i| (format!("sim{i:04}"), slots)).collect());
    }
    let mut out = Vec::new();
    for word in spec.split([' ', ',']).filter(|w| !w.is_empty()) {
        let (name, slots) = word.split_once(':').ok_or_else(bad)?;
        let slots: u32 = slots.parse().ok().filter(|n| *n > 0).ok_or_else(bad)?;
        if name.is_empty() {
            return Err(bad());
        }
        out.push((name.to_owned(), slots));
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// The hosts to simulate when none are given: the configuration's hosts, each with the
/// most slots it ran at once in the log (at least 1).
pub fn default_hosts(cfg: &SchedConfig, w: &Workload) -> Vec<(String, u32)> {
    cfg.hosts
        .iter()
        .map(|h| {
            let peak = w
                .host_peak
                .iter()
                .find(|(n, _)| basalt_core::same_host(n, &h.name))
                .map_or(1, |(_, p)| *p);
            (h.name.clone(), peak.max(1))
        })
        .collect()
}

/// Simulate `w` under `cfg` and compare it with `baseline`'s simulation, or with what
/// the log recorded when there is none.
pub fn compare(
    w: &Workload,
    cfg: &SchedConfig,
    baseline: Option<&SchedConfig>,
    opts: &SimOptions,
) -> Comparison {
    compare_run(w, &simulate(cfg, w, opts), baseline, opts)
}

/// Simulate `w` under `cfg` and compare it with what the log recorded, saying how far
/// `recorded` (the configuration that was in force) replays from the log — from the
/// same simulation when `cfg` is that configuration.
pub fn compare_with_log(
    w: &Workload,
    cfg: &SchedConfig,
    recorded: &SchedConfig,
    opts: &SimOptions,
) -> Comparison {
    let after_run = simulate(cfg, w, opts);
    let mut c = compare_run(w, &after_run, None, opts);
    c.fidelity = Some(if recorded == cfg {
        report::fidelity(w, &after_run)
    } else {
        check_fidelity(w, recorded, opts)
    });
    c
}

fn compare_run(
    w: &Workload,
    after_run: &SimResult,
    baseline: Option<&SchedConfig>,
    opts: &SimOptions,
) -> Comparison {
    let after = report::simulated("what-if", w, after_run);
    let (before, fidelity) = match baseline {
        Some(b) => {
            let r = simulate(b, w, opts);
            (report::simulated("baseline", w, &r), None)
        }
        None => (report::recorded(w, opts.samples), None),
    };
    Comparison {
        jobs: after.all.jobs,
        not_simulated: w
            .jobs
            .values()
            .filter(|j| j.left_pending && j.in_window)
            .count() as u32,
        remapped: after_run.remapped.clone(),
        deps_dropped: after_run.deps_dropped,
        controls_skipped: after_run.controls_skipped,
        before,
        after,
        fidelity,
    }
}

/// How the recorded configuration replays against the log itself (`cfg` is the one
/// that was in force).
pub fn check_fidelity(w: &Workload, cfg: &SchedConfig, opts: &SimOptions) -> Fidelity {
    report::fidelity(w, &simulate(cfg, w, opts))
}
