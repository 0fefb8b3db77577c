//! A job's processes as the tests see them in `/proc`: the process group a job wrote to
//! a file, the states of its processes (`T` when stopped), and the JOB_STATUS records
//! of a job in an lsb.events file.

use crate::text::event_fields;
use crate::wait::wait_for;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

/// The number a job wrote to `path` (`echo $$ > name.pgid`), once it is there.
pub fn wait_pgid_file(path: &Path, deadline: Duration) -> Result<i32> {
    wait_for(
        &format!("{} to be written", path.display()),
        deadline,
        || {
            let v = std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok());
            (v, String::new())
        },
    )
}

/// The states (`/proc/<pid>/stat` field 3) of every process in process group `pgid`.
pub fn group_states(pgid: i32) -> Vec<(i32, char)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let (Some(state), Some(pg)) = (f.first(), f.get(2).and_then(|v| v.parse::<i32>().ok()))
        else {
            continue;
        };
        if pg == pgid {
            out.push((pid, state.chars().next().unwrap_or('?')));
        }
    }
    out
}

/// Wait until every process of group `pgid` is stopped (`T`), or none is.
pub fn wait_group(pgid: i32, stopped: bool, deadline: Duration) -> Result<()> {
    let what = if stopped { "stopped (T)" } else { "running" };
    wait_for(
        &format!("process group {pgid} to be {what}"),
        deadline,
        || {
            let s = group_states(pgid);
            let ok = !s.is_empty() && s.iter().all(|(_, st)| (*st == 'T') == stopped);
            (ok.then_some(()), format!("{s:?}"))
        },
    )
}

/// The JOB_STATUS records of job `id` in the lsb.events file `events`: (status,
/// reasons, subreasons), in order.
pub fn job_statuses(events: &Path, id: u64) -> Vec<(u32, u32, u32)> {
    let text = std::fs::read_to_string(events).unwrap_or_default();
    text.lines()
        .map(event_fields)
        .filter(|f| f.first().map(String::as_str) == Some("JOB_STATUS"))
        .filter(|f| f.get(3).and_then(|v| v.parse::<u64>().ok()) == Some(id))
        .filter_map(|f| {
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<u32>().ok());
            Some((n(4)?, n(5)?, n(6)?))
        })
        .collect()
}
