//! The esub files, `NAME=VALUE` a line: the parameter file bsub writes for the esubs
//! (`LSB_SUB_PARM_FILE`, [`parm_file`]) and the files they may write back
//! (`LSB_SUB_MODIFY_FILE`, `LSB_SUB_MODIFY_ENVFILE`: [`parse_assignments`], then
//! [`apply_modify`] and [`apply_env`]).
//!
//! Strings are written double-quoted as LSF writes them (`LSB_SUB_QUEUE="normal"`), with
//! `\ " $` and `` ` `` escaped so that an esub that sources the file (`. $LSB_SUB_PARM_FILE`)
//! gets the value back as it was and runs nothing hidden in it; numbers are bare
//! (`LSB_SUB_NUM_PROCESSORS=4`), switches `Y`. Limits are in the units of the submission:
//! CPU and run time in seconds, sizes in KB. Only the options given appear.
//!
//! An esub writes values quoted (`"..."` with those escapes, or `'...'`, either may span
//! lines) or bare (the rest of the line); `SUB_RESET` removes the option. Blank lines and
//! lines starting with `#` are skipped.

use super::*;

/// The value that removes an option (or, in `LSB_SUB_MODIFY_ENVFILE`, a variable).
pub const SUB_RESET: &str = "SUB_RESET";

/// The limits by `LSF_RLIMIT_*` position, as the parameter file names them; `NOFILE` and
/// `OPEN_MAX` have no bsub option.
pub const RLIMIT_NAMES: [(usize, &str); 9] = [
    (rlimit::CPU, "LSB_SUB_RLIMIT_CPU"),
    (rlimit::FSIZE, "LSB_SUB_RLIMIT_FSIZE"),
    (rlimit::DATA, "LSB_SUB_RLIMIT_DATA"),
    (rlimit::STACK, "LSB_SUB_RLIMIT_STACK"),
    (rlimit::CORE, "LSB_SUB_RLIMIT_CORE"),
    (rlimit::RSS, "LSB_SUB_RLIMIT_RSS"),
    (rlimit::SWAP, "LSB_SUB_RLIMIT_SWAP"),
    (rlimit::RUN, "LSB_SUB_RLIMIT_RUN"),
    (rlimit::PROCESS, "LSB_SUB_RLIMIT_PROCESS"),
];

/// LSF's names for what an esub cannot change here: whether the job is interactive
/// (bsub attaches to it or not: decided on the command line), and what Basalt refuses on
/// the command line (file transfer, warning actions and signals, restarts): an esub
/// that sets one is refused, rather than the job running without it. `SUB_RESET` of one
/// of them is accepted.
pub const MODIFY_NOT_SUPPORTED: &[&str] = &[
    "LSB_SUB_OTHER_FILES",
    "LSB_SUB_JOB_WARNING_ACTION",
    "LSB_SUB_JOB_ACTION_WARNING_TIME",
    "LSB_SUB_WINDOW_SIG",
    "LSB_SUB_RESTART",
    "LSB_SUB_RESTART_FORCE",
    "LSB_SUB2_IN_FILE_SPOOL",
];

