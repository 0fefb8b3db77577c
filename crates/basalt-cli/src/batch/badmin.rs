//! `badmin`: `hclose hopen qclose qopen qact qinact reconfig mbdrestart ckconfig
//! showconf mbd showstatus hstartup hshutdown hrestart` (cli-output.md §7), and Basalt's
//! `whatif` ([`super::whatif`]). `showstatus` is LSF's summary of the cluster from
//! mbatchd's counts ([`params::showstatus`]).
//!
//! `reconfig` and `mbdrestart` check the files here, then ask mbatchd (which re-reads
//! everything with a full replay of lsb.events), then every batch host's sbatchd, which
//! re-reads lsb.* without a restart (load thresholds, SBD_SLEEP_TIME, job-start
//! settings); an sbatchd that cannot be reached gets a line saying so. `hstartup`,
//! `hshutdown` and `hrestart` go to each host's daemons ([`crate::hostctl`]): a start is
//! asked of the host's LIM, a shutdown or restart of sbatchd itself; running jobs go on
//! in every case.

use super::opts::{self, Item, Spec};
use super::params;
use super::timefmt;
use basalt_config::{ConfigErrors, Loaded};
use basalt_proto::common::{ControlOp, Daemon};
use basalt_proto::mbatchd::{
    CtlReply, HostCtlRequest, HostOp, HostsRequest, QueueCtlRequest, QueueOp, QueuesRequest,
    ReconfigRequest,
};
use std::process::ExitCode;

/// badmin's usage text.
pub const USAGE: &str = "Usage: badmin [-h] [-V] subcommand ...
Subcommands:
    hclose [-C comment] [host_name ... | all]
    hopen  [-C comment] [host_name ... | all]
    qclose [-C comment] [queue_name ... | all]
    qopen  [-C comment] [queue_name ... | all]
    qact   [-C comment] [queue_name ... | all]
    qinact [-C comment] [queue_name ... | all]
    reconfig [-v] [-f]
    mbdrestart [-v] [-f]
    ckconfig [-v]
    showconf mbd
    showstatus
    hstartup [-f] [host_name ... | all]
    hshutdown [-f] [host_name ... | all]
    hrestart [-f] [host_name ... | all]
    whatif --events file ... [--config envdir] [--baseline envdir] [--hosts spec]
           [--from time] [--to time] [--wake seconds] [--plot file.svg] [-json]
";

const SPEC: Spec = Spec {
    flags: &["h", "V", "v", "f"],
    valued: &["C"],
};

/// The configuration check of `reconfig`/`mbdrestart`/`ckconfig` (stderr text) and
/// whether it found fatal errors. Every file is checked in one run: the errors, and the
/// warnings of the same run whether or not there are errors. Keywords that are read but
/// not applied yet are always listed (file, line, keyword, why); the other warnings only
/// with `-v`.
pub fn check_report(result: &Result<Loaded, ConfigErrors>, verbose: bool) -> (String, bool) {
    let mut out = String::from("Checking configuration files ...\n\n");
    match result {
        Err(errors) => {
            // Every problem of the one load: the errors, then the warnings found with
            // them (the same ones a load without errors would list).
            for e in errors.errors() {
                out.push_str(&format!("{e}\n"));
            }
            let warnings = errors.warnings();
            for w in warnings.iter().filter(|w| verbose || w.not_applied) {
                out.push_str(&format!("{w}\n"));
            }
            out.push_str("There are fatal errors.\n");
            let hidden = !verbose && warnings.iter().any(|w| !w.not_applied);
            if hidden && warnings.iter().any(|w| w.not_applied) {
                out.push_str("(badmin ckconfig -v lists the other warnings)\n");
            } else if hidden {
                out.push_str("(badmin ckconfig -v lists the warnings)\n");
            }
            (out, true)
        }
        Ok(l) if l.warnings.is_empty() => {
            out.push_str("No errors found.\n");
            (out, false)
        }
        Ok(l) => {
            for w in l.warnings.iter().filter(|w| verbose || w.not_applied) {
                out.push_str(&format!("{w}\n"));
            }
            out.push_str("There are warning errors.\n");
            let hidden = !verbose && l.warnings.iter().any(|w| !w.not_applied);
            if hidden && l.warnings.iter().any(|w| w.not_applied) {
                out.push_str("(badmin ckconfig -v lists the other warnings)\n");
            } else if hidden {
                out.push_str("(badmin ckconfig -v lists them)\n");
            }
            (out, false)
        }
    }
}

