//! `bqueues` and `bhosts` (cli-output.md §4–5): the short tables, `-w` and `-l`.

use super::bjobs::thresholds;
use super::opts::{Item, Spec};
use super::text::col;
use basalt_proto::mbatchd::{BatchHostInfo, HostsRequest, QueueInfo, QueuesRequest};
use std::fmt::Write as _;
use std::process::ExitCode;

fn limit(v: i64) -> String {
    if v < 0 { "-".into() } else { v.to_string() }
}

fn limit_f(v: f64) -> String {
    if v < 0.0 || !v.is_finite() {
        "-".into()
    } else {
        format!("{v:.0}")
    }
}

/// A queue's status word: `Open:Active`, `Closed:Inact`, ... (`-l`: `Inact_Adm`, `Inact_Win`).
pub fn queue_status(q: &QueueInfo, long: bool) -> String {
    let open = if q.open { "Open" } else { "Closed" };
    let act = if q.active {
        "Active".to_owned()
    } else if long && !q.inactive_reason.is_empty() {
        q.inactive_reason.clone()
    } else if long {
        "Inact_Adm".to_owned()
    } else {
        "Inact".to_owned()
    };
    format!("{open}:{act}")
}

/// The header of `bqueues`.
pub const QUEUES_HEADER: &str =
    "QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP ";

/// `bqueues` / `bqueues -w`.
pub fn queues_table(queues: &[QueueInfo], wide: bool) -> String {
    let mut out = String::from(QUEUES_HEADER);
    out.push('\n');
    for q in queues {
        let name = if wide {
            format!("{:<15}", q.name)
        } else {
            col(&q.name, 15)
        };
        let status = queue_status(q, false);
        let status = if wide {
            format!("{status:<15}")
        } else {
            col(&status, 15)
        };
        let _ = writeln!(
            out,
            "{name} {:3}  {status}{:>4} {:>4} {:>4} {:>4} {:5} {:5} {:5} {:5}",
            q.priority,
            limit(q.max_jobs),
            limit(q.jl_u),
            limit_f(q.jl_p),
            limit(q.jl_h),
            q.njobs,
            q.pend,
            q.run,
            q.ssusp + q.ususp
        );
    }
    out
}

