//! The batch commands: `bsub bmod bjobs bkill bstop bresume bswitch btop bbot brun bpeek
//! bqueues bhosts bparams blimits bresources bmgroup bugroup bclusters badmin`.
//!
//! Each command module has a pure part (argument parsing, reply -> text) that is
//! unit-tested byte for byte against cli-output.md / cli-contract.md, and a `main`
//! that asks mbatchd (found through the master LIM) and prints.
//!
//! Shared here: who the caller is ([`caller`]), how a command reaches mbatchd
//! ([`connect_mbatchd`], with retries for `BASALT_CMD_TIMEOUT` seconds, default 10),
//! job-id parsing ([`parse_job_ids`]) and state names.
//!
//! Test hooks (environment variables used only by tests):
//! * `BASALT_MBD_ADDR=ip:port` — talk to this mbatchd instead of asking the LIMs;
//! * `BASALT_SBD_ADDR=ip:port` — `bpeek` talks to this sbatchd instead of the job's host.

pub mod badmin;
pub mod bapp;
pub mod bclusters;
pub mod bhpart;
pub mod bjobs;
pub mod blimits;
pub mod bmgroup;
pub mod bmod;
pub mod bpeek;
pub mod bqueues;
pub mod bresources;
pub mod brestart;
pub mod bslots;
pub mod bsub;
pub mod bugroup;
pub mod busers;
pub mod groups;
pub mod hq_custom;
pub mod jobctl;
pub mod opts;
pub mod outfmt;
pub mod params;
mod policies;
pub use basalt_config::resreq;
pub mod text;
pub mod timefmt;
pub mod whatif;

use basalt_config::Config;
use basalt_core::job::{JobState, exit_reason, status};
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use basalt_proto::mbatchd::{JobInfo, JobRef};
use basalt_runtime::AuthChannel;
use std::fmt;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tonic::transport::Endpoint;

/// Environment variable naming an mbatchd address (tests only).
pub const MBD_ADDR_ENV: &str = "BASALT_MBD_ADDR";
/// Environment variable naming an sbatchd address for `bpeek` (tests only).
pub const SBD_ADDR_ENV: &str = "BASALT_SBD_ADDR";
/// Environment variable overriding how long a command keeps trying to reach mbatchd.
pub const CMD_TIMEOUT_ENV: &str = "BASALT_CMD_TIMEOUT";

/// A command's arguments without the program name, as strings.
pub fn argv() -> Vec<String> {
    help_as_h(
        std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
    )
}

/// `--help` (the GNU spelling every installed command answers) read as LSF's `-h`, when
/// it is the command's first argument.
pub fn help_as_h(mut args: Vec<String>) -> Vec<String> {
    if args.first().is_some_and(|a| a == "--help") {
        args[0] = "-h".into();
    }
    args
}

/// How long a command keeps trying to reach mbatchd (`BASALT_CMD_TIMEOUT`, seconds).
pub fn cmd_timeout() -> Duration {
    std::env::var(CMD_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(Duration::from_secs(10))
}

/// How long one request may take once connected.
pub fn request_timeout() -> Duration {
    cmd_timeout().max(Duration::from_secs(60))
}

/// The host a command acts from: `BASALT_HOST` if set, else the machine's name,
/// canonicalised against the cluster file when it is there.
pub fn local_host(config: &Config) -> String {
    let raw = std::env::var("BASALT_HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(basalt_runtime::machine_hostname);
    basalt_runtime::canonical_host(config, &raw).unwrap_or(raw)
}

/// The user name of `uid` from the password database (the number when there is none).
pub fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| uid.to_string())
}

/// Why a command could not reach mbatchd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectError {
    /// No LIM answered (or none knows a master).
    LsfDown,
    /// The master is known but its mbatchd does not answer.
    Mbatchd(String),
    /// A daemon refused who we are (`User permission denied`).
    Permission(String),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::LsfDown => f.write_str("LSF is down; try later"),
            ConnectError::Mbatchd(r) => write!(f, "Cannot connect to mbatchd: {r}"),
            ConnectError::Permission(r) => f.write_str(r),
        }
    }
}

/// The full chain of an error's causes, `outer: inner: ...`.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        cur = s.source();
    }
    parts.join(": ")
}

/// Connect to the daemon of `host` at `addr`; requests carry the user's credentials.
async fn connect_addr(
    config: &Config,
    addr: SocketAddr,
    host: &str,
    connect: Duration,
) -> Result<AuthChannel, String> {
    let auth = crate::auth(config);
    let ep = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| e.to_string())?
        .connect_timeout(connect)
        .timeout(request_timeout())
        .tcp_nodelay(true)
        .local_address(auth.local_addr());
    match tokio::time::timeout(connect, ep.connect()).await {
        // A request the daemon is too busy for (mbatchd's bound on requests in flight)
        // is sent again after the pause it names, as long as one request may take.
        Ok(Ok(ch)) => Ok(basalt_runtime::AuthService::new(ch, auth.towards(host))
            .retrying_when_busy(request_timeout())),
        Ok(Err(e)) => Err(error_chain(&e)),
        Err(_) => Err(format!("connection to {addr} timed out")),
    }
}

