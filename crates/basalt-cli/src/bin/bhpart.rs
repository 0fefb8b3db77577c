//! `bhpart` — host partitions and their fairshare (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bhpart};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bhpart::main(batch::argv())
}
