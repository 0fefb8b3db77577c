//! `lim` — the Load Information Manager daemon. Runs in the foreground (systemd
//! `Type=simple`; `cargo xtask up` puts it in the background itself).

use anyhow::Context;
use clap::Parser;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(
    name = "lim",
    disable_version_flag = true,
    about = "Basalt Load Information Manager"
)]
struct Args {
    /// The host this LIM plays (a name from lsf.cluster.<cluster>); default: this machine's name.
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
    let loaded = match basalt_config::load_lim(&envdir) {
        Ok(l) => l,
        Err(errors) => {
            eprintln!("lim: configuration errors, not starting:\n{errors}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if args.check {
        for w in &loaded.warnings {
            eprintln!("warning: {w}");
        }
        // The daemons do not start without a usable cluster key: say so now.
        if let Err(e) = basalt_runtime::cluster_keys(&loaded.config) {
            eprintln!("lim: {e}");
            return std::process::ExitCode::FAILURE;
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
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("lim: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(config: Arc<basalt_config::Config>, host: Option<&str>) -> anyhow::Result<()> {
    let me = basalt_runtime::local_host(&config, host)?;
    let addr = basalt_runtime::lim_addr(&config, &me)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the LIM port {addr} for host {me}"))?;
        basalt_lim::run(config, &me, listener, basalt_runtime::shutdown_signal()).await?;
        Ok(())
    })
}
