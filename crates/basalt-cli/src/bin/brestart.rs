//! `brestart` — restart a checkpointed job as a new job (logic in
//! `basalt_cli::batch::brestart`).

use basalt_cli::batch::{self, brestart};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    brestart::main(batch::argv())
}
