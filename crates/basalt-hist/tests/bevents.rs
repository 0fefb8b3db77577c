//! `bevents` end to end on a generated log directory with switched files, a damaged
//! record in the middle of an old file and a torn tail: `verify` finds both with their
//! lines and offsets, `json` dumps and filters records, `replay` rebuilds the state the
//! generator describes, now and at a time before the last log switch.

mod common;

use common::{Env, Generated, Spec, T0, damage_line, generate, tear, text, timeline};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const BEVENTS: &str = env!("CARGO_BIN_EXE_bevents");
const JOBS: u64 = 3_000;

/// 3,000 jobs, a switch every 300 JOB_CLEANs; then on top of the generated log: an
/// MBD_START, `long` closed and hostA closed at the end of `lsb.events`; line 40 of
/// `lsb.events.3` (a JOB_START_ACCEPT, which changes no job's state) damaged; a torn
/// record at the end of `lsb.events`.
fn fixture() -> (Env, Generated, usize) {
    let env = Env::new();
    let g = generate(
        &env.logdir,
        &Spec {
            jobs: JOBS,
            per_file: 300,
            users: vec!["alice".into(), "bob".into()],
            array_every: 0,
        },
    );
    assert!(g.old_files >= 8, "{g:?}");
    let t = g.end_of_log;
    tear(
        &env.logdir.join("lsb.events"),
        &format!(
            "\"MBD_START\" \"40\" {t} \"hostA\" \"basalt\" 1 3\n\
             \"QUEUE_CTRL\" \"40\" {t} 2 \"long\" 0 \"root\" \"maintenance\"\n\
             \"HOST_CTRL\" \"40\" {t} 2 \"hostA\" 0 \"root\" \"disk\"\n"
        ),
    );
    let old3 = env.logdir.join("lsb.events.3");
    let data = std::fs::read_to_string(&old3).unwrap_or_default();
    let line = data
        .lines()
        .enumerate()
        .skip(30)
        .find(|(_, l)| l.starts_with("\"JOB_START_ACCEPT\""))
        .map(|(i, _)| i + 1)
        .unwrap_or_else(|| panic!("no JOB_START_ACCEPT in lsb.events.3"));
    damage_line(&old3, line, "\"JOB_START_ACCEPT\" \"40\" 1795 damaged");
    tear(
        &env.logdir.join("lsb.events"),
        "\"JOB_STATUS\" \"40\" 17953",
    );
    (env, g, line)
}

