//! `badmin` — batch administration (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, badmin};
use std::process::ExitCode;

fn main() -> ExitCode {
    badmin::main(batch::argv())
}
