//! `blaunch [-h] [-V] [-n] [-z "host_name ..." | -u host_file | host_name] command
//! [argument ...]`: inside a batch job, start the command's tasks on the job's hosts
//! through their RES, all at once: on the host named, on each host of `-z` or of the
//! host file, or (none named) one task per slot of the job (`LSB_MCPU_HOSTS`, else
//! `LSB_HOSTS`). Every host must be one the job was given. The tasks run with the
//! job's environment and working directory; their output comes here as it is written;
//! with one task its standard input is this command's (`-n`: none). blaunch exits 0
//! when every task exited 0, else with the first failing task's exit code (255 for a
//! host that could not run it). The tasks end with the job: a killed blaunch takes its
//! tasks with it (RES kills a task whose client is gone).

use crate::batch::opts::{self, Item, Spec};
use std::process::ExitCode;

pub const USAGE: &str = "Usage: blaunch [-h] [-V] [-n] [-z \"host_name ...\" | -u host_file | host_name] command [argument ...]\n";

const SPEC: Spec = Spec {
    flags: &["h", "V", "n"],
    valued: &["z", "u"],
};

/// A blaunch command line.
#[derive(Debug, Default, PartialEq)]
pub struct BlaunchArgs {
    pub no_stdin: bool,
    /// Hosts named (`-z`, `-u`'s file, or the first argument); empty: the job's slots.
    pub hosts: Vec<String>,
    pub host_file: Option<String>,
    pub argv: Vec<String>,
}

/// Read the command line. Ok(None): `-h` or `-V`. Without `-z`/`-u`, a first argument
/// that is one of `job_hosts` names the host (as LSF's blaunch reads it).
pub fn parse(args: &[String], job_hosts: &[String]) -> Result<Option<BlaunchArgs>, String> {
    let items = opts::parse(args, &SPEC, true).map_err(|e| e.to_string())?;
    let mut a = BlaunchArgs::default();
    let mut named = false;
    for it in items {
        match it {
            Item::Arg(x) => a.argv.push(x),
            Item::Opt(n, v) => match n.as_str() {
                "h" | "V" => return Ok(None),
                "n" => a.no_stdin = true,
                "z" => {
                    named = true;
                    a.hosts
                        .extend(v.unwrap_or_default().split_whitespace().map(str::to_owned));
                }
                _ => {
                    named = true;
                    a.host_file = v;
                }
            },
        }
    }
    if !named
        && a.argv.len() > 1
        && job_hosts
            .iter()
            .any(|h| basalt_core::same_host(h, &a.argv[0]))
    {
        a.hosts.push(a.argv.remove(0));
    }
    if a.argv.is_empty() {
        return Err("a command is required".to_owned());
    }
    Ok(Some(a))
}

/// The job's slots, one host name per slot: `LSB_MCPU_HOSTS` (`hostA 2 hostB 1`), else
/// `LSB_HOSTS` (`hostA hostA hostB`).
pub fn job_slots(mcpu_hosts: Option<&str>, hosts: Option<&str>) -> Vec<String> {
    if let Some(m) = mcpu_hosts.filter(|m| !m.trim().is_empty()) {
        let words: Vec<&str> = m.split_whitespace().collect();
        let mut out = Vec::new();
        for pair in words.chunks(2) {
            if let [h, n] = pair {
                let n: usize = n.parse().unwrap_or(1);
                out.extend(std::iter::repeat_n((*h).to_owned(), n));
            }
        }
        return out;
    }
    hosts
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// `blaunch`.
pub fn main(args: Vec<String>) -> ExitCode {
    // Help and version answer anywhere, in a job or not.
    if args
        .first()
        .is_some_and(|a| a == "-h" || a == "--help" || a == "-V")
    {
        return match super::parsed("blaunch", &args, USAGE, parse(&args, &[])) {
            Ok(_) | Err(_) => ExitCode::SUCCESS,
        };
    }
    if std::env::var("LSB_JOBID").is_err() {
        eprintln!("blaunch: not running in a batch job (LSB_JOBID is not set)");
        return crate::fail();
    }
    let slots = job_slots(
        std::env::var("LSB_MCPU_HOSTS").ok().as_deref(),
        std::env::var("LSB_HOSTS").ok().as_deref(),
    );
    let mut a = match super::parsed("blaunch", &args, USAGE, parse(&args, &slots)) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if let Some(f) = &a.host_file {
        match std::fs::read_to_string(f) {
            Ok(t) => a.hosts = super::lsgrun::host_file_names(&t),
            Err(e) => {
                eprintln!("blaunch: {f}: {e}");
                return crate::fail();
            }
        }
    }
    let hosts = if a.hosts.is_empty() {
        slots.clone()
    } else {
        a.hosts.clone()
    };
    if let Some(stranger) = hosts
        .iter()
        .find(|h| !slots.iter().any(|s| basalt_core::same_host(s, h)))
    {
        eprintln!("blaunch: host <{stranger}> is not allocated to this job");
        return crate::fail();
    }
    if hosts.is_empty() {
        eprintln!("blaunch: the job has no hosts (LSB_HOSTS is empty)");
        return crate::fail();
    }
    let config = match crate::load_config("blaunch") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let stdin = hosts.len() == 1 && !a.no_stdin;
    let setup = super::TaskSetup::here(stdin);
    let result = crate::block_on_leaving_reads(launch(&config, hosts, &a.argv, &setup, "blaunch"));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(code) => code,
    }
}

