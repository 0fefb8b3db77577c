//! Custom columns of `bjobs -o` (cli-contract.md §4.3): the field table, parsing the
//! format string, each field's value and the column layout.

use super::*;

/// A field `bjobs -o` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDef {
    /// Canonical name (lower case).
    pub name: &'static str,
    /// Header / JSON key.
    pub header: &'static str,
    /// Recommended width (`name:`).
    pub width: usize,
    pub aliases: &'static [&'static str],
}

pub(super) const fn f(
    name: &'static str,
    header: &'static str,
    width: usize,
    aliases: &'static [&'static str],
) -> FieldDef {
    FieldDef {
        name,
        header,
        width,
        aliases,
    }
}

/// The fields of `-o` (LSF 10 names, headers and recommended widths).
pub const FIELDS: &[FieldDef] = &[
    f("jobid", "JOBID", 7, &["id"]),
    f("jobindex", "JOBINDEX", 8, &[]),
    f("stat", "STAT", 5, &["st"]),
    f("user", "USER", 7, &[]),
    f("user_group", "USER_GROUP", 15, &["ugroup"]),
    f("queue", "QUEUE", 10, &[]),
    f("job_name", "JOB_NAME", 10, &["name"]),
    f("proj_name", "PROJ_NAME", 11, &["proj", "project"]),
    f("dependency", "DEPENDENCY", 15, &[]),
    f("pend_reason", "PEND_REASON", 11, &[]),
    f("command", "COMMAND", 15, &["cmd"]),
    f("pids", "PIDS", 20, &[]),
    f("exit_code", "EXIT_CODE", 10, &[]),
    f("exit_reason", "EXIT_REASON", 50, &[]),
    f("kill_reason", "KILL_REASON", 50, &[]),
    f("suspend_reason", "SUSPEND_REASON", 50, &[]),
    f("from_host", "FROM_HOST", 11, &[]),
    f("first_host", "FIRST_HOST", 11, &[]),
    f("exec_host", "EXEC_HOST", 11, &[]),
    f("nexec_host", "NEXEC_HOST", 10, &[]),
    f("nreq_slot", "NREQ_SLOT", 10, &[]),
    f("nalloc_slot", "NALLOC_SLOT", 10, &[]),
    f("slots", "SLOTS", 5, &[]),
    f("exclusive", "EXCLUSIVE", 13, &[]),
    f("submit_time", "SUBMIT_TIME", 15, &[]),
    f("start_time", "START_TIME", 15, &[]),
    f("finish_time", "FINISH_TIME", 16, &[]),
    f("cpu_used", "CPU_USED", 10, &[]),
    f("run_time", "RUN_TIME", 15, &[]),
    f("mem", "MEM", 15, &[]),
    f("max_mem", "MAX_MEM", 15, &[]),
    f("avg_mem", "AVG_MEM", 15, &[]),
    f("swap", "SWAP", 15, &[]),
    f("runtimelimit", "RUNTIMELIMIT", 12, &[]),
    f("min_req_proc", "MIN_REQ_PROC", 12, &[]),
    f("max_req_proc", "MAX_REQ_PROC", 12, &[]),
    f(
        "effective_resreq",
        "EFFECTIVE_RESREQ",
        17,
        &["combined_resreq"],
    ),
    f("input_file", "INPUT_FILE", 10, &[]),
    f("output_file", "OUTPUT_FILE", 11, &[]),
    f("error_file", "ERROR_FILE", 10, &[]),
    f("sub_cwd", "SUB_CWD", 10, &["cwd"]),
    f("exec_home", "EXEC_HOME", 10, &[]),
    f("exec_cwd", "EXEC_CWD", 10, &[]),
    // MultiCluster.
    f("forward_cluster", "FORWARD_CLUSTER", 15, &["fwd_cluster"]),
    f("forward_time", "FORWARD_TIME", 15, &["fwd_time"]),
    f("srcjobid", "SRCJOBID", 8, &[]),
    f("dstjobid", "DSTJOBID", 8, &[]),
    f("source_cluster", "SOURCE_CLUSTER", 15, &["srcluster"]),
];