/// Place values under a header: each value is right-aligned to the end of its header
/// word (`right`) or starts where it starts; at least one blank separates columns.
fn under(header: &str, cells: &[(&str, bool)]) -> String {
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (i, c) in header.char_indices() {
        match (c == ' ', start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                words.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push((s, header.len()));
    }
    let mut out = String::new();
    for (k, (value, right)) in cells.iter().enumerate() {
        let Some(&(ws, we)) = words.get(k) else {
            let _ = write!(out, " {value}");
            continue;
        };
        let want_start = if *right {
            we.saturating_sub(value.chars().count())
        } else {
            ws
        };
        let cur = out.chars().count();
        let pad = if k == 0 {
            want_start.saturating_sub(cur)
        } else {
            want_start.saturating_sub(cur).max(1)
        };
        out.push_str(&" ".repeat(pad));
        out.push_str(value);
    }
    out
}

/// `bqueues -l`: LSF's long format — the statistics, the limits, the scheduling
/// thresholds and policies, the windows, USERS and HOSTS as configured, the commands and
/// conditions, checkpointing, the last queue control's comment, the job controls (only
/// what is in force is shown).
pub fn queues_long(queues: &[QueueInfo]) -> String {
    const HEADER: &str =
        "PRIO NICE     STATUS       MAX JL/U JL/P JL/H NJOBS  PEND  RUN  SSUSP USUSP  RSV";
    let mut out = String::from("\n");
    for (i, q) in queues.iter().enumerate() {
        if i > 0 {
            out.push_str(&"-".repeat(79));
            out.push_str("\n\n");
        }
        let _ = writeln!(out, "QUEUE: {}", q.name);
        out.push_str("  -- ");
        out.push_str(&q.description);
        if q.is_default {
            out.push_str("  This is the default queue.");
        }
        out.push_str("\n\nPARAMETERS/STATISTICS\n");
        out.push_str(HEADER);
        out.push('\n');
        let cells = [
            (q.priority.to_string(), true),
            (q.nice.to_string(), true),
            (queue_status(q, true), false),
            (limit(q.max_jobs), true),
            (limit(q.jl_u), true),
            (limit_f(q.jl_p), true),
            (limit(q.jl_h), true),
            (q.njobs.to_string(), true),
            (q.pend.to_string(), true),
            (q.run.to_string(), true),
            (q.ssusp.to_string(), true),
            (q.ususp.to_string(), true),
            (q.rsv.to_string(), true),
        ];
        let cells: Vec<(&str, bool)> = cells.iter().map(|(s, r)| (s.as_str(), *r)).collect();
        out.push_str(&under(HEADER, &cells));
        out.push('\n');
        if let Some(m) = q.mig_minutes {
            let _ = writeln!(out, "Migration threshold is {m} minutes");
        }
        if let Some(n) = q.accept_interval_secs {
            let _ = writeln!(out, "Interval for a host to accept two jobs is {n} seconds");
        }
        out.push_str(&limits_lines(&q.settings));
        out.push_str("\nSCHEDULING PARAMETERS\n");
        out.push_str(&thresholds(&q.load_sched, &q.load_stop));
        out.push_str(&super::policies::lines(q));
        if !q.run_window.is_empty() {
            let _ = write!(out, "\nRUN_WINDOW: {}\n", q.run_window);
        }
        if !q.dispatch_window.is_empty() {
            let _ = write!(out, "\nDISPATCH_WINDOW: {}\n", q.dispatch_window);
        }
        // As configured (groups with their `/`); an mbatchd before that sends the
        // expanded lists only.
        let list = |configured: &[String], expanded: &[String]| {
            let v = if configured.is_empty() {
                expanded
            } else {
                configured
            };
            if v.is_empty() {
                "all".to_owned()
            } else {
                v.join(" ")
            }
        };
        let _ = write!(
            out,
            "\nUSERS: {}\nHOSTS:  {}\n",
            list(&q.users_configured, &q.users),
            list(&q.hosts_configured, &q.hosts)
        );
        out.push_str(&command_lines(q));
        out.push('\n');
        out.push_str(&job_control_lines(q));
    }
    out
}

/// bqueues -l's lines after HOSTS (LSF's order): who runs the pre- and
/// post-execution commands, the administrators, the commands, requeue values, the
/// resource requirement, slot reservation, the conditions, the job starter, rerunnable,
/// checkpointing and the last queue control's comment; each only when set.
fn command_lines(q: &QueueInfo) -> String {
    let mut out = String::new();
    let mut line = |key: &str, v: &str| {
        if !v.is_empty() {
            let _ = writeln!(out, "{key}:  {v}");
        }
    };
    line("PRE_POST_EXEC_USER", &q.pre_post_exec_user);
    line("ADMINISTRATORS", &q.administrators.join(" "));
    line("PRE_EXEC", &q.pre_exec);
    line("POST_EXEC", &q.post_exec);
    line("REQUEUE_EXIT_VALUES", &q.requeue_exit_values);
    line("RES_REQ", &q.res_req);
    if q.slot_reserve_secs > 0 {
        let _ = writeln!(
            out,
            "Maximum slot reservation time: {} seconds",
            q.slot_reserve_secs
        );
    }
    let mut line = |key: &str, v: &str| {
        if !v.is_empty() {
            let _ = writeln!(out, "{key}:  {v}");
        }
    };
    line("RESUME_COND", &q.resume_cond);
    line("STOP_COND", &q.stop_cond);
    line("JOB_STARTER", &q.job_starter);
    if q.rerunnable {
        out.push_str("RERUNNABLE :  yes\n");
    }
    if !q.chkpnt_dir.is_empty() {
        let _ = writeln!(out, "CHKPNTDIR : {}", q.chkpnt_dir);
        let _ = writeln!(out, "CHKPNTPERIOD : {}", q.chkpnt_period);
    }
    if !q.admin_comment.is_empty() {
        let _ = writeln!(out, "ADMIN ACTION COMMENT: \"{}\"", q.admin_comment);
    }
    out
}

/// bqueues -l's JOB_CONTROLS block (SUSPEND, RESUME, TERMINATE as configured) and
/// TERMINATE_WHEN.
fn job_control_lines(q: &QueueInfo) -> String {
    let mut out = String::new();
    let controls: Vec<(&str, &String)> = ["SUSPEND", "RESUME", "TERMINATE"]
        .iter()
        .filter_map(|k| q.job_controls.get(*k).map(|v| (*k, v)))
        .collect();
    if !controls.is_empty() {
        out.push_str("JOB_CONTROLS:\n");
        for (k, v) in controls {
            let _ = writeln!(out, "    {:<13}[{v}]", format!("{k}:"));
        }
        out.push('\n');
    }
    if !q.terminate_when.is_empty() {
        let _ = writeln!(out, "TERMINATE_WHEN = {}", q.terminate_when.join(" "));
    }
    out
}

/// A CPULIMIT or RUNLIMIT word (`[hour:]minute[/host_spec]`) as LSF shows it:
/// ` 10.0 min`, ` 90.0 min of hostA`; the word itself when it does not read.
fn time_limit(word: &str) -> String {
    let (time, spec) = match word.split_once('/') {
        Some((t, s)) => (t, Some(s)),
        None => (word, None),
    };
    let minutes = match time.split_once(':') {
        Some((h, m)) => match (h.trim().parse::<f64>(), m.trim().parse::<f64>()) {
            (Ok(h), Ok(m)) => Some(h * 60.0 + m),
            _ => None,
        },
        None => time.trim().parse::<f64>().ok(),
    };
    match (minutes.filter(|m| m.is_finite()), spec) {
        (Some(m), Some(s)) => format!(" {m:.1} min of {s}"),
        (Some(m), None) => format!(" {m:.1} min"),
        (None, _) => format!(" {word}"),
    }
}

/// One row of limits as LSF prints them: their names, each ` %-24s`, and their values,
/// each in 25 columns.
fn limits_row(cols: &[(&str, String)]) -> String {
    if cols.is_empty() {
        return String::new();
    }
    let mut names = String::from("\n");
    let mut values = String::new();
    for (name, value) in cols {
        let _ = write!(names, " {name:<24}");
        let _ = write!(values, "{value:<25}");
    }
    format!("{names}\n{values}\n")
}

/// bqueues -l's limits: CPULIMIT and RUNLIMIT in minutes (with their host spec), and
/// PROCLIMIT, as LSF prints them — a `DEFAULT LIMITS:` and a `MAXIMUM LIMITS:` block when
/// a default is set; then the other limits as configured.
fn limits_lines(settings: &std::collections::HashMap<String, String>) -> String {
    let mut defaults: Vec<(&str, String)> = Vec::new();
    let mut maxima: Vec<(&str, String)> = Vec::new();
    for key in ["CPULIMIT", "RUNLIMIT"] {
        let Some(v) = settings.get(key) else {
            continue;
        };
        let words: Vec<&str> = v.split_whitespace().collect();
        match words[..] {
            [default, max] => {
                defaults.push((key, time_limit(default)));
                maxima.push((key, time_limit(max)));
            }
            _ => maxima.push((key, words.iter().map(|w| time_limit(w)).collect())),
        }
    }
    if let Some(v) = settings.get("PROCLIMIT") {
        let words: String = v.split_whitespace().map(|w| format!(" {w}")).collect();
        maxima.push(("PROCLIMIT", words));
    }
    let mut out = if defaults.is_empty() {
        limits_row(&maxima)
    } else {
        format!(
            "\nDEFAULT LIMITS:{}\nMAXIMUM LIMITS:{}",
            limits_row(&defaults),
            limits_row(&maxima)
        )
    };
    let mut others: Vec<(&String, &String)> = settings
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "CPULIMIT" | "RUNLIMIT" | "PROCLIMIT"))
        .collect();
    others.sort();
    for (k, v) in others {
        let _ = write!(out, "\n {k}\n {v}\n");
    }
    out
}

