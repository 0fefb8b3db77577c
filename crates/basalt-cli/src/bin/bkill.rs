//! `bkill` — kill or signal batch jobs (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, jobctl};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    jobctl::signal_main("bkill", batch::argv())
}
