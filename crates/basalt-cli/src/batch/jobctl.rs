//! Job control: `bkill bstop bresume brequeue bmig bchkpnt bswitch btop bbot brun` (cli-output.md §7,
//! cli-contract.md §5–6). One line per job on stdout (`Job <N> is being terminated`),
//! failures as `Job <N>: <reason>` on stderr and exit 255 if any failed.

use super::opts::{Item, Spec};
use super::{job_ref_str, parse_job_ids};
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use basalt_proto::mbatchd::{
    ForceRequest, JobCtlReply, JobRef, JobsRequest, MoveRequest, SignalKind, SignalRequest,
    SwitchRequest,
};
use basalt_runtime::AuthChannel as Channel;
use std::process::ExitCode;

/// What a signalling command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Kill,
    Signal,
    Stop,
    Resume,
    Requeue,
    Migrate,
    Chkpnt,
}

impl Action {
    /// The verb of the confirmation line.
    pub fn verb(self) -> &'static str {
        match self {
            Action::Kill => "terminated",
            Action::Signal => "signaled",
            Action::Stop => "stopped",
            Action::Resume => "resumed",
            Action::Requeue => "requeued",
            Action::Migrate => "migrated",
            Action::Chkpnt => "checkpointed",
        }
    }

    fn kind(self) -> SignalKind {
        match self {
            Action::Kill => SignalKind::Kill,
            Action::Signal => SignalKind::Signal,
            Action::Stop => SignalKind::Stop,
            Action::Resume => SignalKind::Resume,
            Action::Requeue => SignalKind::Requeue,
            Action::Migrate => SignalKind::Migrate,
            Action::Chkpnt => SignalKind::Chkpnt,
        }
    }
}

/// Split a control reply into stdout and stderr text. `ok_line` makes the line of a
/// job that succeeded (given its id and the result's detail).
pub fn results_text(
    reply: &JobCtlReply,
    ok_line: impl Fn(&str, &str) -> String,
) -> (String, String, bool) {
    let mut out = String::new();
    let mut err = String::new();
    let mut failed = false;
    for r in &reply.results {
        let id = r.id.as_ref().map(job_ref_str).unwrap_or_default();
        if r.ok {
            out.push_str(&ok_line(&id, &r.detail));
            out.push('\n');
        } else {
            failed = true;
            err.push_str(&format!("Job <{id}>: {}\n", r.message));
        }
    }
    (out, err, failed)
}

/// Print a control reply and return the exit code.
fn finish(reply: &JobCtlReply, ok_line: impl Fn(&str, &str) -> String) -> ExitCode {
    let (out, err, failed) = results_text(reply, ok_line);
    print!("{out}");
    eprint!("{err}");
    if failed {
        crate::fail()
    } else {
        ExitCode::SUCCESS
    }
}

/// Filters shared by the job-control commands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
}

impl Filters {
    /// The query for the unfinished jobs these filters select.
    fn unfinished_jobs(&self) -> JobsRequest {
        JobsRequest {
            ids: vec![],
            user: self.user.clone().unwrap_or_default(),
            queue: self.queue.clone().unwrap_or_default(),
            host: self.host.clone().unwrap_or_default(),
            job_name: self.job_name.clone().unwrap_or_default(),
            states: 0,
            reason_hosts: false,
        }
    }

    fn any(&self) -> bool {
        self.user.is_some()
            || self.queue.is_some()
            || self.host.is_some()
            || self.job_name.is_some()
    }
}

/// The most recently submitted of the caller's unfinished jobs that match `f` (LSF's rule
/// for a job command given filters but no job id).
async fn most_recent(
    client: &mut MbatchdClient<Channel>,
    f: &Filters,
) -> Result<Option<JobRef>, tonic::Status> {
    most_recent_where(client, f, |_| true).await
}

