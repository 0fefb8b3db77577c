//! `bapp` — application profiles and their jobs (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bapp};
use std::process::ExitCode;

fn main() -> ExitCode {
    bapp::main(batch::argv())
}
