//! Issue 26 item 3, reconfiguration without loss, on a 2-host cluster of real processes
//! with two jobs running throughout (one per host). Each configuration file kind is
//! changed and put in force through the daemons:
//! * lsb.queues, lsb.params, lsb.hosts, lsb.users, lsb.resources, lsb.applications with
//!   `badmin reconfig`;
//! * lsf.shared and lsf.cluster.<name> with `lsadmin reconfig` (every LIM restarts);
//! * lsf.conf with `badmin hrestart all` (sbatchd restarts in place);
//!
//! then `badmin mbdrestart`, `badmin hshutdown`/`hstartup`, `lsadmin
//! limshutdown`/`limstartup` and `limrestart`. After each step the change shows in the
//! commands, and both jobs are still running with the same process, each with one
//! JOB_START in lsb.events: 0 jobs lost, 0 restarted. A broken file is refused with
//! its file and line, by the command's check and by the daemon's own (asked directly),
//! and the configuration in force stays. At the end both jobs finish DONE.
//!
//! (That sbatchd's load thresholds change with `badmin reconfig` and no restart is
//! `load_suspend.rs`.)

use anyhow::{Context, Result, bail};
use basalt_proto::common::{ControlOp, Daemon};
use basalt_testkit::jobs::{jobs, wait_state};
use basalt_testkit::{ClusterSpec, ProcessCluster, event_fields, output_text, wait_for};
use std::path::{Path, PathBuf};
use std::time::Duration;

const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1";
const LONG: Duration = Duration::from_secs(60);

/// The two jobs that run throughout, with the pid each wrote.
struct Running {
    jobs: Vec<(u64, String, i32)>,
    stop: PathBuf,
}

fn logdir(c: &ProcessCluster) -> PathBuf {
    c.dir.path().join("work/basalt/logdir")
}

/// How many `kind` records lsb.events holds for job `id`.
fn count_events(c: &ProcessCluster, kind: &str, id: u64) -> usize {
    let text = std::fs::read_to_string(logdir(c).join("lsb.events")).unwrap_or_default();
    text.lines()
        .map(event_fields)
        .filter(|f| {
            f.first().map(String::as_str) == Some(kind) && f.get(3) == Some(&id.to_string())
        })
        .count()
}

fn alive(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

/// Both jobs RUN on their host (bjobs answers), with the same process, started once.
fn intact(c: &ProcessCluster, r: &Running, after: &str) -> Result<()> {
    let rows = wait_for(
        &format!("bjobs to answer after {after}"),
        LONG,
        || match jobs(c) {
            Ok(rows) => (Some(rows), String::new()),
            Err(e) => (None, e.to_string()),
        },
    )?;
    for (id, host, pid) in &r.jobs {
        let row = rows
            .get(id)
            .with_context(|| format!("after {after}: job {id} is lost: {rows:?}"))?;
        if row.stat != "RUN" || !row.exec_host.contains(host.as_str()) {
            bail!("after {after}: job {id} is {row:?}, not RUN on {host}");
        }
        if !alive(*pid) {
            bail!("after {after}: job {id}'s process {pid} is gone");
        }
        let starts = count_events(c, "JOB_START", *id);
        if starts != 1 {
            bail!("after {after}: job {id} has {starts} JOB_START records (restarted?)");
        }
    }
    Ok(())
}

/// Run `cmd args` until it exits 0 with no `failed` line (a daemon just restarted may
/// not answer yet); its stdout and stderr.
fn ok_all(c: &ProcessCluster, cmd: &str, args: &[&str]) -> Result<String> {
    wait_for(&format!("{cmd} {args:?} to succeed"), LONG, || {
        match c.run(cmd, args) {
            Ok(o) => {
                let text = output_text(&o);
                let good = o.status.success() && !text.contains("failed");
                (good.then(|| text.clone()), text)
            }
            Err(e) => (None, e.to_string()),
        }
    })
}

/// Wait until `cmd args` prints something containing `want`.
fn shows(c: &ProcessCluster, cmd: &str, args: &[&str], want: &str) -> Result<()> {
    wait_for(&format!("{cmd} {args:?} to show {want:?}"), LONG, || {
        let out = c
            .run(cmd, args)
            .map(|o| output_text(&o))
            .unwrap_or_default();
        (out.contains(want).then_some(()), out)
    })
}

fn edit(path: &Path, f: impl FnOnce(String) -> String) -> Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let new = f(text.clone());
    if new == text {
        bail!("the edit of {} changed nothing:\n{text}", path.display());
    }
    std::fs::write(path, new).with_context(|| path.display().to_string())
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| path.display().to_string())
}

