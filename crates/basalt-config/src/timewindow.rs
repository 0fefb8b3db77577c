//! LSF time windows (`RUN_WINDOW`, `DISPATCH_WINDOW`, LIM `RUNWINDOW`,
//! time-windowed limits): parsing, evaluation and the next change of state.
//!
//! A window is `time1-time2`, each time `[day:]hour[:minute]` (one field =
//! hour, two = hour:minute, three = day:hour:minute; days 0 = Sunday … 6).
//! Without days a window applies every day and wraps past midnight when
//! time1 > time2; with days (both sides must have one) it wraps into the next
//! week when time1 is later in the week. A specification is a blank-separated
//! list of windows and is open when any of them is. The start is inclusive,
//! the end exclusive. Time is given as minutes: `minute_of_week` counts from
//! Sunday 00:00 (0 … 10079).

use std::fmt;
use std::str::FromStr;

/// Minutes in a day.
pub const MINUTES_PER_DAY: u32 = 24 * 60;
/// Minutes in a week.
pub const MINUTES_PER_WEEK: u32 = 7 * MINUTES_PER_DAY;

/// Why a time window specification is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeWindowError {
    #[error("empty time window")]
    Empty,
    #[error("bad time window `{0}`: expected time1-time2")]
    Syntax(String),
    #[error("bad time `{0}` in time window: expected [day:]hour[:minute]")]
    BadTime(String),
    #[error("time `{0}` out of range (day 0-6, hour 0-23, minute 0-59)")]
    OutOfRange(String),
    #[error("bad time window `{0}`: if one side has a day, both must")]
    DayMismatch(String),
}

/// One end of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Point {
    day: Option<u8>,
    /// Minute of the day.
    minute: u32,
}

impl Point {
    fn parse(s: &str) -> Result<Point, TimeWindowError> {
        let fields: Vec<&str> = s.split(':').collect();
        if fields.len() > 3 || fields.iter().any(|f| f.is_empty()) {
            return Err(TimeWindowError::BadTime(s.to_owned()));
        }
        let mut nums = Vec::with_capacity(3);
        for f in &fields {
            if !f.bytes().all(|b| b.is_ascii_digit()) {
                return Err(TimeWindowError::BadTime(s.to_owned()));
            }
            let n: u32 = f
                .parse()
                .map_err(|_| TimeWindowError::OutOfRange(s.to_owned()))?;
            nums.push(n);
        }
        let (day, hour, minute) = match nums.as_slice() {
            [h] => (None, *h, 0),
            [h, m] => (None, *h, *m),
            [d, h, m] => (Some(*d), *h, *m),
            _ => return Err(TimeWindowError::BadTime(s.to_owned())),
        };
        if hour > 23 || minute > 59 || day.is_some_and(|d| d > 6) {
            return Err(TimeWindowError::OutOfRange(s.to_owned()));
        }
        Ok(Point {
            day: day.map(|d| d as u8),
            minute: hour * 60 + minute,
        })
    }

    fn week_minute(self) -> u32 {
        u32::from(self.day.unwrap_or(0)) * MINUTES_PER_DAY + self.minute
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(d) = self.day {
            write!(f, "{d}:")?;
        }
        write!(f, "{}:{:02}", self.minute / 60, self.minute % 60)
    }
}

/// One `time1-time2` window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    start: Point,
    end: Point,
}

/// True when `t` is in `[s, e)` on a circle; `s == e` covers the whole circle.
fn in_range(t: u32, s: u32, e: u32) -> bool {
    match s.cmp(&e) {
        std::cmp::Ordering::Less => s <= t && t < e,
        std::cmp::Ordering::Greater => t >= s || t < e,
        std::cmp::Ordering::Equal => true,
    }
}

impl Window {
    fn weekly(&self) -> bool {
        self.start.day.is_some()
    }

    fn is_open(&self, minute_of_week: u32) -> bool {
        if self.weekly() {
            in_range(
                minute_of_week,
                self.start.week_minute(),
                self.end.week_minute(),
            )
        } else {
            in_range(
                minute_of_week % MINUTES_PER_DAY,
                self.start.minute,
                self.end.minute,
            )
        }
    }

