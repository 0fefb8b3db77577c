//! `blaunch` — start a batch job's tasks on its hosts through their RES.

fn main() -> std::process::ExitCode {
    basalt_cli::closed_output::install();
    basalt_cli::res_cmds::blaunch::main(std::env::args().skip(1).collect())
}
