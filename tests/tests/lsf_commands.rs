//! Issue 50 ("Moving an LSF site to Basalt: what behaves differently from LSF"), items 6,
//! 10 and 13, on one 3-host cluster of real processes (lim, res, sbatchd, mbatchd) used
//! the way an LSF site's users and administrators use theirs:
//!
//! * item 6 — every command binary, run with its largest output into a closed pipe (and
//!   with its standard error closed too), ends quietly: no panic, no exit 101, death by
//!   SIGPIPE as LSF's commands;
//! * item 10 — `bqueues -r` (the recursive share tree), `bhosts`/`bqueues` `-o` and
//!   `-json`, `badmin showstatus`, `lsadmin limlock`/`limunlock` (lsload `lockU`, bhosts
//!   `closed_Lock`, no dispatch there), `lsadmin resshutdown`/`resstartup`/`resrestart`
//!   (and the other `res*` subcommands refused by name), an ELIM's index in `bhosts -l`;
//! * item 13 — `bresume` of a running job says `Job has not been suspended` and exits
//!   non-zero; bhist shows a spooled script's command with its lines kept apart.
//!
//! The checks run one after the other on the one cluster; each is a function named after
//! its item, and every failure is reported (not only the first).

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::{ClusterSpec, ProcessCluster, wait_child, wait_for, work_dir};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);
const PARAMS: &str =
    "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 1\nSBD_SLEEP_TIME = 1";

/// The cluster and the jobs the checks look at.
struct Site {
    c: ProcessCluster,
    work: PathBuf,
    /// A job running `sleep` on some host.
    running: u64,
    /// A job that ran a spooled script of several lines and is DONE.
    script: u64,
}

