//! The daemon-control subcommands shared by `lsadmin` (`limstartup`, `limshutdown`,
//! `limrestart`, `reconfig`, `resstartup`, `resshutdown`, `resrestart`) and `badmin`
//! (`hstartup`, `hshutdown`, `hrestart`, and the sbatchd part of `reconfig`): each goes
//! to the daemons of the named hosts through
//! their `DaemonControl` service ([`basalt_runtime::control`]), never through ssh.
//!
//! Output is LSF's, on stderr, one line per host: `Restart slave batch daemon on
//! <hostA> ...... done` (or `done : <note>`, or `failed : <why>`). Exit 0 when every
//! host did it, 255 otherwise.
//!
//! Inputs: the host names (`all` = every host of lsf.cluster, batch servers only for
//! sbatchd; none = this host), the configuration, the user's credentials. Outputs:
//! stderr lines, the exit code.

use basalt_config::Config;
use basalt_proto::common::{ControlOp, Daemon};
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

/// What the line for `host` says before its outcome.
pub fn action_text(daemon: Daemon, op: ControlOp, host: &str) -> String {
    let what = match (daemon, op) {
        (Daemon::Sbatchd, ControlOp::Startup) => "Start up slave batch daemon",
        (Daemon::Sbatchd, ControlOp::Shutdown) => "Shut down slave batch daemon",
        (Daemon::Sbatchd, ControlOp::Restart) => "Restart slave batch daemon",
        (Daemon::Sbatchd, _) => "Reconfigure slave batch daemon",
        (Daemon::Lim, ControlOp::Startup) => "Starting up LIM",
        (Daemon::Lim, ControlOp::Shutdown) => "Shutting down LIM",
        (Daemon::Lim, ControlOp::Restart) => "Restart LIM",
        (Daemon::Lim, _) => "Reconfigure LIM",
        (Daemon::Res, ControlOp::Startup) => "Starting up RES",
        (Daemon::Res, ControlOp::Shutdown) => "Shut down RES",
        (Daemon::Res, ControlOp::Restart) => "Restart RES",
        (_, _) => "Control",
    };
    format!("{what} on <{host}> ...... ")
}

/// The line's outcome.
pub fn outcome_text(result: &Result<String, String>) -> String {
    match result {
        Ok(note) if note.is_empty() => "done".to_owned(),
        Ok(note) => format!("done : {note}"),
        Err(why) => format!("failed : {why}"),
    }
}

/// The hosts `names` designate: none = this host, else as [`named`] (`Bad host name
/// <x>: ...` for an unknown one).
pub fn resolve(
    config: &Config,
    names: &[String],
    servers_only: bool,
) -> Result<Vec<String>, String> {
    if names.is_empty() {
        return Ok(vec![crate::batch::local_host(config)]);
    }
    named(config, names, servers_only)
        .map_err(|n| format!("Bad host name <{n}>: not a host of the cluster"))
}

/// `all` = every host of lsf.cluster (batch servers only when `servers_only`), else each
/// name, canonicalised, in order and once each. Err: the first unknown name.
pub fn named(config: &Config, names: &[String], servers_only: bool) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let found: Vec<String> = if n == "all" {
            config
                .cluster
                .hosts
                .iter()
                .filter(|h| h.server || !servers_only)
                .map(|h| h.name.clone())
                .collect()
        } else {
            vec![basalt_runtime::canonical_host(config, n).ok_or_else(|| n.clone())?]
        };
        for h in found {
            if !out.contains(&h) {
                out.push(h);
            }
        }
    }
    Ok(out)
}

/// Ask "Do you really want to ...? [y/n]" on a terminal (an answer other than y or
/// yes says no); without a terminal, or with `-f`, the answer is yes.
pub fn confirm(question: &str, force: bool) -> bool {
    if force || !std::io::stdin().is_terminal() {
        return true;
    }
    eprint!("{question} [y/n] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// `op` on `daemon` of each host in turn (one line each on stderr); whether all did it.
pub async fn each_host(config: &Config, hosts: &[String], daemon: Daemon, op: ControlOp) -> bool {
    let auth = basalt_runtime::user_auth(config);
    let mut all_ok = true;
    for h in hosts {
        eprint!("{}", action_text(daemon, op, h));
        let _ = std::io::stderr().flush();
        let r = basalt_runtime::control::request(config, h, daemon, op, &auth).await;
        all_ok &= r.is_ok();
        eprintln!("{}", outcome_text(&r));
    }
    all_ok
}

/// A daemon-control subcommand of `cmd` (`lsadmin`, `badmin`): the hosts of `names`
/// ([`resolve`]), a confirmation for `all` ([`confirm`]), then [`run`].
pub fn command(
    cmd: &str,
    config: &Config,
    names: &[String],
    daemon: Daemon,
    op: ControlOp,
    force: bool,
) -> ExitCode {
    let hosts = match resolve(config, names, daemon != Daemon::Lim) {
        Ok(h) => h,
        Err(msg) => {
            eprintln!("{cmd}: {msg}");
            return crate::fail();
        }
    };
    let word = match op {
        ControlOp::Startup => "start up",
        ControlOp::Shutdown => "shut down",
        _ => "restart",
    };
    let daemons = match daemon {
        Daemon::Lim => "LIMs",
        Daemon::Res => "RES",
        _ => "slave batch daemons",
    };
    if names.iter().any(|n| n == "all")
        && !confirm(
            &format!("Do you really want to {word} {daemons} on all hosts?"),
            force,
        )
    {
        return crate::fail();
    }
    run(config, &hosts, daemon, op)
}

/// [`each_host`] as a command's exit code.
pub fn run(config: &Config, hosts: &[String], daemon: Daemon, op: ControlOp) -> ExitCode {
    crate::batch::run(async {
        if each_host(config, hosts, daemon, op).await {
            ExitCode::SUCCESS
        } else {
            crate::fail()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_lsf_s() {
        assert_eq!(
            action_text(Daemon::Sbatchd, ControlOp::Restart, "hostA"),
            "Restart slave batch daemon on <hostA> ...... "
        );
        assert_eq!(
            action_text(Daemon::Sbatchd, ControlOp::Shutdown, "hostA"),
            "Shut down slave batch daemon on <hostA> ...... "
        );
        assert_eq!(
            action_text(Daemon::Sbatchd, ControlOp::Startup, "hostA"),
            "Start up slave batch daemon on <hostA> ...... "
        );
        assert_eq!(
            action_text(Daemon::Lim, ControlOp::Restart, "hostB"),
            "Restart LIM on <hostB> ...... "
        );
        assert_eq!(
            action_text(Daemon::Res, ControlOp::Shutdown, "hostB"),
            "Shut down RES on <hostB> ...... "
        );
        assert_eq!(
            action_text(Daemon::Res, ControlOp::Startup, "hostB"),
            "Starting up RES on <hostB> ...... "
        );
        assert_eq!(
            action_text(Daemon::Res, ControlOp::Restart, "hostB"),
            "Restart RES on <hostB> ...... "
        );
        assert_eq!(outcome_text(&Ok(String::new())), "done");
        assert_eq!(outcome_text(&Ok("x".into())), "done : x");
        assert_eq!(outcome_text(&Err("y".into())), "failed : y");
    }
}
