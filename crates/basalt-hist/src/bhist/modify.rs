//! `bmod`'s `JOB_MODIFY2` in `bhist -l`: `Parameters of Job are changed:` and one
//! indented line per change, as LSF prints it.

use super::Fx;
use basalt_cli::batch::timefmt;
use basalt_core::job::{sub, sub2};
use basalt_eventlog::{Dialect, JobModify2, VOLCLAVA_SUB_POST_EXEC, modify, rlimit};

/// The indentation of each change under `Parameters of Job are changed:`.
const INDENT: &str = "    ";

/// A limit as `bhist` names it, and how its value is shown.
enum Unit {
    /// Seconds, shown in minutes.
    Minutes,
    Kb,
    Count,
}

/// The limits `bmod` can change, in `rLimits` order (NOFILE and OPEN_MAX have no
/// `bmod` option).
const LIMITS: [(usize, &str, Unit); 9] = [
    (rlimit::CPU, "CPULIMIT", Unit::Minutes),
    (rlimit::FSIZE, "FILELIMIT", Unit::Kb),
    (rlimit::DATA, "DATALIMIT", Unit::Kb),
    (rlimit::STACK, "STACKLIMIT", Unit::Kb),
    (rlimit::CORE, "CORELIMIT", Unit::Kb),
    (rlimit::RSS, "MEMLIMIT", Unit::Kb),
    (rlimit::SWAP, "SWAPLIMIT", Unit::Kb),
    (rlimit::RUN, "RUNLIMIT", Unit::Minutes),
    (rlimit::PROCESS, "PROCESSLIMIT", Unit::Count),
];

/// A processor count `bmod -n` gave (not "unchanged", not "back to the default").
fn processors_given(v: i64) -> bool {
    v > 0 && v != modify::DEFAULT_NUMPRO && v != modify::DEL_NUMPRO
}

