//! `bevents` — verify, dump and replay the event log (logic in
//! `basalt_hist::bevents`).

use basalt_cli::batch;
use basalt_hist::bevents;
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bevents::main(batch::argv())
}