/// The header of `bhosts` (`-w` widens STATUS).
pub fn hosts_header(wide: bool) -> String {
    let status = if wide {
        format!("{:<14.14} ", "STATUS")
    } else {
        format!("{:<11.11} ", "STATUS")
    };
    format!(
        "{:<18.18} {status}{:>5.5} {:>6.6} {:>6.6} {:>6.6} {:>6.6} {:>6.6} {:>6.6} ",
        "HOST_NAME", "JL/U", "MAX", "NJOBS", "RUN", "SSUSP", "USUSP", "RSV"
    )
}

/// `bhosts` / `bhosts -w`.
pub fn hosts_table(hosts: &[BatchHostInfo], wide: bool) -> String {
    let mut out = hosts_header(wide);
    out.push('\n');
    for h in hosts {
        let (name, status) = if wide {
            let s = if h.long_status.is_empty() {
                &h.status
            } else {
                &h.long_status
            };
            (format!("{:<18}", h.name), format!("{s:<14}"))
        } else {
            (col(&h.name, 18), format!("{:<11}", h.status))
        };
        let _ = writeln!(
            out,
            "{name} {status} {:>5} {:>6} {:6} {:6} {:6} {:6} {:6}",
            limit(h.jl_u),
            limit(h.max),
            h.njobs,
            h.run,
            h.ssusp,
            h.ususp,
            h.rsv
        );
    }
    out
}

