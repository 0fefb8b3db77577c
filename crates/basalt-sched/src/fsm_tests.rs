//! Tests of what the FSM derives from the log: submission tokens (and, below, the
//! incremental pending order and slot counters against a recount).

use super::*;
use crate::tests::{T0, admin, alice, cfg, cmd, logged};

fn with_token(c: &str, token: &str) -> Submission {
    Submission {
        submit_token: token.into(),
        ..cmd(c)
    }
}

#[test]
fn a_submission_token_names_its_job_until_the_job_is_forgotten() {
    let mut s = Sched::new(cfg(), T0);
    s.start(T0, "hostA");
    let mut log = logged(&s.take_effects());
    let (id, _, _) = s
        .submit(T0, &alice(), with_token("sleep 1", "tok-1"))
        .expect("submit");
    let (other, _, _) = s.submit(T0, &alice(), cmd("sleep 2")).expect("submit");
    log.extend(logged(&s.take_effects()));
    assert_eq!(s.known_submission("tok-1"), Some(id));
    assert_eq!(s.known_submission("tok-2"), None);
    assert_eq!(s.known_submission(""), None);
    // A reload knows the same.
    let mut r = Sched::new(cfg(), T0);
    r.replay(&log);
    assert_eq!(r.known_submission("tok-1"), Some(id));
    // Killed and cleaned: remembered as gone, the token still answers.
    s.kill(T0 + 1000, &admin(), (id, 0), false, false)
        .expect("kill");
    s.kill(T0 + 1000, &admin(), (other, 0), false, false)
        .expect("kill");
    s.tick(T0 + 1000 + 3_600_000 + 1000);
    log.extend(logged(&s.take_effects()));
    assert!(s.job((id, 0)).is_none());
    assert_eq!(s.known_submission("tok-1"), Some(id));
    // A log switch forgets cleaned jobs no dependency names, and their tokens with them.
    let co = s.carry_over(T0 + 3_700_000);
    s.replay(&co.appended);
    assert_eq!(s.known_submission("tok-1"), None);
    let mut switched = Sched::new(cfg(), T0);
    switched.replay(co.events());
    assert_eq!(switched.known_submission("tok-1"), None);
    assert_eq!(switched.tokens, s.tokens);
}
