//! `bqueues` — show batch queues (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bqueues};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bqueues::bqueues_main(batch::argv())
}
