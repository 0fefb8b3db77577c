//! `bslots` — the slots backfill jobs could use now (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bslots};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bslots::main(batch::argv())
}
