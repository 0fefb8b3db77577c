//! `bsub` — submit a batch job (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bsub};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bsub::main(batch::argv())
}
