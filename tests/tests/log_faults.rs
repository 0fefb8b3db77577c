//! Issue 29, item 5: faults of the event log on the real binaries.
//!
//! * "disk full on the log directory (nothing acknowledged unlogged; service back within
//!   5 s after space returns)": a small tmpfs is mounted on the log directory of a
//!   1-host cluster (needs root: the test fails, not skips, without it), filled, and
//!   `bsub` must then fail (`LSB_NTRIES=1`) or wait (by default) without printing a job
//!   id while queries keep working; once the filler is removed a submission is
//!   acknowledged within 5 s (the time is printed), the waiting `bsub` gets its job, and
//!   every acknowledged job — and no other — has its `JOB_NEW` in lsb.events. A `bsub`
//!   bounded by `BASALT_CMD_TIMEOUT` gives up in time with the reason (issue 49 item 8).
//! * "a corrupt record in the middle (refused with a message that says what to do)":
//!   the mbatchd binary, started over an lsb.events with a damaged record followed by
//!   good ones, exits non-zero without serving, and says which file and line and to run
//!   `mbatchd --recover`; the file is left as it was.
//!
//! The torn tails (every offset of the last record) are tested in
//! `basalt-eventlog/tests/torn_tails.rs` and `basalt-mbatchd/src/journal/tests.rs`;
//! the clock jumps in `basalt-sched/src/clock_jump_tests.rs` and
//! `basalt-sbatchd/src/supervisor/limits.rs`.

use anyhow::{Context, Result, anyhow, bail, ensure};
use basalt_testkit::{
    ClusterSpec, ProcessCluster, event_fields, output_text, wait_child, wait_for,
};
use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A tmpfs mounted for the test; unmounted (lazily) when dropped.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

fn mount_tmpfs(dir: &Path, size: &str) -> Result<Mount> {
    std::fs::create_dir_all(dir)?;
    let st = std::process::Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            &format!("size={size}"),
            "basalt-log-faults",
        ])
        .arg(dir)
        .status()?;
    ensure!(st.success(), "mount -t tmpfs on {} failed", dir.display());
    Ok(Mount(dir.to_path_buf()))
}

/// Fill the filesystem holding `dir` with a file until a write fails.
fn fill(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path)?;
    let chunk = vec![b'x'; 4096];
    for _ in 0..1_000_000 {
        if f.write_all(&chunk).is_err() || f.sync_data().is_err() {
            return Ok(path);
        }
    }
    bail!("{} never filled up", dir.display())
}

fn logdir(c: &ProcessCluster) -> Result<PathBuf> {
    Ok(basalt_config::load(&c.envdir)?.config.logdir())
}

/// The job id of a `Job <N> is submitted ...` line.
fn job_id(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Job <")?.split('>').next()?.parse().ok())
}

/// One `bsub -H` that tries once (`LSB_NTRIES=1`): Ok(id) when acknowledged, Err(the
/// output) when refused — then it must have printed no job id.
fn bsub_once(c: &ProcessCluster, work: &Path, name: &str) -> Result<Result<u64, String>> {
    let o = c
        .command("bsub")
        .current_dir(work)
        .env("LSB_NTRIES", "1")
        .args(["-H", "-J", name, "true"])
        .output()?;
    let stdout = String::from_utf8_lossy(&o.stdout);
    match job_id(&stdout) {
        Some(id) if o.status.success() => Ok(Ok(id)),
        Some(id) => bail!("bsub failed but printed job {id}: {}", output_text(&o)),
        None if o.status.success() => bail!("bsub exited 0 without a job id: {stdout}"),
        None => Ok(Err(output_text(&o))),
    }
}

/// The job ids of the `JOB_NEW` records of lsb.events (in order).
fn logged_job_ids(logdir: &Path) -> Result<Vec<u64>> {
    let text = std::fs::read_to_string(logdir.join("lsb.events"))?;
    Ok(text
        .lines()
        .filter(|l| l.starts_with("\"JOB_NEW\""))
        .filter_map(|l| event_fields(l).get(3)?.parse().ok())
        .collect())
}

fn require_root(test: &str) -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        bail!(
            "{test} mounts a small tmpfs on the log directory and must run as root \
             (it does in CI); it does not pass without checking"
        );
    }
    Ok(())
}

/// A cluster of one host whose log directory is a tmpfs of `size`, mounted before
/// mbatchd starts.
fn cluster_on_tmpfs(name: &str, size: &str) -> Result<(ProcessCluster, Mount, PathBuf)> {
    let mut c = ProcessCluster::start(name, &ClusterSpec::new(1))?;
    let logdir = logdir(&c)?;
    let mount = mount_tmpfs(&logdir, size)?;
    c.wait_master("hostA", Duration::from_secs(30))?;
    c.start_daemon("sbatchd", "hostA")?;
    wait_for("mbatchd to serve bhosts", Duration::from_secs(60), || {
        let out = c.run("bhosts", &[]).map(|o| output_text(&o));
        let text = out.unwrap_or_else(|e| e.to_string());
        let ok = text
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some("ok"));
        (ok.then_some(()), text)
    })?;
    Ok((c, mount, logdir))
}

