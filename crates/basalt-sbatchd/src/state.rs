//! What sbatchd and a job's supervisor share besides the job database
//! ([`crate::db`]): the launch information, the job's events (each one report to
//! mbatchd), the supervisor's identity, and the job's control socket.
//!
//! `<state root>/ctl/<jobId>.<idx>.<attempt>` is the job's control socket
//! (kill/stop/resume/signal), served by its supervisor — a socket cannot live in the
//! database. sbatchd makes the `ctl` directory (0700: only sbatchd's user may
//! connect) when it starts; the supervisor binds the socket when it takes the job
//! and removes it when the job's top process is gone, and sbatchd removes what is
//! left with the job. (Before, each job had a directory `<state root>/<jobId>.<idx>.<attempt>/`
//! holding `ctl`; one left by an older sbatchd is still used for its job, and removed
//! when sbatchd starts and no job owns it.)

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The directory of the jobs' control sockets under the state root; also the
/// socket's name in a job directory of an older sbatchd.
pub const CTL_SOCKET: &str = basalt_runtime::SBD_CTL_DIR;

/// The job's control socket.
pub fn ctl_socket(root: &Path, key: crate::db::Key) -> PathBuf {
    root.join(CTL_SOCKET)
        .join(crate::paths::state_dir_name(key.0, key.1, key.2))
}

/// The job's directory under the state root as an older sbatchd made it (its
/// control socket inside).
pub fn legacy_job_dir(root: &Path, key: crate::db::Key) -> PathBuf {
    root.join(crate::paths::state_dir_name(key.0, key.1, key.2))
}

/// Make the control sockets' directory (0700) under the state root.
pub fn make_ctl_dir(root: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = root.join(CTL_SOCKET);
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let md = std::fs::symlink_metadata(&dir)?;
            if !md.is_dir() {
                return Err(std::io::Error::other(format!(
                    "{} is not a directory",
                    dir.display()
                )));
            }
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        }
        Err(e) => Err(e),
    }
}

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
    /// Kill the job when its memory passes the RSS limit (`LSB_JOB_MEMLIMIT=Y` or
    /// `LSB_MEMLIMIT_ENFORCE=Y`).
    pub enforce_memlimit: bool,
    /// Set the per-process RLIMIT_RSS as well when `enforce_memlimit`
    /// (`LSB_MEMLIMIT_ENFORCE=Y` without `LSB_JOB_MEMLIMIT=Y`). Absent in older files.
    #[serde(default)]
    pub os_memlimit_too: bool,
    /// Never run a job as root (`LSF_ROOT_REX` not set). Absent in older files.
    #[serde(default)]
    pub refuse_root: bool,
    /// The program that mails the output of jobs without `-o` (`LSB_MAILPROG`, else a
    /// sendmail found on this host); `None`: the output is kept next to the job file.
    #[serde(default)]
    pub mail_prog: Option<String>,
    /// `LSB_MAILTO` (`!U` = the job's user).
    #[serde(default)]
    pub mail_to: Option<String>,
    /// Where `echkpnt.<method>` and `erestart.<method>` are looked for before
    /// LSF_SERVERDIR (`LSB_ECHKPNT_METHOD_DIR`). Absent in older files.
    #[serde(default)]
    pub echkpnt_method_dir: Option<String>,
    /// Keep the method programs' output in the checkpoint directory
    /// (`LSB_ECHKPNT_KEEP_OUTPUT=Y`).
    #[serde(default)]
    pub echkpnt_keep_output: bool,
    /// How long a checkpoint or a restart may take, in seconds
    /// (`BASALT_CHKPNT_TIMEOUT`; 0 = the default, 60).
    #[serde(default)]
    pub chkpnt_timeout_secs: u64,
    /// The signal of the built-in `default` checkpoint method (`BASALT_CHKPNT_SIGNAL`,
    /// as written; None = SIGWINCH).
    #[serde(default)]
    pub chkpnt_signal: Option<String>,
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
    /// The job ended and its end goes to mbatchd now (a FINISHED report); its
    /// post-execution commands run after it (JOB_INCLUDE_POSTPROC=N).
    Ended,
    /// The post-execution commands of an `ended` job are done (`post_exec` is their
    /// wait status): the job's story ends.
    PostExec,
    /// A checkpoint ended (`chkpnt_ok`, `pid` of the echkpnt process, `message` why it
    /// failed).
    Chkpnt,
}

