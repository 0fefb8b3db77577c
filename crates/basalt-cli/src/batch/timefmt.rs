//! Times as the batch commands print them (cli-output.md §1): table times
//! `%b %e %H:%M`, event times `%a %b %e %H:%M:%S` and full `ctime()`.
//!
//! Formatting works on a broken-down [`Tm`]; commands convert with [`local`]
//! (the C library's `localtime_r`, so `TZ` is honoured), tests with [`utc`].

/// A broken-down time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tm {
    pub year: i32,
    /// 0 = January.
    pub mon: u32,
    pub mday: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
    /// 0 = Sunday.
    pub wday: u32,
}

/// How a formatter turns seconds since the epoch into a [`Tm`].
pub type ToTm = fn(i64) -> Tm;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// UTC broken-down time (days-from-civil inverse, valid for the proleptic Gregorian calendar).
pub fn utc(t: i64) -> Tm {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    Tm {
        year: y as i32,
        mon: (m - 1) as u32,
        mday: d as u32,
        hour: (secs / 3600) as u32,
        min: ((secs % 3600) / 60) as u32,
        sec: (secs % 60) as u32,
        // 1970-01-01 was a Thursday.
        wday: (days + 4).rem_euclid(7) as u32,
    }
}

/// Local broken-down time through the C library (honours `TZ` and /etc/localtime).
pub fn local(t: i64) -> Tm {
    let Some(out) = basalt_runtime::time::localtime(t) else {
        return utc(t);
    };
    Tm {
        year: out.year,
        mon: out.mon.clamp(0, 11) as u32,
        mday: out.mday.max(1) as u32,
        hour: out.hour.max(0) as u32,
        min: out.min.max(0) as u32,
        sec: out.sec.max(0) as u32,
        wday: out.wday.clamp(0, 6) as u32,
    }
}

/// Seconds since the epoch of a local wall-clock time (`mktime`; out-of-range fields
/// are normalised, so month 12 is January of the next year).
pub fn local_to_epoch(year: i32, mon0: i32, mday: i32, hour: i32, min: i32) -> Option<i64> {
    basalt_runtime::time::mktime_local(year, mon0, mday, hour, min)
}

fn month(tm: &Tm) -> &'static str {
    MONTHS.get(tm.mon as usize).copied().unwrap_or("???")
}

fn weekday(tm: &Tm) -> &'static str {
    DAYS.get(tm.wday as usize).copied().unwrap_or("???")
}

/// `%b %e %H:%M`: `Nov 22 09:25`, `Nov  2 09:25`.
pub fn table(tm: &Tm) -> String {
    format!("{} {:>2} {:02}:{:02}", month(tm), tm.mday, tm.hour, tm.min)
}

/// `%a %b %e %H:%M:%S`: `Sun Nov 22 09:25:35`.
pub fn event(tm: &Tm) -> String {
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02}",
        weekday(tm),
        month(tm),
        tm.mday,
        tm.hour,
        tm.min,
        tm.sec
    )
}

/// `ctime()` without the newline: `Sun Nov 22 09:25:35 2026`.
pub fn ctime(tm: &Tm) -> String {
    format!("{} {}", event(tm), tm.year)
}

/// Seconds since the epoch now.
pub fn now() -> i64 {
    basalt_runtime::time::now_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_conversion() {
        // 2026-11-22 09:25:35 UTC is a Sunday.
        let t = 1_795_339_535;
        let tm = utc(t);
        assert_eq!(
            tm,
            Tm {
                year: 2026,
                mon: 10,
                mday: 22,
                hour: 9,
                min: 25,
                sec: 35,
                wday: 0
            }
        );
        assert_eq!(table(&tm), "Nov 22 09:25");
        assert_eq!(event(&tm), "Sun Nov 22 09:25:35");
        assert_eq!(ctime(&tm), "Sun Nov 22 09:25:35 2026");
        assert_eq!(table(&utc(t - 20 * 86_400)), "Nov  2 09:25");
        assert_eq!(utc(0).wday, 4);
        assert_eq!(utc(-1).year, 1969);
    }

    #[test]
    fn local_round_trip() {
        let t = 1_795_339_500; // a whole minute
        let tm = local(t);
        let back = local_to_epoch(
            tm.year,
            tm.mon as i32,
            tm.mday as i32,
            tm.hour as i32,
            tm.min as i32,
        );
        assert_eq!(back, Some(t));
    }
}
