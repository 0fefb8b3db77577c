//! bsub's option table: the usage text, every LSF 10.1 option ([`SPEC`]), those accepted
//! and ignored ([`IGNORED`]) and those refused ([`NOT_SUPPORTED`]),
//! and the positions of the resource limits in a submission ([`rlimit`]).

use super::*;

/// bsub's usage text.
pub const USAGE: &str = "Usage: bsub [-h] [-V] [-H] [-x] [-r] [-N] [-B]
            [-q queue_name ...] [-J job_name] [-n min_proc[,max_proc]] [-nnodes N]
            [-o out_file | -oo out_file] [-e err_file | -eo err_file] [-i in_file]
            [-W [hour:]minute] [-M mem_limit] [-c [hour:]minute] [-F file_limit]
            [-D data_limit] [-S stack_limit] [-C core_limit] [-v swap_limit]
            [-p process_limit] [-R res_req] ... [-m \"host_name ...\"] [-w depend_cond]
            [-b [[[YY:]MM:]DD:]hh:mm] [-t [[[YY:]MM:]DD:]hh:mm] [-E pre_exec_command]
            [-L login_shell] [-u mail_user] [-P project_name] [-G user_group]
            [-cwd dir] [-env \"none\" | \"all[, ~var][, var=value]\" | \"var[=value][, ...]\"] ...
            [-a \"esub_application[(arg,...)] ...\"] [-app profile]
            [-U reservation] [-gpu spec] [-alloc_flags flags]
            [-sp priority] [-We [hour:]minute] [-T thread_limit] [-Jd description]
            [command [argument ...] | script_file]
";

/// LSF bsub options Basalt recognises but does not carry out yet: refused, so that a job
/// never runs without what was asked of it.
pub const NOT_SUPPORTED: &[&str] = &[
    "IS",
    "ISp",
    "ISs",
    "IX",
    "tty",
    "XF",
    "mig",
    "pack",
    "jsdl",
    "jsdl_strict",
    "rnc",
    "wa",
    "wt",
    "s",
    "is",
    "json",
    "yaml",
    "data",
    "datagrp",
    "datachk",
    "stage",
    "ptl",
    "eptl",
    "ti",
    "hostfile",
    "outdir",
    "clusters",
];

/// LSF bsub options accepted and ignored: they tune or describe a job (or only mean
/// something on an IBM CSM cluster) without changing what it runs, where its output goes
/// or whether it runs. Their names are kept in [`BsubOpts::ignored`].
pub const IGNORED: &[&str] = &[
    "U",
    "gpu",
    "alloc_flags",
    "Jd",
    "ext",
    "extsched",
    "Lp",
    "sla",
    "g",
    "ul",
    "Zs",
    "hl",
    "ar",
    "freq",
    "network",
    "notify",
    "rcacct",
    "csm",
    "jsm",
    "smt",
    "step_cgroup",
    "core_isolation",
    "cn_cu",
    "cn_mem",
    "ln_mem",
    "ln_slots",
];

/// bsub's options (public for the fuzz checks, `fuzz/src/bsub.rs`).
pub const SPEC: Spec = Spec {
    flags: &[
        "h", "V", "H", "x", "r", "N", "B", "rn", "ul", "Zs", "hl", "I", "Ip", "Is", "IS", "ISp",
        "ISs", "IX", "K", "tty", "XF", "ar", "datachk", "ti",
    ],
    valued: &[
        "rnc",
        "clusters",
        "datagrp",
        "ptl",
        "eptl",
        "hostfile",
        "outdir",
        "freq",
        "network",
        "notify",
        "rcacct",
        "csm",
        "jsm",
        "smt",
        "step_cgroup",
        "core_isolation",
        "cn_cu",
        "cn_mem",
        "ln_mem",
        "ln_slots",
        "ext",
        "extsched",
        "Lp",
        "sla",
        "g",
        "f",
        "k",
        "mig",
        "pack",
        "jsdl",
        "jsdl_strict",
        "Ep",
        "wa",
        "wt",
        "Q",
        "s",
        "a",
        "is",
        "json",
        "yaml",
        "data",
        "stage",
        "J",
        "Jd",
        "q",
        "n",
        "o",
        "e",
        "oo",
        "eo",
        "i",
        "W",
        "We",
        "M",
        "c",
        "F",
        "D",
        "S",
        "C",
        "v",
        "p",
        "T",
        "cwd",
        "P",
        "G",
        "R",
        "m",
        "w",
        "b",
        "t",
        "E",
        "L",
        "u",
        "env",
        "nnodes",
        "U",
        "gpu",
        "alloc_flags",
        "app",
        "sp",
    ],
};

/// LSF_RLIMIT_* positions in `JobSubmission.rlimits`.
pub use basalt_core::rlimit;
