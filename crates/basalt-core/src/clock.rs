//! Telling a stepped wall clock from time passing: [`JumpWatch`] compares how far the
//! wall clock moved with how far a monotonic clock moved. The daemons time their
//! leases, silences and run limits on the monotonic clock; where a pure core measures
//! a duration between two wall-clock times it was given (mbatchd's scheduler: the
//! silence of an sbatchd), the runtime tells it when the wall clock jumped so that the
//! jump is not taken for elapsed time.

/// A wall clock that moved this much more (or less) than the monotonic clock between
/// two readings was stepped (by an administrator, or NTP correcting a large offset).
/// NTP's slewing (at most 0.5 ms per second) and the rounding of readings stay far below.
pub const JUMP_MS: i64 = 1_000;

/// Successive readings of the wall clock (ms since the epoch) and of a monotonic clock
/// (ms since any fixed origin); see [`JumpWatch::observe`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JumpWatch {
    last: Option<(i64, i64)>,
}

impl JumpWatch {
    /// A watch with no reading yet.
    pub fn new() -> JumpWatch {
        JumpWatch::default()
    }

    /// Take a reading. Returns by how much the wall clock was stepped since the last
    /// reading (positive: forward), when that is more than [`JUMP_MS`] either way.
    pub fn observe(&mut self, wall_ms: i64, mono_ms: i64) -> Option<i64> {
        let jump = self
            .last
            .map(|(w, m)| wall_ms.saturating_sub(w) - mono_ms.saturating_sub(m))
            .filter(|j| j.abs() > JUMP_MS);
        self.last = Some((wall_ms, mono_ms));
        jump
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_passing_is_no_jump_and_a_step_either_way_is() {
        let mut w = JumpWatch::new();
        let t0 = 1_795_339_535_000;
        assert_eq!(w.observe(t0, 0), None);
        // Both clocks advance, a little apart: no jump.
        assert_eq!(w.observe(t0 + 500, 500), None);
        assert_eq!(w.observe(t0 + 10_900, 10_500), None);
        // An hour forward, then back.
        assert_eq!(w.observe(t0 + 3_611_400, 11_000), Some(3_600_000));
        assert_eq!(w.observe(t0 + 11_900, 11_500), Some(-3_600_000));
        assert_eq!(w.observe(t0 + 12_400, 12_000), None);
    }
}
