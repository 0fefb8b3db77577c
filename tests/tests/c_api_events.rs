//! `lsb_geteventrec` (issue 52) over a real cluster's logs: jobs finish, fail, are
//! killed, held and switched, a queue and a host are closed and opened with `badmin`;
//! then the C program `crates/basalt-capi/tests/c/events_test.c`, compiled with the
//! system `cc` against the headers and the built `libbat.so`, reads `lsb.events` and
//! `lsb.acct` with `lsb_geteventrec` and prints what it saw, checked here against what
//! was done. A hand-made file checks the end of file (`LSBE_EOF`), a malformed line
//! (`LSBE_EVENT_FORMAT` with `lineNum` at it) and a record type the library has no
//! structure for (`LSBE_UNKNOWN_EVENT`), each call going on after the bad line; then
//! both runs again under Valgrind.

use anyhow::{Result, anyhow};
use basalt_testkit::jobs::{wait_finished, wait_state};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for, work_dir};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

// LSF's numbers (lsbatch.h).
const EVENT_JOB_CLEAN: u32 = 37;
const EVENT_LOG_SWITCH: u32 = 43;
const LSBE_UNKNOWN_EVENT: u32 = 45;
const LSBE_EVENT_FORMAT: u32 = 46;
const JOB_STAT_EXIT: u32 = 0x20;
const JOB_STAT_DONE: u32 = 0x40;
const TERM_OWNER: u32 = 14;

use basalt_testkit::capi::{self, checked};

fn run_ok(c: &InProcessBatch, exe: &Path, args: &[&str]) -> Result<String> {
    checked(c.command(&exe.to_string_lossy()), args)
}

/// The numbers after `key` on the line starting with `prefix`.
fn line_with<'a>(out: &'a str, prefix: &str) -> Option<&'a str> {
    out.lines().find(|l| l.starts_with(prefix))
}

fn word_after(line: &str, key: &str) -> Option<u32> {
    let mut w = line.split_whitespace();
    while let Some(x) = w.next() {
        if x == key {
            return w.next().and_then(|v| v.parse().ok());
        }
    }
    None
}

fn counts(out: &str) -> BTreeMap<String, u32> {
    out.lines()
        .filter_map(|l| l.strip_prefix("count "))
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_owned(), v.parse().ok()?))
        })
        .collect()
}

