//! `bsub -I`, `-Ip`, `-Is`: an interactive batch job. It is scheduled like any job;
//! bsub says `<<Waiting for dispatch ...>>`, then `<<Starting on host>>` when it starts,
//! attaches to it through the execution host's RES (its standard input, output and
//! error, or its pseudo-terminal, connected to this terminal; the signals bsub gets go
//! to the job) and exits with the job's exit code once the job has ended. These lines
//! go to standard error, so the job's output alone is on standard output.
//!
//! Ctrl-C while the job is pending kills it (`<<Terminated while pending>>`); while it
//! runs, bsub's SIGINT goes to the job (under `-Ip`/`-Is` the terminal is in raw mode
//! and Ctrl-C is a character for the job's terminal). `bkill` ends the job and bsub
//! with it; bsub going away kills the job.

use super::wait::{job_state, wait_view};
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use basalt_proto::mbatchd::{JobRef, SignalKind, SignalRequest};
use basalt_runtime::AuthChannel;
use std::process::ExitCode;
use std::time::Duration;

/// How often the job's state is asked for.
const POLL: Duration = Duration::from_millis(100);

/// Kill the job (as `bkill` does).
async fn kill(client: &mut MbatchdClient<AuthChannel>, job_id: u64) {
    let req = SignalRequest {
        ids: vec![JobRef {
            job_id,
            idx: 0,
            has_idx: false,
        }],
        kind: SignalKind::Kill as i32,
        ..Default::default()
    };
    let _ = client.signal(req).await;
}

/// Wait for interactive job `job_id` to start, attach to it and relay its streams; its
/// exit code once it ended. `mode`: 1 `-I`, 2 `-Ip`, 3 `-Is`. A job requeued to run
/// again (REQUEUE_EXIT_VALUES, brequeue) is waited for and attached to again.
pub async fn run_interactive(
    config: &basalt_config::Config,
    mut client: MbatchdClient<AuthChannel>,
    job_id: u64,
    mode: u32,
) -> ExitCode {
    eprintln!("<<Waiting for dispatch ...>>");
    // The pid of the run attached to last (a requeued job's next run has another; 0
    // until sbatchd said it).
    let mut attached_run: Option<u32> = None;
    loop {
        // While bsub is not attached, Ctrl-C kills the job (attached, the relay sends
        // it to the job).
        let mut interrupt =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
        let host = loop {
            let jobs = match job_state(config, &mut client, job_id).await {
                Ok(Some(j)) => j,
                Ok(None) => {
                    tokio::time::sleep(POLL).await;
                    continue;
                }
                Err(e) => {
                    eprintln!("{e}");
                    return crate::fail();
                }
            };
            let Some(first) = jobs.first() else {
                eprintln!("Job <{job_id}> is not found");
                return crate::fail();
            };
            let v = wait_view(&jobs);
            if let Some(code) = v.done {
                // Ended: killed while pending, or its run's output is all here.
                return ExitCode::from(code);
            }
            if let Some(h) = v.started_on
                && attached_run.is_none_or(|pid| first.pid != 0 && first.pid != pid)
            {
                break h;
            }
            let got_interrupt = async {
                match interrupt.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = got_interrupt => {
                    kill(&mut client, job_id).await;
                    if attached_run.is_none() {
                        eprintln!("<<Terminated while pending>>");
                    }
                    return ExitCode::from(130);
                }
            }
        };
        // From here SIGINT is relayed to the job (the task relay installs its handler;
        // ours goes so that it is not counted twice).
        drop(interrupt);
        eprintln!("<<Starting on {host}>>");
        let pty = (mode >= 2).then(crate::res_cmds::term::size_here);
        let attached = {
            let _raw = pty.and_then(|_| crate::res_cmds::term::RawMode::enter());
            crate::res_cmds::attach_job(config, &host, job_id, 0, pty).await
        };
        match attached {
            Ok(pid) => attached_run = Some(pid),
            Err(e) => {
                // A job that ended meanwhile has its exit code; else it cannot be reached.
                let jobs = job_state(config, &mut client, job_id).await;
                if let Ok(Some(jobs)) = &jobs {
                    if let Some(code) = wait_view(jobs).done {
                        return ExitCode::from(code);
                    }
                    // A run already attached to (mbatchd told its pid late): wait for
                    // its end.
                    if attached_run.is_some()
                        && let Some(pid) = jobs.first().map(|j| j.pid)
                    {
                        attached_run = Some(pid);
                        continue;
                    }
                }
                eprintln!("Cannot connect to the job on host <{host}>: {e}; killing it");
                kill(&mut client, job_id).await;
                return crate::fail();
            }
        }
        // The run's output ended: its exit code once mbatchd has its end (or, requeued,
        // its next run).
    }
}
