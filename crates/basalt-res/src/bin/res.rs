//! `res` — the Remote Execution Server. Runs in the foreground (systemd `Type=simple`,
//! `KillMode=process` so running tasks survive a restart of the daemon).

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
}

fn main() -> std::process::ExitCode {
    let args: Args = daemon::parse(
        "The host this RES plays (a name from lsf.cluster.<cluster>); default: this machine's name",
    );
    let flags = &args.daemon;
    if let Some(code) = flags.version_exit() {
        return code;
    }
    let envdir = flags.envdir();
    let loaded = match basalt_config::load_lim(&envdir) {
        Ok(l) => l,
        Err(errors) => {
            eprintln!("res: configuration errors, not starting:\n{errors}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if flags.check {
        daemon::print_check_warnings(&loaded.warnings);
        if let Err(e) = basalt_runtime::cluster_keys(&loaded.config) {
            eprintln!("res: {e}");
            return std::process::ExitCode::FAILURE;
        }
        return daemon::check_passed();
    }
    let config = Arc::new(loaded.config);
    daemon::start_logging(&config, &loaded.warnings);
    match run(config, flags.host.as_deref()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            daemon::report_failure("res", format_args!("{e:#}"));
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(config: Arc<basalt_config::Config>, host: Option<&str>) -> anyhow::Result<()> {
    let me = basalt_runtime::local_host(&config, host)?;
    let addr = basalt_runtime::res_addr(&config, &me)?;
    // Relaying streams needs no second worker thread (an idle res stays small).
    let rt = daemon::light_runtime().context("starting the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the RES port {addr} for host {me}"))?;
        basalt_res::run(config, &me, listener, basalt_runtime::shutdown_signal()).await?;
        Ok(())
    })
}
