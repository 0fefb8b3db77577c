//! The per-job state directory, shared by sbatchd and the job's supervisor.
//!
//! `<state root>/<jobId>.<idx>.<attempt>/` holds:
//! * `spec.pb` — the `JobSpec` as mbatchd sent it (protobuf), written by sbatchd;
//! * `launch.json` — what sbatchd adds ([`Launch`]), written by sbatchd;
//! * `supervisor` — `<pid> <starttime>` of the supervisor, written by it at start;
//! * `ctl` — the supervisor's control socket (kill/stop/resume/signal);
//! * `events` — the job's history as JSON lines ([`Event`]), appended by the
//!   supervisor; each line is one report to mbatchd with its sequence number. The
//!   final line (`finished` or `start_failed`) is fsynced before the supervisor exits.
//!
//! sbatchd removes the directory once mbatchd acknowledged the final report. A
//! restarted sbatchd rebuilds its job table from these directories.
//! All functions here do blocking I/O: sbatchd calls them from `spawn_blocking`.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub const SPEC_FILE: &str = "spec.pb";
pub const LAUNCH_FILE: &str = "launch.json";
pub const SUPERVISOR_FILE: &str = "supervisor";
pub const CTL_SOCKET: &str = "ctl";
pub const EVENTS_FILE: &str = "events";

/// What sbatchd tells the supervisor besides the job spec.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Launch {
    /// The execution host (as named in the cluster file).
    pub host: String,
    pub cluster: String,
    /// `admin@host` for the report's `Sender:` line.
    pub sender: String,
    pub envdir: String,
    #[serde(default)]
    pub bindir: Option<String>,
    #[serde(default)]
    pub serverdir: Option<String>,
    #[serde(default)]
    pub libdir: Option<String>,
    /// Seconds between SIGTERM and SIGKILL for limit kills.
    pub terminate_interval: u32,
    /// Milliseconds between resource-usage samples.
    pub sample_ms: u64,
    /// Kill the job when its memory passes the RSS limit (`LSB_JOB_MEMLIMIT=Y`).
    pub enforce_memlimit: bool,
}

/// Kinds of job events (one per mbatchd `ReportKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    #[default]
    Started,
    Executing,
    Rusage,
    State,
    Finished,
    StartFailed,
}

impl EventKind {
    /// The job's story ends with this event.
    pub fn is_final(self) -> bool {
        matches!(self, EventKind::Finished | EventKind::StartFailed)
    }
}

/// One line of the `events` file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Event {
    pub seq: u64,
    pub kind: EventKind,
    /// Seconds since the epoch.
    pub time: i64,
    pub pid: u32,
    pub pgid: u32,
    pub state: u32,
    pub reasons: u32,
    pub subreasons: u32,
    pub exit_status: i32,
    pub utime: f64,
    pub stime: f64,
    pub mem_kb: u64,
    pub swap_kb: u64,
    pub max_mem_kb: u64,
    pub avg_mem_kb: u64,
    pub pids: Vec<u32>,
    pub exec_uid: u32,
    pub exec_user: String,
    pub exec_home: String,
    pub exec_cwd: String,
    /// Where the job's output goes (the `-o` file or the spool file), for bpeek.
    pub out_path: String,
    pub message: String,
    pub term_reason: String,
}

impl Event {
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned());
        s.push('\n');
        s
    }

    pub fn from_line(line: &str) -> Option<Event> {
        serde_json::from_str(line.trim()).ok()
    }
}

/// Parse the complete lines of an events file's text; a torn last line (no newline)
/// is left for a later read. Returns the events and the number of bytes consumed.
pub fn parse_events(text: &str) -> (Vec<Event>, usize) {
    let mut events = Vec::new();
    let mut used = 0;
    for line in text.split_inclusive('\n') {
        if !line.ends_with('\n') {
            break;
        }
        used += line.len();
        if let Some(e) = Event::from_line(line) {
            events.push(e);
        }
    }
    (events, used)
}

/// Read the events appended after byte `offset`; returns them and the new offset.
pub fn read_events_from(dir: &Path, offset: u64) -> std::io::Result<(Vec<Event>, u64)> {
    use std::io::Seek;
    let mut f = match std::fs::File::open(dir.join(EVENTS_FILE)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), offset)),
        Err(e) => return Err(e),
    };
    f.seek(std::io::SeekFrom::Start(offset))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    let (events, used) = parse_events(&text);
    Ok((events, offset + used as u64))
}

