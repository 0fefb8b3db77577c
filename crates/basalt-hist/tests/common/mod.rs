//! Test helpers shared by the history tests: a cluster configuration in a temporary
//! directory and a generator of realistic log directories (switched `lsb.events.N`
//! files, the current `lsb.events` with a carried-over head, `lsb.acct`).
#![allow(dead_code)]

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Submission time of the first generated job (Sun Nov 22 09:25:35 2026 UTC).
pub const T0: i64 = 1_795_339_535;

/// A configuration directory and its (empty) log directory.
pub struct Env {
    _dir: Option<tempfile::TempDir>,
    pub top: PathBuf,
    pub envdir: PathBuf,
    pub logdir: PathBuf,
}

impl Env {
    /// A fresh configuration in a temporary directory.
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let top = dir.path().to_path_buf();
        let mut env = Env::at(&top);
        env._dir = Some(dir);
        env
    }

    /// A configuration written under `top` (kept after the test).
    pub fn at(top: &Path) -> Env {
        let host = DefaultHost {
            name: "hostA".into(),
            // Nothing listens here, and the commands never connect anywhere.
            address: Some(IpAddr::V4(Ipv4Addr::new(127, 78, 6, 1))),
            server: true,
        };
        let mut spec = DefaultCluster::new("basalt", "nobody", vec![host]);
        spec.lim_port = 17872;
        let envdir = spec
            .write(top)
            .unwrap_or_else(|e| panic!("write configuration: {e}"));
        let logdir = top.join("work/basalt/logdir");
        std::fs::create_dir_all(&logdir).unwrap_or_else(|e| panic!("mkdir: {e}"));
        Env {
            _dir: None,
            top: top.to_path_buf(),
            envdir,
            logdir,
        }
    }

    /// Run a command with this configuration, in UTC, with extra environment.
    pub fn run(&self, exe: &str, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let mut c = Command::new(exe);
        c.args(args)
            .env("LSF_ENVDIR", &self.envdir)
            .env_remove("LSF_SERVER_HOSTS")
            .env_remove("BASALT_HIST_INDEX")
            .env("XDG_CACHE_HOME", self.top.join("cache"))
            .env("TZ", "UTC");
        for (k, v) in extra {
            c.env(k, v);
        }
        c.output().unwrap_or_else(|e| panic!("run {exe}: {e}"))
    }
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct Spec {
    pub jobs: u64,
    /// A log switch after this many JOB_CLEANs (MAX_JOB_NUM).
    pub per_file: u64,
    /// Job owners, used in turn (job i belongs to `users[i % len]`).
    pub users: Vec<String>,
    /// Every `array_every`-th job is an array of 3 elements (0: none).
    pub array_every: u64,
}

/// What was generated.
#[derive(Debug, Clone, Default)]
pub struct Generated {
    /// Old event files written (`lsb.events.1` .. `.N`).
    pub old_files: u64,
    /// JOB_FINISH records written.
    pub finishes: u64,
    /// Event records written (all files, carried copies included).
    pub events: u64,
    /// The time of the log's end: JOB_CLEANs due later were not written.
    pub end_of_log: i64,
}

const QUEUES: [&str; 3] = ["normal", "short", "long"];

fn job_new(out: &mut String, id: u64, t: i64, user: &str, uid: u64, queue: &str, name: &str) {
    use std::fmt::Write as _;
    // SUB_PROJECT_NAME | SUB_QUEUE, and SUB_JOB_NAME for a named job.
    let options = 33554434 | u32::from(!name.is_empty());
    let _ = writeln!(
        out,
        "\"JOB_NEW\" \"40\" {t} {id} {uid} {options} 1 {t} 0 0 -65535 0 0 \"{user}\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"{queue}\" \"\" \"hostA\" \"/home/{user}/run\" \"\" \"\" \"/home/{user}/out.%J\" \"\" \"/home/{user}\" \"{t}.{id}\" 0 \"\" \"\" \"{name}\" \"sleep {}\" 0 \"\" \"proj{}\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1",
        id % 97,
        id % 5
    );
}

/// When job `id` (not an array) is submitted, started, ends and is cleaned; whether it
/// exits; its queue after any `bswitch`.
pub fn timeline(id: u64) -> (i64, i64, i64, i64, bool, &'static str) {
    let i = id - 1;
    let submit = T0 + i as i64;
    let start = submit + 1;
    let end = start + 5 + (id % 50) as i64;
    let queue = if id.is_multiple_of(101) {
        "long"
    } else {
        QUEUES[(i % 3) as usize]
    };
    (submit, start, end, end + 100, id % 10 == 3, queue)
}

