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
/// exit code once it ended. `mode`: 1 `-I`, 2 `-Ip`, 3 `-Is`.
pub async fn run_interactive(
    config: &basalt_config::Config,
    mut client: MbatchdClient<AuthChannel>,
    job_id: u64,
    mode: u32,
) -> ExitCode {
    eprintln!("<<Waiting for dispatch ...>>");
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
        if jobs.is_empty() {
            eprintln!("Job <{job_id}> is not found");
            return crate::fail();
        }
        let v = wait_view(&jobs);
        if let Some(code) = v.done {
            // Ended without starting (killed while pending), or before we saw it run.
            return ExitCode::from(code);
        }
        if let Some(h) = v.started_on {
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
                eprintln!("<<Terminated while pending>>");
                return ExitCode::from(130);
            }
        }
    };
    // From here SIGINT is relayed to the job (the task relay installs its handler;
    // ours goes so that it is not counted twice).
    drop(interrupt);
    eprintln!("<<Starting on {host}>>");
    let pty = (mode >= 2).then(|| {
        use std::os::fd::AsFd;
        crate::res_cmds::term::window_size(std::io::stdout().as_fd()).unwrap_or((24, 80))
    });
    let attached = {
        let _raw = pty.and_then(|_| crate::res_cmds::term::RawMode::enter());
        crate::res_cmds::attach_job(config, &host, job_id, 0, pty).await
    };
    if let Err(e) = attached {
        // A job that ended meanwhile has its exit code; else it cannot be reached.
        if let Ok(Some(jobs)) = job_state(config, &mut client, job_id).await
            && let Some(code) = wait_view(&jobs).done
        {
            return ExitCode::from(code);
        }
        eprintln!("Cannot connect to the job on host <{host}>: {e}; killing it");
        kill(&mut client, job_id).await;
        return crate::fail();
    }
    // The job's output ended: its exit code once mbatchd has its end.
    loop {
        match job_state(config, &mut client, job_id).await {
            Ok(Some(jobs)) => {
                if let Some(code) = wait_view(&jobs).done {
                    return ExitCode::from(code);
                }
                if jobs.is_empty() {
                    eprintln!("Job <{job_id}> is not found");
                    return crate::fail();
                }
            }
            Ok(None) => {}
            Err(e) => {
                eprintln!("{e}");
                return crate::fail();
            }
        }
        tokio::time::sleep(POLL).await;
    }
}