/// Append one event line (used by sbatchd only when no supervisor can: the
/// supervisor never started, or died without its final line). Fsynced.
pub fn append_event(dir: &Path, event: &Event) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(EVENTS_FILE))?;
    f.write_all(event.to_line().as_bytes())?;
    f.sync_data()
}

/// Write a file atomically (temporary name, then rename).
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
    }
    std::fs::rename(&tmp, path)
}

/// The supervisor's identity as recorded in its `supervisor` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SupervisorId {
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a
    /// reused pid is not mistaken for the supervisor.
    pub start: u64,
}

pub fn write_supervisor_id(dir: &Path, id: SupervisorId) -> std::io::Result<()> {
    write_atomic(
        &dir.join(SUPERVISOR_FILE),
        format!("{} {}\n", id.pid, id.start).as_bytes(),
    )
}

pub fn read_supervisor_id(dir: &Path) -> Option<SupervisorId> {
    let text = std::fs::read_to_string(dir.join(SUPERVISOR_FILE)).ok()?;
    let mut it = text.split_whitespace();
    Some(SupervisorId {
        pid: it.next()?.parse().ok()?,
        start: it.next()?.parse().ok()?,
    })
}

/// The start time (clock ticks since boot) of a live process, None when it is gone.
pub fn process_start(pid: u32) -> Option<u64> {
    let p = procfs::process::Process::new(i32::try_from(pid).ok()?).ok()?;
    let stat = p.stat().ok()?;
    (stat.state != 'Z').then_some(stat.starttime)
}

/// Is the recorded supervisor still running?
pub fn supervisor_alive(id: SupervisorId) -> bool {
    process_start(id.pid) == Some(id.start)
}

/// Everything found in one state directory when sbatchd (re)starts.
#[derive(Debug, Clone)]
pub struct Found {
    pub dir: PathBuf,
    pub key: (u64, u32, u32),
    pub spec: basalt_proto::sbatchd::JobSpec,
    pub events: Vec<Event>,
    pub offset: u64,
    pub supervisor: Option<SupervisorId>,
}

/// Scan the state root for job directories.
pub fn scan(root: &Path) -> Vec<Found> {
    use prost::Message;
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(key) = name.to_str().and_then(crate::paths::parse_state_dir_name) else {
            continue;
        };
        let dir = entry.path();
        let spec = std::fs::read(dir.join(SPEC_FILE))
            .ok()
            .and_then(|b| basalt_proto::sbatchd::JobSpec::decode(b.as_slice()).ok());
        let Some(spec) = spec else {
            tracing::warn!(
                "state directory {} has no readable job spec; removing it",
                dir.display()
            );
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        };
        let (events, offset) = read_events_from(&dir, 0).unwrap_or((Vec::new(), 0));
        found.push(Found {
            supervisor: read_supervisor_id(&dir),
            dir,
            key,
            spec,
            events,
            offset,
        });
    }
    found.sort_by_key(|f| f.key);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_lines_round_trip_and_torn_tail() {
        let e = Event {
            seq: 3,
            kind: EventKind::Finished,
            exit_status: 768,
            term_reason: "TERM_OWNER".into(),
            pids: vec![1, 2],
            ..Default::default()
        };
        let line = e.to_line();
        assert!(line.ends_with('\n'));
        assert_eq!(Event::from_line(&line), Some(e.clone()));
        let text = format!("{line}{}", &line[..line.len() / 2]);
        let (events, used) = parse_events(&text);
        assert_eq!(events, vec![e]);
        assert_eq!(used, line.len());
    }

    #[test]
    fn files_in_a_directory() {
        let d = tempfile::tempdir().expect("tempdir");
        let a = Event {
            seq: 1,
            kind: EventKind::Started,
            pid: 5,
            ..Default::default()
        };
        append_event(d.path(), &a).expect("append");
        let (ev, off) = read_events_from(d.path(), 0).expect("read");
        assert_eq!(ev, vec![a.clone()]);
        let b = Event {
            seq: 2,
            kind: EventKind::Executing,
            ..Default::default()
        };
        append_event(d.path(), &b).expect("append");
        let (ev2, _) = read_events_from(d.path(), off).expect("read");
        assert_eq!(ev2, vec![b]);
        let me = SupervisorId {
            pid: std::process::id(),
            start: process_start(std::process::id()).expect("own start"),
        };
        write_supervisor_id(d.path(), me).expect("write");
        assert_eq!(read_supervisor_id(d.path()), Some(me));
        assert!(supervisor_alive(me));
        assert!(!supervisor_alive(SupervisorId {
            start: me.start + 1,
            ..me
        }));
    }
}
