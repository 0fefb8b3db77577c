//! The submission loop of `bsub` and `brestart` (and of the bench's API clients): send
//! the job with its submission token until mbatchd's answer is known.
//!
//! mbatchd remembers the token of every job it knows, in lsb.events too, so a request
//! sent again after a lost answer (mbatchd killed, the master moved, a timeout) gets the
//! job the first one created instead of a second job. The loop therefore only stops:
//! * with the job (`Accepted`);
//! * when the job certainly does not exist: mbatchd refused it (`Refused`; a "try again
//!   later" answer — a pending job threshold, or an event log that cannot be written —
//!   once a limit is reached and no earlier answer was lost) or a limit was reached
//!   before any request could be sent (`Unreachable`);
//! * when a limit (`LSB_NTRIES`, `BASALT_CMD_TIMEOUT`) is reached after a request whose
//!   answer was lost (`Unknown`): the job may exist.
//!
//! Without a limit it keeps trying, as LSF does, saying `batch system daemon not
//! responding ... still trying` at the first failure and again every
//! [`WARN_EVERY`] while it goes on.
//!
//! Pure: the attempt, the clock and the pause are given, so the logic is tested with a
//! manual clock.

use super::super::ConnectError;
use std::future::Future;
use std::time::Duration;
use tonic::{Code, Status};

/// bsub's exit code when it gave up without learning whether mbatchd created the job.
pub const EXIT_MAYBE_SUBMITTED: u8 = 254;
/// A submission token chosen by the caller (Basalt extension): a bsub run again with the
/// token its earlier run printed gets that run's job, if mbatchd created it, rather than
/// a second one. Not passed on to the job's environment.
pub const SUBMIT_TOKEN_ENV: &str = "BASALT_SUBMIT_TOKEN";
/// mbatchd refuses longer tokens.
pub const MAX_TOKEN_LEN: usize = basalt_core::bounds::MAX_SUBMIT_TOKEN;
/// The first pause after a failed attempt; it doubles up to [`MAX_PAUSE`].
pub const FIRST_PAUSE: Duration = Duration::from_millis(250);
pub const MAX_PAUSE: Duration = Duration::from_secs(1);
/// How often the `still trying` line is repeated while the loop goes on.
pub const WARN_EVERY: Duration = Duration::from_secs(30);
/// How long one request may wait for mbatchd's answer before it is sent again (a hung
/// mbatchd, a master host gone silent).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// What a failed submission request says about the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// mbatchd answered no: the job does not exist.
    Refused,
    /// Try again after this long, which mbatchd sends along: a pending job threshold
    /// (MAX_PEND_JOBS..., SUB_TRY_INTERVAL), or its event log cannot be written (1 s).
    /// This request created no job.
    Threshold(Duration),
    /// No answer: the connection failed, was reset or timed out, mbatchd was stopping or
    /// could not log the job. The job may exist; send the request again, same token.
    Unanswered,
}

/// Classify a failed submission request.
///
/// A status made on this side (the transport failed: refused or reset connections,
/// timeouts, broken HTTP/2 streams) carries its cause as `source` whatever its code, and
/// is never an answer. Of the statuses mbatchd sends, `UNAVAILABLE` (shutting down),
/// `UNKNOWN`, `CANCELLED`, `DEADLINE_EXCEEDED`, `ABORTED` and `RESOURCE_EXHAUSTED`
/// without a retry interval (an older mbatchd whose event log cannot be written) mean the
/// request was not answered; `RESOURCE_EXHAUSTED` with a retry interval is "try again
/// later" (a pending job threshold, or the event log cannot be written); every
/// other code is a refusal (bad queue, limits, permission, bad arguments...).
pub fn classify(s: &Status) -> Class {
    if std::error::Error::source(s).is_some() {
        return Class::Unanswered;
    }
    match s.code() {
        Code::Unavailable
        | Code::Unknown
        | Code::Cancelled
        | Code::DeadlineExceeded
        | Code::Aborted => Class::Unanswered,
        Code::ResourceExhausted => match retry_secs(s) {
            Some(secs) => Class::Threshold(Duration::from_secs(secs)),
            None => Class::Unanswered,
        },
        _ => Class::Refused,
    }
}

