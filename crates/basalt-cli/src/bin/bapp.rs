//! `bapp` — application profiles and their jobs (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bapp};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bapp::main(batch::argv())
}
