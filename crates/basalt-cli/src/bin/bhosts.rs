//! `bhosts` — show batch server hosts (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bqueues};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bqueues::bhosts_main(batch::argv())
}
