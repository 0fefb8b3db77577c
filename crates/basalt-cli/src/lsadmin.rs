//! `lsadmin`: LIM administration (cli-output.md §7, cli-contract.md §10 and row 22).
//!
//! Supported subcommands:
//! * `showconf lim [-h host ... | all] [host ...]` — a header line
//!   `LIM configuration at <ctime>` (`LIM configuration for host <h> at <ctime>` for each
//!   named host) and then only `    KEY = VALUE` lines: every assignment of `lsf.conf`
//!   in file order, plus the effective value of a few LIM settings the file leaves at
//!   their defaults (`LSF_ENVDIR`, `LSF_CONFDIR`, `LSF_LIM_PORT`, `LSF_UNIT_FOR_LIMITS`).
//!   toil and bcbio read `LSF_UNIT_FOR_LIMITS` from it. Every host of a Basalt cluster
//!   reads the same `LSF_ENVDIR`, so the file read here is the one each named host's LIM
//!   uses; named hosts must be in `lsf.cluster.<cluster>`.
//! * `ckconfig [-v]` — loads `lsf.conf`, `lsf.shared` and `lsf.cluster.<cluster>`
//!   ([`basalt_config::load_lim`]) and prints LSF's check report on stderr:
//!   `Checking configuration files ...`, a blank line, then `No errors found.`, the
//!   warnings and `There are warning errors.`, or every error and
//!   `There are fatal errors.` (exit 255).
//! * `-h` (usage on stderr, exit 0) and `-V` (version on stderr, exit 0).
//!
//! * `limstartup [-f] [host ... | all]`, `limshutdown [-f] [host ... | all]`,
//!   `limrestart [-v] [-f] [host ... | all]` — through the daemons of each host
//!   ([`crate::hostctl`]): a start is asked of the host's sbatchd (systemd's unit when
//!   systemd runs the host), a shutdown or restart of the LIM itself, which checks
//!   the files before it restarts. No host: this host. Lines `Restart LIM on <hostA>
//!   ...... done` on stderr.
//! * `reconfig [-v] [-f]` — the check of `ckconfig`, then a restart of every host's LIM
//!   (LSF's meaning); fatal errors stop it before any LIM is touched.
//!
//! * `limlock [-l seconds]`, `limunlock` — lock (for a while) or unlock the LIM of the
//!   host the command runs on, through its `DaemonControl` service: `Host is locked`
//!   (`Host is locked for N seconds`), `Host is unlocked` on stdout; a locked host shows
//!   `lockU` in lsload and `closed_Lock` in bhosts, gets no job, and its sbatchd
//!   suspends the batch jobs running there. LSF's refusals on stderr (`ls_lockhost: Host
//!   is already locked`, `ls_unlockhost: Host is not locked`), exit 255.
//! * `resstartup [-f] [host ... | all]`, `resshutdown [-f] [host ... | all]`,
//!   `resrestart [-f] [host ... | all]` — RES of each host, as the `lim*` ones: a start
//!   asked of the host's LIM or sbatchd, a shutdown or restart of RES itself (its tasks
//!   run on until they end). `Shut down RES on <hostA> ...... done` on stderr.
//!
//! The other subcommands of LSF's lsadmin (`limdebug`, `limtime`, `resdebug`,
//! `restime`, `reslogon`, `reslogoff`, `expire`, `resowners`) are recognised and refused
//! by name with the reason (`lsadmin: reslogon: not supported by Basalt: ...`) and exit
//! 255, so that a script never believes a daemon's logging was changed.
//!
//! Inputs: argv, `LSF_ENVDIR`. Outputs: stdout (the `showconf` report), stderr (the
//! check report, errors), LSF's exit codes.

use crate::batch::params;
use crate::batch::timefmt::{self, ToTm};
use basalt_config::{Config, ConfigErrors, Loaded};
use basalt_proto::common::{ControlOp, Daemon};
use basalt_proto::mbatchd::KeyValue;
use std::process::ExitCode;

/// lsadmin's usage text.
pub const USAGE: &str = "Usage: lsadmin [-h] [-V] subcommand ...
Subcommands:
    showconf lim [-h host_name ... | all]
    ckconfig [-v]
    reconfig [-v] [-f]
    limstartup [-f] [host_name ... | all]
    limshutdown [-f] [host_name ... | all]
    limrestart [-v] [-f] [host_name ... | all]
    limlock [-l time_seconds]
    limunlock
    resstartup [-f] [host_name ... | all]
    resshutdown [-f] [host_name ... | all]
    resrestart [-f] [host_name ... | all]
