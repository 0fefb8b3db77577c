//! `lsrun [-h] [-V] [-P] [-v] [-m "host_name ..."] [-R res_req] command [argument ...]`:
//! run a task on the best host (the least loaded of the `-m` hosts, or of those that
//! satisfy `-R`, by default of the local host's type), through that host's RES; its
//! output comes here, this command's standard input and signals go to it, and this
//! command exits with its exit code (128 + the signal that killed it). `-v` says where
//! it runs (`<<Execute command on remote host hostB>>`). `-P` runs it under a
//! pseudo-terminal there (this terminal in raw mode meanwhile, its window size and
//! changes passed on); `-S` is refused as not supported yet.

use super::TaskLine;
use crate::batch::opts::Spec;
use std::process::ExitCode;

pub const USAGE: &str =
    "Usage: lsrun [-h] [-V] [-P] [-v] [-m \"host_name ...\"] [-R res_req] command [argument ...]\n";

const SPEC: Spec = Spec {
    flags: &["h", "V", "v", "P", "S"],
    valued: &["m", "R"],
};

/// Read the command line (without the program name). Err: the line to print before the
/// usage. Ok(None): `-h` or `-V`.
pub fn parse(args: &[String]) -> Result<Option<TaskLine>, String> {
    super::task_line(args, &SPEC, &["S"])
}

/// `lsrun`.
pub fn main(args: Vec<String>) -> ExitCode {
    let a = match super::parsed("lsrun", &args, USAGE, parse(&args)) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let config = match crate::load_config("lsrun") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let local = crate::batch::local_host(&config);
    let mut refused = None;
    let result = crate::block_on_leaving_reads(async {
        let reply = super::master_hosts(&config)
            .await
            .map_err(|e| format!("ls_placereq(): {e}"))?;
        let hosts = super::place(&config, reply, &a.hosts, a.res_req.as_deref(), &local)
            .map_err(|e| format!("ls_placereq(): {e}"))?;
        let host = hosts[0].clone();
        if a.verbose {
            eprintln!(
                "<<Execute {} on remote host {host}>>",
                a.argv.first().map_or("", String::as_str)
            );
        }
        let mut setup = super::TaskSetup::here(true);
        // As it connects: LSF_SERVERDIR/esub, whose output goes to the host's eexec.
        setup.eexec_input = match super::esub(&config, "lsrun", &a.argv) {
            Ok(out) => out,
            Err(code) => {
                refused = Some(code);
                return Ok(0);
            }
        };
        let _raw = if a.pty {
            setup.pty = Some(super::term::size_here());
            super::term::RawMode::enter()
        } else {
            None
        };
        super::run_task(&config, &host, &a.argv, &setup)
            .await
            .map_err(|e| format!("{host}: {e}"))
    });
    if let Some(code) = refused {
        return code;
    }
    match result {
        Ok(Ok(raw)) => ExitCode::from(super::exit_code(raw)),
        Ok(Err(e)) => {
            eprintln!("lsrun: {e}");
            crate::fail()
        }
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<Option<TaskLine>, String> {
        parse(&a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn options_end_at_the_command() {
        let a = args(&["-v", "-m", "hostA hostB", "ls", "-l", "-m"])
            .expect("parse")
            .expect("not help");
        assert!(a.verbose);
        assert_eq!(a.hosts, vec!["hostA", "hostB"]);
        assert_eq!(a.argv, vec!["ls", "-l", "-m"]);
        assert!(args(&["-v"]).is_err());
        assert!(args(&["-S", "sh"]).is_err_and(|e| e.contains("not supported")));
        assert!(args(&["-P", "sh"]).is_ok_and(|a| a.is_some_and(|a| a.pty)));
        assert_eq!(args(&["-h"]), Ok(None));
    }
}
