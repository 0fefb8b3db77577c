//! Login sessions from the utmp file (glibc's `struct utmp`, 384 bytes on
//! Linux), for the `ls` and `it` load indices.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

const RECORD: usize = 384;
const USER_PROCESS: i16 = 7;
const LINE_OFF: usize = 8;
const LINE_LEN: usize = 32;
const PID_OFF: usize = 4;

/// One login session: the terminal it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub line: String,
    pub pid: i32,
}

/// Parse utmp records; only live user sessions (USER_PROCESS) are returned.
pub fn parse(bytes: &[u8]) -> Vec<Session> {
    bytes
        .chunks_exact(RECORD)
        .filter_map(|rec| {
            let ut_type = i16::from_ne_bytes([rec[0], rec[1]]);
            if ut_type != USER_PROCESS {
                return None;
            }
            let pid = i32::from_ne_bytes([
                rec[PID_OFF],
                rec[PID_OFF + 1],
                rec[PID_OFF + 2],
                rec[PID_OFF + 3],
            ]);
            let raw = &rec[LINE_OFF..LINE_OFF + LINE_LEN];
            let end = raw.iter().position(|b| *b == 0).unwrap_or(LINE_LEN);
            let line = String::from_utf8_lossy(&raw[..end]).into_owned();
            (!line.is_empty()).then_some(Session { line, pid })
        })
        .collect()
}

/// The live login sessions recorded in `path` (empty when there is no utmp).
pub fn login_sessions(path: &Path) -> Vec<Session> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    parse(&bytes)
        .into_iter()
        .filter(|s| s.pid <= 0 || Path::new("/proc").join(s.pid.to_string()).exists())
        .collect()
}

/// Minutes since the most recent input on any session's terminal (the access
/// time of `/dev/<line>`), or None when no terminal can be examined.
pub fn idle_minutes(sessions: &[Session]) -> Option<f64> {
    let now = SystemTime::now();
    sessions
        .iter()
        .filter_map(|s| {
            let dev = PathBuf::from("/dev").join(&s.line);
            let atime = std::fs::metadata(dev).ok()?.accessed().ok()?;
            Some(now.duration_since(atime).unwrap_or_default().as_secs_f64() / 60.0)
        })
        .reduce(f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ut_type: i16, pid: i32, line: &str) -> Vec<u8> {
        let mut r = vec![0u8; RECORD];
        r[0..2].copy_from_slice(&ut_type.to_ne_bytes());
        r[PID_OFF..PID_OFF + 4].copy_from_slice(&pid.to_ne_bytes());
        r[LINE_OFF..LINE_OFF + line.len()].copy_from_slice(line.as_bytes());
        r
    }

    #[test]
    fn only_user_processes_count() {
        let mut bytes = record(USER_PROCESS, 10, "pts/0");
        bytes.extend(record(6, 11, "tty1")); // LOGIN_PROCESS
        bytes.extend(record(USER_PROCESS, 12, "pts/1"));
        bytes.extend([1, 2, 3]); // a torn tail is ignored
        let s = parse(&bytes);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].line, "pts/1");
    }
}