fn run(env: &Env, args: &[&str], with_config: bool) -> (Option<i32>, String, String) {
    let o = if with_config {
        env.run(BEVENTS, args, &[])
    } else {
        let mut c = std::process::Command::new(BEVENTS);
        c.args(args).env_remove("LSF_ENVDIR").env("TZ", "UTC");
        c.output().unwrap_or_else(|e| panic!("run bevents: {e}"))
    };
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// Job states and per-queue totals at time `t` (every record with a time up to `t`
/// applied), from the generator's timeline.
fn expected_at(t: i64, last: u64) -> (BTreeMap<String, u64>, BTreeMap<String, u64>, u64) {
    let mut states = BTreeMap::new();
    let mut queues = BTreeMap::new();
    let mut max_id = 0;
    for id in 1..=last {
        let (submit, start, end, clean, exits, queue) = timeline(id);
        if submit > t {
            break;
        }
        max_id = id;
        if clean <= t {
            continue;
        }
        let st = if t < start {
            "PEND"
        } else if t < end {
            "RUN"
        } else if exits {
            "EXIT"
        } else {
            "DONE"
        };
        *states.entry(st.to_string()).or_default() += 1;
        *queues.entry(queue.to_string()).or_default() += 1;
    }
    (states, queues, max_id + 1)
}

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn queue_totals(v: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for q in v["queues"].as_array().into_iter().flatten() {
        let n: u64 = q["jobs"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(_, n)| n.as_u64().unwrap_or(0))
            .sum();
        if n > 0 {
            out.insert(q["name"].as_str().unwrap_or_default().to_owned(), n);
        }
    }
    out
}

fn states(v: &Value) -> BTreeMap<String, u64> {
    v["jobs_by_state"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
        .collect()
}

#[test]
fn verify_finds_the_damaged_record_and_the_torn_tail() {
    let (env, g, line) = fixture();
    let d = env.logdir.to_string_lossy().into_owned();
    let (code, out, err) = run(&env, &["verify", "-d", &d], true);
    assert_eq!(code, Some(1), "{out}{err}");
    let old3 = env.logdir.join("lsb.events.3").display().to_string();
    assert!(out.contains(&format!("{old3}:{line}: offset ")), "{out}");
    assert!(out.contains("damaged record: "), "{out}");
    let current = env.logdir.join("lsb.events").display().to_string();
    assert!(
        out.contains(&format!("{current}: ")) && out.contains("incomplete last line (23 bytes)"),
        "{out}"
    );
    // Every file is listed, the clean ones OK; lsb.events.index is missing.
    assert_eq!(out.matches(": OK\n").count() as u64, g.old_files, "{out}");
    assert!(out.contains("lsb.events.index: missing"), "{out}");
    assert!(
        out.ends_with(&format!("2 problem(s) in {} file(s)\n", g.old_files + 2)),
        "{out}"
    );

    // The offset is the damaged line's.
    let data = std::fs::read(env.logdir.join("lsb.events.3")).unwrap_or_default();
    let offset: usize = data
        .split_inclusive(|b| *b == b'\n')
        .take(line - 1)
        .map(<[u8]>::len)
        .sum();
    assert!(
        out.contains(&format!(":{line}: offset {offset}: damaged")),
        "{out}"
    );

    // One clean file: exit 0. JSON output.
    let one = env.logdir.join("lsb.events.1").display().to_string();
    let (code, out, _) = run(&env, &["verify", &one], true);
    assert_eq!(code, Some(0), "{out}");
    let (code, out, _) = run(&env, &["verify", "--json", "-d", &d], true);
    assert_eq!(code, Some(1));
    let v = json(&out);
    assert_eq!(v["problems"], 2);
    let bad: Vec<&Value> = v["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["ok"] == false)
        .collect();
    assert_eq!(bad.len(), 2, "{v}");
    assert_eq!(bad[0]["damaged"][0]["line"], line as u64);
    assert_eq!(bad[0]["damaged"][0]["offset"], offset as u64);
    assert!(bad[1]["torn_tail"]["offset"].as_u64().is_some(), "{v}");

    // With the index written by mbatchd's call, no more note about it.
    basalt_eventlog::index::rebuild(&env.logdir).unwrap_or_else(|e| panic!("{e}"));
    let (_, out, _) = run(&env, &["verify", "-d", &d], true);
    assert!(!out.contains("lsb.events.index"), "{out}");
    // The default log directory comes from LSF_ENVDIR.
    let (code, out, _) = run(&env, &["verify"], true);
    assert_eq!(code, Some(1));
    assert!(out.contains(&old3), "{out}");
}

#[test]
fn json_dumps_and_filters_records() {
    let (env, _, _) = fixture();
    let d = env.logdir.to_string_lossy().into_owned();
    let (code, out, err) = run(
        &env,
        &[
            "json",
            "--type",
            "JOB_NEW,job_clean",
            "--job",
            "1500",
            "-d",
            &d,
        ],
        true,
    );
    assert_eq!(
        code,
        Some(1),
        "damaged line and torn tail are reported: {err}"
    );
    assert!(err.contains("damaged record"), "{err}");
    assert!(err.contains("incomplete last line"), "{err}");
    let recs: Vec<Value> = out.lines().map(json).collect();
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| r["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, vec!["JOB_NEW", "JOB_CLEAN"], "{out}");
    assert!(recs.iter().all(|r| r["job_id"] == 1500));
    assert_eq!(recs[0]["fields"][0], 1500);
    assert_eq!(recs[0]["fields"][10], "bob");
    assert!(recs[0]["offset"].as_u64().is_some() && recs[0]["line"].as_u64().is_some());

    // A job alive at the last switch: its JOB_NEW is in lsb.events.1 and carried into
    // lsb.events.
    let data = std::fs::read_to_string(env.logdir.join("lsb.events")).unwrap_or_default();
    let first = data.lines().next().unwrap_or_default();
    let off: usize = first.trim_start_matches('#').trim().parse().unwrap_or(0);
    let carried_new = data[first.len() + 1..off]
        .lines()
        .find(|l| l.starts_with("\"JOB_NEW\""))
        .unwrap_or_else(|| panic!("nothing carried"));
    let id = carried_new.split(' ').nth(3).unwrap_or_default();
    let (_, out, _) = run(
        &env,
        &["json", "--type", "JOB_NEW", "--job", id, "-d", &d],
        true,
    );
    let recs: Vec<Value> = out.lines().map(json).collect();
    assert_eq!(recs.len(), 2, "{out}");
    assert!(recs[0]["carried"].is_null(), "{out}");
    assert_eq!(recs[1]["carried"], true, "{out}");

    // One file, no filter: one JSON object per record.
    let one = env.logdir.join("lsb.events.1").display().to_string();
    let (code, out, _) = run(&env, &["json", &one], true);
    assert_eq!(code, Some(0));
    let n = std::fs::read_to_string(&one)
        .unwrap_or_default()
        .lines()
        .count()
        - 1;
    assert_eq!(out.lines().count(), n);
}

#[test]
fn replay_rebuilds_the_state_now_and_before_the_last_switch() {
    let (env, g, _) = fixture();
    let d = env.logdir.to_string_lossy().into_owned();

    // Now: the current file only, as mbatchd reads it.
    let (code, out, err) = run(&env, &["replay", "--json", "-d", &d], false);
    assert_eq!(code, Some(1), "the torn tail is a problem: {out}{err}");
    let v = json(&out);
    let (want_states, want_queues, next) = expected_at(g.end_of_log, JOBS);
    assert_eq!(states(&v), want_states, "{v}");
    assert_eq!(queue_totals(&v), want_queues, "{v}");
    assert_eq!(v["next_job_id"], next);
    assert_eq!(v["epoch"], 1);
    assert_eq!(v["files"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["closed_queues"], serde_json::json!(["long"]), "{v}");
    assert_eq!(v["closed_hosts"], serde_json::json!(["hostA"]), "{v}");
    assert!(
        v["problems"][0]
            .as_str()
            .unwrap_or("")
            .contains("incomplete last line")
    );

    // With the cluster's configuration: `short` and `long` are not configured there, so
    // their jobs are in lost_and_found, as mbatchd has them (issue 50 item 5).
    let (_, out, _) = run(&env, &["replay", "--json", "-d", &d], true);
    let v2 = json(&out);
    assert_eq!(states(&v2), want_states);
    let totals = queue_totals(&v2);
    let lost = ["short", "long"]
        .iter()
        .map(|q| want_queues.get(*q).copied().unwrap_or(0))
        .sum::<u64>();
    assert!(lost > 0);
    assert_eq!(totals.get("lost_and_found"), Some(&lost), "{v2}");
    assert!(
        !totals.contains_key("short") && !totals.contains_key("long"),
        "{v2}"
    );
    assert_eq!(
        v2["inactive_queues"],
        serde_json::json!(["lost_and_found"]),
        "{v2}"
    );

    // Before the last switch: the history of the old files.
    let sw4 = basalt_eventlog::index::header_time(&env.logdir.join("lsb.events.4"))
        .unwrap_or_else(|e| panic!("{e}"));
    let until = sw4 + 50;
    let (code, out, err) = run(
        &env,
        &[
            "replay",
            "--json",
            "-l",
            "--until",
            &until.to_string(),
            "-d",
            &d,
        ],
        false,
    );
    // The damaged record (early in lsb.events.3) is among those replayed: reported and
    // skipped, not fatal.
    assert_eq!(code, Some(1), "{err}");
    let v = json(&out);
    assert!(
        v["problems"][0]
            .as_str()
            .unwrap_or("")
            .contains("damaged record skipped"),
        "{}",
        v["problems"]
    );
    let (want_states, want_queues, next) = expected_at(until, JOBS);
    assert_eq!(states(&v), want_states, "{v}");
    assert_eq!(queue_totals(&v), want_queues);
    assert_eq!(v["next_job_id"], next);
    assert_eq!(v["orphan_records"], 0);
    assert_eq!(v["epoch"], 0);
    assert!(v["files"].as_array().map_or(0, Vec::len) as u64 >= 4);
    assert!(v["last_record_time"].as_i64().unwrap_or(i64::MAX) <= until);
    let jobs = v["jobs"].as_array().cloned().unwrap_or_default();
    assert_eq!(jobs.len() as u64, want_states.values().sum::<u64>());
    let (_, start, _, _, _, _) = timeline(jobs[0]["job_id"].as_u64().unwrap_or(1));
    assert!(start > T0);

    // Text output, later in the history.
    let sw2 = basalt_eventlog::index::header_time(&env.logdir.join("lsb.events.2"))
        .unwrap_or_else(|e| panic!("{e}"));
    let (code, out, _) = run(
        &env,
        &["replay", "--until", &sw2.to_string(), "-d", &d],
        false,
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("damaged record skipped"), "{out}");
    let (want_states, _, next) = expected_at(sw2, JOBS);
    assert!(out.contains(&format!("Next job id: {next}\n")), "{out}");
    let total: u64 = want_states.values().sum();
    assert!(out.contains(&format!("Jobs: {total} ")), "{out}");
    assert!(out.contains("QUEUE_NAME"), "{out}");

    // LSF-style times, -h, -V, bad arguments.
    let (code, _, err) = run(&env, &["replay", "--until", "25:99", "-d", &d], false);
    assert_eq!(code, Some(255), "{err}");
    let (code, _, err) = run(&env, &["-h"], false);
    assert_eq!(code, Some(0));
    assert!(err.starts_with("Usage: bevents"), "{err}");
    let (code, _, err) = run(&env, &["-V"], false);
    assert_eq!(code, Some(0));
    assert!(err.contains(&basalt_core::version::product_line()), "{err}");
    let (code, _, err) = run(&env, &["replay"], false);
    assert_eq!(code, Some(255));
    assert!(err.contains("no log directory"), "{err}");
    let (code, _, _) = run(
        &env,
        &[
            "verify",
            "-d",
            &Path::new(&d).join("nope").to_string_lossy(),
        ],
        false,
    );
    assert_eq!(code, Some(255));
}