fn stat(c: &ProcessCluster, id: u64) -> String {
    c.stdout_ok("bjobs", &["-o", "stat", "-noheader", &id.to_string()])
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

fn wait_stat(c: &ProcessCluster, id: u64, want: &str) -> Result<()> {
    wait_for(&format!("job {id} to be {want}"), LONG, || {
        let s = stat(c, id);
        ((s == want).then_some(()), s)
    })
}

/// An ELIM reporting the external index `scratch` on every host.
const ELIM: &str = "#!/bin/sh\nwhile :; do echo \"1 scratch 100\"; sleep 0.2; done\n";

/// A shell script of several lines, submitted on standard input (spooled).
const SCRIPT: &str = "#!/bin/sh\nn=0\nif [ $n -eq 0 ]; then\n  echo zero\nfi\n";

fn start() -> Result<Site> {
    let spec = ClusterSpec::new(3)
        .numeric_resource("scratch", false)
        .elim("elim.scratch", ELIM);
    let mut c = ProcessCluster::start_batch("lsf-commands", &spec, PARAMS)?;
    for h in c.hosts.clone() {
        c.start_daemon("res", &h)?;
    }
    let work = work_dir(c.dir.path())?;
    // A fairshare queue whose group has a share tree of its own (bqueues -r).
    let user =
        String::from_utf8_lossy(&std::process::Command::new("id").arg("-un").output()?.stdout)
            .trim()
            .to_owned();
    c.append_batch_file(
        "lsb.queues",
        "\nBegin Queue\nQUEUE_NAME = fair\nPRIORITY = 5\n\
         FAIRSHARE = USER_SHARES[[grp, 2] [default, 1]]\nEnd Queue\n",
    )?;
    std::fs::write(
        c.batch_dir().join("lsb.users"),
        format!(
            "\nBegin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\n\
             grp ({user}) ([{user}, 3] [default, 1])\nEnd UserGroup\n"
        ),
    )?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("bqueues to list the fair queue", LONG, || {
        let out = c.stdout_ok("bqueues", &["fair"]).unwrap_or_default();
        (out.contains("fair").then_some(()), out)
    })?;
    let running = c.bsub(&work, &["-m", "hostA", "-o", "/dev/null", "sleep", "600"])?;
    let mut bsub = c
        .command("bsub")
        .args(["-o", "/dev/null"])
        .current_dir(&work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("bsub < script")?;
    {
        use std::io::Write as _;
        let mut stdin = bsub.stdin.take().ok_or_else(|| anyhow!("no stdin"))?;
        stdin.write_all(SCRIPT.as_bytes())?;
    }
    let o = bsub.wait_with_output()?;
    let out = String::from_utf8_lossy(&o.stdout);
    let script = basalt_testkit::jobs::job_id(&out).ok_or_else(|| {
        anyhow!(
            "bsub < script: {out} {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })?;
    wait_stat(&c, running, "RUN")?;
    wait_stat(&c, script, "DONE")?;
    Ok(Site {
        c,
        work,
        running,
        script,
    })
}

/// One item's check on the shared cluster.
type Check = fn(&Site) -> Result<()>;

#[test]
fn issue50_items_6_10_13_on_one_cluster() -> Result<()> {
    let s = start()?;
    let checks: [(&str, Check); 9] = [
        (
            "item 6: every command ends quietly on a closed pipe",
            item6_every_command_ends_quietly_on_a_closed_pipe,
        ),
        (
            "item 13: bresume of a running job says it is not suspended",
            item13_bresume_of_a_running_job_says_it_has_not_been_suspended,
        ),
        (
            "item 13: bhist keeps a spooled script's lines apart",
            item13_bhist_keeps_a_spooled_scripts_lines_apart,
        ),
        (
            "item 10: bqueues -r shows the whole share tree",
            item10_bqueues_r_shows_the_whole_share_tree,
        ),
        (
            "item 10: bhosts and bqueues print -o columns and -json",
            item10_bhosts_and_bqueues_print_o_columns_and_json,
        ),
        (
            "item 10: badmin showstatus sums the cluster up",
            item10_badmin_showstatus_sums_the_cluster_up,
        ),
        (
            "item 10: bhosts -l shows an ELIM's index",
            item10_bhosts_l_shows_an_elims_index,
        ),
        (
            "item 10: lsadmin limlock locks a host's LIM",
            item10_lsadmin_limlock_locks_a_hosts_lim,
        ),
        (
            "item 10: lsadmin res* control RES",
            item10_lsadmin_res_subcommands_control_res,
        ),
    ];
    let mut failed = Vec::new();
    for (name, check) in checks {
        if let Err(e) = check(&s) {
            failed.push(format!("{name}: {e:#}"));
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} check(s) failed:\n\n{}",
            failed.len(),
            failed.join("\n\n")
        );
    }
    Ok(())
}

// ------------------------------------------------------------------ item 6

/// The writing end of a pipe whose reading end is closed.
fn closed_pipe() -> Result<std::os::fd::OwnedFd> {
    let (r, w) = nix::unistd::pipe()?;
    drop(r);
    Ok(w)
}

/// Run `cmd args` with standard output into a closed pipe and standard error into a
/// file (or a closed pipe too): its exit status and what it wrote on standard error.
fn into_closed_pipe(
    s: &Site,
    cmd: &str,
    args: &[String],
    close_stderr: bool,
) -> Result<(ExitStatus, String)> {
    let err_file = s.c.dir.path().join(format!("{cmd}.stderr"));
    let stderr = if close_stderr {
        Stdio::from(closed_pipe()?)
    } else {
        Stdio::from(std::fs::File::create(&err_file)?)
    };
    let mut child =
        s.c.command(cmd)
            .args(args)
            .current_dir(&s.work)
            .stdin(Stdio::null())
            .stdout(Stdio::from(closed_pipe()?))
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("starting {cmd}"))?;
    let status = wait_child(&mut child, LONG)?
        .ok_or_else(|| anyhow!("{cmd} {args:?} did not end within {LONG:?}"))?;
    let text = if close_stderr {
        String::new()
    } else {
        std::fs::read_to_string(&err_file).unwrap_or_default()
    };
    Ok((status, text))
}

/// Each command binary with arguments that give it its largest output here (`{run}`: the
/// running job, `{done}`: the finished one).
const COMMANDS: &[(&str, &[&str])] = &[
    ("badmin", &["showconf", "mbd"]),
    ("bapp", &["-l"]),
    ("bbot", &["999999"]),
    ("bchkpnt", &["999999"]),
    ("bclusters", &[]),
    ("bhosts", &["-l"]),
    ("bhpart", &["-r"]),
    ("bjobs", &["-u", "all", "-a", "-l"]),
    ("bjobs", &["-u", "all", "-a", "-json"]),
    ("bjobs", &["-u", "all", "-a"]),
    ("bkill", &["999999"]),
    ("blaunch", &["hostA", "true"]),
    ("blimits", &[]),
    ("bmgroup", &[]),
    ("bmig", &["999999"]),
    ("bmod", &["-J", "renamed", "{done}"]),
    ("bparams", &["-a"]),
    ("bpeek", &["{run}"]),
    ("bqueues", &["-l"]),
    ("brequeue", &["999999"]),
    ("bresources", &[]),
    ("brestart", &["/nonexistent", "999999"]),
    ("bresume", &["{run}"]),
    ("brun", &["-m", "hostA", "999999"]),
    ("bslots", &[]),
    ("bstop", &["999999"]),
    ("bsub", &["-o", "/dev/null", "true"]),
    ("bswitch", &["normal", "999999"]),
    ("btop", &["999999"]),
    ("bugroup", &[]),
    ("busers", &["all"]),
    ("lsadmin", &["showconf", "lim"]),
    ("lsclusters", &["-l"]),
    ("lsgrun", &["-m", "hostA hostB", "seq", "1", "20000"]),
    ("lshosts", &["-l"]),
    ("lsid", &[]),
    ("lsinfo", &["-l"]),
    ("lsload", &["-l"]),
    ("lsplace", &["-n", "3"]),
    ("lsrcp", &["/nonexistent/file", "hostB:/tmp/x"]),
    ("lsrun", &["-m", "hostB", "seq", "1", "200000"]),
    ("bacct", &["-l", "-u", "all"]),
    ("bevents", &["json"]),
    ("bhist", &["-a", "-l", "-u", "all"]),
];

/// The command binaries of the workspace (`src/bin/*.rs` of basalt-cli and
/// basalt-hist).
fn command_binaries() -> Result<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut names = Vec::new();
    for dir in ["crates/basalt-cli/src/bin", "crates/basalt-hist/src/bin"] {
        for e in std::fs::read_dir(root.join(dir)).with_context(|| dir.to_owned())? {
            let p = e?.path();
            if p.extension().is_some_and(|x| x == "rs")
                && let Some(stem) = p.file_stem()
            {
                names.push(stem.to_string_lossy().into_owned());
            }
        }
    }
    names.sort();
    Ok(names)
}

/// Item 6: `bjobs -u all | head -1`, `bjobs -json | head`, `bhist -l | head`, `bacct -l
/// | head` printed a Rust panic and exited 101. Every command binary (the table must
/// name each one) runs with its output into a closed pipe: with standard error kept, it
/// writes no panic and does not exit 101, and a death by signal is by SIGPIPE; with
/// standard error closed too, whatever it writes ends it by SIGPIPE, as LSF's do.
fn item6_every_command_ends_quietly_on_a_closed_pipe(s: &Site) -> Result<()> {
    let mut missing: Vec<String> = command_binaries()?
        .into_iter()
        .filter(|b| !COMMANDS.iter().any(|(c, _)| c == b))
        .collect();
    missing.dedup();
    if !missing.is_empty() {
        bail!("commands missing from the table of item 6: {missing:?}");
    }
    let mut bad = Vec::new();
    for (cmd, args) in COMMANDS {
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                a.replace("{run}", &s.running.to_string())
                    .replace("{done}", &s.script.to_string())
            })
            .collect();
        let (status, stderr) = into_closed_pipe(s, cmd, &args, false)?;
        if stderr.contains("panicked")
            || status.code() == Some(101)
            || status.signal().is_some_and(|sig| sig != nix::libc::SIGPIPE)
        {
            bad.push(format!(
                "{cmd} {args:?} | (closed): {status}, stderr: {stderr}"
            ));
        }
        let (status, _) = into_closed_pipe(s, cmd, &args, true)?;
        if status.signal() != Some(nix::libc::SIGPIPE) {
            bad.push(format!(
                "{cmd} {args:?} |& (closed): {status}, not ended by SIGPIPE"
            ));
        }
    }
    if !bad.is_empty() {
        bail!(
            "{} run(s) did not end quietly:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }
    Ok(())
}

// ------------------------------------------------------------------ item 13

/// Item 13: `bresume` of a running job said `Job <N> is being resumed` and exited 0; LSF
/// says `Job <N>: Job has not been suspended` on stderr and exits non-zero.
fn item13_bresume_of_a_running_job_says_it_has_not_been_suspended(s: &Site) -> Result<()> {
    wait_stat(&s.c, s.running, "RUN")?;
    let id = s.running.to_string();
    let o = s.c.run("bresume", &[&id])?;
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    if o.status.success()
        || !out.is_empty()
        || err != format!("Job <{id}>: Job has not been suspended\n")
    {
        bail!(
            "bresume {id} (RUN): {}, stdout {out:?}, stderr {err:?}",
            o.status
        );
    }
    Ok(())
}

/// Item 13: bhist's `Command(Spooled)` of a script glued its lines together
/// (`#!/bin/shn=0if …`, the event log keeps no line breaks); LSF shows them joined by
/// `;`, as bjobs does.
fn item13_bhist_keeps_a_spooled_scripts_lines_apart(s: &Site) -> Result<()> {
    let id = s.script.to_string();
    let want = "Command(Spooled) <#!/bin/sh;n=0;if [ $n -eq 0 ]; then;  echo zero;fi>";
    let bjobs = s.c.ok("bjobs", &["-l", &id])?;
    let bhist = s.c.ok("bhist", &["-l", &id])?;
    // Long lines wrap at 79 characters with 21-space continuations.
    let unwrap = |t: &str| t.replace("\n                     ", "");
    let mut bad = Vec::new();
    for (what, text) in [("bjobs -l", &bjobs), ("bhist -l", &bhist)] {
        if !unwrap(text).contains(want) {
            bad.push(format!("{what} {id}:\n{text}"));
        }
    }
    if !bad.is_empty() {
        bail!("no {want:?} in:\n{}", bad.join("\n"));
    }
    Ok(())
}

// ------------------------------------------------------------------ item 10

/// Item 10: `bqueues -r` (LSF: "-l, and recursively the share account tree of a fairshare
/// queue") was an illegal option. `-r` shows a SHARE_INFO_FOR table for the queue's top
/// and for each group with a share tree of its own; `-l` only the top.
fn item10_bqueues_r_shows_the_whole_share_tree(s: &Site) -> Result<()> {
    let r = s.c.ok("bqueues", &["-r", "fair"])?;
    let l = s.c.ok("bqueues", &["-l", "fair"])?;
    let top = "SHARE_INFO_FOR: fair/\n";
    let group = "SHARE_INFO_FOR: fair/grp/\n";
    if !(r.contains(top) && r.contains(group) && r.starts_with(&l[..l.find(top).unwrap_or(0)])) {
        bail!("bqueues -r fair:\n{r}");
    }
    if !l.contains(top) || l.contains(group) {
        bail!("bqueues -l fair shows the top of the tree only:\n{l}");
    }
    Ok(())
}

fn json_of(c: &ProcessCluster, cmd: &str, args: &[&str]) -> Result<serde_json::Value> {
    let out = c.ok(cmd, args)?;
    serde_json::from_str(&out).with_context(|| format!("{cmd} {args:?}: not JSON: {out}"))
}

/// The keys of every record of a `-json` document, and the records.
fn records(v: &serde_json::Value) -> Vec<&serde_json::Map<String, serde_json::Value>> {
    v["RECORDS"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r.as_object()).collect())
        .unwrap_or_default()
}

/// Item 10: `bhosts -json`, `bqueues -json` and their `-o` (LSF 10.1) were refused.
/// `-json` prints `{"COMMAND":"bhosts","HOSTS":n,"RECORDS":[...]}` (bqueues: `QUEUES`)
/// with upper-case field names and string values, the default columns without `-o`;
/// `-o` picks the columns, of the width asked, as bjobs -o does.
fn item10_bhosts_and_bqueues_print_o_columns_and_json(s: &Site) -> Result<()> {
    let c = &s.c;
    let v = json_of(c, "bhosts", &["-json"])?;
    let recs = records(&v);
    let names: Vec<&str> = recs
        .iter()
        .filter_map(|r| r.get("HOST_NAME").and_then(|n| n.as_str()))
        .collect();
    if v["COMMAND"] != "bhosts"
        || v["HOSTS"] != 3
        || names != ["hostA", "hostB", "hostC"]
        || !recs.iter().all(|r| {
            [
                "STATUS", "JL_U", "MAX", "NJOBS", "RUN", "SSUSP", "USUSP", "RSV",
            ]
            .iter()
            .all(|k| r.get(*k).is_some_and(|x| x.is_string()))
        })
    {
        bail!("bhosts -json: {v}");
    }
    let v = json_of(
        c,
        "bhosts",
        &["-o", "host_name status njobs", "-json", "hostA"],
    )?;
    let recs = records(&v);
    let keys: Vec<&String> = recs.first().map(|r| r.keys().collect()).unwrap_or_default();
    let njobs = recs
        .first()
        .and_then(|r| r.get("NJOBS"))
        .and_then(|n| n.as_str())
        .and_then(|n| n.parse::<u32>().ok());
    if v["HOSTS"] != 1 || keys != ["HOST_NAME", "NJOBS", "STATUS"] || njobs.unwrap_or(0) < 1 {
        bail!("bhosts -o \"host_name status njobs\" -json hostA: {v}");
    }
    let text = c.ok("bhosts", &["-o", "host_name:8 max:-5 status", "hostA"])?;
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() != 2 || lines[0] != "HOST_NAM   MAX STATUS" || !lines[1].starts_with("hostA    ")
    {
        bail!("bhosts -o \"host_name:8 max:-5 status\" hostA:\n{text}");
    }
    let v = json_of(c, "bqueues", &["-json"])?;
    let recs = records(&v);
    let normal = recs
        .iter()
        .find(|r| r.get("QUEUE_NAME").is_some_and(|n| n == "normal"));
    if v["COMMAND"] != "bqueues"
        || v["QUEUES"].as_u64() != Some(recs.len() as u64)
        || recs.len() < 2
        || normal.is_none_or(|r| r.get("STATUS").is_none_or(|x| x != "Open:Active"))
    {
        bail!("bqueues -json: {v}");
    }
    let v = json_of(
        c,
        "bqueues",
        &["-o", "queue_name priority run", "-json", "fair"],
    )?;
    let recs = records(&v);
    let keys: Vec<&String> = recs.first().map(|r| r.keys().collect()).unwrap_or_default();
    if v["QUEUES"] != 1 || keys != ["PRIORITY", "QUEUE_NAME", "RUN"] || recs[0]["PRIORITY"] != "5" {
        bail!("bqueues -o \"queue_name priority run\" -json fair: {v}");
    }
    let text = c.ok(
        "bqueues",
        &["-o", "queue_name priority", "-noheader", "fair"],
    )?;
    if text != "fair 5\n" {
        bail!("bqueues -o \"queue_name priority\" -noheader fair: {text:?}");
    }
    Ok(())
}

/// The number after `label` in `badmin showstatus`' text (first match).
fn status_number(text: &str, label: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.split('/').next())
        .and_then(|n| n.parse().ok())
}

