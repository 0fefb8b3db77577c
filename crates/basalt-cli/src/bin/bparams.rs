//! `bparams` — show batch parameters (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, params};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    params::main(batch::argv())
}
