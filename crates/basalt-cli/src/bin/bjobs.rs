//! `bjobs` — list batch jobs (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bjobs};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bjobs::main(batch::argv())
}
