//! Issue 29 item 4: `bsub` is exactly-once from the user's point of view.
//!
//! On a 1-host process cluster of the real binaries (hostA's sbatchd runs with
//! `--no-mbatchd`; the test runs mbatchd itself, so that no restart back-off is in the
//! way):
//! * `kill -9` of mbatchd while several `bsub` calls are in flight, a few rounds: every
//!   `bsub` exits 0 with one job id, every id exists exactly once with the name it was
//!   submitted with, no submission exists twice, and every job ran exactly once;
//! * a `bsub` that must give up (`BASALT_CMD_TIMEOUT`) after its request was sent to a
//!   stopped mbatchd exits 254 and says the job may exist; the advice it prints works:
//!   the same `bsub` again with the printed `BASALT_SUBMIT_TOKEN` gets one job, which
//!   `bjobs -a -J <name>` finds.
//!
//! Every wait has a deadline; the test takes about half a minute.

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::{ClusterSpec, Commands, CommandsAt, HostDaemons, ProcessCluster, wait_for};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Rounds of kill -9 during submissions.
const ROUNDS: usize = 4;
/// Concurrent submitters per round.
const THREADS: usize = 6;
/// Submissions per submitter and round.
const PER_THREAD: usize = 3;
/// How long mbatchd stays down in the last round.
const LONG_DOWN: Duration = Duration::from_secs(12);
/// How long any one bsub may take (mbatchd is down for at most LONG_DOWN of it).
const BSUB_DEADLINE: Duration = Duration::from_secs(60);

