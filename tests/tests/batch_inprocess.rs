//! Batch jobs end to end on a 3-host loopback cluster whose daemons run in the test
//! process (lim, sbatchd on every host, mbatchd on the master: `InProcessBatch`), driven
//! through the real commands: bsub, bjobs, bkill, bstop, bresume, bswitch, btop, brun,
//! bhosts. Jobs still run under real job supervisors (child processes). Moved from
//! batch_cluster.rs, which keeps the scenarios that kill daemon processes.

use anyhow::{Result, anyhow, bail};
use basalt_testkit::jobs::{jobs, wait_finished, wait_state};
use basalt_testkit::{
    ClusterSpec, Commands, InProcessBatch, event_fields, is_root, output_text, skip, work_dir,
};
use std::collections::BTreeMap;
use std::time::Duration;

/// Hellos every second so that a silent sbatchd is noticed within seconds.
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

fn cluster(name: &str) -> Result<InProcessBatch> {
    InProcessBatch::start(name, &ClusterSpec::new(3), PARAMS)
}

#[test]
fn jobs_run_end_to_end_with_lsf_environment_and_report() -> Result<()> {
    let c = cluster("batch-e2e")?;
    let work = work_dir(c.dir.path())?;
    let ok = c.bsub(
        &work,
        &[
            "-J",
            "envjob",
            "-o",
            "out.%J",
            "env | grep -E '^(LSB_|LSF_ENVDIR)' | sort",
        ],
    )?;
    let bad = c.bsub(
        &work,
        &[
            "-q",
            "priority",
            "-o",
            "bad.%J",
            "-e",
            "bad.err.%J",
            "echo to-err >&2; exit 3",
        ],
    )?;
    let script = work.join("job.sh");
    std::fs::write(
        &script,
        "\n#!/bin/bash\n#BSUB -J scripted\n#BSUB -o script.%J\necho \"bash ${BASH_VERSION%%.*} in $PWD\"\n",
    )?;
    let sc = c.bsub(&work, &[script.to_str().unwrap_or_default()])?;
    std::fs::remove_file(&script)?;
    let m = wait_finished(&c, &[ok, bad, sc], Duration::from_secs(60))?;
    assert_eq!(m[&ok].stat, "DONE");
    assert_eq!(m[&bad].stat, "EXIT");
    assert_eq!(m[&bad].exit_code, "3");
    assert_eq!(m[&bad].queue, "priority");
    assert_eq!(m[&sc].stat, "DONE");

    let out = std::fs::read_to_string(work.join(format!("out.{ok}")))?;
    for v in [
        format!("LSB_JOBID={ok}"),
        "LSB_JOBNAME=envjob".into(),
        "LSB_QUEUE=normal".into(),
        "LSB_JOBINDEX=0".into(),
        "LSB_DJOB_NUMPROC=1".into(),
        format!("LSB_SUBCWD={}", work.display()),
        // As given to bsub -o (relative to the job's directory), %J substituted.
        format!("LSB_OUTPUTFILE=out.{ok}\n"),
        format!("LSF_ENVDIR={}", c.envdir.display()),
    ] {
        assert!(out.contains(&v), "{v} missing from the job output:\n{out}");
    }
    let host = m[&ok].exec_host.clone();
    assert!(out.contains(&format!("LSB_HOSTS={host}\n")), "{out}");
    assert!(out.contains(&format!("LSB_MCPU_HOSTS={host} 1")), "{out}");
    // The LSF job report: "Successfully completed." two lines above the summary.
    let lines: Vec<&str> = out.lines().collect();
    let summary = lines
        .iter()
        .position(|l| *l == "Resource usage summary:")
        .ok_or_else(|| anyhow!("no job report in:\n{out}"))?;
    assert_eq!(lines[summary - 2], "Successfully completed.", "{out}");

    let bad_out = std::fs::read_to_string(work.join(format!("bad.{bad}")))?;
    assert!(bad_out.contains("Exited with exit code 3."), "{bad_out}");
    let bad_err = std::fs::read_to_string(work.join(format!("bad.err.{bad}")))?;
    assert!(bad_err.contains("to-err"), "{bad_err}");
    let sc_out = std::fs::read_to_string(work.join(format!("script.{sc}")))?;
    assert!(
        sc_out.starts_with(&format!("bash 5 in {}", work.display())) || sc_out.contains("bash "),
        "{sc_out}"
    );

    // bjobs -l and the default table know the job.
    let l = c
        .stdout_ok("bjobs", &["-l", &ok.to_string()])
        .unwrap_or_default();
    assert!(
        l.contains(&format!("Job <{ok}>")) && l.contains("Status <DONE>"),
        "{l}"
    );
    let none = c.run("bjobs", &["999999"])?;
    assert_eq!(none.status.code(), Some(255), "{}", output_text(&none));
    assert!(String::from_utf8_lossy(&none.stderr).contains("Job <999999> is not found"));

    // lsb.events and lsb.acct, read independently: field positions of event-log.md.
    let logdir = c.dir.path().join("work/basalt/logdir");
    let events = std::fs::read_to_string(logdir.join("lsb.events"))?;
    let mut new_seen = false;
    let mut status_seen = false;
    for line in events.lines().filter(|l| !l.starts_with('#')) {
        let f = event_fields(line);
        match f[0].as_str() {
            "JOB_NEW" if f[3] == ok.to_string() => {
                // gawk positions $4 job id, $42 job name, $43 command (no -m hosts).
                assert_eq!(f[41], "envjob", "{line}");
                assert!(f[42].starts_with("env | grep"), "{line}");
                assert_eq!(f[28], "normal", "{line}");
                new_seen = true;
            }
            "JOB_STATUS" if f[3] == bad.to_string() && f[4] == "32" => {
                // exit status is the raw wait status: 3 << 8.
                let ru = f[9] == "1";
                let exit_at = if ru { 10 + 19 } else { 10 };
                assert_eq!(f[exit_at], "768", "{line}");
                status_seen = true;
            }
            _ => {}
        }
    }
    assert!(new_seen && status_seen, "{events}");
    let acct = std::fs::read_to_string(logdir.join("lsb.acct"))?;
    let fin: Vec<Vec<String>> = acct
        .lines()
        .map(event_fields)
        .filter(|f| f[0] == "JOB_FINISH")
        .collect();
    let bad_fin = fin
        .iter()
        .find(|f| f[3] == bad.to_string())
        .ok_or_else(|| anyhow!("no JOB_FINISH for {bad}:\n{acct}"))?;
    assert_eq!(bad_fin[12], "priority");
    Ok(())
}

