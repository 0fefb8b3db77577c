//! `bresources`: the resource configuration of lsb.resources, read from the configuration
//! files (no daemon needed).
//!
//! * `bresources`: every Limit section and the ReservationUsage section, written back in
//!   lsb.resources' own syntax (what mbatchd applies: the limits with their consumers and
//!   amounts, each resource's reservation method).
//! * `bresources -s [resource ...]`: the ReservationUsage section only (those resources),
//!   `RESOURCE METHOD RESERVE` a row each.
//!
//! Nothing configured: `No resource configuration defined.` (`-s`: `No reservation usage
//! configuration defined.`), exit 255; a named resource without a row: `<name>: Resource
//! not found in ReservationUsage`, exit 255 (the rows found are still shown). `-g`
//! (guaranteed resource pools) and `-p` (energy-aware policies) are refused: Basalt has
//! neither.

use super::opts::Item;
use basalt_config::batch::{Limit, ReservationUsage};
use std::fmt::Write as _;
use std::process::ExitCode;

const USAGE: &str = "Usage: bresources [-h] [-V] [-s [resource_name ...]]\n";

/// The ReservationUsage section (those rows of `names`, or every row).
pub fn usage_section(rows: &[&ReservationUsage]) -> String {
    let mut out = String::from("Begin ReservationUsage\n");
    let _ = writeln!(out, "{:<20} {:<12} RESERVE", "RESOURCE", "METHOD");
    for u in rows {
        let _ = writeln!(
            out,
            "{:<20} {:<12} {}",
            u.resource,
            u.method.name(),
            if u.reserve { "Y" } else { "N" }
        );
    }
    out.push_str("End ReservationUsage\n");
    out
}

/// A Limit section as lsb.resources writes it (vertical form).
pub fn limit_section(l: &Limit) -> String {
    let mut out = String::from("Begin Limit\n");
    let mut kv = |k: &str, v: String| {
        if !v.is_empty() {
            let _ = writeln!(out, "{k:<12} = {v}");
        }
    };
    kv("NAME", l.name.clone());
    for (k, v) in [
        ("USERS", &l.users),
        ("PER_USER", &l.per_user),
        ("QUEUES", &l.queues),
        ("PER_QUEUE", &l.per_queue),
        ("HOSTS", &l.hosts),
        ("PER_HOST", &l.per_host),
        ("PROJECTS", &l.projects),
        ("PER_PROJECT", &l.per_project),
    ] {
        kv(k, v.join(" "));
    }
    if let Some(n) = l.slots {
        let window = l
            .slots_window
            .as_ref()
            .map(|w| format!(" {w}"))
            .unwrap_or_default();
        kv("SLOTS", format!("{n}{window}"));
    }
    if let Some(n) = l.jobs {
        kv("JOBS", n.to_string());
    }
    for (k, v) in &l.other {
        kv(k, v.clone());
    }
    out.push_str("End Limit\n");
    out
}

/// What `bresources` prints for the configuration (`Err`: the refusal lines).
pub fn render(
    limits: &[Limit],
    usage: &[ReservationUsage],
    only_usage: bool,
    names: &[String],
) -> Result<String, String> {
    if only_usage {
        let mut missing = String::new();
        let rows: Vec<&ReservationUsage> = if names.is_empty() {
            usage.iter().collect()
        } else {
            let mut rows = Vec::new();
            for n in names {
                match usage.iter().find(|u| &u.resource == n) {
                    Some(u) => rows.push(u),
                    None => {
                        let _ = writeln!(missing, "{n}: Resource not found in ReservationUsage");
                    }
                }
            }
            rows
        };
        if rows.is_empty() {
            if missing.is_empty() {
                missing.push_str("No reservation usage configuration defined.\n");
            }
            return Err(missing);
        }
        let text = usage_section(&rows);
        return if missing.is_empty() {
            Ok(text)
        } else {
            Err(format!("{text}\u{0}{missing}"))
        };
    }
    if limits.is_empty() && usage.is_empty() {
        return Err("No resource configuration defined.\n".into());
    }
    let mut parts: Vec<String> = limits.iter().map(limit_section).collect();
    if !usage.is_empty() {
        parts.push(usage_section(&usage.iter().collect::<Vec<_>>()));
    }
    Ok(parts.join("\n"))
}

