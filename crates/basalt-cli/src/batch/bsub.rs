//! `bsub`: option parsing (command line and `#BSUB` directives), value parsing
//! (`-n -W -M -c -b ...`), `-R` merging, `-env`, and the submission built from them
//! (cli-contract.md §2, §3).
//!
//! Forms: `bsub [opts] cmd args...` (words joined with spaces, run by a shell, not
//! parsed), `bsub [opts] script-file` (one argument naming a readable text file: its
//! `#BSUB` lines are parsed and its text is spooled), `bsub [opts] < script` (stdin is
//! not a terminal and no command is given: the same), and, on a terminal, `bsub>`
//! prompts. Command-line options beat directives; `-R` and `-env` accumulate.
//!
//! LSF's multi-letter options are matched whole before one-letter options are unbundled
//! (`-Ep` is `-Ep`, not `-E p`; `-hostfile` is not `-h -o stfile`): [`SPEC`] lists every
//! option of LSF 10.1's bsub. What Basalt does with those it does not carry out:
//!
//! * accepted and ignored ([`IGNORED`], plus `-We -T -sp`, whose values are checked):
//!   options that only tune or describe a job and do not change what it runs, where its
//!   output goes or whether it runs — `-U -gpu -alloc_flags -Jd -ext/-extsched -Lp -sla
//!   -g -ul -Zs -hl -ar -freq -network -notify -rcacct` and the CSM options `-csm -jsm
//!   -smt -step_cgroup -core_isolation -cn_cu -cn_mem -ln_mem -ln_slots` (like `-nnodes`
//!   and `-alloc_flags`, which parsl and psij send);
//! * `-rn` makes the job not rerunnable;
//! * refused ([`NOT_SUPPORTED`], `-<name>: this LSF option is not supported by Basalt yet.
//!   Job not submitted.`, exit 255): options whose absence would silently change what the
//!   job does — interactive jobs (`-I -Ip -Is -IS -ISp -ISs -IX -tty -XF`), waiting for the
//!   job (`-K`), file transfer and data staging (`-f -is -data -datagrp -datachk -stage`),
//!   checkpointing and migration (`-k -mig`), post-execution and rerun commands (`-Ep
//!   -rnc`), warning actions and signals (`-wa -wt -s`), requeue exit values (`-Q`), esub
//!   applications (`-a`), pending time limits (`-ptl -eptl`), orphan termination (`-ti`),
//!   host files and output directories (`-hostfile -outdir`), other clusters
//!   (`-clusters`), and jobs described elsewhere (`-pack -jsdl -jsdl_strict -json -yaml`).
//!
//! Unknown options keep LSF's `bsub: illegal option -- x` and the usage. `-app` is sent to
//! mbatchd, which refuses a profile lsb.applications does not define.

use super::opts::{self, Item, Spec};
use super::resreq;
use basalt_core::job::{sub, sub2};
use basalt_proto::mbatchd::{JobSubmission, SubmitRequest};
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

