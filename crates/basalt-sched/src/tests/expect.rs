//! Exact effect lists (issue 53, item 4): a test states the WHOLE list of effects a step
//! returned — every lsb.events record, accounting record, dispatch, order to sbatchd and
//! MultiCluster message, in order — and [`assert_effects`] fails on any difference, an
//! extra or a missing effect as much as a changed one, printing a line-by-line diff.
//!
//! Each effect is compared through a one-line projection ([`line`]) that keeps every
//! field of the effect that a test can know, and leaves out only what is not the point
//! of a scheduling test and is checked elsewhere: the `Submission` boxed in a JOB_NEW (its
//! job id and time are kept), and the job boxed in an accounting record (its key, state,
//! exit status, term reason and hosts are kept). The format:
//!
//! ```text
//! Log JOB_NEW 3 @0                        event time as seconds after T0
//! Log JOB_START 3 @0 on hostA,hostA       one host per slot; 3[2] for an array element
//! Log JOB_STATUS 2 @0 SSUSP MBD_PREEMPT   suspend reasons by name, others in hex
//! Log JOB_STATUS 1 @5 DONE end@5 usage    only the fields that are set
//! Acct 1 DONE on hostA
//! Dispatch 3 -> hostA attempt 1
//! Signal 2 attempt 1 on hostA Stop SSUSP MBD_PREEMPT
//! McForward 1 -> recv@c2 attempt 1
//! ```

use super::T0;
use crate::types::{Effect, Event, JobKey, SbdAction};
use basalt_core::job::{JobState, status, susp};

/// T0 in seconds: event times print as an offset from it (`@5` is T0 + 5 s).
const T0_SECS: i64 = T0 / 1000;

/// `3` for an ordinary job, `3[2]` for an element of an array.
fn key(k: &JobKey) -> String {
    match k.1 {
        0 => k.0.to_string(),
        i => format!("{}[{i}]", k.0),
    }
}

fn at(time: i64) -> String {
    format!("@{}", time - T0_SECS)
}

/// An LSF status word: the state's name, with `+PDONE` / `+PERR` post-exec bits.
fn status_name(code: u32) -> String {
    let mut s = match JobState::from_code(code) {
        Some(st) => st.name().to_string(),
        None => format!("{:#x}", code & !(status::PDONE | status::PERR)),
    };
    if code & status::PDONE != 0 {
        s.push_str("+PDONE");
    }
    if code & status::PERR != 0 {
        s.push_str("+PERR");
    }
    s
}

const SUSP_NAMES: &[(u32, &str)] = &[
    (susp::USER_RESUME, "USER_RESUME"),
    (susp::USER_STOP, "USER_STOP"),
    (susp::QUEUE_REASON, "QUEUE_REASON"),
    (susp::QUEUE_WINDOW, "QUEUE_WINDOW"),
    (susp::HOST_LOCK, "HOST_LOCK"),
    (susp::LOAD_REASON, "LOAD_REASON"),
    (susp::MBD_PREEMPT, "MBD_PREEMPT"),
    (susp::QUE_STOP_COND, "QUE_STOP_COND"),
    (susp::QUE_RESUME_COND, "QUE_RESUME_COND"),
    (susp::PG_IT, "PG_IT"),
    (susp::REASON_RESET, "REASON_RESET"),
    (susp::LOAD_UNAVAIL, "LOAD_UNAVAIL"),
    (susp::ADMIN_STOP, "ADMIN_STOP"),
    (susp::RES_RESERVE, "RES_RESERVE"),
    (susp::MBD_LOCK, "MBD_LOCK"),
    (susp::RES_LIMIT, "RES_LIMIT"),
    (susp::SBD_STARTUP, "SBD_STARTUP"),
    (susp::HOST_LOCK_MASTER, "HOST_LOCK_MASTER"),
];

/// Suspend reasons by name (`MBD_PREEMPT|LOAD_REASON`), any unnamed bits in hex.
fn susp_names(reasons: u32) -> String {
    let mut left = reasons;
    let mut parts: Vec<String> = Vec::new();
    for &(bit, name) in SUSP_NAMES {
        if left & bit != 0 {
            parts.push(name.to_string());
            left &= !bit;
        }
    }
    if left != 0 {
        parts.push(format!("{left:#x}"));
    }
    parts.join("|")
}

