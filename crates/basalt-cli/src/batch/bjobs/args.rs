//! bjobs's options: what was asked ([`Args`]), the job states it selects and the
//! "no job" message that goes with them.

use super::*;

/// Parsed bjobs arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    pub all: bool,
    pub done: bool,
    pub pend: bool,
    pub run: bool,
    pub susp: bool,
    pub long: bool,
    pub wide: bool,
    pub noheader: bool,
    pub json: bool,
    /// `-A`: the job-array summary.
    pub arrays: bool,
    /// `-sum`: the job-slot summary.
    pub sum: bool,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
    pub format: Option<String>,
    pub ids: Vec<String>,
}

/// Fill [`Args`] from parsed items.
pub fn args_from(items: Vec<Item>) -> Args {
    let mut a = Args::default();
    for it in items {
        match it {
            Item::Arg(s) => a.ids.push(s),
            Item::Opt(n, v) => match (n.as_str(), v) {
                ("A", _) => a.arrays = true,
                ("a", _) => a.all = true,
                ("d", _) => a.done = true,
                ("p", _) => a.pend = true,
                ("r", _) => a.run = true,
                ("s", _) => a.susp = true,
                ("l", _) => a.long = true,
                ("w", _) => a.wide = true,
                ("noheader", _) => a.noheader = true,
                ("json", _) => a.json = true,
                ("sum", _) => a.sum = true,
                ("u", v) => a.user = v,
                ("q", v) => a.queue = v,
                ("m", v) => a.host = v,
                ("J", v) => a.job_name = v,
                ("o", v) => a.format = v,
                _ => {}
            },
        }
    }
    a
}

/// The state bits to ask for (0 = mbatchd's default: unfinished, plus finished ones
/// for explicit ids).
pub fn state_bits(a: &Args) -> u32 {
    let unfinished = status::PEND
        | status::PSUSP
        | status::RUN
        | status::SSUSP
        | status::USUSP
        | status::UNKWN
        | status::WAIT
        | status::PROV
        | status::RUNKWN;
    if a.sum {
        // -sum counts unfinished jobs only, also those named by id.
        return unfinished;
    }
    let mut bits = 0;
    if a.pend {
        bits |= status::PEND | status::PSUSP;
    }
    if a.run {
        bits |= status::RUN;
    }
    if a.susp {
        bits |= status::PSUSP | status::SSUSP | status::USUSP;
    }
    if a.done {
        bits |= status::DONE | status::EXIT;
    }
    if a.all {
        bits |= unfinished | status::DONE | status::EXIT;
    }
    bits
}

/// The stderr message when nothing matched.
pub fn nothing_message(a: &Args) -> &'static str {
    match (a.all, a.pend, a.run, a.susp, a.done) {
        (true, ..) => "No job found",
        (false, true, false, false, false) => "No pending job found",
        (false, false, true, false, false) => "No running job found",
        (false, false, false, true, false) => "No suspended job found",
        (false, false, false, false, true) => "No done job found",
        _ => "No unfinished job found",
    }
}
