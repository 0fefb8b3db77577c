//! `bugroup` — show user groups (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bugroup};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bugroup::main(batch::argv())
}
