//! `bacct` — accounting of finished jobs (logic in `basalt_cli::hist::bacct`).

use basalt_cli::{batch, hist::bacct};
use std::process::ExitCode;

fn main() -> ExitCode {
    bacct::main(batch::argv())
}