/// The most recently submitted unfinished job of the caller matching `f` and `keep`.
async fn most_recent_where(
    client: &mut MbatchdClient<Channel>,
    f: &Filters,
    keep: impl Fn(&basalt_proto::mbatchd::JobInfo) -> bool,
) -> Result<Option<JobRef>, tonic::Status> {
    let reply = client.jobs(f.unfinished_jobs()).await?.into_inner();
    Ok(reply
        .jobs
        .iter()
        .filter(|j| keep(j))
        .max_by_key(|j| (j.submit_time, j.job_id, j.idx))
        .map(|j| JobRef {
            job_id: j.job_id,
            idx: j.idx,
            has_idx: j.idx > 0,
        }))
}

/// Every unfinished job of the caller matching `f` (job id 0).
async fn all_matching(
    client: &mut MbatchdClient<Channel>,
    f: &Filters,
) -> Result<Vec<JobRef>, tonic::Status> {
    let reply = client.jobs(f.unfinished_jobs()).await?.into_inner();
    Ok(reply
        .jobs
        .iter()
        .map(|j| JobRef {
            job_id: j.job_id,
            idx: j.idx,
            has_idx: j.idx > 0,
        })
        .collect())
}

fn filters_from(name: &str, value: Option<String>, f: &mut Filters) -> bool {
    match name {
        "u" => f.user = value,
        "q" => f.queue = value,
        "m" => f.host = value,
        "J" => f.job_name = value,
        _ => return false,
    }
    true
}

const SIGNAL_USAGE_TAIL: &str = "[-q queue_name] [-u user_name | -u all] [-m host_name] [-J job_name]\n             [job_ID | 0 | \"job_ID[index]\" ...]\n";

