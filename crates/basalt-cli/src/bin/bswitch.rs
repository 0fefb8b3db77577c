//! `bswitch` — move pending or running jobs to another queue (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, jobctl};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    jobctl::bswitch_main(batch::argv())
}
