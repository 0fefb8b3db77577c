//! bmod's request as the core's [`Modify`]: which options are set (their values from the
//! request's `JobSubmission`) and which are reset.

use basalt_core::rlimit;
use basalt_proto::mbatchd as pb;
use basalt_sched::{Change, Modify};

/// The resource limit an option name sets (`-c -W -M -v -F -D -S -C -p`).
pub fn limit_of(name: &str) -> Option<usize> {
    Some(match name {
        "c" => rlimit::CPU,
        "W" => rlimit::RUN,
        "M" => rlimit::RSS,
        "v" => rlimit::SWAP,
        "F" => rlimit::FSIZE,
        "D" => rlimit::DATA,
        "S" => rlimit::STACK,
        "C" => rlimit::CORE,
        "p" => rlimit::PROCESS,
        _ => return None,
    })
}

/// The change a request asks for; an option name that is not one of bmod's is refused
/// with its name.
pub fn modify(r: &pb::ModifyRequest) -> Result<Modify, String> {
    let v = r.values.clone().unwrap_or_default();
    let mut m = Modify::default();
    for (name, set) in r
        .set
        .iter()
        .map(|n| (n, true))
        .chain(r.reset.iter().map(|n| (n, false)))
    {
        let text = |value: &str| {
            if set {
                Change::Set(value.to_owned())
            } else {
                Change::Reset
            }
        };
        let on = if set { Change::Set(()) } else { Change::Reset };
        match name.as_str() {
            "J" => m.job_name = text(&v.job_name),
            "q" => m.queue = text(&v.queue),
            "m" => {
                m.hosts = if set {
                    Change::Set(v.asked_hosts.clone())
                } else {
                    Change::Reset
                }
            }
            "R" => m.res_req = text(&v.res_req),
            "w" => m.depend_cond = text(&v.depend_cond),
            "i" => m.in_file = text(&v.in_file),
            "o" | "oo" => {
                m.out_file = if set {
                    Change::Set((v.out_file.clone(), name == "oo"))
                } else {
                    Change::Reset
                }
            }
            "e" | "eo" => {
                m.err_file = if set {
                    Change::Set((v.err_file.clone(), name == "eo"))
                } else {
                    Change::Reset
                }
            }
            "E" => m.pre_exec = text(&v.pre_exec),
            "Ep" => m.post_exec = text(&v.post_exec),
            "u" => m.mail_user = text(&v.mail_user),
            "P" => m.project = text(&v.project),
            "L" => m.login_shell = text(&v.login_shell),
            "G" => m.user_group = text(&v.user_group),
            "Q" => m.requeue_exit_values = text(&v.requeue_exit_values),
            "app" => m.app = text(&v.app),
            "cwd" => m.spec_cwd = text(&v.spec_cwd),
            // -Z: a new command line (there is no -Zn).
            "Z" if set => m.command = Change::Set(v.command.clone()),
            "n" => {
                m.procs = if set {
                    Change::Set((v.num_processors.max(1), v.max_processors))
                } else {
                    Change::Reset
                }
            }
            "b" => {
                m.begin_time = if set {
                    Change::Set(v.begin_time)
                } else {
                    Change::Reset
                }
            }
            "t" => {
                m.term_time = if set {
                    Change::Set(v.term_time)
                } else {
                    Change::Reset
                }
            }
            "x" => m.exclusive = on,
            "r" => m.rerunnable = on,
            "N" => m.notify_end = on,
            "B" => m.notify_begin = on,
            other => match limit_of(other) {
                Some(i) => {
                    m.rlimits[i] = if set {
                        match v.rlimits.get(i) {
                            Some(l) if *l >= 0 => Change::Set(*l),
                            _ => return Err(format!("-{other}")),
                        }
                    } else {
                        Change::Reset
                    }
                }
                None => return Err(format!("-{other}")),
            },
        }
    }
    Ok(m)
}
