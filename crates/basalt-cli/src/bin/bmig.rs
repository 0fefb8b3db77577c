//! `bmig` — migrate started jobs: a checkpointable one is checkpointed and killed, a
//! rerunnable one killed; then back to PEND at the head of their queue to run again
//! (from the checkpoint), on the `-m` hosts when given (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, jobctl};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    jobctl::signal_main("bmig", batch::argv())
}