Not supported by Basalt:
    limdebug, limtime, resdebug, restime, reslogon, reslogoff, expire, resowners
";

/// LSF subcommands Basalt recognises but does not perform, with the reason.
pub const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "limdebug",
        "the daemons' log level is BASALT_LOG (e.g. BASALT_LOG=debug), set when they start",
    ),
    (
        "resdebug",
        "the daemons' log level is BASALT_LOG (e.g. BASALT_LOG=debug), set when they start",
    ),
    (
        "limtime",
        "there is no timing log; the daemons' metrics (basalt_*) carry their timings",
    ),
    (
        "restime",
        "there is no timing log; the daemons' metrics (basalt_*) carry their timings",
    ),
    (
        "reslogon",
        "RES keeps no task accounting file (lsf.acct); its log records every task",
    ),
    (
        "reslogoff",
        "RES keeps no task accounting file (lsf.acct); its log records every task",
    ),
    ("expire", "there is no licence to expire"),
    (
        "resowners",
        "RES serves the cluster's users, not a list of owners",
    ),
];

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Usage on stderr, exit 0.
    Help,
    /// Version on stderr, exit 0.
    Version,
    /// `showconf lim`, for these hosts (empty: the configuration without a host).
    ShowconfLim { hosts: Vec<String> },
    /// `ckconfig [-v]`.
    Ckconfig { verbose: bool },
    /// `limstartup`, `limshutdown`, `limrestart` of these hosts.
    Lim {
        op: ControlOp,
        hosts: Vec<String>,
        verbose: bool,
        force: bool,
    },
    /// `reconfig [-v] [-f]`: check, then restart every LIM.
    Reconfig { verbose: bool, force: bool },
    /// `limlock [-l seconds]` (0: until unlocked) of this host's LIM.
    LimLock { seconds: u32 },
    /// `limunlock` of this host's LIM.
    LimUnlock,
    /// `resstartup`, `resshutdown`, `resrestart` of these hosts.
    Res {
        op: ControlOp,
        hosts: Vec<String>,
        force: bool,
    },
    /// A known LSF subcommand Basalt does not perform, and why.
    Unsupported(String, &'static str),
}

/// Why the command line was refused (message for stderr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