/// One job's records: (time, line).
fn job_records(id: u64, spec: &Spec) -> (Vec<(i64, String)>, Vec<String>) {
    use std::fmt::Write as _;
    let i = id - 1;
    let user = &spec.users[(i % spec.users.len() as u64) as usize];
    let uid = 1000 + i % spec.users.len() as u64;
    let queue = QUEUES[(i % 3) as usize];
    let submit = T0 + i as i64;
    let is_array = spec.array_every > 0 && id.is_multiple_of(spec.array_every);
    let name = if is_array {
        "arr[1-3]".to_string()
    } else if id.is_multiple_of(7) {
        format!("job{id}")
    } else {
        String::new()
    };
    let mut ev = Vec::new();
    let mut s = String::new();
    job_new(&mut s, id, submit, user, uid, queue, &name);
    ev.push((submit, s));
    let mut queue_now = queue;
    if id.is_multiple_of(101) {
        queue_now = "long";
        ev.push((
            submit,
            format!("\"JOB_SWITCH\" \"40\" {submit} {uid} {id} \"long\" 0 \"{user}\"\n"),
        ));
    }
    let mut acct = Vec::new();
    let elements: Vec<u32> = if is_array { vec![1, 2, 3] } else { vec![0] };
    for idx in elements {
        let start = submit + 1 + i64::from(idx);
        let end = start + 5 + (id % 50) as i64;
        let exited = id % 10 == 3;
        let (st, exit) = if exited { (32, 256) } else { (64, 0) };
        ev.push((
            start,
            format!(
                "\"JOB_START\" \"40\" {start} {id} 4 0 0 100.0 1 \"hostA\" \"\" \"\" 0 {idx} \"\" \"\"\n\
                 \"JOB_START_ACCEPT\" \"40\" {start} {id} {} {} {idx} 0\n",
                4000 + id % 30000,
                4000 + id % 30000
            ),
        ));
        let cpu = (id % 13) as f64 * 0.25;
        ev.push((
            end,
            format!("\"JOB_STATUS\" \"40\" {end} {id} {st} 0 0 {cpu:.4} {end} 0 {exit} {idx}\n"),
        ));
        ev.push((
            end + 100,
            format!("\"JOB_CLEAN\" \"40\" {} {id} {idx}\n", end + 100),
        ));
        let mut f = String::new();
        let _ = writeln!(
            f,
            "\"JOB_FINISH\" \"40\" {end} {id} {uid} 33554434 1 {submit} 0 0 {start} \"{user}\" \"{queue_now}\" \"\" \"\" \"\" \"hostA\" \"/home/{user}/run\" \"\" \"/home/{user}/out.%J\" \"\" \"{submit}.{id}\" 0 1 \"hostA\" {st} 100.0 \"{name}\" \"sleep {}\" {:.6} {:.6} {} 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 \"\" \"proj{}\" {exit} 1 \"\" {idx} {} {} \"\" \"\"",
            id % 97,
            cpu * 0.75,
            cpu * 0.25,
            3976 + id % 1000,
            id % 5,
            (id % 7) * 1024 * 100,
            11224
        );
        acct.push((end, f));
    }
    acct.sort_by_key(|(t, _)| *t);
    (ev, acct.into_iter().map(|(_, l)| l).collect())
}

