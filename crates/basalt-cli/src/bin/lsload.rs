//! `lsload` — load indices of the cluster's hosts, from the master LIM.

use basalt_cli::batch::{self, opts};
use basalt_cli::lim_cmds::{self, LoadOpts, RunQueue};
use basalt_cli::lim_res::{self, SharedKind};
use basalt_cli::{RPC_TIMEOUT, block_on, fail, load_config};
use basalt_proto::lim::{HostsReply, HostsRequest};
use std::process::ExitCode;

const USAGE: &str = "Usage: lsload [-h] [-V] [-N | -E] [-l | -w] [-R res_req] [-I index_list] [-json] [host_name ...]
       lsload [-h] [-V] -s [shared_resource_name ...]
";

const SPEC: opts::Spec = opts::Spec {
    flags: &["h", "V", "l", "w", "N", "E", "json", "s"],
    valued: &["R", "I"],
};

/// The options given.
#[derive(Default)]
struct Args {
    long: bool,
    wide: bool,
    effective: bool,
    normalized: bool,
    json: bool,
    shared: bool,
    res_req: Option<String>,
    indices: Option<String>,
    /// Host names, or resource names with `-s`.
    names: Vec<String>,
}

fn usage_error() -> ExitCode {
    eprint!("{USAGE}");
    fail()
}

fn query(config: &basalt_config::Config, hosts: Vec<String>) -> Result<HostsReply, ExitCode> {
    match block_on(async {
        let mut m =
            basalt_runtime::find_master(config, RPC_TIMEOUT, &basalt_cli::auth(config)).await?;
        m.client
            .hosts(HostsRequest {
                hosts,
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner())
            .map_err(|_| basalt_runtime::RuntimeError::NoLim)
    }) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => {
            eprintln!("ls_load(): {e}");
            Err(fail())
        }
        Err(code) => Err(code),
    }
}

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    let items = match batch::parse_args("lsload", &batch::argv(), &SPEC, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut args = Args::default();
    for it in items {
        match it {
            opts::Item::Arg(a) => args.names.push(a),
            opts::Item::Opt(n, v) => match n.as_str() {
                "l" => args.long = true,
                "w" => args.wide = true,
                "E" => args.effective = true,
                "N" => args.normalized = true,
                "json" => args.json = true,
                "s" => args.shared = true,
                "R" => args.res_req = v,
                "I" => args.indices = v,
                _ => {}
            },
        }
    }
    let other = args.long
        || args.wide
        || args.effective
        || args.normalized
        || args.json
        || args.res_req.is_some()
        || args.indices.is_some();
    if (args.shared && other) || (args.effective && args.normalized) || (args.long && args.wide) {
        return usage_error();
    }
    let config = match load_config("lsload") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if args.shared {
        let reply = match query(&config, Vec::new()) {
            Ok(r) => r,
            Err(code) => return code,
        };
        let instances = lim_res::shared_instances(&config);
        let shown = match lim_res::select_instances(&instances, &args.names, |i| {
            lim_res::shown_by(SharedKind::Dynamic, i)
        }) {
            Ok(s) => s,
            Err(_) => {
                eprintln!("ls_sharedresourceinfo: Bad resource name");
                return fail();
            }
        };
        print!(
            "{}",
            lim_res::shared_table(SharedKind::Dynamic, &shown, |i| {
                lim_cmds::dynamic_value(&reply, i)
            })
        );
        return ExitCode::SUCCESS;
    }
    let mut reply = match query(&config, args.names.clone()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    for h in &args.names {
        if basalt_runtime::canonical_host(&config, h).is_none() {
            eprintln!("lsload: Unknown host <{h}>");
            return fail();
        }
    }
    if let Some(r) = &args.res_req {
        let externals = lim_cmds::external_indices(&reply);
        let select = match lim_res::Select::parse(r, &config, &externals) {
            Ok(s) => s,
            Err(_) => {
                eprintln!("lsload: Bad resource requirement syntax");
                return fail();
            }
        };
        lim_cmds::retain_selected(&config, &mut reply, &select, &batch::local_host(&config));
        if reply.hosts.is_empty() {
            eprintln!("lsload: Not enough host(s) currently eligible");
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
