//! `lim` — the Load Information Manager daemon. Runs in the foreground (systemd
//! `Type=simple`; `cargo xtask up` puts it in the background itself).

use anyhow::Context;
use basalt_runtime::daemon::{self, DaemonFlags};
use clap::Parser;
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(
    name = "lim",
    disable_version_flag = true,
    about = "Basalt Load Information Manager"
)]
struct Args {
    #[command(flatten)]
    daemon: DaemonFlags,
}

fn main() -> std::process::ExitCode {
    let args: Args = daemon::parse(
        "The host this LIM plays (a name from lsf.cluster.<cluster>); default: this machine's name",
    );
    let flags = &args.daemon;
    if let Some(code) = flags.version_exit() {
        return code;
    }
    let envdir = flags.envdir();
    let loaded = match basalt_config::load_lim(&envdir) {
        Ok(l) => l,
        Err(errors) => {
            eprintln!("lim: configuration errors, not starting:\n{errors}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if flags.check {
        daemon::print_check_warnings(&loaded.warnings);
        // The daemons do not start without a usable cluster key: say so now.
        if let Err(e) = basalt_runtime::cluster_keys(&loaded.config) {
            eprintln!("lim: {e}");
            return std::process::ExitCode::FAILURE;
        }
        return daemon::check_passed();
    }
    let config = Arc::new(loaded.config);
    daemon::start_logging(&config, &loaded.warnings);
    match run(config, flags.host.as_deref()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            daemon::report_failure("lim", format_args!("{e:#}"));
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(config: Arc<basalt_config::Config>, host: Option<&str>) -> anyhow::Result<()> {
    let me = basalt_runtime::local_host(&config, host)?;
    let addr = basalt_runtime::lim_addr(&config, &me)?;
    let rt = daemon::runtime().context("starting the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the LIM port {addr} for host {me}"))?;
        basalt_lim::run(config, &me, listener, basalt_runtime::shutdown_signal()).await?;
        Ok(())
    })
}
