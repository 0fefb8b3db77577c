//! The job report LSF appends to a job's `-o` file (cli-contract.md §9), and the
//! `TERM_*` reason lines. Pure text; the supervisor writes it.

use crate::paths;

/// Everything the report shows.
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    pub job_id: u64,
    pub idx: u32,
    pub is_array: bool,
    /// The job (element) name: `myjob`, `arr[3]`.
    pub job_name: String,
    pub cluster: String,
    /// `admin@host` for the `Sender:` line.
    pub sender: String,
    pub user: String,
    pub from_host: String,
    /// One entry per slot.
    pub exec_hosts: Vec<String>,
    pub queue: String,
    pub submit_time: i64,
    pub start_time: i64,
    pub end_time: i64,
    pub home: String,
    pub cwd: String,
    /// The command or script text ("Your job looked like").
    pub command: String,
    /// Raw wait status.
    pub exit_status: i32,
    pub term_reason: String,
    pub cpu_secs: f64,
    pub max_mem_kb: u64,
    pub avg_mem_kb: u64,
    pub max_swap_kb: u64,
    pub max_procs: u32,
    pub max_threads: u32,
}

/// The 60-dash separator.
pub const SEPARATOR: &str = "------------------------------------------------------------";

/// The explanation LSF prints after a `TERM_*` reason.
pub fn term_reason_text(reason: &str) -> Option<&'static str> {
    Some(match reason {
        "TERM_OWNER" => "job killed by owner.",
        "TERM_ADMIN" => "job killed by root or LSF administrator.",
        "TERM_FORCE_OWNER" => "job killed by owner without time for cleanup.",
        "TERM_FORCE_ADMIN" => "job killed by root or LSF administrator without time for cleanup.",
        "TERM_REQUEUE_OWNER" => "job killed and requeued by owner.",
        "TERM_REQUEUE_ADMIN" => "job killed and requeued by root or LSF administrator.",
        "TERM_RUNLIMIT" => "job killed after reaching LSF run time limit.",
        "TERM_CPULIMIT" => "job killed after reaching LSF CPU usage limit.",
        "TERM_MEMLIMIT" => "job killed after reaching LSF memory usage limit.",
        "TERM_SWAP" => "job killed after reaching LSF swap usage limit.",
        "TERM_PROCESSLIMIT" => "job killed after reaching LSF process limit.",
        "TERM_THREADLIMIT" => "job killed after reaching LSF thread limit.",
        "TERM_DEADLINE" => "job killed after deadline expires.",
        "TERM_WINDOW" => "job killed after queue run window closed.",
        "TERM_LOAD" => "job killed after load exceeds threshold.",
        "TERM_PREEMPT" => "job killed after preemption.",
        "TERM_CHKPNT" => "job killed after checkpointing.",
        "TERM_ORPHAN_SYSTEM" => "orphan job was automatically terminated by LSF.",
        "TERM_EXTERNAL_SIGNAL" => "job killed by a signal external to LSF.",
        "TERM_ZOMBIE" => "job exited while LSF is not available.",
        _ => return None,
    })
}

/// `TERM_OWNER: job killed by owner.` (or `TERM_X: job killed.` for an unknown reason).
pub fn term_reason_line(reason: &str) -> Option<String> {
    if reason.is_empty() {
        return None;
    }
    Some(match term_reason_text(reason) {
        Some(t) => format!("{reason}: {t}"),
        None => format!("{reason}: job killed."),
    })
}

/// The exit code as LSF reports it: the process's code, or 128 + signal.
pub fn exit_code(status: i32) -> i32 {
    basalt_core::job::wait_status_parts(status).0
}

/// `hostA`, `2*hostA`: how the report names the slots of one host.
fn host_item(host: &str, n: usize) -> String {
    if n > 1 {
        format!("<{n}*{host}>")
    } else {
        format!("<{host}>")
    }
}

fn mem_mb(kb: u64) -> String {
    if kb == 0 {
        "-".to_owned()
    } else {
        format!("{} MB", kb.div_ceil(1024))
    }
}

fn row(out: &mut String, label: &str, value: &str) {
    out.push_str(&format!("    {:<45}{value}\n", format!("{label} :")));
}

