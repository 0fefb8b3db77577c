//! LSF's external submission executables: which esubs a submission runs ([`plan`]: one
//! `stat` of `LSF_SERVERDIR/esub` when there is no `-a` and no `LSB_ESUB_METHOD`), and
//! running them ([`run`]) as LSF's `mesub` does: `esub`, then the `esub.<name>` of each
//! `LSB_ESUB_METHOD` name, then those of `-a`, all with the same parameter file and the
//! same files to write back, until one exits with `LSB_SUB_ABORT_VALUE`.

use super::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The exit value by which an esub refuses the job (`LSB_SUB_ABORT_VALUE`).
pub const ABORT_VALUE: i32 = 97;

/// LSF's reason when an esub refused the job (LSBE_ESUB_ABORT).
pub const ABORTED: &str = "Request aborted by esub";

/// One esub to run: its path in `LSF_SERVERDIR` and the arguments `-a name(arg,...)`
/// gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Esub {
    pub path: PathBuf,
    pub args: Vec<String>,
}

/// The names (and arguments) of `-a "name[(arg[,arg...])] ..."`. A name has letters,
/// digits, `_` and `-` only (it names the file `esub.<name>`).
pub fn parse_esub_apps(v: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let bad = || bad("a", v);
    let mut out = Vec::new();
    let mut chars = v.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut name = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '(') {
            name.push(c);
        }
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad());
        }
        let mut args = Vec::new();
        if chars.next_if_eq(&'(').is_some() {
            let mut inside = String::new();
            loop {
                match chars.next() {
                    Some(')') => break,
                    Some(c) => inside.push(c),
                    None => return Err(bad()),
                }
            }
            args = inside
                .split(',')
                .map(|a| a.trim().to_owned())
                .filter(|a| !a.is_empty())
                .collect();
            if chars.peek().is_some_and(|c| !c.is_whitespace()) {
                return Err(bad());
            }
        }
        out.push((name, args));
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// The esubs a submission runs, in LSF's order: `serverdir/esub` if it is there, then
/// `esub.<name>` for each name of `method` (`LSB_ESUB_METHOD`) and of `apps` (`-a`), each
/// once. A named one that is missing (or not executable) is an error.
pub fn plan(
    serverdir: &Path,
    method: Option<&str>,
    apps: Option<&str>,
) -> Result<Vec<Esub>, String> {
    let mut out = Vec::new();
    let plain = serverdir.join("esub");
    if basalt_config::is_executable(&plain) {
        out.push(Esub {
            path: plain,
            args: Vec::new(),
        });
    }
    let method = match method.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => parse_esub_apps(m).map_err(|_| format!("LSB_ESUB_METHOD: bad value <{m}>"))?,
        None => Vec::new(),
    };
    let apps = match apps {
        Some(a) => parse_esub_apps(a)?,
        None => Vec::new(),
    };
    let mut seen: Vec<String> = Vec::new();
    for (from, list) in [
        ("LSB_ESUB_METHOD application", method),
        ("Application", apps),
    ] {
        for (name, args) in list {
            if seen.contains(&name) {
                continue;
            }
            let path = serverdir.join(format!("esub.{name}"));
            if !basalt_config::is_executable(&path) {
                return Err(format!(
                    "{from} <{name}>: esub.{name} does not exist in LSF_SERVERDIR ({}) or is \
                     not executable",
                    serverdir.display()
                ));
            }
            seen.push(name);
            out.push(Esub { path, args });
        }
    }
    Ok(out)
}

/// What the esubs decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// One exited with `LSB_SUB_ABORT_VALUE`: the job is not submitted.
    Aborted,
    /// Submit, with what they wrote to `LSB_SUB_MODIFY_FILE` and `LSB_SUB_MODIFY_ENVFILE`.
    Accepted {
        modify: Vec<Assignment>,
        env: Vec<Assignment>,
        /// What the esubs wrote to their standard output, for the job's eexec.
        stdout: Vec<u8>,
    },
}

