//! LSF's user and administrator commands: the LIM-level `ls*` commands and the
//! batch commands (`bsub`, `bjobs`, `bkill`, ... in [`batch`]), `lsadmin`
//! ([`lsadmin`]), and the commands that run tasks through RES ([`res_cmds`]: `lsrun`).
//!
//! Each command is a small binary (`src/bin/<name>.rs`) that parses LSF's flags,
//! asks the daemons, and prints exactly what LSF prints
//! (`lsf-reference/cli-output.md`), plus `-json` where asked. The formatting
//! lives here as pure functions from replies to text so it is unit-tested
//! byte for byte.
//!
//! Every command's `main` first calls [`closed_output::install`]: a command whose
//! reader goes away (`bjobs | head -1`) ends quietly by SIGPIPE, as LSF's do.
//!
//! Inputs: argv, `LSF_ENVDIR` (configuration), gRPC replies. Outputs: stdout
//! (data), stderr (errors), LSF's exit codes.

pub mod args;
pub mod batch;
pub mod closed_output;
pub mod hostctl;
pub mod lim_cmds;
pub mod lim_res;
pub mod lsadmin;
pub mod numfmt;
pub mod res_cmds;

use std::process::ExitCode;
use std::time::Duration;

/// How long a command waits for a daemon to answer.
pub const RPC_TIMEOUT: Duration = Duration::from_secs(5);

/// LSF commands exit with -1 (255) on failure.
pub fn fail() -> ExitCode {
    ExitCode::from(255)
}

/// Print the version line (LSF writes it to stderr) and exit 0.
pub fn print_version() -> ExitCode {
    eprintln!("{}", basalt_core::version::product_line());
    ExitCode::SUCCESS
}

/// Load the configuration the LIM-level commands need, or print every problem.
pub fn load_config(cmd: &str) -> Result<basalt_config::Config, ExitCode> {
    let envdir = basalt_runtime::envdir();
    match basalt_config::load_lim(&envdir) {
        Ok(l) => Ok(l.config),
        Err(e) => {
            eprintln!(
                "{cmd}: cannot read the configuration in {}:\n{e}",
                envdir.display()
            );
            Err(fail())
        }
    }
}

/// A current-thread runtime for a command's few RPCs (Err: the command's failure exit,
/// the reason said).
fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("cannot start the runtime: {e}");
            fail()
        })
}

/// Run `f` on a current-thread runtime (a command's few RPCs).
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, ExitCode> {
    Ok(runtime()?.block_on(f))
}

/// [`block_on`] for a command that relays its standard input: a read of it still
/// waiting when `f` is done (a terminal nobody types on) is left behind, not waited for.
pub fn block_on_leaving_reads<F: std::future::Future>(f: F) -> Result<F::Output, ExitCode> {
    let rt = runtime()?;
    let out = rt.block_on(f);
    rt.shutdown_background();
    Ok(out)
}

/// The credentials of the user running this command (made once per process; see
/// [`basalt_runtime::user_auth`]).
pub fn auth(config: &basalt_config::Config) -> basalt_runtime::Authenticator {
    static AUTH: std::sync::OnceLock<basalt_runtime::Authenticator> = std::sync::OnceLock::new();
    AUTH.get_or_init(|| basalt_runtime::user_auth(config))
        .clone()
}