/// `bkill`, `bstop`, `bresume`.
pub fn signal_main(cmd: &str, args: Vec<String>) -> ExitCode {
    let (spec, usage) = match cmd {
        "bkill" => (
            Spec {
                flags: &["h", "V", "r", "d"],
                valued: &["s", "q", "u", "m", "J"],
            },
            format!("Usage: bkill [-h] [-V] [-r | -d | -s signal] {SIGNAL_USAGE_TAIL}"),
        ),
        "bmig" => (
            Spec {
                flags: &["h", "V", "f"],
                valued: &["m", "u", "J"],
            },
            "Usage: bmig [-h] [-V] [-f] [-J job_name] [-m \"host_name ...\" | -m \"host_group ...\"]\n            [-u user_name | -u all] [job_ID | 0 | \"job_ID[index_list]\" ...]\n".to_owned(),
        ),
        "bchkpnt" => (
            Spec {
                flags: &["h", "V", "f", "k"],
                valued: &["p", "q", "u", "m", "J"],
            },
            format!("Usage: bchkpnt [-h] [-V] [-f] [-k] [-p minutes] {SIGNAL_USAGE_TAIL}"),
        ),
        "brequeue" => (
            Spec {
                flags: &["h", "V", "d", "e", "r", "a", "H"],
                valued: &["u", "J"],
            },
            "Usage: brequeue [-h] [-V] [-J job_name | -J \"job_name[index_list]\"] [-u user_name | -u all]\n                [-d] [-e] [-r] [-a] [-H] [job_ID | \"job_ID[index_list]\" ...]\n".to_owned(),
        ),
        _ => (
            Spec {
                flags: &["h", "V"],
                valued: &["q", "u", "m", "J"],
            },
            format!("Usage: {cmd} [-h] [-V] {SIGNAL_USAGE_TAIL}"),
        ),
    };
    let items = match super::parse_args(cmd, &args, &spec, &usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut action = match cmd {
        "bstop" => Action::Stop,
        "bresume" => Action::Resume,
        "brequeue" => Action::Requeue,
        "bmig" => Action::Migrate,
        "bchkpnt" => Action::Chkpnt,
        _ => Action::Kill,
    };
    let chkpnt = action == Action::Chkpnt;
    let (mut chkpnt_kill, mut force) = (false, false);
    let mut chkpnt_period: Option<i64> = None;
    let migrate = action == Action::Migrate;
    let mut migrate_hosts: Vec<String> = Vec::new();
    let requeue = action == Action::Requeue;
    let (mut done, mut exit, mut running, mut hold) = (false, false, false, false);
    let mut f = Filters::default();
    let mut signal = String::new();
    let (mut remove, mut as_done) = (false, false);
    let mut ids = Vec::new();
    for it in items {
        match it {
            Item::Arg(a) => ids.push(a),
            Item::Opt(n, v) => {
                // bmig -m: where the job goes, not a filter.
                if migrate && n == "m" {
                    migrate_hosts
                        .extend(v.unwrap_or_default().split_whitespace().map(str::to_owned));
                    continue;
                }
                if filters_from(&n, v.clone(), &mut f) {
                    continue;
                }
                match n.as_str() {
                    "f" => force = true,
                    "k" if chkpnt => chkpnt_kill = true,
                    "p" if chkpnt => {
                        let v = v.unwrap_or_default();
                        match v.trim().parse::<i64>() {
                            Ok(m) if m >= 0 => chkpnt_period = Some(m.saturating_mul(60)),
                            _ => {
                                eprintln!("{v}: Bad checkpoint period value");
                                return crate::fail();
                            }
                        }
                    }
                    "d" if requeue => done = true,
                    "e" => exit = true,
                    "r" if requeue => running = true,
                    "a" => (done, exit, running) = (true, true, true),
                    "H" => hold = true,
                    "r" => remove = true,
                    "d" => as_done = true,
                    "s" => {
                        let v = v.unwrap_or_default();
                        let Some(num) = basalt_core::job::signal_number(&v) else {
                            eprintln!("{v}: Illegal signal value");
                            return crate::fail();
                        };
                        signal = basalt_core::job::signal_name(num)
                            .map(str::to_owned)
                            .unwrap_or_else(|| num.to_string());
                        action = Action::Signal;
                    }
                    _ => {}
                }
            }
        }
    }
    let refs = match parse_job_ids(&ids) {
        Ok(r) => r,
        Err(bad) => {
            eprintln!("{bad}: Illegal job ID.");
            return crate::fail();
        }
    };
    if refs.is_empty() && !f.any() {
        eprint!("{usage}");
        return crate::fail();
    }
    let config = match super::load_config(cmd) {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let refs = if refs.is_empty() {
            // bchkpnt: the most recent started checkpointable job (LSF).
            let found = if chkpnt {
                most_recent_where(&mut client, &f, |j| {
                    !j.chkpnt_dir.is_empty() && !j.exec_hosts.is_empty()
                })
                .await
            } else {
                most_recent(&mut client, &f).await
            };
            match found {
                Ok(Some(r)) => vec![r],
                Ok(None) => {
                    eprintln!("No unfinished job found");
                    return crate::fail();
                }
                Err(s) => {
                    eprintln!("{}", super::status_text(&s));
                    return crate::fail();
                }
            }
        } else {
            refs
        };
        let req = SignalRequest {
            ids: refs,
            kind: action.kind() as i32,
            signal,
            remove,
            as_done,
            user: f.user.unwrap_or_default(),
            queue: f.queue.unwrap_or_default(),
            host: f.host.unwrap_or_default(),
            job_name: f.job_name.unwrap_or_default(),
            hold,
            requeue_done: done,
            requeue_exit: exit,
            // Without -d -e -r -a: the running (and suspended) jobs.
            requeue_running: running || (requeue && !done && !exit),
            migrate_hosts,
            chkpnt_kill,
            chkpnt_period,
            chkpnt_force: force,
        };
        match client.signal(req).await {
            Ok(r) => {
                let reply = r.into_inner();
                if reply.results.is_empty() {
                    eprintln!("No unfinished job found");
                    return crate::fail();
                }
                finish(&reply, |id, _| {
                    format!("Job <{id}> is being {}", action.verb())
                })
            }
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                crate::fail()
            }
        }
    })
}