fn write_file(path: &Path, parts: &[&str]) {
    let f = File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let mut w = BufWriter::with_capacity(1 << 20, f);
    for p in parts {
        w.write_all(p.as_bytes())
            .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
    w.flush()
        .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Generate `spec.jobs` finished jobs into `logdir` the way mbatchd would have logged
/// them: one job submitted per second, events in time order, a log switch every
/// `spec.per_file` JOB_CLEANs (history to `lsb.events.1`, older files moved up, the
/// records of live jobs carried into the new `lsb.events`), `lsb.acct` in finish order.
pub fn generate(logdir: &Path, spec: &Spec) -> Generated {
    let mut g = Generated::default();
    let acct_path = logdir.join("lsb.acct");
    let acct_file = File::create(&acct_path).unwrap_or_else(|e| panic!("create lsb.acct: {e}"));
    let mut acct = BufWriter::with_capacity(1 << 20, acct_file);
    // Pending events: (time, seq) -> (job, line); acct lines by (time, seq).
    let mut heap: BinaryHeap<Reverse<(i64, u64, u64, usize)>> = BinaryHeap::new();
    let mut lines: BTreeMap<usize, String> = BTreeMap::new();
    let mut acct_heap: BinaryHeap<Reverse<(i64, u64, usize)>> = BinaryHeap::new();
    let mut acct_lines: BTreeMap<usize, String> = BTreeMap::new();
    let mut seq: u64 = 0;
    let mut slot: usize = 0;
    // Records of jobs not yet cleaned (what a switch carries over).
    let mut live: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut cleans_left: BTreeMap<u64, u32> = BTreeMap::new();
    let mut period = String::with_capacity(1 << 24);
    let mut periods: Vec<PathBuf> = Vec::new();
    let mut carried = String::new();
    let mut cleans = 0u64;
    let mut last_time = T0;
    let header_placeholder = format!("#{:<37}\n", 0);

    let emit = |t: i64,
                job: u64,
                line: String,
                period: &mut String,
                live: &mut BTreeMap<u64, Vec<String>>,
                cleans_left: &mut BTreeMap<u64, u32>,
                carried: &mut String,
                periods: &mut Vec<PathBuf>,
                cleans: &mut u64,
                g: &mut Generated| {
        period.push_str(&line);
        g.events += line.lines().count() as u64;
        if line.starts_with("\"JOB_CLEAN\"") {
            let left = cleans_left.entry(job).or_insert(1);
            *left = left.saturating_sub(1);
            if *left == 0 {
                cleans_left.remove(&job);
                live.remove(&job);
            }
            *cleans += 1;
            if (*cleans).is_multiple_of(spec.per_file) {
                // A log switch: this period's history becomes an old file.
                let p = logdir.join(format!("period.{}", periods.len()));
                write_file(&p, &[&format!("#{t:<37}\n"), period]);
                periods.push(p);
                period.clear();
                carried.clear();
                for recs in live.values() {
                    for r in recs {
                        carried.push_str(r);
                    }
                }
                period.push_str(&format!("\"LOG_SWITCH\" \"40\" {t} {job}\n"));
            }
        } else if let Some(v) = live.get_mut(&job) {
            v.push(line);
        }
    };

    for id in 1..=spec.jobs {
        let submit = T0 + (id - 1) as i64;
        // Everything due before this submission.
        while let Some(Reverse((t, _, job, s))) = heap.peek().copied() {
            if t > submit {
                break;
            }
            heap.pop();
            let line = lines.remove(&s).unwrap_or_default();
            last_time = t;
            emit(
                t,
                job,
                line,
                &mut period,
                &mut live,
                &mut cleans_left,
                &mut carried,
                &mut periods,
                &mut cleans,
                &mut g,
            );
        }
        while let Some(Reverse((t, _, s))) = acct_heap.peek().copied() {
            if t > submit {
                break;
            }
            acct_heap.pop();
            let line = acct_lines.remove(&s).unwrap_or_default();
            acct.write_all(line.as_bytes())
                .unwrap_or_else(|e| panic!("write lsb.acct: {e}"));
            g.finishes += 1;
        }
        let (ev, fin) = job_records(id, spec);
        let n_clean = ev
            .iter()
            .filter(|(_, l)| l.starts_with("\"JOB_CLEAN\""))
            .count();
        cleans_left.insert(id, n_clean as u32);
        live.insert(id, Vec::new());
        for (t, l) in ev {
            seq += 1;
            slot += 1;
            lines.insert(slot, l);
            heap.push(Reverse((t, seq, id, slot)));
        }
        for l in fin {
            // The finish time is the record's third field.
            let t: i64 = l
                .split(' ')
                .nth(2)
                .and_then(|v| v.parse().ok())
                .unwrap_or(submit);
            seq += 1;
            slot += 1;
            acct_lines.insert(slot, l);
            acct_heap.push(Reverse((t, seq, slot)));
        }
    }
    // Drain: everything finishes; the last jobs are not cleaned yet (the clean period has
    // not passed when the log ends).
    let end_of_log = last_time.max(T0 + spec.jobs as i64) + 70;
    while let Some(Reverse((t, _, job, s))) = heap.pop() {
        let line = lines.remove(&s).unwrap_or_default();
        if t > end_of_log {
            continue;
        }
        emit(
            t,
            job,
            line,
            &mut period,
            &mut live,
            &mut cleans_left,
            &mut carried,
            &mut periods,
            &mut cleans,
            &mut g,
        );
    }
    while let Some(Reverse((_, _, s))) = acct_heap.pop() {
        let line = acct_lines.remove(&s).unwrap_or_default();
        acct.write_all(line.as_bytes())
            .unwrap_or_else(|e| panic!("write lsb.acct: {e}"));
        g.finishes += 1;
    }
    acct.flush()
        .unwrap_or_else(|e| panic!("write lsb.acct: {e}"));

    // Old files: the first period is the oldest (.N).
    let n = periods.len() as u64;
    for (k, p) in periods.iter().enumerate() {
        let to = logdir.join(format!("lsb.events.{}", n - k as u64));
        std::fs::rename(p, &to).unwrap_or_else(|e| panic!("rename: {e}"));
    }
    g.old_files = n;
    g.end_of_log = end_of_log;
    // The current file: header with the offset past the carried records.
    let current = if n == 0 {
        format!("#{:<78}\n{period}", 80)
    } else {
        let offset = header_placeholder.len() + carried.len();
        format!("#{offset:<37}\n{carried}{period}")
    };
    g.events += carried.lines().count() as u64;
    write_file(&logdir.join("lsb.events"), &[&current]);
    g
}

/// Replace the line `line_no` (1-based) of `path` with `text`.
pub fn damage_line(path: &Path, line_no: usize, text: &str) {
    let data = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read: {e}"));
    let mut out = String::with_capacity(data.len());
    for (i, l) in data.split_inclusive('\n').enumerate() {
        if i + 1 == line_no {
            out.push_str(text);
            out.push('\n');
        } else {
            out.push_str(l);
        }
    }
    std::fs::write(path, out).unwrap_or_else(|e| panic!("write: {e}"));
}

/// Append an incomplete record (a torn write) to `path`.
pub fn tear(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open: {e}"));
    f.write_all(text.as_bytes())
        .unwrap_or_else(|e| panic!("write: {e}"));
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
