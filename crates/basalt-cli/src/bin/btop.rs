//! `btop` — move a pending job to the top of its queue (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, jobctl};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    jobctl::move_main("btop", batch::argv())
}