/// The reasons of a status: by suspend-reason name for SSUSP and USUSP, in hex for the
/// others (a PSUSP job's reasons are a suspend reason or a pending reason, which share
/// numbers); nothing when there are none.
fn reasons(status_code: u32, reasons: u32) -> String {
    if reasons == 0 {
        return String::new();
    }
    match JobState::from_code(status_code) {
        Some(JobState::Ssusp | JobState::Ususp) => {
            format!(" {}", susp_names(reasons))
        }
        _ => format!(" reasons={reasons:#x}"),
    }
}

fn who(user: &str, uid: u32) -> String {
    format!("by {user}({uid})")
}

fn event(e: &Event) -> String {
    match e {
        Event::JobNew { time, job_id, .. } => format!("JOB_NEW {job_id} {}", at(*time)),
        Event::JobStart {
            time,
            key: k,
            hosts,
            effective_res_req,
        } => {
            let mut s = format!("JOB_START {} {} on {}", key(k), at(*time), hosts.join(","));
            if !effective_res_req.is_empty() {
                s.push_str(&format!(" req={effective_res_req}"));
            }
            s
        }
        Event::JobStartAccept {
            time,
            key: k,
            pid,
            pgid,
        } => format!(
            "JOB_START_ACCEPT {} {} pid={pid} pgid={pgid}",
            key(k),
            at(*time)
        ),
        Event::JobExecute {
            time,
            key: k,
            exec_uid,
            exec_user,
            exec_home,
            exec_cwd,
            pid,
        } => format!(
            "JOB_EXECUTE {} {} as {exec_user}({exec_uid}) home={exec_home} cwd={exec_cwd} pid={pid}",
            key(k),
            at(*time)
        ),
        Event::JobStatus {
            time,
            key: k,
            status: st,
            reasons: r,
            subreasons,
            cpu_time,
            end_time,
            usage,
            exit_status,
            term_reason,
        } => {
            let mut s = format!(
                "JOB_STATUS {} {} {}{}",
                key(k),
                at(*time),
                status_name(*st),
                reasons(*st, *r)
            );
            if *subreasons != 0 {
                s.push_str(&format!(" sub={subreasons:#x}"));
            }
            if *exit_status != 0 {
                s.push_str(&format!(" exit={exit_status}"));
            }
            if *cpu_time != 0.0 {
                s.push_str(&format!(" cpu={cpu_time}"));
            }
            if *end_time != 0 {
                s.push_str(&format!(" end{}", at(*end_time)));
            }
            if let Some(u) = usage {
                if *u == Default::default() {
                    s.push_str(" usage");
                } else {
                    s.push_str(&format!(" usage={u:?}"));
                }
            }
            if !term_reason.is_empty() {
                s.push_str(&format!(" {term_reason}"));
            }
            s
        }
        Event::JobSignal {
            time,
            key: k,
            uid,
            user,
            signal,
        } => format!(
            "JOB_SIGNAL {} {} {signal} {}",
            key(k),
            at(*time),
            who(user, *uid)
        ),
        Event::JobSwitch {
            time,
            key: k,
            uid,
            user,
            queue,
        } => format!(
            "JOB_SWITCH {} {} -> {queue} {}",
            key(k),
            at(*time),
            who(user, *uid)
        ),
        Event::JobModify {
            time,
            key: k,
            uid,
            user,
            umask,
            change,
        } => format!(
            "JOB_MODIFY2 {} {} {} umask={umask:o} {change:?}",
            key(k),
            at(*time),
            who(user, *uid)
        ),
        Event::JobMove {
            time,
            key: k,
            uid,
            user,
            position,
            base,
        } => format!(
            "JOB_MOVE {} {} {} {position} {}",
            key(k),
            at(*time),
            match base {
                1 => "top".to_string(),
                2 => "bottom".to_string(),
                b => format!("base={b}"),
            },
            who(user, *uid)
        ),
        e => later_event(e),
    }
}

