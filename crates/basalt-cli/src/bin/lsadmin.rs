//! `lsadmin` — LIM and RES administration: `showconf lim`, `ckconfig`, `reconfig`,
//! `lim*` and `res*` start/stop/restart, `limlock`/`limunlock` (logic in
//! `basalt_cli::lsadmin`).

use basalt_cli::{batch, lsadmin};
use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_cli::closed_output::install();
    lsadmin::main(batch::argv())
}
