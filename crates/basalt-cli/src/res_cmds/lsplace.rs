//! `lsplace [-h] [-V] [-n num_hosts] [-R res_req] [host_name ...]`: the hosts a task
//! would be placed on (what `lsrun` chooses), best first, on one line: `num_hosts` of
//! them (1 by default, 0 for every eligible host), among the hosts named (all when none
//! is). `lsplace: Not enough host(s) currently eligible` (exit 255) when fewer qualify.

use crate::batch::opts::{self, Item, Spec};
use std::process::ExitCode;

pub const USAGE: &str = "Usage: lsplace [-h] [-V] [-n num_hosts] [-R res_req] [host_name ...]\n";

const SPEC: Spec = Spec {
    flags: &["h", "V"],
    valued: &["n", "R"],
};

/// An lsplace command line: how many hosts (0: all), the requirement, the hosts named.
#[derive(Debug, Default, PartialEq)]
pub struct LsplaceArgs {
    pub count: usize,
    pub res_req: Option<String>,
    pub hosts: Vec<String>,
}

/// Read the command line. Ok(None): `-h` or `-V`.
pub fn parse(args: &[String]) -> Result<Option<LsplaceArgs>, String> {
    let items = opts::parse(args, &SPEC, false).map_err(|e| e.to_string())?;
    let mut a = LsplaceArgs {
        count: 1,
        ..Default::default()
    };
    for it in items {
        match it {
            Item::Arg(h) => a.hosts.push(h),
            Item::Opt(n, v) => match n.as_str() {
                "h" | "V" => return Ok(None),
                "n" => {
                    let v = v.unwrap_or_default();
                    a.count = v
                        .trim()
                        .parse()
                        .map_err(|_| format!("{v}: Bad argument for option -n"))?;
                }
                _ => a.res_req = v,
            },
        }
    }
    Ok(Some(a))
}

/// The line lsplace prints for the eligible hosts (best first), or its reason.
pub fn chosen(eligible: &[String], count: usize) -> Result<String, String> {
    if eligible.len() < count.max(1) {
        return Err("Not enough host(s) currently eligible".to_owned());
    }
    let n = if count == 0 { eligible.len() } else { count };
    Ok(eligible[..n].join(" "))
}

/// `lsplace`.
pub fn main(args: Vec<String>) -> ExitCode {
    let a = match super::parsed("lsplace", &args, USAGE, parse(&args)) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let config = match crate::load_config("lsplace") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let local = crate::batch::local_host(&config);
    let result = crate::block_on(async {
        let reply = super::master_hosts(&config).await?;
        let eligible = super::place(&config, reply, &a.hosts, a.res_req.as_deref(), &local)?;
        chosen(&eligible, a.count)
    });
    match result {
        Ok(Ok(line)) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("lsplace: {e}");
            crate::fail()
        }
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_host_by_default_all_with_zero_and_too_few_is_refused() {
        let hosts = vec!["hostB".to_owned(), "hostA".to_owned()];
        assert_eq!(chosen(&hosts, 1).as_deref(), Ok("hostB"));
        assert_eq!(chosen(&hosts, 0).as_deref(), Ok("hostB hostA"));
        assert!(chosen(&hosts, 3).is_err());
        let a = parse(&["-n".into(), "2".into(), "-R".into(), "mem>1".into()])
            .expect("parse")
            .expect("not help");
        assert_eq!((a.count, a.res_req.as_deref()), (2, Some("mem>1")));
        assert!(parse(&["-n".into(), "x".into()]).is_err());
    }
}
