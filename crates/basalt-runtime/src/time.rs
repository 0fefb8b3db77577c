//! Wall-clock time for the daemons and commands: one [`Clock`] ([`SystemClock`], or a
//! [`ManualClock`] that tests set and advance) instead of a `now()` helper per crate,
//! and the one wrapper of the C library's `localtime_r` and `mktime` ([`localtime`],
//! [`mktime_local`]), which read the time-zone database (`TZ`, `/etc/localtime`).
//!
//! The pure cores (`basalt-sched`, `basalt-lim-core`, `basalt-susp-core`) never read
//! the clock or the time-zone database: their callers take the time from here and
//! pass it in.

use std::fmt::Debug;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the wall-clock time comes from.
pub trait Clock: Send + Sync + Debug {
    /// Milliseconds since the Unix epoch (0 when the system clock is before it).
    fn now_ms(&self) -> i64;

    /// Whole seconds since the Unix epoch.
    fn now_secs(&self) -> i64 {
        self.now_ms().div_euclid(1000)
    }
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

/// A clock that only moves when told to: for tests.
#[derive(Debug, Default)]
pub struct ManualClock {
    ms: AtomicI64,
}

impl ManualClock {
    /// A clock standing at `ms` milliseconds since the epoch.
    pub fn new(ms: i64) -> ManualClock {
        ManualClock {
            ms: AtomicI64::new(ms),
        }
    }

    /// Set the time (milliseconds since the epoch).
    pub fn set_ms(&self, ms: i64) {
        self.ms.store(ms, Ordering::SeqCst);
    }

    /// Move the time on by `ms` milliseconds.
    pub fn advance_ms(&self, ms: i64) {
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }
}

/// Milliseconds since the epoch on the system clock.
pub fn now_ms() -> i64 {
    SystemClock.now_ms()
}

/// Seconds since the epoch on the system clock.
pub fn now_secs() -> i64 {
    SystemClock.now_secs()
}

/// Broken-down local time, the fields of C's `struct tm` as `localtime_r` gives them
/// (callers clamp what they print).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LocalTime {
    /// The year itself (`tm_year + 1900`).
    pub year: i32,
    /// Month, 0-11.
    pub mon: i32,
    /// Day of the month, 1-31.
    pub mday: i32,
    pub hour: i32,
    pub min: i32,
    pub sec: i32,
    /// Day of the week, 0 = Sunday.
    pub wday: i32,
    /// Seconds east of UTC (`tm_gmtoff`).
    pub gmtoff: i64,
}

/// `localtime_r(3)`: `secs` since the epoch in local time (`TZ`, /etc/localtime);
/// `None` when the C library cannot represent it.
#[allow(unsafe_code)]
pub fn localtime(secs: i64) -> Option<LocalTime> {
    let tt = secs as libc::time_t;
    // SAFETY: libc::tm is a plain C struct for which all-zero bytes are a valid value
    // (integers and a null tm_zone pointer).
    let mut out: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers refer to live, properly aligned locals for the duration of
    // the call; localtime_r writes only into `out` and is thread-safe.
    let p = unsafe { libc::localtime_r(&tt, &mut out) };
    if p.is_null() {
        return None;
    }
    Some(LocalTime {
        year: out.tm_year + 1900,
        mon: out.tm_mon,
        mday: out.tm_mday,
        hour: out.tm_hour,
        min: out.tm_min,
        sec: out.tm_sec,
        wday: out.tm_wday,
        gmtoff: out.tm_gmtoff,
    })
}

/// `mktime(3)`: seconds since the epoch of a local wall-clock time, daylight saving
/// decided by the C library; out-of-range fields are normalised (month 12 is January
/// of the next year). `None` when it cannot be represented.
#[allow(unsafe_code)]
pub fn mktime_local(year: i32, mon0: i32, mday: i32, hour: i32, min: i32) -> Option<i64> {
    // SAFETY: all-zero bytes are a valid libc::tm (see `localtime`).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = year - 1900;
    tm.tm_mon = mon0;
    tm.tm_mday = mday;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = 0;
    tm.tm_isdst = -1;
    // SAFETY: `tm` is a live, aligned local; mktime reads and normalises it in place.
    let t = unsafe { libc::mktime(&mut tm) };
    (t != -1).then_some(t as i64)
}

/// Local time of `secs` as a minute of the week (0 = Sunday 00:00), for run and
/// dispatch windows; UTC when the local time cannot be had.
pub fn local_week_minute(secs: i64) -> u32 {
    match localtime(secs) {
        Some(tm) => {
            tm.wday.clamp(0, 6) as u32 * 1440
                + tm.hour.clamp(0, 23) as u32 * 60
                + tm.min.clamp(0, 59) as u32
        }
        None => utc_week_minute(secs),
    }
}

/// The minute of the week (0 = Sunday 00:00) of `secs` since the epoch, in UTC.
pub fn utc_week_minute(secs: i64) -> u32 {
    // 1970-01-01 was a Thursday (day 4).
    let wday = (secs.div_euclid(86_400) + 4).rem_euclid(7) as u32;
    wday * 1440 + (secs.rem_euclid(86_400) / 60) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1_700_000_000_500);
        assert_eq!(c.now_ms(), 1_700_000_000_500);
        assert_eq!(c.now_secs(), 1_700_000_000);
        c.advance_ms(600);
        assert_eq!(c.now_secs(), 1_700_000_001);
        c.set_ms(-1);
        assert_eq!(c.now_secs(), -1);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(now_secs() > 1_577_836_800);
        assert!((now_ms() / 1000 - now_secs()).abs() <= 1);
    }

    #[test]
    fn week_minutes_and_round_trip() {
        let t = 1_700_000_000;
        let tm = localtime(t).expect("localtime");
        let m = local_week_minute(t);
        assert_eq!(
            m,
            tm.wday as u32 * 1440 + tm.hour as u32 * 60 + tm.min as u32
        );
        assert!(m < 7 * 1440);
        let back = mktime_local(tm.year, tm.mon, tm.mday, tm.hour, tm.min).expect("mktime");
        assert_eq!(back, t - i64::from(tm.sec));
    }
}