/// `v` double-quoted, with `\ " $` and `` ` `` escaped.
pub fn quote(v: &str) -> String {
    let mut s = String::with_capacity(v.len() + 2);
    s.push('"');
    for c in v.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// What the job runs, as `LSB_SUB_COMMAND_LINE` shows it: the script file's name for
/// `bsub file`, else the command (a script read from stdin: its text).
pub fn command_line(cmd: &JobCommand) -> String {
    match &cmd.script_name {
        Some(name) => name.clone(),
        None => cmd.text.trim_end_matches('\n').to_owned(),
    }
}

/// The command's name (`LSB_SUB_COMMANDNAME`): the first word of the first line that is
/// neither blank nor a comment.
pub fn command_name(cmd: &JobCommand) -> String {
    let line = command_line(cmd);
    line.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default()
        .to_owned()
}

/// The parameter file for the options `o` (`-a` as `LSB_SUB_ADDITIONAL`) and the
/// command `cmd`. `with_command` adds `LSB_SUB_COMMANDNAME` and `LSB_SUB_COMMAND_LINE`
/// (lsf.conf `LSB_SUB_COMMANDNAME=Y`).
pub fn parm_file(o: &BsubOpts, cmd: &JobCommand, with_command: bool) -> String {
    let mut out = String::new();
    let mut line = |name: &str, value: String| {
        out.push_str(name);
        out.push('=');
        out.push_str(&value);
        out.push('\n');
    };
    let mut text = |name: &str, v: &Option<String>| {
        if let Some(v) = v {
            line(name, quote(v));
        }
    };
    text("LSB_SUB_JOB_NAME", &o.job_name);
    text("LSB_SUB_QUEUE", &o.queue);
    text("LSB_SUB_IN_FILE", &o.in_file);
    text("LSB_SUB_OUT_FILE", &o.out.as_ref().map(|(p, _)| p.clone()));
    text("LSB_SUB_ERR_FILE", &o.err.as_ref().map(|(p, _)| p.clone()));
    text("LSB_SUB_DEPEND_COND", &o.depend);
    let res_req = resreq::merge(&o.res_req);
    text("LSB_SUB_RES_REQ", &(!res_req.is_empty()).then_some(res_req));
    text("LSB_SUB_PRE_EXEC", &o.pre_exec);
    text("LSB_SUB3_POST_EXEC", &o.post_exec);
    text("LSB_SUB_LOGIN_SHELL", &o.login_shell);
    text("LSB_SUB_MAIL_USER", &o.mail_user);
    text("LSB_SUB_PROJECT_NAME", &o.project);
    text("LSB_SUB_USER_GROUP", &o.user_group);
    text("LSB_SUB_HOSTS", &o.hosts.as_ref().map(|h| h.join(" ")));
    text("LSB_SUB3_CWD", &o.cwd);
    text("LSB_SUB3_APP", &o.app);
    text("LSB_SUB_ADDITIONAL", &o.esub_apps);
    // -k: the directory as given, the period in seconds (LSF's submission fields).
    text(
        "LSB_SUB_CHKPNT_DIR",
        &o.chkpnt.as_ref().map(|c| c.dir.clone()),
    );
    if let Some(p) = o.chkpnt.as_ref().and_then(|c| c.period) {
        line("LSB_SUB_CHKPNT_PERIOD", p.to_string());
    }
    let mut flag = |name: &str, set: bool| {
        if set {
            line(name, "Y".into());
        }
    };
    flag("LSB_SUB_EXCLUSIVE", o.exclusive);
    flag("LSB_SUB_INTERACTIVE", o.interactive != 0);
    flag("LSB_SUB_PTY", o.interactive >= 2);
    flag("LSB_SUB_PTY_SHELL", o.interactive == 3);
    flag("LSB_SUB_NOTIFY_END", o.notify_end);
    flag("LSB_SUB_NOTIFY_BEGIN", o.notify_begin);
    flag("LSB_SUB_RERUNNABLE", o.rerunnable);
    flag("LSB_SUB_HOLD", o.hold);
    if let Some((min, max)) = o.procs {
        line("LSB_SUB_NUM_PROCESSORS", min.to_string());
        line("LSB_SUB_MAX_NUM_PROCESSORS", max.to_string());
    }
    for (i, name) in RLIMIT_NAMES {
        if let Some(v) = o.limits[i] {
            line(name, v.to_string());
        }
    }
    if let Some(t) = o.begin {
        line("LSB_SUB_BEGIN_TIME", t.to_string());
    }
    if let Some(t) = o.term {
        line("LSB_SUB_TERM_TIME", t.to_string());
    }
    if with_command {
        line("LSB_SUB_COMMANDNAME", quote(&command_name(cmd)));
        line("LSB_SUB_COMMAND_LINE", quote(&command_line(cmd)));
    }
    out
}

/// One `NAME=VALUE` of an esub's file: its line (the first, for a value spanning lines),
/// the name and the value without its quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub line: usize,
    pub name: String,
    pub value: String,
}

