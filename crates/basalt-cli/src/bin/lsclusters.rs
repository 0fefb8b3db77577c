//! `lsclusters` — the cluster, its status and its master.

use basalt_cli::{RPC_TIMEOUT, block_on, lim_cmds, load_config, print_version};
use clap::Parser;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "lsclusters",
    disable_version_flag = true,
    about = "Display cluster status"
)]
struct Args {
    /// Long format.
    #[arg(short = 'l')]
    long: bool,
    /// Wide format (accepted; names are not truncated by default here).
    #[arg(short = 'w')]
    wide: bool,
    /// Print the version and exit.
    #[arg(short = 'V')]
    version: bool,
    /// Cluster names (only the local cluster exists).
    clusters: Vec<String>,
}

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    let args = Args::parse();
    if args.version {
        return print_version();
    }
    let config = match load_config("lsclusters") {
        Ok(c) => c,
        Err(code) => return code,
    };
    for c in &args.clusters {
        if c != &config.cluster_name {
            eprintln!("lsclusters: Bad cluster name <{c}>");
            return basalt_cli::fail();
        }
    }
    let info = match block_on(basalt_runtime::find_master(
        &config,
        RPC_TIMEOUT,
        &basalt_cli::auth(&config),
    )) {
        Ok(r) => r.ok().map(|m| m.info),
        Err(code) => return code,
    };
    print!(
        "{}",
        lim_cmds::lsclusters(&config, info.as_ref(), args.long)
    );
    ExitCode::SUCCESS
}
