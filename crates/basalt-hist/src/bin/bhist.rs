//! `bhist` — job history from the event log (logic in `basalt_hist::bhist`).

use basalt_cli::batch;
use basalt_hist::bhist;
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bhist::main(batch::argv())
}
