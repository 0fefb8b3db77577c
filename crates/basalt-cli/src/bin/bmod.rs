//! `bmod` — change what a job was submitted with (logic in `basalt_cli::batch::bmod`).

use basalt_cli::batch;
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    batch::bmod::main(batch::argv())
}
