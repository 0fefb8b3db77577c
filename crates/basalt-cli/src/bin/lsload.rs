//! `lsload` — load indices of the cluster's hosts, from the master LIM.

use basalt_cli::lim_cmds::{self, LoadOpts, RunQueue};
use basalt_cli::{RPC_TIMEOUT, args, block_on, fail, load_config, print_version};
use basalt_proto::lim::HostsRequest;
use clap::Parser;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "lsload",
    disable_version_flag = true,
    about = "Display load information for hosts"
)]
struct Args {
    /// Long format: every built-in index including io, and the external indices.
    #[arg(short = 'l')]
    long: bool,
    /// Wide format: host names are not truncated.
    #[arg(short = 'w')]
    wide: bool,
    /// Effective run-queue lengths.
    #[arg(short = 'E', conflicts_with = "normalized")]
    effective: bool,
    /// Normalised run-queue lengths.
    #[arg(short = 'N')]
    normalized: bool,
    /// Only these indices, separated by colons (r15s:r1m:mem).
    #[arg(short = 'I', value_name = "index_list")]
    indices: Option<String>,
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
    let config = match load_config("lsload") {
        Ok(c) => c,
        Err(code) => return code,
    };
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
            eprintln!("ls_load(): {e}");
            return fail();
        }
        Err(code) => return code,
    };
    for h in &args.hosts {
        if basalt_runtime::canonical_host(&config, h).is_none() {
            eprintln!("lsload: Unknown host <{h}>");
            return fail();
        }
    }
    let opts = LoadOpts {
        long: args.long,
        wide: args.wide,
        run_queue: if args.effective {
            RunQueue::Effective
        } else if args.normalized {
            RunQueue::Normalized
        } else {
            RunQueue::Raw
        },
        indices: args.indices.map(|s| {
            s.split(':')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        }),
    };
    if args.json {
        println!("{}", lim_cmds::lsload_json(&reply, &opts));
    } else {
        print!("{}", lim_cmds::lsload(&reply, &opts));
    }
    ExitCode::SUCCESS
}
