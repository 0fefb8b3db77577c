//! The configuration checks of the fuzz target `config_files`, also run on stable by
//! `crates/basalt-config/tests/config_fuzz.rs` (which includes this file with `#[path]`).
//!
//! **Input**: a bundle of configuration files, each started by a line `==> NAME <==`
//! (what `head` prints between files); text before the first such line is `lsf.conf`.
//! NAME is `lsf.conf`, `lsf.shared`, `lsf.cluster.<cluster>` or `lsb.<file>`; other names
//! are dropped. `lsf.*` go into the environment directory (`LSF_ENVDIR`, which is also
//! `LSF_CONFDIR` unless lsf.conf says otherwise) and `lsb.*` into
//! `lsbatch/<cluster>/configdir` (the cluster of the first `lsf.cluster.<cluster>`), or
//! into `lsbatch` itself (OpenLava's flat layout) when there is no cluster file. The file
//! bytes are written as they are (invalid UTF-8 included).
//!
//! **Checks** ([`check_bundle`]), besides "never panics":
//! * `basalt_config::load` is deterministic (two loads give the same result);
//! * an error result holds at least one error, and every error and warning prints;
//! * errors and warnings about a written file name a line that exists in it (or 0);
//! * `load_lim` (lsf.* only) agrees with `load`: when `load` succeeds so does `load_lim`,
//!   with the same lsf.conf, lsf.shared and cluster file and the same warnings as the
//!   first warnings of `load`; the cluster is the first `ClusterName` of lsf.shared and
//!   every queue is found by its name;
//! * the value parsers the loader uses (time windows, load thresholds, `JOB_CONTROLS`,
//!   `STOP_COND` expressions) on every `KEY = value` value and every parenthesised field:
//!   no panic; a time window's `next_change` is the first minute its state changes.

use std::path::{Path, PathBuf};

use basalt_config::batch::parse_job_controls;
use basalt_config::cond::Cond;
use basalt_config::timewindow::MINUTES_PER_WEEK;
use basalt_config::{Loaded, Threshold, TimeWindow, load, load_lim};

/// The marker that starts a file of the bundle: `==> NAME <==`.
pub fn marker(name: &str) -> String {
    format!("==> {name} <==")
}

/// Split a bundle into (file name, bytes). Names are checked: a name that would leave the
/// directory, or that is not an LSF configuration file name, is dropped with its text.
pub fn split_bundle(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let mut name = Some("lsf.conf".to_owned());
    // The text before the first marker is lsf.conf only when there is some.
    let mut implicit = true;
    let mut cur: Vec<u8> = Vec::new();
    for line in data.split_inclusive(|&b| b == b'\n') {
        let trimmed = line.strip_suffix(b"\n").unwrap_or(line);
        let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
        let header = trimmed
            .strip_prefix(b"==> ")
            .and_then(|r| r.strip_suffix(b" <=="));
        match header {
            Some(h) => {
                if let Some(n) = name.take()
                    && !(implicit && cur.is_empty())
                {
                    out.push((n, std::mem::take(&mut cur)));
                }
                implicit = false;
                cur.clear();
                name = std::str::from_utf8(h)
                    .ok()
                    .filter(|n| valid_name(n))
                    .map(str::to_owned);
            }
            None => cur.extend_from_slice(line),
        }
    }
    if let Some(n) = name {
        out.push((n, cur));
    }
    // A later file of the same name replaces an earlier one.
    let mut uniq: Vec<(String, Vec<u8>)> = Vec::new();
    for (n, d) in out {
        uniq.retain(|(m, _)| *m != n);
        uniq.push((n, d));
    }
    uniq
}

fn valid_name(n: &str) -> bool {
    let plain = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    };
    n == "lsf.conf"
        || n == "lsf.shared"
        || n.strip_prefix("lsf.cluster.").is_some_and(plain)
        || n.strip_prefix("lsb.").is_some_and(plain)
}

/// Write the bundle's files under `env` (emptied first). Returns the written paths with
/// their bytes.
pub fn write_bundle(env: &Path, files: &[(String, Vec<u8>)]) -> Vec<(PathBuf, Vec<u8>)> {
    if env.exists()
        && let Err(e) = std::fs::remove_dir_all(env)
    {
        panic!("cannot empty {}: {e}", env.display());
    }
    let cluster = files
        .iter()
        .find_map(|(n, _)| n.strip_prefix("lsf.cluster."));
    let batch = match cluster {
        Some(c) => env.join("lsbatch").join(c).join("configdir"),
        None => env.join("lsbatch"),
    };
    let mut written = Vec::new();
    for (n, d) in files {
        let dir = if n.starts_with("lsb.") { &batch } else { env };
        if let Err(e) = std::fs::create_dir_all(dir) {
            panic!("cannot create {}: {e}", dir.display());
        }
        let p = dir.join(n);
        if let Err(e) = std::fs::write(&p, d) {
            panic!("cannot write {}: {e}", p.display());
        }
        written.push((p, d.clone()));
    }
    written
}