/// The retry interval mbatchd attached to a pending-threshold refusal.
fn retry_secs(s: &Status) -> Option<u64> {
    s.metadata()
        .get(basalt_proto::RETRY_SECS_METADATA)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
}

/// What bounds the loop: `LSB_NTRIES` attempts in all, `BASALT_CMD_TIMEOUT` seconds in
/// all (each read from the environment, else lsf.conf). Neither: no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    pub tries: Option<u64>,
    pub time: Option<Duration>,
}

impl Limits {
    /// The limits from `get(name)` (the environment over lsf.conf).
    pub fn from_settings(get: impl Fn(&str) -> Option<String>) -> Limits {
        let tries = get("LSB_NTRIES")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|n| *n > 0);
        let time = get(super::super::CMD_TIMEOUT_ENV)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(Duration::from_secs_f64);
        Limits { tries, time }
    }
}

/// How one attempt ended.
#[derive(Debug)]
pub enum Attempt<R> {
    /// mbatchd accepted the job (or answered a resend with the job it created).
    Answered(R),
    /// mbatchd could not be reached; nothing was sent. `lim`: no LIM answered.
    NotSent { lim: bool, why: String },
    /// mbatchd cannot be reached and trying again will not help (a refused identity, a
    /// bad address); nothing was sent. Ends the loop unless an earlier request's answer
    /// was lost.
    Fatal(String),
    /// The request was sent (or may have been) and failed.
    Failed(Status),
}

/// How the loop ended.
#[derive(Debug)]
pub enum Outcome<R> {
    Accepted(R),
    /// mbatchd refused the job: it does not exist.
    Refused(Status),
    /// No request ever reached mbatchd: the job does not exist. The last reason.
    Unreachable(String),
    /// A limit was reached after a request whose answer was lost: the job may exist.
    Unknown {
        why: String,
        tries: u64,
        elapsed: Duration,
    },
}

/// Run the loop. `attempt(remaining)` makes one try (`remaining`: the time left under
/// [`Limits::time`]); `now()` is the time since any fixed point; `pause(d)` waits `d`;
/// `say(line)` prints a line for the user (stderr).
pub async fn submit_loop<R, A, AF, P, PF>(
    limits: Limits,
    now: impl Fn() -> Duration,
    mut pause: P,
    mut attempt: A,
    mut say: impl FnMut(String),
) -> Outcome<R>
where
    A: FnMut(Option<Duration>) -> AF,
    AF: Future<Output = Attempt<R>>,
    P: FnMut(Duration) -> PF,
    PF: Future<Output = ()>,
{
    let start = now();
    let elapsed = || now().saturating_sub(start);
    let mut tries = 0u64;
    let mut sent = false;
    let mut warned_at: Option<Duration> = None;
    // The last `Retrying in N seconds` line said, and when.
    let mut retrying: Option<(String, Duration)> = None;
    let mut next_pause = FIRST_PAUSE;
    loop {
        tries += 1;
        let remaining = limits.time.map(|t| t.saturating_sub(elapsed()));
        let (why, lim) = match attempt(remaining).await {
            Attempt::Answered(r) => return Outcome::Accepted(r),
            Attempt::Fatal(why) if !sent => return Outcome::Unreachable(why),
            // After a lost answer the outcome must still be learnt: an error that would
            // end a first try (a host name that does not resolve, credentials the LIM
            // did not give) is taken as passing.
            Attempt::Fatal(why) => (why, false),
            Attempt::NotSent { lim, why } => (why, lim),
            Attempt::Failed(s) => match classify(&s) {
                Class::Refused => return Outcome::Refused(s),
                Class::Threshold(wait) => {
                    // This request created no job (mbatchd answers a logged token before
                    // it checks any threshold, even while its log cannot be written).
                    // Within the same bounds as any other try.
                    let spent = elapsed();
                    let out_of_tries = limits.tries.is_some_and(|n| tries >= n);
                    let out_of_time = limits.time.is_some_and(|t| spent >= t);
                    if out_of_tries || out_of_time {
                        // After a lost answer the job may still exist (that request may
                        // not have reached mbatchd's owner yet): never "not submitted".
                        return if sent {
                            Outcome::Unknown {
                                why: status_why(&s),
                                tries,
                                elapsed: spent,
                            }
                        } else {
                            Outcome::Refused(s)
                        };
                    }
                    let line = format!(
                        "{}. Retrying in {} seconds...",
                        s.message().trim().trim_end_matches('.'),
                        wait.as_secs()
                    );
                    // LSF's line at each SUB_TRY_INTERVAL; a 1-second retry (the event log
                    // cannot be written) says it again only every WARN_EVERY.
                    let repeat = retrying.as_ref().is_none_or(|(said, at)| {
                        *said != line || spent.saturating_sub(*at) >= WARN_EVERY
                    });
                    if repeat {
                        say(line.clone());
                        retrying = Some((line, spent));
                    }
                    let wait = match limits.time {
                        Some(t) => wait.min(t.saturating_sub(spent)),
                        None => wait,
                    };
                    pause(wait).await;
                    next_pause = FIRST_PAUSE;
                    continue;
                }
                Class::Unanswered => {
                    sent = true;
                    (status_why(&s), false)
                }
            },
        };
        let spent = elapsed();
        let out_of_tries = limits.tries.is_some_and(|n| tries >= n);
        let out_of_time = limits.time.is_some_and(|t| spent >= t);
        if out_of_tries || out_of_time {
            return if sent {
                Outcome::Unknown {
                    why,
                    tries,
                    elapsed: spent,
                }
            } else {
                Outcome::Unreachable(why)
            };
        }
        if warned_at.is_none_or(|w| spent.saturating_sub(w) >= WARN_EVERY) {
            warned_at = Some(spent);
            let down = if lim {
                ConnectError::LsfDown
            } else {
                ConnectError::Mbatchd(String::new())
            };
            if let Some(line) = super::super::still_trying_line(&down) {
                say(line.to_owned());
            }
        }
        let wait = match limits.time {
            Some(t) => next_pause.min(t.saturating_sub(spent)),
            None => next_pause,
        };
        pause(wait).await;
        next_pause = (next_pause * 2).min(MAX_PAUSE);
    }
}

