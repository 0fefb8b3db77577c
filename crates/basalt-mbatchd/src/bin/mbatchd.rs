//! `mbatchd` — the master batch daemon. Started (and restarted) by the master host's
//! sbatchd; runs in the foreground. Exit codes are LSF's: 201 the host is no longer
//! master, 202 reconfiguration/restart requested, 203 fatal error.

use anyhow::Context;
use basalt_runtime::daemon::{self, DaemonFlags};
use clap::Parser;
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(
    name = "mbatchd",
    disable_version_flag = true,
    about = "Basalt master batch daemon"
)]
struct Args {
    #[command(flatten)]
    daemon: DaemonFlags,
    /// Repair a corrupt lsb.events and exit: keep every intact record, move damaged lines
    /// (and a torn tail) to lsb.events.damaged.<time>, and print what was dropped.
    // display_order: listed before -V in the help, as it always was.
    #[arg(long = "recover", display_order = 3)]
    recover: bool,
}

fn main() -> std::process::ExitCode {
    let args: Args = daemon::parse(
        "The host this mbatchd runs for (a name from lsf.cluster.<cluster>); default: this machine's name",
    );
    let flags = &args.daemon;
    if let Some(code) = flags.version_exit() {
        return code;
    }
    let envdir = flags.envdir();
    let (loaded, config_problem) = match basalt_runtime::load_batch_config(&envdir) {
        Ok(l) => (l, None),
        // A broken file on disk must not stop the batch service at a restart or a
        // failover: run on the last configuration that was accepted, and say so.
        Err(errors) if !flags.check && !args.recover => match last_accepted(&envdir) {
            Ok(l) => (l, Some(errors.to_string())),
            Err(why) => {
                eprintln!("mbatchd: configuration errors, not starting:\n{errors}\n({why})");
                return std::process::ExitCode::from(205);
            }
        },
        Err(errors) => {
            eprintln!("mbatchd: configuration errors, not starting:\n{errors}");
            if flags.check {
                // -C: every problem of the check, the warnings too.
                daemon::print_check_warnings(errors.warnings());
            }
            return std::process::ExitCode::from(205);
        }
    };
    if flags.check {
        daemon::print_check_warnings(&loaded.warnings);
        return daemon::check_passed();
    }
    if args.recover {
        return recover(&loaded.config, flags.host.as_deref());
    }
    let snapshot_path = loaded.config.logdir().join(basalt_config::snapshot::FILE);
    let config = Arc::new(loaded.config.clone());
    basalt_runtime::init_daemon_tracing(&config, "mbatchd", flags.host.as_deref());
    match &config_problem {
        Some(errors) => {
            // run_with logs it too.
            eprintln!(
                "mbatchd: the configuration files do not load; running on the last accepted \
                 configuration ({}):\n{errors}",
                snapshot_path.display()
            );
        }
        None => {
            let now = basalt_runtime::time::now_secs();
            let snap = basalt_config::snapshot::Snapshot::of(&loaded, now);
            let same = basalt_config::snapshot::Snapshot::read(&snapshot_path)
                .is_ok_and(|old| old.files == snap.files);
            if !same && let Err(e) = snap.write_atomic(&snapshot_path) {
                tracing::warn!(
                    "cannot keep the accepted configuration in {}: {e}",
                    snapshot_path.display()
                );
            }
        }
    }
    for w in &loaded.warnings {
        tracing::warn!("configuration: {w}");
    }
    match run(config, flags.host.as_deref(), config_problem) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(code) => std::process::ExitCode::from(code),
    }
}

/// The last configuration mbatchd accepted: the snapshot in the log directory, found
/// through lsf.conf, lsf.shared and lsf.cluster (which must still load).
fn last_accepted(envdir: &std::path::Path) -> Result<basalt_config::Loaded, String> {
    let lim = basalt_config::load_lim(envdir)
        .map_err(|e| format!("lsf.conf, lsf.shared or lsf.cluster does not load either: {e}"))?;
    let path = lim.config.logdir().join(basalt_config::snapshot::FILE);
    let snap = basalt_config::snapshot::Snapshot::read(&path)
        .map_err(|e| format!("no accepted configuration to fall back on: {e}"))?;
    basalt_config::snapshot::load_snapshot(envdir, snap).map_err(|e| {
        format!(
            "the accepted configuration in {} does not load: {e}",
            path.display()
        )
    })
}

fn run(
    config: Arc<basalt_config::Config>,
    host: Option<&str>,
    config_problem: Option<String>,
) -> Result<(), u8> {
    let inner = || -> anyhow::Result<Result<(), basalt_mbatchd::MbdError>> {
        let me = basalt_runtime::local_host(&config, host)?;
        let addr = basalt_runtime::mbd_addr(&config, &me)?;
        let rt = daemon::runtime().context("starting the async runtime")?;
        // The port is bound only once the event-log lock is held (see `Listen`).
        rt.block_on(async move {
            Ok(basalt_mbatchd::run_with(
                config,
                &me,
                basalt_mbatchd::Listen::AfterLock(addr),
                basalt_runtime::shutdown_signal(),
                basalt_mbatchd::RunOptions { config_problem },
            )
            .await)
        })
    };
    match inner() {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            if e.level() == tracing::Level::ERROR {
                tracing::error!("{e}");
                eprintln!("mbatchd: {e}");
            } else {
                tracing::info!("exiting: {e}");
            }
            Err(e.exit_code() as u8)
        }
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("mbatchd: {e:#}");
            Err(basalt_mbatchd::EXIT_FATAL as u8)
        }
    }
}

/// `mbatchd --recover`: repair lsb.events under the event-log lock.
fn recover(config: &basalt_config::Config, host: Option<&str>) -> std::process::ExitCode {
    let logdir = config.logdir();
    let result = (|| -> anyhow::Result<basalt_eventlog::RecoverReport> {
        let me = basalt_runtime::local_host(config, host)?;
        let heartbeat = basalt_mbatchd::journal::Options::from_config(config).lock_heartbeat;
        let lock = basalt_mbatchd::journal::acquire_lock(
            &logdir,
            &me,
            heartbeat,
            heartbeat * (2 * basalt_mbatchd::journal::STALE_CHECKS + 2),
        )
        .context("a running mbatchd holds the event log; stop it first")?;
        let now = basalt_runtime::time::now_secs();
        let report = basalt_eventlog::recover_events(&logdir, now)
            .with_context(|| format!("recovering {}", logdir.join("lsb.events").display()))?;
        lock.release()?;
        Ok(report)
    })();
    match result {
        Ok(r) if r.clean() => {
            println!(
                "{} is intact ({} records); nothing to recover.",
                r.path.display(),
                r.kept
            );
            std::process::ExitCode::SUCCESS
        }
        Ok(r) => {
            println!(
                "{}: kept {} intact records, dropped {} line(s):",
                r.path.display(),
                r.kept,
                r.dropped.len() + usize::from(r.torn_tail.is_some())
            );
            for d in r.dropped.iter().chain(r.torn_tail.iter()) {
                println!(
                    "  line {} (byte offset {}): {}\n    {}",
                    d.line, d.offset, d.error, d.text
                );
            }
            if let Some(saved) = &r.saved_to {
                println!("The dropped lines are saved in {}.", saved.display());
            }
            println!("mbatchd can start again.");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mbatchd: {e:#}");
            std::process::ExitCode::from(basalt_mbatchd::EXIT_FATAL as u8)
        }
    }
}
