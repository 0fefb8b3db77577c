//! `lsgrun [-h] [-V] [-p] [-v] [-m "host_name ..." | -f host_file | -R res_req] command
//! [argument ...]`: run the command on every host asked for — the `-m` hosts, those
//! named in `host_file` (blank-separated, `#` comments), those that satisfy `-R`, or
//! every host of the cluster — through each host's RES, one after the other (`-p`: all
//! at once). Each task's output comes here as it is written; the tasks get no standard
//! input; the signals lsgrun gets go to the tasks. `-v` says where each runs. A host
//! that cannot run the task gets LSF's message and the others still run; lsgrun exits
//! 0 when every task exited 0, else with the first failing task's exit code (255 for a
//! host that could not run it). `-P` and `-S` are refused as not supported yet.

use super::TaskLine;
use crate::batch::opts::Spec;
use basalt_proto::lim::HostStatus;
use std::process::ExitCode;

pub const USAGE: &str = "Usage: lsgrun [-h] [-V] [-p] [-v] [-m \"host_name ...\" | -f host_file | -R res_req] command [argument ...]\n";

const SPEC: Spec = Spec {
    flags: &["h", "V", "v", "p", "P", "S"],
    valued: &["m", "f", "R"],
};

/// Read the command line (without the program name). Err: the line to print before the
/// usage. Ok(None): `-h` or `-V`.
pub fn parse(args: &[String]) -> Result<Option<TaskLine>, String> {
    let Some(a) = super::task_line(args, &SPEC, &["P", "S"])? else {
        return Ok(None);
    };
    let ways = usize::from(!a.hosts.is_empty())
        + usize::from(a.host_file.is_some())
        + usize::from(a.res_req.is_some());
    if ways > 1 {
        return Err("-m, -f and -R cannot be used together".to_owned());
    }
    Ok(Some(a))
}

/// The host names of a host file: blank-separated, `#` to the end of a line a comment.
pub fn host_file_names(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(str::split_whitespace)
        .map(str::to_owned)
        .collect()
}

/// `lsgrun`.
pub fn main(args: Vec<String>) -> ExitCode {
    let mut a = match super::parsed("lsgrun", &args, USAGE, parse(&args)) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if let Some(f) = &a.host_file {
        match std::fs::read_to_string(f) {
            Ok(t) => a.hosts = host_file_names(&t),
            Err(e) => {
                eprintln!("lsgrun: {f}: {e}");
                return crate::fail();
            }
        }
        if a.hosts.is_empty() {
            eprintln!("lsgrun: {f}: no host names in it");
            return crate::fail();
        }
    }
    let config = match crate::load_config("lsgrun") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let result = crate::block_on_leaving_reads(run(&config, &a));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(code) => code,
    }
}

/// Every host's task; the exit code.
async fn run(config: &basalt_config::Config, a: &TaskLine) -> u8 {
    let hosts: Vec<String> = if a.hosts.is_empty() {
        let reply = super::master_hosts(config).await;
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                eprintln!("lsgrun: ls_gethostinfo(): {e}");
                return 255;
            }
        };
        match &a.res_req {
            // Every host that satisfies it (any type).
            Some(r) => {
                let mut reply = reply;
                reply.hosts.retain(|h| h.status == HostStatus::Ok as i32);
                let externals = crate::lim_cmds::external_indices(&reply);
                let Ok(select) = crate::lim_res::Select::parse(r, config, &externals) else {
                    eprintln!("lsgrun: Bad resource requirement syntax");
                    return 255;
                };
                let local = crate::batch::local_host(config);
                crate::lim_cmds::retain_selected(config, &mut reply, &select, &local);
                reply
                    .hosts
                    .iter()
                    .filter_map(|h| h.info.as_ref().map(|i| i.name.clone()))
                    .collect()
            }
            None => config
                .cluster
                .hosts
                .iter()
                .map(|h| h.name.clone())
                .collect(),
        }
    } else {
        let mut named = Vec::new();
        for h in &a.hosts {
            match basalt_runtime::canonical_host(config, h) {
                Some(c) => named.push(c),
                None => {
                    eprintln!("lsgrun: Unknown host <{h}>");
                    return 255;
                }
            }
        }
        named
    };
    if hosts.is_empty() {
        eprintln!("lsgrun: Not enough host(s) currently eligible");
        return 255;
    }
    let mut setup = super::TaskSetup::here(false);
    // LSF_SERVERDIR/esub, once; its output goes to each host's eexec.
    setup.eexec_input = match super::esub(config, "lsgrun", &a.argv) {
        Ok(out) => out,
        Err(_) => return 255,
    };
    let one = |host: String| {
        let setup = setup.clone();
        async move {
            if a.verbose {
                eprintln!(
                    "<<Execute {} on remote host {host}>>",
                    a.argv.first().map_or("", String::as_str)
                );
            }
            match super::run_task(config, &host, &a.argv, &setup).await {
                Ok(raw) => super::exit_code(raw),
                Err(e) => {
                    eprintln!("lsgrun: {host}: {e}");
                    255
                }
            }
        }
    };
    let codes: Vec<u8> = if a.parallel {
        let mut set = Vec::new();
        for h in hosts {
            set.push(one(h));
        }
        join_all(set).await
    } else {
        let mut out = Vec::new();
        for h in hosts {
            out.push(one(h).await);
        }
        out
    };
    codes.into_iter().find(|c| *c != 0).unwrap_or(0)
}

/// Await every future, concurrently; their outputs in order.
pub(crate) async fn join_all<F: std::future::Future<Output = u8>>(futs: Vec<F>) -> Vec<u8> {
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = futs.into_iter().map(Box::pin).collect();
    let mut done: Vec<Option<u8>> = vec![None; pinned.len()];
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in pinned.iter_mut().enumerate() {
            if done[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => done[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    done.into_iter().map(|d| d.unwrap_or(255)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<Option<TaskLine>, String> {
        parse(&a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn hosts_come_one_way_and_options_end_at_the_command() {
        let a = args(&["-p", "-v", "-m", "hostA hostB", "uname", "-a"])
            .expect("parse")
            .expect("not help");
        assert!(a.parallel && a.verbose);
        assert_eq!(a.hosts, vec!["hostA", "hostB"]);
        assert_eq!(a.argv, vec!["uname", "-a"]);
        assert!(args(&["-m", "hostA", "-R", "mem>1", "true"]).is_err());
        assert!(args(&["-p"]).is_err());
        assert_eq!(
            host_file_names("hostA hostB # the first two\n\n# none\nhostC\n"),
            vec!["hostA", "hostB", "hostC"]
        );
    }
}
