//! Slot reservation (lsb.queues `SLOT_RESERVE = MAX_RESERVE_TIME[n]`, seed 001
//! "Processor Reservation"): a parallel job of such a queue that cannot start for want
//! of slots reserves the free slots it could use; they are unavailable to any other job,
//! and the job gathers more as they free up until it can start. A reservation lasts at
//! most n scheduling cycles (`MBD_SLEEP_TIME` each) from the job's first reserved slot:
//! then the job gives its slots up and reserves nothing in that pass, so that other jobs
//! can use them; in the next pass it may reserve again.
//!
//! Reservations are kept between passes ([`crate::Sched`]); a pass counts them as used
//! slots, gives a job its own back when it visits it, and takes them again (with the
//! slots freed since) when the job still cannot start.

use super::fit::{Cand, PassState};
use crate::Millis;

/// The slots a pending job reserves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotResv {
    /// Host indices, one per slot.
    pub slots: Vec<usize>,
    /// When it first reserved (the reservation period runs from then).
    pub since: Millis,
    /// When it must give its slots up.
    pub expires: Millis,
}

/// The slots a job of `need` slots (its minimum) reserves among its candidate hosts
/// (best first, free slots counted with its own reservation given back), within its
/// span[]: at most `need`; with `span[hosts=1]` on one host only (the one with the most
/// free slots, the first in order among equals), with `span[ptile=p]` at most p on a
/// host. Empty: nothing free.
pub(crate) fn choose<'a>(
    cands: impl Iterator<Item = &'a Cand> + Clone,
    need: u32,
    span: Option<Option<u32>>,
) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    match span {
        Some(None) => {
            let mut best: Option<&Cand> = None;
            for c in cands {
                if c.0 > 0 && best.is_none_or(|b| c.0 > b.0) {
                    best = Some(c);
                }
            }
            if let Some(c) = best {
                out.extend(std::iter::repeat_n(c.3, c.0.min(need) as usize));
            }
        }
        Some(Some(ptile)) => {
            for c in cands {
                let left = need - out.len() as u32;
                if left == 0 {
                    break;
                }
                out.extend(std::iter::repeat_n(c.3, c.0.min(ptile).min(left) as usize));
            }
        }
        None => {
            for c in cands {
                let left = need - out.len() as u32;
                if left == 0 {
                    break;
                }
                out.extend(std::iter::repeat_n(c.3, c.0.min(left) as usize));
            }
        }
    }
    out
}

/// Count the slots of `r` as used in this pass.
pub(crate) fn hold(st: &mut PassState, r: &SlotResv) {
    for &i in &r.slots {
        if let Some(u) = st.used.get_mut(i) {
            *u += 1;
        }
    }
}

/// Give the slots of `r` back (free again in this pass).
pub(crate) fn give_back(st: &mut PassState, r: &SlotResv) {
    for &i in &r.slots {
        if let Some(u) = st.used.get_mut(i) {
            *u = u.saturating_sub(1);
        }
    }
}

/// How long a reservation of a queue with `MAX_RESERVE_TIME[cycles]` lasts.
pub(crate) fn period(cycles: u32, mbd_sleep_time_secs: u32) -> Millis {
    i64::from(cycles) * i64::from(mbd_sleep_time_secs.max(1)) * 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(free: u32, host: usize) -> Cand {
        (
            free,
            0,
            host,
            host,
            [0; super::super::select::ORDER_KEYS],
            0,
            0,
        )
    }

    #[test]
    fn a_reservation_takes_free_slots_up_to_the_minimum_within_span() {
        let cands = [cand(1, 0), cand(2, 1), cand(2, 2)];
        assert_eq!(choose(cands.iter(), 4, None), vec![0, 1, 1, 2]);
        assert_eq!(choose(cands.iter(), 2, None), vec![0, 1]);
        assert_eq!(choose(cands.iter(), 8, None), vec![0, 1, 1, 2, 2]);
        // span[hosts=1]: one host, the one with the most free slots.
        assert_eq!(choose(cands.iter(), 4, Some(None)), vec![1, 1]);
        // span[ptile=1]: one a host.
        assert_eq!(choose(cands.iter(), 4, Some(Some(1))), vec![0, 1, 2]);
        let none = [cand(0, 0), cand(0, 1)];
        assert!(choose(none.iter(), 2, None).is_empty());
        assert!(choose(none.iter(), 2, Some(None)).is_empty());
    }

    #[test]
    fn the_reservation_period_is_cycles_of_mbd_sleep_time() {
        assert_eq!(period(5, 10), 50_000);
        assert_eq!(period(1, 0), 1000);
    }
}