/// Item 10: `badmin showstatus` was an invalid subcommand. LSF's summary: hosts
/// (current/peak), servers by state, jobs by state, users, the mbatchd start and pid.
fn item10_badmin_showstatus_sums_the_cluster_up(s: &Site) -> Result<()> {
    let o = s.c.run("badmin", &["showstatus"])?;
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let n = |label: &str| status_number(&text, label);
    let show = || format!("{}\n{}", text, String::from_utf8_lossy(&o.stderr));
    if !o.status.success() || !text.starts_with("LSF runtime mbatchd information\n") {
        bail!("badmin showstatus: {}", show());
    }
    let servers = n("Number of servers:");
    let by_state: Option<u64> = ["Ok:", "Closed:", "Unreachable:", "Unavailable:"]
        .iter()
        .map(|l| n(l))
        .sum();
    let jobs = n("Number of jobs:");
    let jobs_by_state: Option<u64> = ["Running:", "Suspended:", "Pending:", "Finished:"]
        .iter()
        .map(|l| n(l))
        .sum();
    if servers != Some(3)
        || by_state != Some(3)
        || n("Servers:") != Some(3)
        || jobs.is_none()
        || jobs != jobs_by_state
        || n("Running:").unwrap_or(0) < 1
        || n("Finished:").unwrap_or(0) < 1
        || n("Number of active users:") != Some(1)
        || !text.contains("\n    Latest mbatchd start:")
    {
        bail!("badmin showstatus: {}", show());
    }
    let pids = s.c.pids_of("mbatchd", "hostA");
    if let [pid] = pids[..]
        && n("Active mbatchd PID:") != Some(pid as u64)
    {
        bail!("badmin showstatus: mbatchd's pid is {pid}: {}", show());
    }
    Ok(())
}

