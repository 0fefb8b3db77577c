//! Issue 29 item 4: the classification of failed submissions and the retry loop, with a
//! fake submit function and a manual clock.

use super::*;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

/// An error from the transport (the status carries it as its source).
#[derive(Debug)]
struct Transport(Status);

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "transport: {}", self.0.message())
    }
}

impl std::error::Error for Transport {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

fn local(code: Code, msg: &str) -> Status {
    Status::from_error(Box::new(Transport(Status::new(code, msg))))
}

fn threshold(secs: u64) -> Status {
    let mut s = Status::resource_exhausted("Pending job threshold reached");
    if let Ok(v) = secs.to_string().parse() {
        s.metadata_mut()
            .insert(basalt_proto::RETRY_SECS_METADATA, v);
    }
    s
}

#[test]
fn transport_failures_and_unanswered_codes_are_sent_again() {
    // Made on this side, whatever the code: refused or reset connections, timeouts,
    // broken pipes, HTTP/2 resets.
    for code in [
        Code::Unavailable,
        Code::Internal,
        Code::Unknown,
        Code::Cancelled,
        Code::Aborted,
        Code::DeadlineExceeded,
        Code::OutOfRange,
    ] {
        let s = local(code, "connection reset by peer");
        assert!(std::error::Error::source(&s).is_some(), "{code:?}");
        assert_eq!(classify(&s), Class::Unanswered, "{code:?}");
    }
    let io = Status::from_error(Box::new(std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "broken pipe",
    )));
    assert_eq!(classify(&io), Class::Unanswered);
    // Sent by mbatchd (or a peer without an answer): shutting down, not serving yet,
    // the event log not writable, deadlines.
    for s in [
        Status::unavailable("mbatchd is shutting down"),
        Status::unavailable("tcp connect error: Connection refused"),
        Status::unknown("?"),
        Status::cancelled("Timeout expired"),
        Status::deadline_exceeded("late"),
        Status::aborted("stream reset"),
        Status::resource_exhausted("The event log cannot be written: disk full"),
    ] {
        assert_eq!(classify(&s), Class::Unanswered, "{s:?}");
    }
}

#[test]
fn refusals_and_thresholds_are_answers() {
    for s in [
        Status::failed_precondition("Queue does not exist"),
        Status::invalid_argument("Bad argument: the job name is longer than 4094 characters"),
        Status::permission_denied("User permission denied"),
        Status::unauthenticated("bad credential"),
        Status::not_found("No matching job found"),
        Status::internal("failed to decode Protobuf message"),
        Status::unimplemented("?"),
    ] {
        assert_eq!(classify(&s), Class::Refused, "{s:?}");
    }
    assert_eq!(
        classify(&threshold(7)),
        Class::Threshold(Duration::from_secs(7))
    );
}

#[test]
fn limits_come_from_the_settings() {
    let none = Limits::from_settings(|_| None);
    assert_eq!(none, Limits::default());
    let both = Limits::from_settings(|k| match k {
        "LSB_NTRIES" => Some(" 3 ".into()),
        "BASALT_CMD_TIMEOUT" => Some("2.5".into()),
        _ => None,
    });
    assert_eq!(both.tries, Some(3));
    assert_eq!(both.time, Some(Duration::from_millis(2500)));
    let junk = Limits::from_settings(|k| match k {
        "LSB_NTRIES" => Some("0".into()),
        "BASALT_CMD_TIMEOUT" => Some("-1".into()),
        _ => None,
    });
    assert_eq!(junk, Limits::default());
}

/// A scripted mbatchd and a manual clock: each attempt takes `call` of clock time.
struct Fake {
    clock: Rc<Cell<Duration>>,
    script: RefCell<VecDeque<Attempt<u64>>>,
    tries: Cell<u64>,
    remaining: RefCell<Vec<Option<Duration>>>,
    said: RefCell<Vec<String>>,
    paused: RefCell<Vec<Duration>>,
    call: Duration,
}

impl Fake {
    fn new(script: Vec<Attempt<u64>>) -> Fake {
        Fake {
            clock: Rc::new(Cell::new(Duration::from_secs(1000))),
            script: RefCell::new(script.into()),
            tries: Cell::new(0),
            remaining: RefCell::new(Vec::new()),
            said: RefCell::new(Vec::new()),
            paused: RefCell::new(Vec::new()),
            call: Duration::from_millis(100),
        }
    }

