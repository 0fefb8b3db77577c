//! `lsadmin` — LIM administration: `showconf lim`, `ckconfig` (logic in
//! `basalt_cli::lsadmin`).

use basalt_cli::{batch, lsadmin};
use std::process::ExitCode;

fn main() -> ExitCode {
    lsadmin::main(batch::argv())
}
