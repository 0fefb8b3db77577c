//! `lsf.conf`: shell-style `KEY=value` assignments.

use crate::error::Ctx;

/// Default LIM port (`LSF_LIM_PORT`).
pub const DEFAULT_LIM_PORT: u16 = 7869;
/// Default RES port (`LSF_RES_PORT`).
pub const DEFAULT_RES_PORT: u16 = 6878;
/// Default mbatchd port (`LSB_MBD_PORT`).
pub const DEFAULT_MBD_PORT: u16 = 6881;
/// Default sbatchd port (`LSB_SBD_PORT`).
pub const DEFAULT_SBD_PORT: u16 = 6882;

/// Default `LSB_MC_INITFAIL_RETRY`: how often a forwarded job may fail to start remotely
/// before the submission cluster suspends it (PSUSP).
pub const DEFAULT_MC_INITFAIL_RETRY: u32 = 6;
/// Default `BASALT_MC_POLL_MS`.
pub const DEFAULT_MC_POLL_MS: u64 = 1000;
/// The start orders under way at once when lsf.conf does not say
/// (`LSB_MAX_JOB_DISPATCH_PER_SESSION`; LSF's own ceiling for a session's dispatches).
pub const DEFAULT_MAX_JOB_DISPATCH: u64 = 3000;
/// Smallest `BASALT_MC_POLL_MS`; a smaller value is raised to it.
pub const MIN_MC_POLL_MS: u64 = 50;

const PORT_KEYS: [&str; 4] = [
    "LSF_LIM_PORT",
    "LSF_RES_PORT",
    "LSB_MBD_PORT",
    "LSB_SBD_PORT",
];

/// The Basalt keywords of the daemons' Prometheus endpoints (`GET /metrics`): a port,
/// or 0 (the default, as unset) for none.
const METRICS_PORT_KEYS: [&str; 3] = [
    "BASALT_MBD_METRICS_PORT",
    "BASALT_LIM_METRICS_PORT",
    "BASALT_SBD_METRICS_PORT",
];

/// The assignments of `lsf.conf`, in file order; a key assigned twice keeps
/// its first position and its last value. Values are unquoted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LsfConf {
    entries: Vec<(String, String)>,
}