/// Lines for an hclose/hopen reply (stderr) and whether any failed.
pub fn host_ctl_text(op: HostOp, reply: &CtlReply) -> (String, bool) {
    let word = if op == HostOp::Close { "Close" } else { "Open" };
    let mut out = String::new();
    let mut failed = false;
    for r in &reply.results {
        let tail = match (r.ok, r.message.is_empty()) {
            (true, true) => "done".to_owned(),
            (true, false) => format!("done : {}", r.message),
            (false, _) => {
                failed = true;
                r.message.clone()
            }
        };
        out.push_str(&format!("{word} <{}> ...... {tail}\n", r.name));
    }
    (out, failed)
}

/// Lines for a queue control reply: (stdout, stderr, failed).
pub fn queue_ctl_text(op: QueueOp, reply: &CtlReply) -> (String, String, bool) {
    let done = match op {
        QueueOp::Open => "opened",
        QueueOp::Close => "closed",
        QueueOp::Activate => "activated",
        QueueOp::Inactivate | QueueOp::Unspecified => "inactivated",
    };
    let (mut out, mut err, mut failed) = (String::new(), String::new(), false);
    for r in &reply.results {
        if r.ok {
            out.push_str(&format!("Queue <{}> is {done}\n", r.name));
        } else {
            failed = true;
            err.push_str(&format!("Queue <{}>: {}\n", r.name, r.message));
        }
    }
    (out, err, failed)
}

struct Parsed {
    sub: String,
    names: Vec<String>,
    comment: String,
    verbose: bool,
    force: bool,
}

fn parse(args: &[String]) -> Result<Parsed, ExitCode> {
    let items = match opts::parse(args, &SPEC, false) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("badmin: {e}");
            eprint!("{USAGE}");
            return Err(crate::fail());
        }
    };
    if let Some(code) = super::help_or_version(&items, USAGE) {
        return Err(code);
    }
    let mut words = Vec::new();
    let mut comment = String::new();
    let (mut verbose, mut force) = (false, false);
    for it in items {
        match it {
            Item::Arg(a) => words.push(a),
            Item::Opt(n, v) if n == "C" => comment = v.unwrap_or_default(),
            Item::Opt(n, _) if n == "v" => verbose = true,
            Item::Opt(n, _) if n == "f" => force = true,
            Item::Opt(..) => {}
        }
    }
    if words.is_empty() {
        eprint!("{USAGE}");
        return Err(crate::fail());
    }
    let sub = words.remove(0);
    Ok(Parsed {
        sub,
        names: words,
        comment,
        verbose,
        force,
    })
}

/// `hstartup`, `hshutdown`, `hrestart`.
fn sbatchd_ctl(p: &Parsed, op: ControlOp) -> ExitCode {
    let config = match super::load_config("badmin") {
        Ok(c) => c,
        Err(code) => return code,
    };
    crate::hostctl::command("badmin", &config, &p.names, Daemon::Sbatchd, op, p.force)
}

