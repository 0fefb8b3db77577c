//! Job arrays and dependencies end to end on a 3-host loopback cluster whose daemons
//! run in the test process (`InProcessBatch`; jobs run under real job supervisors),
//! through the real commands: `bsub -J "arr[1-6]%2"` with `%J`/`%I` output files and
//! `$LSB_JOBINDEX`, the `%k` limit, element ids (`bkill 123[3]`), whole-array control,
//! `bjobs -A`, `-w "done(name)"` dependencies, and LSF's refusals.

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::{
    ClusterSpec, Commands, InProcessBatch, event_fields, output_text, wait_for, work_dir,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

/// bsub that must be refused: returns its stderr.
fn bsub_refused(c: &InProcessBatch, cwd: &Path, args: &[&str]) -> Result<String> {
    let o = c.command("bsub").args(args).current_dir(cwd).output()?;
    if o.status.code() != Some(255) || !o.stdout.is_empty() {
        bail!(
            "bsub {args:?} should have been refused: {}",
            output_text(&o)
        );
    }
    Ok(String::from_utf8_lossy(&o.stderr).into_owned())
}

#[derive(Debug, Clone, PartialEq)]
struct Row {
    stat: String,
    name: String,
    host: String,
}

/// Every job and element bjobs knows, by (job id, index).
fn jobs(c: &InProcessBatch) -> Result<BTreeMap<(u64, u32), Row>> {
    let o = c.run(
        "bjobs",
        &[
            "-a",
            "-u",
            "all",
            "-json",
            "-o",
            "jobid jobindex stat job_name exec_host",
        ],
    )?;
    let out = String::from_utf8_lossy(&o.stdout);
    if out.trim().is_empty() {
        return Ok(BTreeMap::new());
    }
    let v: serde_json::Value =
        serde_json::from_str(&out).with_context(|| format!("bjobs -json: {}", output_text(&o)))?;
    let mut m = BTreeMap::new();
    for r in v["RECORDS"].as_array().cloned().unwrap_or_default() {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        let (Ok(id), Ok(idx)) = (s("JOBID").parse::<u64>(), s("JOBINDEX").parse::<u32>()) else {
            continue;
        };
        m.insert(
            (id, idx),
            Row {
                stat: s("STAT"),
                name: s("JOB_NAME"),
                host: s("EXEC_HOST"),
            },
        );
    }
    Ok(m)
}

fn elements(m: &BTreeMap<(u64, u32), Row>, id: u64) -> Vec<(u32, Row)> {
    m.iter()
        .filter(|((j, _), _)| *j == id)
        .map(|((_, i), r)| (*i, r.clone()))
        .collect()
}

/// Wait until `pred` holds for the job table.
fn wait_jobs(
    c: &InProcessBatch,
    what: &str,
    deadline: Duration,
    mut pred: impl FnMut(&BTreeMap<(u64, u32), Row>) -> bool,
) -> Result<BTreeMap<(u64, u32), Row>> {
    wait_for(what, deadline, || match jobs(c) {
        Ok(m) => {
            let shown = format!("{m:?}");
            (pred(&m).then_some(m), shown)
        }
        Err(e) => (None, e.to_string()),
    })
}

/// The records of lsb.events, split into fields.
fn events(c: &InProcessBatch) -> Result<Vec<Vec<String>>> {
    let text = std::fs::read_to_string(c.dir.path().join("work/basalt/logdir/lsb.events"))?;
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(event_fields)
        .collect())
}

/// idx of a JOB_START record: `jobId jStatus jobPid jobPGid hostFactor numExHosts
/// "host"... "queuePreCmd" "queuePostCmd" jFlags idx`.
fn start_idx(f: &[String]) -> Option<u32> {
    let n: usize = f.get(8)?.parse().ok()?;
    f.get(9 + n + 3)?.parse().ok()
}

/// idx of a JOB_STATUS record: `jobId jStatus reason subreasons cpuTime endTime ru
/// [19 rusage] exitStatus idx ...`.
fn status_idx(f: &[String]) -> Option<u32> {
    let ru = f.get(9)? == "1";
    let at = if ru { 10 + 19 + 1 } else { 11 };
    f.get(at)?.parse().ok()
}