/// The cluster host whose daemons listen at `addr`'s address (what a request's
/// credential names as its target), or "" when none does.
fn host_at(config: &Config, addr: SocketAddr) -> String {
    basalt_runtime::host_table(config)
        .host_at(addr.ip())
        .map(str::to_owned)
        .unwrap_or_default()
}

fn addr_from_env(var: &str) -> Option<Result<SocketAddr, String>> {
    let v = std::env::var(var).ok().filter(|v| !v.is_empty())?;
    Some(
        v.parse::<SocketAddr>()
            .map_err(|e| format!("{var}={v}: {e}")),
    )
}

/// Find mbatchd (the master LIM names its host) and connect to it. Keeps trying for
/// [`cmd_timeout`]; the first failure prints `batch system daemon not responding ...
/// still trying` on stderr once.
pub async fn connect_mbatchd(config: &Config) -> Result<MbatchdClient<AuthChannel>, ConnectError> {
    let deadline = Instant::now() + cmd_timeout();
    let mut warned = false;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let per_try = remaining.clamp(Duration::from_millis(200), Duration::from_secs(3));
        let err = match connect_mbatchd_once(config, per_try).await {
            Ok(c) => return Ok(c),
            Err(ConnectTry::Final(e)) => return Err(e),
            Err(ConnectTry::Again(e)) => e,
        };
        if Instant::now() >= deadline {
            return Err(err);
        }
        if !warned {
            warned = true;
            if let Some(line) = still_trying_line(&err) {
                eprintln!("{line}");
            }
        }
        let pause = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(300));
        tokio::time::sleep(pause).await;
    }
}

/// LSF's line while a command keeps trying to reach the batch system.
pub fn still_trying_line(e: &ConnectError) -> Option<&'static str> {
    match e {
        ConnectError::LsfDown => Some("LSF daemon (LIM) not responding ... still trying"),
        ConnectError::Mbatchd(_) => Some("batch system daemon not responding ... still trying"),
        ConnectError::Permission(_) => None,
    }
}

/// Why one attempt to connect to mbatchd failed: worth trying again (no LIM, no master,
/// mbatchd not answering yet) or not (a refused identity, a bad address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectTry {
    Again(ConnectError),
    Final(ConnectError),
}

/// One attempt of [`connect_mbatchd`]: ask the master LIM where mbatchd is and connect,
/// each step within `per_try`.
pub async fn connect_mbatchd_once(
    config: &Config,
    per_try: Duration,
) -> Result<MbatchdClient<AuthChannel>, ConnectTry> {
    match addr_from_env(MBD_ADDR_ENV) {
        Some(Err(e)) => Err(ConnectTry::Final(ConnectError::Mbatchd(e))),
        Some(Ok(addr)) => match connect_addr(config, addr, &host_at(config, addr), per_try).await {
            Ok(ch) => Ok(mbatchd_client(ch)),
            Err(e) => Err(ConnectTry::Again(ConnectError::Mbatchd(e))),
        },
        None => match basalt_runtime::find_master_name(config, per_try, &crate::auth(config)).await
        {
            Err(basalt_runtime::RuntimeError::NoLim) => {
                Err(ConnectTry::Again(ConnectError::LsfDown))
            }
            Err(basalt_runtime::RuntimeError::Permission(m)) => {
                Err(ConnectTry::Final(ConnectError::Permission(m)))
            }
            Err(e) => Err(ConnectTry::Final(ConnectError::Mbatchd(e.to_string()))),
            Ok(master) => match basalt_runtime::mbd_addr(config, &master) {
                Err(e) => Err(ConnectTry::Final(ConnectError::Mbatchd(e.to_string()))),
                Ok(addr) => match connect_addr(config, addr, &master, per_try).await {
                    Ok(ch) => Ok(mbatchd_client(ch)),
                    Err(e) => Err(ConnectTry::Again(ConnectError::Mbatchd(format!(
                        "{master} ({addr}): {e}"
                    )))),
                },
            },
        },
    }
}

fn mbatchd_client(ch: AuthChannel) -> MbatchdClient<AuthChannel> {
    MbatchdClient::new(ch).max_decoding_message_size(basalt_runtime::MAX_MESSAGE_BYTES)
}

