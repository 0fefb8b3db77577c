//! Issue 27: checkpoint, restart and migration (seed 001, "Checkpointing and
//! Migration", "Job migration", "Automatic job migration") on a 3-host cluster of the
//! real binaries, one cluster for the whole scenario:
//!
//! 1. a job that counts and saves its count when checkpointed (the built-in `default`
//!    method: it traps SIGWINCH, writes `$LSB_CHKPNT_DIR/count`, then
//!    `$LSB_CHKPNT_DIR/chkpnt.done`) is checkpointed with `bchkpnt` and keeps running;
//!    `bmig -m hostC` checkpoints and kills it, and it continues on hostC from its saved
//!    count with the same job id; `bjobs -l` and `bhist -l` show the checkpoints;
//! 2. a job that does not take part: its checkpoint fails, it keeps running, and
//!    `bjobs -l` says why;
//! 3. automatic migration: a checkpointable job of a queue with `MIG = 0`, suspended by
//!    preemption, is migrated to another host and continues from its checkpoint;
//! 4. a rerunnable (not checkpointable) job is migrated by requeue: killed and run
//!    again elsewhere, same id;
//! 5. kill -9 of mbatchd while a migration's checkpoint is under way: the restarted
//!    mbatchd replays lsb.events, takes sbatchd's answer, and the job continues on the
//!    asked host from its checkpoint — one MIG, one JOB_NEW, not run twice;
//! 6. `brestart` of a job checkpointed and killed with `bchkpnt -k` runs it again as a
//!    new job from its count.

use anyhow::{Context, Result, bail};
use basalt_testkit::jobs::{jobs, wait_state};
use basalt_testkit::{ClusterSpec, ProcessCluster, event_fields, output_text, wait_for, work_dir};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(90);
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 1";

/// The counting job: counts every 0.2 s into `<name>.progress` ("count host"), notes
/// each (re)start in `<name>.starts` ("host count"), and on SIGWINCH saves its count
/// (after `delay` seconds) to `$LSB_CHKPNT_DIR/count`, then marks the checkpoint done.
/// A restarted job (LSB_RESTART=Y) starts from the saved count.
fn counter(work: &Path, name: &str, delay: u32) -> Result<PathBuf> {
    let script = work.join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\n\
             n=0\n\
             h=${{LSB_HOSTS%% *}}\n\
             if [ \"$LSB_RESTART\" = Y ] && [ -f \"$LSB_CHKPNT_DIR/count\" ]; then\n\
             \x20 n=$(cat \"$LSB_CHKPNT_DIR/count\")\n\
             fi\n\
             echo \"$h $n\" >> {w}/{name}.starts\n\
             save() {{\n\
             \x20 sleep {delay}\n\
             \x20 echo $n > \"$LSB_CHKPNT_DIR/count.tmp\"\n\
             \x20 mv \"$LSB_CHKPNT_DIR/count.tmp\" \"$LSB_CHKPNT_DIR/count\"\n\
             \x20 touch \"$LSB_CHKPNT_DIR/chkpnt.done\"\n\
             }}\n\
             trap save WINCH\n\
             while true; do\n\
             \x20 n=$((n+1))\n\
             \x20 echo \"$n $h\" > {w}/{name}.progress.tmp\n\
             \x20 mv {w}/{name}.progress.tmp {w}/{name}.progress\n\
             \x20 sleep 0.2\n\
             done\n",
            w = work.display()
        ),
    )?;
    Ok(script)
}

/// The job's count and host of its progress file.
fn progress(work: &Path, name: &str) -> Option<(u64, String)> {
    let t = std::fs::read_to_string(work.join(format!("{name}.progress"))).ok()?;
    let mut w = t.split_whitespace();
    Some((w.next()?.parse().ok()?, w.next()?.to_owned()))
}

/// Wait until the job counted past `n` on `host`.
fn wait_count(work: &Path, name: &str, host: &str, n: u64) -> Result<u64> {
    wait_for(&format!("{name} to count past {n} on {host}"), LONG, || {
        let p = progress(work, name);
        (
            p.clone()
                .filter(|(c, h)| *c > n && h == host)
                .map(|(c, _)| c),
            format!("{p:?}"),
        )
    })
}

/// The (host, count) of each start of the job.
fn starts(work: &Path, name: &str) -> Vec<(String, u64)> {
    std::fs::read_to_string(work.join(format!("{name}.starts")))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.to_owned(), w.next()?.parse().ok()?))
        })
        .collect()
}

