//! `bparams` and the `KEY = VALUE` reports (`bparams -a`, `badmin showconf mbd`,
//! cli-output.md §7, cli-contract.md §10): a header line, then only `    KEY = VALUE`
//! lines (snakemake splits every later line on ` = `).

use super::opts::{Item, Spec};
use super::timefmt::{self, ToTm};
use basalt_config::Config;
use basalt_proto::mbatchd::{KeyValue, ParamsReply, ParamsRequest};
use std::fmt::Write as _;
use std::process::ExitCode;

/// Plain `bparams`.
pub fn brief(p: &ParamsReply) -> String {
    let queues = if p.default_queues.is_empty() {
        "normal".to_owned()
    } else {
        p.default_queues.join(" ")
    };
    format!(
        "Default Queues:  {queues}\nJob Dispatch Interval:  {} seconds\nJob Checking Interval:  {} seconds\nJob Accepting Interval:  {} seconds\n",
        p.mbd_sleep_time,
        p.sbd_sleep_time,
        u64::from(p.job_accept_interval) * u64::from(p.mbd_sleep_time)
    )
}

/// One `    KEY = VALUE` line; newlines in values are flattened so every line keeps
/// the shape.
fn kv_line(out: &mut String, k: &str, v: &str) {
    let v = v.replace(['\n', '\r'], " ");
    let v = if v.trim().is_empty() {
        "-".to_owned()
    } else {
        v
    };
    let _ = writeln!(out, "    {k} = {v}");
}

/// A header then `    KEY = VALUE` lines.
pub fn key_values(header: &str, kvs: &[KeyValue]) -> String {
    let mut out = format!("{header}\n");
    for kv in kvs.iter().filter(|kv| !kv.key.trim().is_empty()) {
        kv_line(&mut out, kv.key.trim(), &kv.value);
    }
    out
}

/// `badmin showstatus` (LSF's layout): the available hosts now and at most since mbatchd
/// started, the batch servers by status, the jobs by state, the users, when mbatchd
/// started and its pid. (LSF's `Cores` line is left out: LIM counts CPUs, not cores.
/// `badmin reconfig` restarts mbatchd, so its time is the latest start.)
pub fn showstatus(p: &ParamsReply, tm: ToTm) -> String {
    let s = p.status.unwrap_or_default();
    let mut out = String::from(
        "LSF runtime mbatchd information
",
    );
    let top = |out: &mut String, label: &str, value: String| {
        let _ = writeln!(out, "    {label:<24}{value}");
    };
    let sub = |out: &mut String, label: &str, value: String| {
        let _ = writeln!(out, "        {label:<20}{value}");
    };
    out.push_str(
        "    Available local hosts (current/peak):
",
    );
    sub(
        &mut out,
        "Clients:",
        format!("{}/{}", s.clients, s.clients_peak),
    );
    sub(
        &mut out,
        "Servers:",
        format!("{}/{}", s.servers, s.servers_peak),
    );
    sub(&mut out, "CPUs:", format!("{}/{}", s.cpus, s.cpus_peak));
    sub(&mut out, "Slots:", format!("{}/{}", s.slots, s.slots_peak));
    out.push('\n');
    let servers = s.hosts_ok + s.hosts_closed + s.hosts_unreach + s.hosts_unavail;
    top(&mut out, "Number of servers:", servers.to_string());
    sub(&mut out, "Ok:", s.hosts_ok.to_string());
    sub(&mut out, "Closed:", s.hosts_closed.to_string());
    sub(&mut out, "Unreachable:", s.hosts_unreach.to_string());
    sub(&mut out, "Unavailable:", s.hosts_unavail.to_string());
    out.push('\n');
    let jobs = s.jobs_run + s.jobs_susp + s.jobs_pend + s.jobs_finished;
    top(&mut out, "Number of jobs:", jobs.to_string());
    sub(&mut out, "Running:", s.jobs_run.to_string());
    sub(&mut out, "Suspended:", s.jobs_susp.to_string());
    sub(&mut out, "Pending:", s.jobs_pend.to_string());
    sub(&mut out, "Finished:", s.jobs_finished.to_string());
    out.push('\n');
    top(&mut out, "Number of users:", s.users.to_string());
    top(
        &mut out,
        "Number of user groups:",
        s.user_groups.to_string(),
    );
    top(
        &mut out,
        "Number of active users:",
        s.active_users.to_string(),
    );
    out.push('\n');
    let start = if p.started_at > 0 {
        timefmt::ctime(&tm(p.started_at))
    } else {
        "-".to_owned()
    };
    top(&mut out, "Latest mbatchd start:", start);
    top(&mut out, "Active mbatchd PID:", p.mbd_pid.to_string());
    out
}

/// `bparams -a`.
pub fn all(p: &ParamsReply, tm: ToTm, now: i64) -> String {
    let at = if p.started_at > 0 { p.started_at } else { now };
    key_values(
        &format!("lsb.params configuration at {}", timefmt::ctime(&tm(at))),
        &p.params,
    )
}

/// `badmin showconf mbd`: mbatchd's configuration, with `LSB_SHAREDIR`, `LSF_CONFDIR`
/// and `LSF_UNIT_FOR_LIMITS` always present (taken from the local configuration when
/// mbatchd did not send them).
pub fn showconf_mbd(p: &ParamsReply, local: &[KeyValue], tm: ToTm, now: i64) -> String {
    let at = if p.started_at > 0 { p.started_at } else { now };
    let mut kvs = p.mbd_conf.clone();
    for kv in local {
        if !kvs.iter().any(|k| k.key == kv.key) {
            kvs.push(kv.clone());
        }
    }
    key_values(
        &format!("MBD configuration at {}", timefmt::ctime(&tm(at))),
        &kvs,
    )
}