/// An sbatchd client for `host` (or `BASALT_SBD_ADDR`), connected.
pub async fn connect_sbatchd(
    config: &Config,
    host: &str,
) -> Result<basalt_proto::sbatchd::sbatchd_client::SbatchdClient<AuthChannel>, String> {
    let addr = match addr_from_env(SBD_ADDR_ENV) {
        Some(a) => a?,
        None => basalt_runtime::sbd_addr(config, host).map_err(|e| e.to_string())?,
    };
    let ch = connect_addr(
        config,
        addr,
        host,
        cmd_timeout().clamp(Duration::from_millis(200), Duration::from_secs(10)),
    )
    .await
    .map_err(|e| format!("Cannot connect to sbatchd on <{host}>: {e}"))?;
    Ok(basalt_proto::sbatchd::sbatchd_client::SbatchdClient::new(
        ch,
    ))
}

/// The banner `bqueues`, `bhosts`, `bparams` and `badmin showconf mbd` print (on stderr)
/// while mbatchd runs on the last accepted configuration because the files on disk do not
/// load; `problem` is mbatchd's list of errors ("" = none, nothing printed).
pub fn config_banner(problem: &str) {
    if let Some(text) = config_banner_text(problem) {
        eprint!("{text}");
    }
}

/// The text of [`config_banner`].
pub fn config_banner_text(problem: &str) -> Option<String> {
    let problem = problem.trim();
    if problem.is_empty() {
        return None;
    }
    let mut out = String::from(
        "Warning: mbatchd is running on the last accepted configuration; the \
         configuration files do not load:\n",
    );
    for line in problem.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("Correct them, check with badmin ckconfig, then run badmin reconfig.\n");
    Some(out)
}

/// The text of a refused request: the status message (LSF's reason), else the code.
/// The end of a listing of named objects (bapp, bhpart): `<name>: <missing>` on stderr
/// for each name not found; nothing found — `none` when no name was missing — exits 255;
/// else `text()` is printed, and the exit is 255 when a name was missing.
pub(crate) fn named_listing(
    found: bool,
    not_found: &[String],
    (missing, none): (&str, &str),
    text: impl FnOnce() -> String,
) -> ExitCode {
    for n in not_found {
        eprintln!("{n}: {missing}");
    }
    if !found {
        if not_found.is_empty() {
            eprintln!("{none}");
        }
        return crate::fail();
    }
    print!("{}", text());
    if not_found.is_empty() {
        ExitCode::SUCCESS
    } else {
        crate::fail()
    }
}

pub fn status_text(s: &tonic::Status) -> String {
    if s.code() == tonic::Code::Unavailable {
        return format!("Cannot connect to mbatchd: {}", s.message());
    }
    if s.message().is_empty() {
        format!("{:?}", s.code())
    } else {
        s.message().to_owned()
    }
}

/// Run a command body on a current-thread runtime.
pub fn run<F: std::future::Future<Output = ExitCode>>(f: F) -> ExitCode {
    match crate::block_on(f) {
        Ok(code) => code,
        Err(code) => code,
    }
}

/// Print an unreachable-mbatchd error and return LSF's failure code.
pub fn connect_failed(e: &ConnectError) -> ExitCode {
    eprintln!("{e}");
    crate::fail()
}

/// `123`, `123[4]`, `123[1-3,7]` -> job references; `None` for an illegal id.
pub fn parse_job_id(s: &str) -> Option<Vec<JobRef>> {
    let s = s.trim();
    let (id_part, idx_part) = match s.find('[') {
        Some(p) => {
            let inner = s[p + 1..].strip_suffix(']')?;
            (&s[..p], Some(inner))
        }
        None => (s, None),
    };
    if id_part.is_empty() || !id_part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let job_id: u64 = id_part.parse().ok()?;
    let Some(list) = idx_part else {
        return Some(vec![JobRef {
            job_id,
            idx: 0,
            has_idx: false,
        }]);
    };
    if job_id == 0 {
        return None;
    }
    let mut out = Vec::new();
    for piece in list.split(',') {
        let (a, b) = match piece.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (piece.trim(), piece.trim()),
        };
        let a: u32 = a.parse().ok()?;
        let b: u32 = b.parse().ok()?;
        if a == 0 || b < a || b - a > 1_000_000 {
            return None;
        }
        out.extend((a..=b).map(|idx| JobRef {
            job_id,
            idx,
            has_idx: true,
        }));
    }
    (!out.is_empty()).then_some(out)
}

/// Parse every id argument; on the first illegal one return it.
pub fn parse_job_ids(args: &[String]) -> Result<Vec<JobRef>, String> {
    let mut out = Vec::new();
    for a in args {
        match parse_job_id(a) {
            Some(refs) => out.extend(refs),
            None => return Err(a.clone()),
        }
    }
    Ok(out)
}

