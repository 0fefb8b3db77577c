//! `bqueues` and `bhosts` (cli-output.md §4–5): the short tables, `-w`, `-l` (bhosts:
//! with the external load indices an ELIM reports, their load and thresholds), `bqueues
//! -r` (`-l` with every level of a fairshare queue's share tree) and LSF 10.1's `-o` /
//! `-json` ([`super::hq_custom`]).

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
    queues_long_with(queues, false)
}

/// `bqueues -r`: `-l` with every level of a fairshare queue's share tree.
pub fn queues_recursive(queues: &[QueueInfo]) -> String {
    queues_long_with(queues, true)
}

fn queues_long_with(queues: &[QueueInfo], recursive: bool) -> String {
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
        out.push_str(&super::policies::lines(q, recursive));
        if !q.run_window.is_empty() {
            let _ = write!(out, "\nRUN_WINDOW: {}\n", q.run_window);
        }
        if !q.dispatch_window.is_empty() {
            let _ = write!(out, "\nDISPATCH_WINDOW: {}\n", q.dispatch_window);
        }
        let _ = write!(
            out,
            "\nUSERS: {}\nHOSTS:  {}\n",
            list_text(&q.users_configured, &q.users),
            list_text(&q.hosts_configured, &q.hosts)
        );
        out.push_str(&command_lines(q));
        out.push('\n');
        out.push_str(&job_control_lines(q));
    }
    out
}

/// A queue's USERS or HOSTS as `bqueues -l` shows them: as configured (groups with their
/// `/`), else (an mbatchd before that) the expanded list; `all` when empty.
pub fn list_text(configured: &[String], expanded: &[String]) -> String {
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

/// The external load indices of host `h` (an ELIM's, a dynamic shared resource's):
/// the names in its load, reservations and thresholds that are not the built-in
/// `builtin`, sorted.
fn external_indices(h: &BatchHostInfo, builtin: &[&str]) -> Vec<String> {
    let mut names: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let load = h.load.iter().chain(&h.reserved).map(|l| &l.name);
    for n in load.chain(h.load_sched.keys()).chain(h.load_stop.keys()) {
        if !builtin.contains(&n.as_str()) {
            names.insert(n.clone());
        }
    }
    names.into_iter().collect()
}

/// A block of rows of external indices under a header of their names: each value
/// right-aligned under its name (`-` for none), as `bhosts -l` shows them below the
/// built-in indices.
/// A row of [`external_rows`]: its label and the value of an index (None: `-`).
type ExternalRow<'a> = (&'a str, &'a dyn Fn(&str) -> Option<String>);

fn external_rows(names: &[String], rows: &[ExternalRow]) -> String {
    const LABEL: usize = 13;
    let width = |n: &String| n.len().max(7);
    let mut out = " ".repeat(LABEL);
    for n in names {
        let _ = write!(out, " {n:>w$}", w = width(n));
    }
    out.push('\n');
    for (label, value) in rows {
        let _ = write!(out, "{label:<LABEL$}");
        for n in names {
            let v = value(n).unwrap_or_else(|| "-".to_owned());
            let _ = write!(out, " {v:>w$}", w = width(n));
        }
        out.push('\n');
    }
    out
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
        let externals = external_indices(h, &NAMES);
        if !externals.is_empty() {
            out.push('\n');
            out.push_str(&external_rows(
                &externals,
                &[
                    (" Total", &|n| value(&h.load, n).map(|v| format!("{v:.1}"))),
                    (" Reserved", &|n| {
                        Some(format!("{:.1}", value(&h.reserved, n).unwrap_or(0.0)))
                    }),
                ],
            ));
        }
        out.push_str("\n LOAD THRESHOLD USED FOR SCHEDULING:\n");
        out.push_str(&thresholds(&h.load_sched, &h.load_stop));
        if !externals.is_empty() {
            let threshold = |m: &std::collections::HashMap<String, f64>, n: &str| {
                m.get(n).map(|v| format!("{v:.1}"))
            };
            out.push('\n');
            out.push_str(&external_rows(
                &externals,
                &[
                    (" loadSched", &|n| threshold(&h.load_sched, n)),
                    (" loadStop", &|n| threshold(&h.load_stop, n)),
                ],
            ));
        }
        out.push('\n');
    }
    out
}

/// The options bhosts and bqueues share: `-w`, `-l`, `-r` (bqueues), `-s` (bhosts),
/// `-o`, `-json`, `-noheader`, and the names.
#[derive(Debug, Default)]
struct Asked {
    wide: bool,
    long: bool,
    recursive: bool,
    shared: bool,
    json: bool,
    noheader: bool,
    format: Option<String>,
    names: Vec<String>,
}

fn asked_from(items: Vec<Item>) -> Asked {
    let mut a = Asked::default();
    for it in items {
        match it {
            Item::Arg(n) => a.names.push(n),
            Item::Opt(n, v) => match n.as_str() {
                "w" => a.wide = true,
                "l" => a.long = true,
                "r" => a.recursive = true,
                "s" => a.shared = true,
                "json" => a.json = true,
                "noheader" => a.noheader = true,
                "o" => a.format = v,
                _ => {}
            },
        }
    }
    a
}

