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
    // One thread: a LIM's work is small messages (a master of 10,000 hosts takes about
    // 1,200 a second); a second worker only added wake-ups between the two (idle, most
    // of its CPU). Its load sampling reads /proc on tokio's blocking pool.
    let rt = daemon::light_runtime().context("starting the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the LIM port {addr} for host {me}"))?;
        basalt_lim::run(config, &me, listener, basalt_runtime::shutdown_signal()).await?;
        Ok(())
    })
}