/// The changes of one `JOB_MODIFY2`, one per line, without the `;`s.
pub fn modify2_changes(m: &JobModify2, fx: &Fx) -> Vec<String> {
    let mut l: Vec<String> = Vec::new();
    let set = |bit: u32| m.options & bit != 0;
    let del = |bit: u32| m.del_options & bit != 0;
    let bset = |bit: u32| m.basalt_options & bit != 0;
    let ctime = |t: i64| timefmt::ctime(&(fx.tm)(t));
    // One field at a time: its new value, or its reset to the default.
    let mut field = |is_set: bool, set_text: String, is_del: bool, del_text: &str| {
        if is_set {
            l.push(set_text);
        } else if is_del {
            l.push(del_text.to_owned());
        }
    };

    field(
        set(sub::QUEUE),
        format!("Job queue changes to : {}", m.queue),
        del(sub::QUEUE),
        "Job queue changes back to default",
    );
    field(
        set(sub::JOB_NAME),
        format!("Job name changes to : {}", m.job_name),
        del(sub::JOB_NAME),
        "Job name is canceled",
    );
    field(
        set(sub::HOST),
        format!("Hosts change to : {}", m.asked_hosts.join(" ")),
        del(sub::HOST),
        "Host changes to default",
    );
    field(
        set(sub::RES_REQ),
        format!("Resource requirement changes to : {}", m.res_req),
        del(sub::RES_REQ),
        "Resource requirement changes to default",
    );
    field(
        set(sub::DEPEND_COND),
        format!("Dependency condition changes to : {}", m.depend_cond),
        del(sub::DEPEND_COND),
        "Dependency condition is canceled",
    );
    let spooled_in = m.options2 & sub2::IN_FILE_SPOOL != 0;
    field(
        set(sub::IN_FILE) || spooled_in,
        if spooled_in {
            format!("Input file (Spooled) changes to : {}", m.in_file)
        } else {
            format!("Input file changes to : {}", m.in_file)
        },
        del(sub::IN_FILE),
        "Input file is disabled",
    );
    field(
        set(sub::OUT_FILE),
        format!("Output file changes to : {}", m.out_file),
        del(sub::OUT_FILE),
        "Output file is disabled",
    );
    field(
        set(sub::ERR_FILE),
        format!("Error file changes to : {}", m.err_file),
        del(sub::ERR_FILE),
        "Error file is disabled",
    );
    field(
        m.options2 & sub2::MODIFY_CMD != 0,
        format!("Command changes to : {}", m.command),
        false,
        "",
    );
    field(
        set(sub::PRE_EXEC),
        format!("Pre-execution command changes to : {}", m.pre_exec_cmd),
        del(sub::PRE_EXEC),
        "Pre-execution command is disabled",
    );
    let volclava_post = m.header.dialect() == Dialect::Volclava && set(VOLCLAVA_SUB_POST_EXEC);
    field(
        bset(modify::POST_EXEC) || volclava_post,
        format!("Post-execution command changes to : {}", m.post_exec_cmd),
        bset(modify::POST_EXEC_DEL),
        "Post-execution command is disabled",
    );
    field(
        set(sub::MAIL_USER),
        format!("Mail user changes to : {}", m.mail_user),
        del(sub::MAIL_USER),
        "Mail user changes to original user",
    );
    field(
        set(sub::PROJECT_NAME),
        format!("Project changes to : {}", m.project_name),
        del(sub::PROJECT_NAME),
        "Project changes to default",
    );
    field(
        m.begin_time > 0,
        format!("Job new begin time is : {}", ctime(m.begin_time)),
        m.begin_time == modify::DELETE_NUMBER,
        "Job begin time is removed",
    );
    field(
        m.term_time > 0,
        format!("Job new end time is : {}", ctime(m.term_time)),
        m.term_time == modify::DELETE_NUMBER,
        "Job termination time is removed",
    );
    let (min, max) = (m.num_processors, m.max_num_processors);
    let procs = if processors_given(min) && processors_given(max) && max != min {
        Some(format!("Number of processors changes to : {min},{max}"))
    } else if processors_given(min) {
        Some(format!("Number of processors changes to : {min}"))
    } else if processors_given(max) {
        Some(format!("Maximum number of processors changes to : {max}"))
    } else {
        None
    };
    let procs_del = min == modify::DEL_NUMPRO || max == modify::DEL_NUMPRO;
    field(
        procs.is_some(),
        procs.unwrap_or_default(),
        procs_del,
        "Number of processors changes to default",
    );
    for (i, name, unit) in &LIMITS {
        let Some(&v) = m.rlimits.get(*i) else {
            continue;
        };
        let value = match unit {
            Unit::Minutes => format!("{:.1} min", v as f64 / 60.0),
            Unit::Kb => format!("{v} KB"),
            Unit::Count => v.to_string(),
        };
        field(
            v >= 0,
            format!("{name} changes to : {value}"),
            v == modify::DELETE_NUMBER,
            &format!("{name} changes to default"),
        );
    }
    field(
        set(sub::EXCLUSIVE),
        "Job changes to exclusive".to_owned(),
        del(sub::EXCLUSIVE),
        "Job changes to nonexclusive",
    );
    field(
        set(sub::NOTIFY_BEGIN),
        "Job will send mail to user when job begins".to_owned(),
        del(sub::NOTIFY_BEGIN),
        "No mail will be sent to user when job begins",
    );
    field(
        set(sub::NOTIFY_END),
        "Job will send mail to user when job ends".to_owned(),
        del(sub::NOTIFY_END),
        "No mail will be sent to user when job ends",
    );
    field(
        set(sub::RERUNNABLE),
        "Job changes to rerunnable".to_owned(),
        del(sub::RERUNNABLE),
        "Job changes to be not rerunnable",
    );
    field(
        set(sub::HOST_SPEC),
        format!("Host specification changes to : {}", m.host_spec),
        del(sub::HOST_SPEC),
        "Host specification is canceled",
    );
    field(
        set(sub::CHKPNT_DIR),
        format!("Checkpoint directory changes to : {}", m.chkpnt_dir),
        del(sub::CHKPNT_DIR),
        "Job changes to be not checkpointable",
    );
    field(
        set(sub::CHKPNT_PERIOD),
        format!("Checkpoint period changes to : {}", m.chkpnt_period),
        false,
        "",
    );
    field(
        set(sub::OTHER_FILES),
        format!("Number of copied files changes to : {}", m.xf.len()),
        del(sub::OTHER_FILES),
        "No transfer files specified",
    );
    field(
        set(sub::LOGIN_SHELL),
        format!("Login shell changes to : {}", m.login_shell),
        del(sub::LOGIN_SHELL),
        "Login shell changes to default",
    );
    field(
        m.options2 & sub2::JOB_PRIORITY != 0,
        format!("Job priority changes to : {}", m.user_priority),
        m.del_options2 & sub2::JOB_PRIORITY != 0,
        "Job priority changes to default",
    );
    field(
        false,
        String::new(),
        m.del_options2 & sub2::IN_FILE_SPOOL != 0,
        "Input file spooling is canceled",
    );
    field(
        false,
        String::new(),
        m.del_options2 & sub2::JOB_CMD_SPOOL != 0,
        "Job command spooling is canceled",
    );
    field(
        bset(modify::REQUEUE),
        format!("Requeue exit values change to : {}", m.requeue_exit_values),
        bset(modify::REQUEUE_DEL),
        "Requeue exit values are canceled",
    );
    field(
        bset(modify::APP),
        format!("Application profile changes to : {}", m.app),
        bset(modify::APP_DEL),
        "Application profile changes to default",
    );
    field(
        bset(modify::CWD),
        format!("Current working directory changes to : {}", m.specified_cwd),
        bset(modify::CWD_DEL),
        "Current working directory changes to default",
    );
    field(
        bset(modify::USER_GROUP),
        format!("User group changes to : {}", m.user_group),
        bset(modify::USER_GROUP_DEL),
        "User group changes to default",
    );
    l
}

/// The event text of a `JOB_MODIFY2` (without the time): `Parameters of Job are
/// changed:`, then each change on its own line, indented, ending with `;`.
pub fn modify2_text(m: &JobModify2, fx: &Fx) -> String {
    let mut out = String::from("Parameters of Job are changed:");
    for c in modify2_changes(m, fx) {
        out.push('\n');
        out.push_str(INDENT);
        out.push_str(&c);
        out.push(';');
    }
    out
}