/// The report text, starting with a newline before the separator (so it stands
/// apart from the job's last output line) and ending with a blank line.
pub fn job_report(r: &ReportInput) -> String {
    let done = r.exit_status == 0 && r.term_reason.is_empty();
    let id = paths::job_id_text(r.job_id, r.idx, r.is_array);
    let mut s = String::new();
    s.push('\n');
    s.push_str(SEPARATOR);
    s.push('\n');
    s.push_str(&format!("Sender: LSF System <{}>\n", r.sender));
    s.push_str(&format!(
        "Subject: Job {id}: <{}> in cluster <{}> {}\n\n",
        r.job_name,
        r.cluster,
        if done { "Done" } else { "Exited" }
    ));
    s.push_str(&format!(
        "Job <{}> was submitted from host <{}> by user <{}> in cluster <{}> at {}\n",
        r.job_name,
        r.from_host,
        r.user,
        r.cluster,
        ctime(r.submit_time)
    ));
    let counts = paths::host_counts(&r.exec_hosts);
    let first = counts
        .first()
        .map(|(h, n)| host_item(h, *n))
        .unwrap_or_else(|| "<>".to_owned());
    s.push_str(&format!(
        "Job was executed on host(s) {first}, in queue <{}>, as user <{}> in cluster <{}> at {}\n",
        r.queue,
        r.user,
        r.cluster,
        ctime(r.start_time)
    ));
    for (h, n) in counts.iter().skip(1) {
        s.push_str(&format!("{:28}{}\n", "", host_item(h, *n)));
    }
    s.push_str(&format!("<{}> was used as the home directory.\n", r.home));
    s.push_str(&format!("<{}> was used as the working directory.\n", r.cwd));
    s.push_str(&format!("Started at {}\n", ctime(r.start_time)));
    s.push_str(&format!("Terminated at {}\n", ctime(r.end_time)));
    s.push_str(&format!("Results reported at {}\n", ctime(r.end_time)));
    s.push_str("\nYour job looked like:\n\n");
    s.push_str(SEPARATOR);
    s.push_str("\n# LSBATCH: User input\n");
    s.push_str(r.command.trim_end_matches('\n'));
    s.push('\n');
    s.push_str(SEPARATOR);
    s.push_str("\n\n");
    if let Some(line) = term_reason_line(&r.term_reason) {
        s.push_str(&line);
        s.push('\n');
    }
    if done {
        s.push_str("Successfully completed.\n");
    } else {
        s.push_str(&format!(
            "Exited with exit code {}.\n",
            exit_code(r.exit_status)
        ));
    }
    s.push_str("\nResource usage summary:\n\n");
    row(&mut s, "CPU time", &format!("{:.2} sec.", r.cpu_secs));
    row(&mut s, "Max Memory", &mem_mb(r.max_mem_kb));
    let avg = if r.avg_mem_kb == 0 {
        "-".to_owned()
    } else {
        format!("{:.2} MB", r.avg_mem_kb as f64 / 1024.0)
    };
    row(&mut s, "Average Memory", &avg);
    row(&mut s, "Total Requested Memory", "-");
    row(&mut s, "Delta Memory", "-");
    row(&mut s, "Max Swap", &mem_mb(r.max_swap_kb));
    let count = |n: u32| {
        if n == 0 {
            "-".to_owned()
        } else {
            n.to_string()
        }
    };
    row(&mut s, "Max Processes", &count(r.max_procs));
    row(&mut s, "Max Threads", &count(r.max_threads));
    row(
        &mut s,
        "Run time",
        &format!("{} sec.", (r.end_time - r.start_time).max(0)),
    );
    row(
        &mut s,
        "Turnaround time",
        &format!("{} sec.", (r.end_time - r.submit_time).max(0)),
    );
    s.push_str("\nThe output (if any) is above this job summary.\n\n");
    s
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Broken-down local time: (year, month 0-11, day, hour, min, sec, weekday 0-6).
fn local_tm(secs: i64) -> Option<(i32, usize, i32, i32, i32, i32, usize)> {
    let tm = basalt_runtime::time::localtime(secs)?;
    Some((
        tm.year,
        usize::try_from(tm.mon).ok()?.min(11),
        tm.mday,
        tm.hour,
        tm.min,
        tm.sec,
        usize::try_from(tm.wday).ok()?.min(6),
    ))
}

/// `ctime(3)` without the newline, in local time: `Sun Nov 22 09:25:35 2026`.
pub fn ctime(secs: i64) -> String {
    match local_tm(secs) {
        Some((y, mon, d, h, mi, s, wd)) => format!(
            "{} {} {:>2} {:02}:{:02}:{:02} {}",
            DAYS[wd], MONTHS[mon], d, h, mi, s, y
        ),
        None => secs.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> ReportInput {
        ReportInput {
            job_id: 102,
            job_name: "myjob".into(),
            cluster: "basalt".into(),
            sender: "lsfadmin@hostA".into(),
            user: "alice".into(),
            from_host: "hostB".into(),
            exec_hosts: vec!["hostA".into()],
            queue: "normal".into(),
            submit_time: 1_700_000_000,
            start_time: 1_700_000_005,
            end_time: 1_700_000_006,
            home: "/home/alice".into(),
            cwd: "/home/alice/run".into(),
            command: "env | grep ^LSB_\n".into(),
            cpu_secs: 0.02,
            max_mem_kb: 3 * 1024,
            avg_mem_kb: 3 * 1024,
            max_procs: 2,
            max_threads: 2,
            ..Default::default()
        }
    }

    fn line_two_above_summary(text: &str) -> &str {
        let lines: Vec<&str> = text.lines().collect();
        let i = lines
            .iter()
            .position(|l| *l == "Resource usage summary:")
            .expect("summary line");
        lines[i - 2]
    }

    #[test]
    fn done_report_layout() {
        let t = job_report(&input());
        assert!(t.starts_with(&format!(
            "\n{SEPARATOR}\nSender: LSF System <lsfadmin@hostA>\n"
        )));
        assert!(t.contains("Subject: Job 102: <myjob> in cluster <basalt> Done\n\n"));
        assert!(t.contains(
            "Job <myjob> was submitted from host <hostB> by user <alice> in cluster <basalt> at "
        ));
        assert!(t.contains("Job was executed on host(s) <hostA>, in queue <normal>, as user <alice> in cluster <basalt> at "));
        assert!(t.contains("</home/alice> was used as the home directory.\n</home/alice/run> was used as the working directory.\n"));
        assert!(t.contains(&format!(
            "Your job looked like:\n\n{SEPARATOR}\n# LSBATCH: User input\nenv | grep ^LSB_\n{SEPARATOR}\n\nSuccessfully completed.\n\nResource usage summary:\n\n"
        )));
        assert_eq!(line_two_above_summary(&t), "Successfully completed.");
        assert!(t.contains("\n    CPU time :                                   0.02 sec.\n"));
        assert!(t.contains("\n    Max Memory :                                 3 MB\n"));
        assert!(t.contains("\n    Run time :                                   1 sec.\n"));
        assert!(t.ends_with("\nThe output (if any) is above this job summary.\n\n"));
    }

    #[test]
    fn exited_and_killed() {
        let mut r = input();
        r.exit_status = 3 << 8;
        let t = job_report(&r);
        assert!(t.contains("Subject: Job 102: <myjob> in cluster <basalt> Exited\n"));
        assert_eq!(line_two_above_summary(&t), "Exited with exit code 3.");
        r.exit_status = 33280;
        r.term_reason = "TERM_OWNER".into();
        let t = job_report(&r);
        assert!(t.contains("\nTERM_OWNER: job killed by owner.\nExited with exit code 130.\n\nResource usage summary:"));
        r.exit_status = 9;
        r.term_reason = "TERM_RUNLIMIT".into();
        let t = job_report(&r);
        assert!(t.contains("TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 137.\n"));
    }

    #[test]
    fn parallel_hosts_and_arrays() {
        let mut r = input();
        r.exec_hosts = vec!["hostA".into(), "hostA".into(), "hostB".into()];
        r.is_array = true;
        r.idx = 3;
        r.job_name = "arr[3]".into();
        let t = job_report(&r);
        assert!(t.contains("Subject: Job 102[3]: <arr[3]> in cluster <basalt> Done\n"));
        assert!(t.contains("Job was executed on host(s) <2*hostA>, in queue"));
        assert!(t.contains(&format!("\n{}<hostB>\n", " ".repeat(28))));
    }

    #[test]
    fn ctime_shape() {
        let s = ctime(1_700_000_000);
        // "Tue Nov 14 22:13:20 2023" in UTC; the zone may shift the hour and day.
        let parts: Vec<&str> = s.split_whitespace().collect();
        assert_eq!(parts.len(), 5, "{s}");
        assert!(DAYS.contains(&parts[0]));
        assert!(MONTHS.contains(&parts[1]));
        assert_eq!(parts[3].len(), 8);
        assert_eq!(parts[4], "2023");
        assert_eq!(s.len(), 24);
    }
}