/// A lost answer's reason, for the give-up message.
fn status_why(s: &Status) -> String {
    let m = s.message().trim();
    if m.is_empty() {
        format!("{:?}", s.code())
    } else {
        m.to_owned()
    }
}

/// Quote `s` for a POSIX shell (single quotes).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What bsub says when it gave up after a lost answer: the job may exist, how to find
/// it, and how to submit it again without risking a second job. `name` is what
/// `bjobs -J` matches (the -J name, else a one-line command), `token` the submission's.
pub fn maybe_submitted_text(
    cmd: &str,
    why: &str,
    tries: u64,
    elapsed: Duration,
    name: Option<&str>,
    token: &str,
) -> String {
    let mut t = format!(
        "{cmd}: mbatchd did not answer ({why}); gave up after {tries} tries in {:.0} seconds.\n\
         The job may have been submitted. Look for it with:\n",
        elapsed.as_secs_f64()
    );
    match name {
        Some(n) if !n.is_empty() && !n.contains('\n') => {
            t.push_str(&format!("    bjobs -a -J {}\n", shell_quote(n)));
        }
        _ => t.push_str("    bjobs -a\n"),
    }
    t.push_str(&format!(
        "To submit it without risking a second job, run the same command again with\n    \
         {SUBMIT_TOKEN_ENV}={}\n\
         mbatchd then answers with the job this submission created, if it created one.\n",
        shell_quote(token)
    ));
    t
}

/// A token the caller chose ([`SUBMIT_TOKEN_ENV`]): `Err` when it is unusable (mbatchd's
/// rule, `basalt_sched::bounds::check_submit_token`: at most [`MAX_TOKEN_LEN`] characters,
/// no control character, not starting with `mc:`).
pub fn token_from_env(v: Option<String>) -> Result<Option<String>, String> {
    match v {
        None => Ok(None),
        Some(t) if t.is_empty() => Ok(None),
        Some(t) => match basalt_sched::bounds::check_submit_token(&t) {
            Ok(()) => Ok(Some(t)),
            Err(basalt_sched::SchedError::BadArgument(m)) => {
                Err(format!("{SUBMIT_TOKEN_ENV}: {m}"))
            }
            Err(e) => Err(format!("{SUBMIT_TOKEN_ENV}: {e}")),
        },
    }
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