    fn run(&self, limits: Limits) -> Outcome<u64> {
        let rt = match tokio::runtime::Builder::new_current_thread().build() {
            Ok(rt) => rt,
            Err(e) => panic!("runtime: {e}"),
        };
        rt.block_on(submit_loop(
            limits,
            || self.clock.get(),
            |d| {
                self.paused.borrow_mut().push(d);
                self.clock.set(self.clock.get() + d);
                std::future::ready(())
            },
            |remaining| {
                self.tries.set(self.tries.get() + 1);
                self.remaining.borrow_mut().push(remaining);
                self.clock.set(self.clock.get() + self.call);
                // Past the script: mbatchd never answers again.
                let next = self
                    .script
                    .borrow_mut()
                    .pop_front()
                    .unwrap_or_else(|| Attempt::Failed(local(Code::Unavailable, "refused")));
                std::future::ready(next)
            },
            |line| self.said.borrow_mut().push(line),
        ))
    }
}

const STILL: &str = "batch system daemon not responding ... still trying";

#[test]
fn a_lost_answer_is_sent_again_until_mbatchd_answers() {
    let f = Fake::new(vec![
        Attempt::Failed(local(Code::Unavailable, "connection reset")),
        Attempt::NotSent {
            lim: false,
            why: "refused".into(),
        },
        Attempt::Failed(Status::unavailable("mbatchd is shutting down")),
        Attempt::Answered(42),
    ]);
    match f.run(Limits::default()) {
        Outcome::Accepted(42) => {}
        o => panic!("{o:?}"),
    }
    assert_eq!(f.tries.get(), 4);
    // One still-trying line for the outage; pauses grow from FIRST_PAUSE.
    assert_eq!(*f.said.borrow(), vec![STILL.to_string()]);
    assert_eq!(
        *f.paused.borrow(),
        vec![FIRST_PAUSE, FIRST_PAUSE * 2, MAX_PAUSE]
    );
}

#[test]
fn without_limits_it_keeps_trying_and_keeps_saying_so() {
    // Five minutes of silence, then the answer.
    let mut script: Vec<Attempt<u64>> = (0..272)
        .map(|_| Attempt::Failed(local(Code::Unavailable, "refused")))
        .collect();
    script.push(Attempt::Answered(7));
    let f = Fake::new(script);
    match f.run(Limits::default()) {
        Outcome::Accepted(7) => {}
        o => panic!("{o:?}"),
    }
    let said = f.said.borrow();
    assert!(
        said.len() >= 9 && said.iter().all(|l| l == STILL),
        "{said:?}"
    );
    assert!(f.paused.borrow().iter().all(|p| *p <= MAX_PAUSE));
}

#[test]
fn a_refusal_ends_at_once_even_after_lost_answers() {
    let f = Fake::new(vec![
        Attempt::Failed(local(Code::Unavailable, "reset")),
        Attempt::Failed(Status::failed_precondition("Queue does not exist")),
        Attempt::Answered(1),
    ]);
    match f.run(Limits::default()) {
        Outcome::Refused(s) => assert_eq!(s.message(), "Queue does not exist"),
        o => panic!("{o:?}"),
    }
    assert_eq!(f.tries.get(), 2);
}

#[test]
fn giving_up_after_a_send_says_the_job_may_exist() {
    let f = Fake::new(vec![
        Attempt::NotSent {
            lim: false,
            why: "refused".into(),
        },
        Attempt::Failed(local(Code::Unavailable, "connection reset")),
    ]);
    let limits = Limits {
        tries: None,
        time: Some(Duration::from_secs(3)),
    };
    match f.run(limits) {
        Outcome::Unknown { tries, elapsed, .. } => {
            assert!(elapsed >= Duration::from_secs(3) && elapsed < Duration::from_secs(4));
            assert_eq!(tries, f.tries.get());
        }
        o => panic!("{o:?}"),
    }
    // Each attempt is told the time left; the last pause ends at the deadline.
    let rem = f.remaining.borrow();
    assert_eq!(rem[0], Some(Duration::from_secs(3)));
    assert!(rem.windows(2).all(|w| w[1] < w[0]), "{rem:?}");
}