fn load_cell(name: &str, v: f64) -> String {
    match name {
        "ut" => format!("{:.0}%", v * 100.0),
        "tmp" | "swp" | "mem" => crate::numfmt::mem_mb(v),
        "io" | "ls" | "it" => format!("{v:.0}"),
        _ => format!("{v:.1}"),
    }
}

/// `bhosts -l`.
pub fn hosts_long(hosts: &[BatchHostInfo]) -> String {
    const HEADER: &str =
        "STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW";
    const LOAD_HEADER: &str =
        "              r15s   r1m  r15m    ut    pg    io   ls    it   tmp   swp   mem";
    const NAMES: [&str; 11] = [
        "r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp", "swp", "mem",
    ];
    let mut out = String::new();
    for h in hosts {
        let _ = writeln!(out, "HOST  {}", h.name);
        out.push_str(HEADER);
        out.push('\n');
        let status = if h.long_status.is_empty() {
            h.status.clone()
        } else {
            h.long_status.clone()
        };
        let window = if h.dispatch_window.is_empty() {
            "-".to_owned()
        } else {
            h.dispatch_window.clone()
        };
        let cells = [
            (status, false),
            (format!("{:.2}", h.cpu_factor), true),
            (limit(h.jl_u), true),
            (limit(h.max), true),
            (h.njobs.to_string(), true),
            (h.run.to_string(), true),
            (h.ssusp.to_string(), true),
            (h.ususp.to_string(), true),
            (h.rsv.to_string(), true),
            (window, false),
        ];
        let cells: Vec<(&str, bool)> = cells.iter().map(|(s, r)| (s.as_str(), *r)).collect();
        out.push_str(&under(HEADER, &cells));
        out.push('\n');
        if !h.message.is_empty() {
            let _ = writeln!(out, " ADMIN ACTION COMMENT: \"{}\"", h.message);
        }
        out.push_str("\n CURRENT LOAD USED FOR SCHEDULING:\n");
        out.push_str(LOAD_HEADER);
        out.push('\n');
        // One row per label, a cell per index under the header: the load, and what
        // running jobs reserve here (rusage[]), as LSF shows it under the total.
        let row = |label: &str, cell: &dyn Fn(&str) -> String| {
            let mut cells: Vec<(String, bool)> = vec![(label.to_owned(), false)];
            cells.extend(NAMES.iter().map(|n| (cell(n), true)));
            let cells: Vec<(&str, bool)> = cells.iter().map(|(s, r)| (s.as_str(), *r)).collect();
            let header = format!(" {label}{}", &LOAD_HEADER[label.len() + 1..]);
            format!("{}\n", under(&header, &cells))
        };
        let value = |v: &[basalt_proto::common::LoadValue], n: &str| {
            v.iter().find(|l| l.name == n).map(|l| l.value)
        };
        out.push_str(&row("Total", &|n| {
            value(&h.load, n).map_or_else(|| "-".to_owned(), |v| load_cell(n, v))
        }));
        out.push_str(&row("Reserved", &|n| {
            load_cell(n, value(&h.reserved, n).unwrap_or(0.0))
        }));
        out.push_str("\n LOAD THRESHOLD USED FOR SCHEDULING:\n");
        out.push_str(&thresholds(&h.load_sched, &h.load_stop));
        out.push('\n');
    }
    out
}

