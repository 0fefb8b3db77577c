//! `bresources` — the resource configuration of lsb.resources (logic in
//! `basalt_cli::batch::bresources`).

use basalt_cli::batch;
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    batch::bresources::main(batch::argv())
}
