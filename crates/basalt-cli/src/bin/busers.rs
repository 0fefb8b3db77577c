//! `busers` — users' job slots and limits (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, busers};
use std::process::ExitCode;

fn main() -> ExitCode {
    busers::main(batch::argv())
}
