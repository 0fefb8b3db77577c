//! The resource limits of a queue (lsb.queues) or an application profile
//! (lsb.applications): `CPULIMIT RUNLIMIT MEMLIMIT SWAPLIMIT PROCESSLIMIT FILELIMIT
//! DATALIMIT STACKLIMIT CORELIMIT`, each `[default_limit] maximum_limit`.
//!
//! Values: CPULIMIT and RUNLIMIT `[hour:]minute[/host_name | /host_model]` (the host
//! spec is accepted; the limit is not normalised by CPU factor), the sizes a number in
//! `LSF_UNIT_FOR_LIMITS` (KB by default; a `K M G T P E` suffix names another unit),
//! PROCESSLIMIT a count. [`check`] is what the file's reader holds a value to (one that
//! does not parse is an error naming its line); [`parse`] gives the values in a job's
//! units (seconds, KB, a count), what mbatchd applies.

use std::collections::BTreeMap;

use basalt_core::rlimit as idx;

/// One limit: `[default] maximum`, in the job's units (seconds, KB or a count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimit {
    pub default: Option<i64>,
    pub max: i64,
}

/// A queue's (or profile's) limits by LSF_RLIMIT position.
pub type QueueLimits = [Option<QueueLimit>; 11];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Minutes,
    Size,
    Count,
}

/// The keywords, their positions and kinds.
const KEYS: &[(&str, usize, Kind)] = &[
    ("CPULIMIT", idx::CPU, Kind::Minutes),
    ("RUNLIMIT", idx::RUN, Kind::Minutes),
    ("MEMLIMIT", idx::RSS, Kind::Size),
    ("SWAPLIMIT", idx::SWAP, Kind::Size),
    ("FILELIMIT", idx::FSIZE, Kind::Size),
    ("DATALIMIT", idx::DATA, Kind::Size),
    ("STACKLIMIT", idx::STACK, Kind::Size),
    ("CORELIMIT", idx::CORE, Kind::Size),
    ("PROCESSLIMIT", idx::PROCESS, Kind::Count),
];

/// Is `key` (upper case) one of the limits read here?
pub fn is_limit_key(key: &str) -> bool {
    KEYS.iter().any(|(k, _, _)| *k == key)
}

/// KB in one `unit` (`KB`, `MB`, ... or the letter alone).
pub fn unit_kb(unit: &str) -> Option<f64> {
    let u = unit.trim().to_ascii_uppercase();
    let u = u.strip_suffix('B').unwrap_or(&u);
    Some(match u {
        "K" | "" => 1.0,
        "M" => 1024.0,
        "G" => 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0,
        "P" => 1024.0_f64.powi(4),
        "E" => 1024.0_f64.powi(5),
        _ => return None,
    })
}

/// One word of a limit in the job's units; None when it does not parse.
fn value(v: &str, kind: Kind, unit: f64) -> Option<i64> {
    let v = v.trim();
    match kind {
        Kind::Minutes => {
            // A `/host_spec` names what the time is measured on: a word, not nothing.
            let time = match v.split_once('/') {
                Some((t, spec)) if !spec.trim().is_empty() => t.trim(),
                Some(_) => return None,
                None => v,
            };
            let minutes = match time.split_once(':') {
                Some((h, m)) => {
                    h.trim().parse::<i64>().ok()? * 60 + m.trim().parse::<i64>().ok()?
                }
                None => time.parse::<f64>().ok().filter(|x| x.is_finite())? as i64,
            };
            (minutes > 0).then_some(minutes.saturating_mul(60))
        }
        Kind::Size => {
            let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
            let (num, suffix) = v.split_at(split);
            let per = if suffix.is_empty() {
                unit
            } else {
                unit_kb(suffix)?
            };
            let n: f64 = num.trim().parse().ok().filter(|x: &f64| x.is_finite())?;
            (n >= 0.0).then(|| (n * per).min(i64::MAX as f64) as i64)
        }
        Kind::Count => v.parse::<i64>().ok().filter(|n| *n > 0),
    }
}

