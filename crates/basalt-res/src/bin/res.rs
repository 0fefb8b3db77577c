//! `res` — the Remote Execution Server. Runs in the foreground (systemd `Type=simple`,
//! `KillMode=process`: the tasks it runs, each in its own session, are not killed with
//! it; their connections end with it).

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
    daemon::base_daemon_main("res", &args.daemon, run)
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