/// [`event`] for the control, checkpoint, queue, host and term events (the other job
/// events print there; here they fall back to their debug form).
fn later_event(e: &Event) -> String {
    match e {
        Event::JobMigrate {
            time,
            key: k,
            uid,
            user,
            hosts,
        } => format!(
            "JOB_MIGRATE {} {} to [{}] {}",
            key(k),
            at(*time),
            hosts.join(","),
            who(user, *uid)
        ),
        Event::ChkpntStart {
            time,
            key: k,
            flags,
            period,
        } => format!(
            "CHKPNT_START {} {} flags={flags:#x} period={period:?}",
            key(k),
            at(*time)
        ),
        Event::ChkpntEnd {
            time,
            key: k,
            ok,
            pid,
            flags,
            period,
            message,
        } => format!(
            "CHKPNT_END {} {} ok={ok} pid={pid} flags={flags:#x} period={period} {message:?}",
            key(k),
            at(*time)
        ),
        Event::JobForce {
            time,
            key: k,
            uid,
            user,
            hosts,
            no_stop,
        } => format!(
            "JOB_FORCE {} {} on [{}]{} {}",
            key(k),
            at(*time),
            hosts.join(","),
            if *no_stop { " nostop" } else { "" },
            who(user, *uid)
        ),
        Event::JobClean { time, key: k } => format!("JOB_CLEAN {} {}", key(k), at(*time)),
        Event::JobForward {
            time,
            key: k,
            cluster,
            queue,
        } => format!("JOB_FORWARD {} {} -> {queue}@{cluster}", key(k), at(*time)),
        Event::JobAccept {
            time,
            key: k,
            cluster,
            src,
            attempt,
        } => format!(
            "JOB_ACCEPT {} {} from {}@{cluster} attempt {attempt}",
            key(k),
            at(*time),
            key(src)
        ),
        Event::QueueCtrl {
            time,
            op,
            queue,
            uid,
            user,
            message,
        } => format!(
            "QUEUE_CTRL {queue} {} op={op} {} {message:?}",
            at(*time),
            who(user, *uid)
        ),
        Event::HostCtrl {
            time,
            op,
            host,
            uid,
            user,
            message,
        } => format!(
            "HOST_CTRL {host} {} op={op} {} {message:?}",
            at(*time),
            who(user, *uid)
        ),
        Event::MbdStart {
            time,
            master,
            cluster,
            num_hosts,
            num_queues,
            epoch,
        } => format!(
            "MBD_START {} master={master} cluster={cluster} hosts={num_hosts} queues={num_queues} epoch={epoch}",
            at(*time)
        ),
        Event::MbdDie {
            time,
            master,
            exit_code,
        } => format!("MBD_DIE {} master={master} exit={exit_code}", at(*time)),
        Event::LogSwitch {
            time,
            last_job_id,
            fairshare,
        } => format!(
            "LOG_SWITCH {} last={last_job_id} fairshare={fairshare:?}",
            at(*time)
        ),
        e => format!("{e:?}"),
    }
}

fn action(a: &SbdAction) -> String {
    match a {
        SbdAction::Kill { term_reason } if term_reason.is_empty() => "Kill".to_string(),
        SbdAction::Kill { term_reason } => format!("Kill {term_reason}"),
        SbdAction::Stop { state, reasons: r } => {
            format!("Stop {}{}", status_name(*state), reasons(*state, *r))
        }
        SbdAction::Resume => "Resume".to_string(),
        SbdAction::Signal(sig) => format!("Signal {sig}"),
        SbdAction::Limits(l) => format!("Limits {l:?}"),
        SbdAction::Chkpnt {
            kill,
            force,
            migrate,
        } => format!("Chkpnt kill={kill} force={force} migrate={migrate}"),
    }
}

/// The one-line projection of an effect (see the module docs).
pub(crate) fn line(e: &Effect) -> String {
    match e {
        Effect::Log(ev) => format!("Log {}", event(ev)),
        Effect::Acct(j) => {
            let mut s = format!("Acct {} {}", key(&j.key()), j.state.name());
            if j.exit_status != 0 {
                s.push_str(&format!(" exit={}", j.exit_status));
            }
            if !j.term_reason.is_empty() {
                s.push_str(&format!(" {}", j.term_reason));
            }
            if !j.hosts.is_empty() {
                s.push_str(&format!(" on {}", j.hosts.join(",")));
            }
            s
        }
        Effect::Dispatch {
            key: k,
            attempt,
            host,
        } => format!("Dispatch {} -> {host} attempt {attempt}", key(k)),
        Effect::Signal {
            key: k,
            attempt,
            host,
            action: a,
        } => format!(
            "Signal {} attempt {attempt} on {host} {}",
            key(k),
            action(a)
        ),
        Effect::RemoveJobFile { job_file } => format!("RemoveJobFile {job_file}"),
        Effect::McForward {
            key: k,
            cluster,
            queue,
            attempt,
        } => format!(
            "McForward {} -> {queue}@{cluster} attempt {attempt}",
            key(k)
        ),
        Effect::McControl {
            key: k,
            cluster,
            signal,
        } => format!("McControl {} @{cluster} {signal}", key(k)),
    }
}

