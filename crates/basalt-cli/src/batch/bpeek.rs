//! `bpeek [-f] [-q queue] [-m host] [-J name] [job_ID]`: the output of a running job
//! so far, read from the sbatchd of its first execution host; `-f` follows it until
//! the job finishes. The header is printed with the first output sbatchd gives; when
//! sbatchd refuses (another user's job), only the refusal is printed, as LSF's
//! `lsb_perror("Job <N>")` does. A job forwarded to another cluster (MultiCluster) is
//! peeked at there: bpeek says where.

use super::opts::{Item, Spec};
use super::{job_ref_str, state_of};
use basalt_core::job::JobState;
use basalt_proto::mbatchd::{JobInfo, JobRef, JobsRequest};
use basalt_proto::sbatchd::PeekRequest;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// bpeek's usage text.
pub const USAGE: &str = "Usage: bpeek [-h] [-V] [-f] [-q queue_name | -m host_name | -J job_name | job_ID | \"job_ID[index]\"]\n";

/// The header bpeek prints before the output.
pub const HEADER: &str = "<< output from stdout >>";

/// Why a job cannot be peeked at, or None when it can.
pub fn not_peekable(j: &JobInfo) -> Option<String> {
    let id = super::job_id_str(j);
    match state_of(j) {
        Some(s) if s.is_pending() => Some(format!("Job <{id}>: Job has not started yet")),
        Some(s) if s.is_finished() => Some(format!("Job <{id}>: Job has already finished")),
        _ if j.exec_hosts.is_empty() => Some(format!("Job <{id}>: Job has not started yet")),
        _ => remote_cluster(j).map(|(cluster, remote_id)| {
            let there = if remote_id > 0 {
                format!(" as job <{remote_id}>")
            } else {
                String::new()
            };
            format!(
                "Job <{id}>: Job is running in remote cluster <{cluster}>{there}; run bpeek there"
            )
        }),
    }
}

/// The cluster a started job runs in when that is another one (MultiCluster: it was
/// forwarded there; its hosts are `host@cluster`), with its job ID there (0 = not known).
fn remote_cluster(j: &JobInfo) -> Option<(String, u64)> {
    if !j.forward_cluster.is_empty() {
        return Some((j.forward_cluster.clone(), j.remote_job_id));
    }
    let (_, cluster) = j.exec_hosts.first()?.split_once('@')?;
    Some((cluster.to_owned(), j.remote_job_id))
}

/// The refusal line: `Job <N>: <reason>` (LSF's `lsb_perror("Job <N>")`).
pub fn refusal(job_id: &str, reason: &str) -> String {
    format!("Job <{job_id}>: {reason}")
}

/// The part of `now` not printed yet, given what was printed (`seen` bytes). If the
/// output shrank (a new attempt), everything is new.
pub fn new_bytes(now: &[u8], seen: usize) -> &[u8] {
    if now.len() >= seen { &now[seen..] } else { now }
}

