//! `lsinfo` — the cluster's resources, host types and host models (lsf.shared).

use basalt_cli::lim_cmds::{self, InfoOpts};
use basalt_cli::{fail, load_config, print_version};
use clap::Parser;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "lsinfo",
    disable_version_flag = true,
    about = "Display load-sharing configuration information"
)]
struct Args {
    /// Long format for resources.
    #[arg(short = 'l')]
    long: bool,
    /// Only resources.
    #[arg(short = 'r')]
    resources: bool,
    /// Only host types.
    #[arg(short = 't')]
    types: bool,
    /// Only host models.
    #[arg(short = 'm')]
    models: bool,
    /// Only host models (all of them).
    #[arg(short = 'M')]
    all_models: bool,
    /// Print the version and exit.
    #[arg(short = 'V')]
    version: bool,
    /// Resource names.
    names: Vec<String>,
}

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    let args = Args::parse();
    if args.version {
        return print_version();
    }
    let config = match load_config("lsinfo") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = InfoOpts {
        resources_only: args.resources || !args.names.is_empty(),
        types_only: args.types,
        models_only: args.models || args.all_models,
        long: args.long,
        names: args.names,
    };
    let (text, unknown) = lim_cmds::lsinfo(&config, &opts);
    print!("{text}");
    for n in &unknown {
        eprintln!("{n}: Resource name not found");
    }
    if unknown.is_empty() {
        ExitCode::SUCCESS
    } else {
        fail()
    }
}