/// A one-line summary of a load result, for comparisons (`Config` has no `PartialEq`).
fn shown(r: &Result<Loaded, basalt_config::ConfigErrors>) -> String {
    format!("{r:?}")
}

/// Load the bundle `data` from a directory under `dir` (reused between calls) and check
/// the properties listed in the module documentation. At most 64 values of a bundle go
/// through the value parsers (a line of 5,000 `(` would otherwise make 5,000 calls on
/// 10 KB strings).
pub fn check_bundle(dir: &Path, data: &[u8]) {
    let files = split_bundle(data);
    let env = dir.join("env");
    let written = write_bundle(&env, &files);

    let r1 = load(&env);
    let r2 = load(&env);
    assert_eq!(shown(&r1), shown(&r2), "two loads of the same files differ");

    let lines_of = |path: &Path| -> Option<usize> {
        written
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, d)| d.split(|&b| b == b'\n').count())
    };
    let check_line = |what: &str, file: &Path, line: usize, msg: &str| {
        assert!(!msg.is_empty(), "{what} without a message");
        if let Some(n) = lines_of(file) {
            assert!(
                line <= n,
                "{what} names line {line} of {} which has {n} lines: {msg}",
                file.display()
            );
        }
    };

    let lim = load_lim(&env);
    match &r1 {
        Err(errs) => {
            assert!(!errs.0.is_empty(), "load failed without an error");
            for e in &errs.0 {
                check_line("an error", &e.file, e.line, &e.message);
                assert!(!e.to_string().is_empty());
            }
            let _ = errs.to_string();
        }
        Ok(loaded) => {
            for w in &loaded.warnings {
                check_line("a warning", &w.file, w.line, &w.message);
                assert!(!w.to_string().is_empty());
            }
            let c = &loaded.config;
            assert_eq!(
                c.shared.clusters.first(),
                Some(&c.cluster_name),
                "the cluster is not the first ClusterName"
            );
            for q in &c.batch.queues {
                assert!(
                    c.batch.queue(&q.name).is_some(),
                    "queue {} not found",
                    q.name
                );
            }
            let _ = (c.logdir(), c.batch_confdir(), c.local_logdir());
            let lim = match &lim {
                Ok(l) => l,
                Err(e) => panic!("load succeeds but load_lim fails: {e}"),
            };
            let lc = &lim.config;
            assert_eq!(format!("{:?}", lc.lsf_conf), format!("{:?}", c.lsf_conf));
            assert_eq!(format!("{:?}", lc.shared), format!("{:?}", c.shared));
            assert_eq!(format!("{:?}", lc.cluster), format!("{:?}", c.cluster));
            assert!(
                loaded.warnings.starts_with(&lim.warnings),
                "load_lim's warnings are not the first of load's\nload_lim: {:?}\nload: {:?}",
                lim.warnings,
                loaded.warnings
            );
        }
    }
    if let Err(errs) = &lim {
        assert!(!errs.0.is_empty(), "load_lim failed without an error");
    }

    let mut values = 0;
    for (_, d) in &files {
        let text = String::from_utf8_lossy(d);
        for line in text.lines() {
            if values > 64 {
                return;
            }
            if let Some((_, v)) = line.split_once('=') {
                values += 1;
                check_value(v);
            }
            for (i, _) in line.match_indices('(') {
                if values > 64 {
                    return;
                }
                if let Some(len) = line[i..].find(')') {
                    values += 1;
                    check_value(&line[i..=i + len]);
                }
            }
        }
    }
}

/// The loader's value parsers on one value.
pub fn check_value(v: &str) {
    let v = v.split('#').next().unwrap_or(v);
    let _ = Threshold::parse(v.trim());
    let _ = parse_job_controls(v);
    if let Ok(c) = Cond::parse(v) {
        let mut ix = Vec::new();
        c.indices(&mut ix);
        let _ = c.holds(&|n| Some(n.len() as f64));
    }
    if let Ok(w) = TimeWindow::parse(v) {
        check_window(&w, (v.len() as u32).wrapping_mul(7919) % MINUTES_PER_WEEK);
    }
}

/// `next_change(from)` is the first minute after `from` (within a week) whose state
/// differs; `None` when the state never changes.
pub fn check_window(w: &TimeWindow, from: u32) {
    let open = w.is_open_at_week_minute(from);
    let first = (1..MINUTES_PER_WEEK).find(|d| w.is_open_at_week_minute(from + d) != open);
    assert_eq!(
        w.next_change(from),
        first,
        "next_change({from}) of {w:?} is not the first change"
    );
    let _ = w.is_open(6, 1439);
}