/// `bpeek`.
pub fn main(args: Vec<String>) -> ExitCode {
    let spec = Spec {
        flags: &["h", "V", "f"],
        valued: &["q", "m", "J"],
    };
    let items = match super::parse_args("bpeek", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut follow = false;
    let (mut queue, mut host, mut name) = (String::new(), String::new(), String::new());
    let mut ids = Vec::new();
    for it in items {
        match it {
            Item::Arg(a) => ids.push(a),
            Item::Opt(n, v) => match n.as_str() {
                "f" => follow = true,
                "q" => queue = v.unwrap_or_default(),
                "m" => host = v.unwrap_or_default(),
                "J" => name = v.unwrap_or_default(),
                _ => {}
            },
        }
    }
    let refs = match super::parse_job_ids(&ids) {
        Ok(r) => r,
        Err(bad) => {
            eprintln!("{bad}: Illegal job ID.");
            return crate::fail();
        }
    };
    if refs.len() > 1 {
        eprint!("{USAGE}");
        return crate::fail();
    }
    let config = match super::load_config("bpeek") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut mbd = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let query = |ids: Vec<JobRef>| JobsRequest {
            user: if ids.is_empty() {
                String::new()
            } else {
                "all".into()
            },
            ids,
            queue: queue.clone(),
            host: host.clone(),
            job_name: name.clone(),
            states: 0,
            reason_hosts: false,
        };
        let reply = match mbd.jobs(query(refs.clone())).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                return crate::fail();
            }
        };
        if let Some(r) = reply.not_found.first() {
            eprintln!("Job <{}>: No matching job found", job_ref_str(r));
            return crate::fail();
        }
        // Without an id: the caller's most recent running job.
        let job = if refs.is_empty() {
            reply
                .jobs
                .iter()
                .filter(|j| state_of(j).is_some_and(JobState::is_started))
                .max_by_key(|j| (j.submit_time, j.job_id, j.idx))
                .cloned()
        } else {
            reply.jobs.first().cloned()
        };
        let Some(job) = job else {
            eprintln!("No unfinished job found");
            return crate::fail();
        };
        if let Some(why) = not_peekable(&job) {
            eprintln!("{why}");
            return crate::fail();
        }
        let Some(exec_host) = job.exec_hosts.first().cloned() else {
            return crate::fail();
        };
        let mut sbd = match super::connect_sbatchd(&config, &exec_host).await {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{e}");
                return crate::fail();
            }
        };
        let peek = PeekRequest {
            job_id: job.job_id,
            idx: job.idx,
            tail_bytes: 0,
        };
        let id = super::job_id_str(&job);
        // The header goes out with the first answer, never before a refusal.
        let mut header = false;
        let mut seen = 0usize;
        let me = JobRef {
            job_id: job.job_id,
            idx: job.idx,
            has_idx: job.idx > 0,
        };
        loop {
            match sbd.peek(peek).await {
                Ok(r) => {
                    let out = r.into_inner().output;
                    let fresh = new_bytes(&out, seen);
                    let mut stdout = std::io::stdout().lock();
                    if !header {
                        let _ = writeln!(stdout, "{HEADER}");
                        header = true;
                    }
                    let _ = stdout.write_all(fresh);
                    let _ = stdout.flush();
                    seen = out.len();
                }
                Err(s) => {
                    if !follow || !header {
                        eprintln!("{}", refusal(&id, s.message()));
                        return crate::fail();
                    }
                    // The job most likely finished and sbatchd let go of it.
                    return ExitCode::SUCCESS;
                }
            }
            if !follow {
                return ExitCode::SUCCESS;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            let still_running = match mbd.jobs(query(vec![me])).await {
                Ok(r) => r
                    .into_inner()
                    .jobs
                    .first()
                    .is_some_and(|j| state_of(j).is_some_and(|s| !s.is_finished())),
                Err(_) => false,
            };
            if !still_running {
                if let Ok(r) = sbd.peek(peek).await {
                    let out = r.into_inner().output;
                    let _ = std::io::stdout().write_all(new_bytes(&out, seen));
                }
                return ExitCode::SUCCESS;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::job::status;

    #[test]
    fn peekable_states() {
        let mut j = JobInfo {
            job_id: 5,
            state: status::PEND,
            ..Default::default()
        };
        assert_eq!(
            not_peekable(&j).as_deref(),
            Some("Job <5>: Job has not started yet")
        );
        j.state = status::DONE;
        assert_eq!(
            not_peekable(&j).as_deref(),
            Some("Job <5>: Job has already finished")
        );
        j.state = status::RUN;
        j.exec_hosts = vec!["vm".into()];
        assert_eq!(not_peekable(&j), None);
        // Forwarded to another cluster: its sbatchd is not ours to ask.
        j.exec_hosts = vec!["hostA@east".into(), "hostA@east".into()];
        assert_eq!(
            not_peekable(&j).as_deref(),
            Some("Job <5>: Job is running in remote cluster <east>; run bpeek there")
        );
        j.forward_cluster = "east".into();
        j.remote_job_id = 12;
        assert_eq!(
            not_peekable(&j).as_deref(),
            Some("Job <5>: Job is running in remote cluster <east> as job <12>; run bpeek there")
        );
    }

    #[test]
    fn a_refusal_names_the_job_as_lsb_perror_does() {
        assert_eq!(
            refusal("101", "User permission denied"),
            "Job <101>: User permission denied"
        );
        assert_eq!(
            refusal("7[2]", "No matching job found"),
            "Job <7[2]>: No matching job found"
        );
    }

    #[test]
    fn only_new_output_is_printed() {
        assert_eq!(new_bytes(b"abcdef", 3), b"def");
        assert_eq!(new_bytes(b"ab", 3), b"ab");
        assert_eq!(new_bytes(b"abc", 3), b"");
    }
}
