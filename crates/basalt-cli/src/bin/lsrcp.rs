//! `lsrcp` — copy a file between hosts through their RES.

fn main() -> std::process::ExitCode {
    basalt_cli::res_cmds::lsrcp::main(std::env::args().skip(1).collect())
}
