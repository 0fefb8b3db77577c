//! `lsrun` — run a task on the best host through its RES.

fn main() -> std::process::ExitCode {
    basalt_cli::res_cmds::lsrun::main(std::env::args().skip(1).collect())
}
