//! MultiCluster job forwarding between Basalt clusters of real processes (issue 25, seed
//! 004 "Job scheduling under the job forwarding model"): `west` sends jobs to `east`'s
//! receive-jobs queues; `north` holds a key of its own, so west does not trust it.
//! One set of clusters for the whole scenario, step by step:
//!
//! 1. the links come up (bclusters: ok; north: reject, "not trusted");
//! 2. Phase I: the send queue's limits decide acceptance; a job that fits a local host
//!    runs locally;
//! 3. Phase II/III: with west's host closed, a job is forwarded (JOB_FORWARD in west,
//!    JOB_ACCEPT in east, a new id there), runs in east, and bjobs in west shows it
//!    running on `hostA@east`; bstop / bresume / bkill in west act on the process in
//!    east; a job's end and accounting flow back (lsb.acct in west);
//! 4. Phase III: east's receive queue refuses a job over its memory limit: it returns;
//! 5. a job that cannot start in east within MAX_RSCHED_TIME returns, is forwarded
//!    again, and after LSB_MC_INITFAIL_RETRY returns is PSUSP in west;
//! 6. MC_PLUGIN_REMOTE_RESOURCE: a job whose `type==` no remote host has stays here;
//! 7. faults: east's mbatchd killed (-9) while a forwarded job runs: west keeps the job,
//!    the job finishes once east is back, started once only.

use anyhow::{Context, Result, bail};
use basalt_testkit::jobs::work_dir;
use basalt_testkit::multicluster::McMember;
use basalt_testkit::procs::{wait_group, wait_pgid_file};
use basalt_testkit::{ProcessCluster, event_fields, wait_for};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

const WEST_QUEUES: &str = "
Begin Queue
QUEUE_NAME = send
PRIORITY = 30
SNDJOBS_TO = recv@east
End Queue

Begin Queue
QUEUE_NAME = send2
PRIORITY = 30
SNDJOBS_TO = slow@east
End Queue

Begin Queue
QUEUE_NAME = small
PRIORITY = 30
MEMLIMIT = 51200
SNDJOBS_TO = recv@east
End Queue
";

const EAST_QUEUES: &str = "
Begin Queue
QUEUE_NAME = recv
PRIORITY = 30
RCVJOBS_FROM = west
IMPT_JOBBKLG = 10
MEMLIMIT = 51200
HOSTS = hostA
End Queue

Begin Queue
QUEUE_NAME = slow
PRIORITY = 30
RCVJOBS_FROM = west
HOSTS = hostB
End Queue
";

fn events(c: &ProcessCluster) -> PathBuf {
    c.dir
        .path()
        .join(format!("work/{}/logdir/lsb.events", c.cluster))
}

fn acct(c: &ProcessCluster) -> PathBuf {
    c.dir
        .path()
        .join(format!("work/{}/logdir/lsb.acct", c.cluster))
}

/// The records of `kind` in a log file, as fields.
fn records(path: &Path, kind: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(event_fields)
        .filter(|f| f.first().map(String::as_str) == Some(kind))
        .collect()
}

/// Records of `kind` for job `id` (its id is the fourth field).
fn job_records(path: &Path, kind: &str, id: u64) -> Vec<Vec<String>> {
    records(path, kind)
        .into_iter()
        .filter(|f| f.get(3).and_then(|v| v.parse::<u64>().ok()) == Some(id))
        .collect()
}

/// JOB_STATUS (status, reasons, subreasons) of job `id`.
fn statuses(c: &ProcessCluster, id: u64) -> Vec<(u32, u32, u32)> {
    basalt_testkit::procs::job_statuses(&events(c), id)
}

/// bjobs `-o` of one job: (stat, exec_host).
fn row(c: &ProcessCluster, id: u64) -> Option<(String, String)> {
    let out = c.stdout_ok(
        "bjobs",
        &["-noheader", "-o", "stat exec_host", &id.to_string()],
    )?;
    let mut w = out.split_whitespace();
    Some((w.next()?.to_owned(), w.next().unwrap_or("-").to_owned()))
}

fn wait_stat(c: &ProcessCluster, id: u64, stat: &str) -> Result<(String, String)> {
    wait_for(
        &format!("job {id} to be {stat} in cluster {}", c.cluster),
        LONG,
        || {
            let r = row(c, id);
            (
                r.as_ref()
                    .is_some_and(|(s, _)| s == stat)
                    .then(|| r.clone())
                    .flatten(),
                format!("{r:?}"),
            )
        },
    )
}