#[test]
fn giving_up_before_anything_was_sent_says_not_submitted() {
    let script = (0..100)
        .map(|_| Attempt::NotSent {
            lim: true,
            why: "LSF is down; try later".into(),
        })
        .collect();
    let f = Fake::new(script);
    let limits = Limits {
        tries: Some(4),
        time: None,
    };
    match f.run(limits) {
        Outcome::Unreachable(why) => assert_eq!(why, "LSF is down; try later"),
        o => panic!("{o:?}"),
    }
    assert_eq!(f.tries.get(), 4);
    assert_eq!(
        *f.said.borrow(),
        vec!["LSF daemon (LIM) not responding ... still trying".to_string()]
    );
    // A fatal connection error ends at once...
    let f = Fake::new(vec![Attempt::Fatal("User permission denied".into())]);
    match f.run(Limits::default()) {
        Outcome::Unreachable(why) => assert_eq!(why, "User permission denied"),
        o => panic!("{o:?}"),
    }
    // ... but not after a lost answer: the outcome is still to be learnt.
    let f = Fake::new(vec![
        Attempt::Failed(local(Code::Unavailable, "reset")),
        Attempt::Fatal("cannot resolve the address of host <hostA>".into()),
        Attempt::Answered(5),
    ]);
    assert!(matches!(f.run(Limits::default()), Outcome::Accepted(5)));
}

#[test]
fn lsb_ntries_bounds_lost_answers_and_thresholds() {
    let f = Fake::new(vec![
        Attempt::Failed(local(Code::Unavailable, "reset")),
        Attempt::Failed(local(Code::Unavailable, "reset")),
    ]);
    let two = Limits {
        tries: Some(2),
        time: None,
    };
    match f.run(two) {
        Outcome::Unknown { tries: 2, why, .. } => assert!(why.contains("reset"), "{why}"),
        o => panic!("{o:?}"),
    }
    // Thresholds: LSF's message and SUB_TRY_INTERVAL, LSB_NTRIES times in all, then a
    // refusal (no job).
    let f = Fake::new(vec![
        Attempt::Failed(threshold(60)),
        Attempt::Failed(threshold(60)),
    ]);
    match f.run(two) {
        Outcome::Refused(s) => assert_eq!(s.code(), Code::ResourceExhausted),
        o => panic!("{o:?}"),
    }
    assert_eq!(
        *f.said.borrow(),
        vec!["Pending job threshold reached. Retrying in 60 seconds...".to_string()]
    );
    assert_eq!(*f.paused.borrow(), vec![Duration::from_secs(60)]);
    // Without LSB_NTRIES a threshold is waited out until the job is accepted.
    let f = Fake::new(vec![
        Attempt::Failed(threshold(1)),
        Attempt::Failed(threshold(1)),
        Attempt::Answered(9),
    ]);
    assert!(matches!(f.run(Limits::default()), Outcome::Accepted(9)));
}

/// What mbatchd answers while it cannot write its event log: try again in a second.
fn log_down() -> Status {
    let mut s = Status::resource_exhausted(
        "Cannot write the event log (write job file: No space left on device (os error 28)). \
         mbatchd accepts no new work until it can write again; queries still work",
    );
    s.metadata_mut().insert(
        basalt_proto::RETRY_SECS_METADATA,
        tonic::metadata::MetadataValue::from_static("1"),
    );
    s
}

