//! `bpeek` — show the output of a running job (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bpeek};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bpeek::main(batch::argv())
}
