//! `bclusters` — MultiCluster job forwarding queues and links (logic in `basalt_cli::batch`).

use basalt_cli::batch::{self, bclusters};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    bclusters::main(batch::argv())
}