#[test]
fn two_hundred_mixed_jobs_and_job_control() -> Result<()> {
    let c = cluster("batch-200")?;
    let work = work_dir(c.dir.path())?;
    let mut expect = BTreeMap::new();
    for i in 0..200u32 {
        let queue = if i % 3 == 0 { "priority" } else { "normal" };
        let code = i % 4;
        let mut args = vec!["-q", queue, "-o", "o.%J"];
        let host = format!("host{}", (b'A' + (i % 3) as u8) as char);
        if i % 5 == 0 {
            args.push("-m");
            args.push(&host);
        }
        let cmd = format!("echo job $LSB_JOBID on $(hostname); exit {code}");
        args.push(&cmd);
        let id = c.bsub(&work, &args)?;
        expect.insert(id, (code, queue, (i % 5 == 0).then(|| host.clone())));
    }
    let ids: Vec<u64> = expect.keys().copied().collect();
    let m = wait_finished(&c, &ids, Duration::from_secs(240))?;
    for (id, (code, queue, host)) in &expect {
        let r = &m[id];
        let want = if *code == 0 { "DONE" } else { "EXIT" };
        assert_eq!(r.stat, want, "job {id}: {r:?}");
        assert_eq!(r.queue, *queue, "job {id}");
        if *code != 0 {
            assert_eq!(r.exit_code, code.to_string(), "job {id}");
        }
        if let Some(h) = host {
            assert_eq!(&r.exec_host, h, "job {id} asked for {h}");
        }
        let out = std::fs::read_to_string(work.join(format!("o.{id}")))?;
        assert!(out.starts_with(&format!("job {id} on ")), "job {id}: {out}");
    }

    // Job control on long jobs.
    let sleeper = c.bsub(&work, &["-o", "/dev/null", "sleep 300"])?;
    wait_state(&c, sleeper, "RUN", Duration::from_secs(20))?;
    let o = c.run("bstop", &[&sleeper.to_string()])?;
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("Job <{sleeper}> is being stopped")),
        "{}",
        output_text(&o)
    );
    wait_state(&c, sleeper, "USUSP", Duration::from_secs(20))?;
    c.run("bresume", &[&sleeper.to_string()])?;
    wait_state(&c, sleeper, "RUN", Duration::from_secs(20))?;
    let o = c.run("bkill", &[&sleeper.to_string()])?;
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains(&format!("Job <{sleeper}> is being terminated")),
        "{}",
        output_text(&o)
    );
    wait_state(&c, sleeper, "EXIT", Duration::from_secs(30))?;
    let o = c.run("bkill", &[&sleeper.to_string()])?;
    assert_eq!(o.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Job has already finished"));

    // Pending jobs: hold, btop, bswitch, brun.
    for h in ["hostA", "hostB", "hostC"] {
        let o = c.run("badmin", &["hclose", h])?;
        assert!(o.status.success(), "{}", output_text(&o));
    }
    let p1 = c.bsub(&work, &["-o", "/dev/null", "true"])?;
    let p2 = c.bsub(&work, &["-o", "/dev/null", "true"])?;
    let held = c.bsub(&work, &["-H", "-o", "/dev/null", "true"])?;
    wait_state(&c, held, "PSUSP", Duration::from_secs(10))?;
    let o = c.run("btop", &[&p2.to_string()])?;
    assert!(o.status.success(), "{}", output_text(&o));
    let o = c.run("bswitch", &["priority", &p1.to_string()])?;
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains(&format!("Job <{p1}> is switched to queue <priority>")),
        "{}",
        output_text(&o)
    );
    let o = c.run("brun", &["-m", "hostB", &p2.to_string()])?;
    assert!(o.status.success(), "{}", output_text(&o));
    let r = wait_state(&c, p2, "DONE", Duration::from_secs(30))?;
    assert_eq!(r.exec_host, "hostB");
    for h in ["hostA", "hostB", "hostC"] {
        c.run("badmin", &["hopen", h])?;
    }
    c.run("bresume", &[&held.to_string()])?;
    wait_finished(&c, &[p1, held], Duration::from_secs(30))?;
    assert_eq!(jobs(&c)?[&p1].queue, "priority");

    let events = std::fs::read_to_string(c.dir.path().join("work/basalt/logdir/lsb.events"))?;
    for kind in [
        "JOB_SIGNAL",
        "JOB_SWITCH",
        "JOB_MOVE",
        "JOB_FORCE",
        "HOST_CTRL",
        "MBD_START",
    ] {
        assert!(
            events
                .lines()
                .any(|l| l.starts_with(&format!("\"{kind}\""))),
            "no {kind} in lsb.events"
        );
    }
    Ok(())
}

