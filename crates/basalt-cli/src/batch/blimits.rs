//! `blimits`: the current usage of the resource allocation limits of lsb.resources'
//! Limit sections (lsb.users' MAX_JOBS is busers'), as mbatchd counted it at its last
//! scheduling pass: one row per limit and consumer in use, the consumers as configured
//! (groups with LSF's trailing `/`), `used/limit` for SLOTS, MEM, TMP, SWP (MB reserved by
//! `rusage[]`) and JOBS (`-` where the limit sets none).

use super::opts::{Item, Spec};
use basalt_proto::mbatchd::{LimitsReply, LimitsRequest};
use std::process::ExitCode;

const USAGE: &str = "Usage: blimits [-h] [-V]\n";

/// The table LSF's blimits prints.
pub fn table(reply: &LimitsReply) -> String {
    if reply.configured == 0 {
        return "No resource limits defined.\n".to_owned();
    }
    if reply.limits.is_empty() {
        return "No resource usage found.\n".to_owned();
    }
    // The APPS column when a limit in use names application profiles.
    let apps = reply
        .limits
        .iter()
        .any(|l| !l.apps.is_empty() && l.apps != "-");
    let consumers = |projects: &str, app: &str| {
        if apps {
            format!("{projects:<15} {app:<15}")
        } else {
            format!("{projects:<15}")
        }
    };
    let mut out = String::from("\nINTERNAL RESOURCE LIMITS:\n\n");
    out.push_str(&row(
        "NAME",
        "USERS",
        "QUEUES",
        "HOSTS",
        &consumers("PROJECTS", "APPS"),
        "SLOTS",
        "MEM",
        "TMP",
        "SWP",
        "JOBS",
    ));
    for l in &reply.limits {
        let used = |has: bool, u: u32, m: u32| {
            if has {
                format!("{u}/{m}")
            } else {
                "-".to_owned()
            }
        };
        let amount = |name: &str| {
            l.amounts
                .iter()
                .find(|a| a.name == name)
                .map_or("-".to_owned(), |a| {
                    format!("{}/{}", number(a.used), number(a.limit))
                })
        };
        out.push_str(&row(
            &l.name,
            &l.users,
            &l.queues,
            &l.hosts,
            &consumers(&l.projects, if l.apps.is_empty() { "-" } else { &l.apps }),
            &used(l.has_slots, l.slots_used, l.slots_limit),
            &amount("mem"),
            &amount("tmp"),
            &amount("swp"),
            &used(l.has_jobs, l.jobs_used, l.jobs_limit),
        ));
    }
    out
}

/// An amount as blimits shows it: whole numbers without a fraction.
fn number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[allow(clippy::too_many_arguments)]
fn row(
    name: &str,
    users: &str,
    queues: &str,
    hosts: &str,
    projects: &str,
    slots: &str,
    mem: &str,
    tmp: &str,
    swp: &str,
    jobs: &str,
) -> String {
    format!(
        "    {name:<15} {users:<15} {queues:<15} {hosts:<15} {projects} {slots:>7} {mem:>7} {tmp:>7} {swp:>7} {jobs:>7}\n"
    )
}

pub fn main(args: Vec<String>) -> ExitCode {
    let spec = Spec {
        flags: &["h", "V"],
        valued: &[],
    };
    let items = match super::parse_args("blimits", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    if items.iter().any(|i| matches!(i, Item::Arg(_))) {
        eprint!("{USAGE}");
        return crate::fail();
    }
    let config = match super::load_config("blimits") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        match client.limits(LimitsRequest {}).await {
            Ok(r) => {
                print!("{}", table(&r.into_inner()));
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
    use basalt_proto::mbatchd::LimitUsage;

    #[test]
    fn a_table_row_per_count_in_use_with_used_of_limit() {
        let reply = LimitsReply {
            configured: 1,
            limits: vec![LimitUsage {
                name: "perUser".into(),
                users: "alice".into(),
                queues: "-".into(),
                hosts: "-".into(),
                projects: "-".into(),
                has_slots: true,
                slots_used: 1,
                slots_limit: 2,
                ..Default::default()
            }],
        };
        let t = table(&reply);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[1], "INTERNAL RESOURCE LIMITS:");
        assert!(lines[3].trim_start().starts_with("NAME"), "{t}");
        let cols: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(
            cols,
            vec!["perUser", "alice", "-", "-", "-", "1/2", "-", "-", "-", "-"]
        );
    }

    /// A limit naming application profiles (APPS / PER_APP) adds the APPS column
    /// after PROJECTS; rows of other limits show `-` there.
    #[test]
    fn an_apps_column_when_a_limit_names_application_profiles() {
        let row = |name: &str, apps: &str| LimitUsage {
            name: name.into(),
            users: "-".into(),
            queues: "-".into(),
            hosts: "-".into(),
            projects: "-".into(),
            apps: apps.into(),
            has_jobs: true,
            jobs_used: 1,
            jobs_limit: 1,
            ..Default::default()
        };
        let t = table(&LimitsReply {
            configured: 2,
            limits: vec![row("perApp", "fluent"), row("all", "")],
        });
        let lines: Vec<&str> = t.lines().collect();
        let head: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(
            head,
            vec![
                "NAME", "USERS", "QUEUES", "HOSTS", "PROJECTS", "APPS", "SLOTS", "MEM", "TMP",
                "SWP", "JOBS"
            ]
        );
        let cols: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(
            cols,
            vec![
                "perApp", "-", "-", "-", "-", "fluent", "-", "-", "-", "-", "1/1"
            ]
        );
        assert_eq!(lines[5].split_whitespace().nth(5), Some("-"));
        assert_eq!(lines[3].find("APPS"), lines[4].find("fluent"), "{t}");
    }

    #[test]
    fn nothing_configured_or_nothing_in_use_says_so() {
        assert_eq!(
            table(&LimitsReply::default()),
            "No resource limits defined.\n"
        );
        assert_eq!(
            table(&LimitsReply {
                configured: 2,
                limits: vec![]
            }),
            "No resource usage found.\n"
        );
    }
}