/// Parse lsadmin's arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Request, UsageError> {
    // A global option before the subcommand.
    if let Some(first) = args.first() {
        match first.as_str() {
            "-h" | "--help" => return Ok(Request::Help),
            "-V" => return Ok(Request::Version),
            s if s.starts_with('-') => {
                return Err(UsageError(format!(
                    "illegal option -- {}",
                    s.trim_start_matches('-')
                )));
            }
            _ => {}
        }
    }
    let Some((sub, rest)) = args.split_first() else {
        return Err(UsageError("no subcommand given".into()));
    };
    match sub.as_str() {
        "showconf" => {
            let Some((daemon, tail)) = rest.split_first() else {
                return Err(UsageError(
                    "showconf: say which daemon: showconf lim".into(),
                ));
            };
            if daemon != "lim" {
                let hint = if daemon == "mbd" {
                    " (badmin showconf mbd shows mbatchd's)"
                } else {
                    ""
                };
                return Err(UsageError(format!(
                    "showconf: unknown daemon <{daemon}>: only <lim> is known here{hint}"
                )));
            }
            let mut hosts = Vec::new();
            for a in tail {
                match a.as_str() {
                    // `-h "hostA hostB"` or `-h hostA hostB`: the names follow.
                    "-h" => {}
                    s if s.starts_with('-') => {
                        return Err(UsageError(format!(
                            "showconf: illegal option -- {}",
                            s.trim_start_matches('-')
                        )));
                    }
                    s => hosts.extend(s.split_whitespace().map(str::to_owned)),
                }
            }
            Ok(Request::ShowconfLim { hosts })
        }
        "ckconfig" => {
            let mut verbose = false;
            for a in rest {
                match a.as_str() {
                    "-v" => verbose = true,
                    s => return Err(UsageError(format!("ckconfig: unexpected argument <{s}>"))),
                }
            }
            Ok(Request::Ckconfig { verbose })
        }
        "limstartup" | "limshutdown" | "limrestart" | "reconfig" => {
            let mut hosts = Vec::new();
            let (mut verbose, mut force) = (false, false);
            for a in rest {
                match a.as_str() {
                    "-v" => verbose = true,
                    "-f" => force = true,
                    s if s.starts_with('-') => {
                        return Err(UsageError(format!(
                            "{sub}: illegal option -- {}",
                            s.trim_start_matches('-')
                        )));
                    }
                    s if sub == "reconfig" => {
                        return Err(UsageError(format!(
                            "reconfig: unexpected argument <{s}> (it restarts every LIM)"
                        )));
                    }
                    s => hosts.push(s.to_owned()),
                }
            }
            let op = match sub.as_str() {
                "reconfig" => return Ok(Request::Reconfig { verbose, force }),
                "limstartup" => ControlOp::Startup,
                "limshutdown" => ControlOp::Shutdown,
                _ => ControlOp::Restart,
            };
            Ok(Request::Lim {
                op,
                hosts,
                verbose,
                force,
            })
        }
        "limlock" => {
            let mut seconds = 0;
            let mut it = rest.iter();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "-l" => {
                        let v = it.next().ok_or_else(|| {
                            UsageError("limlock: option requires an argument -- l".into())
                        })?;
                        seconds = v.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                            UsageError(format!(
                                "limlock: <{v}>: the time must be a positive number of seconds"
                            ))
                        })?;
                    }
                    s if s.starts_with('-') => {
                        return Err(UsageError(format!(
                            "limlock: illegal option -- {}",
                            s.trim_start_matches('-')
                        )));
                    }
                    s => {
                        return Err(UsageError(format!(
                            "limlock: unexpected argument <{s}> (it locks the host it runs on)"
                        )));
                    }
                }
            }
            Ok(Request::LimLock { seconds })
        }
        "limunlock" => match rest.first() {
            None => Ok(Request::LimUnlock),
            Some(s) => Err(UsageError(format!(
                "limunlock: unexpected argument <{s}> (it unlocks the host it runs on)"
            ))),
        },
        "resstartup" | "resshutdown" | "resrestart" => {
            let mut hosts = Vec::new();
            let mut force = false;
            for a in rest {
                match a.as_str() {
                    "-f" => force = true,
                    s if s.starts_with('-') => {
                        return Err(UsageError(format!(
                            "{sub}: illegal option -- {}",
                            s.trim_start_matches('-')
                        )));
                    }
                    s => hosts.push(s.to_owned()),
                }
            }
            let op = match sub.as_str() {
                "resstartup" => ControlOp::Startup,
                "resshutdown" => ControlOp::Shutdown,
                _ => ControlOp::Restart,
            };
            Ok(Request::Res { op, hosts, force })
        }
        "help" | "?" => Ok(Request::Help),
        s => match UNSUPPORTED.iter().find(|(n, _)| *n == s) {
            Some((name, why)) => Ok(Request::Unsupported((*name).to_owned(), why)),
            None => Err(UsageError(format!("Invalid command <{s}>"))),
        },
    }
}

/// The cluster hosts `names` designate (`all` = every host), canonicalised; an unknown
/// name is an error naming it.
pub fn resolve_hosts(config: &Config, names: &[String]) -> Result<Vec<String>, String> {
    crate::hostctl::named(config, names, false)
        .map_err(|n| format!("showconf: Bad host name <{n}>"))
}

/// The `KEY = VALUE` pairs `showconf lim` prints: lsf.conf in file order, then the
/// effective values of LIM settings the file does not set.
pub fn lim_conf(config: &Config) -> Vec<KeyValue> {
    let kv = |k: &str, v: String| KeyValue {
        key: k.to_owned(),
        value: v,
    };
    let mut out: Vec<KeyValue> = config
        .lsf_conf
        .iter()
        .map(|(k, v)| kv(k, v.to_owned()))
        .collect();
    let defaults = [
        ("LSF_ENVDIR", config.envdir.display().to_string()),
        ("LSF_CONFDIR", config.confdir.display().to_string()),
        ("LSF_LIM_PORT", config.lsf_conf.lim_port().to_string()),
        ("LSF_UNIT_FOR_LIMITS", "KB".to_owned()),
    ];
    for (k, v) in defaults {
        if !out.iter().any(|e| e.key == k) {
            out.push(kv(k, v));
        }
    }
    out
}