/// Item 10: `bhosts -l` left out the external load indices (ELIM). It shows their
/// current load (and what jobs reserve) and their loadSched/loadStop thresholds.
fn item10_bhosts_l_shows_an_elims_index(s: &Site) -> Result<()> {
    let out = wait_for("bhosts -l hostB to show the ELIM's scratch", LONG, || {
        let out =
            s.c.stdout_ok("bhosts", &["-l", "hostB"])
                .unwrap_or_default();
        let Some((load, thresholds)) = out.split_once(" LOAD THRESHOLD USED FOR SCHEDULING:")
        else {
            return (None, out);
        };
        let lines: Vec<&str> = load.lines().collect();
        let header = lines
            .iter()
            .position(|l| l.split_whitespace().collect::<Vec<_>>() == ["scratch"]);
        let total = header.and_then(|i| lines.get(i + 1));
        let ok = total
            .is_some_and(|t| t.split_whitespace().collect::<Vec<_>>() == ["Total", "100.0"])
            && thresholds.contains("scratch");
        (ok.then_some(()), out)
    });
    out.map(|_| ())
}

/// `lsadmin` on host `host` (BASALT_HOST: the host the command runs on).
fn lsadmin_on(s: &Site, host: &str, args: &[&str]) -> Result<std::process::Output> {
    s.c.command("lsadmin")
        .env("BASALT_HOST", host)
        .args(args)
        .output()
        .context("running lsadmin")
}