/// `bqueues`.
pub fn bqueues_main(args: Vec<String>) -> ExitCode {
    let usage = "Usage: bqueues [-h] [-V] [-w | -l] [queue_name ...]\n";
    let spec = Spec {
        flags: &["h", "V", "w", "l"],
        valued: &[],
    };
    let items = match super::parse_args("bqueues", &args, &spec, usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let (mut wide, mut long, mut names) = (false, false, Vec::new());
    for it in items {
        match it {
            Item::Arg(a) => names.push(a),
            Item::Opt(n, _) if n == "w" => wide = true,
            Item::Opt(n, _) if n == "l" => long = true,
            Item::Opt(..) => {}
        }
    }
    let config = match super::load_config("bqueues") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let reply = match client.queues(QueuesRequest { queues: names }).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                return crate::fail();
            }
        };
        super::config_banner(&reply.config_problem);
        for q in &reply.not_found {
            eprintln!("{q}: No such queue");
        }
        if !reply.queues.is_empty() {
            if long {
                print!("{}", queues_long(&reply.queues));
            } else {
                print!("{}", queues_table(&reply.queues, wide));
            }
        } else if reply.not_found.is_empty() {
            eprintln!("No queue found");
        }
        if reply.not_found.is_empty() && !reply.queues.is_empty() {
            ExitCode::SUCCESS
        } else {
            crate::fail()
        }
    })
}

/// `bhosts`.
pub fn bhosts_main(args: Vec<String>) -> ExitCode {
    let usage = "Usage: bhosts [-h] [-V] [-w | -l] [host_name ...]\n       bhosts [-h] [-V] -s [resource_name ...]\n";
    let spec = Spec {
        flags: &["h", "V", "w", "l", "s"],
        valued: &[],
    };
    let items = match super::parse_args("bhosts", &args, &spec, usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let (mut wide, mut long, mut shared, mut names) = (false, false, false, Vec::new());
    for it in items {
        match it {
            Item::Arg(a) => names.push(a),
            Item::Opt(n, _) if n == "w" => wide = true,
            Item::Opt(n, _) if n == "l" => long = true,
            Item::Opt(n, _) if n == "s" => shared = true,
            Item::Opt(..) => {}
        }
    }
    if (shared && (wide || long)) || (wide && long) {
        eprint!("{usage}");
        return crate::fail();
    }
    let config = match super::load_config("bhosts") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if shared {
        return bhosts_shared(&config, &names);
    }
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let reply = match client.hosts(HostsRequest { hosts: names }).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                return crate::fail();
            }
        };
        super::config_banner(&reply.config_problem);
        for h in &reply.not_found {
            eprintln!("{h}: Bad host name, host group name or cluster name");
        }
        if !reply.hosts.is_empty() {
            if long {
                print!("{}", hosts_long(&reply.hosts));
            } else {
                print!("{}", hosts_table(&reply.hosts, wide));
            }
        } else if reply.not_found.is_empty() {
            eprintln!("No host found");
        }
        if reply.not_found.is_empty() && !reply.hosts.is_empty() {
            ExitCode::SUCCESS
        } else {
            crate::fail()
        }
    })
}