/// `bresources`.
pub fn main(args: Vec<String>) -> ExitCode {
    let spec = super::opts::Spec {
        flags: &["h", "V", "s", "p"],
        valued: &["g"],
    };
    let items = match super::parse_args("bresources", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut only_usage = false;
    let mut names = Vec::new();
    for it in items {
        match it {
            Item::Opt(n, _) if n == "s" => only_usage = true,
            Item::Opt(n, _) if n == "g" || n == "p" => {
                eprintln!(
                    "bresources: -{n}: {} are not supported by Basalt",
                    if n == "g" {
                        "guaranteed resource pools"
                    } else {
                        "energy-aware scheduling policies"
                    }
                );
                return crate::fail();
            }
            Item::Opt(..) => {}
            Item::Arg(a) => names.push(a),
        }
    }
    if !names.is_empty() && !only_usage {
        eprintln!("bresources: resource names go with -s");
        eprint!("{USAGE}");
        return crate::fail();
    }
    let envdir = basalt_runtime::envdir();
    let config = match basalt_config::load(&envdir) {
        Ok(l) => l.config,
        Err(e) => {
            eprintln!(
                "bresources: cannot read the configuration in {}:\n{e}",
                envdir.display()
            );
            return crate::fail();
        }
    };
    let b = &config.batch;
    match render(&b.limits, &b.reservation_usage, only_usage, &names) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            // Rows found, then the names not found.
            match e.split_once('\u{0}') {
                Some((found, missing)) => {
                    print!("{found}");
                    eprint!("{missing}");
                }
                None => eprint!("{e}"),
            }
            crate::fail()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_config::batch::ReserveMethod;

    fn row(r: &str, m: ReserveMethod, reserve: bool) -> ReservationUsage {
        ReservationUsage {
            resource: r.into(),
            method: m,
            reserve,
            line: 1,
        }
    }

    #[test]
    fn reservation_usage_rows_and_names() {
        let usage = vec![
            row("licA", ReserveMethod::PerJob, false),
            row("mem", ReserveMethod::PerTask, true),
        ];
        assert_eq!(
            render(&[], &usage, true, &[]),
            Ok("Begin ReservationUsage\n\
                RESOURCE             METHOD       RESERVE\n\
                licA                 PER_JOB      N\n\
                mem                  PER_TASK     Y\n\
                End ReservationUsage\n"
                .into())
        );
        assert_eq!(
            render(&[], &usage, true, &["mem".into(), "nope".into()]),
            Err("Begin ReservationUsage\n\
                 RESOURCE             METHOD       RESERVE\n\
                 mem                  PER_TASK     Y\n\
                 End ReservationUsage\n\u{0}nope: Resource not found in ReservationUsage\n"
                .into())
        );
        assert_eq!(
            render(&[], &[], true, &[]),
            Err("No reservation usage configuration defined.\n".into())
        );
        assert_eq!(
            render(&[], &[], false, &[]),
            Err("No resource configuration defined.\n".into())
        );
    }

    #[test]
    fn limits_are_written_back_as_configured() {
        let l = Limit {
            name: "perUser".into(),
            users: vec![],
            per_user: vec!["all".into(), "~root".into()],
            queues: vec!["normal".into()],
            per_queue: vec![],
            hosts: vec![],
            per_host: vec![],
            projects: vec![],
            per_project: vec![],
            slots: Some(4),
            slots_window: None,
            jobs: None,
            other: [("MEM".to_string(), "100".to_string())].into(),
            line: 1,
        };
        let text = render(
            &[l],
            &[row("licA", ReserveMethod::PerHost, false)],
            false,
            &[],
        )
        .expect("text");
        assert_eq!(
            text,
            "Begin Limit\n\
             NAME         = perUser\n\
             PER_USER     = all ~root\n\
             QUEUES       = normal\n\
             SLOTS        = 4\n\
             MEM          = 100\n\
             End Limit\n\
             \n\
             Begin ReservationUsage\n\
             RESOURCE             METHOD       RESERVE\n\
             licA                 PER_HOST     N\n\
             End ReservationUsage\n"
        );
    }
}
