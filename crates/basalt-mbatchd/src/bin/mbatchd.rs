//! `mbatchd` — the master batch daemon. Started (and restarted) by the master host's
//! sbatchd; runs in the foreground. Exit codes are LSF's: 201 the host is no longer
//! master, 202 reconfiguration/restart requested, 203 fatal error.

use anyhow::Context;
use clap::Parser;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(
    name = "mbatchd",
    disable_version_flag = true,
    about = "Basalt master batch daemon"
)]
struct Args {
    /// The host this mbatchd runs for (a name from lsf.cluster.<cluster>); default: this machine's name.
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
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if args.version {
        eprintln!("{}", basalt_core::version::product_line());
        return std::process::ExitCode::SUCCESS;
    }
    let envdir = args.envdir.clone().unwrap_or_else(basalt_runtime::envdir);
    let loaded = match basalt_config::load(&envdir) {
        Ok(l) => l,
        Err(errors) => {
            eprintln!("mbatchd: configuration errors, not starting:\n{errors}");
            return std::process::ExitCode::from(205);
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
    match run(config, args.host.as_deref()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(code) => std::process::ExitCode::from(code),
    }
}

fn run(config: Arc<basalt_config::Config>, host: Option<&str>) -> Result<(), u8> {
    let inner = || -> anyhow::Result<Result<(), basalt_mbatchd::MbdError>> {
        let me = basalt_runtime::local_host(&config, host)?;
        let addr = basalt_runtime::mbd_addr(&config, &me)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding the mbatchd port {addr} for host {me}"))?;
            Ok(basalt_mbatchd::run(config, &me, listener, basalt_runtime::shutdown_signal()).await)
        })
    };
    match inner() {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            tracing::error!("{e}");
            eprintln!("mbatchd: {e}");
            Err(e.exit_code() as u8)
        }
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("mbatchd: {e:#}");
            Err(basalt_mbatchd::EXIT_FATAL as u8)
        }
    }
}