/// The pid of `daemon` of `host` (exactly one).
fn pid_of(c: &ProcessCluster, daemon: &str, host: &str) -> Result<i32> {
    match c.pids_of(daemon, host).as_slice() {
        [one] => Ok(*one),
        more => bail!("{daemon} of {host}: pids {more:?}"),
    }
}

/// Wait until bhosts says `host` is `ok`.
fn host_ok(c: &ProcessCluster, host: &str) -> Result<()> {
    wait_for(&format!("bhosts to say {host} is ok"), LONG, || {
        let out = c
            .run("bhosts", &[host])
            .map(|o| output_text(&o))
            .unwrap_or_default();
        let ok = out
            .lines()
            .any(|l| l.split_whitespace().take(2).eq([host, "ok"]));
        (ok.then_some(()), out)
    })
}

fn start_jobs(c: &ProcessCluster) -> Result<Running> {
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let stop = work.join("stop");
    let mut out = Vec::new();
    for host in &c.hosts {
        let pidfile = work.join(format!("pid.{host}"));
        let cmd = format!(
            "echo $$ > {}; while [ ! -e {} ]; do sleep 0.2; done",
            pidfile.display(),
            stop.display()
        );
        let id = c.bsub(&work, &["-m", host, "-o", "/dev/null", &cmd])?;
        wait_state(c, id, "RUN", LONG)?;
        let pid = wait_for(&format!("job {id} to write its pid"), LONG, || {
            let p = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok());
            (p, String::new())
        })?;
        out.push((id, host.clone(), pid));
    }
    Ok(Running { jobs: out, stop })
}

