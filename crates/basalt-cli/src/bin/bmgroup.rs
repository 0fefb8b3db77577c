//! `bmgroup` — show host groups (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bmgroup};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bmgroup::main(batch::argv())
}