#[test]
fn disk_full_on_the_log_directory_acknowledges_nothing_unlogged_and_serves_within_5s_of_space()
-> Result<()> {
    require_root("disk_full_on_the_log_directory_...")?;
    let (c, _mount, logdir) = cluster_on_tmpfs("log-full", "4m")?;
    let work = c.dir.path().join("work-area");
    std::fs::create_dir_all(&work)?;
    let mut acked: Vec<u64> = Vec::new();
    for i in 0..3 {
        match bsub_once(&c, &work, &format!("before{i}"))? {
            Ok(id) => acked.push(id),
            Err(out) => bail!("refused before the disk was full: {out}"),
        }
    }

    let filler = fill(&logdir)?;
    // The last page of lsb.events may still take a record or a few; submit until the
    // log refuses.
    let mut refusal = None;
    for i in 0..300 {
        match bsub_once(&c, &work, &format!("full{i}"))? {
            Ok(id) => acked.push(id),
            Err(out) => {
                refusal = Some(out);
                break;
            }
        }
    }
    let refusal = refusal.ok_or_else(|| anyhow!("no submission was refused"))?;
    ensure!(
        refusal.contains("Cannot write the event log") && refusal.contains("No space left"),
        "bsub's refusal does not say why: {refusal}"
    );
    eprintln!(
        "log_faults: disk full after {} acknowledged jobs; bsub says: {}",
        acked.len(),
        refusal.trim()
    );

    // Issue 49 item 8: a bsub bounded by BASALT_CMD_TIMEOUT gives up in time with
    // mbatchd's reason, exit 255 and no job id (it once said "Retrying in 1 seconds..."
    // every second for ever).
    let bounded_out = c.dir.path().join("bsub-bounded.out");
    let bounded_err = c.dir.path().join("bsub-bounded.err");
    let mut bounded: Child = c
        .command("bsub")
        .current_dir(&work)
        .env("BASALT_CMD_TIMEOUT", "3")
        .env_remove("LSB_NTRIES")
        .args(["-H", "-J", "bounded", "true"])
        .stdout(std::fs::File::create(&bounded_out)?)
        .stderr(std::fs::File::create(&bounded_err)?)
        .spawn()?;
    let st = wait_child(&mut bounded, Duration::from_secs(30))?;
    let out = std::fs::read_to_string(&bounded_out)?;
    let err = std::fs::read_to_string(&bounded_err)?;
    let st = st.ok_or_else(|| {
        anyhow!("bsub with BASALT_CMD_TIMEOUT=3 still ran after 30 s of a full disk: {err}")
    })?;
    ensure!(
        st.code() == Some(255) && job_id(&out).is_none(),
        "bsub with BASALT_CMD_TIMEOUT=3 ended {st}: {out} {err}"
    );
    ensure!(
        err.contains("Cannot write the event log")
            && err.contains("No space left")
            && err.trim_end().ends_with("Job not submitted.")
            && err.matches("Retrying in").count() <= 1,
        "bsub's give-up does not say why: {err}"
    );

    // A bsub left to its default retries waits, and prints no job id meanwhile.
    let wait_out = c.dir.path().join("bsub-waiting.out");
    let mut waiting: Child = c
        .command("bsub")
        .current_dir(&work)
        .args(["-H", "-J", "waiting", "true"])
        .stdout(std::fs::File::create(&wait_out)?)
        .stderr(Stdio::null())
        .spawn()?;
    let held_until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < held_until {
        if let Some(st) = waiting.try_wait()? {
            let out = std::fs::read_to_string(&wait_out)?;
            ensure!(
                !st.success() && job_id(&out).is_none(),
                "bsub ended ({st}) while the log could not be written: {out}"
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = std::fs::read_to_string(&wait_out)?;
    ensure!(
        job_id(&out).is_none(),
        "a job id was printed while the log could not be written: {out}"
    );
    let still_waiting = waiting.try_wait()?.is_none();

    // Queries work and show every acknowledged job.
    let bjobs = c.ok("bjobs", &["-a", "-w"])?;
    for id in &acked {
        ensure!(
            bjobs.lines().any(|l| l.starts_with(&format!("{id} "))),
            "job {id} missing from bjobs while the disk is full:\n{bjobs}"
        );
    }

    // Room again: a submission is acknowledged within 5 s.
    std::fs::remove_file(&filler)?;
    let freed = Instant::now();
    let (id, tries) = {
        let mut tries = 0;
        let id = wait_for(
            "a submission to be acknowledged after space returned",
            Duration::from_secs(5),
            || {
                tries += 1;
                match bsub_once(&c, &work, "after") {
                    Ok(Ok(id)) => (Some(Ok(id)), String::new()),
                    Ok(Err(out)) => (None, out),
                    Err(e) => (Some(Err(e)), String::new()),
                }
            },
        )??;
        (id, tries)
    };
    let served_in = freed.elapsed();
    acked.push(id);
    eprintln!(
        "log_faults: a submission acknowledged {:.2} s after space returned ({tries} bsub call(s))",
        served_in.as_secs_f64()
    );
    if still_waiting {
        let st = wait_child(&mut waiting, Duration::from_secs(5))
            .context("the waiting bsub after space returned")?
            .ok_or_else(|| anyhow!("bsub still waits 5 s after space returned"))?;
        let out = std::fs::read_to_string(&wait_out)?;
        let id = job_id(&out)
            .filter(|_| st.success())
            .ok_or_else(|| anyhow!("the waiting bsub ended {st} with {out:?}"))?;
        eprintln!(
            "log_faults: the waiting bsub got job {id} {:.2} s after space returned",
            freed.elapsed().as_secs_f64()
        );
        acked.push(id);
    } else {
        eprintln!("log_faults: bsub without LSB_NTRIES gave up while the disk was full");
    }

    // Every acknowledged job is logged, once, and nothing else was.
    let logged = logged_job_ids(&logdir)?;
    let distinct: BTreeSet<u64> = acked.iter().copied().collect();
    ensure!(
        distinct.len() == acked.len(),
        "an id given twice: {acked:?}"
    );
    let mut want = acked.clone();
    want.sort_unstable();
    let mut got = logged.clone();
    got.sort_unstable();
    ensure!(
        got == want,
        "lsb.events has JOB_NEW for {got:?}, acknowledged were {want:?}"
    );
    Ok(())
}

#[test]
fn a_corrupt_record_in_the_middle_of_lsb_events_stops_mbatchd_with_what_to_do() -> Result<()> {
    let c = ProcessCluster::start("log-corrupt", &ClusterSpec::new(1))?;
    c.wait_master("hostA", Duration::from_secs(30))?;
    let logdir = logdir(&c)?;
    let work = c.dir.path().join("work-area");
    std::fs::create_dir_all(&work)?;
    // mbatchd run by the test (no sbatchd restarting it), over a log of three jobs.
    let log_path = c.dir.path().join("log").join("mbatchd.test.log");
    let spawn_mbd = |c: &ProcessCluster| -> Result<Child> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)?;
        Ok(std::process::Command::new(c.bin.join("mbatchd"))
            .args(["-H", "hostA"])
            .env("LSF_ENVDIR", &c.envdir)
            .env("BASALT_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?)
    };
    let mut mbd = spawn_mbd(&c)?;
    let mut ids = Vec::new();
    for i in 0..3 {
        let id = wait_for(
            "mbatchd to take a job",
            Duration::from_secs(30),
            || match bsub_once(&c, &work, &format!("j{i}")) {
                Ok(Ok(id)) => (Some(id), String::new()),
                Ok(Err(out)) => (None, out),
                Err(e) => (None, e.to_string()),
            },
        )?;
        ids.push(id);
    }
    mbd.kill()?;
    mbd.wait()?;

    // Damage the JOB_NEW of the second job; good records follow it.
    let path = logdir.join("lsb.events");
    let text = std::fs::read_to_string(&path)?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let victim = lines
        .iter()
        .position(|l| {
            l.starts_with("\"JOB_NEW\"")
                && event_fields(l).get(3).map(String::as_str) == Some(&ids[1].to_string())
        })
        .ok_or_else(|| anyhow!("no JOB_NEW of job {}", ids[1]))?;
    ensure!(victim + 1 < lines.len(), "records follow the damaged one");
    lines[victim] = lines[victim].replacen("\"JOB_NEW\" \"10.1\" ", "\"JOB_NEW\" \"10.1\" x", 1);
    std::fs::write(&path, lines.join("\n") + "\n")?;
    let before = std::fs::read(&path)?;
    let log_len = std::fs::metadata(&log_path)?.len();

    let mut mbd = spawn_mbd(&c)?;
    let st = match wait_child(&mut mbd, Duration::from_secs(60))? {
        Some(st) => st,
        None => {
            let _ = mbd.kill();
            let _ = mbd.wait();
            bail!("mbatchd kept running over a damaged lsb.events");
        }
    };
    ensure!(!st.success(), "mbatchd exited 0 over a damaged lsb.events");
    let all = std::fs::read(&log_path)?;
    let said = String::from_utf8_lossy(&all[log_len as usize..]);
    let line = format!("{}:{}", path.display(), victim + 1);
    ensure!(
        said.contains(&line),
        "the message does not name {line}: {said}"
    );
    ensure!(
        said.contains("mbatchd --recover") && said.contains("damaged"),
        "the message does not say what to do: {said}"
    );
    ensure!(
        std::fs::read(&path)? == before,
        "mbatchd changed the damaged file"
    );
    eprintln!(
        "log_faults: mbatchd refused the damaged log ({st}): {}",
        said.lines()
            .find(|l| l.contains("damaged"))
            .unwrap_or_default()
    );
    Ok(())
}