/// Start `argv` on each of `hosts` at once through their RES (blaunch, and libbat's
/// `lsb_launch`) and wait for them: each task gets `setup` plus `LSF_PM_TASKID` (its
/// number, from 1, in the order of `hosts`). 0 when every task exited 0, else the first
/// failing task's exit code (255: the host could not run it, said on stderr after
/// `who: host:`).
pub async fn launch(
    config: &basalt_config::Config,
    hosts: Vec<String>,
    argv: &[String],
    setup: &super::TaskSetup,
    who: &str,
) -> u8 {
    let one = |(i, host): (usize, String)| {
        let mut setup = setup.clone();
        setup.env.retain(|v| !v.starts_with("LSF_PM_TASKID="));
        setup.env.push(format!("LSF_PM_TASKID={}", i + 1));
        async move {
            match super::run_task_counted(config, &host, argv, &setup).await {
                Ok((raw, usage)) => {
                    if let Some(u) = usage {
                        count(&host, &u);
                    }
                    super::exit_code(raw)
                }
                Err(e) => {
                    eprintln!("{who}: {host}: {e}");
                    255
                }
            }
        }
    };
    let codes = super::lsgrun::join_all(hosts.into_iter().enumerate().map(one).collect()).await;
    codes.into_iter().find(|c| *c != 0).unwrap_or(0)
}

/// Add a task's usage to the job's (`LSB_ACCT_FILE`, which the job's supervisor adds up
/// at each sample and at the job's end); a file that cannot be written to is only noted.
fn count(host: &str, u: &basalt_proto::res::TaskUsage) {
    use std::io::Write as _;
    let Some(path) = std::env::var_os("LSB_ACCT_FILE") else {
        return;
    };
    let line = basalt_core::job::task_usage::line(host, u.utime, u.stime, u.max_rss_kb);
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "blaunch: {host}: the task's usage is not counted in the job's: {}: {e}",
            std::path::Path::new(&path).display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hosts_and_the_first_argument_as_a_host() {
        assert_eq!(
            job_slots(Some("hostA 2 hostB 1"), Some("x")),
            vec!["hostA", "hostA", "hostB"]
        );
        assert_eq!(job_slots(None, Some("hostA hostB")), vec!["hostA", "hostB"]);
        let job = vec!["hostA".to_owned(), "hostB".to_owned()];
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        let a = parse(&s(&["hostB", "hostname"]), &job)
            .expect("ok")
            .expect("args");
        assert_eq!((a.hosts, a.argv), (s(&["hostB"]), s(&["hostname"])));
        // A single word is the command, not a host.
        let a = parse(&s(&["hostB"]), &job).expect("ok").expect("args");
        assert_eq!((a.hosts.len(), a.argv), (0, s(&["hostB"])));
        let a = parse(&s(&["-z", "hostA hostB", "-n", "echo", "x"]), &job)
            .expect("ok")
            .expect("args");
        assert!(a.no_stdin);
        assert_eq!(a.hosts, s(&["hostA", "hostB"]));
    }
}
