//! `lsid` — the product version, the cluster name and the current master.

use basalt_cli::{RPC_TIMEOUT, block_on, fail, lim_cmds, load_config, print_version};
use clap::Parser;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "lsid",
    disable_version_flag = true,
    about = "Display the cluster name and master host"
)]
struct Args {
    /// Print the version and exit.
    #[arg(short = 'V')]
    version: bool,
}

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    let args = Args::parse();
    if args.version {
        return print_version();
    }
    let config = match load_config("lsid") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let found = match block_on(basalt_runtime::find_master(
        &config,
        RPC_TIMEOUT,
        &basalt_cli::auth(&config),
    )) {
        Ok(f) => f,
        Err(code) => return code,
    };
    match found {
        Ok(m) => {
            print!("{}", lim_cmds::lsid(&m.info));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ls_getmastername(): {e}");
            fail()
        }
    }
}