/// `lsadmin showconf lim`: one report, or one per named host.
pub fn showconf_lim(config: &Config, hosts: &[String], tm: ToTm, now: i64) -> String {
    let at = timefmt::ctime(&tm(now));
    let kvs = lim_conf(config);
    if hosts.is_empty() {
        return params::key_values(&format!("LIM configuration at {at}"), &kvs);
    }
    hosts
        .iter()
        .map(|h| params::key_values(&format!("LIM configuration for host <{h}> at {at}"), &kvs))
        .collect()
}

/// The report of `ckconfig` (for stderr) and whether it found fatal errors.
pub fn check_report(
    result: &Result<Loaded, ConfigErrors>,
    verbose: bool,
    envdir: &std::path::Path,
) -> (String, bool) {
    let mut out = String::from("Checking configuration files ...\n\n");
    match result {
        Err(errors) => {
            for e in &errors.0 {
                out.push_str(&format!("{e}\n"));
            }
            out.push_str("There are fatal errors.\n");
            (out, true)
        }
        Ok(l) => {
            if verbose {
                let c = &l.config;
                for f in [
                    envdir.join("lsf.conf"),
                    c.confdir.join("lsf.shared"),
                    c.confdir.join(format!("lsf.cluster.{}", c.cluster_name)),
                ] {
                    out.push_str(&format!("Reading configuration from {}\n", f.display()));
                }
                for w in &l.warnings {
                    out.push_str(&format!("{w}\n"));
                }
            }
            if l.warnings.is_empty() {
                out.push_str("No errors found.\n");
            } else {
                out.push_str("There are warning errors.\n");
                if !verbose {
                    out.push_str("(lsadmin ckconfig -v lists them)\n");
                }
            }
            (out, false)
        }
    }
}

/// `ckconfig`'s check and report (stderr); whether the files load.
fn files_load(verbose: bool) -> bool {
    let envdir = basalt_runtime::envdir();
    let result = basalt_config::load_lim(&envdir);
    let (text, fatal) = check_report(&result, verbose, &envdir);
    eprint!("{text}");
    !fatal
}

