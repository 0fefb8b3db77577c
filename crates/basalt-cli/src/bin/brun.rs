//! `brun` — force a pending job to run (administrators) (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, jobctl};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    jobctl::brun_main(batch::argv())
}