impl Assignment {
    /// Is the value `SUB_RESET` (remove the option)?
    pub fn is_reset(&self) -> bool {
        self.value == SUB_RESET
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parse an esub's file (`what` names it in errors: `LSB_SUB_MODIFY_FILE`). A line that
/// is not `NAME=VALUE` (a name of letters, digits and `_`; a value bare, or quoted and
/// closed, with nothing but blanks after the closing quote) is an error naming the line.
pub fn parse_assignments(text: &str, what: &str) -> Result<Vec<Assignment>, String> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let first = i;
        let line = lines[i].trim_start();
        i += 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            format!(
                "{what}: line {}: {why}: {}",
                first + 1,
                lines[first].trim_end()
            )
        };
        let Some((name, rest)) = line.split_once('=') else {
            return Err(bad("not NAME=VALUE"));
        };
        if !is_name(name) {
            return Err(bad("not a variable name before `=`"));
        }
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => {
                // The quoted value, perhaps over several lines.
                let mut body = rest[1..].to_owned();
                let (value, after) = loop {
                    if let Some(done) = close_quote(&body, q) {
                        break done;
                    }
                    let Some(next) = lines.get(i) else {
                        return Err(bad("the quote is not closed"));
                    };
                    body.push('\n');
                    body.push_str(next);
                    i += 1;
                };
                if !after.trim().is_empty() {
                    return Err(bad("text after the closing quote"));
                }
                value
            }
            _ => rest.trim_end().to_owned(),
        };
        out.push(Assignment {
            line: first + 1,
            name: name.to_owned(),
            value,
        });
    }
    Ok(out)
}

/// The value up to the closing quote `q` in `body` (after the opening one) and what
/// follows it; `None` when it is not closed. In double quotes `\` escapes `\ " $` and
/// `` ` `` and joins lines, as in sh; single quotes keep everything.
fn close_quote(body: &str, q: char) -> Option<(String, String)> {
    let mut value = String::new();
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == q {
            return Some((value, body[at + c.len_utf8()..].to_owned()));
        }
        if c == '\\' && q == '"' {
            match chars.peek() {
                Some(&(_, n)) if matches!(n, '\\' | '"' | '$' | '`') => {
                    value.push(n);
                    chars.next();
                }
                Some(&(_, '\n')) => {
                    chars.next();
                }
                _ => value.push('\\'),
            }
            continue;
        }
        value.push(c);
    }
    None
}

fn bad_value(a: &Assignment, what: &str) -> String {
    format!(
        "LSB_SUB_MODIFY_FILE: line {}: {}: bad value <{}>: {what}",
        a.line, a.name, a.value
    )
}