/// Every effect as its line, in order.
pub(crate) fn lines(effects: &[Effect]) -> Vec<String> {
    effects.iter().map(line).collect()
}

/// A line-by-line diff of two lists (longest common subsequence): `  ` both, `- ` only
/// expected, `+ ` only actual.
pub(crate) fn diff(expected: &[String], actual: &[String]) -> String {
    let (n, m) = (expected.len(), actual.len());
    // lcs[i][j]: the longest common subsequence of expected[i..] and actual[j..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if expected[i] == actual[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            out.push_str(&format!("  {}\n", expected[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+ {}\n", actual[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {}\n", expected[i]));
            i += 1;
        }
    }
    out
}

/// Asserts that `actual` is exactly the effects `expected` names, one line each (see
/// [`line`]), in order: on any difference it panics with a line-by-line diff and the
/// actual list.
#[track_caller]
pub(crate) fn assert_effects(actual: &[Effect], expected: &[&str]) {
    let expected: Vec<String> = expected.iter().map(|l| l.to_string()).collect();
    let actual = lines(actual);
    if expected != actual {
        let listed: String = actual.iter().map(|l| format!("    {l:?},\n")).collect();
        panic!(
            "the effects differ (- expected, + actual):\n{}\nactual:\n{listed}",
            diff(&expected, &actual)
        );
    }
}

#[test]
fn the_diff_shows_a_missing_an_extra_and_a_changed_effect() {
    let exp: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
    let act: Vec<String> = ["a", "c", "x", "d", "e"].map(String::from).to_vec();
    assert_eq!(diff(&exp, &act), "  a\n- b\n  c\n+ x\n  d\n+ e\n");
}

#[test]
#[should_panic(expected = "+ Dispatch 2 -> hostA attempt 1")]
fn an_extra_effect_fails() {
    let eff = [
        Effect::Dispatch {
            key: (1, 0),
            attempt: 1,
            host: "hostA".into(),
        },
        Effect::Dispatch {
            key: (2, 0),
            attempt: 1,
            host: "hostA".into(),
        },
    ];
    assert_effects(&eff, &["Dispatch 1 -> hostA attempt 1"]);
}

#[test]
#[should_panic(expected = "- Dispatch 2 -> hostA attempt 1")]
fn a_missing_effect_fails() {
    let eff = [Effect::Dispatch {
        key: (1, 0),
        attempt: 1,
        host: "hostA".into(),
    }];
    assert_effects(
        &eff,
        &[
            "Dispatch 1 -> hostA attempt 1",
            "Dispatch 2 -> hostA attempt 1",
        ],
    );
}

#[test]
fn the_lines_keep_what_a_test_can_know() {
    let eff = [
        Effect::Log(Event::JobStatus {
            time: T0_SECS + 3,
            key: (7, 2),
            status: status::SSUSP,
            reasons: susp::MBD_PREEMPT | susp::LOAD_REASON,
            subreasons: 0,
            cpu_time: 0.0,
            end_time: 0,
            usage: None,
            exit_status: 0,
            term_reason: String::new(),
        }),
        Effect::Log(Event::JobStatus {
            time: T0_SECS + 5,
            key: (7, 0),
            status: status::EXIT | status::PDONE,
            reasons: 0,
            subreasons: 0,
            cpu_time: 0.0,
            end_time: T0_SECS + 5,
            usage: Some(Default::default()),
            exit_status: 256,
            term_reason: "TERM_OWNER".into(),
        }),
        Effect::Signal {
            key: (7, 0),
            attempt: 2,
            host: "hostB".into(),
            action: SbdAction::Kill {
                term_reason: "TERM_PREEMPT".into(),
            },
        },
    ];
    assert_effects(
        &eff,
        &[
            "Log JOB_STATUS 7[2] @3 SSUSP LOAD_REASON|MBD_PREEMPT",
            "Log JOB_STATUS 7 @5 EXIT+PDONE exit=256 end@5 usage TERM_OWNER",
            "Signal 7 attempt 2 on hostB Kill TERM_PREEMPT",
        ],
    );
}
