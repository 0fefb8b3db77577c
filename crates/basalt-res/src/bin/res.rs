//! `res` — the Remote Execution Server. Runs in the foreground (systemd `Type=simple`,
//! `KillMode=process`). It takes connections and hands each to its worker, `res
//! --worker`, a process it starts (its socket to it as the worker's standard input):
//! stopping or restarting `res` leaves the worker, the running tasks, their streams and
//! their clients alone until the tasks end.

use anyhow::Context;
use basalt_runtime::daemon::{self, DaemonFlags};
use clap::Parser;
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(
    name = "res",
    disable_version_flag = true,
    about = "Basalt Remote Execution Server"
)]
struct Args {
    #[command(flatten)]
    daemon: DaemonFlags,
    /// Serve the connections handed over on standard input (started by res itself).
    #[arg(long = "worker", hide = true)]
    worker: bool,
    /// How long the worker stays with nothing to serve, in milliseconds.
    #[arg(long = "idle-exit-ms", hide = true, requires = "worker")]
    idle_exit_ms: Option<u64>,
    /// The listening RES (which takes SIGTERM / SIGUSR1 for `lsadmin resshutdown` /
    /// `resrestart`).
    #[arg(long = "front-pid", hide = true, requires = "worker")]
    front_pid: Option<u32>,
}

fn main() -> std::process::ExitCode {
    let args: Args = daemon::parse(
        "The host this RES plays (a name from lsf.cluster.<cluster>); default: this machine's name",
    );
    if args.worker {
        let idle = args
            .idle_exit_ms
            .map_or(basalt_res::IDLE_EXIT, std::time::Duration::from_millis);
        let front = args.front_pid;
        return daemon::base_daemon_main("res", &args.daemon, |config, host| {
            worker(config, host, idle, front)
        });
    }
    let envdir = args.daemon.envdir();
    daemon::base_daemon_main("res", &args.daemon, |config, host| {
        run(config, host, &envdir)
    })
}

fn run(
    config: Arc<basalt_config::Config>,
    host: Option<&str>,
    envdir: &std::path::Path,
) -> anyhow::Result<()> {
    let me = basalt_runtime::local_host(&config, host)?;
    let addr = basalt_runtime::res_addr(&config, &me)?;
    let exe = std::env::current_exe().context("finding the res executable for its worker")?;
    let mut worker = basalt_res::WorkerCommand::new(exe, &me, envdir);
    // `lsadmin resshutdown` / `resrestart` come to the worker, which signals us.
    worker.front_pid = Some(std::process::id());
    let control = basalt_runtime::control::Control::for_process();
    // Taking connections needs no second worker thread (an idle res stays small).
    let rt = daemon::light_runtime().context("starting the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the RES port {addr} for host {me}"))?;
        // SIGUSR1 from the worker: `lsadmin resrestart` (main restarts in place once
        // this returns). SIGTERM: `resshutdown`, as any stop.
        let mut usr1 =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1())
                .context("taking SIGUSR1")?;
        let restart = control.clone();
        tokio::spawn(async move {
            if usr1.recv().await.is_some() {
                restart.request(basalt_runtime::control::Action::Restart);
            }
        });
        basalt_res::run(
            config,
            &me,
            listener,
            worker,
            control.or_shutdown(basalt_runtime::shutdown_signal()),
        )
        .await?;
        Ok(())
    })
}

/// `--worker`: serve the connections res hands over on the socket that is standard
/// input.
fn worker(
    config: Arc<basalt_config::Config>,
    host: Option<&str>,
    idle_exit: std::time::Duration,
    front_pid: Option<u32>,
) -> anyhow::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::os::fd::AsFd;
    let me = basalt_runtime::local_host(&config, host)?;
    // Own the socket through a descriptor of its own (closed on exec: no task inherits
    // it), non-blocking for the async runtime, and leave /dev/null as standard input.
    let channel = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .context("taking the RES's socket from standard input")?;
    fcntl(&channel, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).context("setting O_NONBLOCK")?;
    let null = std::fs::File::open("/dev/null").context("opening /dev/null")?;
    nix::unistd::dup2_stdin(&null).context("replacing standard input")?;
    let rt = daemon::light_runtime().context("starting the async runtime")?;
    rt.block_on(basalt_res::run_worker(
        config,
        &me,
        channel,
        idle_exit,
        front_pid,
        basalt_runtime::shutdown_signal(),
    ))?;
    Ok(())
}