    /// Minutes of the week at which this window opens or closes.
    fn boundaries(&self, out: &mut Vec<u32>) {
        if self.weekly() {
            out.push(self.start.week_minute());
            out.push(self.end.week_minute());
        } else {
            for day in 0..7 {
                out.push(day * MINUTES_PER_DAY + self.start.minute);
                out.push(day * MINUTES_PER_DAY + self.end.minute);
            }
        }
    }
}

/// A time window specification: open when any of its windows is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeWindow {
    windows: Vec<Window>,
}

impl TimeWindow {
    /// Parse a specification such as `5:19:00-1:8:30 20:00-8:30`. Surrounding
    /// parentheses or double quotes are accepted; the empty specification is
    /// an error (use `Option<TimeWindow>` for "always open").
    pub fn parse(s: &str) -> Result<TimeWindow, TimeWindowError> {
        let mut spec = s.trim();
        if let Some(inner) = spec.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            spec = inner.trim();
        } else if let Some(inner) = spec.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            spec = inner.trim();
        }
        let mut windows = Vec::new();
        for w in spec.split_whitespace() {
            let Some((a, b)) = w.split_once('-') else {
                return Err(TimeWindowError::Syntax(w.to_owned()));
            };
            if b.contains('-') {
                return Err(TimeWindowError::Syntax(w.to_owned()));
            }
            let start = Point::parse(a)?;
            let end = Point::parse(b)?;
            if start.day.is_some() != end.day.is_some() {
                return Err(TimeWindowError::DayMismatch(w.to_owned()));
            }
            windows.push(Window { start, end });
        }
        if windows.is_empty() {
            return Err(TimeWindowError::Empty);
        }
        Ok(TimeWindow { windows })
    }

    /// Open on `day` (0 = Sunday) at `minute_of_day` (0 … 1439)?
    pub fn is_open(&self, day: u8, minute_of_day: u32) -> bool {
        self.is_open_at_week_minute(u32::from(day) * MINUTES_PER_DAY + minute_of_day)
    }

    /// Open at `minute_of_week` (0 = Sunday 00:00; taken modulo a week)?
    pub fn is_open_at_week_minute(&self, minute_of_week: u32) -> bool {
        let t = minute_of_week % MINUTES_PER_WEEK;
        self.windows.iter().any(|w| w.is_open(t))
    }

    /// Minutes from `minute_of_week` until the open/closed state next
    /// changes; `None` when it never does.
    pub fn next_change(&self, minute_of_week: u32) -> Option<u32> {
        let now = minute_of_week % MINUTES_PER_WEEK;
        let state = self.is_open_at_week_minute(now);
        let mut points = Vec::new();
        for w in &self.windows {
            w.boundaries(&mut points);
        }
        let mut deltas: Vec<u32> = points
            .into_iter()
            .map(|p| (p % MINUTES_PER_WEEK + MINUTES_PER_WEEK - now) % MINUTES_PER_WEEK)
            .filter(|d| *d != 0)
            .collect();
        deltas.sort_unstable();
        deltas.dedup();
        deltas
            .into_iter()
            .find(|d| self.is_open_at_week_minute(now + d) != state)
    }
}

impl FromStr for TimeWindow {
    type Err = TimeWindowError;

    fn from_str(s: &str) -> Result<TimeWindow, TimeWindowError> {
        TimeWindow::parse(s)
    }
}

impl fmt::Display for TimeWindow {
    /// The normalized specification: `H:MM-H:MM` or `D:H:MM-D:H:MM`, blank-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, w) in self.windows.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}-{}", w.start, w.end)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUN: u8 = 0;
    const MON: u8 = 1;
    const TUE: u8 = 2;
    const WED: u8 = 3;
    const FRI: u8 = 5;
    const SAT: u8 = 6;

    fn hm(h: u32, m: u32) -> u32 {
        h * 60 + m
    }