fn text(o: &Output) -> String {
    format!(
        "exit {:?}; stdout {:?}; stderr {:?}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The job id of a bsub that exited 0 with exactly one `Job <N> is submitted` line.
fn job_id(o: &Output) -> Option<u64> {
    let out = String::from_utf8_lossy(&o.stdout);
    let mut lines = out.lines();
    let (Some(line), None) = (lines.next(), lines.next()) else {
        return None;
    };
    if !o.status.success() || !line.contains("> is submitted to ") {
        return None;
    }
    line.strip_prefix("Job <")
        .and_then(|r| r.split('>').next())
        .and_then(|n| n.parse::<u64>().ok())
}

/// Run `cmd` to completion within `deadline` (killed and an error past it).
fn output_within(mut cmd: Command, deadline: Duration) -> Result<Output> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("spawning")?;
    let end = Instant::now() + deadline;
    loop {
        if child.try_wait()?.is_some() {
            return Ok(child.wait_with_output()?);
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let o = child.wait_with_output()?;
            bail!("still running after {deadline:?}: {}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn serving(tools: &CommandsAt) -> (Option<()>, String) {
    match tools.run("bhosts", &[]) {
        Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).contains(" ok ") => {
            (Some(()), String::new())
        }
        Ok(o) => (None, text(&o)),
        Err(e) => (None, e.to_string()),
    }
}

/// Every job `bjobs -a -u all` shows: id -> (name, state).
fn bjobs(tools: &CommandsAt) -> Result<Vec<(u64, String, String)>> {
    let o = tools.run(
        "bjobs",
        &["-a", "-u", "all", "-json", "-o", "jobid job_name stat"],
    )?;
    let out = String::from_utf8_lossy(&o.stdout);
    let v: serde_json::Value =
        serde_json::from_str(&out).with_context(|| format!("bjobs -json: {}", text(&o)))?;
    let mut rows = Vec::new();
    for r in v["RECORDS"].as_array().cloned().unwrap_or_default() {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        let id: u64 = s("JOBID")
            .parse()
            .with_context(|| format!("bad JOBID in {r}"))?;
        rows.push((id, s("JOB_NAME"), s("STAT")));
    }
    Ok(rows)
}

/// One bsub of round `round`: its name and output.
fn submit(tools: &CommandsAt, runs: &Path, name: &str) -> Result<Output> {
    // The job appends its id to a file of its own: two lines would be two runs.
    let record = format!("echo $LSB_JOBID >> {}/{name}", runs.display());
    let mut cmd = tools.command("bsub");
    cmd.args(["-J", name, "-o", "/dev/null", &record]);
    output_within(cmd, BSUB_DEADLINE)
}

#[test]
fn bsub_is_exactly_once_across_mbatchd_kills() -> Result<()> {
    let mut c = ProcessCluster::start("bsub-once", &ClusterSpec::new(1))?;
    if let Err(e) = scenario(&mut c) {
        panic!("{e:#}");
    }
    Ok(())
}

fn scenario(c: &mut ProcessCluster) -> Result<()> {
    let t0 = Instant::now();
    c.wait_master("hostA", Duration::from_secs(30))?;
    let work = c.dir.path().join("work-area");
    let runs = work.join("runs");
    std::fs::create_dir_all(&runs)?;
    let tools = CommandsAt::new(c, work.clone());
    let mut d = HostDaemons::new(c, "hostA");
    d.start_sbatchd()?;
    d.start_mbatchd()?;
    wait_for("mbatchd to serve", Duration::from_secs(60), || {
        serving(&tools)
    })?;

    // 1. kill -9 while bsub calls are in flight.
    let mut results: Vec<(String, Output)> = Vec::new();
    for round in 0..ROUNDS {
        let outs = std::thread::scope(|s| -> Result<Vec<(String, Output)>> {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (tools, runs) = (&tools, &runs);
                    s.spawn(move || -> Result<Vec<(String, Output)>> {
                        let mut v = Vec::new();
                        for n in 0..PER_THREAD {
                            let name = format!("r{round}t{t}n{n}");
                            let o = submit(tools, runs, &name)?;
                            v.push((name, o));
                        }
                        Ok(v)
                    })
                })
                .collect();
            // Kill 50..250 ms into the burst; stay down 0.3..1.1 s, and in the last
            // round longer than the 10 s after which bsub used to give up.
            std::thread::sleep(Duration::from_millis(50 + 67 * round as u64));
            d.kill9_mbatchd()?;
            std::thread::sleep(if round + 1 == ROUNDS {
                LONG_DOWN
            } else {
                Duration::from_millis(300 + 400 * round as u64)
            });
            d.start_mbatchd()?;
            let mut all = Vec::new();
            for h in handles {
                all.extend(h.join().map_err(|_| anyhow!("a submitter panicked"))??);
            }
            Ok(all)
        })?;
        results.extend(outs);
    }
    let still_trying = results
        .iter()
        .filter(|(_, o)| String::from_utf8_lossy(&o.stderr).contains("still trying"))
        .count();
    eprintln!(
        "bsub_exactly_once: {} bsub across {ROUNDS} kills in {:.1?}, {still_trying} said \"still trying\"",
        results.len(),
        t0.elapsed()
    );
    let mut by_id: BTreeMap<u64, String> = BTreeMap::new();
    let mut bad = Vec::new();
    if still_trying == 0 {
        bad.push("no bsub met the dead mbatchd: the kills came too late".to_string());
    }
    for (name, o) in &results {
        match job_id(o) {
            Some(id) => {
                if let Some(other) = by_id.insert(id, name.clone()) {
                    bad.push(format!("job {id} acknowledged to {other} and {name}"));
                }
            }
            None => bad.push(format!("bsub {name} did not succeed: {}", text(o))),
        }
    }
    if !bad.is_empty() {
        bail!("{} bad bsub results:\n{}", bad.len(), bad.join("\n"));
    }
    wait_for("mbatchd to serve", Duration::from_secs(60), || {
        serving(&tools)
    })?;
    // Every job ends (DONE), each exists once, with its name, and ran once.
    let jobs = wait_for(
        "every job to be DONE",
        Duration::from_secs(120),
        || match bjobs(&tools) {
            Ok(rows) if rows.len() >= by_id.len() && rows.iter().all(|r| r.2 == "DONE") => {
                (Some(rows), String::new())
            }
            Ok(rows) => (None, format!("{rows:?}")),
            Err(e) => (None, e.to_string()),
        },
    )?;
    let mut names: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (id, name, _) in &jobs {
        names.entry(name.as_str()).or_default().push(*id);
    }
    for (id, name) in &by_id {
        match names.get(name.as_str()).map(Vec::as_slice) {
            Some([only]) if only == id => {}
            other => bad.push(format!("{name}: acknowledged as {id}, bjobs has {other:?}")),
        }
        let ran = std::fs::read_to_string(runs.join(name)).unwrap_or_default();
        if ran != format!("{id}\n") {
            bad.push(format!("{name} (job {id}) ran: {ran:?}"));
        }
    }
    if jobs.len() != by_id.len() {
        bad.push(format!(
            "{} jobs exist for {} submissions",
            jobs.len(),
            by_id.len()
        ));
    }
    if !bad.is_empty() {
        bail!("{}", bad.join("\n"));
    }

    // 2. Giving up: mbatchd stopped, the request sent and never answered.
    d.signal_mbatchd(nix::sys::signal::Signal::SIGSTOP)?;
    let name = "gave-up";
    let record = format!("echo $LSB_JOBID >> {}/{name}", runs.display());
    let args = ["-J", name, "-o", "/dev/null", record.as_str()];
    let mut cmd = tools.command("bsub");
    cmd.env("BASALT_CMD_TIMEOUT", "3").args(args);
    let o = output_within(cmd, Duration::from_secs(30));
    d.signal_mbatchd(nix::sys::signal::Signal::SIGCONT)?;
    let o = o?;
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    if o.status.code() != Some(254) || !o.stdout.is_empty() {
        bail!("bsub that gave up: {}", text(&o));
    }
    for want in [
        "The job may have been submitted",
        "    bjobs -a -J gave-up\n",
        "BASALT_SUBMIT_TOKEN=",
    ] {
        if !err.contains(want) {
            bail!("no {want:?} in: {err}");
        }
    }
    let token = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("BASALT_SUBMIT_TOKEN="))
        .map(|t| t.trim_matches('\'').to_owned())
        .ok_or_else(|| anyhow!("no token in: {err}"))?;
    // The advice: the same bsub with the token gets the one job...
    let mut again = tools.command("bsub");
    again.env("BASALT_SUBMIT_TOKEN", &token).args(args);
    let o = output_within(again, BSUB_DEADLINE)?;
    let id = job_id(&o).ok_or_else(|| anyhow!("bsub with the token: {}", text(&o)))?;
    let mut twice = tools.command("bsub");
    twice.env("BASALT_SUBMIT_TOKEN", &token).args(args);
    let o = output_within(twice, BSUB_DEADLINE)?;
    if job_id(&o) != Some(id) {
        bail!("the token named job {id}, then: {}", text(&o));
    }
    // ... which bjobs -a -J finds, alone.
    let o = tools.run("bjobs", &["-a", "-J", name, "-o", "jobid", "-noheader"])?;
    let listed = String::from_utf8_lossy(&o.stdout).trim().to_owned();
    if listed != id.to_string() {
        bail!("bjobs -a -J {name}: {} (want {id})", text(&o));
    }
    wait_for("the job to run once", Duration::from_secs(60), || {
        let ran = std::fs::read_to_string(runs.join(name)).unwrap_or_default();
        ((ran == format!("{id}\n")).then_some(()), ran)
    })?;
    eprintln!("bsub_exactly_once: done in {:.1?}", t0.elapsed());
    Ok(())
}