impl EventKind {
    /// The job's story ends with this event.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            EventKind::Finished | EventKind::StartFailed | EventKind::PostExec
        )
    }
}

/// One event of a job (one row of the `events` table, stored as JSON).
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
    /// `finished`: the job never ran, a pre-execution command failed (`exit_status` is
    /// its wait status).
    pub pre_exec_failed: bool,
    /// `finished` (JOB_INCLUDE_POSTPROC=Y) or `post_exec`: the worst wait status of the
    /// post-execution commands, run after the job.
    pub post_exec: Option<i32>,
    /// `chkpnt`: the checkpoint succeeded.
    pub chkpnt_ok: bool,
    /// `start_failed`: the job was to restart from its checkpoint and erestart failed.
    pub restart_failed: bool,
}

/// The longest wake-up line that carries events: one atomic write to a pipe
/// (`PIPE_BUF`), newline included.
pub const WAKE_LINE_MAX: usize = 4096;

/// The wake-up line a supervisor writes after recording `events` (numbered): `E `
/// and the events as one JSON array, then a newline; `None` when there are none or
/// they do not fit in [`WAKE_LINE_MAX`] (a plain newline then tells sbatchd to read
/// them from the job table). JSON never holds a raw newline.
pub fn wake_line(events: &[Event]) -> Option<String> {
    if events.is_empty() {
        return None;
    }
    let line = format!("E {}\n", serde_json::to_string(events).ok()?);
    (line.len() <= WAKE_LINE_MAX).then_some(line)
}

/// The events a wake-up line carries (without its newline) that sbatchd does not
/// have yet (it has every event up to `last`), if they follow `last` without a gap;
/// `None` for a plain wake-up, a line that does not parse, or a gap: sbatchd then
/// reads the job table. An empty list: the line brought nothing new.
pub fn parse_wake_line(line: &str, last: u64) -> Option<Vec<Event>> {
    following(serde_json::from_str(line.strip_prefix("E ")?).ok()?, last)
}

/// Of the events a wake-up brought, those sbatchd does not have yet (it has every
/// event up to `last`), if they follow `last` without a gap; `None` for a gap (sbatchd
/// then reads the job table). An empty list: the wake-up brought nothing new.
pub fn following(mut events: Vec<Event>, last: u64) -> Option<Vec<Event>> {
    events.retain(|e| e.seq > last);
    let contiguous = events
        .iter()
        .enumerate()
        .all(|(i, e)| e.seq == last + 1 + i as u64);
    contiguous.then_some(events)
}

