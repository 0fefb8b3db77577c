//! `lsplace` — the hosts a task would be placed on.

fn main() -> std::process::ExitCode {
    basalt_cli::closed_output::install();
    basalt_cli::res_cmds::lsplace::main(basalt_cli::batch::help_as_h(
        std::env::args().skip(1).collect(),
    ))
}