/// What one word of `kind` must look like (for the error message).
fn form(kind: Kind) -> &'static str {
    match kind {
        Kind::Minutes => "a time limit ([hour:]minute[/host_name | /host_model], more than 0)",
        Kind::Size => "a size (a number, optionally with a unit K M G T P E)",
        Kind::Count => "a count (a whole number more than 0)",
    }
}

/// `key = text` read in `unit` KB: None when `key` is not one of these limits, else the
/// limit or why it does not parse (LSF's syntax: `[default_limit] maximum_limit`).
fn read(key: &str, text: &str, unit: f64) -> Option<Result<QueueLimit, String>> {
    let (_, _, kind) = KEYS.iter().find(|(k, _, _)| *k == key)?;
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() || words.len() > 2 {
        return Some(Err(format!(
            "{key}: expected [default_limit] maximum_limit, found `{}`",
            text.trim()
        )));
    }
    let mut vals = Vec::with_capacity(2);
    for w in &words {
        match value(w, *kind, unit) {
            Some(v) => vals.push(v),
            None => {
                return Some(Err(format!("{key}: `{w}` is not {}", form(*kind))));
            }
        }
    }
    Some(match vals[..] {
        [max] => Ok(QueueLimit { default: None, max }),
        [default, max] if default <= max => Ok(QueueLimit {
            default: Some(default),
            max,
        }),
        _ => Err(format!(
            "{key}: the default limit `{}` is more than the maximum `{}`",
            words[0], words[1]
        )),
    })
}

/// Does `key = text` parse (`Ok` too when `key` is no limit of these)? The reason when
/// it does not, starting with the keyword.
pub fn check(key: &str, text: &str) -> Result<(), String> {
    match read(key, text, 1.0) {
        Some(Err(e)) => Err(e),
        _ => Ok(()),
    }
}

/// Read a queue's (or profile's) limit keywords (`settings`, upper-case keys as the file
/// gives them); `unit` is `LSF_UNIT_FOR_LIMITS`. Returns the limits and the keywords whose
/// value does not parse (a loaded configuration has none: [`check`] made them errors).
pub fn parse(settings: &BTreeMap<String, String>, unit: &str) -> (QueueLimits, Vec<String>) {
    let unit = unit_kb(unit).unwrap_or(1.0);
    let mut out: QueueLimits = [None; 11];
    let mut bad = Vec::new();
    for (key, i, _) in KEYS {
        let Some(text) = settings.get(*key) else {
            continue;
        };
        match read(key, text, unit) {
            Some(Ok(l)) => out[*i] = Some(l),
            _ => bad.push((*key).to_owned()),
        }
    }
    (out, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsfs_forms_check_and_others_name_the_word() {
        for ok in [
            ("RUNLIMIT", "10"),
            ("RUNLIMIT", "10 1:30"),
            ("CPULIMIT", "5/hostA"),
            ("CPULIMIT", "1:00/IntelI5 2:00/IntelI5"),
            ("MEMLIMIT", "100 2G"),
            ("CORELIMIT", "0"),
            ("PROCESSLIMIT", "4 8"),
            ("PROCLIMIT", "anything: not one of these"),
        ] {
            assert_eq!(check(ok.0, ok.1), Ok(()), "{ok:?}");
        }
        for (key, bad, says) in [
            ("RUNLIMIT", "10 abc", "`abc` is not a time limit"),
            ("RUNLIMIT", "0", "`0` is not a time limit"),
            ("RUNLIMIT", "10/", "`10/` is not a time limit"),
            ("CPULIMIT", "1:x", "`1:x` is not a time limit"),
            (
                "RUNLIMIT",
                "1 2 3",
                "expected [default_limit] maximum_limit",
            ),
            (
                "RUNLIMIT",
                "60 10",
                "the default limit `60` is more than the maximum `10`",
            ),
            ("MEMLIMIT", "10 lots", "`lots` is not a size"),
            ("MEMLIMIT", "-1", "`-1` is not a size"),
            ("PROCESSLIMIT", "4.5", "`4.5` is not a count"),
        ] {
            let e = check(key, bad).expect_err(bad);
            assert!(
                e.starts_with(&format!("{key}: ")) && e.contains(says),
                "{bad}: {e}"
            );
        }
    }
}