/// A job supervisor's identity, safe against pid reuse: pid, start time and boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorId {
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    pub start: u64,
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`): after a reboot
    /// the same pid and start time may belong to another process.
    pub boot: String,
}

impl SupervisorId {
    /// The identity of a live process.
    pub fn of(pid: u32) -> Option<SupervisorId> {
        Some(SupervisorId {
            pid,
            start: process_start(pid)?,
            boot: boot_id(),
        })
    }

    /// Is this process still running (same pid, same start, same boot)?
    pub fn alive(&self) -> bool {
        self.boot == boot_id() && process_start(self.pid) == Some(self.start)
    }
}

/// This boot's id (empty when the kernel does not say).
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// The start time (clock ticks since boot) of a live process, None when it is gone.
pub fn process_start(pid: u32) -> Option<u64> {
    let p = procfs::process::Process::new(i32::try_from(pid).ok()?).ok()?;
    let stat = p.stat().ok()?;
    (stat.state != 'Z').then_some(stat.starttime)
}

/// The longest request sbatchd sends its supervisor with the job in it (a larger job
/// is sent by name only, and the supervisor reads it from the job table).
pub const HANDED_MAX: usize = 60 * 1024;

/// A job as sbatchd hands it to its supervisor right after recording it, so that the
/// supervisor need not read it back from the job table: what the table's new row holds.
#[derive(Debug, Clone)]
pub struct HandedJob {
    pub created: i64,
    /// The supervisor recorded with the job (the one sbatchd meant to hand it to).
    pub supervisor: Option<SupervisorId>,
    pub launch: Launch,
    pub spec: basalt_proto::sbatchd::JobSpec,
}

impl HandedJob {
    /// Split a request into the job's name and, when it carries it, the job.
    pub fn decode(req: &[u8]) -> (Option<&str>, Option<HandedJob>) {
        fn text(b: Option<&[u8]>) -> Option<&str> {
            b.and_then(|b| std::str::from_utf8(b).ok())
        }
        use prost::Message;
        let mut parts = req.splitn(5, |&b| b == b'\n');
        let name = parts.next().and_then(|n| std::str::from_utf8(n).ok());
        let job = (|| {
            let created: i64 = text(parts.next())?.parse().ok()?;
            let sup = text(parts.next())?;
            let supervisor = if sup == "-" {
                None
            } else {
                let mut w = sup.split(' ');
                Some(SupervisorId {
                    pid: w.next()?.parse().ok()?,
                    start: w.next()?.parse().ok()?,
                    boot: w.next()?.to_owned(),
                })
            };
            let launch_len: usize = text(parts.next())?.parse().ok()?;
            let rest = parts.next()?;
            let launch = serde_json::from_slice(rest.get(..launch_len)?).ok()?;
            let spec = basalt_proto::sbatchd::JobSpec::decode(rest.get(launch_len..)?).ok()?;
            Some(HandedJob {
                created,
                supervisor,
                launch,
                spec,
            })
        })();
        (name, job)
    }
}

/// The request that hands a job to its supervisor ([`HandedJob`], read back by
/// [`HandedJob::decode`]): `<name>\n<created>\n<supervisor: pid start boot, or
/// ->\n<launch JSON length>\n<launch JSON><job spec, protobuf>`; None when it would be
/// longer than [`HANDED_MAX`] (or the launch information cannot be written).
pub fn encode_handed(
    name: &str,
    created: i64,
    supervisor: Option<&SupervisorId>,
    launch: &Launch,
    spec: &basalt_proto::sbatchd::JobSpec,
) -> Option<Vec<u8>> {
    use prost::Message;
    let launch = serde_json::to_string(launch).ok()?;
    let sup = match supervisor {
        Some(s) if !s.boot.contains(char::is_whitespace) => {
            format!("{} {} {}", s.pid, s.start, s.boot)
        }
        _ => "-".to_owned(),
    };
    let head = format!("{name}\n{created}\n{sup}\n{}\n", launch.len());
    let len = head.len() + launch.len() + spec.encoded_len();
    if len > HANDED_MAX {
        return None;
    }
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(launch.as_bytes());
    spec.encode(&mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_as_json_keep_every_field() {
        let e = Event {
            seq: 3,
            kind: EventKind::Finished,
            exit_status: 768,
            term_reason: "TERM_OWNER".into(),
            pids: vec![1, 2],
            ..Default::default()
        };
        let json = serde_json::to_string(&e).expect("json");
        assert_eq!(serde_json::from_str::<Event>(&json).expect("back"), e);
        // Fields a later version adds are ignored; missing ones default.
        let old: Event =
            serde_json::from_str(r#"{"seq":1,"kind":"started","new_field":5}"#).expect("old");
        assert_eq!(old.kind, EventKind::Started);
        assert_eq!(old.pid, 0);
    }

    #[test]
    fn a_job_handed_to_the_supervisor_comes_out_as_it_went_in_or_goes_by_name() {
        let spec = basalt_proto::sbatchd::JobSpec {
            job_id: 7,
            idx: 3,
            attempt: 1,
            user: "alice".into(),
            job_file: b"#! /bin/sh\necho hi\n".to_vec(),
            ..Default::default()
        };
        let launch = Launch {
            host: "hostA".into(),
            ..Default::default()
        };
        let sup = SupervisorId {
            pid: 42,
            start: 99,
            boot: "b00t".into(),
        };
        let body = encode_handed("7.3.1", 1_795_000_000, Some(&sup), &launch, &spec).unwrap();
        let (name, job) = HandedJob::decode(&body);
        assert_eq!(name, Some("7.3.1"));
        let job = job.unwrap();
        assert_eq!(job.created, 1_795_000_000);
        assert_eq!(job.supervisor, Some(sup));
        assert_eq!(job.launch.host, "hostA");
        assert_eq!(job.spec, spec);
        // Without a recorded supervisor.
        let body = encode_handed("7.3.1", 5, None, &launch, &spec).unwrap();
        assert!(HandedJob::decode(&body).1.unwrap().supervisor.is_none());
        // A name alone (a job too large for one request): read from the job table.
        assert!(matches!(HandedJob::decode(b"7.3.1"), (Some("7.3.1"), None)));
        let big = basalt_proto::sbatchd::JobSpec {
            job_file: vec![b'x'; HANDED_MAX],
            ..spec.clone()
        };
        assert!(encode_handed("7.3.1", 5, None, &launch, &big).is_none());
        // A damaged job part is not taken: the table is read instead.
        let good = encode_handed("7.3.1", 5, None, &launch, &spec).unwrap();
        let text = String::from_utf8_lossy(&good).into_owned();
        let json_len = serde_json::to_string(&launch).unwrap().len();
        let bad = text.replacen(&format!("\n{json_len}\n"), "\n999999\n", 1);
        assert_eq!(HandedJob::decode(bad.as_bytes()).0, Some("7.3.1"));
        assert!(HandedJob::decode(bad.as_bytes()).1.is_none());
    }

    #[test]
    fn supervisor_identity() {
        let me = SupervisorId::of(std::process::id()).expect("own id");
        assert!(me.alive());
        assert!(!me.boot.is_empty());
        assert!(
            !SupervisorId {
                start: me.start + 1,
                ..me.clone()
            }
            .alive()
        );
        assert!(
            !SupervisorId {
                boot: "another-boot".into(),
                ..me
            }
            .alive()
        );
    }

    fn numbered(kind: EventKind, seq: u64) -> Event {
        Event {
            seq,
            kind,
            message: "a \"quoted\"\nmessage".into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_wake_up_line_carries_the_events_that_follow_what_sbatchd_has() {
        let evs = vec![
            numbered(EventKind::Started, 1),
            numbered(EventKind::Executing, 2),
        ];
        let line = wake_line(&evs).expect("fits");
        assert!(line.ends_with('\n'));
        assert_eq!(line.matches('\n').count(), 1, "one line: {line:?}");
        let text = line.trim_end_matches('\n');
        assert_eq!(parse_wake_line(text, 0), Some(evs.clone()));
        // Those sbatchd already has are dropped; all of them: nothing new.
        assert_eq!(parse_wake_line(text, 1), Some(evs[1..].to_vec()));
        assert_eq!(parse_wake_line(text, 2), Some(Vec::new()));
        // A gap (an event sbatchd has not seen before these): read the job table.
        let later = wake_line(&[numbered(EventKind::Finished, 4)]).expect("fits");
        assert_eq!(parse_wake_line(later.trim_end(), 2), None);
        // A plain wake-up and a damaged line: read the job table.
        assert_eq!(parse_wake_line("", 0), None);
        assert_eq!(parse_wake_line("E [{\"seq\":1", 0), None);
        assert_eq!(wake_line(&[]), None);
    }

    #[test]
    fn events_too_large_for_one_pipe_write_go_by_the_job_table() {
        let big = Event {
            seq: 1,
            kind: EventKind::Finished,
            message: "x".repeat(WAKE_LINE_MAX),
            ..Default::default()
        };
        assert_eq!(wake_line(&[big]), None);
    }
}
