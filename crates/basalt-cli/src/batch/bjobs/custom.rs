//! Custom columns of `bjobs -o` (cli-contract.md §4.3): the field table, parsing the
//! format string, each field's value and the column layout.

use super::*;

use super::super::outfmt::{self, f};
pub use super::super::outfmt::{Column, FieldDef, Format};

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
    outfmt::find(FIELDS, name)
}

/// Parse `-o "jobid stat:7 name:-10 delimiter=','"`.
pub fn parse_format(s: &str) -> Result<Format, String> {
    outfmt::parse(s, FIELDS)
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

/// `bjobs -o`: a header (unless `noheader`) and one line per job.
pub fn custom(jobs: &[JobInfo], fmt: &Format, noheader: bool, fx: &Fx) -> String {
    outfmt::table(jobs, fmt, noheader, |j, name| field_value(j, name, fx))
}
