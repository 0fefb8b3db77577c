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
    daemon::base_daemon_main("lim", &args.daemon, run)
}

fn run(config: Arc<basalt_config::Config>, host: Option<&str>) -> anyhow::Result<()> {
    let me = basalt_runtime::local_host(&config, host)?;
    let addr = basalt_runtime::lim_addr(&config, &me)?;
    // Two workers, as the other daemons: on one thread the master LIM of 10,000 hollow
    // hosts fell more than 30 s behind while they started (their requests' seals
    // expired), although it saves about 0.1 % of a core idle.
    let rt = daemon::runtime().context("starting the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the LIM port {addr} for host {me}"))?;
        basalt_lim::run(config, &me, listener, basalt_runtime::shutdown_signal()).await?;
        Ok(())
    })
}