/// `limlock` (`Some(seconds)`, 0: until unlocked) or `limunlock` (`None`) of the LIM of
/// the host this runs on.
fn lock_main(seconds: Option<u32>) -> ExitCode {
    let config = match crate::load_config("lsadmin") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let what = if seconds.is_some() {
        "ls_lockhost"
    } else {
        "ls_unlockhost"
    };
    let me = crate::batch::local_host(&config);
    if basalt_runtime::canonical_host(&config, &me).is_none() {
        eprintln!(
            "{what}: this host <{me}> is not a host of cluster {}",
            config.cluster_name
        );
        return crate::fail();
    }
    crate::batch::run(async {
        let auth = crate::auth(&config);
        match basalt_runtime::control::lock(&config, &me, seconds, &auth).await {
            Ok(said) => {
                println!("{said}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                eprintln!("{what}: {why}");
                crate::fail()
            }
        }
    })
}

/// `lsadmin`.
pub fn main(args: Vec<String>) -> ExitCode {
    let req = match parse(&args) {
        Ok(r) => r,
        Err(UsageError(msg)) => {
            eprintln!("lsadmin: {msg}");
            eprint!("{USAGE}");
            return crate::fail();
        }
    };
    match req {
        Request::Help => {
            eprint!("{USAGE}");
            ExitCode::SUCCESS
        }
        Request::Version => crate::print_version(),
        Request::Unsupported(sub, why) => {
            eprintln!("lsadmin: {sub}: not supported by Basalt: {why}");
            crate::fail()
        }
        Request::LimLock { seconds } => lock_main(Some(seconds)),
        Request::LimUnlock => lock_main(None),
        Request::Res { op, hosts, force } => {
            let config = match crate::load_config("lsadmin") {
                Ok(c) => c,
                Err(code) => return code,
            };
            crate::hostctl::command("lsadmin", &config, &hosts, Daemon::Res, op, force)
        }
        Request::Ckconfig { verbose } => {
            if files_load(verbose) {
                ExitCode::SUCCESS
            } else {
                crate::fail()
            }
        }
        Request::Lim {
            op,
            hosts,
            verbose,
            force,
        } => {
            // A restart checks the files first, as LSF's does (each LIM checks again).
            if op == ControlOp::Restart && !files_load(verbose) {
                return crate::fail();
            }
            let config = match crate::load_config("lsadmin") {
                Ok(c) => c,
                Err(code) => return code,
            };
            crate::hostctl::command("lsadmin", &config, &hosts, Daemon::Lim, op, force)
        }
        Request::Reconfig { verbose, force } => {
            if !files_load(verbose) {
                return crate::fail();
            }
            let config = match crate::load_config("lsadmin") {
                Ok(c) => c,
                Err(code) => return code,
            };
            if !crate::hostctl::confirm("Do you really want to restart LIMs on all hosts?", force) {
                return crate::fail();
            }
            let all: Vec<String> = config
                .cluster
                .hosts
                .iter()
                .map(|h| h.name.clone())
                .collect();
            crate::hostctl::run(&config, &all, Daemon::Lim, ControlOp::Restart)
        }
        Request::ShowconfLim { hosts } => {
            let config = match crate::load_config("lsadmin") {
                Ok(c) => c,
                Err(code) => return code,
            };
            let hosts = match resolve_hosts(&config, &hosts) {
                Ok(h) => h,
                Err(msg) => {
                    eprintln!("lsadmin: {msg}");
                    return crate::fail();
                }
            };
            print!(
                "{}",
                showconf_lim(&config, &hosts, timefmt::local, timefmt::now())
            );
            ExitCode::SUCCESS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_config::embedded::{DefaultCluster, DefaultHost};

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

    fn config(dir: &std::path::Path) -> TestResult<(std::path::PathBuf, Config)> {
        let hosts = ["hostA", "hostB"]
            .iter()
            .map(|n| DefaultHost {
                name: (*n).to_owned(),
                address: None,
                server: true,
            })
            .collect();
        let envdir = DefaultCluster::new("basalt", "root", hosts).write(dir)?;
        let config = basalt_config::load_lim(&envdir)?.config;
        Ok((envdir, config))
    }

    #[test]
    fn parses_subcommands() {
        assert_eq!(parse(&s(&["-h"])), Ok(Request::Help));
        assert_eq!(parse(&s(&["-V"])), Ok(Request::Version));
        assert_eq!(
            parse(&s(&["showconf", "lim"])),
            Ok(Request::ShowconfLim { hosts: vec![] })
        );
        assert_eq!(
            parse(&s(&["showconf", "lim", "-h", "hostA hostB", "hostC"])),
            Ok(Request::ShowconfLim {
                hosts: s(&["hostA", "hostB", "hostC"])
            })
        );
        assert_eq!(
            parse(&s(&["ckconfig", "-v"])),
            Ok(Request::Ckconfig { verbose: true })
        );
        assert_eq!(
            parse(&s(&["limrestart", "hostA"])),
            Ok(Request::Lim {
                op: ControlOp::Restart,
                hosts: s(&["hostA"]),
                verbose: false,
                force: false
            })
        );
        assert_eq!(
            parse(&s(&["limshutdown", "-f", "all"])),
            Ok(Request::Lim {
                op: ControlOp::Shutdown,
                hosts: s(&["all"]),
                verbose: false,
                force: true
            })
        );
        assert_eq!(
            parse(&s(&["limstartup"])),
            Ok(Request::Lim {
                op: ControlOp::Startup,
                hosts: vec![],
                verbose: false,
                force: false
            })
        );
        assert_eq!(
            parse(&s(&["reconfig", "-v", "-f"])),
            Ok(Request::Reconfig {
                verbose: true,
                force: true
            })
        );
        assert!(parse(&s(&["reconfig", "hostA"])).is_err());
        assert!(parse(&s(&["limrestart", "-x"])).is_err());
        assert_eq!(parse(&s(&["limlock"])), Ok(Request::LimLock { seconds: 0 }));
        assert_eq!(
            parse(&s(&["limlock", "-l", "30"])),
            Ok(Request::LimLock { seconds: 30 })
        );
        assert!(parse(&s(&["limlock", "-l"])).is_err());
        assert!(parse(&s(&["limlock", "-l", "0"])).is_err());
        assert!(parse(&s(&["limlock", "hostB"])).is_err());
        assert_eq!(parse(&s(&["limunlock"])), Ok(Request::LimUnlock));
        assert!(parse(&s(&["limunlock", "hostB"])).is_err());
        assert_eq!(
            parse(&s(&["resshutdown", "hostA", "hostB"])),
            Ok(Request::Res {
                op: ControlOp::Shutdown,
                hosts: s(&["hostA", "hostB"]),
                force: false
            })
        );
        assert_eq!(
            parse(&s(&["resstartup", "-f", "all"])),
            Ok(Request::Res {
                op: ControlOp::Startup,
                hosts: s(&["all"]),
                force: true
            })
        );
        assert_eq!(
            parse(&s(&["resrestart"])),
            Ok(Request::Res {
                op: ControlOp::Restart,
                hosts: vec![],
                force: false
            })
        );
        match parse(&s(&["reslogon"])) {
            Ok(Request::Unsupported(name, why)) => {
                assert_eq!(name, "reslogon");
                assert!(why.contains("lsf.acct"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert!(parse(&s(&[])).is_err());
        assert!(parse(&s(&["showconf"])).is_err());
        assert!(parse(&s(&["showconf", "mbd"])).is_err());
        assert!(parse(&s(&["frobnicate"])).is_err());
        assert!(parse(&s(&["-x", "ckconfig"])).is_err());
        assert!(parse(&s(&["ckconfig", "extra"])).is_err());
    }

    #[test]
    fn showconf_is_a_header_then_key_value_lines() -> TestResult {
        let dir = tempfile::tempdir()?;
        let (envdir, c) = config(dir.path())?;
        let out = showconf_lim(&c, &[], timefmt::utc, 1_795_339_535);
        let mut lines = out.lines();
        assert_eq!(
            lines.next(),
            Some("LIM configuration at Sun Nov 22 09:25:35 2026")
        );
        let mut keys = Vec::new();
        for l in lines {
            let body = l.strip_prefix("    ").unwrap_or_default();
            let (k, v) = body.split_once(" = ").unwrap_or_default();
            assert!(
                !k.is_empty() && !v.is_empty() && !k.contains(' '),
                "line {l:?} is not `    KEY = VALUE`"
            );
            keys.push(k.to_owned());
        }
        for k in [
            "LSF_ENVDIR",
            "LSF_CONFDIR",
            "LSF_LIM_PORT",
            "LSF_UNIT_FOR_LIMITS",
        ] {
            assert_eq!(keys.iter().filter(|x| *x == k).count(), 1, "{k} in\n{out}");
        }
        // lsf.conf's own assignments come first, in file order.
        let first: Vec<&str> = c.lsf_conf.iter().map(|(k, _)| k).collect();
        assert_eq!(&keys[..first.len()], &first[..]);
        if !first.contains(&"LSF_ENVDIR") {
            assert!(
                out.contains(&format!("    LSF_ENVDIR = {}\n", envdir.display())),
                "{out}"
            );
        }

        let hosts = resolve_hosts(&c, &s(&["all"]))?;
        assert_eq!(hosts, s(&["hostA", "hostB"]));
        let two = showconf_lim(&c, &s(&["hostB"]), timefmt::utc, 1_795_339_535);
        assert!(
            two.starts_with("LIM configuration for host <hostB> at Sun Nov 22 09:25:35 2026\n    "),
            "{two}"
        );
        assert_eq!(
            resolve_hosts(&c, &s(&["nosuch"])),
            Err("showconf: Bad host name <nosuch>".into())
        );
        Ok(())
    }

    #[test]
    fn ckconfig_reports() -> TestResult {
        let dir = tempfile::tempdir()?;
        let (envdir, _) = config(dir.path())?;
        let ok = basalt_config::load_lim(&envdir);
        let (text, fatal) = check_report(&ok, false, &envdir);
        assert!(!fatal);
        assert_eq!(
            text,
            "Checking configuration files ...\n\nNo errors found.\n"
        );
        let (text, _) = check_report(&ok, true, &envdir);
        assert!(
            text.contains(&format!(
                "Reading configuration from {}\n",
                envdir.join("lsf.conf").display()
            )),
            "{text}"
        );
        assert!(text.ends_with("No errors found.\n"), "{text}");

        // Break lsf.shared: the report names the problem and says the errors are fatal.
        std::fs::remove_file(envdir.join("lsf.shared"))?;
        let bad = basalt_config::load_lim(&envdir);
        let (text, fatal) = check_report(&bad, false, &envdir);
        assert!(fatal);
        assert!(
            text.starts_with("Checking configuration files ...\n\n"),
            "{text}"
        );
        assert!(text.contains("lsf.shared"), "{text}");
        assert!(text.ends_with("There are fatal errors.\n"), "{text}");
        Ok(())
    }
}
