//! The bounds on what a user can put in a request: lengths of names, paths, commands and
//! expressions, counts of list entries. `bsub` refuses a value past them before it sends
//! anything, and mbatchd refuses it again before anything is logged (a hand-made request
//! does not go through `bsub`). docs/security.md lists them.
//!
//! Where LSF has a documented limit it is used (job names of 4,094 characters, file names
//! of `PATH_MAX`); the rest are generous for real use and small enough that no parser,
//! log record or job environment built from them can fail or exhaust the daemon.

/// A job name (`-J`, array specs included), in bytes (LSF: 4,094 characters).
pub const MAX_JOB_NAME: usize = 4094;
/// A file or directory name (`-o -e -i -cwd`, the submission directory, home), in bytes:
/// Linux's `PATH_MAX` less the terminating NUL.
pub const MAX_PATH: usize = 4095;
/// A short name: queue, project, user group, mail user, login shell, host, user.
pub const MAX_NAME: usize = 511;
/// A resource requirement (`-R`, all of them merged), in bytes.
pub const MAX_RES_REQ: usize = 16 * 1024;
/// A pre-execution command (`-E`), in bytes.
pub const MAX_PRE_EXEC: usize = 64 * 1024;
/// What the esubs of a submission print for its eexec, in bytes.
pub const MAX_ESUB_OUTPUT: usize = 64 * 1024;
/// The job's command or script, in bytes. It travels in the job file, never in an
/// argument vector, so the kernel's `ARG_MAX` does not apply.
pub const MAX_COMMAND: usize = 4 * 1024 * 1024;
/// Hosts named with `-m`.
pub const MAX_ASKED_HOSTS: usize = 16 * 1024;
/// One `NAME=value` of the job's environment: Linux's `MAX_ARG_STRLEN` (a longer one makes
/// every program the job starts fail with E2BIG).
pub const MAX_ENV_ENTRY: usize = 128 * 1024;
/// The whole job environment, in bytes (Linux's default `ARG_MAX` is 2 MiB for arguments
/// and environment together).
pub const MAX_ENV_TOTAL: usize = 2 * 1024 * 1024;
/// Job ids in one query or job-control request.
pub const MAX_JOB_IDS: usize = 100_000;
/// An administrator's comment (`badmin hclose -C`, ...), in bytes.
pub const MAX_MESSAGE: usize = 4096;
/// Slots one job may ask for (`-n`).
pub const MAX_PROCESSORS: u32 = 1_000_000;
/// A submission token (`BASALT_SUBMIT_TOKEN`, the token `bsub` makes), in bytes.
pub const MAX_SUBMIT_TOKEN: usize = 256;
/// The largest run or CPU time limit (`-W`, `-c`, and the `RUNLIMIT`/`CPULIMIT` a job
/// carries), seconds: LSF's `int` (bsub refuses minutes whose seconds overflow it, "RUNLIMIT
/// value is too big").
pub const MAX_TIME_LIMIT: i64 = i32::MAX as i64;
/// `MAX_USER_PRIORITY`'s value when lsb.params does not set it: `bsub -sp` takes 1 to it.
pub const DEFAULT_MAX_USER_PRIORITY: u32 = 100;
/// The latest begin or termination time (`-b`/`-t`), seconds since the epoch: the end of
/// LSF's 32-bit `time_t` event fields.
pub const MAX_TIME: i64 = i32::MAX as i64;

/// `s` cut to at most `max` bytes, at a character boundary.
pub fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The name a job without `-J` goes by: the first line of its command, trimmed, at most
/// [`MAX_JOB_NAME`] bytes (so `LSB_JOBNAME` always fits in a job's environment).
pub fn default_job_name(command: &str) -> &str {
    truncate(command.lines().next().unwrap_or("").trim(), MAX_JOB_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_whole_characters() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("abcdef", 3), "abc");
        assert_eq!(truncate("aé", 2), "a");
        assert_eq!(default_job_name("  echo hi \nsecond"), "echo hi");
        let long = "x ".repeat(200_000);
        assert_eq!(default_job_name(&long).len(), MAX_JOB_NAME);
    }
}
