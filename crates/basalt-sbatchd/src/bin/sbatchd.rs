//! `sbatchd` — the slave batch daemon. Runs in the foreground (systemd
//! `Type=simple`, `KillMode=process` so jobs survive a restart).
//!
//! `sbatchd --job-supervisor <dir>` is the hidden per-job supervisor mode that
//! sbatchd itself uses (see `basalt_sbatchd::supervisor`).

use anyhow::Context;
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
    /// The host this sbatchd plays (a name from lsf.cluster.<cluster>); default: this machine's name.
    #[arg(short = 'H', long = "host")]
    host: Option<String>,
    /// Directory holding lsf.conf (default: $LSF_ENVDIR, else /etc).
    #[arg(short = 'd', long = "envdir")]
    envdir: Option<PathBuf>,
    /// Check the configuration files, report every problem, and exit.
    #[arg(short = 'C', long = "check")]
    check: bool,
    /// Print the version and exit.
    #[arg(short = 'V', long = "version")]
    version: bool,
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
    /// Per-job supervisor mode (internal).
    #[arg(long = "job-supervisor", hide = true)]
    job_supervisor: Option<PathBuf>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Some(dir) = &args.job_supervisor {
        basalt_runtime::init_tracing(None);
        // SAFETY: this process is single-threaded here and stays so: only the
        // arguments were parsed and a stderr logger set up (neither starts a
        // thread), and supervisor mode starts none.
        #[allow(unsafe_code)]
        let code = unsafe { basalt_sbatchd::supervisor::main(dir) };
        return std::process::ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if args.version {
        eprintln!("{}", basalt_core::version::product_line());
        return std::process::ExitCode::SUCCESS;
    }
    let envdir = args.envdir.clone().unwrap_or_else(basalt_runtime::envdir);
    let loaded = match basalt_config::load(&envdir) {
        Ok(l) => l,
        Err(errors) => {
            eprintln!("sbatchd: configuration errors, not starting:\n{errors}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if args.check {
        for w in &loaded.warnings {
            eprintln!("warning: {w}");
        }
        eprintln!("No errors found.");
        return std::process::ExitCode::SUCCESS;
    }
    let config = Arc::new(loaded.config);
    basalt_runtime::init_tracing(Some(&config));
    for w in &loaded.warnings {
        tracing::warn!("configuration: {w}");
    }
    let opts = basalt_sbatchd::Options {
        supervise_mbatchd: !args.no_mbatchd,
        state_dir: args.state_dir.clone(),
        mbatchd_exe: args.mbatchd.clone(),
        ..Default::default()
    };
    match run(config, args.host.as_deref(), opts) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("sbatchd: {e:#}");
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
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
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