/// `bswitch [-q q] [-u u] [-m h] [-J name] destination_queue [job_ID ... | 0]`.
pub fn bswitch_main(args: Vec<String>) -> ExitCode {
    let usage = "Usage: bswitch [-h] [-V] [-q queue_name] [-u user_name | -u all] [-m host_name]\n               [-J job_name] destination_queue [job_ID | 0 | \"job_ID[index]\" ...]\n";
    let spec = Spec {
        flags: &["h", "V"],
        valued: &["q", "u", "m", "J"],
    };
    let items = match super::parse_args("bswitch", &args, &spec, usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut f = Filters::default();
    let mut words = Vec::new();
    for it in items {
        match it {
            Item::Arg(a) => words.push(a),
            Item::Opt(n, v) => {
                filters_from(&n, v, &mut f);
            }
        }
    }
    let Some((dest, ids)) = words.split_first() else {
        eprint!("{usage}");
        return crate::fail();
    };
    let dest = dest.clone();
    let refs = match parse_job_ids(ids) {
        Ok(r) => r,
        Err(bad) => {
            eprintln!("{bad}: Illegal job ID.");
            return crate::fail();
        }
    };
    if refs.is_empty() && !f.any() {
        eprint!("{usage}");
        return crate::fail();
    }
    let config = match super::load_config("bswitch") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let resolved = if refs.is_empty() {
            most_recent(&mut client, &f)
                .await
                .map(|r| r.into_iter().collect::<Vec<_>>())
        } else if refs.iter().any(|r| r.job_id == 0) {
            all_matching(&mut client, &f).await
        } else {
            Ok(refs)
        };
        let refs = match resolved {
            Ok(r) if r.is_empty() => {
                eprintln!("No unfinished job found");
                return crate::fail();
            }
            Ok(r) => r,
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                return crate::fail();
            }
        };
        let req = SwitchRequest {
            ids: refs,
            queue: dest.clone(),
        };
        match client.switch(req).await {
            Ok(r) => finish(&r.into_inner(), |id, detail| {
                let q = if detail.is_empty() {
                    dest.as_str()
                } else {
                    detail
                };
                format!("Job <{id}> is switched to queue <{q}>")
            }),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                crate::fail()
            }
        }
    })
}

/// `btop` / `bbot`: `job_ID | "job_ID[index]" [position]`.
pub fn move_main(cmd: &str, args: Vec<String>) -> ExitCode {
    let usage = format!("Usage: {cmd} [-h] [-V] job_ID | \"job_ID[index]\" [position]\n");
    let spec = Spec {
        flags: &["h", "V"],
        valued: &[],
    };
    let items = match super::parse_args(cmd, &args, &spec, &usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let words: Vec<String> = items
        .into_iter()
        .filter_map(|i| match i {
            Item::Arg(a) => Some(a),
            Item::Opt(..) => None,
        })
        .collect();
    if words.is_empty() || words.len() > 2 {
        eprint!("{usage}");
        return crate::fail();
    }
    let id = match super::parse_job_id(&words[0]) {
        Some(r) if r.len() == 1 && r[0].job_id != 0 => r[0],
        _ => {
            eprintln!("{}: Illegal job ID.", words[0]);
            return crate::fail();
        }
    };
    let position: u32 = match words.get(1) {
        None => 1,
        Some(p) => match p.parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                eprintln!("{p}: Position value must be a positive integer");
                return crate::fail();
            }
        },
    };
    let from_bottom = cmd == "bbot";
    let config = match super::load_config(cmd) {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let req = MoveRequest {
            id: Some(id),
            position,
            from_bottom,
        };
        let side = if from_bottom { "bottom" } else { "top" };
        match client.r#move(req).await {
            Ok(r) => finish(&r.into_inner(), |id, detail| {
                let pos = if detail.is_empty() {
                    position.to_string()
                } else {
                    detail.to_owned()
                };
                format!("Job <{id}> has been moved to position {pos} from {side}.")
            }),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                crate::fail()
            }
        }
    })
}

