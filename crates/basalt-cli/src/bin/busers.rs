//! `busers` — users' job slots and limits (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, busers};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    busers::main(batch::argv())
}