/// Run `esubs` in order with the parameter file `parm`. Each runs with the user's
/// environment plus `LSB_SUB_PARM_FILE`, `LSB_SUB_ABORT_VALUE`, `LSB_SUB_MODIFY_FILE`,
/// `LSB_SUB_MODIFY_ENVFILE`, `LSF_INVOKE_CMD=bsub` and `LSB_SUB_ADDITIONAL` (`-a`),
/// bsub's stdin when `keep_stdin` (else `/dev/null`: bsub read the job from it), its
/// stderr going to the user, its stdout collected for the job's `eexec` (esub | eexec).
/// An exit value other than `LSB_SUB_ABORT_VALUE` does not stop
/// the submission; an esub that cannot be started or is killed by a signal does. The
/// files live in a private temporary directory, removed when this returns.
pub fn run(
    esubs: &[Esub],
    parm: &str,
    additional: Option<&str>,
    keep_stdin: bool,
) -> Result<Verdict, String> {
    run_for(esubs, parm, additional, keep_stdin, "bsub")
}

/// [`run`] for command `invoke` (`LSF_INVOKE_CMD`: `bsub`, or `lsrun`/`lsgrun`, which
/// run esub too: seed 001, "lsrun invokes esub").
pub fn run_for(
    esubs: &[Esub],
    parm: &str,
    additional: Option<&str>,
    keep_stdin: bool,
    invoke: &str,
) -> Result<Verdict, String> {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::Builder::new()
        .prefix("bsub.esub.")
        .tempdir()
        .map_err(|e| format!("Cannot create the esub parameter file: {e}"))?;
    let parm_path = dir.path().join("parm");
    let modify_path = dir.path().join("modify");
    let env_path = dir.path().join("envmodify");
    std::fs::write(&parm_path, parm)
        .map_err(|e| format!("Cannot write {}: {e}", parm_path.display()))?;
    let mut stdout = Vec::new();
    for e in esubs {
        let mut c = Command::new(&e.path);
        c.args(&e.args)
            .env("LSB_SUB_PARM_FILE", &parm_path)
            .env("LSB_SUB_ABORT_VALUE", ABORT_VALUE.to_string())
            .env("LSB_SUB_MODIFY_FILE", &modify_path)
            .env("LSB_SUB_MODIFY_ENVFILE", &env_path)
            .env("LSF_INVOKE_CMD", invoke)
            .stdin(if keep_stdin {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        match additional {
            Some(a) => c.env("LSB_SUB_ADDITIONAL", a),
            // Not one inherited from an outer submission.
            None => c.env_remove("LSB_SUB_ADDITIONAL"),
        };
        let out = c
            .output()
            .map_err(|err| format!("Cannot run {}: {err}", e.path.display()))?;
        stdout.extend_from_slice(&out.stdout);
        match (out.status.code(), out.status.signal()) {
            (Some(ABORT_VALUE), _) => return Ok(Verdict::Aborted),
            (Some(_), _) => {}
            (None, sig) => {
                return Err(format!(
                    "{} was killed by signal {}",
                    e.path.display(),
                    sig.unwrap_or_default()
                ));
            }
        }
    }
    let read = |p: &Path, what: &str| -> Result<Vec<Assignment>, String> {
        match std::fs::read(p) {
            Ok(bytes) => parse_assignments(&String::from_utf8_lossy(&bytes), what),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(format!("Cannot read {what} {}: {e}", p.display())),
        }
    };
    Ok(Verdict::Accepted {
        modify: read(&modify_path, "LSB_SUB_MODIFY_FILE")?,
        env: read(&env_path, "LSB_SUB_MODIFY_ENVFILE")?,
        stdout,
    })
}

/// lsf.conf's (or the environment's) `name`.
fn setting(config: &basalt_config::Config, name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .or_else(|| config.lsf_conf.get(name).map(str::to_owned))
}

/// `LSB_ESUB_METHOD`: the environment's, else lsf.conf's.
pub fn esub_method(config: &basalt_config::Config) -> Option<String> {
    setting(config, "LSB_ESUB_METHOD")
}

/// `LSB_SUB_COMMANDNAME=y|Y` (the environment's, else lsf.conf's): the parameter file
/// carries `LSB_SUB_COMMAND_LINE`.
pub fn with_command_line(config: &basalt_config::Config) -> bool {
    setting(config, "LSB_SUB_COMMANDNAME").is_some_and(|v| v.trim().eq_ignore_ascii_case("y"))
}