    #[test]
    fn example_from_the_reference() {
        let w = TimeWindow::parse("5:19:00-1:8:30 20:00-8:30").unwrap();
        assert!(w.is_open(FRI, hm(19, 30)));
        assert!(w.is_open(FRI, hm(19, 0)));
        assert!(w.is_open(SAT, hm(12, 0)));
        assert!(w.is_open(SUN, hm(12, 0)));
        assert!(w.is_open(MON, hm(8, 0)));
        assert!(w.is_open(TUE, hm(21, 0)));
        assert!(w.is_open(TUE, hm(3, 0)));
        assert!(!w.is_open(MON, hm(8, 30)));
        assert!(!w.is_open(MON, hm(9, 0)));
        assert!(!w.is_open(WED, hm(12, 0)));
        assert!(!w.is_open(FRI, hm(18, 59)));
        assert_eq!(w.to_string(), "5:19:00-1:8:30 20:00-8:30");
        // Friday 18:59 -> opens a minute later; Wednesday noon -> 20:00.
        let week = |d: u8, m: u32| u32::from(d) * MINUTES_PER_DAY + m;
        assert_eq!(w.next_change(week(FRI, hm(18, 59))), Some(1));
        assert_eq!(w.next_change(week(WED, hm(12, 0))), Some(8 * 60));
        // Friday 19:30 -> closes Monday 08:30.
        assert_eq!(
            w.next_change(week(FRI, hm(19, 30))),
            Some(week(MON, hm(8, 30)) + MINUTES_PER_WEEK - week(FRI, hm(19, 30)))
        );
        assert_eq!(w, "5:19:00-1:8:30 20:00-8:30".parse().unwrap());
    }

    #[test]
    fn single_hour_form() {
        let w = TimeWindow::parse("8-17").unwrap();
        assert!(!w.is_open(WED, hm(7, 59)));
        assert!(w.is_open(WED, hm(8, 0)));
        assert!(w.is_open(SUN, hm(16, 59)));
        assert!(!w.is_open(SUN, hm(17, 0)));
        assert_eq!(w.to_string(), "8:00-17:00");
        assert_eq!(w.next_change(hm(8, 0)), Some(9 * 60));
    }

    #[test]
    fn midnight_wrap() {
        let w = TimeWindow::parse("22-6").unwrap();
        assert!(w.is_open(MON, hm(22, 0)));
        assert!(w.is_open(MON, hm(23, 59)));
        assert!(w.is_open(TUE, hm(0, 0)));
        assert!(w.is_open(TUE, hm(5, 59)));
        assert!(!w.is_open(TUE, hm(6, 0)));
        assert!(!w.is_open(TUE, hm(21, 59)));
        // Saturday night wraps into Sunday morning.
        assert!(w.is_open(SAT, hm(23, 0)));
        assert!(w.is_open(SUN, hm(1, 0)));
    }

    #[test]
    fn boundaries_start_inclusive_end_exclusive() {
        let w = TimeWindow::parse("(9:30-10:15)").unwrap();
        assert!(!w.is_open(TUE, hm(9, 29)));
        assert!(w.is_open(TUE, hm(9, 30)));
        assert!(w.is_open(TUE, hm(10, 14)));
        assert!(!w.is_open(TUE, hm(10, 15)));
        let weekly = TimeWindow::parse("1:9:00-1:10:00").unwrap();
        assert!(weekly.is_open(MON, hm(9, 0)));
        assert!(!weekly.is_open(MON, hm(10, 0)));
        assert!(!weekly.is_open(TUE, hm(9, 30)));
        assert!(weekly.is_open_at_week_minute(MINUTES_PER_WEEK + MINUTES_PER_DAY + hm(9, 5)));
    }

    #[test]
    fn never_changes() {
        let w = TimeWindow::parse("0:0:00-0:0:00").unwrap();
        assert!(w.is_open(WED, 0));
        assert_eq!(w.next_change(0), None);
    }

    #[test]
    fn errors() {
        assert!(matches!(
            TimeWindow::parse("25:00-1"),
            Err(TimeWindowError::OutOfRange(_))
        ));
        assert!(matches!(
            TimeWindow::parse("1:2:3:4-5"),
            Err(TimeWindowError::BadTime(_))
        ));
        assert!(matches!(
            TimeWindow::parse("5:19-1:8:30"),
            Err(TimeWindowError::DayMismatch(_))
        ));
        assert!(matches!(
            TimeWindow::parse("abc"),
            Err(TimeWindowError::Syntax(_))
        ));
        assert!(TimeWindow::parse("a-b").is_err());
        assert!(TimeWindow::parse("7:1:00-1:2:00").is_err());
        assert!(TimeWindow::parse("8:60-9").is_err());
        assert!(TimeWindow::parse("8-9-10").is_err());
        assert!(TimeWindow::parse("8:-9").is_err());
        assert_eq!(TimeWindow::parse(""), Err(TimeWindowError::Empty));
        assert_eq!(TimeWindow::parse("()"), Err(TimeWindowError::Empty));
    }
}
