//! `bapp [-l] [-w] [app_name ...]`: the application profiles of lsb.applications and
//! their unfinished jobs' slots by state (`APPLICATION_NAME NJOBS PEND RUN SUSP`), or with
//! `-l` a block per profile: its description, statistics and parameters.

use super::opts::{Item, Spec};
use basalt_proto::mbatchd::{AppInfo, AppsRequest};
use std::process::ExitCode;

const USAGE: &str = "Usage: bapp [-h] [-V] [-l | -w] [app_name ...]\n";

/// The short table.
pub fn table(apps: &[AppInfo]) -> String {
    let mut out = format!(
        "{:<19} {:>8} {:>8} {:>8} {:>8}\n",
        "APPLICATION_NAME", "NJOBS", "PEND", "RUN", "SUSP"
    );
    for a in apps {
        out.push_str(&format!(
            "{:<19} {:>8} {:>8} {:>8} {:>8}\n",
            a.name,
            a.njobs,
            a.pend,
            a.run,
            a.ssusp + a.ususp
        ));
    }
    out
}

/// The long format: a block per profile.
pub fn long(apps: &[AppInfo]) -> String {
    let mut out = String::new();
    for a in apps {
        out.push_str(&format!("\nAPPLICATION NAME: {}\n", a.name));
        if !a.description.is_empty() {
            out.push_str(&format!(" -- {}\n", a.description));
        }
        out.push_str("\nSTATISTICS:\n");
        out.push_str(&format!(
            "   {:>5}    {:>5}    {:>5}    {:>5}    {:>5}    {:>5}\n",
            "NJOBS", "PEND", "RUN", "SSUSP", "USUSP", "RSV"
        ));
        out.push_str(&format!(
            "   {:>5}    {:>5}    {:>5}    {:>5}    {:>5}    {:>5}\n",
            a.njobs, a.pend, a.run, a.ssusp, a.ususp, a.rsv
        ));
        if !a.settings.is_empty() {
            out.push_str("\nPARAMETERS:\n\n");
            for kv in &a.settings {
                out.push_str(&format!("{}: {}\n", kv.key, kv.value));
            }
        }
        out.push('\n');
    }
    out
}

pub fn main(args: Vec<String>) -> ExitCode {
    let spec = Spec {
        flags: &["h", "V", "l", "w"],
        valued: &[],
    };
    let items = match super::parse_args("bapp", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut long_format = false;
    let mut names = Vec::new();
    for it in items {
        match it {
            Item::Arg(a) => names.push(a),
            Item::Opt(n, _) if n == "l" => long_format = true,
            Item::Opt(..) => {}
        }
    }
    let config = match super::load_config("bapp") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let reply = match client.apps(AppsRequest { names }).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                return crate::fail();
            }
        };
        super::named_listing(
            !reply.apps.is_empty(),
            &reply.not_found,
            ("No such application", "No application profiles found"),
            || {
                if long_format {
                    long(&reply.apps)
                } else {
                    table(&reply.apps)
                }
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_proto::mbatchd::KeyValue;

    fn fluent() -> AppInfo {
        AppInfo {
            name: "fluent".into(),
            description: "FLUENT jobs".into(),
            njobs: 3,
            pend: 1,
            run: 1,
            ssusp: 1,
            settings: vec![KeyValue {
                key: "RUNLIMIT".into(),
                value: "60".into(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_table_counts_the_profiles_jobs_with_suspended_ones_together() {
        let t = table(&[fluent()]);
        let lines: Vec<Vec<&str>> = t.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(
            lines[0],
            vec!["APPLICATION_NAME", "NJOBS", "PEND", "RUN", "SUSP"]
        );
        assert_eq!(lines[1], vec!["fluent", "3", "1", "1", "1"]);
    }

    #[test]
    fn the_long_format_has_description_statistics_and_parameters() {
        let t = long(&[fluent()]);
        assert!(
            t.contains("APPLICATION NAME: fluent\n -- FLUENT jobs\n"),
            "{t}"
        );
        assert!(t.contains("STATISTICS:\n"), "{t}");
        assert!(t.contains("PARAMETERS:\n\nRUNLIMIT: 60\n"), "{t}");
    }
}
