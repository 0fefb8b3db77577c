//! The text pieces of the long formats shared by bhist and bacct: job ids and names, the
//! job header, the submission line, the dispatch line, event lines.

use super::*;

/// `123` or `123[4]`.
pub fn job_id_text(job_id: u64, idx: u32) -> String {
    if idx > 0 {
        format!("{job_id}[{idx}]")
    } else {
        job_id.to_string()
    }
}

/// The name an array element shows: `arr[1-3]` -> `arr[2]`.
pub fn element_name(name: &str, idx: u32) -> String {
    match name.find('[') {
        Some(p) if idx > 0 => format!("{}[{idx}]", &name[..p]),
        _ => name.to_owned(),
    }
}

/// The job name LSF shows: the `-J` name, else the command.
pub fn shown_name(job_name: &str, command: &str, idx: u32) -> String {
    if job_name.is_empty() {
        display_command(command)
    } else {
        element_name(job_name, idx)
    }
}

/// `CWD <...>` value: absolute as is, else under `$HOME`.
pub fn cwd_text(cwd: &str) -> String {
    if cwd.starts_with('/') {
        cwd.to_owned()
    } else if cwd.is_empty() {
        "$HOME".to_owned()
    } else {
        format!("$HOME/{cwd}")
    }
}

/// The fields of a job header line (`Job <101>, User <root>, Project <default>, ...`).
#[derive(Debug, Clone, Default)]
pub struct Header<'a> {
    pub id: String,
    /// Shown as `Job Name <...>` only when the job was named with `-J`.
    pub job_name: Option<String>,
    pub user: &'a str,
    pub project: &'a str,
    pub user_group: &'a str,
    pub mail_user: Option<&'a str>,
    /// `Status <S>, Queue <q>` (bacct; bhist leaves them out).
    pub status_queue: Option<(&'a str, &'a str)>,
    /// An interactive job's mode (`Interactive mode`, ...).
    pub interactive: Option<&'static str>,
    pub command: String,
    pub spooled: bool,
}

impl<'a> Header<'a> {
    /// The header fields of a submission.
    pub fn of_new(n: &'a JobNew, idx: u32) -> Header<'a> {
        Header {
            id: job_id_text(n.job_id, idx),
            job_name: (n.options & sub::JOB_NAME != 0 && !n.job_name.is_empty())
                .then(|| element_name(&n.job_name, idx)),
            user: &n.user_name,
            project: &n.project_name,
            user_group: &n.user_group,
            mail_user: (n.options & sub::MAIL_USER != 0 && !n.mail_user.is_empty())
                .then_some(n.mail_user.as_str()),
            status_queue: None,
            interactive: basalt_core::job::interactive_label(n.options),
            command: display_command(&n.command),
            spooled: n.options2 & sub2::JOB_CMD_SPOOL != 0,
        }
    }

    /// The header fields of an accounting record.
    pub fn of_finish(f: &'a JobFinish, status: &'a str) -> Header<'a> {
        Header {
            id: job_id_text(f.job_id, f.idx),
            job_name: (f.options & sub::JOB_NAME != 0 && !f.job_name.is_empty())
                .then(|| element_name(&f.job_name, f.idx)),
            user: &f.user_name,
            project: &f.project_name,
            user_group: "",
            mail_user: (f.options & sub::MAIL_USER != 0 && !f.mail_user.is_empty())
                .then_some(f.mail_user.as_str()),
            status_queue: Some((status, &f.queue)),
            interactive: basalt_core::job::interactive_label(f.options),
            command: display_command(&f.command),
            spooled: false,
        }
    }

    /// The wrapped header line with its newline.
    pub fn render(&self) -> String {
        let mut l = format!("Job <{}>,", self.id);
        if let Some(n) = &self.job_name {
            let _ = write!(l, " Job Name <{n}>,");
        }
        let _ = write!(l, " User <{}>, Project <{}>,", self.user, self.project);
        if !self.user_group.is_empty() {
            let _ = write!(l, " User Group <{}>,", self.user_group);
        }
        if let Some(m) = self.mail_user {
            let _ = write!(l, " Mail <{m}>,");
        }
        if let Some((s, q)) = self.status_queue {
            let _ = write!(l, " Status <{s}>, Queue <{q}>,");
        }
        if let Some(mode) = self.interactive {
            let _ = write!(l, " {mode},");
        }
        let spooled = if self.spooled { "(Spooled)" } else { "" };
        let _ = write!(l, " Command{spooled} <{}>", self.command);
        let mut out = wrap(&l);
        out.push('\n');
        out
    }
}

/// `, Input File <...>, Output File <...>, Error File <...>` of a submission.
pub(super) fn file_names(
    l: &mut String,
    in_file: &str,
    out_file: &str,
    err_file: &str,
    options2: u32,
) {
    if !in_file.is_empty() {
        let _ = write!(l, ", Input File <{in_file}>");
    }
    if !out_file.is_empty() {
        let ow = if options2 & sub2::OUT_OVERWRITE != 0 {
            " (overwrite)"
        } else {
            ""
        };
        let _ = write!(l, ", Output File{ow} <{out_file}>");
    }
    if !err_file.is_empty() {
        let ow = if options2 & sub2::ERR_OVERWRITE != 0 {
            " (overwrite)"
        } else {
            ""
        };
        let _ = write!(l, ", Error File{ow} <{err_file}>");
    }
}