/// After mbatchd took `reconfig`: every batch host's sbatchd re-reads lsb.* (all at
/// once). Returns the hosts whose sbatchd could not, with why, by host name (each reads
/// the files when it next starts).
pub async fn reconfig_sbatchds(config: &basalt_config::Config) -> Vec<(String, String)> {
    let config = std::sync::Arc::new(config.clone());
    let auth = basalt_runtime::user_auth(&config);
    let mut asks = tokio::task::JoinSet::new();
    for h in config.cluster.hosts.iter().filter(|h| h.server) {
        let (config, auth, host) = (config.clone(), auth.clone(), h.name.clone());
        asks.spawn(async move {
            let r = basalt_runtime::control::request(
                &config,
                &host,
                Daemon::Sbatchd,
                ControlOp::Reconfig,
                &auth,
            )
            .await;
            (host, r)
        });
    }
    let mut failed: Vec<(String, String)> = Vec::new();
    while let Some(done) = asks.join_next().await {
        if let Ok((host, Err(why))) = done {
            failed.push((host, why));
        }
    }
    failed.sort();
    failed
}

/// [`reconfig_sbatchds`], a line on stderr for each sbatchd that could not.
async fn reconfig_sbatchds_said(config: &basalt_config::Config) {
    for (host, why) in reconfig_sbatchds(config).await {
        eprintln!(
            "{}{}",
            crate::hostctl::action_text(Daemon::Sbatchd, ControlOp::Reconfig, &host),
            crate::hostctl::outcome_text(&Err(why))
        );
    }
}

fn config_check(verbose: bool) -> bool {
    let result = basalt_runtime::load_batch_config(&basalt_runtime::envdir());
    let (text, fatal) = check_report(&result, verbose);
    eprint!("{text}");
    !fatal
}