/// Issue 49 item 8: while mbatchd cannot write its event log (a full disk) it answers
/// "try again in 1 s". `bsub` goes on trying only within `BASALT_CMD_TIMEOUT` and
/// `LSB_NTRIES`, then gives up with mbatchd's reason: "not submitted" when every request
/// it sent was answered so, "may have been submitted" (254) when an earlier request's
/// answer was lost — never "not submitted" for a job that may exist. The `Retrying` line
/// is said again only every [`WARN_EVERY`], not every second.
#[test]
fn issue49_item8_bsub_gives_up_within_its_bounds_while_the_log_cannot_be_written() {
    let down_then = |n: usize, last: Attempt<u64>| {
        let mut v: Vec<Attempt<u64>> = (0..n).map(|_| Attempt::Failed(log_down())).collect();
        v.push(last);
        v
    };
    let five_s = Limits {
        tries: None,
        time: Some(Duration::from_secs(5)),
    };
    // BASALT_CMD_TIMEOUT: given up in time, the job not submitted, mbatchd's reason.
    let f = Fake::new(down_then(1000, Attempt::Answered(3)));
    let start = f.clock.get();
    match f.run(five_s) {
        Outcome::Refused(s) => assert!(s.message().contains("No space left"), "{s:?}"),
        o => panic!(
            "went on past BASALT_CMD_TIMEOUT: {o:?} after {} tries",
            f.tries.get()
        ),
    }
    let spent = f.clock.get() - start;
    assert!(spent <= Duration::from_secs(5) + f.call, "{spent:?}");
    assert!(
        f.paused
            .borrow()
            .iter()
            .all(|p| *p <= Duration::from_secs(1))
    );
    let said = f.said.borrow().clone();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].ends_with(". Retrying in 1 seconds..."), "{said:?}");

    // After a lost answer the job may exist: 254's message, within LSB_NTRIES and within
    // BASALT_CMD_TIMEOUT alike.
    let lost_then_down = || {
        let mut v = vec![Attempt::Failed(local(
            Code::Unavailable,
            "connection reset",
        ))];
        v.extend(down_then(1000, Attempt::Answered(4)));
        v
    };
    let three = Limits {
        tries: Some(3),
        time: None,
    };
    for limits in [three, five_s] {
        let f = Fake::new(lost_then_down());
        match f.run(limits) {
            Outcome::Unknown { why, tries, .. } => {
                assert!(why.contains("Cannot write the event log"), "{why}");
                assert_eq!(tries, f.tries.get());
            }
            o => panic!("{limits:?}: {o:?} after {} tries", f.tries.get()),
        }
        assert!(f.tries.get() <= 60, "{limits:?}: {} tries", f.tries.get());
    }

    // Without a bound it waits for the disk (LSF's default), saying so every WARN_EVERY.
    let f = Fake::new(down_then(100, Attempt::Answered(5)));
    assert!(matches!(f.run(Limits::default()), Outcome::Accepted(5)));
    let said = f.said.borrow();
    assert!((2..=5).contains(&said.len()), "{said:?}");
}

#[test]
fn the_give_up_message_says_how_to_find_and_resubmit_the_job() {
    let t = maybe_submitted_text(
        "bsub",
        "connection reset",
        12,
        Duration::from_secs(30),
        Some("my job"),
        "hostA:12:abc:00ff",
    );
    assert!(t.starts_with(
        "bsub: mbatchd did not answer (connection reset); gave up after 12 tries in 30 seconds.\n"
    ));
    assert!(t.contains("may have been submitted"));
    assert!(t.contains("    bjobs -a -J 'my job'\n"), "{t}");
    assert!(
        t.contains("    BASALT_SUBMIT_TOKEN=hostA:12:abc:00ff\n"),
        "{t}"
    );
    let t = maybe_submitted_text("bsub", "x", 1, Duration::ZERO, Some("a\nb"), "t'k");
    assert!(t.contains("    bjobs -a\n"), "{t}");
    assert!(t.contains(r"BASALT_SUBMIT_TOKEN='t'\''k'"), "{t}");
}

#[test]
fn a_chosen_token_is_checked() {
    assert_eq!(token_from_env(None), Ok(None));
    assert_eq!(token_from_env(Some(String::new())), Ok(None));
    assert_eq!(token_from_env(Some("abc".into())), Ok(Some("abc".into())));
    assert!(token_from_env(Some("x".repeat(257))).is_err());
    assert!(token_from_env(Some("a\nb".into())).is_err());
}

/// Issue 49 item 3: a token bsub makes is 128 random bits (nobody can predict another
/// submission's), and a chosen token of the form mbatchd keeps for forwarded jobs is
/// refused before anything is sent.
#[test]
fn issue49_item3_new_tokens_are_random_and_forwarded_forms_are_refused() {
    let made: Vec<String> = (0..64)
        .map(|_| crate::batch::bsub::submit_token().unwrap_or_default())
        .collect();
    for t in &made {
        assert_eq!(t.len(), 32, "{t}");
        assert!(t.bytes().all(|b| b.is_ascii_hexdigit()), "{t}");
        assert_eq!(token_from_env(Some(t.clone())), Ok(Some(t.clone())));
    }
    let distinct: std::collections::BTreeSet<&String> = made.iter().collect();
    assert_eq!(distinct.len(), made.len());
    let e = token_from_env(Some("mc:east:12.0:1".into())).unwrap_err();
    assert!(e.contains("reserved for MultiCluster"), "{e}");
}