impl LsfConf {
    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Set `key` (replacing an earlier value).
    pub fn set(&mut self, key: &str, value: &str) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value.to_owned(),
            None => self.entries.push((key.to_owned(), value.to_owned())),
        }
    }

    /// Every assignment, in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    fn port(&self, key: &str, default: u16) -> u16 {
        self.get(key)
            .and_then(|v| v.trim().parse::<u16>().ok())
            .filter(|p| *p != 0)
            .unwrap_or(default)
    }

    fn optional_port(&self, key: &str) -> Option<u16> {
        self.get(key)
            .and_then(|v| v.trim().parse::<u16>().ok())
            .filter(|p| *p != 0)
    }

    /// `BASALT_MBD_METRICS_PORT`: where mbatchd serves `GET /metrics` (default: off).
    pub fn mbd_metrics_port(&self) -> Option<u16> {
        self.optional_port("BASALT_MBD_METRICS_PORT")
    }

    /// `BASALT_LIM_METRICS_PORT`: where the LIM serves `GET /metrics` (default: off).
    pub fn lim_metrics_port(&self) -> Option<u16> {
        self.optional_port("BASALT_LIM_METRICS_PORT")
    }

    /// `BASALT_SBD_METRICS_PORT`: where sbatchd serves `GET /metrics` (default: off).
    pub fn sbd_metrics_port(&self) -> Option<u16> {
        self.optional_port("BASALT_SBD_METRICS_PORT")
    }

    /// `LSF_LIM_PORT` (default 7869).
    pub fn lim_port(&self) -> u16 {
        self.port("LSF_LIM_PORT", DEFAULT_LIM_PORT)
    }

    /// `LSF_RES_PORT` (default 6878).
    pub fn res_port(&self) -> u16 {
        self.port("LSF_RES_PORT", DEFAULT_RES_PORT)
    }

    /// `LSB_MBD_PORT` (default 6881).
    pub fn mbd_port(&self) -> u16 {
        self.port("LSB_MBD_PORT", DEFAULT_MBD_PORT)
    }

    /// `LSB_SBD_PORT` (default 6882).
    pub fn sbd_port(&self) -> u16 {
        self.port("LSB_SBD_PORT", DEFAULT_SBD_PORT)
    }

    /// MultiCluster `LSB_MC_INITFAIL_RETRY` (default 6; a value that does not parse is
    /// the default): tries to start a forwarded job remotely before it is suspended.
    pub fn mc_initfail_retry(&self) -> u32 {
        self.get("LSB_MC_INITFAIL_RETRY")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(DEFAULT_MC_INITFAIL_RETRY)
    }

    /// MultiCluster `MC_PLUGIN_REMOTE_RESOURCE=Y` (`y`, `yes` too): forwarding considers
    /// the remote clusters' Boolean resources (default false).
    pub fn mc_plugin_remote_resource(&self) -> bool {
        self.get("MC_PLUGIN_REMOTE_RESOURCE").is_some_and(|v| {
            let v = v.trim();
            v.eq_ignore_ascii_case("y") || v.eq_ignore_ascii_case("yes")
        })
    }

    /// Basalt's `BASALT_MC_KEY`: the key file this cluster shares with its remote
    /// clusters, as written (see [`crate::mc_key_path`] for where it is).
    pub fn mc_key(&self) -> Option<String> {
        self.get("BASALT_MC_KEY")
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    }

    /// Basalt's `BASALT_MC_POLL_MS`: how often mbatchd asks each remote cluster for its
    /// queues and its jobs' states, in milliseconds (default 1000, at least 50; a value
    /// that does not parse is the default).
    pub fn mc_poll_ms(&self) -> u64 {
        self.get("BASALT_MC_POLL_MS")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(DEFAULT_MC_POLL_MS, |ms| ms.max(MIN_MC_POLL_MS))
    }

    fn positive(&self, key: &str) -> Option<u64> {
        self.get(key)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|n| *n > 0)
    }

    /// LSF's `LSB_MAX_JOB_DISPATCH_PER_SESSION`: in Basalt, whose passes run whenever
    /// something changes rather than in sessions, the most start orders mbatchd has
    /// under way at once (sent to an sbatchd, not yet answered); a pass places no more
    /// jobs past it until answers come. Unset: [`DEFAULT_MAX_JOB_DISPATCH`].
    pub fn max_job_dispatch(&self) -> u64 {
        self.positive("LSB_MAX_JOB_DISPATCH_PER_SESSION")
            .unwrap_or(DEFAULT_MAX_JOB_DISPATCH)
    }

    /// Basalt's `BASALT_MAX_CONNS`: the most connections a daemon holds at once (unset:
    /// from its open-file limit).
    pub fn max_conns(&self) -> Option<u64> {
        self.positive("BASALT_MAX_CONNS")
    }

    /// Basalt's `BASALT_MAX_CONNS_PER_HOST`: the most connections a daemon holds from one
    /// address (unset: 1024).
    pub fn max_conns_per_host(&self) -> Option<u64> {
        self.positive("BASALT_MAX_CONNS_PER_HOST")
    }

    /// Basalt's `BASALT_CONN_IDLE_TIMEOUT`: seconds after which a daemon closes a
    /// connection that has no request under way (unset: 120).
    pub fn conn_idle_timeout(&self) -> Option<u64> {
        self.positive("BASALT_CONN_IDLE_TIMEOUT")
    }

    /// Basalt's `BASALT_MAX_REQUEST_MEMORY`: MiB of request bodies a daemon reads at once
    /// (unset: 512).
    pub fn max_request_memory_mb(&self) -> Option<u64> {
        self.positive("BASALT_MAX_REQUEST_MEMORY")
    }

    /// Basalt's `BASALT_CRED_TTL`: seconds a request's credential stays good either side
    /// of the receiver's clock (unset: 30).
    pub fn cred_ttl(&self) -> Option<u64> {
        self.positive("BASALT_CRED_TTL")
    }

    fn list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .map(|v| {
                v.split_whitespace()
                    .map(|t| t.trim_matches(|c| c == '"' || c == '\''))
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `LSF_MASTER_LIST` split on blanks; empty when unset.
    pub fn master_list(&self) -> Vec<String> {
        self.list("LSF_MASTER_LIST")
    }

    /// `LSF_SERVER_HOSTS` split on blanks; empty when unset.
    pub fn server_hosts(&self) -> Vec<String> {
        self.list("LSF_SERVER_HOSTS")
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parse the value part of an assignment (everything after `=`).
fn parse_value(after: &str) -> Result<String, String> {
    let trimmed = after.trim_start();
    if let Some(q) = trimmed.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let body = &trimmed[1..];
        let Some(end) = body.find(q) else {
            return Err(format!("unterminated {q} quote"));
        };
        let rest = body[end + 1..].trim();
        if !rest.is_empty() && !rest.starts_with('#') {
            return Err(format!("unexpected text `{rest}` after the quoted value"));
        }
        return Ok(body[..end].to_owned());
    }
    // An unquoted value ends at a `#` that follows a blank.
    let mut prev_blank = false;
    for (i, c) in after.char_indices() {
        if c == '#' && prev_blank {
            return Ok(after[..i].trim().to_owned());
        }
        prev_blank = c.is_whitespace();
    }
    Ok(after.trim().to_owned())
}

/// Parse `lsf.conf`.
pub(crate) fn parse(ctx: &mut Ctx<'_>, text: &str) -> LsfConf {
    let mut conf = LsfConf::default();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let (no, mut line) = match pending.take() {
            Some((no, mut acc)) => {
                acc.push_str(raw.trim_start());
                (no, acc)
            }
            None => (i + 1, raw.to_owned()),
        };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(body) = line.trim_end().strip_suffix('\\') {
            line = body.to_owned();
            pending = Some((no, line));
            continue;
        }
        assign(ctx, &mut conf, no, line.trim());
    }
    if let Some((no, line)) = pending {
        assign(ctx, &mut conf, no, line.trim());
    }
    conf
}

fn assign(ctx: &mut Ctx<'_>, conf: &mut LsfConf, no: usize, line: &str) {
    let line = match line.strip_prefix("export") {
        Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
        _ => line,
    };
    let Some((key, after)) = line.split_once('=') else {
        ctx.err(no, format!("expected KEY=VALUE, found `{line}`"));
        return;
    };
    let key = key.trim();
    if !is_identifier(key) {
        ctx.err(
            no,
            format!("bad variable name `{key}` (expected KEY=VALUE)"),
        );
        return;
    }
    let value = match parse_value(after) {
        Ok(v) => v,
        Err(e) => {
            ctx.err(no, format!("{key}: {e}"));
            return;
        }
    };
    if PORT_KEYS.contains(&key) {
        match value.trim().parse::<u16>() {
            Ok(p) if p != 0 => {}
            _ => ctx.err(
                no,
                format!("{key}: expected a port number 1-65535, found `{value}`"),
            ),
        }
    }
    if METRICS_PORT_KEYS.contains(&key) && value.trim().parse::<u16>().is_err() {
        ctx.err(
            no,
            format!("{key}: expected a port number 0-65535 (0: no endpoint), found `{value}`"),
        );
    }
    check_multicluster(ctx, no, key, &value);
    check_chkpnt(ctx, no, key, &value);
    check_serving(ctx, no, key, &value);
    crate::not_applied::check_entry(ctx, crate::not_applied::LSF_CONF, "", key, &value, no);
    conf.set(key, &value);
}

/// The MultiCluster keywords whose accessor falls back to a default: a value it would
/// not read is an error naming the line (a `BASALT_MC_POLL_MS` below the minimum, a
/// warning), so a typo does not silently become the default.
fn check_multicluster(ctx: &mut Ctx<'_>, no: usize, key: &str, value: &str) {
    let v = value.trim();
    if v.is_empty() {
        return;
    }
    match key {
        "LSB_MC_INITFAIL_RETRY" if v.parse::<u32>().is_err() => ctx.err(
            no,
            format!("{key}: expected a non-negative integer, found `{value}`"),
        ),
        "BASALT_MC_POLL_MS" => match v.parse::<u64>() {
            Err(_) => ctx.err(
                no,
                format!("{key}: expected a number of milliseconds, found `{value}`"),
            ),
            Ok(ms) if ms < MIN_MC_POLL_MS => ctx.warn(
                no,
                format!("{key} = {ms} is below the minimum; {MIN_MC_POLL_MS} ms is used"),
            ),
            Ok(_) => {}
        },
        "MC_PLUGIN_REMOTE_RESOURCE"
            if !matches!(v.to_ascii_uppercase().as_str(), "Y" | "YES" | "N" | "NO") =>
        {
            ctx.err(no, format!("{key}: expected Y or N, found `{value}`"));
        }
        _ => {}
    }
}

/// The keywords bounding what a daemon serves (connections, request memory, credential
/// life): each a positive integer, or an error naming the line.
fn check_serving(ctx: &mut Ctx<'_>, no: usize, key: &str, value: &str) {
    let v = value.trim();
    if v.is_empty() {
        return;
    }
    let what = match key {
        "BASALT_MAX_CONNS" | "BASALT_MAX_CONNS_PER_HOST" => "a positive number of connections",
        "BASALT_CONN_IDLE_TIMEOUT" | "BASALT_CRED_TTL" => "a positive number of seconds",
        "BASALT_MAX_REQUEST_MEMORY" => "a positive number of MiB",
        "LSB_MAX_JOB_DISPATCH_PER_SESSION" => "a positive number of jobs",
        _ => return,
    };
    if v.parse::<u64>().ok().filter(|n| *n > 0).is_none() {
        ctx.err(no, format!("{key}: expected {what}, found `{value}`"));
    }
}

/// Checkpointing keywords sbatchd reads (a value it could not use is an error naming the
/// line): `BASALT_CHKPNT_TIMEOUT` (seconds an echkpnt or erestart method may take,
/// default 60), `BASALT_CHKPNT_SIGNAL` (the built-in default method's signal, default
/// WINCH), `LSB_ECHKPNT_METHOD` (a method name).
fn check_chkpnt(ctx: &mut Ctx<'_>, no: usize, key: &str, value: &str) {
    let v = value.trim();
    if v.is_empty() {
        return;
    }
    match key {
        "BASALT_CHKPNT_TIMEOUT" if v.parse::<u32>().ok().filter(|s| *s > 0).is_none() => ctx.err(
            no,
            format!("{key}: expected a positive number of seconds, found `{value}`"),
        ),
        "BASALT_CHKPNT_SIGNAL" if basalt_core::job::signal_number(v).is_none() => {
            ctx.err(
                no,
                format!("{key}: expected a signal name or number, found `{value}`"),
            );
        }
        "LSB_ECHKPNT_METHOD" if v.contains('/') || v.contains(char::is_whitespace) => {
            ctx.err(
                no,
                format!("{key}: expected a method name, found `{value}`"),
            );
        }
        _ => {}
    }
}

/// Parse one `lsf.conf` file on its own (libbat's `ls_readconfenv`): its assignments,
/// or every malformed line.
pub fn parse_file(file: &std::path::Path, text: &str) -> Result<LsfConf, crate::ConfigErrors> {
    let mut diag = crate::error::Diag::default();
    let conf = parse(&mut diag.file(file), text);
    if diag.errors.is_empty() {
        Ok(conf)
    } else {
        Err(crate::ConfigErrors(diag.errors, diag.warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Diag;
    use std::path::Path;

    fn parse_str(text: &str) -> (LsfConf, Diag) {
        let mut d = Diag::default();
        let c = parse(&mut d.file(Path::new("lsf.conf")), text);
        (c, d)
    }

    #[test]
    fn checkpoint_keywords_with_values_sbatchd_cannot_use_are_errors_naming_the_line() {
        let (_, d) = parse_str(
            "BASALT_CHKPNT_TIMEOUT=0\nBASALT_CHKPNT_SIGNAL=NOPE\nLSB_ECHKPNT_METHOD=a/b\n\
             BASALT_CHKPNT_TIMEOUT=30\nBASALT_CHKPNT_SIGNAL=USR2\nLSB_ECHKPNT_METHOD=criu\n",
        );
        let text: String = d.errors.iter().map(|e| format!("{e}\n")).collect();
        for (line, key) in [
            (1, "BASALT_CHKPNT_TIMEOUT"),
            (2, "BASALT_CHKPNT_SIGNAL"),
            (3, "LSB_ECHKPNT_METHOD"),
        ] {
            assert!(text.contains(&format!("lsf.conf:{line}: {key}")), "{text}");
        }
        assert!(!text.contains("lsf.conf:4:"), "{text}");
        assert!(!text.contains("lsf.conf:5:"), "{text}");
        assert!(!text.contains("lsf.conf:6:"), "{text}");
    }

    #[test]
    fn serving_keywords_take_positive_integers_or_are_errors_naming_the_line() {
        let (c, d) = parse_str(
            "BASALT_MAX_CONNS=0\nBASALT_MAX_CONNS_PER_HOST=many\nBASALT_CONN_IDLE_TIMEOUT=-5\n\
             BASALT_MAX_REQUEST_MEMORY=1.5\nBASALT_CRED_TTL=\"\"x\nLSB_MAX_JOB_DISPATCH_PER_SESSION=0\n",
        );
        let text: String = d.errors.iter().map(|e| format!("{e}\n")).collect();
        for (line, key) in [
            (1, "BASALT_MAX_CONNS"),
            (2, "BASALT_MAX_CONNS_PER_HOST"),
            (3, "BASALT_CONN_IDLE_TIMEOUT"),
            (4, "BASALT_MAX_REQUEST_MEMORY"),
            (6, "LSB_MAX_JOB_DISPATCH_PER_SESSION"),
        ] {
            assert!(text.contains(&format!("lsf.conf:{line}: {key}")), "{text}");
        }
        assert_eq!(c.max_conns(), None);
        assert_eq!(c.max_job_dispatch(), DEFAULT_MAX_JOB_DISPATCH);
        let (c, d) = parse_str(
            "BASALT_MAX_CONNS=5000\nBASALT_MAX_CONNS_PER_HOST=64\nBASALT_CONN_IDLE_TIMEOUT=30\n\
             BASALT_MAX_REQUEST_MEMORY=256\nBASALT_CRED_TTL=10\nLSB_MAX_JOB_DISPATCH_PER_SESSION=500\n",
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(c.max_conns(), Some(5000));
        assert_eq!(c.max_conns_per_host(), Some(64));
        assert_eq!(c.conn_idle_timeout(), Some(30));
        assert_eq!(c.max_request_memory_mb(), Some(256));
        assert_eq!(c.cred_ttl(), Some(10));
        assert_eq!(c.max_job_dispatch(), 500);
    }

    #[test]
    fn shell_style_assignments() {
        let (c, d) = parse_str(
            "# comment\n\nLSF_CONFDIR=/etc/lsf\nexport LSF_LOG_MASK=LOG_WARNING\n\
             LSF_MASTER_LIST=\"hostA  hostB\"\nQ='a # b' # trailing\n\
             LSF_SERVERDIR=/opt/etc   # where daemons live\nHASH=a#b\n\
             LSF_CONFDIR=/other\nEMPTY=\nLONG=a \\\n  b\n",
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(c.get("LSF_CONFDIR"), Some("/other"));
        assert_eq!(c.get("LSF_LOG_MASK"), Some("LOG_WARNING"));
        assert_eq!(c.master_list(), vec!["hostA", "hostB"]);
        assert_eq!(c.get("Q"), Some("a # b"));
        assert_eq!(c.get("LSF_SERVERDIR"), Some("/opt/etc"));
        assert_eq!(c.get("HASH"), Some("a#b"));
        assert_eq!(c.get("EMPTY"), Some(""));
        assert_eq!(c.get("LONG"), Some("a b"));
        assert!(c.server_hosts().is_empty());
        assert_eq!(c.iter().next(), Some(("LSF_CONFDIR", "/other")));
    }

    #[test]
    fn metrics_ports() {
        let (c, d) = parse_str("BASALT_MBD_METRICS_PORT=9181\nBASALT_LIM_METRICS_PORT=0\n");
        assert!(d.errors.is_empty());
        assert_eq!(c.mbd_metrics_port(), Some(9181));
        assert_eq!(c.lim_metrics_port(), None);
        assert_eq!(c.sbd_metrics_port(), None);
        let (_, d) = parse_str("BASALT_SBD_METRICS_PORT=x\n");
        assert_eq!(d.errors.len(), 1);
    }

    #[test]
    fn ports() {
        let (c, d) = parse_str("LSF_LIM_PORT=16322\n");
        assert!(d.errors.is_empty());
        assert_eq!(c.lim_port(), 16322);
        assert_eq!(c.res_port(), 6878);
        assert_eq!(c.mbd_port(), 6881);
        assert_eq!(c.sbd_port(), 6882);

        let (_, d) = parse_str("LSF_LIM_PORT=abc\nLSB_MBD_PORT=0\nLSB_SBD_PORT=70000\n");
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![1, 2, 3]);
    }

    #[test]
    fn malformed_lines() {
        let (_, d) = parse_str("A=1\nthis is not an assignment\nB C=2\nD=\"open\n");
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 3, 4]);
        assert_eq!(
            d.errors[0].to_string(),
            "lsf.conf:2: expected KEY=VALUE, found `this is not an assignment`"
        );
    }

    #[test]
    fn multicluster_keywords() {
        let (c, d) = parse_str("");
        assert!(d.errors.is_empty());
        assert_eq!(c.mc_initfail_retry(), 6);
        assert!(!c.mc_plugin_remote_resource());
        assert_eq!(c.mc_key(), None);
        assert_eq!(c.mc_poll_ms(), 1000);

        let (c, d) = parse_str(
            "LSB_MC_INITFAIL_RETRY=3\nMC_PLUGIN_REMOTE_RESOURCE=yes\n\
             BASALT_MC_KEY=\"mc.key\"\nBASALT_MC_POLL_MS=200\n",
        );
        assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
        assert_eq!(c.mc_initfail_retry(), 3);
        assert!(c.mc_plugin_remote_resource());
        assert_eq!(c.mc_key().as_deref(), Some("mc.key"));
        assert_eq!(c.mc_poll_ms(), 200);

        let (c, d) = parse_str(
            "MC_PLUGIN_REMOTE_RESOURCE=N\nBASALT_MC_POLL_MS=10\nBASALT_MC_KEY=\nLSB_MC_INITFAIL_RETRY=\n",
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        let w: Vec<String> = d.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            w,
            vec!["lsf.conf:2: BASALT_MC_POLL_MS = 10 is below the minimum; 50 ms is used"]
        );
        assert!(!c.mc_plugin_remote_resource());
        assert_eq!(c.mc_poll_ms(), 50);
        assert_eq!(c.mc_key(), None);
        assert_eq!(c.mc_initfail_retry(), 6);

        // Values the accessors cannot read: errors at load, defaults from the accessors.
        let (c, d) = parse_str(
            "LSB_MC_INITFAIL_RETRY=often\nBASALT_MC_POLL_MS=fast\nMC_PLUGIN_REMOTE_RESOURCE=maybe\n",
        );
        let e: Vec<String> = d.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            e,
            vec![
                "lsf.conf:1: LSB_MC_INITFAIL_RETRY: expected a non-negative integer, found `often`",
                "lsf.conf:2: BASALT_MC_POLL_MS: expected a number of milliseconds, found `fast`",
                "lsf.conf:3: MC_PLUGIN_REMOTE_RESOURCE: expected Y or N, found `maybe`",
            ]
        );
        assert_eq!(c.mc_initfail_retry(), 6);
        assert_eq!(c.mc_poll_ms(), 1000);
        assert!(!c.mc_plugin_remote_resource());
    }
}