/// The `Submitted from host` line of `bhist -l` (wrapped, with its newline), followed by
/// the run-limit table when the job has one. `details = false` is `bhist -b`.
pub fn submit_line_bhist(n: &JobNew, exec_host: Option<&str>, details: bool, fx: &Fx) -> String {
    let mut l = format!(
        "{}: Submitted from host <{}>",
        fx.event_time(n.submit_time),
        n.from_host
    );
    if n.options2 & sub2::HOLD != 0 {
        l.push_str(" on hold");
    }
    let _ = write!(l, ", to Queue <{}>", n.queue);
    if details && n.begin_time > 0 {
        let _ = write!(
            l,
            ", Specified Start Time <{}>",
            fx.event_time(n.begin_time)
        );
    }
    if details && n.term_time > 0 {
        let _ = write!(
            l,
            ", Specified Termination Time <{}>",
            fx.event_time(n.term_time)
        );
    }
    let _ = write!(l, ", CWD <{}>", cwd_text(&n.cwd));
    if details {
        if !n.specified_cwd.is_empty() {
            let _ = write!(l, ", Specified CWD <{}>", n.specified_cwd);
        }
        file_names(&mut l, &n.in_file, &n.out_file, &n.err_file, n.options2);
        if n.options & sub::EXCLUSIVE != 0 {
            l.push_str(", Exclusive Execution");
        }
        if n.options & sub::RERUNNABLE != 0 {
            l.push_str(", Re-runnable");
        }
        if n.num_processors > 1 || n.max_num_processors > 1 {
            if n.max_num_processors > n.num_processors {
                let _ = write!(
                    l,
                    ", {}-{} Processors Requested",
                    n.num_processors, n.max_num_processors
                );
            } else {
                let _ = write!(l, ", {} Processors Requested", n.num_processors);
            }
        }
        if !n.res_req.is_empty() {
            let _ = write!(l, ", Requested Resources <{}>", n.res_req);
        }
        if !n.depend_cond.is_empty() {
            let _ = write!(l, ", Dependency Condition <{}>", n.depend_cond);
        }
        if !n.login_shell.is_empty() {
            let _ = write!(l, ", Login Shell <{}>", n.login_shell);
        }
        if !n.asked_hosts.is_empty() {
            let hosts: Vec<String> = n.asked_hosts.iter().map(|h| format!("<{h}>")).collect();
            let _ = write!(l, ", Specified Hosts {}", hosts.join(", "));
        }
    }
    l.push(';');
    let mut out = wrap(&l);
    out.push('\n');
    let run_limit = n
        .rlimits
        .get(basalt_eventlog::rlimit::RUN)
        .copied()
        .unwrap_or(-1);
    if details && run_limit > 0 {
        let host = exec_host.unwrap_or(&n.from_host);
        let _ = write!(
            out,
            "\n RUNLIMIT\n {:5.1} min of {host}\n\n",
            run_limit as f64 / 60.0
        );
    }
    out
}

/// The `Submitted from host` line of `bacct -l` (host, CWD and files; wrapped, with its
/// newline).
pub fn submit_line_bacct(f: &JobFinish, fx: &Fx) -> String {
    let mut l = format!(
        "{}: Submitted from host <{}>, CWD <{}>",
        fx.event_time(f.submit_time),
        f.from_host,
        cwd_text(&f.cwd)
    );
    file_names(&mut l, &f.in_file, &f.out_file, &f.err_file, 0);
    l.push(';');
    let mut out = wrap(&l);
    out.push('\n');
    out
}

/// `Dispatched to <vm>` / `Dispatched to 4 Hosts/Processors <4*vm>` (`Started on` once the
/// pid is known), without the time and the `;`.
pub fn dispatch_text(hosts: &[String], pid: i64, short_hosts: bool) -> String {
    let verb = if pid > 0 {
        "Started on"
    } else {
        "Dispatched to"
    };
    let words: Vec<String> = host_words(hosts, short_hosts)
        .iter()
        .map(|h| format!("<{h}>"))
        .collect();
    if hosts.len() > 1 {
        format!(
            "{verb} {} Hosts/Processors {}",
            hosts.len(),
            words.join(" ")
        )
    } else {
        format!("{verb} {}", words.join(" "))
    }
}

/// One wrapped event line `<time>: <text>` with its newline. A text of several lines
/// (`JOB_MODIFY2`'s `Parameters of Job are changed:` and its indented list) has its
/// first line wrapped and the others written as they are.
pub fn event_line(t: i64, text: &str, fx: &Fx) -> String {
    let (first, more) = match text.split_once('\n') {
        Some((first, more)) => (first, Some(more)),
        None => (text, None),
    };
    let mut out = wrap(&format!("{}: {first}", fx.event_time(t)));
    out.push('\n');
    if let Some(more) = more {
        for l in more.lines() {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}