/// lsload's status word of `host`.
fn lsload_status(c: &ProcessCluster, host: &str) -> String {
    c.stdout_ok("lsload", &[host])
        .and_then(|o| {
            o.lines()
                .nth(1)
                .and_then(|l| l.split_whitespace().nth(1))
                .map(str::to_owned)
        })
        .unwrap_or_default()
}

fn wait_lsload(c: &ProcessCluster, host: &str, want: &[&str]) -> Result<()> {
    wait_for(&format!("lsload to show {host} {want:?}"), LONG, || {
        let st = lsload_status(c, host);
        (want.contains(&st.as_str()).then_some(()), st)
    })
}

/// Item 10: `lsadmin limlock`/`limunlock` were refused. `limlock` locks the LIM of the
/// host it runs on (`Host is locked`): lsload shows `lockU`, bhosts `closed_Lock`, the
/// job running there is suspended, and no job is dispatched there (`Host is locked`)
/// until `limunlock`; `-l seconds` locks for that long; a second lock, or an unlock of
/// an unlocked host, is refused.
fn item10_lsadmin_limlock_locks_a_hosts_lim(s: &Site) -> Result<()> {
    let c = &s.c;
    let out = |o: &std::process::Output| {
        format!(
            "{}: {}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let there = c.bsub(&s.work, &["-m", "hostB", "-o", "/dev/null", "sleep", "600"])?;
    wait_stat(c, there, "RUN")?;
    let o = lsadmin_on(s, "hostB", &["limlock"])?;
    if !o.status.success() || o.stdout != b"Host is locked\n" {
        bail!("lsadmin limlock on hostB: {}", out(&o));
    }
    wait_lsload(c, "hostB", &["lockU"])?;
    // Its sbatchd suspends the batch jobs running there.
    wait_stat(c, there, "SSUSP")?;
    let why = c.ok("bjobs", &["-s", &there.to_string()])?;
    if !why.contains("The execution host is locked by LSF administrator now") {
        bail!("bjobs -s of the job on the locked hostB:\n{why}");
    }
    wait_for("bhosts -w to show hostB closed_Lock", LONG, || {
        let t = c.stdout_ok("bhosts", &["-w", "hostB"]).unwrap_or_default();
        (t.contains("closed_Lock").then_some(()), t)
    })?;
    let job = c.bsub(&s.work, &["-m", "hostB", "-o", "/dev/null", "true"])?;
    wait_for("the job for hostB to wait: Host is locked", LONG, || {
        let t = c
            .stdout_ok("bjobs", &["-p", &job.to_string()])
            .unwrap_or_default();
        (t.contains("Host is locked").then_some(()), t)
    })?;
    let o = lsadmin_on(s, "hostB", &["limlock"])?;
    if o.status.code() != Some(255)
        || !String::from_utf8_lossy(&o.stderr).contains("Host is already locked")
    {
        bail!("a second lsadmin limlock on hostB: {}", out(&o));
    }
    let o = lsadmin_on(s, "hostB", &["limunlock"])?;
    if !o.status.success() || o.stdout != b"Host is unlocked\n" {
        bail!("lsadmin limunlock on hostB: {}", out(&o));
    }
    wait_lsload(c, "hostB", &["ok", "busy"])?;
    wait_stat(c, job, "DONE")?;
    wait_stat(c, there, "RUN")?;
    c.ok("bkill", &[&there.to_string()])?;
    let o = lsadmin_on(s, "hostB", &["limunlock"])?;
    if o.status.code() != Some(255)
        || !String::from_utf8_lossy(&o.stderr).contains("Host is not locked")
    {
        bail!("lsadmin limunlock of an unlocked hostB: {}", out(&o));
    }
    // A lock for a while ends by itself.
    let o = lsadmin_on(s, "hostC", &["limlock", "-l", "10"])?;
    if !o.status.success() || o.stdout != b"Host is locked for 10 seconds\n" {
        bail!("lsadmin limlock -l 10 on hostC: {}", out(&o));
    }
    wait_lsload(c, "hostC", &["lockU"])?;
    wait_lsload(c, "hostC", &["ok", "busy"])?;
    Ok(())
}

/// Whether `lsrun -m host echo ok` works.
fn lsrun_works(c: &ProcessCluster, host: &str) -> bool {
    c.stdout_ok("lsrun", &["-m", host, "echo", "ok"])
        .is_some_and(|o| o == "ok\n")
}

/// Item 10: the `lsadmin res*` subcommands were refused. `resshutdown` stops a host's
/// RES (lsrun there fails), `resstartup` starts it again, `resrestart` restarts it, with
/// LSF's lines on stderr; the ones Basalt does not do are refused by name.
fn item10_lsadmin_res_subcommands_control_res(s: &Site) -> Result<()> {
    let c = &s.c;
    let line = |args: &[&str], want: &str| -> Result<()> {
        let o = c.run("lsadmin", args)?;
        let err = String::from_utf8_lossy(&o.stderr);
        if !o.status.success() || err != want {
            bail!("lsadmin {args:?}: {}, stderr {err:?}", o.status);
        }
        Ok(())
    };
    if !lsrun_works(c, "hostB") {
        bail!("lsrun -m hostB does not work to begin with");
    }
    line(
        &["resshutdown", "hostB"],
        "Shut down RES on <hostB> ...... done\n",
    )?;
    wait_for("lsrun -m hostB to fail", LONG, || {
        let works = lsrun_works(c, "hostB");
        ((!works).then_some(()), works.to_string())
    })?;
    line(
        &["resstartup", "hostB"],
        "Starting up RES on <hostB> ...... done\n",
    )?;
    wait_for("lsrun -m hostB to work again", LONG, || {
        let works = lsrun_works(c, "hostB");
        (works.then_some(()), works.to_string())
    })?;
    line(
        &["resrestart", "hostC"],
        "Restart RES on <hostC> ...... done\n",
    )?;
    wait_for("lsrun -m hostC to work after the restart", LONG, || {
        let works = lsrun_works(c, "hostC");
        (works.then_some(()), works.to_string())
    })?;
    for sub in ["reslogon", "reslogoff", "resdebug", "restime"] {
        let o = c.run("lsadmin", &[sub])?;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(255) || !err.contains(&format!("lsadmin: {sub}: ")) {
            bail!("lsadmin {sub}: {}, stderr {err:?}", o.status);
        }
    }
    Ok(())
}
