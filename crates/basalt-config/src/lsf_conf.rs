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

const PORT_KEYS: [&str; 4] = [
    "LSF_LIM_PORT",
    "LSF_RES_PORT",
    "LSB_MBD_PORT",
    "LSB_SBD_PORT",
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
    crate::not_applied::check_entry(ctx, crate::not_applied::LSF_CONF, "", key, &value, no);
    conf.set(key, &value);
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
}
