//! Real LSF clients from PyPI, unmodified, against a 2-host Basalt cluster of real
//! processes: dask-jobqueue's `LSFCluster` (stdin and script-file submission) and parsl's
//! `LSFProvider` with a HighThroughputExecutor (by nodes with `bsub <file>`, and by cores
//! with `bsub < file`). The Python side lives in `tests/clients/`; each script exits 0 and
//! prints its `OK` line only when its client got correct results from jobs Basalt ran, and
//! Basalt's `bjobs` saw the client's `bkill` end those jobs when it closed.
//!
//! The Python interpreter is `$BASALT_CLIENTS_PYTHON` (set by `.ci/run`, which creates
//! the virtual environment from `tests/clients/requirements.txt`), else
//! `<workspace>/target/clients-venv/bin/python` when it exists. Without either the tests
//! print `skipped: ...` and pass — except under `CI`, where they must run.

use anyhow::{Context, Result, bail};
use basalt_testkit::{ClusterSpec, ProcessCluster};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Hellos every second; a bkilled job gets SIGKILL 2 s after SIGTERM.
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

/// How long one client script may take, cluster start excluded.
const DEADLINE: Duration = Duration::from_secs(150);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The venv's python, or why there is none.
fn clients_python() -> Result<Option<PathBuf>> {
    if let Some(p) = std::env::var_os("BASALT_CLIENTS_PYTHON").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if !p.exists() {
            bail!("BASALT_CLIENTS_PYTHON={} does not exist", p.display());
        }
        return Ok(Some(p));
    }
    let venv = workspace().join("target/clients-venv/bin/python");
    if venv.exists() {
        return Ok(Some(venv));
    }
    if std::env::var_os("CI").is_some() {
        bail!(
            "CI is set but BASALT_CLIENTS_PYTHON is not and {} does not exist: \
             .ci/run must create the clients' virtual environment",
            venv.display()
        );
    }
    Ok(None)
}

/// The last `max` bytes of a file, for failure messages.
fn tail(path: &Path, max: usize) -> String {
    let text = std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|e| format!("<cannot read {}: {e}>", path.display()));
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
}

/// Every file under `dir` (job -o/-e files, parsl's logs), named and tailed.
fn dump_dir(dir: &Path, out: &mut String, depth: usize) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if depth < 6 {
                dump_dir(&p, out, depth + 1);
            }
        } else if p.file_name().is_some_and(|n| n != "client.log")
            && p.extension().is_some_and(|e| {
                e == "out" || e == "err" || e == "log" || e == "stdout" || e == "stderr"
            })
        {
            out.push_str(&format!("\n===== {}\n{}", p.display(), tail(&p, 4000)));
        }
    }
}

/// Run `script` from tests/clients with `args` under a fresh 2-host batch cluster and
/// check it printed `ok_line`. Panics (keeping the cluster's directory) on failure.
fn run_client(name: &str, script: &str, args: &[&str], ok_line: &str) -> Result<()> {
    let Some(python) = clients_python()? else {
        basalt_testkit::skip(
            name,
            "no Python with the LSF clients (set BASALT_CLIENTS_PYTHON, or create \
             target/clients-venv from tests/clients/requirements.txt as .ci/run does)",
        );
        return Ok(());
    };
    let venv_bin = python.parent().map(Path::to_path_buf).unwrap_or_default();
    let t0 = Instant::now();
    let c = ProcessCluster::start_batch(name, &ClusterSpec::new(2), PARAMS)?;
    let started = t0.elapsed();
    let work = c.dir.path().join("client-work");
    let tmp = work.join("tmp");
    std::fs::create_dir_all(&tmp)?;
    let log_path = work.join("client.log");
    let log = std::fs::File::create(&log_path)?;

    let mut path = std::ffi::OsString::from(c.bin.as_os_str());
    path.push(":");
    path.push(venv_bin.as_os_str());
    if let Some(old) = std::env::var_os("PATH") {
        path.push(":");
        path.push(old);
    }
    let clients = workspace().join("tests/clients");
    let mut child = Command::new(&python)
        .arg(clients.join(script))
        .args(args)
        .arg("--workdir")
        .arg(&work)
        .current_dir(&work)
        .env("PATH", path)
        .env("LSF_ENVDIR", &c.envdir)
        .env("TMPDIR", &tmp)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("BASALT_HOST")
        .env_remove("LSF_SERVER_HOSTS")
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        // Its own process group, so that a timeout kills the client and what it started.
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {}", python.display()))?;

    let status = basalt_testkit::wait_child(&mut child, DEADLINE)?;
    let ran = t0.elapsed() - started;
    let output = tail(&log_path, 20_000);
    let passed =
        status.is_some_and(|s| s.success()) && output.lines().any(|l| l.trim_end() == ok_line);
    if !passed {
        let mut files = String::new();
        dump_dir(&work, &mut files, 0);
        let bjobs = c
            .run("bjobs", &["-a", "-u", "all", "-w"])
            .map(|o| {
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                )
            })
            .unwrap_or_else(|e| e.to_string());
        let what = match status {
            Some(s) => format!("exited with {s}"),
            None => format!("killed after {DEADLINE:?}"),
        };
        panic!(
            "{script} {args:?} {what} (expected a line {ok_line:?}); its output:\n{output}\n\
             ===== bjobs -a -u all -w\n{bjobs}{files}"
        );
    }
    println!(
        "{script} {args:?}: passed in {:.1}s (cluster start {:.1}s)\n{output}",
        ran.as_secs_f64(),
        started.as_secs_f64()
    );
    Ok(())
}

#[test]
fn dask_jobqueue_lsfcluster_with_stdin_submission() -> Result<()> {
    run_client(
        "dask-stdin",
        "dask_lsf.py",
        &["--use-stdin", "yes"],
        "dask-jobqueue OK",
    )
}

#[test]
fn dask_jobqueue_lsfcluster_with_script_file_submission() -> Result<()> {
    run_client(
        "dask-file",
        "dask_lsf.py",
        &["--use-stdin", "no"],
        "dask-jobqueue OK",
    )
}

#[test]
fn parsl_lsfprovider_by_nodes_runs_apps() -> Result<()> {
    run_client(
        "parsl-nodes",
        "parsl_lsf.py",
        &["--request-by", "nodes"],
        "parsl OK",
    )
}

#[test]
fn parsl_lsfprovider_by_cores_with_stdin_runs_apps() -> Result<()> {
    run_client(
        "parsl-cores",
        "parsl_lsf.py",
        &["--request-by", "cores"],
        "parsl OK",
    )
}