/// `bhosts -s [resource ...]`: the numeric shared resources of the ResourceMap, their
/// totals (a dynamic one's value from the LIM) and what running jobs reserve of them
/// (`rusage[]`, from mbatchd).
fn bhosts_shared(config: &basalt_config::Config, names: &[String]) -> ExitCode {
    use crate::lim_res;
    let instances = lim_res::shared_instances(config);
    if instances.is_empty() {
        eprintln!("lsb_sharedresourceinfo: No resource defined");
        return crate::fail();
    }
    let shown = match lim_res::select_instances(&instances, names, |_| true) {
        Ok(s) => s,
        Err(_) => {
            eprintln!("Bad resource name");
            return crate::fail();
        }
    };
    let needs_lim = shown
        .iter()
        .any(|i| i.dynamic && i.kind == basalt_config::ResourceKind::Numeric);
    let load = if needs_lim {
        crate::block_on(async {
            let mut m =
                basalt_runtime::find_master(config, crate::RPC_TIMEOUT, &crate::auth(config))
                    .await
                    .ok()?;
            m.client
                .hosts(basalt_proto::lim::HostsRequest { hosts: Vec::new() })
                .await
                .ok()
                .map(|r| r.into_inner())
        })
        .ok()
        .flatten()
    } else {
        None
    };
    let cfg = config.clone();
    let reserved = match crate::block_on(async move {
        let mut client = super::connect_mbatchd(&cfg).await.map_err(|e| {
            let _ = super::connect_failed(&e);
        })?;
        client
            .hosts(HostsRequest { hosts: Vec::new() })
            .await
            .map(|r| r.into_inner().shared)
            .map_err(|s| eprintln!("{}", super::status_text(&s)))
    }) {
        Ok(Ok(r)) => r,
        Ok(Err(())) => return crate::fail(),
        Err(code) => return code,
    };
    let reserved_of = |i: &lim_res::SharedInstance| {
        let amount: f64 = reserved
            .iter()
            .filter(|r| r.resource == i.resource && r.hosts == i.hosts)
            .map(|r| r.reserved)
            .sum();
        format!("{amount:.1}")
    };
    print!(
        "{}",
        lim_res::batch_shared_table(
            &shown,
            |i| match (&i.value, &load) {
                (Some(v), _) if !i.dynamic => v.clone(),
                (_, Some(reply)) if i.dynamic => crate::lim_cmds::dynamic_value(reply, i),
                _ => "-".to_owned(),
            },
            reserved_of,
        )
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The default `normal` queue as bqueues gets it (shared with `policies`' tests).
    pub(crate) fn normal() -> QueueInfo {
        QueueInfo {
            name: "normal".into(),
            description: "For normal low priority jobs.".into(),
            priority: 30,
            open: true,
            active: true,
            max_jobs: -1,
            jl_u: -1,
            jl_p: -1.0,
            jl_h: -1,
            is_default: true,
            ..Default::default()
        }
    }

    #[test]
    fn queue_table_matches_the_reference() {
        let got = queues_table(&[normal()], false);
        assert_eq!(
            got,
            "QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP \n\
normal           30  Open:Active       -    -    -    -     0     0     0     0\n"
        );
        let mut q = normal();
        q.name = "a_very_long_queue_name".into();
        q.open = false;
        q.active = false;
        q.max_jobs = 10;
        q.jl_p = 2.0;
        q.njobs = 3;
        q.pend = 1;
        q.run = 1;
        q.ssusp = 1;
        q.ususp = 0;
        let got = queues_table(&[q.clone()], false);
        assert!(
            got.ends_with(
                "*ong_queue_name  30  Closed:Inact     10    -    2    -     3     1     1     1\n"
            ),
            "{got}"
        );
        let got = queues_table(&[q], true);
        assert!(
            got.contains("a_very_long_queue_name  30  Closed:Inact"),
            "{got}"
        );
    }

    #[test]
    fn queue_long_format() {
        let mut q = normal();
        q.load_sched.insert("r15s".into(), 0.3);
        let got = queues_long(&[q.clone(), q]);
        assert!(got.starts_with("\nQUEUE: normal\n  -- For normal low priority jobs.  This is the default queue.\n\nPARAMETERS/STATISTICS\nPRIO NICE     STATUS       MAX JL/U JL/P JL/H NJOBS  PEND  RUN  SSUSP USUSP  RSV\n  30    0     Open:Active    -    -    -    -     0     0    0      0     0    0\n"), "{got}");
        assert!(got.contains("\nSCHEDULING PARAMETERS\n           r15s"));
        assert!(got.contains(" loadSched  0.3 "));
        assert!(got.contains(&format!("{}\n\nQUEUE: normal", "-".repeat(79))));
    }

    /// Issue 50 item 11: bqueues -l shows everything in force as LSF does: the commands,
    /// requeue values, rerunnable, checkpointing, the scheduling policies, slot
    /// reservation, the conditions, job controls, the admin comment; USERS and HOSTS as
    /// configured (groups with their `/`), not expanded; RUNLIMIT in minutes.
    #[test]
    fn issue_50_item_11_long_shows_everything_in_force() {
        let mut q = normal();
        q.name = "eng".into();
        q.description = "Engineering".into();
        q.is_default = false;
        q.open = false;
        q.admin_comment = "maintenance friday".into();
        q.users = vec!["alice".into(), "bob".into()];
        q.users_configured = vec!["eng/".into()];
        q.hosts = vec!["hostA".into(), "hostB".into()];
        q.hosts_configured = vec!["hg_ab/".into()];
        q.settings.insert("RUNLIMIT".into(), "10".into());
        q.pre_exec = "/bin/pre".into();
        q.post_exec = "/bin/post".into();
        q.job_starter = "/bin/starter".into();
        q.requeue_exit_values = "99".into();
        q.rerunnable = true;
        q.chkpnt_dir = "/scratch/chk".into();
        q.chkpnt_period = 600;
        q.backfill = true;
        q.exclusive = true;
        q.slot_reserve_secs = 50;
        q.resume_cond = "r1m<1.0".into();
        q.stop_cond = "r1m>3.0".into();
        q.job_controls.insert("SUSPEND".into(), "SIGTSTP".into());
        q.terminate_when = vec!["WINDOW".into()];
        q.mig_minutes = Some(30);
        q.accept_interval_secs = Some(20);
        let got = queues_long(&[q]);
        for want in [
            "\nQUEUE: eng\n  -- Engineering\n\nPARAMETERS/STATISTICS\n",
            "Closed:Active",
            "    0    0\nMigration threshold is 30 minutes\nInterval for a host to accept two jobs is 20 seconds\n",
            "\n RUNLIMIT                \n 10.0 min                \n\nSCHEDULING PARAMETERS\n",
            "\nSCHEDULING POLICIES:  BACKFILL  EXCLUSIVE\n",
            "\nUSERS: eng/\nHOSTS:  hg_ab/\n",
            "\nPRE_EXEC:  /bin/pre\nPOST_EXEC:  /bin/post\nREQUEUE_EXIT_VALUES:  99\n",
            "\nMaximum slot reservation time: 50 seconds\nRESUME_COND:  r1m<1.0\nSTOP_COND:  r1m>3.0\nJOB_STARTER:  /bin/starter\nRERUNNABLE :  yes\nCHKPNTDIR : /scratch/chk\nCHKPNTPERIOD : 600\nADMIN ACTION COMMENT: \"maintenance friday\"\n\nJOB_CONTROLS:\n    SUSPEND:     [SIGTSTP]\n\nTERMINATE_WHEN = WINDOW\n",
        ] {
            assert!(got.contains(want), "missing {want:?} in\n{got}");
        }
        assert!(!got.contains("alice"), "{got}");
        assert!(!got.contains("\n 10\n"), "{got}");
        // A default and a maximum: LSF's two blocks; a host spec stays with its limit.
        let mut q = normal();
        q.settings.insert("RUNLIMIT".into(), "5 1:30".into());
        q.settings.insert("CPULIMIT".into(), "10/hostA".into());
        let got = queues_long(&[q]);
        assert!(
            got.contains(
                "\nDEFAULT LIMITS:\n RUNLIMIT                \n 5.0 min                 \n\nMAXIMUM LIMITS:\n CPULIMIT                 RUNLIMIT                \n 10.0 min of hostA        90.0 min                \n"
            ),
            "{got}"
        );
        // Nothing configured: none of these lines.
        let got = queues_long(&[normal()]);
        for absent in [
            "PRE_EXEC",
            "POLICIES",
            "RERUNNABLE",
            "CHKPNT",
            "ADMIN ACTION",
            "JOB_CONTROLS",
            "COND",
            "Maximum slot",
            "LIMITS",
            "TERMINATE_WHEN",
            "Migration",
            "Interval",
        ] {
            assert!(!got.contains(absent), "{absent} in\n{got}");
        }
        assert!(got.contains("\nUSERS: all\nHOSTS:  all\n"), "{got}");
    }

    fn vm() -> BatchHostInfo {
        BatchHostInfo {
            name: "vm".into(),
            status: "ok".into(),
            long_status: "ok".into(),
            jl_u: -1,
            max: 2,
            cpu_factor: 100.0,
            ..Default::default()
        }
    }

    #[test]
    fn host_table_matches_the_reference() {
        let got = hosts_table(&[vm()], false);
        assert_eq!(
            got,
            "HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV \n\
vm                 ok              -      2      0      0      0      0      0\n"
        );
        let mut h = vm();
        h.name = "a-very-long-host-name.example.org".into();
        h.status = "closed".into();
        h.long_status = "closed_Adm".into();
        h.jl_u = 1;
        h.njobs = 2;
        h.run = 2;
        let got = hosts_table(&[h.clone()], false);
        assert!(
            got.ends_with(
                "\n*-name.example.org closed          1      2      2      2      0      0      0\n"
            ),
            "{got}"
        );
        let got = hosts_table(&[h], true);
        assert!(
            got.starts_with("HOST_NAME          STATUS          JL/U"),
            "{got}"
        );
        assert!(
            got.contains("\na-very-long-host-name.example.org closed_Adm         1      2"),
            "{got}"
        );
    }

    #[test]
    fn host_long_format() {
        let mut h = vm();
        h.load = vec![
            basalt_proto::common::LoadValue {
                name: "r15s".into(),
                value: 0.5,
            },
            basalt_proto::common::LoadValue {
                name: "ut".into(),
                value: 0.25,
            },
            basalt_proto::common::LoadValue {
                name: "mem".into(),
                value: 2048.0,
            },
        ];
        h.message = "maintenance".into();
        h.reserved = vec![basalt_proto::common::LoadValue {
            name: "mem".into(),
            value: 800.0,
        }];
        let got = hosts_long(&[h]);
        assert!(got.starts_with("HOST  vm\nSTATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW\nok             100.00     -      2      0      0      0      0      0 -\n"), "{got}");
        assert!(got.contains(" ADMIN ACTION COMMENT: \"maintenance\"\n"));
        assert!(
            got.contains(
                " Total         0.5     -     -   25%     -     -    -     -     -     -  2.0G\n"
            ),
            "{got}"
        );
        assert!(
            got.contains(
                " Reserved      0.0   0.0   0.0    0%   0.0     0    0     0    0M    0M  800M\n"
            ),
            "{got}"
        );
        assert!(got.contains(" LOAD THRESHOLD USED FOR SCHEDULING:\n           r15s"));
    }
}
