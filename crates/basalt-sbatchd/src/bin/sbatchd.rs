//! `sbatchd` — the slave batch daemon. Runs in the foreground (systemd
//! `Type=simple`, `KillMode=process` so jobs survive a restart).
//!
//! `sbatchd --job-supervisor <state root>` is the hidden supervisor pool that sbatchd
//! itself starts: it forks each job's supervisor (see `basalt_sbatchd::supervisor`).

use anyhow::Context;
use basalt_runtime::daemon::{self, DaemonFlags};
use clap::Parser;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(
    name = "sbatchd",
    disable_version_flag = true,
    about = "Basalt slave batch daemon"
)]
struct Args {
    #[command(flatten)]
    daemon: DaemonFlags,
    /// Do not start mbatchd on the master host (for tests that run mbatchd themselves).
    #[arg(long = "no-mbatchd")]
    no_mbatchd: bool,
    /// The state root (the job table jobs.db and the per-job directories), used as given (default:
    /// BASALT_SBD_STATEDIR/<host> from lsf.conf, else /tmp/.<cluster>.sbd/<host>.<hash>).
    #[arg(long = "state-dir")]
    state_dir: Option<PathBuf>,
    /// The mbatchd executable to run on the master host (default: next to sbatchd,
    /// else in LSF_SERVERDIR).
    #[arg(long = "mbatchd")]
    mbatchd: Option<PathBuf>,
    /// The job supervisor pool for this state root (internal; stdin is sbatchd's socket).
    #[arg(long = "job-supervisor", hide = true)]
    job_supervisor: Option<PathBuf>,
}

fn main() -> std::process::ExitCode {
    let args: Args = daemon::parse(
        "The host this sbatchd plays (a name from lsf.cluster.<cluster>); default: this machine's name",
    );
    if let Some(root) = &args.job_supervisor {
        basalt_runtime::init_tracing(None);
        // SAFETY: this process is single-threaded here: only the arguments were
        // parsed and a stderr logger set up (neither starts a thread); the
        // supervisor starts no thread but its report writers, which take no lock.
        #[allow(unsafe_code)]
        let code = unsafe { basalt_sbatchd::supervisor::pool::serve(root) };
        return std::process::ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let flags = &args.daemon;
    if let Some(code) = flags.version_exit() {
        return code;
    }
    let envdir = flags.envdir();
    let loaded = match basalt_config::load(&envdir) {
        Ok(l) => l,
        Err(errors) => {
            eprintln!("sbatchd: configuration errors, not starting:\n{errors}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if flags.check {
        daemon::print_check_warnings(&loaded.warnings);
        return daemon::check_passed();
    }
    let config = Arc::new(loaded.config);
    daemon::start_logging("sbatchd", flags.host.as_deref(), &config, &loaded.warnings);
    let opts = basalt_sbatchd::Options {
        supervise_mbatchd: !args.no_mbatchd,
        state_dir: args.state_dir.clone(),
        mbatchd_exe: args.mbatchd.clone(),
        ..Default::default()
    };
    // sbatchd's DaemonControl service answers through this process's handle
    // (`badmin hshutdown/hrestart`).
    let control = basalt_runtime::control::Control::for_process();
    match run(config, flags.host.as_deref(), opts) {
        Ok(()) => match control.finish() {
            None => std::process::ExitCode::SUCCESS,
            Some(e) => {
                daemon::report_failure("sbatchd", format_args!("cannot restart in place: {e}"));
                std::process::ExitCode::FAILURE
            }
        },
        Err(e) => {
            daemon::report_failure("sbatchd", format_args!("{e:#}"));
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(
    config: Arc<basalt_config::Config>,
    host: Option<&str>,
    opts: basalt_sbatchd::Options,
) -> anyhow::Result<()> {
    let me = basalt_runtime::local_host(&config, host)?;
    let addr = basalt_runtime::sbd_addr(&config, &me)?;
    let rt = daemon::runtime().context("starting the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the sbatchd port {addr} for host {me}"))?;
        basalt_sbatchd::run_with(
            config,
            &me,
            listener,
            opts,
            basalt_runtime::shutdown_signal(),
        )
        .await?;
        Ok(())
    })
}