fn bsub(c: &ProcessCluster, work: &Path, args: &[&str]) -> Result<u64> {
    c.bsub(work, args)
}

#[test]
fn jobs_are_forwarded_between_clusters_as_the_seed_says() -> Result<()> {
    let west = McMember::new("west", 1)
        .queues(WEST_QUEUES)
        .params("MBD_SLEEP_TIME = 1\nBASALT_SBD_HELLO_INTERVAL = 1");
    let mut west = west;
    west.spec
        .lsf_conf_extra
        .push_str("LSB_MC_INITFAIL_RETRY = 2\nMC_PLUGIN_REMOTE_RESOURCE = Y\n");
    let east = McMember::new("east", 2)
        .queues(EAST_QUEUES)
        .params("MBD_SLEEP_TIME = 1\nMAX_RSCHED_TIME = 3\nBASALT_SBD_HELLO_INTERVAL = 1");
    let north = McMember::new("north", 1).own_key(7);
    let cs = ProcessCluster::start_multicluster("mc", &[west, east, north])?;
    let (w, e) = (&cs[0], &cs[1]);
    let work = work_dir(w.dir.path())?;

    // 1. The links: east ok, north refused for its key.
    let links = wait_for("bclusters in west to show both links", LONG, || {
        let out = w.stdout_ok("bclusters", &["-l"]).unwrap_or_default();
        let ok = out.lines().any(|l| {
            l.split_whitespace().collect::<Vec<_>>() == ["send", "send", "recv", "east", "ok"]
        }) && out
            .lines()
            .any(|l| l.starts_with("north") && l.contains("reject"));
        (ok.then(|| out.clone()), out)
    })?;
    assert!(links.contains("not trusted"), "{links}");
    assert!(
        links
            .lines()
            .any(|l| l.split_whitespace().take(7).collect::<Vec<_>>()
                == ["send", "recv", "east", "30", "10", "0", "10"]),
        "the remote queue's capacity: {links}"
    );
    // East's own link to west comes up on its own schedule.
    wait_for("bclusters in east to show west's link", LONG, || {
        let recv = e.stdout_ok("bclusters", &[]).unwrap_or_default();
        let ok = recv.lines().any(|l| {
            l.split_whitespace().collect::<Vec<_>>() == ["recv", "recv", "-", "west", "ok"]
        });
        (ok.then_some(()), recv)
    })?;

    // 2. Phase I: the send queue's limits decide; a job that fits here runs here.
    let out = w
        .command("bsub")
        .current_dir(&work)
        .args(["-q", "small", "-M", "102400", "sleep", "1"])
        .output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success() && text.contains("Cannot exceed queue's hard limit(s)"),
        "{text}"
    );
    let local = bsub(w, &work, &["-q", "send", "-o", "/dev/null", "sleep", "1"])?;
    let (_, host) = wait_stat(w, local, "DONE")?;
    assert_eq!(host, "hostA");
    assert!(job_records(&events(w), "JOB_FORWARD", local).is_empty());

    // 3. West's host closed: the next job is forwarded and runs in east.
    w.ok("badmin", &["hclose", "hostA"])?;
    e.ok("badmin", &["hclose", "hostB"])?;
    let cmd = "echo $$ > fwd.pgid; sleep 600";
    let fwd = bsub(
        w,
        &work,
        &["-q", "send", "-o", "/dev/null", "-J", "fwd", cmd],
    )?;
    let (_, host) = wait_stat(w, fwd, "RUN")?;
    assert_eq!(host, "hostA@east");
    let f = job_records(&events(w), "JOB_FORWARD", fwd);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].get(5).map(String::as_str), Some("east"));
    let accepted = records(&events(e), "JOB_ACCEPT");
    let a = accepted
        .iter()
        .find(|f| f.get(4).and_then(|v| v.parse::<u64>().ok()) == Some(fwd))
        .context("JOB_ACCEPT in east")?;
    assert_eq!(a.get(5).map(String::as_str), Some("west"));
    let remote: u64 = a.get(3).and_then(|v| v.parse().ok()).context("remote id")?;
    let long = w.ok("bjobs", &["-l", &fwd.to_string()])?;
    assert!(
        long.replace("\n                     ", "")
            .contains(&format!(
                "Forwarded job to cluster <east>, queue <recv>, remote job ID <{remote}>"
            )),
        "{long}"
    );
    let there = e.ok(
        "bjobs",
        &[
            "-u",
            "all",
            "-noheader",
            "-o",
            "id from_host",
            &remote.to_string(),
        ],
    )?;
    assert!(there.contains("@west"), "{there}");
    // bstop / bresume / bkill in west act on the process in east.
    let pgid = wait_pgid_file(&work.join("fwd.pgid"), LONG)?;
    w.ok("bstop", &[&fwd.to_string()])?;
    wait_group(pgid, true, LONG)?;
    wait_stat(w, fwd, "USUSP")?;
    w.ok("bresume", &[&fwd.to_string()])?;
    wait_group(pgid, false, LONG)?;
    wait_stat(w, fwd, "RUN")?;
    w.ok("bkill", &[&fwd.to_string()])?;
    wait_stat(w, fwd, "EXIT")?;
    wait_for("the forwarded job's processes to end", LONG, || {
        let gone = basalt_testkit::procs::group_states(pgid).is_empty();
        (gone.then_some(()), format!("pgid {pgid}"))
    })?;
    // A job's end and accounting flow back.
    let done = bsub(w, &work, &["-q", "send", "-o", "/dev/null", "sleep", "1"])?;
    wait_stat(w, done, "DONE")?;
    wait_for("west's lsb.acct to have the forwarded job", LONG, || {
        let n = job_records(&acct(w), "JOB_FINISH", done).len();
        ((n == 1).then_some(()), format!("{n} records"))
    })?;

    // 4. Phase III: east's receive queue refuses a job over its memory limit.
    let big = bsub(
        w,
        &work,
        &[
            "-q",
            "send",
            "-M",
            "102400",
            "-o",
            "/dev/null",
            "sleep",
            "1",
        ],
    )?;
    wait_for("the refused job to come back", LONG, || {
        let s = statuses(w, big);
        (s.contains(&(1, 91, 1)).then_some(()), format!("{s:?}"))
    })?;
    w.ok("bkill", &[&big.to_string()])?;

    // 5. Not started within MAX_RSCHED_TIME (east's `slow` queue's only host is closed):
    //    it comes back, goes again, and after LSB_MC_INITFAIL_RETRY = 2 is PSUSP.
    let slow = bsub(w, &work, &["-q", "send2", "-o", "/dev/null", "sleep", "1"])?;
    wait_stat(w, slow, "PSUSP")?;
    let s = statuses(w, slow);
    assert_eq!(s.iter().filter(|x| **x == (1, 91, 2)).count(), 2, "{s:?}");
    assert_eq!(job_records(&events(w), "JOB_FORWARD", slow).len(), 2);
    let here = w.ok("bjobs", &["-l", &slow.to_string()])?;
    assert!(here.contains("returned <2> time(s)"), "{here}");

    // 6. MC_PLUGIN_REMOTE_RESOURCE: no host of east has type NOSUCH: not forwarded; the
    //    job after it is.
    let nosuch = bsub(
        w,
        &work,
        &[
            "-q",
            "send",
            "-R",
            "type==NOSUCH",
            "-o",
            "/dev/null",
            "sleep",
            "1",
        ],
    )?;
    let after = bsub(w, &work, &["-q", "send", "-o", "/dev/null", "sleep", "1"])?;
    wait_stat(w, after, "DONE")?;
    assert!(job_records(&events(w), "JOB_FORWARD", nosuch).is_empty());
    assert_eq!(row(w, nosuch).map(|r| r.0), Some("PEND".into()));
    w.ok("bkill", &[&nosuch.to_string()])?;

    // 7. East's mbatchd hangs and then dies (kill -9) while a forwarded job runs there:
    //    west sees the link down while it hangs and keeps the job; it ends once east's
    //    mbatchd is back (its sbatchd restarts a killed mbatchd that had served at once,
    //    too soon for west to notice an outage), started once only.
    let cmd = "echo $$ > late.pgid; sleep 6";
    let late = bsub(w, &work, &["-q", "send", "-o", "/dev/null", cmd])?;
    wait_stat(w, late, "RUN")?;
    wait_pgid_file(&work.join("late.pgid"), LONG)?;
    assert_eq!(
        e.signal_pids_of("mbatchd", "hostA", nix::sys::signal::Signal::SIGSTOP),
        1
    );
    wait_for("west to see east's link down", LONG, || {
        let out = w.stdout_ok("bclusters", &[]).unwrap_or_default();
        let down = out
            .lines()
            .any(|l| l.starts_with("send ") && l.contains("recv") && !l.ends_with(" ok"));
        (down.then_some(()), out)
    })?;
    assert_eq!(row(w, late).map(|r| r.0), Some("RUN".into()));
    assert_eq!(e.kill9_pids_of("mbatchd", "hostA"), 1);
    wait_stat(w, late, "DONE")?;
    assert_eq!(job_records(&events(w), "JOB_START", late).len(), 1);
    let accepts = records(&events(&cs[1]), "JOB_ACCEPT")
        .into_iter()
        .filter(|f| f.get(4).and_then(|v| v.parse::<u64>().ok()) == Some(late))
        .count();
    if accepts != 1 {
        bail!("job {late} accepted {accepts} times in east");
    }
    Ok(())
}

