//! `bacct` — accounting of finished jobs (logic in `basalt_hist::bacct`).

use basalt_cli::batch;
use basalt_hist::bacct;
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bacct::main(batch::argv())
}
