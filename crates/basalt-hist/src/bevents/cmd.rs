//! `bevents replay`'s configuration (lsb.* files, or a default cluster built from the log's
//! names) and bevents's `main`.

use super::*;

/// Basalt's embedded default configuration, with the queues and hosts the log names.
pub(super) fn default_config(plan: &ReplayPlan) -> Result<SchedConfig, String> {
    use basalt_config::embedded::{DefaultCluster, DefaultHost};
    let (queues, mut hosts) = names_in(plan);
    if hosts.is_empty() {
        hosts.insert("localhost".into());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let top = std::env::temp_dir().join(format!("bevents-{}-{nanos}", std::process::id()));
    let result = (|| -> Result<SchedConfig, String> {
        let spec = DefaultCluster::new(
            "basalt",
            "root",
            hosts
                .iter()
                .map(|h| DefaultHost {
                    name: h.clone(),
                    address: Some(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)),
                    server: true,
                })
                .collect(),
        );
        let envdir = spec.write(&top).map_err(|e| e.to_string())?;
        let loaded = basalt_config::load(&envdir).map_err(|e| e.to_string())?;
        let qfile = loaded.config.batch_confdir().join("lsb.queues");
        let mut text = std::fs::read_to_string(&qfile).map_err(|e| e.to_string())?;
        let mut added = false;
        for q in &queues {
            if !loaded.config.batch.queues.iter().any(|c| &c.name == q) {
                let _ = write!(text, "\nBegin Queue\nQUEUE_NAME = {q}\nEnd Queue\n");
                added = true;
            }
        }
        let config = if added {
            std::fs::write(&qfile, text).map_err(|e| e.to_string())?;
            basalt_config::load(&envdir)
                .map_err(|e| e.to_string())?
                .config
        } else {
            loaded.config
        };
        Ok(SchedConfig::from_config(&config))
    })();
    let _ = std::fs::remove_dir_all(&top);
    result
}

pub(super) fn run_replay(
    a: &Args,
    logdir: &Path,
    config: Option<&basalt_config::Config>,
) -> ExitCode {
    let now = timefmt::now();
    let until = match &a.until {
        None => None,
        Some(v) => {
            let t = timefmt::local(now);
            match parse_time(v, now, (t.year, t.mon, t.mday), timefmt::local_to_epoch) {
                Ok(t) => Some(t),
                Err(e) => {
                    eprintln!("bevents: {e}");
                    return basalt_cli::fail();
                }
            }
        }
    };
    let plan = match replay_plan(logdir, until) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bevents: {e}");
            return basalt_cli::fail();
        }
    };
    let cfg = match config {
        Some(c) => SchedConfig::from_config(c),
        None => match default_config(&plan) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("bevents: cannot build the default configuration: {e}");
                return basalt_cli::fail();
            }
        },
    };
    let r = match replay(cfg, &plan, until) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bevents: {e}");
            return basalt_cli::fail();
        }
    };
    if a.json {
        println!("{}", summary_json(&r, a.long));
    } else {
        print!("{}", summary_text(&r, a.long, timefmt::local));
    }
    if r.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(PROBLEMS)
    }
}

// ------------------------------------------------------------------ main

/// `bevents`.
pub fn main(args: Vec<String>) -> ExitCode {
    let a = match parse_args(&args) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            eprint!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Version) => return basalt_cli::print_version(),
        Err(e) => {
            eprintln!("bevents: {e}");
            eprint!("{USAGE}");
            return basalt_cli::fail();
        }
    };
    // The configuration: needed for the default log directory, and for replay's queues
    // and hosts when LSF_ENVDIR is set.
    let env_set = std::env::var_os("LSF_ENVDIR").is_some_and(|v| !v.is_empty());
    let config = if env_set && (a.cmd == Cmd::Replay || (a.logdir.is_none() && a.files.is_empty()))
    {
        let envdir = basalt_runtime::envdir();
        match basalt_config::load(&envdir) {
            Ok(l) => Some(l.config),
            Err(e) => {
                eprintln!(
                    "bevents: cannot read the configuration in {}:\n{e}",
                    envdir.display()
                );
                return basalt_cli::fail();
            }
        }
    } else {
        None
    };
    let logdir = match (&a.logdir, &config) {
        (Some(d), _) => Some(d.clone()),
        (None, Some(c)) if a.files.is_empty() => Some(c.logdir()),
        _ => None,
    };
    if a.files.is_empty() && logdir.is_none() {
        eprintln!("bevents: no log directory: give -d LOGDIR or set LSF_ENVDIR");
        return basalt_cli::fail();
    }
    if let Some(d) = &logdir
        && !d.is_dir()
    {
        eprintln!("bevents: {}: not a directory", d.display());
        return basalt_cli::fail();
    }
    match a.cmd {
        Cmd::Replay => match &logdir {
            Some(d) => run_replay(&a, d, config.as_ref()),
            None => basalt_cli::fail(),
        },
        Cmd::Verify | Cmd::Json => {
            let files = if a.files.is_empty() {
                let d = logdir.as_deref().unwrap_or(Path::new("."));
                match logdir_files(d) {
                    Ok(f) if a.cmd == Cmd::Json => f
                        .into_iter()
                        .filter(|p| kind_of(p) != FileKind::Other)
                        .collect(),
                    Ok(f) => f,
                    Err(e) => {
                        eprintln!("bevents: {e}");
                        return basalt_cli::fail();
                    }
                }
            } else {
                a.files.clone()
            };
            if a.cmd == Cmd::Verify {
                let dir = if a.files.is_empty() {
                    logdir.as_deref()
                } else {
                    None
                };
                verify(&a, &files, dir)
            } else {
                dump(&a, &files)
            }
        }
    }
}
