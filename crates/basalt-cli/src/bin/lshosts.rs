//! `lshosts` — static information about the cluster's hosts.

use basalt_cli::{RPC_TIMEOUT, args, block_on, fail, lim_cmds, load_config, print_version};
use basalt_proto::lim::HostsRequest;
use clap::Parser;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "lshosts",
    disable_version_flag = true,
    about = "Display hosts and their static resource information"
)]
struct Args {
    /// Wide format: names are not truncated.
    #[arg(short = 'w')]
    wide: bool,
    /// JSON output.
    #[arg(long = "json")]
    json: bool,
    /// Print the version and exit.
    #[arg(short = 'V')]
    version: bool,
    /// Only these hosts.
    hosts: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse_from(args::rewrite(std::env::args_os(), &["json"]));
    if args.version {
        return print_version();
    }
    let config = match load_config("lshosts") {
        Ok(c) => c,
        Err(code) => return code,
    };
    for h in &args.hosts {
        if basalt_runtime::canonical_host(&config, h).is_none() {
            eprintln!("lshosts: Unknown host <{h}>");
            return fail();
        }
    }
    let hosts = args.hosts.clone();
    let reply = match block_on(async {
        let mut m =
            basalt_runtime::find_master(&config, RPC_TIMEOUT, &basalt_cli::auth(&config)).await?;
        m.client
            .hosts(HostsRequest { hosts })
            .await
            .map(|r| r.into_inner())
            .map_err(|_| basalt_runtime::RuntimeError::NoLim)
    }) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            eprintln!("ls_gethostinfo(): {e}");
            return fail();
        }
        Err(code) => return code,
    };
    if args.json {
        println!("{}", lim_cmds::lshosts_json(&config, &reply));
    } else {
        print!("{}", lim_cmds::lshosts(&config, &reply, args.wide));
    }
    ExitCode::SUCCESS
}
