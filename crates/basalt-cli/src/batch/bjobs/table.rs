//! The default and `-w` tables (cli-output.md §3.1–3.2) and the pending and suspending
//! reasons shown by `-p` and `-s` (§3.3).

use super::*;

/// One job of the default (`wide = false`) or `-w` table, with its continuation lines.
pub fn row(j: &JobInfo, wide: bool, fx: &Fx) -> String {
    let pending = is_pending(j);
    let hosts = host_words(&j.exec_hosts, fx.short_hosts);
    let submit = table_time(j.submit_time, fx);
    let from = from_host_name(j);
    if wide {
        let exec = if pending || hosts.is_empty() {
            "-".to_owned()
        } else {
            hosts.join(":")
        };
        return format!(
            "{:<7} {:<7} {:<5.5} {:<10} {:<11} {:<11} {:<10} {}\n",
            j.job_id,
            j.user,
            state_name(j),
            j.queue,
            from,
            exec,
            j.job_name,
            submit
        );
    }
    let first = if pending {
        String::new()
    } else {
        hosts
            .first()
            .cloned()
            .unwrap_or_else(|| "   -   ".to_owned())
    };
    let mut out = format!(
        "{:<7} {} {} {} {} {} {} {}\n",
        j.job_id,
        col(&j.user, 7),
        col(state_name(j), 5),
        col(&j.queue, 10),
        col(&from, 11),
        col(&first, 11),
        col(&j.job_name, 10),
        col(&submit, 14)
    );
    if !pending {
        for h in hosts.iter().skip(1) {
            let _ = writeln!(out, "{:45}{}", "", star_cut(h, 11));
        }
    }
    out
}

pub fn reason_text(r: &PendReason) -> String {
    if r.code >= 2001 && !r.detail.is_empty() {
        let builtin = (2001..2012).contains(&r.code);
        if !builtin && r.code < 2601 {
            return format!("External load index ({}) is beyond threshold", r.detail);
        }
        if r.code >= 2601 {
            return format!(
                "Job requirements for reserving resource ({}) not satisfied",
                r.detail
            );
        }
    }
    let text = pend_reason_text(r.code);
    if text.starts_with("Unknown pending reason") && !r.detail.is_empty() {
        // A reason basalt-core has no text for (mbatchd sends it, e.g. an array's
        // running-element limit).
        return r.detail.clone();
    }
    text
}

/// The pending-reason lines of a job (each starting with a space). Host-level
/// reasons are counted (` <text>: 2 hosts;`), or name their hosts with `long`.
pub fn pend_reason_lines(j: &JobInfo, long: bool) -> String {
    let mut out = String::new();
    for r in &j.pend_reasons {
        let text = reason_text(r);
        if pend_reason_is_host(r.code) {
            if long && !r.hosts.is_empty() {
                let _ = writeln!(out, " {text}: {};", r.hosts.join(", "));
            } else {
                // An mbatchd before `num_hosts` sent every host's name.
                let n = (r.num_hosts as usize).max(r.hosts.len()).max(1);
                let _ = writeln!(out, " {text}: {n} host{};", if n == 1 { "" } else { "s" });
            }
        } else {
            let _ = writeln!(out, " {text};");
        }
    }
    out
}

/// The suspending-reason line of a suspended job.
pub fn susp_reason_line(j: &JobInfo) -> String {
    if j.reasons == 0 {
        return if state_of(j) == Some(JobState::Psusp) {
            pend_reason_lines(j, false)
        } else {
            String::new()
        };
    }
    format!("{}\n", susp_reason_text(j.reasons, j.subreasons))
}

/// Table options.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableOpts {
    pub wide: bool,
    pub noheader: bool,
    /// `-p`: pending reasons after each pending job.
    pub pend_reasons: bool,
    /// `-s`: suspending reasons after each suspended job.
    pub susp_reasons: bool,
}

/// The default or `-w` table.
pub fn table(jobs: &[JobInfo], o: &TableOpts, fx: &Fx) -> String {
    let mut out = String::new();
    if !o.noheader {
        out.push_str(HEADER);
        out.push('\n');
    }
    for j in jobs {
        out.push_str(&row(j, o.wide, fx));
        if o.pend_reasons && is_pending(j) {
            out.push_str(&pend_reason_lines(j, false));
        } else if o.susp_reasons && is_suspended(j) {
            out.push_str(&susp_reason_line(j));
        }
    }
    out
}
