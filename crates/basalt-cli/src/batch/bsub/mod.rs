//! `bsub`: option parsing (command line and `#BSUB` directives), value parsing
//! (`-n -W -M -c -b ...`), `-R` merging, `-env`, the esubs, and the submission built
//! from them (cli-contract.md §2, §3).
//!
//! Forms: `bsub [opts] cmd args...` (words joined with spaces, run by a shell, not
//! parsed), `bsub [opts] script-file` (one argument naming a readable text file: its
//! `#BSUB` lines are parsed and its text is spooled), `bsub [opts] < script` (stdin is
//! not a terminal and no command is given: the same), and, on a terminal, `bsub>`
//! prompts. Command-line options beat directives; `-R` and `-env` accumulate.
//!
//! LSF's multi-letter options are matched whole before one-letter options are unbundled
//! (`-Ep` is `-Ep`, not `-E p`; `-hostfile` is not `-h -o stfile`): [`SPEC`] lists every
//! option of LSF 10.1's bsub. What Basalt does with those it does not carry out:
//!
//! * accepted and ignored ([`IGNORED`], plus `-We -T -sp`, whose values are checked:
//!   `-sp` within 1 to lsb.params' `MAX_USER_PRIORITY`, default 100, with LSF's messages):
//!   options that only tune or describe a job and do not change what it runs, where its
//!   output goes or whether it runs — `-U -gpu -alloc_flags -Jd -ext/-extsched -Lp -sla
//!   -g -ul -Zs -hl -ar -freq -network -notify -rcacct` and the CSM options `-csm -jsm
//!   -smt -step_cgroup -core_isolation -cn_cu -cn_mem -ln_mem -ln_slots` (like `-nnodes`
//!   and `-alloc_flags`, which parsl and psij send);
//! * `-rn` makes the job not rerunnable;
//! * refused ([`NOT_SUPPORTED`], `-<name>: this LSF option is not supported by Basalt yet.
//!   Job not submitted.`, exit 255): options whose absence would silently change what the
//!   job does — X11 and the other interactive forms (`-IS -ISp -ISs -IX -tty -XF`), data staging
//!   (`-is -data -datagrp -datachk -stage`),
//!   checkpointing and migration (`-k -mig`), rerun commands (`-rnc`), warning actions
//!   and signals (`-wa -wt -s`), pending time limits (`-ptl -eptl`), orphan termination (`-ti`), host files and
//!   output directories (`-hostfile -outdir`), other clusters (`-clusters`), and jobs
//!   described elsewhere (`-pack -jsdl -jsdl_strict -json -yaml`).
//!
//! `-f "local op [remote]"` (repeatable) is sent with the job (LSF's `xf` of JOB_NEW);
//! the job's wrapper copies the files with `lsrcp` on the execution host.
//!
//! `-I`, `-Ip`, `-Is` (`interactive.rs`): the job is scheduled like any other, then
//! bsub attaches to its standard streams (or pseudo-terminal) through the execution
//! host's RES and exits with its exit code.
//!
//! `-K` waits for the job once it is submitted (`wait.rs`): `<<Waiting for dispatch
//! ...>>`, `<<Starting on host>>` with lsf.conf `LSB_SUBK_SHOW_EXEC_HOST=Y`, `<<Job is
//! finished>>`, and bsub exits with the job's exit code (126 when it ended without
//! starting; a requeued job is waited for again).
//!
//! Sending (`retry.rs`): the job goes with a submission token (128 random bits, or
//! `BASALT_SUBMIT_TOKEN`; mbatchd keeps it under the submitting user) and is sent again,
//! same token, until mbatchd's answer is known, so a lost answer neither fails nor
//! doubles the job; exit 255 only when the job certainly does not exist, 254 when a limit
//! (`LSB_NTRIES`, `BASALT_CMD_TIMEOUT`) made bsub give up while it may. The limits bound
//! "try again later" answers too (a pending job threshold, an event log that cannot be
//! written).
//!
//! Unknown options keep LSF's `bsub: illegal option -- x` and the usage. `-app` is sent to
//! mbatchd, which refuses a profile lsb.applications does not define.
//!
//! esub (LSF's external submission executables; `esub.rs` runs them, `esubfile.rs`
//! writes and reads their files): once the options are merged and before anything is
//! sent, bsub runs `LSF_SERVERDIR/esub` if it is there and executable (when neither `-a`
//! nor `LSB_ESUB_METHOD` names one, that one `stat` is all a submission pays), then
//! `esub.<name>` for each name of `LSB_ESUB_METHOD` and of `-a "name[(arg,...)] ..."`
//! (which must exist), in that order as LSF's mesub does. They share one parameter file
//! (`LSB_SUB_PARM_FILE`: `LSB_SUB_QUEUE="normal"`, ... for the options given) and the
//! files they may write (`LSB_SUB_MODIFY_FILE`: options to change, `SUB_RESET` removes
//! one; `LSB_SUB_MODIFY_ENVFILE`: the job's environment variables), in a private
//! temporary directory removed afterwards. An esub's stderr goes to the user, its stdout
//! is sent with the job as its eexec's standard input, its stdin is bsub's unless bsub read
//! the job from it. Exit value `LSB_SUB_ABORT_VALUE` (97) refuses the job (`Request
//! aborted by esub. Job not submitted.`, exit 255) and runs no later esub; any other
//! lets the submission go on. Then the modify files are applied; a malformed one, or one
//! setting an option Basalt refuses, refuses the job.

use super::opts::{self, Item, Spec};
use super::resreq;
use basalt_core::job::{sub, sub2};
use basalt_proto::mbatchd::{JobSubmission, SubmitRequest};
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

mod apply;
mod cmd;
mod esub;
mod esubfile;
mod interactive;
mod job;
mod options;
pub mod retry;
mod script;
mod spec;
pub mod values;
mod wait;

pub use apply::*;
pub use cmd::*;
pub use esub::*;
pub use esubfile::*;
pub use interactive::*;
pub use job::*;
pub use options::*;
pub use retry::*;
pub use script::*;
pub use spec::*;
pub use values::*;
pub use wait::*;

#[cfg(test)]
mod tests;
