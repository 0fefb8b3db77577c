//! `bhist` — job history from the event log (logic in `basalt_cli::hist::bhist`).

use basalt_cli::{batch, hist::bhist};
use std::process::ExitCode;

fn main() -> ExitCode {
    bhist::main(batch::argv())
}
