//! `lsrcp` — copy a file between hosts through their RES.

fn main() -> std::process::ExitCode {
    basalt_cli::closed_output::install();
    basalt_cli::res_cmds::lsrcp::main(basalt_cli::batch::help_as_h(
        std::env::args().skip(1).collect(),
    ))
}