/// The fields `-json` shows without `-o`.
pub const DEFAULT_JSON_FIELDS: [&str; 8] = [
    "jobid",
    "user",
    "stat",
    "queue",
    "from_host",
    "exec_host",
    "job_name",
    "submit_time",
];

/// Look a field up by name or alias (case-insensitive).
pub fn field(name: &str) -> Option<&'static FieldDef> {
    let n = name.to_ascii_lowercase();
    FIELDS
        .iter()
        .find(|f| f.name == n || f.aliases.contains(&n.as_str()))
}

/// One requested column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub def: &'static FieldDef,
    /// None = un-sized (value + one space).
    pub width: Option<usize>,
    /// `name:-N`: right-aligned.
    pub right: bool,
}

/// A parsed `-o` string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Format {
    pub columns: Vec<Column>,
    pub delimiter: Option<String>,
}

/// Parse `-o "jobid stat:7 name:-10 delimiter=','"`.
pub fn parse_format(s: &str) -> Result<Format, String> {
    let mut fmt = Format::default();
    let mut rest = s.trim();
    // delimiter='c' may contain a blank, so find it first.
    if let Some(pos) = rest.to_ascii_lowercase().find("delimiter=") {
        let value = rest[pos + "delimiter=".len()..].trim();
        let d = if let Some(q) = value.chars().next().filter(|c| *c == '\'' || *c == '"') {
            let inner = &value[1..];
            let end = inner
                .find(q)
                .ok_or_else(|| format!("unterminated delimiter: {value}"))?;
            &inner[..end]
        } else {
            value.split_whitespace().next().unwrap_or("")
        };
        if d.is_empty() {
            return Err("empty delimiter".into());
        }
        fmt.delimiter = Some(d.to_owned());
        rest = rest[..pos].trim();
    }
    for spec in rest.split_whitespace() {
        let (name, width) = match spec.split_once(':') {
            Some((n, w)) => (n, Some(w)),
            None => (spec, None),
        };
        let def = field(name).ok_or_else(|| format!("unknown field name <{name}>"))?;
        let (width, right) = match width {
            None => (None, false),
            Some("") => (Some(def.width), false),
            Some(w) => {
                let (digits, right) = match w.strip_prefix('-') {
                    Some(d) => (d, true),
                    None => (w, false),
                };
                // LSF allows a unit after a second colon (mem:10:G); the width is first.
                let digits = digits.split(':').next().unwrap_or(digits);
                let n: usize = digits
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("bad width in <{spec}>"))?;
                (Some(n), right)
            }
        };
        fmt.columns.push(Column { def, width, right });
    }
    if fmt.columns.is_empty() {
        return Err("no field names".into());
    }
    Ok(fmt)
}

pub(super) fn secs_text(secs: f64) -> String {
    format!("{secs:.1} second(s)")
}

