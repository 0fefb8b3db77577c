//! bevents's arguments: the subcommand ([`Cmd`]), its options and `-t` time windows.

use super::*;

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cmd {
    Verify,
    Json,
    Replay,
}

/// Parsed arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub cmd: Cmd,
    pub logdir: Option<PathBuf>,
    pub files: Vec<PathBuf>,
    pub json: bool,
    pub long: bool,
    pub types: BTreeSet<String>,
    pub jobs: BTreeSet<u64>,
    pub until: Option<String>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Run(Args),
    Help,
    Version,
}

/// Parse `args` (without the program name).
pub fn parse_args(args: &[String]) -> Result<Parsed, String> {
    let mut it = args.iter();
    let mut cmd = None;
    let mut a = Args {
        cmd: Cmd::Verify,
        logdir: None,
        files: Vec::new(),
        json: false,
        long: false,
        types: BTreeSet::new(),
        jobs: BTreeSet::new(),
        until: None,
    };
    while let Some(arg) = it.next() {
        let mut value = |name: &str| -> Result<String, String> {
            it.next()
                .cloned()
                .ok_or_else(|| format!("option requires an argument -- {name}"))
        };
        // `--opt=value` is accepted too.
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value_of = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => value(name),
            }
        };
        match name {
            "-h" | "--help" => return Ok(Parsed::Help),
            "-V" | "--version" => return Ok(Parsed::Version),
            "-d" | "--logdir" => a.logdir = Some(PathBuf::from(value_of("d")?)),
            "-l" | "--long" => a.long = true,
            "--json" | "-json" => a.json = true,
            "--type" | "-t" => {
                for t in value_of("type")?.split(',').filter(|t| !t.is_empty()) {
                    a.types.insert(t.trim().to_ascii_uppercase());
                }
            }
            "--job" | "-j" => {
                for j in value_of("job")?.split(',').filter(|j| !j.is_empty()) {
                    let id = j
                        .trim()
                        .split('[')
                        .next()
                        .and_then(|v| v.parse::<u64>().ok())
                        .ok_or_else(|| format!("{j}: Illegal job ID."))?;
                    a.jobs.insert(id);
                }
            }
            "--until" | "-u" => a.until = Some(value_of("until")?),
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(format!("illegal option -- {}", s.trim_start_matches('-')));
            }
            _ if cmd.is_none() => {
                cmd = Some(match arg.as_str() {
                    "verify" => Cmd::Verify,
                    "json" | "dump" => Cmd::Json,
                    "replay" => Cmd::Replay,
                    other => return Err(format!("unknown subcommand {other:?}")),
                })
            }
            _ => a.files.push(PathBuf::from(arg)),
        }
    }
    a.cmd = cmd.ok_or_else(|| "a subcommand is needed (verify, json or replay)".to_owned())?;
    if a.logdir.is_some() && !a.files.is_empty() {
        return Err("give log files or -d LOGDIR, not both".into());
    }
    match a.cmd {
        Cmd::Replay if !a.files.is_empty() => {
            return Err("replay reads a log directory (-d LOGDIR), not single files".into());
        }
        Cmd::Verify | Cmd::Json if a.until.is_some() => {
            return Err("--until is an option of replay".into());
        }
        Cmd::Verify | Cmd::Replay if !a.types.is_empty() || !a.jobs.is_empty() => {
            return Err("--type and --job are options of json".into());
        }
        _ => {}
    }
    Ok(Parsed::Run(a))
}

/// `[[yyyy/]mm/dd/]HH:MM` or seconds since the epoch, as of `now`: a time without a
/// date is today's (yesterday's when that is still to come), a date without a year this
/// year's (last year's when still to come). `to_epoch` converts a local wall-clock time
/// (year, month 0-11, day, hour, minute).
pub fn parse_time(
    v: &str,
    now: i64,
    today: (i32, u32, u32),
    to_epoch: impl Fn(i32, i32, i32, i32, i32) -> Option<i64>,
) -> Result<i64, String> {
    let v = v.trim();
    let bad =
        || format!("{v:?} is not a time: use seconds since the epoch or [[yyyy/]mm/dd/]HH:MM");
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse().map_err(|_| bad());
    }
    let parts: Vec<&str> = v.split('/').collect();
    let (hm, date) = parts.split_last().ok_or_else(bad)?;
    let (h, m) = hm.split_once(':').ok_or_else(bad)?;
    let num = |s: &str| -> Result<i32, String> { s.trim().parse::<i32>().map_err(|_| bad()) };
    let (hour, min) = (num(h)?, num(m)?);
    if !(0..=23).contains(&hour) || !(0..=59).contains(&min) {
        return Err(bad());
    }
    let (ty, tm, td) = today;
    let (year, mon, day, implied) = match date {
        [] => (ty, tm as i32 + 1, td as i32, Implied::Day),
        [mo, d] => (ty, num(mo)?, num(d)?, Implied::Year),
        [y, mo, d] => (num(y)?, num(mo)?, num(d)?, Implied::Nothing),
        _ => return Err(bad()),
    };
    if !(1..=12).contains(&mon) || !(1..=31).contains(&day) {
        return Err(bad());
    }
    let t = to_epoch(year, mon - 1, day, hour, min).ok_or_else(bad)?;
    if t <= now {
        return Ok(t);
    }
    match implied {
        Implied::Day => to_epoch(year, mon - 1, day - 1, hour, min).ok_or_else(bad),
        Implied::Year => to_epoch(year - 1, mon - 1, day, hour, min).ok_or_else(bad),
        Implied::Nothing => Ok(t),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Implied {
    Day,
    Year,
    Nothing,
}
