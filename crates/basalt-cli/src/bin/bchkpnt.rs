//! `bchkpnt` — checkpoint started checkpointable jobs (`-k`: and kill them; `-p`: set
//! their checkpoint period, minutes; `-f`: force) (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, jobctl};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    jobctl::signal_main("bchkpnt", batch::argv())
}