/// `brun [-f] -m "host ..." job_ID`.
pub fn brun_main(args: Vec<String>) -> ExitCode {
    let usage = "Usage: brun [-h] [-V] [-f] -m \"host_name ...\" job_ID | \"job_ID[index]\"\n";
    let spec = Spec {
        flags: &["h", "V", "f"],
        valued: &["m"],
    };
    let items = match super::parse_args("brun", &args, &spec, usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut hosts: Vec<String> = Vec::new();
    let mut force = false;
    let mut words = Vec::new();
    for it in items {
        match it {
            Item::Arg(a) => words.push(a),
            Item::Opt(n, v) if n == "m" => {
                hosts.extend(v.unwrap_or_default().split_whitespace().map(str::to_owned))
            }
            Item::Opt(n, _) if n == "f" => force = true,
            Item::Opt(..) => {}
        }
    }
    if hosts.is_empty() || words.len() != 1 {
        eprint!("{usage}");
        return crate::fail();
    }
    let id = match super::parse_job_id(&words[0]) {
        Some(r) if r.len() == 1 && r[0].job_id != 0 => r[0],
        _ => {
            eprintln!("{}: Illegal job ID.", words[0]);
            return crate::fail();
        }
    };
    let config = match super::load_config("brun") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let req = ForceRequest {
            id: Some(id),
            hosts,
            force,
        };
        match client.force(req).await {
            Ok(r) => finish(&r.into_inner(), |id, _| {
                format!("Job <{id}> is being forced to run.")
            }),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                crate::fail()
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_proto::mbatchd::JobResult;

    fn res(id: u64, idx: u32, ok: bool, msg: &str, detail: &str) -> JobResult {
        JobResult {
            id: Some(JobRef {
                job_id: id,
                idx,
                has_idx: idx > 0,
            }),
            ok,
            message: msg.into(),
            detail: detail.into(),
        }
    }

    #[test]
    fn kill_lines() {
        let reply = JobCtlReply {
            results: vec![
                res(104, 0, true, "", ""),
                res(105, 0, false, "No matching job found", ""),
                res(106, 3, false, "Job has already finished", ""),
            ],
        };
        let (out, err, failed) = results_text(&reply, |id, _| {
            format!("Job <{id}> is being {}", Action::Kill.verb())
        });
        assert_eq!(out, "Job <104> is being terminated\n");
        assert_eq!(
            err,
            "Job <105>: No matching job found\nJob <106[3]>: Job has already finished\n"
        );
        assert!(failed);
        let (out, _, failed) = results_text(
            &JobCtlReply {
                results: vec![res(1, 0, true, "", "")],
            },
            |id, _| format!("Job <{id}> is being {}", Action::Signal.verb()),
        );
        assert_eq!(out, "Job <1> is being signaled\n");
        assert!(!failed);
        assert_eq!(Action::Stop.verb(), "stopped");
        assert_eq!(Action::Resume.verb(), "resumed");
    }

    #[test]
    fn switch_and_move_lines() {
        let reply = JobCtlReply {
            results: vec![res(5, 0, true, "", "lowq")],
        };
        let (out, _, _) = results_text(&reply, |id, d| {
            format!("Job <{id}> is switched to queue <{d}>")
        });
        assert_eq!(out, "Job <5> is switched to queue <lowq>\n");
        let reply = JobCtlReply {
            results: vec![res(6, 0, true, "", "1")],
        };
        let (out, _, _) = results_text(&reply, |id, d| {
            format!("Job <{id}> has been moved to position {d} from top.")
        });
        assert_eq!(out, "Job <6> has been moved to position 1 from top.\n");
    }
}
