//! `lshosts` — static information about the cluster's hosts.

use basalt_cli::batch::{self, opts};
use basalt_cli::lim_res::{self, SharedKind};
use basalt_cli::{RPC_TIMEOUT, block_on, fail, lim_cmds, load_config};
use basalt_proto::lim::HostsRequest;
use std::process::ExitCode;

const USAGE: &str = "Usage: lshosts [-h] [-V] [-w | -l] [-R res_req] [-json] [host_name ...]
       lshosts [-h] [-V] -s [static_resource_name ...]
";

const SPEC: opts::Spec = opts::Spec {
    flags: &["h", "V", "l", "w", "json", "s"],
    valued: &["R"],
};

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    let items = match batch::parse_args("lshosts", &batch::argv(), &SPEC, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let (mut long, mut wide, mut json, mut shared) = (false, false, false, false);
    let mut res_req: Option<String> = None;
    let mut names = Vec::new();
    for it in items {
        match it {
            opts::Item::Arg(a) => names.push(a),
            opts::Item::Opt(n, v) => match n.as_str() {
                "l" => long = true,
                "w" => wide = true,
                "json" => json = true,
                "s" => shared = true,
                "R" => res_req = v,
                _ => {}
            },
        }
    }
    if (shared && (long || wide || json || res_req.is_some())) || (long && wide) {
        eprint!("{USAGE}");
        return fail();
    }
    let config = match load_config("lshosts") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if shared {
        // Static shared resources are configuration: the ResourceMap of lsf.cluster.
        let instances = lim_res::shared_instances(&config);
        let shown = match lim_res::select_instances(&instances, &names, |i| {
            lim_res::shown_by(SharedKind::Static, i)
        }) {
            Ok(s) => s,
            Err(_) => {
                eprintln!("ls_sharedresourceinfo: Bad resource name");
                return fail();
            }
        };
        print!(
            "{}",
            lim_res::shared_table(SharedKind::Static, &shown, |i| {
                i.value.clone().unwrap_or_else(|| "-".to_owned())
            })
        );
        return ExitCode::SUCCESS;
    }
    for h in &names {
        if basalt_runtime::canonical_host(&config, h).is_none() {
            eprintln!("lshosts: Unknown host <{h}>");
            return fail();
        }
    }
    let mut reply = match block_on(async {
        let mut m =
            basalt_runtime::find_master(&config, RPC_TIMEOUT, &basalt_cli::auth(&config)).await?;
        m.client
            .hosts(HostsRequest {
                hosts: names,
                ..Default::default()
            })
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
    if let Some(r) = &res_req {
        let externals = lim_cmds::external_indices(&reply);
        let select = match lim_res::Select::parse(r, &config, &externals) {
            Ok(s) => s,
            Err(_) => {
                eprintln!("ls_gethostinfo(): Bad resource requirement syntax");
                return fail();
            }
        };
        lim_cmds::retain_selected(&config, &mut reply, &select, &batch::local_host(&config));
        if reply.hosts.is_empty() {
            eprintln!("ls_gethostinfo(): Not enough host(s) currently eligible");
            return fail();
        }
    }
    if json {
        println!("{}", lim_cmds::lshosts_json(&config, &reply));
    } else if long {
        let shared = lim_res::shared_instances(&config);
        print!("{}", lim_cmds::lshosts_long(&config, &reply, &shared));
    } else {
        print!("{}", lim_cmds::lshosts(&config, &reply, wide));
    }
    ExitCode::SUCCESS
}
