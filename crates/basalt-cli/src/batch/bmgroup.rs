//! `bmgroup`: the host groups of lsb.hosts (layout and rules in [`super::groups`]).

use basalt_runtime::egroup::Kind;
use std::process::ExitCode;

/// `bmgroup [-h] [-V] [-l] [-r] [-w] [host_group ...]`.
pub fn main(args: Vec<String>) -> ExitCode {
    super::groups::main(Kind::Host, args)
}