/// bsub's usage text.
pub const USAGE: &str = "Usage: bsub [-h] [-V] [-H] [-x] [-r] [-N] [-B]
            [-q queue_name ...] [-J job_name] [-n min_proc[,max_proc]] [-nnodes N]
            [-o out_file | -oo out_file] [-e err_file | -eo err_file] [-i in_file]
            [-W [hour:]minute] [-M mem_limit] [-c [hour:]minute] [-F file_limit]
            [-D data_limit] [-S stack_limit] [-C core_limit] [-v swap_limit]
            [-p process_limit] [-R res_req] ... [-m \"host_name ...\"] [-w depend_cond]
            [-b [[[YY:]MM:]DD:]hh:mm] [-t [[[YY:]MM:]DD:]hh:mm] [-E pre_exec_command]
            [-L login_shell] [-u mail_user] [-P project_name] [-G user_group]
            [-cwd dir] [-env \"none\" | \"all[, ~var][, var=value]\" | \"var[=value][, ...]\"] ...
            [-U reservation] [-gpu spec] [-alloc_flags flags] [-app profile]
            [-sp priority] [-We [hour:]minute] [-T thread_limit] [-Jd description]
            [command [argument ...] | script_file]
";

/// LSF bsub options Basalt recognises but does not carry out yet: refused, so that a job
/// never runs without what was asked of it.
pub const NOT_SUPPORTED: &[&str] = &[
    "I",
    "Ip",
    "Is",
    "IS",
    "ISp",
    "ISs",
    "IX",
    "K",
    "tty",
    "XF",
    "f",
    "k",
    "mig",
    "pack",
    "jsdl",
    "jsdl_strict",
    "Ep",
    "rnc",
    "wa",
    "wt",
    "Q",
    "s",
    "a",
    "is",
    "json",
    "yaml",
    "data",
    "datagrp",
    "datachk",
    "stage",
    "ptl",
    "eptl",
    "ti",
    "hostfile",
    "outdir",
    "clusters",
];

/// LSF bsub options accepted and ignored: they tune or describe a job (or only mean
/// something on an IBM CSM cluster) without changing what it runs, where its output goes
/// or whether it runs. Their names are kept in [`BsubOpts::ignored`].
pub const IGNORED: &[&str] = &[
    "U",
    "gpu",
    "alloc_flags",
    "Jd",
    "ext",
    "extsched",
    "Lp",
    "sla",
    "g",
    "ul",
    "Zs",
    "hl",
    "ar",
    "freq",
    "network",
    "notify",
    "rcacct",
    "csm",
    "jsm",
    "smt",
    "step_cgroup",
    "core_isolation",
    "cn_cu",
    "cn_mem",
    "ln_mem",
    "ln_slots",
];

/// bsub's options (public for the fuzz checks, `fuzz/src/bsub.rs`).
pub const SPEC: Spec = Spec {
    flags: &[
        "h", "V", "H", "x", "r", "N", "B", "rn", "ul", "Zs", "hl", "I", "Ip", "Is", "IS", "ISp",
        "ISs", "IX", "K", "tty", "XF", "ar", "datachk", "ti",
    ],
    valued: &[
        "rnc",
        "clusters",
        "datagrp",
        "ptl",
        "eptl",
        "hostfile",
        "outdir",
        "freq",
        "network",
        "notify",
        "rcacct",
        "csm",
        "jsm",
        "smt",
        "step_cgroup",
        "core_isolation",
        "cn_cu",
        "cn_mem",
        "ln_mem",
        "ln_slots",
        "ext",
        "extsched",
        "Lp",
        "sla",
        "g",
        "f",
        "k",
        "mig",
        "pack",
        "jsdl",
        "jsdl_strict",
        "Ep",
        "wa",
        "wt",
        "Q",
        "s",
        "a",
        "is",
        "json",
        "yaml",
        "data",
        "stage",
        "J",
        "Jd",
        "q",
        "n",
        "o",
        "e",
        "oo",
        "eo",
        "i",
        "W",
        "We",
        "M",
        "c",
        "F",
        "D",
        "S",
        "C",
        "v",
        "p",
        "T",
        "cwd",
        "P",
        "G",
        "R",
        "m",
        "w",
        "b",
        "t",
        "E",
        "L",
        "u",
        "env",
        "nnodes",
        "U",
        "gpu",
        "alloc_flags",
        "app",
        "sp",
    ],
};

/// LSF_RLIMIT_* positions in `JobSubmission.rlimits`.
pub use basalt_core::rlimit;

/// Everything bsub options can say. `None` = not given.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct BsubOpts {
    pub job_name: Option<String>,
    pub queue: Option<String>,
    /// -n min[,max].
    pub procs: Option<(u32, u32)>,
    /// -o / -oo: (path, overwrite).
    pub out: Option<(String, bool)>,
    pub err: Option<(String, bool)>,
    pub in_file: Option<String>,
    /// Limits by LSF_RLIMIT_* position: seconds for CPU and RUN, KB for sizes.
    pub limits: [Option<i64>; rlimit::COUNT],
    pub cwd: Option<String>,
    pub project: Option<String>,
    pub user_group: Option<String>,
    pub res_req: Vec<String>,
    pub hosts: Option<Vec<String>>,
    pub depend: Option<String>,
    pub begin: Option<i64>,
    pub term: Option<i64>,
    pub pre_exec: Option<String>,
    pub login_shell: Option<String>,
    pub mail_user: Option<String>,
    /// -app: an application profile.
    pub app: Option<String>,
    pub nnodes: Option<u32>,
    /// Every -env value, in order.
    pub env: Vec<String>,
    pub exclusive: bool,
    pub hold: bool,
    pub rerunnable: bool,
    pub notify_begin: bool,
    pub notify_end: bool,
    /// Options accepted and ignored.
    pub ignored: Vec<String>,
}

impl BsubOpts {
    /// Command-line options (`self`) over script directives (`script`); `-R` and `-env`
    /// accumulate (script first).
    pub fn over(self, script: BsubOpts) -> BsubOpts {
        let mut limits = script.limits;
        for (i, l) in self.limits.iter().enumerate() {
            if l.is_some() {
                limits[i] = *l;
            }
        }
        let mut res_req = script.res_req;
        res_req.extend(self.res_req);
        let mut env = script.env;
        env.extend(self.env);
        let mut ignored = script.ignored;
        ignored.extend(self.ignored);
        BsubOpts {
            job_name: self.job_name.or(script.job_name),
            queue: self.queue.or(script.queue),
            procs: self.procs.or(script.procs),
            out: self.out.or(script.out),
            err: self.err.or(script.err),
            in_file: self.in_file.or(script.in_file),
            limits,
            cwd: self.cwd.or(script.cwd),
            project: self.project.or(script.project),
            user_group: self.user_group.or(script.user_group),
            res_req,
            hosts: self.hosts.or(script.hosts),
            depend: self.depend.or(script.depend),
            begin: self.begin.or(script.begin),
            term: self.term.or(script.term),
            pre_exec: self.pre_exec.or(script.pre_exec),
            login_shell: self.login_shell.or(script.login_shell),
            mail_user: self.mail_user.or(script.mail_user),
            app: self.app.or(script.app),
            nnodes: self.nnodes.or(script.nnodes),
            env,
            exclusive: self.exclusive || script.exclusive,
            hold: self.hold || script.hold,
            rerunnable: self.rerunnable || script.rerunnable,
            notify_begin: self.notify_begin || script.notify_begin,
            notify_end: self.notify_end || script.notify_end,
            ignored,
        }
    }
}

/// What the parser needs from the environment: `LSF_UNIT_FOR_LIMITS` and a way to
/// turn `-b`/`-t` times into seconds.
#[derive(Debug, Clone, Copy)]
pub struct ValueCtx<'a> {
    pub unit: &'a str,
    pub resolve_time: fn(&[u32]) -> Option<i64>,
}

