//! `blimits` — show the usage of resource allocation limits (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, blimits};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    blimits::main(batch::argv())
}
