//! `bmig` — migrate started rerunnable jobs: killed, then back to PEND at the head of
//! their queue to run again, on the `-m` hosts when given (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, jobctl};
use std::process::ExitCode;

fn main() -> ExitCode {
    jobctl::signal_main("bmig", batch::argv())
}