fn bad(opt: &str, value: &str) -> String {
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
fn unit_kb(letter: char) -> Option<f64> {
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
    use super::timefmt::{local, local_to_epoch, now};
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
        "W" => o.limits[rlimit::RUN] = Some(parse_minutes(v).ok_or_else(|| bad(name, v))?),
        "c" => o.limits[rlimit::CPU] = Some(parse_minutes(v).ok_or_else(|| bad(name, v))?),
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
        "R" => o.res_req.push(v.to_owned()),
        "m" => {
            let hosts: Vec<String> = v
                .split_whitespace()
                .map(|h| h.split('+').next().unwrap_or(h).to_owned())
                .filter(|h| !h.is_empty())
                .collect();
            if hosts.is_empty() {
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
        "L" => o.login_shell = Some(v.to_owned()),
        "u" => o.mail_user = Some(v.to_owned()),
        "env" => o.env.push(v.to_owned()),
        "We" => {
            parse_minutes(v).ok_or_else(|| bad(name, v))?;
            o.ignored.push(name.to_owned());
        }
        "T" | "sp" => {
            v.trim().parse::<u32>().map_err(|_| bad(name, v))?;
            o.ignored.push(name.to_owned());
        }
        "app" => o.app = Some(v.to_owned()),
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

/// Split a line the way a shell would: whitespace separates words, `'...'` is literal,
/// `"..."` honours `\" \\ \$ \``, a backslash outside quotes escapes the next character,
/// and an unquoted `#` at the start of a word ends the line.
pub fn shell_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err("unmatched '".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => {
                                cur.push(n);
                                chars.next();
                            }
                            _ => cur.push('\\'),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err("unmatched \"".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// The `#BSUB` directives of a script: (line number, words after `#BSUB`). Only lines
/// starting in column 0 with `#BSUB` followed by a blank count.
pub fn directives(script: &str) -> Vec<(usize, Result<Vec<String>, String>)> {
    script
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let rest = line.strip_prefix("#BSUB")?;
            if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
                return None;
            }
            Some((i + 1, shell_words(rest)))
        })
        .collect()
}

/// Parse a script's directives into options. Words that are not options are reported
/// as warnings (returned) and otherwise ignored.
pub fn script_opts(script: &str, cx: &ValueCtx) -> Result<(BsubOpts, Vec<String>), String> {
    let mut o = BsubOpts::default();
    let mut warnings = Vec::new();
    for (line, words) in directives(script) {
        let words = words.map_err(|e| format!("#BSUB at line {line}: {e}"))?;
        let items =
            opts::parse(&words, &SPEC, false).map_err(|e| format!("#BSUB at line {line}: {e}"))?;
        for it in items {
            match it {
                Item::Opt(n, _) if n == "h" || n == "V" => {}
                Item::Opt(n, v) => apply(&mut o, &n, v.as_deref(), cx)
                    .map_err(|e| format!("#BSUB at line {line}: {e}"))?,
                Item::Arg(a) => warnings.push(format!(
                    "#BSUB at line {line}: ignoring <{a}>, which is not an option"
                )),
            }
        }
    }
    Ok((o, warnings))
}

/// Resolve the `-env` values against the submitter's environment (all of it when no
/// `-env` was given): `all` (minus `~VAR`), `none`, `VAR` (taken from the environment)
/// and `VAR=value`, merged over every `-env`.
pub fn resolve_env(specs: &[String], vars: &[(String, String)]) -> Vec<String> {
    if specs.is_empty() {
        return vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
    }
    let starts_token = |p: &str| -> bool {
        let p = p.trim_start();
        if p == "all" || p == "none" {
            return true;
        }
        let p = p.strip_prefix('~').unwrap_or(p);
        let name_len = p
            .char_indices()
            .take_while(|(i, c)| {
                c.is_ascii_alphabetic() || *c == '_' || (*i > 0 && c.is_ascii_digit())
            })
            .count();
        name_len > 0 && (name_len == p.len() || p[name_len..].starts_with('='))
    };
    let mut tokens: Vec<String> = Vec::new();
    for spec in specs {
        let mut spec_tokens: Vec<String> = Vec::new();
        for piece in spec.split(',') {
            // A piece that is not a token of its own, or a bare word right after an
            // assignment with no blank after the comma (`LIST=a,b`), continues the
            // previous value.
            let continues = |last: &String| {
                !starts_token(piece)
                    || (last.contains('=')
                        && !piece.contains('=')
                        && !piece.starts_with(char::is_whitespace)
                        && !matches!(piece.trim(), "all" | "none"))
            };
            match spec_tokens.last_mut() {
                Some(last) if continues(last) => {
                    last.push(',');
                    last.push_str(piece);
                }
                _ => spec_tokens.push(piece.to_owned()),
            }
        }
        tokens.extend(spec_tokens);
    }
    let mut all = false;
    let mut exclude: Vec<String> = Vec::new();
    let mut include: Vec<String> = Vec::new();
    let mut set: Vec<(String, String)> = Vec::new();
    for t in tokens {
        let t = t.trim();
        match t {
            "" | "none" => {}
            "all" => all = true,
            _ => {
                if let Some(name) = t.strip_prefix('~') {
                    exclude.push(name.trim().to_owned());
                } else if let Some((k, v)) = t.split_once('=') {
                    set.retain(|(sk, _)| sk != k.trim());
                    set.push((k.trim().to_owned(), v.to_owned()));
                } else {
                    include.push(t.to_owned());
                }
            }
        }
    }
    let mut out: Vec<(String, String)> = if all {
        vars.iter()
            .filter(|(k, _)| !exclude.contains(k))
            .cloned()
            .collect()
    } else {
        vars.iter()
            .filter(|(k, _)| include.contains(k))
            .cloned()
            .collect()
    };
    for (k, v) in set {
        match out.iter_mut().find(|(ok, _)| *ok == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// What the job runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobCommand {
    pub text: String,
    pub is_script: bool,
    /// For `bsub file`: the file as given (the default job name).
    pub script_name: Option<String>,
}

/// The submitter's side of a submission.
#[derive(Debug, Clone, Default)]
pub struct Submitter {
    pub cwd: String,
    pub home: String,
    pub umask: u32,
    pub from_host: String,
    pub vars: Vec<(String, String)>,
}

/// Build the submission from merged options.
pub fn build(o: &BsubOpts, cmd: &JobCommand, who: &Submitter) -> JobSubmission {
    let mut options = sub::PROJECT_NAME;
    let mut options2 = 0;
    let flag = |set: bool, bit: u32, acc: &mut u32| {
        if set {
            *acc |= bit;
        }
    };
    flag(o.job_name.is_some(), sub::JOB_NAME, &mut options);
    flag(o.queue.is_some(), sub::QUEUE, &mut options);
    flag(o.out.is_some(), sub::OUT_FILE, &mut options);
    flag(o.err.is_some(), sub::ERR_FILE, &mut options);
    flag(o.in_file.is_some(), sub::IN_FILE, &mut options);
    flag(o.hosts.is_some(), sub::HOST, &mut options);
    flag(
        o.exclusive || o.nnodes.is_some(),
        sub::EXCLUSIVE,
        &mut options,
    );
    flag(o.rerunnable, sub::RERUNNABLE, &mut options);
    flag(o.user_group.is_some(), sub::USER_GROUP, &mut options);
    flag(o.depend.is_some(), sub::DEPEND_COND, &mut options);
    flag(o.pre_exec.is_some(), sub::PRE_EXEC, &mut options);
    flag(o.login_shell.is_some(), sub::LOGIN_SHELL, &mut options);
    flag(o.mail_user.is_some(), sub::MAIL_USER, &mut options);
    flag(o.notify_begin, sub::NOTIFY_BEGIN, &mut options);
    flag(o.notify_end, sub::NOTIFY_END, &mut options);
    flag(o.hold, sub2::HOLD, &mut options2);
    flag(cmd.is_script, sub2::JOB_CMD_SPOOL, &mut options2);
    flag(
        o.out.as_ref().is_some_and(|(_, ow)| *ow),
        sub2::OUT_OVERWRITE,
        &mut options2,
    );
    flag(
        o.err.as_ref().is_some_and(|(_, ow)| *ow),
        sub2::ERR_OVERWRITE,
        &mut options2,
    );

    // -nnodes N: N whole hosts, exclusively; the slots spread evenly over them.
    let (mut nmin, mut nmax) = o.procs.unwrap_or((1, 1));
    let mut res_reqs = o.res_req.clone();
    if let Some(nodes) = o.nnodes {
        if o.procs.is_none() {
            nmin = nodes;
            nmax = nodes;
        }
        let has_span = res_reqs.iter().any(|r| r.contains("span["));
        if !has_span {
            let ptile = nmin.div_ceil(nodes).max(1);
            res_reqs.push(format!("span[ptile={ptile}]"));
        }
    }
    let res_req = resreq::merge(&res_reqs);
    flag(!res_req.is_empty(), sub::RES_REQ, &mut options);

    let mut rlimits = vec![-1i64; rlimit::COUNT];
    for (i, l) in o.limits.iter().enumerate() {
        if let Some(v) = l {
            rlimits[i] = *v;
        }
    }
    JobSubmission {
        queue: o.queue.clone().unwrap_or_default(),
        job_name: o
            .job_name
            .clone()
            .or_else(|| cmd.script_name.clone())
            .unwrap_or_default(),
        command: cmd.text.clone(),
        is_script: cmd.is_script,
        cwd: who.cwd.clone(),
        spec_cwd: o.cwd.clone().unwrap_or_default(),
        in_file: o.in_file.clone().unwrap_or_default(),
        out_file: o.out.as_ref().map(|(p, _)| p.clone()).unwrap_or_default(),
        err_file: o.err.as_ref().map(|(p, _)| p.clone()).unwrap_or_default(),
        num_processors: nmin,
        max_processors: nmax,
        asked_hosts: o.hosts.clone().unwrap_or_default(),
        res_req,
        project: o.project.clone().unwrap_or_default(),
        user_group: o.user_group.clone().unwrap_or_default(),
        begin_time: o.begin.unwrap_or(0),
        term_time: o.term.unwrap_or(0),
        rlimits,
        env: resolve_env(&o.env, &who.vars),
        login_shell: o.login_shell.clone().unwrap_or_default(),
        depend_cond: o.depend.clone().unwrap_or_default(),
        pre_exec: o.pre_exec.clone().unwrap_or_default(),
        mail_user: o.mail_user.clone().unwrap_or_default(),
        app: o.app.clone().unwrap_or_default(),
        umask: who.umask,
        home_dir: who.home.clone(),
        from_host: who.from_host.clone(),
        options,
        options2,
    }
}

/// The bounds mbatchd holds a submission to (`basalt_sched::bounds`), checked before it is
/// sent: the refusal text, LSF's message where LSF has one.
pub fn check_bounds(job: &JobSubmission) -> Result<(), String> {
    let sub = basalt_wire::submission(job);
    basalt_sched::bounds::check_submission(&sub)
        .and_then(|()| basalt_sched::bounds::check_env(&job.env))
        .map_err(|e| match e {
            basalt_sched::SchedError::BadArgument(m) => m,
            e => e.to_string(),
        })
}

/// The success line.
pub fn submitted_line(job_id: u64, queue: &str, default_queue: bool) -> String {
    if default_queue {
        format!("Job <{job_id}> is submitted to default queue <{queue}>.")
    } else {
        format!("Job <{job_id}> is submitted to queue <{queue}>.")
    }
}

/// The rejection line: LSF's reason, then `. Job not submitted.`
pub fn rejected_line(reason: &str) -> String {
    let r = reason.trim().trim_end_matches('.');
    format!("{r}. Job not submitted.")
}

/// Is `path` a readable text file (no NUL byte)? Returns its text.
fn read_text_file(path: &str) -> Option<String> {
    let p = std::path::Path::new(path);
    if !p.is_file() {
        return None;
    }
    let bytes = std::fs::read(p).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The submission directory: `$PWD` when it names the current directory (keeps
/// symbolic links as the user sees them), else the resolved current directory.
fn submission_cwd() -> String {
    use std::os::unix::fs::MetadataExt;
    let cur = std::env::current_dir().unwrap_or_default();
    if let Ok(pwd) = std::env::var("PWD")
        && pwd.starts_with('/')
        && let (Ok(a), Ok(b)) = (std::fs::metadata(&pwd), std::fs::metadata(&cur))
        && a.dev() == b.dev()
        && a.ino() == b.ino()
    {
        return pwd;
    }
    cur.to_string_lossy().into_owned()
}

fn current_umask() -> u32 {
    use nix::sys::stat::{Mode, umask};
    let old = umask(Mode::from_bits_truncate(0o022));
    umask(old);
    old.bits()
}

fn home_dir(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.dir.to_string_lossy().into_owned())
        .or_else(|| std::env::var("HOME").ok())
        .unwrap_or_default()
}

/// Read the job from a terminal with `bsub> ` prompts until end of file.
fn read_from_terminal() -> String {
    let mut text = String::new();
    let stdin = std::io::stdin();
    loop {
        print!("bsub> ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match stdin.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => text.push_str(&line),
        }
    }
    if !text.is_empty() {
        println!();
    }
    text
}

/// `bsub`.
pub fn main(args: Vec<String>) -> ExitCode {
    let items = match opts::parse(&args, &SPEC, true) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("bsub: {e}");
            eprint!("{USAGE}");
            return crate::fail();
        }
    };
    if let Some(code) = super::help_or_version(&items, USAGE) {
        return code;
    }
    let config = match super::load_config("bsub") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let unit = config
        .lsf_conf
        .get("LSF_UNIT_FOR_LIMITS")
        .unwrap_or("KB")
        .to_owned();
    let cx = ValueCtx {
        unit: &unit,
        resolve_time: resolve_local_time,
    };
    let mut cmdline = BsubOpts::default();
    let words = match apply_items(items, &mut cmdline, &cx) {
        Ok(w) => w,
        Err(e) if e.starts_with("illegal option") => {
            eprintln!("bsub: {e}");
            eprint!("{USAGE}");
            return crate::fail();
        }
        Err(e) => {
            eprintln!("{}", rejected_line(&e));
            return crate::fail();
        }
    };

    let cmd = if words.len() == 1
        && let Some(text) = read_text_file(&words[0])
    {
        JobCommand {
            text,
            is_script: true,
            script_name: Some(words[0].clone()),
        }
    } else if !words.is_empty() {
        JobCommand {
            text: words.join(" "),
            is_script: false,
            script_name: None,
        }
    } else {
        let stdin = std::io::stdin();
        let text = if stdin.is_terminal() {
            read_from_terminal()
        } else {
            let mut buf = Vec::new();
            if let Err(e) = stdin.lock().read_to_end(&mut buf) {
                eprintln!(
                    "{}",
                    rejected_line(&format!("Cannot read the job script from stdin: {e}"))
                );
                return crate::fail();
            }
            String::from_utf8_lossy(&buf).into_owned()
        };
        JobCommand {
            text,
            is_script: true,
            script_name: None,
        }
    };
    let body_empty = cmd
        .text
        .lines()
        .all(|l| l.trim().is_empty() || (cmd.is_script && l.trim_start().starts_with('#')));
    if body_empty {
        eprintln!("bsub: Missing command. Job not submitted.");
        return crate::fail();
    }

    let merged = if cmd.is_script {
        match script_opts(&cmd.text, &cx) {
            Ok((script, warnings)) => {
                for w in warnings {
                    eprintln!("bsub: {w}");
                }
                cmdline.over(script)
            }
            Err(e) => {
                eprintln!("{}", rejected_line(&e));
                return crate::fail();
            }
        }
    } else {
        cmdline
    };

    let who_caller = super::caller(&config);
    let who = Submitter {
        cwd: submission_cwd(),
        home: home_dir(who_caller.uid),
        umask: current_umask(),
        from_host: who_caller.host.clone(),
        vars: std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect(),
    };
    let job = build(&merged, &cmd, &who);
    if let Err(e) = check_bounds(&job) {
        eprintln!("{}", rejected_line(&e));
        return crate::fail();
    }
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let req = SubmitRequest {
            protocol: Some(basalt_proto::PROTOCOL),
            caller: Some(who_caller),
            job: Some(job),
            submit_token: submit_token(),
        };
        // The request carries a token, so sending it again after a lost answer (mbatchd
        // died or the master moved) cannot create a second job: mbatchd answers a repeat
        // with the job the first one created.
        let deadline = std::time::Instant::now() + super::cmd_timeout();
        let mut warned = false;
        loop {
            match client.submit(req.clone()).await {
                Ok(r) => {
                    let r = r.into_inner();
                    println!("{}", submitted_line(r.job_id, &r.queue, r.default_queue));
                    return ExitCode::SUCCESS;
                }
                Err(s) if answer_lost(&s) && std::time::Instant::now() < deadline => {
                    if !warned {
                        warned = true;
                        eprintln!("batch system daemon not responding ... still trying");
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                    if let Ok(c) = super::connect_mbatchd(&config).await {
                        client = c;
                    }
                }
                Err(s) if answer_lost(&s) => {
                    eprintln!(
                        "Lost the connection to mbatchd before it answered ({}): the job may \
                         have been submitted. Check with bjobs -a before submitting it again.",
                        s.message()
                    );
                    return crate::fail();
                }
                Err(s) => {
                    eprintln!("{}", rejected_line(&super::status_text(&s)));
                    return crate::fail();
                }
            }
        }
    })
}

/// Did the call fail without an answer from mbatchd (so a resend with the same token is
/// safe and needed), rather than being refused?
fn answer_lost(s: &tonic::Status) -> bool {
    matches!(
        s.code(),
        tonic::Code::Unknown
            | tonic::Code::Cancelled
            | tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
    )
}

/// A token unique to this submission: host, pid, time and 64 random bits.
fn submit_token() -> String {
    let mut rnd = [0u8; 8];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut rnd);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let host = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "{host}:{}:{nanos:x}:{:016x}",
        std::process::id(),
        u64::from_le_bytes(rnd)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_time(_: &[u32]) -> Option<i64> {
        Some(1_000)
    }

    fn cx(unit: &str) -> ValueCtx<'_> {
        ValueCtx {
            unit,
            resolve_time: no_time,
        }
    }

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn cmdline(args: &[&str], unit: &str) -> (BsubOpts, Vec<String>) {
        let items = opts::parse(&words(args), &SPEC, true).unwrap_or_default();
        let mut o = BsubOpts::default();
        let rest = apply_items(items, &mut o, &cx(unit)).unwrap_or_default();
        (o, rest)
    }

    #[test]
    fn memory_limits() {
        assert_eq!(parse_size("2000", "KB", false), Some(2000));
        assert_eq!(parse_size("2000", "MB", false), Some(2000 * 1024));
        assert_eq!(parse_size("2048MB", "KB", false), Some(2048 * 1024));
        assert_eq!(parse_size("1048576KB", "MB", false), Some(1_048_576));
        assert_eq!(parse_size("4G", "KB", false), Some(4 * 1024 * 1024));
        assert_eq!(parse_size("4gb", "KB", false), Some(4 * 1024 * 1024));
        assert_eq!(parse_size("1T", "KB", false), Some(1024 * 1024 * 1024));
        // 0.0977 MB = 100.0448 KB, rounded up.
        assert_eq!(parse_size("0.0977", "MB", false), Some(101));
        assert_eq!(parse_size("0.5", "GB", false), Some(512 * 1024));
        for bad in ["", "abc", "-5", "10XB", "10 MB", "0", "1.2.3"] {
            assert_eq!(parse_size(bad, "MB", false), None, "{bad}");
        }
        assert_eq!(parse_size("0", "MB", true), Some(0));
        assert_eq!(limits_unit_kb("MB"), 1024.0);
        assert_eq!(limits_unit_kb(""), 1.0);
    }

    #[test]
    fn run_limits() {
        assert_eq!(parse_minutes("10"), Some(600));
        assert_eq!(parse_minutes("0:5"), Some(300));
        assert_eq!(parse_minutes("01:00"), Some(3600));
        assert_eq!(parse_minutes("60:05"), Some((60 * 60 + 5) * 60));
        assert_eq!(parse_minutes("100:00"), Some(360_000));
        assert_eq!(parse_minutes("10/hostA"), Some(600));
        for bad in ["", "x", "1:", ":5", "-3", "0", "1:2:3", "1.5"] {
            assert_eq!(parse_minutes(bad), None, "{bad}");
        }
    }

    #[test]
    fn processors() {
        assert_eq!(parse_procs("4"), Some((4, 4)));
        assert_eq!(parse_procs("2,8"), Some((2, 8)));
        assert_eq!(parse_procs("0"), None);
        assert_eq!(parse_procs("8,2"), None);
        assert_eq!(parse_procs("x"), None);
    }

    #[test]
    fn time_fields() {
        assert_eq!(parse_time_fields("10:30"), Some(vec![10, 30]));
        assert_eq!(parse_time_fields("2:1:10:30"), Some(vec![2, 1, 10, 30]));
        assert_eq!(parse_time_fields("24:00"), None);
        assert_eq!(parse_time_fields("13:1:10:30"), None);
        assert_eq!(parse_time_fields("10"), None);
        let at = resolve_local_time(&[10, 30]).unwrap_or_default();
        let now = super::super::timefmt::now();
        assert!(at > now - 60 && at <= now + 86_400 + 3600, "{at} vs {now}");
    }

    #[test]
    fn command_line_options() {
        let (o, rest) = cmdline(
            &[
                "-J",
                "Snakemake_rule_r:k=v,k2=v2___(uuid)",
                "-q",
                "short",
                "-n",
                "2,4",
                "-oo",
                "out.%J",
                "-e",
                "err.%J",
                "-W",
                "01:00",
                "-M",
                "4G",
                "-R",
                "span[hosts=1]",
                "-R",
                "rusage[mem=100]",
                "-x",
                "-H",
                "-cwd",
                ".",
                "-P",
                "proj",
                "-G",
                "grp",
                "-m",
                "hostA hostB+2",
                "-w",
                "\"done(5)\"",
                "-env",
                "all, A=1",
                "-gpu",
                "num=2",
                "python",
                "-m",
                "x",
                "--flag",
            ],
            "MB",
        );
        assert_eq!(rest, words(&["python", "-m", "x", "--flag"]));
        assert_eq!(
            o.job_name.as_deref(),
            Some("Snakemake_rule_r:k=v,k2=v2___(uuid)")
        );
        assert_eq!(o.procs, Some((2, 4)));
        assert_eq!(o.out, Some(("out.%J".into(), true)));
        assert_eq!(o.err, Some(("err.%J".into(), false)));
        assert_eq!(o.limits[rlimit::RUN], Some(3600));
        assert_eq!(o.limits[rlimit::RSS], Some(4 * 1024 * 1024));
        assert_eq!(o.res_req, words(&["span[hosts=1]", "rusage[mem=100]"]));
        assert_eq!(o.hosts, Some(words(&["hostA", "hostB"])));
        assert_eq!(o.depend.as_deref(), Some("done(5)"));
        assert!(o.exclusive && o.hold);
        assert_eq!(o.ignored, words(&["gpu"]));
    }

    #[test]
    fn bad_values_are_refused() {
        let items = opts::parse(&words(&["-n", "0", "x"]), &SPEC, true).unwrap_or_default();
        let mut o = BsubOpts::default();
        assert_eq!(
            apply_items(items, &mut o, &cx("KB")),
            Err("0: Bad argument for option -n".to_string())
        );
        let items = opts::parse(&words(&["-M", "lots", "x"]), &SPEC, true).unwrap_or_default();
        assert!(apply_items(items, &mut o, &cx("KB")).is_err());
        assert!(opts::parse(&words(&["-Z", "x"]), &SPEC, true).is_err());
        assert_eq!(
            rejected_line("Queue does not exist"),
            "Queue does not exist. Job not submitted."
        );
        assert_eq!(
            rejected_line("Not allowed due to resource limit."),
            "Not allowed due to resource limit. Job not submitted."
        );
    }

    /// Issue 31: an over-deep or over-long value is refused at `bsub`, before anything is
    /// sent, with the message mbatchd would give.
    #[test]
    fn over_deep_or_over_long_values_are_refused_before_sending() {
        let who = Submitter {
            cwd: "/home/a".into(),
            home: "/home/a".into(),
            umask: 0o022,
            from_host: "hostA".into(),
            vars: vec![("PATH".into(), "/bin".into())],
        };
        let check = |args: &[&str]| {
            let (o, rest) = cmdline(args, "KB");
            let cmd = JobCommand {
                text: rest.join(" "),
                is_script: false,
                script_name: None,
            };
            check_bounds(&build(&o, &cmd, &who))
        };
        assert_eq!(check(&["-w", "done(1)", "true"]), Ok(()));
        let deep = format!("{}done(1){}", "(".repeat(5000), ")".repeat(5000));
        assert_eq!(
            check(&["-w", &deep, "true"]),
            Err("Bad dependency condition syntax".into())
        );
        let name = "n".repeat(5000);
        assert_eq!(check(&["-J", &name, "true"]), Err("Bad job name".into()));
        let out = format!("/tmp/{}", "%J".repeat(3000));
        assert_eq!(
            check(&["-o", &out, "true"]),
            Err("Bad argument: the output file name (-o) is longer than 4095 characters".into())
        );
        let hosts = "h ".repeat(20_000);
        assert_eq!(
            check(&["-m", &hosts, "true"]),
            Err("Bad host name, host group name or cluster name".into())
        );
        let rr = format!("select[{}]", "mem>1 && ".repeat(3000));
        assert_eq!(
            check(&["-R", &rr, "true"]),
            Err("Bad resource requirement syntax".into())
        );
        // A long command is fine: it travels in the job file.
        let words: Vec<String> = std::iter::once("echo".to_string())
            .chain((0..50_000).map(|_| "word".to_string()))
            .collect();
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        assert_eq!(check(&args), Ok(()));
    }

    /// The first item `args` parse to, and the words left for the command.
    fn first_item_and_words(args: &[&str]) -> (Option<Item>, Vec<String>) {
        let items = opts::parse(&words(args), &SPEC, true).unwrap_or_default();
        let rest = items
            .iter()
            .filter_map(|i| match i {
                Item::Arg(a) => Some(a.clone()),
                Item::Opt(..) => None,
            })
            .collect();
        (items.first().cloned(), rest)
    }

    /// `-<name> value true` (or `-<name> true` for a flag).
    fn with_value(name: &str) -> (Vec<String>, Option<String>) {
        let flag = SPEC.flags.contains(&name);
        let mut args = vec![format!("-{name}")];
        if !flag {
            args.push("value".into());
        }
        args.push("true".into());
        (args, (!flag).then(|| "value".to_string()))
    }

    /// Issue 30 item 4: `-Ep /bin/true -q normal echo hi` is `-Ep` with its value, then
    /// queue normal and the command `echo hi` — not `-E p` with `/bin/true` as the command.
    #[test]
    fn ep_is_read_whole_and_the_queue_and_command_follow_it() {
        let items = opts::parse(
            &words(&["-Ep", "/bin/true", "-q", "normal", "echo", "hi"]),
            &SPEC,
            true,
        );
        assert_eq!(
            items,
            Ok(vec![
                Item::Opt("Ep".into(), Some("/bin/true".into())),
                Item::Opt("q".into(), Some("normal".into())),
                Item::Arg("echo".into()),
                Item::Arg("hi".into()),
            ])
        );
        // What follows -Ep is applied as usual; -Ep itself is refused by name.
        let mut o = BsubOpts::default();
        let rest = apply_items(
            items.clone().unwrap_or_default().split_off(1),
            &mut o,
            &cx("KB"),
        );
        assert_eq!(rest, Ok(vec!["echo".to_string(), "hi".to_string()]));
        assert_eq!(o.queue.as_deref(), Some("normal"));
        let mut o = BsubOpts::default();
        assert_eq!(
            apply_items(items.unwrap_or_default(), &mut o, &cx("KB")),
            Err("-Ep: this LSF option is not supported by Basalt yet".to_string())
        );
        // The same option with a one-letter prefix in a bundle is still unbundled.
        let (o, rest) = cmdline(&["-Epre", "echo", "hi"], "KB");
        assert_eq!(o.pre_exec.as_deref(), Some("pre"));
        assert_eq!(rest, vec!["echo".to_string(), "hi".to_string()]);
    }

    /// Every LSF option Basalt refuses is parsed as itself (not as a bundle of one-letter
    /// options) and refused by its own name.
    #[test]
    fn every_refused_lsf_option_is_parsed_as_itself_and_refused_by_name() {
        for name in NOT_SUPPORTED {
            let (args, value) = with_value(name);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (first, rest) = first_item_and_words(&args);
            assert_eq!(first, Some(Item::Opt((*name).to_string(), value)), "{name}");
            assert_eq!(rest, vec!["true".to_string()], "{name}");
            let items = opts::parse(&words(&args), &SPEC, true).unwrap_or_default();
            let mut o = BsubOpts::default();
            assert_eq!(
                apply_items(items, &mut o, &cx("KB")),
                Err(format!(
                    "-{name}: this LSF option is not supported by Basalt yet"
                )),
                "{name}"
            );
        }
    }

    /// Every LSF option Basalt accepts and ignores is parsed as itself, leaves the job as
    /// it was (the command, the queue, the output) and is recorded as ignored.
    #[test]
    fn every_ignored_lsf_option_is_parsed_as_itself_and_changes_nothing() {
        for name in IGNORED {
            let (mut args, value) = with_value(name);
            args.splice(
                args.len() - 1..,
                ["-q".into(), "normal".into(), "true".into()],
            );
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (first, _) = first_item_and_words(&args);
            assert_eq!(first, Some(Item::Opt((*name).to_string(), value)), "{name}");
            let (o, rest) = cmdline(&args, "KB");
            assert_eq!(rest, vec!["true".to_string()], "{name}");
            let expected = BsubOpts {
                queue: Some("normal".into()),
                ignored: vec![(*name).to_string()],
                ..Default::default()
            };
            assert_eq!(o, expected, "{name}");
        }
    }

    /// The option list covers LSF 10.1's bsub synopsis: each listed multi-letter option
    /// is one of bsub's own names, so none of them is unbundled.
    #[test]
    fn lsf_10_1_multi_letter_bsub_options_are_all_known_names() {
        let lsf = [
            "Ep",
            "ext",
            "extsched",
            "Lp",
            "mig",
            "pack",
            "tty",
            "jsdl",
            "jsdl_strict",
            "rn",
            "rnc",
            "sla",
            "Is",
            "Ip",
            "IS",
            "ISp",
            "ISs",
            "IX",
            "ul",
            "is",
            "wa",
            "wt",
            "Zs",
            "XF",
            "ar",
            "alloc_flags",
            "app",
            "clusters",
            "cn_cu",
            "cn_mem",
            "core_isolation",
            "csm",
            "cwd",
            "data",
            "datachk",
            "datagrp",
            "env",
            "eo",
            "eptl",
            "freq",
            "gpu",
            "hl",
            "hostfile",
            "Jd",
            "jsm",
            "json",
            "ln_mem",
            "ln_slots",
            "network",
            "nnodes",
            "notify",
            "oo",
            "outdir",
            "ptl",
            "rcacct",
            "smt",
            "sp",
            "stage",
            "step_cgroup",
            "ti",
            "We",
            "yaml",
        ];
        for name in lsf {
            assert!(
                SPEC.flags.contains(&name) || SPEC.valued.contains(&name),
                "-{name} is not one of bsub's names"
            );
        }
        // One-letter options LSF has, including those Basalt refuses or ignores.
        for name in ["I", "K", "f", "k", "g", "a", "Q", "s"] {
            assert!(
                SPEC.flags.contains(&name) || SPEC.valued.contains(&name),
                "-{name}"
            );
        }
    }

    /// `-rn` makes the job not rerunnable; unknown options keep LSF's message.
    #[test]
    fn rn_makes_the_job_not_rerunnable_and_unknown_options_are_illegal() {
        let (o, rest) = cmdline(&["-r", "-rn", "a"], "KB");
        assert!(!o.rerunnable, "-rn: not rerunnable");
        assert_eq!(rest, vec!["a".to_string()]);
        assert_eq!(
            opts::parse(&words(&["-Zz", "a"]), &SPEC, true).map_err(|e| e.to_string()),
            Err("illegal option -- Z".to_string())
        );
    }

    #[test]
    fn shell_style_words() {
        assert_eq!(
            shell_words(r#" -R "select[type==any]"    # Allow any"#),
            Ok(words(&["-R", "select[type==any]"]))
        );
        assert_eq!(shell_words("-q q "), Ok(words(&["-q", "q"])));
        assert_eq!(
            shell_words(r#"-J 'a b' -o "x \"y\"" c\ d e#f"#),
            Ok(words(&["-J", "a b", "-o", "x \"y\"", "c d", "e#f"]))
        );
        assert!(shell_words("-J 'open").is_err());
    }

    const SCRIPT: &str = "\n#!/bin/bash\n#BSUB -J dask-worker\n#BSUB -e %J.err\n#BSUB -o %J.out\n#BSUB -q normal \n#BSUB -n 2\n#BSUB -R \"span[hosts=1]\"\n#BSUB -M 2000\n#BSUB -W 00:10\n    #BSUB -J ipengine-3\n#BSUB -R \"select[type==any]\"    # Allow any host type\n\n#BSUB -env \"all\"\n#BSUB -env \"PSIJ_X=1\"\n#BSUBX -q bogus\necho hi\n#BSUB -x\n";

    #[test]
    fn directive_parsing() {
        let (o, warnings) = script_opts(SCRIPT, &cx("MB")).unwrap_or_default();
        assert!(warnings.is_empty(), "{warnings:?}");
        // The indented directive is a comment.
        assert_eq!(o.job_name.as_deref(), Some("dask-worker"));
        assert_eq!(o.err, Some(("%J.err".into(), false)));
        assert_eq!(o.out, Some(("%J.out".into(), false)));
        assert_eq!(o.queue.as_deref(), Some("normal"));
        assert_eq!(o.procs, Some((2, 2)));
        assert_eq!(o.res_req, words(&["span[hosts=1]", "select[type==any]"]));
        assert_eq!(o.limits[rlimit::RSS], Some(2000 * 1024));
        assert_eq!(o.limits[rlimit::RUN], Some(600));
        assert_eq!(o.env, words(&["all", "PSIJ_X=1"]));
        // Directives after commands still count.
        assert!(o.exclusive);
        assert_eq!(directives(SCRIPT).len(), 12);
    }

    #[test]
    fn command_line_beats_the_script() {
        let (script, _) = script_opts(SCRIPT, &cx("MB")).unwrap_or_default();
        let (cmd, _) = cmdline(
            &["-J", "ipengine[1-4]", "-q", "short", "-R", "rusage[mem=5]"],
            "MB",
        );
        let o = cmd.over(script);
        assert_eq!(o.job_name.as_deref(), Some("ipengine[1-4]"));
        assert_eq!(o.queue.as_deref(), Some("short"));
        assert_eq!(o.procs, Some((2, 2)));
        assert_eq!(
            o.res_req,
            words(&["span[hosts=1]", "select[type==any]", "rusage[mem=5]"])
        );
        let job = build(
            &o,
            &JobCommand {
                text: SCRIPT.into(),
                is_script: true,
                script_name: None,
            },
            &Submitter::default(),
        );
        assert_eq!(job.res_req, "select[type==any] rusage[mem=5] span[hosts=1]");
        assert_eq!(job.job_name, "ipengine[1-4]");
        assert!(job.is_script);
        assert_ne!(job.options2 & sub2::JOB_CMD_SPOOL, 0);
    }

    #[test]
    fn bad_directive_is_reported_with_its_line() {
        let err = script_opts("#!/bin/sh\n#BSUB -n zero\n", &cx("KB"));
        assert_eq!(
            err.map(|_| ()),
            Err("#BSUB at line 2: zero: Bad argument for option -n".to_string())
        );
        let (_, warnings) = script_opts("#BSUB -q a stray\n", &cx("KB")).unwrap_or_default();
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn environment_selection() {
        let vars = vec![
            ("A".to_string(), "1".to_string()),
            ("B".to_string(), "2".to_string()),
            ("C".to_string(), "x,y".to_string()),
        ];
        assert_eq!(resolve_env(&[], &vars), words(&["A=1", "B=2", "C=x,y"]));
        assert_eq!(resolve_env(&words(&["none"]), &vars), Vec::<String>::new());
        assert_eq!(
            resolve_env(&words(&["all, ~B, D=4"]), &vars),
            words(&["A=1", "C=x,y", "D=4"])
        );
        assert_eq!(
            resolve_env(&words(&["all", "A=9"]), &vars),
            words(&["A=9", "B=2", "C=x,y"])
        );
        assert_eq!(
            resolve_env(&words(&["B, E=5"]), &vars),
            words(&["B=2", "E=5"])
        );
        // A value with commas stays whole.
        assert_eq!(
            resolve_env(&words(&["LIST=a,b,c"]), &vars),
            words(&["LIST=a,b,c"])
        );
    }

    #[test]
    fn submission_fields_and_option_bits() {
        let (o, rest) = cmdline(
            &[
                "-q", "normal", "-J", "j", "-o", "o", "-eo", "e", "-R", "x", "-m", "h", "-x", "-r",
                "sleep", "10",
            ],
            "KB",
        );
        let cmd = JobCommand {
            text: rest.join(" "),
            is_script: false,
            script_name: None,
        };
        let who = Submitter {
            cwd: "/home/a".into(),
            home: "/home/a".into(),
            umask: 0o022,
            from_host: "hostA".into(),
            vars: vec![("PATH".into(), "/bin".into())],
        };
        let j = build(&o, &cmd, &who);
        assert_eq!(j.command, "sleep 10");
        assert!(!j.is_script);
        assert_eq!(
            j.options,
            sub::PROJECT_NAME
                | sub::QUEUE
                | sub::JOB_NAME
                | sub::OUT_FILE
                | sub::ERR_FILE
                | sub::RES_REQ
                | sub::HOST
                | sub::EXCLUSIVE
                | sub::RERUNNABLE
        );
        assert_eq!(j.options2, sub2::ERR_OVERWRITE);
        assert_eq!(j.rlimits, vec![-1; 11]);
        assert_eq!(j.env, words(&["PATH=/bin"]));
        assert_eq!((j.num_processors, j.max_processors), (1, 1));
        assert_eq!(j.umask, 0o022);

        let (o, _) = cmdline(&["-nnodes", "2", "-n", "8", "true"], "KB");
        let j = build(&o, &cmd, &who);
        assert_ne!(j.options & sub::EXCLUSIVE, 0);
        assert_eq!(j.res_req, "span[ptile=4]");
        assert_eq!(j.num_processors, 8);
        let (o, _) = cmdline(&["-nnodes", "3", "true"], "KB");
        let j = build(&o, &cmd, &who);
        assert_eq!((j.num_processors, j.res_req.as_str()), (3, "span[ptile=1]"));
    }

    #[test]
    fn app_is_sent_to_mbatchd_not_ignored() {
        let (o, rest) = cmdline(&["-app", "fluent", "-G", "physics", "true"], "KB");
        assert_eq!(o.app.as_deref(), Some("fluent"));
        assert!(o.ignored.is_empty());
        let cmd = JobCommand {
            text: rest.join(" "),
            is_script: false,
            script_name: None,
        };
        let j = build(&o, &cmd, &Submitter::default());
        assert_eq!(j.app, "fluent");
        assert_eq!(j.user_group, "physics");
        assert_ne!(j.options & sub::USER_GROUP, 0);
        // A #BSUB -app is used unless the command line names another.
        let (script, _) = script_opts("#BSUB -app cfx\n", &cx("KB")).unwrap_or_default();
        let (cmd_line, _) = cmdline(&["true"], "KB");
        assert_eq!(cmd_line.over(script.clone()).app.as_deref(), Some("cfx"));
        assert_eq!(o.over(script).app.as_deref(), Some("fluent"));
        let (none, _) = cmdline(&["true"], "KB");
        assert_eq!(build(&none, &cmd, &Submitter::default()).app, "");
    }

    #[test]
    fn success_lines() {
        assert_eq!(
            submitted_line(101, "normal", true),
            "Job <101> is submitted to default queue <normal>."
        );
        assert_eq!(
            submitted_line(104, "normal", false),
            "Job <104> is submitted to queue <normal>."
        );
    }
}