/// A field's value ("" when it has none).
pub fn field_value(j: &JobInfo, name: &str, fx: &Fx) -> String {
    let started = j.start_time > 0 && !j.exec_hosts.is_empty() && !is_pending(j);
    match name {
        "jobid" => j.job_id.to_string(),
        "jobindex" => j.idx.to_string(),
        "stat" => state_name(j).to_owned(),
        "user" => j.user.clone(),
        "user_group" => j.user_group.clone(),
        "queue" => j.queue.clone(),
        "job_name" => j.job_name.clone(),
        "proj_name" => j.project.clone(),
        "dependency" => j.depend_cond.clone(),
        "pend_reason" if is_pending(j) => pend_reason_lines(j, false)
            .lines()
            .map(|l| l.trim().trim_end_matches(';'))
            .collect::<Vec<_>>()
            .join("; "),
        "command" => display_command(&j.command),
        "pids" => j
            .pids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
        "exit_code" if j.exit_code >= 0 => j.exit_code.to_string(),
        "exit_reason" if !j.term_reason.is_empty() => term_reason_text(&j.term_reason),
        "suspend_reason" if is_suspended(j) => susp_reason_line(j)
            .lines()
            .map(|l| l.trim().trim_end_matches(';'))
            .collect::<Vec<_>>()
            .join("; "),
        "from_host" => from_host_name(j),
        "first_host" if started => j.exec_hosts.first().cloned().unwrap_or_default(),
        "exec_host" if started => host_words(&j.exec_hosts, true).join(":"),
        "nexec_host" if started => super::super::text::group_hosts(&j.exec_hosts)
            .iter()
            .map(|(h, _)| h)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            .to_string(),
        "nreq_slot" => j.num_processors.max(1).to_string(),
        "nalloc_slot" if started => j.exec_hosts.len().to_string(),
        "slots" => {
            if started {
                j.exec_hosts.len().to_string()
            } else {
                j.num_processors.max(1).to_string()
            }
        }
        "exclusive" => if j.exclusive { "Y" } else { "N" }.to_owned(),
        "submit_time" => table_time(j.submit_time, fx),
        "start_time" if j.start_time > 0 => table_time(j.start_time, fx),
        "finish_time" if is_finished(j) => table_time(j.end_time, fx),
        "cpu_used" => secs_text(j.cpu_time),
        "run_time" if j.start_time > 0 => {
            let end = if is_finished(j) && j.end_time > 0 {
                j.end_time
            } else {
                fx.now
            };
            format!("{} second(s)", (end - j.start_time).max(0))
        }
        "mem" if j.mem_kb > 0 => mem_text(j.mem_kb),
        "max_mem" if j.max_mem_kb > 0 => mem_text(j.max_mem_kb),
        "avg_mem" if j.avg_mem_kb > 0 => mem_text(j.avg_mem_kb),
        "swap" if j.swap_kb > 0 => mem_text(j.swap_kb),
        "runtimelimit" if j.run_limit > 0 => format!("{:.1}", j.run_limit as f64 / 60.0),
        "min_req_proc" => j.num_processors.max(1).to_string(),
        "max_req_proc" => j.max_processors.max(j.num_processors).max(1).to_string(),
        "effective_resreq" => j.res_req.clone(),
        "input_file" => j.in_file.clone(),
        "output_file" => j.out_file.clone(),
        "error_file" => j.err_file.clone(),
        "sub_cwd" => j.cwd.clone(),
        "exec_home" => j.exec_home.clone(),
        "exec_cwd" => j.exec_cwd.clone(),
        "forward_cluster" => j.forward_cluster.clone(),
        "forward_time" if j.forward_time > 0 && !j.forward_cluster.is_empty() => {
            table_time(j.forward_time, fx)
        }
        // The job's id in the cluster it was submitted to (on the execution side) and in
        // the cluster it was forwarded to (on the submission side).
        "srcjobid" if j.source_job_id > 0 => j.source_job_id.to_string(),
        "dstjobid" if j.remote_job_id > 0 => j.remote_job_id.to_string(),
        "source_cluster" => j.source_cluster.clone(),
        _ => String::new(),
    }
}

pub(super) fn header_cell(value: &str, c: &Column) -> String {
    match c.width {
        None => value.to_owned(),
        Some(w) if c.right => format!("{value:>w$.w$}"),
        Some(w) => format!("{value:<w$.w$}"),
    }
}

pub(super) fn cell(value: &str, c: &Column) -> String {
    match c.width {
        None => value.to_owned(),
        Some(w) if c.right => format!("{:>w$}", star_cut(value, w)),
        Some(w) => format!("{:<w$}", star_cut(value, w)),
    }
}

pub(super) fn join_cells(cells: Vec<String>, fmt: &Format) -> String {
    match &fmt.delimiter {
        Some(d) => cells.join(d),
        None => cells.join(" ").trim_end_matches(' ').to_owned(),
    }
}

/// `bjobs -o`: a header (unless `noheader`) and one line per job.
pub fn custom(jobs: &[JobInfo], fmt: &Format, noheader: bool, fx: &Fx) -> String {
    let mut out = String::new();
    if !noheader {
        let cells = fmt
            .columns
            .iter()
            .map(|c| header_cell(c.def.header, c))
            .collect();
        out.push_str(&join_cells(cells, fmt));
        out.push('\n');
    }
    for j in jobs {
        let cells = fmt
            .columns
            .iter()
            .map(|c| {
                let v = field_value(j, c.def.name, fx);
                cell(if v.is_empty() { "-" } else { &v }, c)
            })
            .collect();
        out.push_str(&join_cells(cells, fmt));
        out.push('\n');
    }
    out
}
