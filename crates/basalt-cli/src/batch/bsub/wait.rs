//! `bsub -K`: wait for the submitted job to end and exit with its exit code.
//!
//! LSF's messages: `<<Waiting for dispatch ...>>` at once, `<<Starting on host>>` when
//! it starts (with lsf.conf `LSB_SUBK_SHOW_EXEC_HOST=Y`), `<<Job is finished>>` at its
//! end. The exit code is the job's (128 + the signal that killed it), 126 when it ended
//! without having started (killed while pending); a job requeued to run again is waited
//! for again. An array: every element, the first failing element's code.

use basalt_core::job::status;
use basalt_proto::mbatchd::{JobInfo, JobRef, JobsRequest};
use std::process::ExitCode;
use std::time::Duration;

/// How often the job's state is asked for.
const POLL: Duration = Duration::from_millis(250);

/// What `bsub -K` says of jobs in these states, and its exit code once all ended.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WaitView {
    /// A host a job started on (for `<<Starting on host>>`).
    pub started_on: Option<String>,
    /// Every job ended: bsub's exit code.
    pub done: Option<u8>,
}

/// The view of `jobs` (the job, or an array's elements).
pub fn wait_view(jobs: &[JobInfo]) -> WaitView {
    let mut v = WaitView::default();
    let mut code = None;
    let mut all_ended = !jobs.is_empty();
    for j in jobs {
        let started = j.state & (status::RUN | status::SSUSP | status::USUSP) != 0;
        if started && v.started_on.is_none() {
            v.started_on = j.exec_hosts.first().cloned();
        }
        let ended = j.state & (status::DONE | status::EXIT) != 0;
        if !ended {
            all_ended = false;
            continue;
        }
        let c = if j.state & status::EXIT != 0 && j.start_time == 0 {
            126
        } else if j.state & status::DONE != 0 {
            0
        } else {
            match crate::res_cmds::exit_code(j.exit_status) {
                0 => 1,
                c => c,
            }
        };
        if code.is_none_or(|x| x == 0) {
            code = Some(c);
        }
    }
    if all_ended {
        v.done = code;
    }
    v
}

/// The job's elements as mbatchd has them (None: the answer was lost, mbatchd restarting
/// or moving; `client` is connected again: ask again).
pub(super) async fn job_state(
    config: &basalt_config::Config,
    client: &mut basalt_proto::mbatchd::mbatchd_client::MbatchdClient<basalt_runtime::AuthChannel>,
    job_id: u64,
) -> Result<Option<Vec<JobInfo>>, String> {
    let req = JobsRequest {
        ids: vec![JobRef {
            job_id,
            idx: 0,
            has_idx: false,
        }],
        user: "all".into(),
        ..Default::default()
    };
    match client.jobs(req).await {
        Ok(r) => Ok(Some(r.into_inner().jobs)),
        Err(s) if super::classify(&s) == super::Class::Unanswered => {
            if let Ok(c) = super::super::connect_mbatchd(config).await {
                *client = c;
            }
            Ok(None)
        }
        Err(s) => Err(super::super::status_text(&s)),
    }
}

/// Wait for job `job_id` (all its elements for an array) as `bsub -K` does.
pub async fn wait_for_job(
    config: &basalt_config::Config,
    mut client: basalt_proto::mbatchd::mbatchd_client::MbatchdClient<basalt_runtime::AuthChannel>,
    job_id: u64,
) -> ExitCode {
    let show_host = config
        .lsf_conf
        .get("LSB_SUBK_SHOW_EXEC_HOST")
        .is_some_and(|v| matches!(v.trim().to_ascii_uppercase().as_str(), "Y" | "YES"));
    println!("<<Waiting for dispatch ...>>");
    let mut shown = false;
    let mut wait = Duration::from_millis(50);
    loop {
        tokio::time::sleep(wait).await;
        wait = POLL;
        let jobs = match job_state(config, &mut client, job_id).await {
            Ok(Some(j)) => j,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("{e}");
                return crate::fail();
            }
        };
        if jobs.is_empty() {
            eprintln!("Job <{job_id}> is not found");
            return crate::fail();
        }
        let v = wait_view(&jobs);
        if show_host
            && !shown
            && let Some(h) = &v.started_on
        {
            println!("<<Starting on {h}>>");
            shown = true;
        }
        if let Some(code) = v.done {
            println!("<<Job is finished>>");
            return ExitCode::from(code);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(state: u32, exit_status: i32, start_time: i64) -> JobInfo {
        JobInfo {
            state,
            exit_status,
            start_time,
            exec_hosts: vec!["hostB".into()],
            ..Default::default()
        }
    }

    #[test]
    fn the_exit_code_is_the_jobs_or_126_for_one_killed_while_pending() {
        assert_eq!(wait_view(&[job(status::PEND, 0, 0)]), WaitView::default());
        let run = wait_view(&[job(status::RUN, 0, 5)]);
        assert_eq!(run.started_on.as_deref(), Some("hostB"));
        assert_eq!(run.done, None);
        assert_eq!(wait_view(&[job(status::DONE, 0, 5)]).done, Some(0));
        assert_eq!(wait_view(&[job(status::EXIT, 3 << 8, 5)]).done, Some(3));
        assert_eq!(wait_view(&[job(status::EXIT, 9, 5)]).done, Some(137));
        assert_eq!(wait_view(&[job(status::EXIT, 0, 0)]).done, Some(126));
        // An array: every element ended; the first failing one's code.
        let arr = [job(status::DONE, 0, 5), job(status::EXIT, 2 << 8, 5)];
        assert_eq!(wait_view(&arr).done, Some(2));
        assert_eq!(
            wait_view(&[job(status::DONE, 0, 5), job(status::RUN, 0, 5)]).done,
            None
        );
    }
}