#[test]
fn arrays_limits_elements_and_dependencies() -> Result<()> {
    let c = InProcessBatch::start("batch-arrays", &ClusterSpec::new(3), PARAMS)?;
    let work = work_dir(c.dir.path())?;

    // Refusals with LSF's messages.
    let e = bsub_refused(&c, &work, &["-J", "big[1-1001]", "true"])?;
    assert!(
        e.contains("Job array index too large. Job not submitted."),
        "{e}"
    );
    let e = bsub_refused(&c, &work, &["-J", "bad[0-2]", "true"])?;
    assert!(
        e.contains("Job array index error. Job not submitted."),
        "{e}"
    );
    let e = bsub_refused(&c, &work, &["-w", "done(", "true"])?;
    assert!(
        e.contains("Bad dependency condition syntax. Job not submitted."),
        "{e}"
    );

    // Six elements, at most two at a time (6 slots would allow all of them).
    let arr = c.bsub(
        &work,
        &[
            "-J",
            "arr[1-6]%2",
            "-o",
            "out.%J.%I",
            "sleep 2; echo $LSB_JOBINDEX",
        ],
    )?;
    let mut most = 0;
    let done = wait_jobs(
        &c,
        "the 6 elements to finish",
        Duration::from_secs(90),
        |m| {
            let els = elements(m, arr);
            let running = els.iter().filter(|(_, r)| r.stat == "RUN").count();
            assert!(running <= 2, "{running} elements run at once: {els:?}");
            most = most.max(running);
            els.len() == 6 && els.iter().all(|(_, r)| r.stat == "DONE")
        },
    )?;
    assert!(most >= 1, "an element was seen running");
    for (i, r) in elements(&done, arr) {
        assert_eq!(r.name, format!("arr[{i}]"));
        let out = std::fs::read_to_string(work.join(format!("out.{arr}.{i}")))
            .with_context(|| format!("output of element {i}"))?;
        assert_eq!(out.lines().next(), Some(i.to_string().as_str()), "{out}");
    }
    assert_eq!(
        elements(&done, arr).iter().map(|e| e.0).collect::<Vec<_>>(),
        (1..=6).collect::<Vec<u32>>()
    );

    // lsb.events: one JOB_NEW with the spec as submitted, per-element records with idx,
    // never more than two elements between JOB_START and their final JOB_STATUS.
    let recs = events(&c)?;
    let id = arr.to_string();
    let news: Vec<&Vec<String>> = recs
        .iter()
        .filter(|f| f[0] == "JOB_NEW" && f[3] == id)
        .collect();
    assert_eq!(news.len(), 1);
    assert_eq!(news[0][41], "arr[1-6]%2", "$42 is the job name");
    let mut running = 0i32;
    let mut most_logged = 0;
    let mut started = Vec::new();
    for f in recs.iter().filter(|f| f.get(3) == Some(&id)) {
        match f[0].as_str() {
            "JOB_START" => {
                started.push(start_idx(f).ok_or_else(|| anyhow!("{f:?}"))?);
                running += 1;
                most_logged = most_logged.max(running);
            }
            "JOB_STATUS" if f[4] == "64" || f[4] == "32" => {
                assert!(status_idx(f).is_some_and(|i| (1..=6).contains(&i)), "{f:?}");
                running -= 1;
            }
            _ => {}
        }
    }
    started.sort_unstable();
    assert_eq!(started, (1..=6).collect::<Vec<u32>>());
    assert!(most_logged <= 2, "{most_logged} started at once in the log");

    // A dependency on the array by name: waits for every element. The array is held
    // and given a limit of one running element with `bmod -J "%1"` (issue 50 item 3):
    // the limit changes, the name (and done(later)) stays; one element is refused.
    let arr2 = c.bsub(
        &work,
        &["-H", "-J", "later[1-3]", "-o", "/dev/null", "sleep 2"],
    )?;
    let o = c.run("bmod", &["-J", "%1", &arr2.to_string()])?;
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("Parameters of job <{arr2}> are being changed\n"),
        "{}",
        output_text(&o)
    );
    let o = c.run("bmod", &["-J", "%2", &format!("{arr2}[2]")])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("Change job name is not allowed for job array. Job not modified."),
        "{}",
        output_text(&o)
    );
    let m = jobs(&c)?;
    for i in 1..=3 {
        assert_eq!(m[&(arr2, i)].name, format!("later[{i}]"), "{m:?}");
    }
    let o = c.run("bresume", &[&arr2.to_string()])?;
    assert!(o.status.success(), "{}", output_text(&o));
    let dep = c.bsub(&work, &["-w", "done(later)", "-o", "dep.%J", "echo after"])?;
    // A condition naming no job is refused (issue 50 item 7); one that can no longer
    // hold (an array whose elements have all run) waits with LSF's reason.
    let e = bsub_refused(&c, &work, &["-w", "done(nosuchjob)", "true"])?;
    assert!(
        e.contains("No matching job found. Job not submitted."),
        "{e}"
    );
    // `!started(arr)` can no longer hold: every element of `arr` has run and ended.
    // (`!started(later)` would still hold: an array has started only when all its
    // elements have, and "%1" keeps two of them waiting.)
    let never = c.bsub(&work, &["-w", "!started(arr)", "-o", "/dev/null", "true"])?;
    let reason = |id: u64, want: &str| {
        wait_for(
            &format!("job {id} to pend with {want:?}"),
            Duration::from_secs(20),
            || {
                let p = c
                    .stdout_ok("bjobs", &["-p", &id.to_string()])
                    .unwrap_or_default();
                let all = c
                    .run("bjobs", &["-a", "-l", &id.to_string()])
                    .map(|o| output_text(&o))
                    .unwrap_or_default();
                (p.contains(want).then_some(()), format!("{p}\n{all}"))
            },
        )
    };
    reason(never, " Dependency condition invalid or never satisfied;")?;
    reason(dep, " Job dependency condition not satisfied;")?;
    wait_jobs(
        &c,
        "the dependent job to finish",
        Duration::from_secs(60),
        |m| m.get(&(dep, 0)).is_some_and(|r| r.stat == "DONE"),
    )?;
    let recs = events(&c)?;
    let pos = |pred: &dyn Fn(&Vec<String>) -> bool| recs.iter().position(pred);
    let dep_start = pos(&|f| f[0] == "JOB_START" && f[3] == dep.to_string())
        .ok_or_else(|| anyhow!("no JOB_START of {dep}"))?;
    let arr2_ends: Vec<usize> = recs
        .iter()
        .enumerate()
        .filter(|(_, f)| f[0] == "JOB_STATUS" && f[3] == arr2.to_string() && f[4] == "64")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(arr2_ends.len(), 3);
    assert!(
        arr2_ends.iter().all(|e| *e < dep_start),
        "started too early"
    );
    // The limit held: one element at a time, each ending before the next starts; the
    // change is logged as LSF logs it, a JOB_MODIFY2 with the job name "%1".
    let mut running = 0;
    for f in recs.iter().filter(|f| f.get(3) == Some(&arr2.to_string())) {
        match f[0].as_str() {
            "JOB_START" => {
                running += 1;
                assert!(running <= 1, "two elements of {arr2} at once: {f:?}");
            }
            "JOB_STATUS" if f[4] == "64" || f[4] == "32" => running -= 1,
            _ => {}
        }
    }
    assert!(
        recs.iter().any(|f| f[0] == "JOB_MODIFY2"
            && f.get(3) == Some(&arr2.to_string())
            && f.iter().any(|x| x == "%1")),
        "no JOB_MODIFY2 of {arr2} with job name %1"
    );
    let o = c.run("bkill", &[&never.to_string()])?;
    assert!(o.status.success(), "{}", output_text(&o));

    // Element control on a running array.
    let sl = c.bsub(&work, &["-J", "sl[1-4]", "-o", "/dev/null", "sleep 120"])?;
    wait_jobs(&c, "4 sleeping elements", Duration::from_secs(30), |m| {
        elements(m, sl)
            .iter()
            .filter(|(_, r)| r.stat == "RUN")
            .count()
            == 4
    })?;
    let summary = c.stdout_ok("bjobs", &["-A"]).unwrap_or_default();
    let row = summary
        .lines()
        .find(|l| l.starts_with(&sl.to_string()))
        .ok_or_else(|| anyhow!("no -A row for {sl}:\n{summary}"))?;
    let nums: Vec<&str> = row.split_whitespace().skip(3).collect();
    assert_eq!(nums, ["4", "0", "0", "4", "0", "0", "0", "0"], "{summary}");
    let one = format!("{sl}[3]");
    let o = c.run("bkill", &[&one])?;
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("Job <{one}> is being terminated\n"),
        "{}",
        output_text(&o)
    );
    let m = wait_jobs(&c, "element 3 to exit", Duration::from_secs(30), |m| {
        m.get(&(sl, 3)).is_some_and(|r| r.stat == "EXIT")
    })?;
    for i in [1, 2, 4] {
        assert_eq!(m[&(sl, i)].stat, "RUN", "element {i} was not killed");
    }
    let o = c.run("bstop", &[&format!("{sl}[2]")])?;
    assert!(o.status.success(), "{}", output_text(&o));
    wait_jobs(&c, "element 2 to stop", Duration::from_secs(30), |m| {
        m.get(&(sl, 2)).is_some_and(|r| r.stat == "USUSP")
            && m.get(&(sl, 1)).is_some_and(|r| r.stat == "RUN")
    })?;
    let o = c.run("bkill", &[&sl.to_string()])?;
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("Job <{sl}> is being terminated\n"),
        "the whole array is answered once: {}",
        output_text(&o)
    );
    wait_jobs(&c, "every element to exit", Duration::from_secs(30), |m| {
        elements(m, sl).iter().all(|(_, r)| r.stat == "EXIT")
    })?;
    let recs = events(&c)?;
    let news = recs
        .iter()
        .filter(|f| f[0] == "JOB_NEW" && f[3] == sl.to_string())
        .count();
    assert_eq!(news, 1);
    let mut signalled: Vec<String> = recs
        .iter()
        .filter(|f| f[0] == "JOB_SIGNAL" && f[3] == sl.to_string())
        .map(|f| format!("{}:{}", f[6], f[7]))
        .collect();
    signalled.sort();
    // JOB_SIGNAL: jobId userId runCount "signalSymbol" idx — element 3, 2 (stop), then all.
    assert!(signalled.contains(&"KILL:3".to_string()), "{signalled:?}");
    assert!(signalled.contains(&"STOP:2".to_string()), "{signalled:?}");
    Ok(())
}