/// The settings `showconf mbd` must always show, from the local configuration.
pub fn required_conf(config: &Config) -> Vec<KeyValue> {
    let kv = |k: &str, v: String| KeyValue {
        key: k.to_owned(),
        value: v,
    };
    vec![
        kv("LSB_SHAREDIR", config.sharedir().display().to_string()),
        kv("LSF_CONFDIR", config.confdir.display().to_string()),
        kv(
            "LSF_UNIT_FOR_LIMITS",
            config
                .lsf_conf
                .get("LSF_UNIT_FOR_LIMITS")
                .unwrap_or("KB")
                .to_owned(),
        ),
    ]
}

/// Ask mbatchd for its parameters.
pub async fn fetch(config: &Config) -> Result<ParamsReply, ExitCode> {
    let mut client = super::connect_mbatchd(config)
        .await
        .map_err(|e| super::connect_failed(&e))?;
    client
        .params(ParamsRequest {})
        .await
        .map(|r| {
            let r = r.into_inner();
            super::config_banner(&r.config_problem);
            r
        })
        .map_err(|s| {
            eprintln!("{}", super::status_text(&s));
            crate::fail()
        })
}

/// `bparams [-a]`.
pub fn main(args: Vec<String>) -> ExitCode {
    let usage = "Usage: bparams [-h] [-V] [-a | -l]\n";
    let spec = Spec {
        flags: &["h", "V", "a", "l"],
        valued: &[],
    };
    let items = match super::parse_args("bparams", &args, &spec, usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut every = false;
    for it in items {
        match it {
            Item::Opt(n, _) if n == "a" || n == "l" => every = true,
            Item::Opt(..) => {}
            Item::Arg(_) => {
                eprint!("{usage}");
                return crate::fail();
            }
        }
    }
    let config = match super::load_config("bparams") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let p = match fetch(&config).await {
            Ok(p) => p,
            Err(code) => return code,
        };
        if every {
            print!("{}", all(&p, timefmt::local, timefmt::now()));
        } else {
            print!("{}", brief(&p));
        }
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 50 item 10: `badmin showstatus` in LSF's layout.
    #[test]
    fn showstatus_is_lsf_s_summary() {
        let p = ParamsReply {
            started_at: 1_795_339_535,
            mbd_pid: 4242,
            status: Some(basalt_proto::mbatchd::MbdStatus {
                clients: 1,
                clients_peak: 1,
                servers: 2,
                servers_peak: 3,
                cpus: 8,
                cpus_peak: 12,
                slots: 8,
                slots_peak: 12,
                hosts_ok: 1,
                hosts_closed: 1,
                hosts_unavail: 1,
                jobs_run: 2,
                jobs_pend: 5,
                jobs_finished: 7,
                users: 3,
                user_groups: 1,
                active_users: 2,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            showstatus(&p, timefmt::utc),
            "LSF runtime mbatchd information
    Available local hosts (current/peak):
        Clients:            1/1
        Servers:            2/3
        CPUs:               8/12
        Slots:              8/12

    Number of servers:      3
        Ok:                 1
        Closed:             1
        Unreachable:        0
        Unavailable:        1

    Number of jobs:         14
        Running:            2
        Suspended:          0
        Pending:            5
        Finished:           7

    Number of users:        3
    Number of user groups:  1
    Number of active users: 2

    Latest mbatchd start:   Sun Nov 22 09:25:35 2026
    Active mbatchd PID:     4242
"
        );
    }

    fn reply() -> ParamsReply {
        ParamsReply {
            params: vec![
                KeyValue {
                    key: "MBD_SLEEP_TIME".into(),
                    value: "10".into(),
                },
                KeyValue {
                    key: "DEFAULT_QUEUE".into(),
                    value: "normal".into(),
                },
            ],
            default_queues: vec!["normal".into()],
            mbd_sleep_time: 10,
            sbd_sleep_time: 7,
            job_accept_interval: 1,
            mbd_conf: vec![KeyValue {
                key: "LSB_SHAREDIR".into(),
                value: "/work".into(),
            }],
            started_at: 1_795_339_535,
            config_problem: String::new(),
            ..Default::default()
        }
    }

    #[test]
    fn brief_output() {
        assert_eq!(
            brief(&reply()),
            "Default Queues:  normal\nJob Dispatch Interval:  10 seconds\nJob Checking Interval:  7 seconds\nJob Accepting Interval:  10 seconds\n"
        );
    }

    #[test]
    fn key_value_reports() {
        assert_eq!(
            all(&reply(), timefmt::utc, 0),
            "lsb.params configuration at Sun Nov 22 09:25:35 2026\n    MBD_SLEEP_TIME = 10\n    DEFAULT_QUEUE = normal\n"
        );
        let local = vec![
            KeyValue {
                key: "LSB_SHAREDIR".into(),
                value: "/local".into(),
            },
            KeyValue {
                key: "LSF_UNIT_FOR_LIMITS".into(),
                value: "MB".into(),
            },
        ];
        let got = showconf_mbd(&reply(), &local, timefmt::utc, 0);
        assert_eq!(
            got,
            "MBD configuration at Sun Nov 22 09:25:35 2026\n    LSB_SHAREDIR = /work\n    LSF_UNIT_FOR_LIMITS = MB\n"
        );
        // Every line after the first has the KEY = VALUE shape.
        let odd = key_values(
            "H",
            &[KeyValue {
                key: "K".into(),
                value: "a\nb".into(),
            }],
        );
        assert_eq!(odd, "H\n    K = a b\n");
    }
}