#[test]
fn users_control_only_their_own_jobs() -> Result<()> {
    use std::os::unix::process::CommandExt;
    if !is_root() {
        skip(
            "users_control_only_their_own_jobs",
            "creating test users needs root",
        );
        return Ok(());
    }
    let (Some(a), Some(b)) = (
        basalt_testkit::jobs::test_user("basalt-ua"),
        basalt_testkit::jobs::test_user("basalt-ub"),
    ) else {
        bail!("cannot create the test users basalt-ua / basalt-ub");
    };
    let c = cluster("batch-perm")?;
    let work = work_dir(c.dir.path())?;
    let as_user = |u: (u32, u32), cmd: &str, args: &[&str]| -> Result<std::process::Output> {
        Ok(c.command(cmd)
            .args(args)
            .current_dir(&work)
            .uid(u.0)
            .gid(u.1)
            .env("HOME", &work)
            .output()?)
    };
    let o = as_user(a, "bsub", &["-o", "perm.%J", "id -un; sleep 60"])?;
    assert!(o.status.success(), "{}", output_text(&o));
    let id: u64 = String::from_utf8_lossy(&o.stdout)
        .split(['<', '>'])
        .nth(1)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow!("no id: {}", output_text(&o)))?;
    wait_state(&c, id, "RUN", Duration::from_secs(30))?;
    // RUN is reported once the job's process is started; on a loaded machine its shell
    // may not have run `id` yet, and a kill then would leave the output empty.
    let out_file = work.join(format!("perm.{id}"));
    basalt_testkit::wait_for("the job's `id -un` output", Duration::from_secs(30), || {
        let text = std::fs::read_to_string(&out_file).unwrap_or_default();
        (text.contains('\n').then_some(()), text)
    })?;
    let o = as_user(b, "bkill", &[&id.to_string()])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("Job <{id}>: User permission denied")),
        "{}",
        output_text(&o)
    );
    let o = as_user(a, "bkill", &[&id.to_string()])?;
    assert!(o.status.success(), "{}", output_text(&o));
    wait_state(&c, id, "EXIT", Duration::from_secs(30))?;
    let out = std::fs::read_to_string(&out_file)?;
    assert!(
        out.starts_with("basalt-ua\n"),
        "job ran as another user: {out}"
    );
    assert!(out.contains("TERM_OWNER"), "{out}");
    Ok(())
}

