//! Parsing option values: slot ranges (`-n`), minutes (`-W`), sizes with units
//! (`-M -S -F ...`) and dates (`-b`, `-t`).

/// What the parser needs from the environment: `LSF_UNIT_FOR_LIMITS`, a way to turn
/// `-b`/`-t` times into seconds, and lsb.params' `MAX_USER_PRIORITY` (`-sp`'s maximum:
/// [`max_user_priority`]).
#[derive(Debug, Clone, Copy)]
pub struct ValueCtx<'a> {
    pub unit: &'a str,
    pub resolve_time: fn(&[u32]) -> Option<i64>,
    pub max_user_priority: u32,
}

/// `MAX_USER_PRIORITY` from lsb.params (a positive integer), else LSF's default
/// ([`basalt_core::bounds::DEFAULT_MAX_USER_PRIORITY`]).
pub fn max_user_priority(config: &basalt_config::Config) -> u32 {
    config
        .batch
        .params
        .other
        .get("MAX_USER_PRIORITY")
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(basalt_core::bounds::DEFAULT_MAX_USER_PRIORITY)
}

/// `-sp priority`: 1 to `max` (LSF's messages). Basalt does not order jobs by it.
pub fn check_user_priority(v: &str, max: u32) -> Result<(), String> {
    let p = v
        .trim()
        .parse::<i32>()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("{v}: Illegal job priority"))?;
    if p.unsigned_abs() > max {
        return Err("Bad user priority".into());
    }
    Ok(())
}

/// A run or CPU time limit's seconds (`parse_minutes`) must fit LSF's int
/// ([`basalt_core::bounds::MAX_TIME_LIMIT`]): `v: <name> value is too big` otherwise.
pub fn check_time_limit(v: &str, secs: i64, name: &str) -> Result<i64, String> {
    if secs > basalt_core::bounds::MAX_TIME_LIMIT {
        return Err(format!("{v}: {name} value is too big"));
    }
    Ok(secs)
}

/// A `-m` entry: a host or group name, with an optional `+N` preference level (`host+`
/// alone is level 1); a `+` with no name before it, or a level that is not a number, is
/// not one.
pub fn asked_host_ok(h: &str) -> bool {
    match h.rsplit_once('+') {
        None => true,
        Some((n, level)) => !n.is_empty() && level.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// `LSF_UNIT_FOR_LIMITS` of lsf.conf (KB when unset): the unit of a bare `-M`, `-v`, ...
pub fn limits_unit(config: &basalt_config::Config) -> String {
    config
        .lsf_conf
        .get("LSF_UNIT_FOR_LIMITS")
        .unwrap_or("KB")
        .to_owned()
}

pub(super) fn bad(opt: &str, value: &str) -> String {
    format!("{value}: Bad argument for option -{opt}")
}

/// `-n N` or `-n min,max`.
pub fn parse_procs(v: &str) -> Option<(u32, u32)> {
    let (a, b) = match v.split_once(',') {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (v.trim(), v.trim()),
    };
    let a: u32 = a.parse().ok()?;
    let b: u32 = b.parse().ok()?;
    (a >= 1 && b >= a).then_some((a, b))
}

/// `[hour:]minute[/host_spec]` (-W, -c, -We) -> seconds. Hours may exceed 24.
pub fn parse_minutes(v: &str) -> Option<i64> {
    let v = v.split('/').next().unwrap_or(v).trim();
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<i64>().ok())
            .flatten()
    };
    let minutes = match v.split_once(':') {
        Some((h, m)) => num(h)?.checked_mul(60)?.checked_add(num(m)?)?,
        None => num(v)?,
    };
    let secs = minutes.checked_mul(60)?;
    (secs > 0).then_some(secs)
}

/// KB per unit letter (K M G T P E).
pub(super) fn unit_kb(letter: char) -> Option<f64> {
    Some(match letter.to_ascii_uppercase() {
        'K' => 1.0,
        'M' => 1024.0,
        'G' => 1024.0 * 1024.0,
        'T' => 1024.0 * 1024.0 * 1024.0,
        'P' => 1024.0f64.powi(4),
        'E' => 1024.0f64.powi(5),
        _ => return None,
    })
}

/// The KB factor of `LSF_UNIT_FOR_LIMITS` (default KB).
pub fn limits_unit_kb(unit: &str) -> f64 {
    unit.trim().chars().next().and_then(unit_kb).unwrap_or(1.0)
}

/// A size limit (-M -v -F -D -S -C): a number, possibly fractional, in
/// `LSF_UNIT_FOR_LIMITS` units, or with a `KB MB GB TB PB EB` / `K M G T P E` suffix.
/// Returns KB (rounded up). `allow_zero` for limits where 0 means something (-C).
pub fn parse_size(v: &str, unit: &str, allow_zero: bool) -> Option<i64> {
    let v = v.trim();
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let factor = match suffix.to_ascii_uppercase().as_str() {
        "" => limits_unit_kb(unit),
        s if s.len() == 1 || (s.len() == 2 && s.ends_with('B')) => {
            unit_kb(s.chars().next().unwrap_or(' '))?
        }
        _ => return None,
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    let kb = (n * factor).ceil();
    if !kb.is_finite() || kb > i64::MAX as f64 / 2.0 {
        return None;
    }
    let kb = kb as i64;
    (kb > 0 || (allow_zero && kb == 0)).then_some(kb)
}

/// `-b`/`-t` value `[[[year:]month:]day:]hour:minute` -> its numeric fields.
pub fn parse_time_fields(v: &str) -> Option<Vec<u32>> {
    let fields: Option<Vec<u32>> = v.trim().split(':').map(|f| f.parse().ok()).collect();
    let fields = fields?;
    if !(2..=5).contains(&fields.len()) {
        return None;
    }
    let n = fields.len();
    let (hour, min) = (fields[n - 2], fields[n - 1]);
    if hour > 23 || min > 59 {
        return None;
    }
    if n >= 3 && !(1..=31).contains(&fields[n - 3]) {
        return None;
    }
    if n >= 4 && !(1..=12).contains(&fields[n - 4]) {
        return None;
    }
    Some(fields)
}

/// Resolve `-b`/`-t` fields in local time: the next such moment from now (a bare
/// `hh:mm` already past today means tomorrow, and so on up the fields).
pub fn resolve_local_time(fields: &[u32]) -> Option<i64> {
    use super::super::timefmt::{local, local_to_epoch, now};
    let now_t = now();
    let t = local(now_t);
    let n = fields.len();
    let get = |from_end: usize| fields.get(n.wrapping_sub(from_end)).map(|v| *v as i32);
    let min = get(1)?;
    let hour = get(2)?;
    let mut mday = get(3).unwrap_or(t.mday as i32);
    let mut mon = get(4).map(|m| m - 1).unwrap_or(t.mon as i32);
    let year = match get(5) {
        Some(y) if y < 100 => 2000 + y,
        Some(y) => y,
        None => t.year,
    };
    let at = local_to_epoch(year, mon, mday, hour, min)?;
    if at >= now_t || n == 5 {
        return Some(at);
    }
    match n {
        2 => mday += 1,
        3 => mon += 1,
        _ => return local_to_epoch(year + 1, mon, mday, hour, min),
    }
    local_to_epoch(year, mon, mday, hour, min)
}
