//! The start-up every daemon `main` (lim, sbatchd, mbatchd) shares: the common flags
//! (`-H` host, `-d` envdir, `-C` check, `-V` version) parsed once with clap, and the
//! steps around loading the configuration (the version line, the `-C` report, logging
//! with the configuration's warnings, the async runtime, the last error). Each `main`
//! keeps only its own flags and what it does with the configuration.

use basalt_config::Config;
use clap::Parser;
use std::fmt::Display;
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags every daemon takes; a daemon's own `Args` embeds them with
/// `#[command(flatten)]`. The help of `-H` names the daemon, so it is given to
/// [`parse`].
#[derive(clap::Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct DaemonFlags {
    /// The host this daemon plays (a name from lsf.cluster.<cluster>); default: this machine's name.
    #[arg(short = 'H', long = "host")]
    pub host: Option<String>,
    /// Directory holding lsf.conf (default: $LSF_ENVDIR, else /etc).
    #[arg(short = 'd', long = "envdir")]
    pub envdir: Option<PathBuf>,
    /// Check the configuration files, report every problem, and exit.
    #[arg(short = 'C', long = "check")]
    pub check: bool,
    /// Print the version and exit.
    #[arg(short = 'V', long = "version")]
    pub version: bool,
}

impl DaemonFlags {
    /// The configuration directory: `-d`, else [`crate::envdir`].
    pub fn envdir(&self) -> PathBuf {
        self.envdir.clone().unwrap_or_else(crate::envdir)
    }

    /// `-V`: print the product line and say to exit with success.
    pub fn version_exit(&self) -> Option<ExitCode> {
        if !self.version {
            return None;
        }
        eprintln!("{}", basalt_core::version::product_line());
        Some(ExitCode::SUCCESS)
    }
}

/// Parse a daemon's command line like `A::parse()` (errors, `--help` and their exit
/// codes are clap's), with `host_help` as the help of `-H`.
pub fn parse<A: Parser>(host_help: &'static str) -> A {
    try_parse_from(host_help, std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// [`parse`] of the given arguments (the first is the program name), errors returned.
pub fn try_parse_from<A, I, T>(host_help: &'static str, args: I) -> Result<A, clap::Error>
where
    A: Parser,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = A::command().mut_arg("host", |a| a.help(host_help));
    let mut matches = cmd.try_get_matches_from_mut(args)?;
    A::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd))
}

/// `-C`: print the configuration's warnings (checks of its own may follow).
pub fn print_check_warnings<W: Display>(warnings: &[W]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

/// `-C` found nothing wrong: say so and exit with success.
pub fn check_passed() -> ExitCode {
    eprintln!("No errors found.");
    ExitCode::SUCCESS
}

/// Start logging `daemon` for `host` ([`crate::init_daemon_tracing`]: stderr, and
/// `LSF_LOGDIR/<daemon>.log.<host>` when set) and log the configuration's warnings.
pub fn start_logging<W: Display>(
    daemon: &str,
    host: Option<&str>,
    config: &Config,
    warnings: &[W],
) {
    crate::init_daemon_tracing(config, daemon, host);
    for w in warnings {
        tracing::warn!("configuration: {w}");
    }
}

/// The daemons' async runtime: multi-threaded, two workers, I/O and time enabled.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// The async runtime of a daemon that only relays (res): one thread, I/O and time
/// enabled (blocking work, such as a terminal's reads, still goes to tokio's blocking
/// pool).
pub fn light_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// The main of a daemon that reads the base configuration (`lsf.conf`,
/// `lsf.shared`, `lsf.cluster.<cluster>`: lim, res): `-V`, the configuration (errors:
/// not starting), `-C` (warnings and the cluster key checked), logging, then `run` with
/// the configuration and the `-m` host; its error is reported as [`report_failure`] does.
/// `E` is the daemon's error (shown with its whole chain, `{:#}`).
pub fn base_daemon_main<E: Display>(
    daemon: &str,
    flags: &DaemonFlags,
    run: impl FnOnce(std::sync::Arc<Config>, Option<&str>) -> Result<(), E>,
) -> ExitCode {
    if let Some(code) = flags.version_exit() {
        return code;
    }
    let loaded = match basalt_config::load_lim(&flags.envdir()) {
        Ok(l) => l,
        Err(errors) => {
            eprintln!("{daemon}: configuration errors, not starting:\n{errors}");
            return ExitCode::FAILURE;
        }
    };
    if flags.check {
        print_check_warnings(&loaded.warnings);
        // The daemons do not start without a usable cluster key: say so now.
        if let Err(e) = crate::cluster_keys(&loaded.config) {
            eprintln!("{daemon}: {e}");
            return ExitCode::FAILURE;
        }
        return check_passed();
    }
    let config = std::sync::Arc::new(loaded.config);
    start_logging(daemon, flags.host.as_deref(), &config, &loaded.warnings);
    // The daemon's DaemonControl service answers through this process's handle.
    let control = crate::control::Control::for_process();
    match run(config, flags.host.as_deref()) {
        Ok(()) => match control.finish() {
            None => ExitCode::SUCCESS,
            Some(e) => {
                report_failure(daemon, format_args!("cannot restart in place: {e}"));
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            report_failure(daemon, format_args!("{e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// A daemon stops on an error: log it and print `<daemon>: <error>` on stderr. Give
/// an anyhow error as `format_args!("{e:#}")` to print its whole chain.
pub fn report_failure(daemon: &str, e: impl Display) {
    tracing::error!("{e}");
    eprintln!("{daemon}: {e}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Parser, Debug)]
    #[command(name = "d", disable_version_flag = true)]
    struct Args {
        #[command(flatten)]
        daemon: DaemonFlags,
        #[arg(long = "own")]
        own: bool,
    }

    #[test]
    fn common_and_own_flags() {
        let a: Args = try_parse_from("Host help", ["d", "-H", "hostA", "-d", "/e", "-C", "--own"])
            .expect("parse");
        assert_eq!(a.daemon.host.as_deref(), Some("hostA"));
        assert_eq!(a.daemon.envdir(), PathBuf::from("/e"));
        assert!(a.daemon.check && !a.daemon.version && a.own);
        let v: Args = try_parse_from("Host help", ["d", "-V"]).expect("parse");
        assert!(v.daemon.version && v.daemon.host.is_none());
        assert!(try_parse_from::<Args, _, _>("Host help", ["d", "--bogus"]).is_err());
        let help = try_parse_from::<Args, _, _>("Host help", ["d", "--help"])
            .expect_err("help")
            .to_string();
        assert!(help.contains("Host help"), "{help}");
    }
}
