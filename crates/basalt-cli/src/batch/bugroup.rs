//! `bugroup`: the user groups of lsb.users (layout and rules in [`super::groups`]).

use basalt_runtime::egroup::Kind;
use std::process::ExitCode;

/// `bugroup [-h] [-V] [-l] [-r] [-w] [user_group ...]`.
pub fn main(args: Vec<String>) -> ExitCode {
    super::groups::main(Kind::User, args)
}