/// Apply `LSB_SUB_MODIFY_FILE`'s assignments to the options and the command. Returns
/// warnings (names Basalt does not apply, empty values: ignored, as LSF ignores them);
/// a value of the wrong kind, or an option Basalt refuses, is an error.
pub fn apply_modify(
    o: &mut BsubOpts,
    cmd: &mut JobCommand,
    mods: &[Assignment],
) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    let (mut min, mut max): (Option<Option<u32>>, Option<Option<u32>>) = (None, None);
    for a in mods {
        let reset = a.is_reset();
        let v = a.value.as_str();
        let text = || (!reset).then(|| v.to_owned());
        let switch = || -> Result<bool, String> {
            match v {
                "Y" | "y" => Ok(true),
                "N" | "n" | SUB_RESET => Ok(false),
                _ => Err(bad_value(a, "Y or SUB_RESET")),
            }
        };
        let number = |min_ok: i64| -> Result<Option<i64>, String> {
            if reset {
                return Ok(None);
            }
            v.parse::<i64>()
                .ok()
                .filter(|n| *n >= min_ok)
                .map(Some)
                .ok_or_else(|| {
                    bad_value(a, &format!("an integer of at least {min_ok}, or SUB_RESET"))
                })
        };
        if v.is_empty() {
            warnings.push(format!(
                "LSB_SUB_MODIFY_FILE: line {}: {} is empty; ignored",
                a.line, a.name
            ));
            continue;
        }
        match a.name.as_str() {
            "LSB_SUB_JOB_NAME" => o.job_name = text(),
            "LSB_SUB_QUEUE" => o.queue = text(),
            "LSB_SUB_IN_FILE" => o.in_file = text(),
            "LSB_SUB_OUT_FILE" => {
                let overwrite = o.out.as_ref().is_some_and(|(_, ow)| *ow);
                o.out = text().map(|p| (p, overwrite));
            }
            "LSB_SUB_ERR_FILE" => {
                let overwrite = o.err.as_ref().is_some_and(|(_, ow)| *ow);
                o.err = text().map(|p| (p, overwrite));
            }
            "LSB_SUB_DEPEND_COND" => o.depend = text(),
            "LSB_SUB_RES_REQ" => o.res_req = text().into_iter().collect(),
            "LSB_SUB_PRE_EXEC" => o.pre_exec = text(),
            "LSB_SUB3_POST_EXEC" => o.post_exec = text(),
            "LSB_SUB_LOGIN_SHELL" => o.login_shell = text(),
            "LSB_SUB_MAIL_USER" => o.mail_user = text(),
            "LSB_SUB_PROJECT_NAME" => o.project = text(),
            "LSB_SUB_USER_GROUP" => o.user_group = text(),
            "LSB_SUB3_CWD" => o.cwd = text(),
            "LSB_SUB3_APP" => o.app = text(),
            "LSB_SUB_HOSTS" => {
                // `host+N` keeps its preference level, as on the command line.
                o.hosts = text().map(|h| h.split_whitespace().map(str::to_owned).collect());
                if o.hosts
                    .as_ref()
                    .is_some_and(|h| h.is_empty() || !h.iter().all(|h| asked_host_ok(h)))
                {
                    return Err(bad_value(a, "host names, or SUB_RESET"));
                }
            }
            // -k: a new directory keeps the period and method; SUB_RESET of the
            // directory makes the job not checkpointable.
            "LSB_SUB_CHKPNT_DIR" => match text() {
                Some(dir) => o.chkpnt.get_or_insert_with(Default::default).dir = dir,
                None => o.chkpnt = None,
            },
            "LSB_SUB_CHKPNT_PERIOD" => {
                let p = number(1)?;
                match o.chkpnt.as_mut() {
                    Some(c) => c.period = p,
                    None if p.is_some() => {
                        return Err(bad_value(a, "a period needs a checkpoint directory"));
                    }
                    None => {}
                }
            }
            "LSB_SUB_EXCLUSIVE" => o.exclusive = switch()?,
            // Whether bsub attaches to the job is decided on its command line.
            "LSB_SUB_INTERACTIVE" | "LSB_SUB_PTY" | "LSB_SUB_PTY_SHELL" => {
                let now = match a.name.as_str() {
                    "LSB_SUB_INTERACTIVE" => o.interactive != 0,
                    "LSB_SUB_PTY" => o.interactive >= 2,
                    _ => o.interactive == 3,
                };
                if switch()? != now {
                    return Err(format!(
                        "LSB_SUB_MODIFY_FILE: line {}: {}: an esub cannot change whether \
                         a job is interactive",
                        a.line, a.name
                    ));
                }
            }
            "LSB_SUB_NOTIFY_END" => o.notify_end = switch()?,
            "LSB_SUB_NOTIFY_BEGIN" => o.notify_begin = switch()?,
            "LSB_SUB_RERUNNABLE" => o.rerunnable = switch()?,
            "LSB_SUB_HOLD" => o.hold = switch()?,
            "LSB_SUB_NUM_PROCESSORS" | "LSB_SUB_MAX_NUM_PROCESSORS" => {
                let n = number(1)?.map(|n| u32::try_from(n).map_err(|_| bad_value(a, "too big")));
                let n = n.transpose()?;
                if a.name == "LSB_SUB_NUM_PROCESSORS" {
                    min = Some(n);
                } else {
                    max = Some(n);
                }
            }
            "LSB_SUB_BEGIN_TIME" => o.begin = number(1)?,
            "LSB_SUB_TERM_TIME" => o.term = number(1)?,
            "LSB_SUB_COMMAND_LINE" => {
                if reset {
                    return Err(bad_value(a, "the job's command cannot be removed"));
                }
                if v != command_line(cmd) {
                    *cmd = JobCommand {
                        text: v.to_owned(),
                        // A script read from stdin stays a script; a script file's name
                        // replaced by a command is that command.
                        is_script: cmd.is_script && cmd.script_name.is_none(),
                        script_name: None,
                    };
                }
            }
            // Derived from the command; LSB_SUB_ADDITIONAL (-a) cannot be changed.
            "LSB_SUB_COMMANDNAME" | "LSB_SUB_ADDITIONAL" => {}
            name => {
                if let Some((i, _)) = RLIMIT_NAMES.iter().find(|(_, n)| *n == name) {
                    let least = match *i {
                        rlimit::CORE => 0,
                        _ => 1,
                    };
                    o.limits[*i] = number(least)?;
                } else if MODIFY_NOT_SUPPORTED
                    .iter()
                    .any(|n| name == *n || (*n == "LSB_SUB_OTHER_FILES" && name.starts_with(n)))
                {
                    if !reset {
                        return Err(format!(
                            "LSB_SUB_MODIFY_FILE: line {}: {name}: this LSF option is not \
                             supported by Basalt yet",
                            a.line
                        ));
                    }
                } else {
                    warnings.push(format!(
                        "LSB_SUB_MODIFY_FILE: line {}: {name} is not applied by Basalt; ignored",
                        a.line
                    ));
                }
            }
        }
    }
    if min.is_some() || max.is_some() {
        let old = o.procs;
        o.procs = match (min, max) {
            (Some(None), _) | (_, Some(None)) => None,
            (Some(Some(lo)), Some(Some(hi))) => {
                if hi < lo {
                    return Err(format!(
                        "LSB_SUB_MODIFY_FILE: LSB_SUB_MAX_NUM_PROCESSORS ({hi}) is less than \
                         LSB_SUB_NUM_PROCESSORS ({lo})"
                    ));
                }
                Some((lo, hi))
            }
            (Some(Some(lo)), None) => Some((lo, old.map_or(lo, |(_, hi)| hi.max(lo)))),
            (None, Some(Some(hi))) => {
                let lo = old.map_or(1, |(lo, _)| lo);
                if hi < lo {
                    return Err(format!(
                        "LSB_SUB_MODIFY_FILE: LSB_SUB_MAX_NUM_PROCESSORS ({hi}) is less than \
                         the job's minimum number of processors ({lo})"
                    ));
                }
                Some((lo, hi))
            }
            (None, None) => old,
        };
    }
    Ok(warnings)
}

/// Apply `LSB_SUB_MODIFY_ENVFILE`'s assignments to the job's environment (`NAME=value`
/// entries): each sets its variable, `SUB_RESET` removes it.
pub fn apply_env(env: &mut Vec<String>, vars: &[Assignment]) {
    for a in vars {
        let prefix = format!("{}=", a.name);
        let at = env.iter().position(|e| e.starts_with(&prefix));
        match (a.is_reset(), at) {
            (true, Some(i)) => {
                env.remove(i);
            }
            (true, None) => {}
            (false, Some(i)) => env[i] = format!("{}={}", a.name, a.value),
            (false, None) => env.push(format!("{}={}", a.name, a.value)),
        }
    }
}
