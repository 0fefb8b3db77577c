//! `badmin` — batch administration (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, badmin};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    badmin::main(batch::argv())
}
