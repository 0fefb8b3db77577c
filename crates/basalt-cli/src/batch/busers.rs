//! `busers [user ... | all]`: each user's job slots by state (NJOBS = PEND + RUN + SSUSP +
//! USUSP; PEND counts PSUSP too) and limits (MAX: lsb.users MAX_JOBS; JL/P: lsb.users
//! JL/P, the per-processor slot limit on each host), in LSF's layout:
//! `USER/GROUP          JL/P    MAX  NJOBS   PEND    RUN  SSUSP  USUSP    RSV `.

use super::opts::{Item, Spec};
use basalt_proto::mbatchd::{UserInfo, UsersRequest};
use std::process::ExitCode;

const USAGE: &str = "Usage: busers [-h] [-V] [-w] [user_name ... | all]\n";

/// The table LSF's busers prints.
pub fn table(users: &[UserInfo]) -> String {
    let mut out = format!(
        "{:<18} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} \n",
        "USER/GROUP", "JL/P", "MAX", "NJOBS", "PEND", "RUN", "SSUSP", "USUSP", "RSV"
    );
    for u in users {
        let jl_p = if u.jl_p < 0.0 {
            "-".to_owned()
        } else if u.jl_p.fract() == 0.0 {
            format!("{:.0}", u.jl_p)
        } else {
            format!("{}", u.jl_p)
        };
        let max = if u.max < 0 {
            "-".to_owned()
        } else {
            u.max.to_string()
        };
        out.push_str(&format!(
            "{:<18} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}\n",
            u.name, jl_p, max, u.njobs, u.pend, u.run, u.ssusp, u.ususp, u.rsv
        ));
    }
    out
}

pub fn main(args: Vec<String>) -> ExitCode {
    let spec = Spec {
        flags: &["h", "V", "w"],
        valued: &[],
    };
    let items = match super::parse_args("busers", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let users: Vec<String> = items
        .into_iter()
        .filter_map(|i| match i {
            Item::Arg(a) => Some(a),
            Item::Opt(..) => None,
        })
        .collect();
    let config = match super::load_config("busers") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        match client.users(UsersRequest { users }).await {
            Ok(r) => {
                let reply = r.into_inner();
                if reply.users.is_empty() {
                    eprintln!("No user/user group found");
                    return crate::fail();
                }
                print!("{}", table(&reply.users));
                ExitCode::SUCCESS
            }
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                crate::fail()
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_lsfs_layout() {
        let t = table(&[UserInfo {
            name: "liewa".into(),
            jl_p: -1.0,
            max: 48,
            njobs: 3,
            pend: 1,
            run: 2,
            ..Default::default()
        }]);
        assert_eq!(
            t,
            "USER/GROUP          JL/P    MAX  NJOBS   PEND    RUN  SSUSP  USUSP    RSV \n\
             liewa                  -     48      3      1      2      0      0      0\n"
        );
    }
}