const SPREAD_WEST: &str = "
Begin Queue
QUEUE_NAME = spread
PRIORITY = 30
SNDJOBS_TO = ra@east rb@east
End Queue
";

const SPREAD_EAST: &str = "
Begin Queue
QUEUE_NAME = ra
PRIORITY = 30
RCVJOBS_FROM = west
IMPT_JOBBKLG = 5
HOSTS = hostA
End Queue

Begin Queue
QUEUE_NAME = rb
PRIORITY = 30
RCVJOBS_FROM = west
IMPT_JOBBKLG = 5
HOSTS = hostB
End Queue
";

/// Issue 50 item 4, seed 004 Phase II 2.1: "the first queue evaluated is the one that
/// has room to accept the most new MultiCluster jobs" (room: IMPT_JOBBKLG less the
/// MultiCluster jobs pending there). West is full (its host closed); east's two receive
/// queues have the same room, and east's hosts are closed, so what is forwarded waits
/// there. Four jobs submitted one after the other are forwarded as they come (a pass
/// after each bsub, faster than east's reports): each counts against the room of the
/// queue it went to at once, so they go ra, rb, ra, rb — not all to ra. Once east opens
/// its hosts all four run there and end, forwarded once each.
#[test]
fn jobs_just_forwarded_count_against_the_room_of_their_queue() -> Result<()> {
    let timings = "MBD_SLEEP_TIME = 1\nBASALT_SBD_HELLO_INTERVAL = 1";
    let west = McMember::new("west", 1).queues(SPREAD_WEST).params(timings);
    let east = McMember::new("east", 2).queues(SPREAD_EAST).params(timings);
    let cs = ProcessCluster::start_multicluster("mcroom", &[west, east])?;
    let (w, e) = (&cs[0], &cs[1]);
    let work = work_dir(w.dir.path())?;
    w.ok("badmin", &["hclose", "hostA"])?;
    e.ok("badmin", &["hclose", "hostA", "hostB"])?;
    wait_for("bclusters in west to show both queues' room", LONG, || {
        let out = w.stdout_ok("bclusters", &["-l"]).unwrap_or_default();
        let room = |q: &str| {
            out.lines().any(|l| {
                l.split_whitespace().take(7).collect::<Vec<_>>()
                    == ["spread", q, "east", "30", "5", "0", "5"]
            })
        };
        ((room("ra") && room("rb")).then_some(()), out)
    })?;

    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(bsub(
            w,
            &work,
            &["-q", "spread", "-o", "/dev/null", "sleep", "1"],
        )?);
    }
    let queues = wait_for("the four jobs to be forwarded", LONG, || {
        let fwd: Vec<Option<String>> = ids
            .iter()
            .map(|id| {
                job_records(&events(w), "JOB_FORWARD", *id)
                    .first()
                    .and_then(|f| f.get(8).cloned())
            })
            .collect();
        let all: Option<Vec<String>> = fwd.iter().cloned().collect();
        (all, format!("{fwd:?}"))
    })?;
    assert_eq!(queues, ["ra", "rb", "ra", "rb"], "jobs {ids:?}");

    e.ok("badmin", &["hopen", "hostA", "hostB"])?;
    for id in &ids {
        wait_stat(w, *id, "DONE")?;
        assert_eq!(
            job_records(&events(w), "JOB_FORWARD", *id).len(),
            1,
            "job {id}"
        );
    }
    Ok(())
}