/// `123` or `123[4]`.
pub fn job_ref_str(r: &JobRef) -> String {
    if r.has_idx || r.idx > 0 {
        format!("{}[{}]", r.job_id, r.idx)
    } else {
        r.job_id.to_string()
    }
}

/// `123` or `123[4]` for a job row.
pub fn job_id_str(j: &JobInfo) -> String {
    if j.idx > 0 {
        format!("{}[{}]", j.job_id, j.idx)
    } else {
        j.job_id.to_string()
    }
}

/// The state name bjobs shows (ZOMBI is EXIT with the zombie reason bit).
pub fn state_name(j: &JobInfo) -> &'static str {
    match JobState::from_code(j.state) {
        Some(JobState::Exit) if j.reasons & exit_reason::ZOMBIE != 0 => "ZOMBI",
        Some(s) => s.name(),
        None if j.state & status::WAIT != 0 => "WAIT",
        None if j.state & status::PROV != 0 => "PROV",
        None => "UNKWN",
    }
}

/// The state of a job row (`None` for codes Basalt does not know).
pub fn state_of(j: &JobInfo) -> Option<JobState> {
    JobState::from_code(j.state)
}

/// Does the usage/version pre-scan find `-h` or `-V` before the first positional?
/// Returns Some(exit) when the command is done.
pub fn help_or_version(items: &[opts::Item], usage: &str) -> Option<ExitCode> {
    for it in items {
        match it {
            opts::Item::Opt(n, _) if n == "V" => return Some(crate::print_version()),
            opts::Item::Opt(n, _) if n == "h" => {
                eprint!("{usage}");
                return Some(ExitCode::SUCCESS);
            }
            _ => {}
        }
    }
    None
}

/// Parse a command's arguments, printing LSF's complaint and the usage on error.
pub fn parse_args(
    cmd: &str,
    args: &[String],
    spec: &opts::Spec,
    usage: &str,
) -> Result<Vec<opts::Item>, ExitCode> {
    match opts::parse(args, spec, false) {
        Ok(items) => match help_or_version(&items, usage) {
            Some(code) => Err(code),
            None => Ok(items),
        },
        Err(e) => {
            eprintln!("{cmd}: {e}");
            eprint!("{usage}");
            Err(crate::fail())
        }
    }
}

/// Load the configuration a batch command needs (lsf.conf and the cluster file).
pub fn load_config(cmd: &str) -> Result<Config, ExitCode> {
    crate::load_config(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids() {
        let r = parse_job_id("123").unwrap_or_default();
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].job_id, r[0].idx, r[0].has_idx), (123, 0, false));
        let r = parse_job_id("123[4]").unwrap_or_default();
        assert_eq!((r[0].job_id, r[0].idx, r[0].has_idx), (123, 4, true));
        assert_eq!(job_ref_str(&r[0]), "123[4]");
        let r = parse_job_id("9[1-3,7]").unwrap_or_default();
        assert_eq!(
            r.iter().map(|r| r.idx).collect::<Vec<_>>(),
            vec![1, 2, 3, 7]
        );
        assert_eq!(parse_job_id("0").map(|r| r[0].job_id), Some(0));
        for bad in [
            "abc", "", "-1", "12x", "12[", "12[0]", "12[3-1]", "0[1]", "1.5",
        ] {
            assert!(parse_job_id(bad).is_none(), "{bad}");
        }
        assert_eq!(
            parse_job_ids(&["1".into(), "x".into()]),
            Err("x".to_string())
        );
    }

    #[test]
    fn state_names() {
        let mut j = JobInfo {
            state: status::EXIT,
            ..Default::default()
        };
        assert_eq!(state_name(&j), "EXIT");
        j.reasons = exit_reason::ZOMBIE;
        assert_eq!(state_name(&j), "ZOMBI");
        j.state = status::DONE | status::PDONE;
        assert_eq!(state_name(&j), "DONE");
        j.state = status::PEND;
        assert_eq!(state_name(&j), "PEND");
    }
}

#[cfg(test)]
mod banner_tests {
    use super::config_banner_text;

    /// Issue 30 item 2: while mbatchd runs on the last accepted configuration, the
    /// commands say which file and line block the new one; otherwise they say nothing.
    #[test]
    fn the_banner_names_what_blocks_the_new_configuration() {
        assert_eq!(config_banner_text(""), None);
        let t = config_banner_text("lsb.queues(9): PRIORITY: expected a number, found `high43`")
            .unwrap_or_default();
        assert!(t.starts_with("Warning: mbatchd is running on the last accepted configuration"));
        assert!(t.contains("\n  lsb.queues(9): PRIORITY"));
        assert!(t.ends_with("then run badmin reconfig.\n"));
    }
}