#[test]
fn every_file_kind_is_reconfigured_with_jobs_running_none_lost_none_restarted() -> Result<()> {
    let c = ProcessCluster::start_batch("reconfig", &ClusterSpec::new(2), PARAMS)?;
    let (a, b) = (c.hosts[0].clone(), c.hosts[1].clone());
    let r = start_jobs(&c)?;
    intact(&c, &r, "the start")?;
    let batch = c.batch_dir();
    let cluster_file = c.envdir.join(format!("lsf.cluster.{}", c.cluster));

    // lsb.queues: a new queue.
    c.append_batch_file(
        "lsb.queues",
        "\nBegin Queue\nQUEUE_NAME = added\nPRIORITY = 5\nDESCRIPTION = added by reconfig\nEnd Queue\n",
    )?;
    ok_all(&c, "badmin", &["reconfig"])?;
    shows(&c, "bqueues", &[], "added")?;
    intact(&c, &r, "lsb.queues and badmin reconfig")?;

    deleted_queue_jobs_go_to_lost_and_found(&c, &r)?;

    // lsb.params: a parameter bparams -a shows.
    edit(&batch.join("lsb.params"), |t| {
        t.replace("End Parameters", "MAX_JOB_NUM = 4321\nEnd Parameters")
    })?;
    ok_all(&c, "badmin", &["reconfig"])?;
    shows(&c, "bparams", &["-a"], "MAX_JOB_NUM = 4321")?;
    intact(&c, &r, "lsb.params and badmin reconfig")?;

    // lsb.hosts: hostB's MXJ.
    edit(&batch.join("lsb.hosts"), |t| {
        t.replacen(
            "default ",
            &format!("{b}     7     ()     ()     ()    ()    ()    ()\ndefault "),
            1,
        )
    })?;
    ok_all(&c, "badmin", &["reconfig"])?;
    wait_for("bhosts to show hostB's MXJ of 7", LONG, || {
        let out = c
            .run("bhosts", &[&b])
            .map(|o| output_text(&o))
            .unwrap_or_default();
        let ok = out
            .lines()
            .any(|l| l.starts_with(b.as_str()) && l.split_whitespace().nth(3) == Some("7"));
        (ok.then_some(()), out)
    })?;
    intact(&c, &r, "lsb.hosts and badmin reconfig")?;

    // lsb.users, lsb.resources, lsb.applications: new files.
    write(
        &batch.join("lsb.users"),
        "Begin UserGroup\nGROUP_NAME   GROUP_MEMBER\nreconfgrp   (root)\nEnd UserGroup\n",
    )?;
    write(
        &batch.join("lsb.resources"),
        "Begin Limit\nNAME = reconflimit\nUSERS = all\nJOBS = 50\nEnd Limit\n",
    )?;
    write(
        &batch.join("lsb.applications"),
        "Begin Application\nNAME = reconfapp\nDESCRIPTION = added by reconfig\nEnd Application\n",
    )?;
    ok_all(&c, "badmin", &["reconfig"])?;
    shows(&c, "bugroup", &[], "reconfgrp")?;
    shows(&c, "blimits", &[], "reconflimit")?;
    shows(&c, "bapp", &[], "reconfapp")?;
    intact(
        &c,
        &r,
        "lsb.users, lsb.resources, lsb.applications and badmin reconfig",
    )?;

    // lsf.shared and lsf.cluster: a new Boolean resource, given to hostB.
    let lims = [pid_of(&c, "lim", &a)?, pid_of(&c, "lim", &b)?];
    edit(&c.envdir.join("lsf.shared"), |t| {
        t.replacen(
            "End Resource",
            "reconfres     Boolean  ()        ()          (Added by reconfig)\nEnd Resource",
            1,
        )
    })?;
    edit(&cluster_file, |t| {
        t.lines()
            .map(|l| {
                if l.starts_with(b.as_str()) && l.ends_with(')') {
                    format!("{} reconfres)", l.trim_end_matches(')'))
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    })?;
    ok_all(&c, "lsadmin", &["reconfig", "-f"])?;
    shows(&c, "lshosts", &[&b], "reconfres")?;
    shows(&c, "lsinfo", &[], "reconfres")?;
    // The LIMs restarted in place: the same processes.
    assert_eq!(lims, [pid_of(&c, "lim", &a)?, pid_of(&c, "lim", &b)?]);
    host_ok(&c, &a)?;
    host_ok(&c, &b)?;
    intact(&c, &r, "lsf.shared, lsf.cluster and lsadmin reconfig")?;

    // lsf.conf: sbatchd's metrics port, in force after badmin hrestart.
    let port = {
        let l = std::net::TcpListener::bind((c.addrs[1], 0))?;
        l.local_addr()?.port()
    };
    edit(&c.envdir.join("lsf.conf"), |t| {
        format!("{t}BASALT_SBD_METRICS_PORT={port}\n")
    })?;
    let sbds = [pid_of(&c, "sbatchd", &a)?, pid_of(&c, "sbatchd", &b)?];
    let out = ok_all(&c, "badmin", &["hrestart", "-f", "all"])?;
    assert!(
        out.contains(&format!("Restart slave batch daemon on <{b}> ...... done")),
        "{out}"
    );
    let metrics = std::net::SocketAddr::new(c.addrs[1], port);
    wait_for(
        "sbatchd of hostB to serve /metrics",
        LONG,
        || match basalt_runtime::metrics::http_get(metrics, "/metrics") {
            Ok((200, body)) => (Some(()), body),
            other => (None, format!("{other:?}")),
        },
    )?;
    assert_eq!(
        sbds,
        [pid_of(&c, "sbatchd", &a)?, pid_of(&c, "sbatchd", &b)?]
    );
    host_ok(&c, &b)?;
    intact(&c, &r, "lsf.conf and badmin hrestart all")?;

    // badmin mbdrestart.
    let out = ok_all(&c, "badmin", &["mbdrestart"])?;
    assert!(out.contains("MBD restart initiated"), "{out}");
    intact(&c, &r, "badmin mbdrestart")?;
    // The replay puts the finished jobs of the deleted queue in lost_and_found again;
    // holding no unfinished job, it is not shown.
    let out = ok_all(&c, "bqueues", &[])?;
    assert!(!out.contains(LOST), "{out}");

    // sbatchd of hostB shut down and started up again through the daemons.
    let out = ok_all(&c, "badmin", &["hshutdown", &b])?;
    assert!(
        out.contains(&format!(
            "Shut down slave batch daemon on <{b}> ...... done"
        )),
        "{out}"
    );
    wait_for("hostB's sbatchd to stop", LONG, || {
        let left = c.pids_of("sbatchd", &b);
        (left.is_empty().then_some(()), format!("{left:?}"))
    })?;
    let out = ok_all(&c, "badmin", &["hstartup", &b])?;
    assert!(
        out.contains(&format!("Start up slave batch daemon on <{b}> ...... done")),
        "{out}"
    );
    host_ok(&c, &b)?;
    intact(&c, &r, "badmin hshutdown and hstartup")?;

    // hostB's LIM shut down, started up again (by its sbatchd), restarted.
    let out = ok_all(&c, "lsadmin", &["limshutdown", &b])?;
    assert!(
        out.contains(&format!("Shutting down LIM on <{b}> ...... done")),
        "{out}"
    );
    wait_for("hostB's LIM to stop", LONG, || {
        let left = c.pids_of("lim", &b);
        (left.is_empty().then_some(()), format!("{left:?}"))
    })?;
    let out = ok_all(&c, "lsadmin", &["limstartup", &b])?;
    assert!(
        out.contains(&format!("Starting up LIM on <{b}> ...... done")),
        "{out}"
    );
    let lim_b = pid_of(&c, "lim", &b)?;
    let out = ok_all(&c, "lsadmin", &["limrestart", &b])?;
    assert!(
        out.contains(&format!("Restart LIM on <{b}> ...... done")),
        "{out}"
    );
    shows(&c, "lsload", &[&b], "ok")?;
    assert_eq!(pid_of(&c, "lim", &b)?, lim_b, "limrestart is in place");
    intact(&c, &r, "lsadmin limshutdown, limstartup and limrestart")?;

    broken_files_keep_the_configuration_in_force(&c, &r, &cluster_file)?;

    // The jobs end as they were always going to.
    write(&r.stop, "stop\n")?;
    for (id, _, _) in &r.jobs {
        wait_state(&c, *id, "DONE", LONG)?;
        assert_eq!(count_events(&c, "JOB_START", *id), 1, "job {id}");
    }
    Ok(())
}

const LOST: &str = "lost_and_found";

const DOOMED: &str =
    "\nBegin Queue\nQUEUE_NAME = doomed\nPRIORITY = 6\nDESCRIPTION = removed later\nEnd Queue\n";

/// Issue 50 item 5: a queue removed from lsb.queues with a job running and a job pending
/// in it, and `badmin reconfig`: both jobs go to `lost_and_found` (the running one goes
/// on, same process, started once), which bqueues shows closed and inactive with the
/// two; the pending one waits there (not as a new job) until `bswitch` moves it to a
/// real queue, where it runs. Once the queue holds no job, bqueues no longer shows it.
fn deleted_queue_jobs_go_to_lost_and_found(c: &ProcessCluster, r: &Running) -> Result<()> {
    c.append_batch_file("lsb.queues", DOOMED)?;
    ok_all(c, "badmin", &["reconfig"])?;
    shows(c, "bqueues", &[], "doomed")?;
    let work = c.dir.path().join("w");
    let (pidfile, stop) = (work.join("pid.doomed"), work.join("stop.doomed"));
    let cmd = format!(
        "echo $$ > {}; while [ ! -e {} ]; do sleep 0.2; done",
        pidfile.display(),
        stop.display()
    );
    let running = c.bsub(&work, &["-q", "doomed", "-o", "/dev/null", &cmd])?;
    wait_state(c, running, "RUN", LONG)?;
    let pid = wait_for(&format!("job {running} to write its pid"), LONG, || {
        let p = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok());
        (p, String::new())
    })?;
    ok_all(c, "badmin", &["qinact", "doomed"])?;
    let pending = c.bsub(&work, &["-q", "doomed", "-o", "/dev/null", "true"])?;
    wait_state(c, pending, "PEND", LONG)?;

    edit(&c.batch_dir().join("lsb.queues"), |t| t.replace(DOOMED, ""))?;
    ok_all(c, "badmin", &["reconfig"])?;
    wait_for("both jobs to be in lost_and_found", LONG, || {
        let rows = jobs(c).unwrap_or_default();
        let at = |id: u64| rows.get(&id).map(|r| (r.queue.clone(), r.stat.clone()));
        let ok = at(running) == Some((LOST.into(), "RUN".into()))
            && at(pending) == Some((LOST.into(), "PEND".into()));
        (ok.then_some(()), format!("{rows:?}"))
    })?;
    assert!(alive(pid), "job {running}'s process {pid} is gone");
    assert_eq!(count_events(c, "JOB_START", running), 1);
    let out = ok_all(c, "bqueues", &[])?;
    let row: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with(LOST))
        .with_context(|| format!("bqueues does not show {LOST}:\n{out}"))?
        .split_whitespace()
        .collect();
    assert_eq!(row.get(2), Some(&"Closed:Inact"), "{out}");
    assert_eq!(
        row[row.len() - 4..],
        ["2", "1", "1", "0"],
        "NJOBS PEND RUN SUSP: {out}"
    );
    let why = ok_all(c, "bjobs", &["-p", &pending.to_string()])?;
    assert!(!why.contains("New job is waiting for scheduling"), "{why}");
    let out = output_text(&c.run("bswitch", &[LOST, &pending.to_string()])?);
    assert!(out.contains("Queue has been closed"), "{out}");

    let out = ok_all(c, "bswitch", &["normal", &pending.to_string()])?;
    assert!(out.contains(&format!("<{pending}>")), "{out}");
    let row = wait_state(c, pending, "DONE", LONG)?;
    assert_eq!(row.queue, "normal");
    write(&stop, "stop\n")?;
    wait_state(c, running, "DONE", LONG)?;
    wait_for("bqueues to stop showing lost_and_found", LONG, || {
        let out = c
            .run("bqueues", &[])
            .map(|o| output_text(&o))
            .unwrap_or_default();
        (
            (!out.contains(LOST) && out.contains("normal")).then_some(()),
            out,
        )
    })?;
    intact(c, r, "a deleted queue and badmin reconfig")
}

/// A broken lsb.queues and a broken lsf.cluster: the commands refuse them with file and
/// line, the daemons asked directly refuse them too and go on (same pids), and what is
/// in force stays (the queue added before is still there; hostB keeps its resource).
fn broken_files_keep_the_configuration_in_force(
    c: &ProcessCluster,
    r: &Running,
    cluster_file: &Path,
) -> Result<()> {
    let (a, b) = (c.hosts[0].clone(), c.hosts[1].clone());
    let config = basalt_config::load(&c.envdir)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .config;
    let auth = basalt_runtime::user_auth(&config);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let ask = |host: &str, daemon: Daemon, op: ControlOp| {
        rt.block_on(basalt_runtime::control::request(
            &config, host, daemon, op, &auth,
        ))
    };

    // lsb.queues with an error on a known line.
    let queues = c.batch_dir().join("lsb.queues");
    let good = std::fs::read_to_string(&queues)?;
    edit(&queues, |t| {
        t.replacen("PRIORITY = 5", "PRIORITY = five", 1)
    })?;
    let line = std::fs::read_to_string(&queues)?
        .lines()
        .position(|l| l.contains("PRIORITY = five"))
        .map(|i| i + 1)
        .context("the broken line")?;
    let located = format!("lsb.queues:{line}:");
    let o = c.run("badmin", &["reconfig"])?;
    let text = output_text(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains(&located) && text.contains("There are fatal errors."),
        "{text}"
    );
    // The daemons' own checks: sbatchd's restart and reconfiguration are refused.
    let sbd = pid_of(c, "sbatchd", &b)?;
    for op in [ControlOp::Restart, ControlOp::Reconfig] {
        let why = ask(&b, Daemon::Sbatchd, op)
            .err()
            .context("a broken file accepted")?;
        assert!(why.contains(&located), "{op:?}: {why}");
    }
    let o = c.run("badmin", &["hrestart", &b])?;
    let text = output_text(&o);
    assert!(
        !o.status.success() && text.contains("failed") && text.contains(&located),
        "{text}"
    );
    assert_eq!(pid_of(c, "sbatchd", &b)?, sbd, "sbatchd goes on");
    shows(c, "bqueues", &[], "added")?;
    write(&queues, &good)?;

    // lsf.cluster with a host line that does not parse.
    let good = std::fs::read_to_string(cluster_file)?;
    edit(cluster_file, |t| {
        t.replacen(
            "End Host",
            "brokenhost  generic  linux  notanumber  ()  ()\nEnd Host",
            1,
        )
    })?;
    let line = std::fs::read_to_string(cluster_file)?
        .lines()
        .position(|l| l.starts_with("brokenhost"))
        .map(|i| i + 1)
        .context("the broken line")?;
    let located = format!("lsf.cluster.{}:{line}:", c.cluster);
    let lims = [pid_of(c, "lim", &a)?, pid_of(c, "lim", &b)?];
    let o = c.run("lsadmin", &["reconfig", "-f"])?;
    let text = output_text(&o);
    assert!(!o.status.success() && text.contains(&located), "{text}");
    let why = ask(&a, Daemon::Lim, ControlOp::Restart)
        .err()
        .context("a broken lsf.cluster accepted by the LIM")?;
    assert!(why.contains(&located), "{why}");
    assert_eq!(lims, [pid_of(c, "lim", &a)?, pid_of(c, "lim", &b)?]);
    // (lshosts reads the broken file itself: the master LIM is asked directly.)
    let resources = rt.block_on(async {
        let mut lim = basalt_runtime::lim_channel(&config, &a, Duration::from_secs(5), &auth)?;
        let reply = lim
            .hosts(basalt_proto::lim::HostsRequest {
                hosts: vec![b.clone()],
                ..Default::default()
            })
            .await?
            .into_inner();
        anyhow::Ok(
            reply
                .hosts
                .into_iter()
                .filter_map(|h| h.info)
                .flat_map(|i| i.resources)
                .collect::<Vec<_>>(),
        )
    })?;
    assert!(
        resources.iter().any(|r| r == "reconfres"),
        "hostB's resources in the LIM in force: {resources:?}"
    );
    write(cluster_file, &good)?;
    shows(c, "lshosts", &[&b], "reconfres")?;
    intact(c, r, "the broken files")
}