#[test]
fn c_programs_read_lsb_events_and_lsb_acct_with_lsb_geteventrec() -> Result<()> {
    let c = InProcessBatch::start("capi-ev", &ClusterSpec::new(2), PARAMS)?;
    let work = work_dir(c.dir.path())?;
    let exe = capi::build("events_test", &work)?;
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())?
        .map(|u| u.name)
        .ok_or_else(|| anyhow!("no name for this uid"))?;

    // What the log will hold: a job that succeeds, one that fails, one killed while
    // running, one held, switched and killed while pending; queue and host control.
    let done = c.bsub(&work, &["-o", "/dev/null", "true"])?;
    let failed = c.bsub(&work, &["-o", "/dev/null", "exit 3"])?;
    let killed = c.bsub(&work, &["-o", "/dev/null", "sleep 300"])?;
    let held = c.bsub(&work, &["-H", "-o", "/dev/null", "true"])?;
    wait_state(&c, held, "PSUSP", Duration::from_secs(20))?;
    c.ok("bswitch", &["priority", &held.to_string()])?;
    wait_state(&c, killed, "RUN", Duration::from_secs(30))?;
    c.ok("bkill", &[&killed.to_string()])?;
    c.ok("bkill", &[&held.to_string()])?;
    c.ok("badmin", &["qclose", "normal"])?;
    c.ok("badmin", &["qopen", "normal"])?;
    c.ok("badmin", &["hclose", "hostB"])?;
    c.ok("badmin", &["hopen", "hostB"])?;
    let ids = [done, failed, killed, held];
    wait_finished(&c, &ids, Duration::from_secs(60))?;
    let logdir = c.config.logdir();
    wait_for(
        "the four JOB_FINISH records",
        Duration::from_secs(30),
        || match basalt_testkit::acct::finishes(&logdir) {
            Ok(f) if ids.iter().all(|id| f.contains_key(&(*id, 0))) => (Some(()), String::new()),
            Ok(f) => (None, format!("{f:?}")),
            Err(e) => (None, e.to_string()),
        },
    )?;

    let events = logdir.join("lsb.events");
    let acct = logdir.join("lsb.acct");
    let out = run_ok(
        &c,
        &exe,
        &["read", &events.to_string_lossy(), &acct.to_string_lossy()],
    )?;
    assert!(out.contains("errors 0"), "{out}");
    let n = counts(&out);
    let at_least = |k: &str, min: u32| {
        assert!(
            n.get(k).copied().unwrap_or(0) >= min,
            "{k}: {:?} < {min}\n{out}",
            n.get(k)
        );
    };
    assert_eq!(n.get("JOB_NEW"), Some(&4), "{out}");
    assert_eq!(n.get("JOB_FINISH"), Some(&4), "{out}");
    assert_eq!(n.get("JOB_SWITCH"), Some(&1), "{out}");
    assert_eq!(n.get("QUEUE_CTRL"), Some(&2), "{out}");
    assert_eq!(n.get("HOST_CTRL"), Some(&2), "{out}");
    at_least("JOB_START", 3);
    at_least("JOB_STATUS", 4);
    at_least("JOB_SIGNAL", 2);
    at_least("MBD_START", 1);
    let cluster = &c.config.cluster_name;
    assert!(out.contains(&format!("mbdstart {cluster} ")), "{out}");

    for id in ids {
        let new = line_with(&out, &format!("new {id} "))
            .ok_or_else(|| anyhow!("no JOB_NEW of {id}:\n{out}"))?;
        assert!(new.contains(&format!("user {user} queue normal ")), "{new}");
    }
    assert!(out.contains(&format!("new {failed} user {user} queue normal cmd exit 3")));
    assert!(out.contains(&format!("switch {held} priority")), "{out}");
    assert!(
        out.contains(&format!("signal {killed} KILL by {user}")),
        "{out}"
    );
    for (op, what) in [(2, "qctrl 2 normal"), (1, "qctrl 1 normal")] {
        assert!(
            out.contains(&format!("{what} by {user}")),
            "op {op}:\n{out}"
        );
    }
    assert!(out.contains("hctrl 2 hostB"), "{out}");
    assert!(out.contains("hctrl 1 hostB"), "{out}");

    // Final states: the last JOB_STATUS of each job, and its JOB_FINISH.
    let state = |id: u64| -> Result<(u32, u32, u32)> {
        let l = line_with(&out, &format!("final {id} "))
            .ok_or_else(|| anyhow!("no JOB_STATUS of {id}:\n{out}"))?;
        let f = |k| word_after(l, k).ok_or_else(|| anyhow!("no {k} in {l}"));
        Ok((f("status")?, f("exit")?, f("exitInfo")?))
    };
    let finish = |id: u64| -> Result<(u32, u32, String)> {
        let l = line_with(&out, &format!("finish {id} "))
            .ok_or_else(|| anyhow!("no JOB_FINISH of {id}:\n{out}"))?;
        let f = |k| word_after(l, k).ok_or_else(|| anyhow!("no {k} in {l}"));
        assert!(l.contains(&format!(" user {user} ")), "{l}");
        Ok((f("status")?, f("exit")?, l.to_owned()))
    };
    let (s, e, _) = state(done)?;
    assert_eq!((s & (JOB_STAT_DONE | JOB_STAT_EXIT), e), (JOB_STAT_DONE, 0));
    let (s, e, l) = finish(done)?;
    assert_eq!((s, e), (JOB_STAT_DONE, 0), "{l}");
    assert!(l.contains(" hosts 1 first host"), "{l}");

    let (s, e, _) = state(failed)?;
    assert_eq!(
        (s & (JOB_STAT_DONE | JOB_STAT_EXIT), e),
        (JOB_STAT_EXIT, 3 << 8)
    );
    let (s, e, l) = finish(failed)?;
    assert_eq!((s, e), (JOB_STAT_EXIT, 3 << 8), "{l}");

    let (s, _, info) = state(killed)?;
    assert_eq!(s & (JOB_STAT_DONE | JOB_STAT_EXIT), JOB_STAT_EXIT);
    assert_eq!(info, TERM_OWNER, "bkill by the job's owner");
    let (s, e, l) = finish(killed)?;
    assert_eq!(s, JOB_STAT_EXIT, "{l}");
    assert_ne!(e, 0, "{l}");

    let (s, _, l) = finish(held)?;
    assert_eq!(s, JOB_STAT_EXIT, "{l}");
    assert!(l.contains(" hosts 0 first - queue priority"), "{l}");

    // End of file, a malformed line and an unknown type in a hand-made file.
    let hand = work.join("hand.events");
    std::fs::write(
        &hand,
        [
            basalt_eventlog::fresh_header().trim_end(),
            r#""JOB_CLEAN" "10.1" 1700000000 5 0"#,
            "",
            r#""JOB_CLEAN" "10.1" 1700000001 five 0"#,
            r#""JOB_MSG" "10.1" 1700000002 5 1 "src" "dst" "hello" 0"#,
            r#""LOG_SWITCH" "10.1" 1700000003 12"#,
            "",
        ]
        .join("\n"),
    )?;
    let out = run_ok(&c, &exe, &["errors", &hand.to_string_lossy()])?;
    let calls: Vec<&str> = out
        .lines()
        .filter(|l| ["rec ", "err ", "eof "].iter().any(|p| l.starts_with(p)))
        .collect();
    assert_eq!(calls.len(), 5, "{out}");
    assert_eq!(calls[0], format!("rec {EVENT_JOB_CLEAN} line 2"));
    assert!(
        calls[1].starts_with(&format!("err {LSBE_EVENT_FORMAT} line 4 Bad event format")),
        "{out}"
    );
    assert!(
        calls[1].contains("jobId"),
        "the message names the field: {out}"
    );
    assert!(
        calls[2].starts_with(&format!("err {LSBE_UNKNOWN_EVENT} line 5 Unknown event")),
        "{out}"
    );
    assert_eq!(calls[3], format!("rec {EVENT_LOG_SWITCH} line 6"));
    assert_eq!(calls[4], "eof line 6");

    let out = run_ok(
        &c,
        &exe,
        &["byline", r#""LOG_SWITCH" "10.1" 1700000003 12"#],
    )?;
    assert!(
        out.contains(&format!(
            "byline type {EVENT_LOG_SWITCH} version 10.1 time 1700000003"
        )),
        "{out}"
    );

    under_valgrind(&c, &exe, &events, &acct, &hand)?;
    Ok(())
}

/// Both reads under Valgrind (`.ci/run` installs it): definite leaks and memory errors
/// fail the run.
fn under_valgrind(
    c: &InProcessBatch,
    exe: &Path,
    events: &Path,
    acct: &Path,
    hand: &Path,
) -> Result<()> {
    let (events, acct, hand) = (
        events.to_string_lossy(),
        acct.to_string_lossy(),
        hand.to_string_lossy(),
    );
    for args in [vec!["read", &events, &acct], vec!["errors", &hand]] {
        let Some(mut cmd) = capi::valgrind(&c.envdir, "lsb_geteventrec under Valgrind") else {
            return Ok(());
        };
        cmd.arg(exe);
        checked(cmd, &args)?;
    }
    Ok(())
}