/// `-o`/`-json` asked, or `LSB_<CMD>_FORMAT` set: the custom output; None for the
/// ordinary tables; Err: the command's failure, said.
fn custom_asked(
    cmd: &str,
    a: &Asked,
    fields: &'static [super::outfmt::FieldDef],
    default: &[&str],
) -> Result<Option<super::hq_custom::Custom>, ExitCode> {
    let var = format!("LSB_{}_FORMAT", cmd.to_ascii_uppercase());
    super::hq_custom::asked(
        a.format.as_deref(),
        a.json,
        a.noheader,
        &var,
        fields,
        default,
    )
    .map_err(|e| {
        eprintln!("{cmd}: Invalid format specified: {e}");
        crate::fail()
    })
}

/// `bqueues`.
pub fn bqueues_main(args: Vec<String>) -> ExitCode {
    let usage = "Usage: bqueues [-h] [-V] [-w | -l | -r | -o \"field[:[-]width] ... [delimiter='c']\" [-json] [-noheader]]\n               [queue_name ...]\n";
    let spec = Spec {
        flags: &["h", "V", "w", "l", "r", "json", "noheader"],
        valued: &["o"],
    };
    let items = match super::parse_args("bqueues", &args, &spec, usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let a = asked_from(items);
    let shapes = [a.wide, a.long, a.recursive, a.format.is_some() || a.json];
    if shapes.iter().filter(|x| **x).count() > 1 {
        eprint!("{usage}");
        return crate::fail();
    }
    let custom = match custom_asked(
        "bqueues",
        &a,
        super::hq_custom::QUEUE_FIELDS,
        super::hq_custom::QUEUE_DEFAULT,
    ) {
        // A shape asked for wins over LSB_BQUEUES_FORMAT.
        Ok(_) if a.wide || a.long || a.recursive => None,
        Ok(c) => c,
        Err(code) => return code,
    };
    let (wide, long, recursive, names) = (a.wide, a.long, a.recursive, a.names);
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
        match &custom {
            // -json: the document even when empty (the names not found are on stderr).
            Some(c) if c.json || !reply.queues.is_empty() => print!(
                "{}",
                super::hq_custom::render(
                    &reply.queues,
                    c,
                    "bqueues",
                    "QUEUES",
                    super::hq_custom::queue_value
                )
            ),
            Some(_) if reply.not_found.is_empty() => eprintln!("No queue found"),
            Some(_) => {}
            None if !reply.queues.is_empty() => {
                if recursive {
                    print!("{}", queues_recursive(&reply.queues));
                } else if long {
                    print!("{}", queues_long(&reply.queues));
                } else {
                    print!("{}", queues_table(&reply.queues, wide));
                }
            }
            None if reply.not_found.is_empty() => {
                eprintln!("No queue found");
            }
            None => {}
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
    let usage = "Usage: bhosts [-h] [-V] [-w | -l | -o \"field[:[-]width] ... [delimiter='c']\" [-json] [-noheader]]\n              [host_name ...]\n       bhosts [-h] [-V] -s [resource_name ...]\n";
    let spec = Spec {
        flags: &["h", "V", "w", "l", "s", "json", "noheader"],
        valued: &["o"],
    };
    let items = match super::parse_args("bhosts", &args, &spec, usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let a = asked_from(items);
    let shapes = [a.wide, a.long, a.shared, a.format.is_some() || a.json];
    if shapes.iter().filter(|x| **x).count() > 1 {
        eprint!("{usage}");
        return crate::fail();
    }
    let custom = match custom_asked(
        "bhosts",
        &a,
        super::hq_custom::HOST_FIELDS,
        super::hq_custom::HOST_DEFAULT,
    ) {
        // A shape asked for wins over LSB_BHOSTS_FORMAT.
        Ok(_) if a.wide || a.long || a.shared => None,
        Ok(c) => c,
        Err(code) => return code,
    };
    let (wide, long, shared, names) = (a.wide, a.long, a.shared, a.names);
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
        match &custom {
            // -json: the document even when empty (the names not found are on stderr).
            Some(c) if c.json || !reply.hosts.is_empty() => print!(
                "{}",
                super::hq_custom::render(
                    &reply.hosts,
                    c,
                    "bhosts",
                    "HOSTS",
                    super::hq_custom::host_value
                )
            ),
            Some(_) if reply.not_found.is_empty() => eprintln!("No host found"),
            Some(_) => {}
            None if !reply.hosts.is_empty() => {
                if long {
                    print!("{}", hosts_long(&reply.hosts));
                } else {
                    print!("{}", hosts_table(&reply.hosts, wide));
                }
            }
            None if reply.not_found.is_empty() => {
                eprintln!("No host found");
            }
            None => {}
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
                .hosts(basalt_proto::lim::HostsRequest {
                    hosts: Vec::new(),
                    ..Default::default()
                })
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
#[path = "bqueues_tests.rs"]
pub(crate) mod tests;