fn saved_count(dir: &Path, id: u64) -> Option<u64> {
    std::fs::read_to_string(dir.join(id.to_string()).join("count"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn events(c: &ProcessCluster) -> Vec<Vec<String>> {
    std::fs::read_to_string(c.dir.path().join("work/basalt/logdir/lsb.events"))
        .unwrap_or_default()
        .lines()
        .map(event_fields)
        .collect()
}

/// lsb.events records of `kind` for job `id`.
fn records(c: &ProcessCluster, kind: &str, id: u64) -> Vec<Vec<String>> {
    let at = if kind == "JOB_SWITCH" { 4 } else { 3 };
    events(c)
        .into_iter()
        .filter(|f| {
            f.first().map(String::as_str) == Some(kind)
                && f.get(at).and_then(|v| v.parse::<u64>().ok()) == Some(id)
        })
        .collect()
}

fn wait_run_on(c: &ProcessCluster, id: u64, host: &str) -> Result<()> {
    wait_for(&format!("job {id} to run on {host}"), LONG, || {
        match jobs(c) {
            Ok(m) => {
                let r = m.get(&id).cloned();
                (
                    r.clone()
                        .filter(|r| r.stat == "RUN" && r.exec_host.contains(host))
                        .map(|_| ()),
                    format!("{r:?}"),
                )
            }
            Err(e) => (None, e.to_string()),
        }
    })
}

fn hist(c: &ProcessCluster, id: u64) -> Result<String> {
    Ok(c.ok("bhist", &["-l", &id.to_string()])?
        .replace("\n                     ", ""))
}

#[test]
fn checkpoint_restart_and_migration_on_a_process_cluster() -> Result<()> {
    let mut spec = ClusterSpec::new(3);
    spec.lsf_conf_extra = "BASALT_CHKPNT_TIMEOUT=5\n".to_owned();
    let c = ProcessCluster::start_batch("chkpnt", &spec, PARAMS)?;
    let work = work_dir(c.dir.path())?;
    let ckpt = work.join("ckpt");
    std::fs::create_dir_all(&ckpt)?;
    // `mig`: suspended jobs are migrated at once (MIG = 0); `urgent` preempts it.
    c.append_batch_file(
        "lsb.queues",
        "\nBegin Queue\nQUEUE_NAME = mig\nPRIORITY = 10\nMIG = 0\nEnd Queue\n\
         \nBegin Queue\nQUEUE_NAME = urgent\nPRIORITY = 70\nPREEMPTION = PREEMPTIVE\n\
         End Queue\n",
    )?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("the mig and urgent queues", LONG, || {
        let out = c.stdout_ok("bqueues", &[]).unwrap_or_default();
        (
            (out.contains("mig") && out.contains("urgent")).then_some(()),
            out,
        )
    })?;
    let k = format!("{}", ckpt.display());

    // 1. bchkpnt, then bmig -m hostC: the job continues there from its saved count.
    let script = counter(&work, "count", 0)?;
    let s = script.display().to_string();
    let id = c.bsub(
        &work,
        &["-k", &k, "-m", "hostA", "-o", "/dev/null", "bash", &s],
    )?;
    wait_state(&c, id, "RUN", LONG)?;
    wait_count(&work, "count", "hostA", 5)?;
    let out = c.ok("bchkpnt", &[&id.to_string()])?;
    assert_eq!(out, format!("Job <{id}> is being checkpointed\n"));
    let first = wait_for("the first checkpoint", LONG, || {
        let n = saved_count(&ckpt, id);
        (n, format!("{n:?}"))
    })?;
    wait_for("bhist to show the checkpoint", LONG, || {
        let h = hist(&c, id).unwrap_or_default();
        (
            (h.contains("Checkpoint initiated") && h.contains("Checkpoint succeeded"))
                .then_some(()),
            h,
        )
    })?;
    // Still running, still counting on hostA.
    let after = wait_count(&work, "count", "hostA", first + 3)?;
    assert!(after > first);
    let long = c
        .ok("bjobs", &["-l", &id.to_string()])?
        .replace("\n                     ", "");
    assert!(
        long.contains(&format!("Checkpoint directory <{k}/{id}>")),
        "{long}"
    );
    assert!(long.contains("Checkpointed <1> time(s)"), "{long}");

    let out = c.ok("bmig", &["-m", "hostC", &id.to_string()])?;
    assert_eq!(out, format!("Job <{id}> is being migrated\n"));
    wait_run_on(&c, id, "hostC")?;
    let resumed_at = wait_for("the restart on hostC", LONG, || {
        let s = starts(&work, "count");
        (
            s.get(1).filter(|(h, _)| h == "hostC").map(|(_, n)| *n),
            format!("{s:?}"),
        )
    })?;
    let saved = saved_count(&ckpt, id).context("the migration's checkpoint")?;
    assert_eq!(resumed_at, saved, "restarted from its saved count");
    assert!(saved >= after, "saved {saved} after {after}");
    wait_count(&work, "count", "hostC", saved + 3)?;
    let h = hist(&c, id)?;
    assert!(
        h.contains("Migration requested by user or administrator <"),
        "{h}"
    );
    assert!(h.contains("Migration checkpoint initiated"), "{h}");
    assert_eq!(records(&c, "MIG", id).len(), 1);
    assert_eq!(records(&c, "CHKPNT", id).len(), 2);
    kill_wait(&c, &[id])?;

    // 2. A job that does not save its state: the checkpoint fails (after
    //    BASALT_CHKPNT_TIMEOUT), the job keeps running, bjobs -l says why.
    let plain = c.bsub(&work, &["-k", &k, "-o", "/dev/null", "sleep 600"])?;
    wait_state(&c, plain, "RUN", LONG)?;
    c.ok("bchkpnt", &[&plain.to_string()])?;
    let long = wait_for("the failed checkpoint in bjobs -l", LONG, || {
        let l = c
            .stdout_ok("bjobs", &["-l", &plain.to_string()])
            .unwrap_or_default()
            .replace("\n                     ", "");
        (l.contains("Last checkpoint failed:").then(|| l.clone()), l)
    })?;
    assert!(
        long.contains("chkpnt.done within 5 s of SIGWINCH"),
        "{long}"
    );
    assert_eq!(wait_state(&c, plain, "RUN", LONG)?.stat, "RUN");
    let h = hist(&c, plain)?;
    assert!(h.contains("Checkpoint failed (actpid"), "{h}");
    kill_wait(&c, &[plain])?;

    // 3. Automatic migration (MIG = 0): preempted (SSUSP) on hostB, the job is
    //    checkpointed, killed and restarted on another host from its count.
    let slots = host_slots(&c, "hostB")?;
    let script = counter(&work, "auto", 0)?;
    let s = script.display().to_string();
    let n = slots.to_string();
    // hostB preferred, hostA allowed.
    let auto = c.bsub(
        &work,
        &[
            "-q",
            "mig",
            "-k",
            &k,
            "-n",
            &n,
            "-R",
            "span[hosts=1]",
            "-m",
            "hostB+2 hostA+1",
            "-o",
            "/dev/null",
            "bash",
            &s,
        ],
    )?;
    wait_run_on(&c, auto, "hostB")?;
    wait_count(&work, "auto", "hostB", 3)?;
    let urgent = c.bsub(
        &work,
        &[
            "-q",
            "urgent",
            "-m",
            "hostB",
            "-o",
            "/dev/null",
            "sleep 600",
        ],
    )?;
    wait_state(&c, urgent, "RUN", LONG)?;
    wait_run_on(&c, auto, "hostA")?;
    let restarted = wait_for("the automatic restart", LONG, || {
        let s = starts(&work, "auto");
        (s.get(1).cloned(), format!("{s:?}"))
    })?;
    assert!(restarted.0.contains("hostA"), "{restarted:?}");
    assert_eq!(Some(restarted.1), saved_count(&ckpt, auto));
    assert!(restarted.1 >= 3, "{restarted:?}");
    let mig = records(&c, "MIG", auto);
    assert_eq!(mig.len(), 1);
    kill_wait(&c, &[auto, urgent])?;

    // 4. A rerunnable job is migrated by requeue: killed and run again, same id.
    let rr = c.bsub(
        &work,
        &["-r", "-m", "hostA", "-o", "/dev/null", "sleep 600"],
    )?;
    wait_run_on(&c, rr, "hostA")?;
    c.ok("bmig", &["-m", "hostB", &rr.to_string()])?;
    wait_run_on(&c, rr, "hostB")?;
    assert_eq!(records(&c, "JOB_START", rr).len(), 2);
    assert!(records(&c, "CHKPNT", rr).is_empty());
    kill_wait(&c, &[rr])?;

    // 5. kill -9 of mbatchd while the migration's checkpoint is under way (the job takes
    //    3 s to save): replayed, the migration completes once.
    let script = counter(&work, "crash", 3)?;
    let s = script.display().to_string();
    let crash = c.bsub(
        &work,
        &["-k", &k, "-m", "hostB", "-o", "/dev/null", "bash", &s],
    )?;
    wait_run_on(&c, crash, "hostB")?;
    wait_count(&work, "crash", "hostB", 3)?;
    let mbd_starts = || {
        events(&c)
            .iter()
            .filter(|f| f.first().map(String::as_str) == Some("MBD_START"))
            .count()
    };
    let before = mbd_starts();
    c.ok("bmig", &["-m", "hostC", &crash.to_string()])?;
    if c.kill9_pids_of("mbatchd", "hostA") != 1 {
        bail!("no mbatchd to kill");
    }
    // Killed before the job could save its count (it takes 3 s).
    assert!(records(&c, "CHKPNT", crash).is_empty());
    wait_run_on(&c, crash, "hostC")?;
    let s = wait_for("the restart after the crash", LONG, || {
        let s = starts(&work, "crash");
        ((s.len() >= 2).then(|| s.clone()), format!("{s:?}"))
    })?;
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(Some(s[1].1), saved_count(&ckpt, crash));
    assert!(s[1].0.contains("hostC"), "{s:?}");
    wait_count(&work, "crash", "hostC", s[1].1 + 2)?;
    assert_eq!(mbd_starts(), before + 1, "mbatchd came back once");
    assert_eq!(records(&c, "MIG", crash).len(), 1);
    assert_eq!(records(&c, "JOB_NEW", crash).len(), 1);
    assert_eq!(records(&c, "JOB_START", crash).len(), 2);
    assert_eq!(
        records(&c, "CHKPNT", crash)
            .iter()
            .filter(|f| f.get(6).map(String::as_str) == Some("1"))
            .count(),
        1
    );
    kill_wait(&c, &[crash])?;

    // 6. bchkpnt -k, then brestart: a new job continues from the count.
    let script = counter(&work, "again", 0)?;
    let s = script.display().to_string();
    let old = c.bsub(&work, &["-k", &k, "-o", "/dev/null", "bash", &s])?;
    wait_state(&c, old, "RUN", LONG)?;
    let host = wait_for("the job to count", LONG, || {
        let p = progress(&work, "again");
        (
            p.clone().filter(|(c, _)| *c > 2).map(|(_, h)| h),
            format!("{p:?}"),
        )
    })?;
    c.ok("bchkpnt", &["-k", &old.to_string()])?;
    let rows = basalt_testkit::jobs::wait_finished(&c, &[old], LONG)?;
    assert_eq!(rows[&old].stat, "EXIT", "{rows:?}");
    let saved = saved_count(&ckpt, old).context("bchkpnt -k's checkpoint")?;
    let o = c.run("brestart", &["-m", "hostC", &k, &old.to_string()])?;
    assert!(o.status.success(), "{}", output_text(&o));
    let new = basalt_testkit::jobs::job_id(&String::from_utf8_lossy(&o.stdout))
        .context("brestart's job id")?;
    assert_ne!(new, old);
    wait_run_on(&c, new, "hostC")?;
    let s = wait_for("the brestarted job", LONG, || {
        let s = starts(&work, "again");
        ((s.len() >= 2).then(|| s.clone()), format!("{s:?}"))
    })?;
    assert_eq!(s[1].1, saved, "{s:?} (first ran on {host})");
    assert!(ckpt.join(new.to_string()).join("count").exists());
    // As LSF: the old job's directory is now a symbolic link to the new one's.
    assert_eq!(
        std::fs::read_link(ckpt.join(old.to_string()))?,
        ckpt.join(new.to_string())
    );
    kill_wait(&c, &[new])?;

    // What cannot be checkpointed: a job that is not checkpointable, a finished one.
    let o = c.run("bchkpnt", &[&rr.to_string()])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    let plain2 = c.bsub(&work, &["-o", "/dev/null", "sleep 600"])?;
    wait_state(&c, plain2, "RUN", LONG)?;
    let o = c.run("bchkpnt", &[&plain2.to_string()])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains(&format!("Job <{plain2}>: Job is not checkpointable")),
        "{}",
        output_text(&o)
    );
    kill_wait(&c, &[plain2])?;
    Ok(())
}

/// bkill the jobs and wait until they have ended.
fn kill_wait(c: &ProcessCluster, ids: &[u64]) -> Result<()> {
    let args: Vec<String> = ids.iter().map(u64::to_string).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    c.ok("bkill", &args)?;
    basalt_testkit::jobs::wait_finished(c, ids, LONG)?;
    Ok(())
}

/// bhosts MAX of `host`.
fn host_slots(c: &ProcessCluster, host: &str) -> Result<usize> {
    let out = c.ok("bhosts", &[host])?;
    out.lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("bhosts {host}: {out}"))
}
