//! `bbot` — move a pending job to the bottom of its queue (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, jobctl};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    jobctl::move_main("bbot", batch::argv())
}
