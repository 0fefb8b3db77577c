//! `basalt-hollow` — run hollow hosts (the scale harness's hosts, see the crate doc):
//! the real LIM and sbatchd of each host named, in this one process, with a simulated
//! load. A test and benchmark tool: `cargo xtask up --hollow N` starts it.

use anyhow::{Context, bail};
use basalt_hollow::{HollowLoad, HollowOptions, Pattern};
use clap::Parser;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(name = "basalt-hollow", about = "Run hollow hosts (scale tests)")]
struct Args {
    /// Directory holding lsf.conf (default: $LSF_ENVDIR, else /etc).
    #[arg(short = 'd', long = "envdir")]
    envdir: Option<PathBuf>,
    /// The hosts to run (names from lsf.cluster.<cluster>).
    hosts: Vec<String>,
    /// A file of host names, one a line (added to those given).
    #[arg(long = "hosts-file")]
    hosts_file: Option<PathBuf>,
    /// The load pattern: idle, busy or walk.
    #[arg(long = "load", default_value = "idle")]
    load: Pattern,
    /// CPUs each hollow host reports (its slots when MXJ is `!`).
    #[arg(long = "ncpus", default_value_t = 4)]
    ncpus: u32,
    /// Hosts this process starts a second (several processes of one cluster share
    /// the machine: give each its part).
    #[arg(long = "start-rate", default_value_t = basalt_hollow::START_RATE,
          value_parser = clap::value_parser!(usize))]
    start_rate: usize,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("basalt-hollow: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let envdir = args.envdir.clone().unwrap_or_else(basalt_runtime::envdir);
    let loaded = basalt_config::load(&envdir)
        .map_err(|e| anyhow::anyhow!("configuration errors, not starting:\n{e}"))?;
    let mut hosts = args.hosts.clone();
    if let Some(f) = &args.hosts_file {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        hosts.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned),
        );
    }
    if hosts.is_empty() {
        bail!("no host given (names, or --hosts-file)");
    }
    if args.start_rate == 0 {
        bail!("--start-rate must be at least 1 host a second");
    }
    let config = Arc::new(loaded.config);
    basalt_runtime::daemon::start_logging(
        "hollow",
        hosts.first().map(String::as_str),
        &config,
        &loaded.warnings,
    );
    raise_fd_limit(hosts.len())?;
    let opts = HollowOptions {
        load: HollowLoad::new(args.load, args.ncpus),
        sbatchd: basalt_sbatchd::Options {
            supervise_mbatchd: false,
            runner: basalt_sbatchd::JobRunner::Hollow,
            ..Default::default()
        },
        start_rate: args.start_rate,
    };
    let rt = basalt_runtime::daemon::runtime().context("starting the async runtime")?;
    rt.block_on(basalt_hollow::run_hosts(
        config,
        &hosts,
        &opts,
        basalt_runtime::shutdown_signal(),
    ))?;
    Ok(())
}

/// Descriptors one hollow host may hold: its two listeners, its job database (and its
/// journal), its lock and replay files, and its connections (to the master LIM and
/// mbatchd, from them, and probes).
const FDS_PER_HOST: u64 = 24;

/// Each hollow host holds a few sockets and files: take every descriptor the hard
/// limit allows, and as root raise the hard limit too (within the kernel's
/// `fs.nr_open`) when the hosts need more; refuse to start when they cannot have it.
fn raise_fd_limit(hosts: usize) -> anyhow::Result<()> {
    let need = (hosts as u64).saturating_mul(FDS_PER_HOST) + 1024;
    let now = basalt_runtime::serve::raise_open_files(need).context("reading RLIMIT_NOFILE")?;
    if now < need {
        bail!(
            "{hosts} hollow hosts need about {need} open files ({FDS_PER_HOST} each), but this process may open {now}: raise the limit (ulimit -n, LimitNOFILE) or run fewer hosts per process"
        );
    }
    Ok(())
}