/// `badmin`.
pub fn main(args: Vec<String>) -> ExitCode {
    // `whatif` reads files only: its own options.
    if args.first().map(String::as_str) == Some("whatif") {
        return super::whatif::main(&args[1..]);
    }
    let p = match parse(&args) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let host_op = match p.sub.as_str() {
        "hclose" => Some(HostOp::Close),
        "hopen" => Some(HostOp::Open),
        _ => None,
    };
    let queue_op = match p.sub.as_str() {
        "qclose" => Some(QueueOp::Close),
        "qopen" => Some(QueueOp::Open),
        "qact" => Some(QueueOp::Activate),
        "qinact" => Some(QueueOp::Inactivate),
        _ => None,
    };
    match p.sub.as_str() {
        "ckconfig" => {
            return if config_check(p.verbose) {
                ExitCode::SUCCESS
            } else {
                crate::fail()
            };
        }
        "reconfig" | "mbdrestart" => {
            if !config_check(p.verbose) {
                return crate::fail();
            }
        }
        "hstartup" => return sbatchd_ctl(&p, ControlOp::Startup),
        "hshutdown" => return sbatchd_ctl(&p, ControlOp::Shutdown),
        "hrestart" => return sbatchd_ctl(&p, ControlOp::Restart),
        "showstatus" => {
            if let Some(extra) = p.names.first() {
                eprintln!("badmin: showstatus: unexpected argument <{extra}>");
                return crate::fail();
            }
        }
        "showconf" => {
            if p.names.first().map(String::as_str) != Some("mbd") || p.names.len() != 1 {
                eprintln!(
                    "badmin: showconf: only <mbd> is known here (lsadmin showconf lim for the LIM)"
                );
                return crate::fail();
            }
        }
        _ if host_op.is_some() || queue_op.is_some() => {}
        other => {
            eprintln!("badmin: Invalid command <{other}>");
            eprint!("{USAGE}");
            return crate::fail();
        }
    }
    let config = match super::load_config("badmin") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        if p.sub == "showstatus" {
            let reply = match params::fetch(&config).await {
                Ok(r) => r,
                Err(code) => return code,
            };
            print!("{}", params::showstatus(&reply, timefmt::local));
            return ExitCode::SUCCESS;
        }
        if p.sub == "showconf" {
            let reply = match params::fetch(&config).await {
                Ok(r) => r,
                Err(code) => return code,
            };
            let local = params::required_conf(&config);
            print!(
                "{}",
                params::showconf_mbd(&reply, &local, timefmt::local, timefmt::now())
            );
            return ExitCode::SUCCESS;
        }
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        if p.sub == "reconfig" || p.sub == "mbdrestart" {
            let restart = p.sub == "mbdrestart";
            return match client.reconfig(ReconfigRequest { restart }).await {
                Ok(r) => {
                    let reply = r.into_inner();
                    let failed: Vec<_> = reply.results.iter().filter(|r| !r.ok).collect();
                    if failed.is_empty() {
                        println!(
                            "{}",
                            if restart {
                                "MBD restart initiated"
                            } else {
                                "Reconfiguration initiated"
                            }
                        );
                        reconfig_sbatchds_said(&config).await;
                        ExitCode::SUCCESS
                    } else {
                        for r in failed {
                            eprintln!("{}", r.message);
                        }
                        crate::fail()
                    }
                }
                Err(s) => {
                    eprintln!("{}", super::status_text(&s));
                    crate::fail()
                }
            };
        }
        if let Some(op) = host_op {
            let hosts = if p.names.is_empty() {
                vec![super::local_host(&config)]
            } else if p.names.iter().any(|n| n == "all") {
                match client.hosts(HostsRequest { hosts: vec![] }).await {
                    Ok(r) => r.into_inner().hosts.into_iter().map(|h| h.name).collect(),
                    Err(s) => {
                        eprintln!("{}", super::status_text(&s));
                        return crate::fail();
                    }
                }
            } else {
                p.names.clone()
            };
            let req = HostCtlRequest {
                op: op as i32,
                hosts,
                message: p.comment.clone(),
            };
            return match client.host_ctl(req).await {
                Ok(r) => {
                    let (text, failed) = host_ctl_text(op, &r.into_inner());
                    eprint!("{text}");
                    if failed {
                        crate::fail()
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                Err(s) => {
                    eprintln!("{}", super::status_text(&s));
                    crate::fail()
                }
            };
        }
        let Some(op) = queue_op else {
            return crate::fail();
        };
        let queues = if p.names.is_empty() || p.names.iter().any(|n| n == "all") {
            let all = p.names.iter().any(|n| n == "all");
            match client.queues(QueuesRequest { queues: vec![] }).await {
                Ok(r) => r
                    .into_inner()
                    .queues
                    .into_iter()
                    .filter(|q| all || q.is_default)
                    .map(|q| q.name)
                    .collect(),
                Err(s) => {
                    eprintln!("{}", super::status_text(&s));
                    return crate::fail();
                }
            }
        } else {
            p.names.clone()
        };
        let req = QueueCtlRequest {
            op: op as i32,
            queues,
            message: p.comment.clone(),
        };
        match client.queue_ctl(req).await {
            Ok(r) => {
                let (out, err, failed) = queue_ctl_text(op, &r.into_inner());
                print!("{out}");
                eprint!("{err}");
                if failed {
                    crate::fail()
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                crate::fail()
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_config::{ConfigError, Warning};
    use basalt_proto::mbatchd::CtlResult;
    use std::path::PathBuf;

    fn ctl(name: &str, ok: bool, msg: &str) -> CtlResult {
        CtlResult {
            name: name.into(),
            ok,
            message: msg.into(),
        }
    }

    #[test]
    fn host_and_queue_lines() {
        let reply = CtlReply {
            results: vec![
                ctl("vm", true, ""),
                ctl("h2", true, "host remains closed due to dispatch window; "),
                ctl(
                    "nope",
                    false,
                    "Bad host name, host group name or cluster name",
                ),
            ],
        };
        let (text, failed) = host_ctl_text(HostOp::Close, &reply);
        assert_eq!(
            text,
            "Close <vm> ...... done\nClose <h2> ...... done : host remains closed due to dispatch window; \nClose <nope> ...... Bad host name, host group name or cluster name\n"
        );
        assert!(failed);
        let (text, _) = host_ctl_text(
            HostOp::Open,
            &CtlReply {
                results: vec![ctl("vm", true, "")],
            },
        );
        assert_eq!(text, "Open <vm> ...... done\n");
        for (op, word) in [
            (QueueOp::Close, "closed"),
            (QueueOp::Open, "opened"),
            (QueueOp::Activate, "activated"),
            (QueueOp::Inactivate, "inactivated"),
        ] {
            let (out, err, failed) = queue_ctl_text(
                op,
                &CtlReply {
                    results: vec![ctl("lowq", true, "")],
                },
            );
            assert_eq!(out, format!("Queue <lowq> is {word}\n"));
            assert!(err.is_empty() && !failed);
        }
    }

    #[test]
    fn configuration_check_text() {
        let errors: Result<Loaded, ConfigErrors> = Err(ConfigErrors(
            vec![ConfigError {
                file: PathBuf::from("/c/lsb.queues"),
                line: 3,
                message: "bad PRIORITY".into(),
            }],
            Vec::new(),
        ));
        let (text, fatal) = check_report(&errors, false);
        assert!(fatal);
        assert_eq!(
            text,
            "Checking configuration files ...\n\n/c/lsb.queues:3: bad PRIORITY\nThere are fatal errors.\n"
        );
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let spec = basalt_config::embedded::DefaultCluster::new(
            "basalt",
            "nobody",
            vec![basalt_config::embedded::DefaultHost {
                name: "hostA".into(),
                address: None,
                server: true,
            }],
        );
        let envdir = spec
            .write(dir.path())
            .unwrap_or_else(|e| panic!("write: {e}"));
        let mut loaded = basalt_config::load(&envdir);
        let (text, fatal) = check_report(&loaded, false);
        assert!(!fatal);
        assert_eq!(
            text,
            "Checking configuration files ...\n\nNo errors found.\n"
        );
        if let Ok(l) = &mut loaded {
            l.warnings.push(Warning {
                file: PathBuf::from("/c/lsb.params"),
                line: 2,
                message: "unknown keyword FOO".into(),
                not_applied: false,
            });
        }
        let (text, fatal) = check_report(&loaded, true);
        assert!(!fatal);
        assert!(
            text.ends_with("/c/lsb.params:2: unknown keyword FOO\nThere are warning errors.\n")
        );
        let (text, _) = check_report(&loaded, false);
        assert!(!text.contains("FOO"), "{text}");
        assert!(
            text.ends_with("(badmin ckconfig -v lists them)\n"),
            "{text}"
        );
    }

    #[test]
    fn ckconfig_lists_every_keyword_read_but_not_applied_of_the_example_sets_without_v() {
        let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../config/examples");
        for set in ["openlava", "ibm"] {
            let mut loaded = basalt_config::load(&examples.join(set));
            let not_applied: Vec<String> = match &loaded {
                Ok(l) => l
                    .warnings
                    .iter()
                    .filter(|w| w.not_applied)
                    .map(ToString::to_string)
                    .collect(),
                Err(e) => panic!("{set}: {e}"),
            };
            // The examples' lsb.users JL/P column applies (a group's own row too; issue
            // 20), as MAX_JOBS does.
            assert!(
                !not_applied.iter().any(|w| w.contains("JL/P is read")),
                "{not_applied:#?}"
            );
            let (text, fatal) = check_report(&loaded, false);
            assert!(!fatal);
            let listed: Vec<&str> = text
                .lines()
                .filter(|l| l.contains(" is read but not applied"))
                .collect();
            assert_eq!(listed, not_applied, "{text}");
            if not_applied.is_empty() {
                // (Since issue 24 an example set can be applied whole.)
                assert!(text.ends_with("No errors found.\n"), "{text}");
                continue;
            }
            assert!(text.ends_with("There are warning errors.\n"), "{text}");
            // Other warnings wait for -v; the not-applied ones are still listed.
            if let Ok(l) = &mut loaded {
                l.warnings.push(Warning {
                    file: PathBuf::from("/c/lsb.params"),
                    line: 2,
                    message: "unknown keyword FOO".into(),
                    not_applied: false,
                });
            }
            let (text, _) = check_report(&loaded, false);
            assert!(
                !text.contains("FOO") && text.contains(&not_applied[0]),
                "{text}"
            );
            assert!(text.ends_with("(badmin ckconfig -v lists the other warnings)\n"));
        }
    }

    /// Issue 50 item 8: `badmin ckconfig` listed the warnings only once the fatal errors
    /// were fixed; one run must list every problem of every file: the errors, and with
    /// `-v` the warnings of lsb.params, lsb.queues and lsb.resources beside them.
    #[test]
    fn item8_ckconfig_reports_the_errors_and_the_warnings_of_every_file_in_one_run() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let spec = basalt_config::embedded::DefaultCluster::new(
            "basalt",
            "nobody",
            vec![basalt_config::embedded::DefaultHost {
                name: "hostA".into(),
                address: None,
                server: true,
            }],
        );
        let envdir = spec
            .write(dir.path())
            .unwrap_or_else(|e| panic!("write: {e}"));
        let batch = dir.path().join("conf/lsbatch/basalt/configdir");
        let edit = |file: &str, from: &str, to: &str| {
            let path = batch.join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(text.contains(from), "{file}: {from}");
            std::fs::write(&path, text.replacen(from, to, 1)).unwrap_or_else(|e| panic!("{e}"));
        };
        // An error (lsb.queues) and warnings in three files.
        edit(
            "lsb.queues",
            "PRIORITY     = 30",
            "PRIORITY     = 30\nRUNLIMIT = 10 abc",
        );
        edit(
            "lsb.queues",
            "PRIORITY     = 43",
            "PRIORITY     = 43\nHOSTS = hostA hostZ",
        );
        edit(
            "lsb.params",
            "DEFAULT_QUEUE",
            "NO_SUCH_KEYWORD = 1\nDEFAULT_QUEUE",
        );
        std::fs::write(
            batch.join("lsb.resources"),
            "Begin Limit\nNAME = l\nQUEUES = normal nosuchq\nSLOTS = 2\nEnd Limit\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let at = |file: &str, needle: &str| {
            let text = std::fs::read_to_string(batch.join(file)).unwrap_or_default();
            let line = text.lines().position(|l| l.contains(needle)).unwrap_or(0) + 1;
            format!("{}:{line}: ", batch.join(file).display())
        };
        let loaded = basalt_config::load(&envdir);
        let (text, fatal) = check_report(&loaded, true);
        assert!(fatal, "{text}");
        for (file, needle, says) in [
            ("lsb.queues", "RUNLIMIT = 10 abc", "RUNLIMIT: `abc`"),
            ("lsb.queues", "HOSTS = hostA hostZ", "`hostZ`"),
            ("lsb.params", "NO_SUCH_KEYWORD", "NO_SUCH_KEYWORD"),
            ("lsb.resources", "nosuchq", "`nosuchq`"),
        ] {
            let line = text
                .lines()
                .find(|l| l.starts_with(&at(file, needle)))
                .unwrap_or_default();
            assert!(line.contains(says), "{file}: {says} missing:\n{text}");
        }
        assert!(text.ends_with("There are fatal errors.\n"), "{text}");
        // Without -v the errors are listed, and the hint says what -v adds.
        let (text, _) = check_report(&loaded, false);
        assert!(
            text.contains("RUNLIMIT") && !text.contains("hostZ"),
            "{text}"
        );
        assert!(
            text.ends_with("There are fatal errors.\n(badmin ckconfig -v lists the warnings)\n"),
            "{text}"
        );
    }
}
