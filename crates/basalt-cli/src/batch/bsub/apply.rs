//! Applying one parsed option, or a list of them, to [`BsubOpts`] (with the `-R` merge
//! and the value checks).

use super::*;

/// Apply one option to `o`.
pub fn apply(
    o: &mut BsubOpts,
    name: &str,
    value: Option<&str>,
    cx: &ValueCtx,
) -> Result<(), String> {
    let v = value.unwrap_or_default();
    let size = |allow_zero: bool| parse_size(v, cx.unit, allow_zero).ok_or_else(|| bad(name, v));
    match name {
        "H" => o.hold = true,
        "K" => o.wait = true,
        "I" => o.interactive = 1,
        "Ip" => o.interactive = 2,
        "Is" => o.interactive = 3,
        "f" => o.files.push(parse_transfer(v).ok_or_else(|| bad(name, v))?),
        "k" => o.chkpnt = Some(Chkpnt::parse(v).ok_or_else(|| bad(name, v))?),
        "x" => o.exclusive = true,
        "r" => o.rerunnable = true,
        "N" => o.notify_end = true,
        "B" => o.notify_begin = true,
        "J" => o.job_name = Some(v.to_owned()),
        "q" => o.queue = Some(v.to_owned()),
        "n" => o.procs = Some(parse_procs(v).ok_or_else(|| bad(name, v))?),
        "nnodes" => {
            let n: u32 = v
                .trim()
                .parse()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| bad(name, v))?;
            o.nnodes = Some(n);
        }
        "o" | "oo" => o.out = Some((v.to_owned(), name == "oo")),
        "e" | "eo" => o.err = Some((v.to_owned(), name == "eo")),
        "i" => o.in_file = Some(v.to_owned()),
        "W" => {
            let secs = parse_minutes(v).ok_or_else(|| bad(name, v))?;
            o.limits[rlimit::RUN] = Some(check_time_limit(v, secs, "RUNLIMIT")?);
        }
        "c" => {
            let secs = parse_minutes(v).ok_or_else(|| bad(name, v))?;
            o.limits[rlimit::CPU] = Some(check_time_limit(v, secs, "CPULIMIT")?);
        }
        "M" => o.limits[rlimit::RSS] = Some(size(false)?),
        "v" => o.limits[rlimit::SWAP] = Some(size(false)?),
        "F" => o.limits[rlimit::FSIZE] = Some(size(false)?),
        "D" => o.limits[rlimit::DATA] = Some(size(false)?),
        "S" => o.limits[rlimit::STACK] = Some(size(false)?),
        "C" => o.limits[rlimit::CORE] = Some(size(true)?),
        "p" => {
            let n: i64 = v
                .trim()
                .parse()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| bad(name, v))?;
            o.limits[rlimit::PROCESS] = Some(n);
        }
        "cwd" => o.cwd = Some(v.to_owned()),
        "P" => o.project = Some(v.to_owned()),
        "G" => o.user_group = Some(v.to_owned()),
        // Each -R on its own: merged with another, an unclosed `[` would be closed.
        "R" if !basalt_config::resreq::brackets_closed(v) => {
            return Err("Bad resource requirement syntax".to_owned());
        }
        // A compound or alternative requirement is whole: no other -R merges into it.
        "R" if !o.res_req.is_empty()
            && (basalt_config::compound::is_multi(v)
                || o.res_req
                    .iter()
                    .any(|r| basalt_config::compound::is_multi(r))) =>
        {
            return Err(
                "Bad resource requirement syntax: a compound or alternative resource requirement cannot be combined with another -R"
                    .to_owned(),
            );
        }
        "R" => o.res_req.push(v.to_owned()),
        "m" => {
            // `host+N` keeps its preference level (mbatchd reads it); `+` alone or a
            // level that is not a number is refused.
            let hosts: Vec<String> = v.split_whitespace().map(str::to_owned).collect();
            if hosts.is_empty() || !hosts.iter().all(|h| asked_host_ok(h)) {
                return Err(bad(name, v));
            }
            o.hosts = Some(hosts);
        }
        "w" => {
            let t = v.trim();
            let t = t
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .unwrap_or(t);
            o.depend = Some(t.to_owned());
        }
        "b" | "t" => {
            let fields = parse_time_fields(v).ok_or_else(|| bad(name, v))?;
            let at = (cx.resolve_time)(&fields).ok_or_else(|| bad(name, v))?;
            if name == "b" {
                o.begin = Some(at);
            } else {
                o.term = Some(at);
            }
        }
        "E" => o.pre_exec = Some(v.to_owned()),
        "Ep" => o.post_exec = Some(v.to_owned()),
        "Q" => {
            basalt_config::batch::RequeueValues::parse(v).map_err(|_| bad(name, v))?;
            o.requeue_values = Some(v.to_owned());
        }
        "L" => o.login_shell = Some(v.to_owned()),
        "u" => o.mail_user = Some(v.to_owned()),
        "env" => o.env.push(v.to_owned()),
        "We" => {
            parse_minutes(v)
                .filter(|s| *s <= basalt_core::bounds::MAX_TIME_LIMIT)
                .ok_or_else(|| bad(name, v))?;
            o.ignored.push(name.to_owned());
        }
        "T" => {
            v.trim().parse::<u32>().map_err(|_| bad(name, v))?;
            o.ignored.push(name.to_owned());
        }
        "sp" => {
            check_user_priority(v, cx.max_user_priority)?;
            o.ignored.push(name.to_owned());
        }
        "app" => o.app = Some(v.to_owned()),
        "a" => {
            parse_esub_apps(v)?;
            o.esub_apps = Some(v.trim().to_owned());
        }
        "rn" => o.rerunnable = false,
        n if IGNORED.contains(&n) => o.ignored.push(name.to_owned()),
        n if NOT_SUPPORTED.contains(&n) => {
            return Err(format!(
                "-{n}: this LSF option is not supported by Basalt yet"
            ));
        }
        other => return Err(format!("illegal option -- {other}")),
    }
    Ok(())
}

/// Apply parsed items; returns the positional arguments (the command words).
pub fn apply_items(
    items: Vec<Item>,
    o: &mut BsubOpts,
    cx: &ValueCtx,
) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    for it in items {
        match it {
            Item::Opt(n, v) => {
                if n == "h" || n == "V" {
                    continue;
                }
                apply(o, &n, v.as_deref(), cx)?;
            }
            Item::Arg(a) => words.push(a),
        }
    }
    Ok(words)
}

/// One `-f "local_file op [remote_file]"`: the operator (`>`, `<`, `<<`, `>>`, `><`,
/// `<>`) between blanks; the remote file defaults to the local one.
pub fn parse_transfer(v: &str) -> Option<(String, String, u32)> {
    let words: Vec<&str> = v.split_whitespace().collect();
    let (local, op, remote) = match words.as_slice() {
        [l, op] => (*l, *op, *l),
        [l, op, r] => (*l, *op, *r),
        _ => return None,
    };
    let ops = basalt_core::job::xf::of_operator(op)?;
    Some((local.to_owned(), remote.to_owned(), ops))
}