/// `bsub -K`: "Submits a job and waits for the job to complete ... bsub exits with the
/// same exit code as the job"; `<<Waiting for dispatch ...>>`, `<<Starting on host>>`
/// with LSB_SUBK_SHOW_EXEC_HOST=Y, `<<Job is finished>>`.
#[test]
fn bsub_k_waits_for_the_job_and_exits_with_its_exit_code() -> Result<()> {
    let c = cluster("batch-subk")?;
    let work = work_dir(c.dir.path())?;
    let conf = c.envdir.join("lsf.conf");
    let mut text = std::fs::read_to_string(&conf)?;
    text.push_str("\nLSB_SUBK_SHOW_EXEC_HOST=Y\n");
    std::fs::write(&conf, text)?;
    let o = c
        .command("bsub")
        .args(["-K", "-o", "/dev/null", "sleep 1; exit 3"])
        .current_dir(&work)
        .output()?;
    let out = output_text(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<String> = stdout
        .lines()
        .map(|l| {
            if l.starts_with("<<Starting on host") {
                "<<Starting>>".to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect();
    assert!(
        lines[0].starts_with("Job <") && lines[0].contains("is submitted"),
        "{out}"
    );
    assert_eq!(
        &lines[1..],
        [
            "<<Waiting for dispatch ...>>",
            "<<Starting>>",
            "<<Job is finished>>"
        ],
        "{out}"
    );
    let o = c
        .command("bsub")
        .args(["-K", "-o", "/dev/null", "true"])
        .current_dir(&work)
        .output()?;
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    Ok(())
}

/// Issue 51: `bjobs` prints its table as mbatchd sends it in pages (`JobsPages`, 2,000
/// jobs a message): the header once, every job once in LSF's order, across pages; the
/// ids not found and the empty listing as before.
#[test]
fn bjobs_prints_a_listing_of_many_pages_whole_and_in_order() -> Result<()> {
    let c = cluster("bjobs-pages")?;
    let work = work_dir(c.dir.path())?;
    let o = c.run("badmin", &["qinact", "priority"])?;
    assert!(o.status.success(), "{}", output_text(&o));
    // (Arrays of at most MAX_JOB_ARRAY_SIZE, 1,000.)
    let mut arrays = Vec::new();
    for _ in 0..5 {
        arrays.push(c.bsub(
            &work,
            &[
                "-q",
                "priority",
                "-J",
                "p[1-1000]",
                "-o",
                "/dev/null",
                "true",
            ],
        )?);
    }
    let o = c.run("bjobs", &["-u", "all", "-w"])?;
    assert!(o.status.success(), "{}", output_text(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5001, "{}", &text[..text.len().min(2000)]);
    assert!(lines[0].starts_with("JOBID"), "{}", lines[0]);
    assert_eq!(lines.iter().filter(|l| l.starts_with("JOBID")).count(), 1);
    for (i, l) in lines[1..].iter().enumerate() {
        let words: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(
            words.first(),
            Some(&arrays[i / 1000].to_string().as_str()),
            "{l}"
        );
        assert_eq!(words.get(2), Some(&"PEND"), "{l}");
        assert_eq!(
            words.get(6),
            Some(&format!("p[{}]", i % 1000 + 1).as_str()),
            "{l}"
        );
    }
    // -noheader: the rows only.
    let o = c.run("bjobs", &["-u", "all", "-noheader"])?;
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 5000);
    // An id not found: said after the listing, exit 255 (as without pages).
    let o = c.run("bjobs", &[&arrays[4].to_string(), "987654"])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1001);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("Job <987654> is not found"),
        "{}",
        output_text(&o)
    );
    // Nothing to list.
    let o = c.run("bjobs", &["-q", "normal"])?;
    assert!(o.stdout.is_empty(), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("No unfinished job found"),
        "{}",
        output_text(&o)
    );
    Ok(())
}
