//! What Basalt reads but does not apply: one table per file of the keywords, columns
//! and sections that load without an error but have no effect (or only part of their
//! effect) today. Each one found in a configuration is a warning naming file and line,
//! so `badmin ckconfig`, `badmin reconfig` and mbatchd's log say so instead of staying
//! silent:
//!
//! ```text
//! /etc/lsf/lsb.queues:42: POLICIES is read but not applied yet (queue scheduling policies are not implemented); it has no effect
//! ```
//!
//! The issue that implements a keyword removes its entry here (and from the "Read but not
//! applied" list of `docs/admin-guide.md`, which a test keeps in step with these tables).
//! Entries whose `planned` is false are LSF tuning that Basalt's design does not need;
//! they warn too ("is read but not applied"), without "yet".

use crate::error::Ctx;
use crate::lexer::Table;

/// One keyword, column or section that is read but not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotApplied {
    /// The section it belongs to, as LSF spells it (`Parameters`, `Queue`, `Host`, ...);
    /// empty for lsf.conf, which has no sections.
    pub section: &'static str,
    /// The keyword or column (upper case), or the section name itself for a whole
    /// section; `*` stands for every keyword of the section but `NAME` and `DESCRIPTION`.
    pub keyword: &'static str,
    /// Only a value containing this (case-insensitive) is not applied; empty: any value.
    pub when: &'static str,
    /// How the warning names the part that is not applied (empty: the keyword).
    pub label: &'static str,
    /// Values that ask for what Basalt does anyway (case-insensitive): no warning.
    pub inert: &'static [&'static str],
    /// What is missing, for the warning.
    pub reason: &'static str,
    /// What of it applies all the same (empty: nothing, "it has no effect").
    pub rest: &'static str,
    /// True: to be implemented ("not applied yet"); false: not needed by Basalt's design.
    pub planned: bool,
    /// Checked by dedicated code (a row or section condition), not by the keyword's
    /// presence.
    pub custom: bool,
}

impl NotApplied {
    const fn new(section: &'static str, keyword: &'static str, reason: &'static str) -> Self {
        NotApplied {
            section,
            keyword,
            when: "",
            label: "",
            inert: &[],
            reason,
            rest: "",
            planned: true,
            custom: false,
        }
    }

    const fn inert(mut self, values: &'static [&'static str]) -> Self {
        self.inert = values;
        self
    }

    const fn part(mut self, when: &'static str, label: &'static str, rest: &'static str) -> Self {
        self.when = when;
        self.label = label;
        self.rest = rest;
        self
    }

    const fn rest(mut self, rest: &'static str) -> Self {
        self.rest = rest;
        self
    }

    const fn by_design(mut self) -> Self {
        self.planned = false;
        self
    }

    const fn custom(mut self) -> Self {
        self.custom = true;
        self
    }

    /// How the warning names it.
    pub fn label(&self) -> &'static str {
        if self.label.is_empty() {
            self.keyword
        } else {
            self.label
        }
    }

    /// Does `value` ask for something this entry does not apply?
    pub fn matches_value(&self, value: &str) -> bool {
        let v = value.trim();
        !v.is_empty()
            && !self.inert.iter().any(|i| i.eq_ignore_ascii_case(v))
            && (self.when.is_empty()
                || v.to_ascii_uppercase()
                    .contains(&self.when.to_ascii_uppercase()))
    }

    /// The warning text for `label` (normally [`NotApplied::label`]); `rest` overrides
    /// what applies all the same.
    pub fn message(&self, label: &str, rest: Option<&str>) -> String {
        let rest = rest.unwrap_or(self.rest);
        format!(
            "{label} is read but not applied{} ({}); {}",
            if self.planned { " yet" } else { "" },
            self.reason,
            if rest.is_empty() {
                "it has no effect"
            } else {
                rest
            }
        )
    }
}

type N = NotApplied;

const FS_ADJUST: &str = "the fairshare adjustment plugin is not supported: its term is 0";
const NO_NORMALISATION: &str = "CPU and run limits are not normalised by host CPU factors";
const CHECKPOINT: &str = "hosts do not copy jobs' open files at checkpoints: jobs checkpoint through their echkpnt method";

/// lsb.params.
pub const LSB_PARAMS: &[NotApplied] = &[
    N::new(
        "Parameters",
        "MAX_SBD_FAIL",
        "a host is unreach after three missed sbatchd hellos, see BASALT_SBD_HELLO_INTERVAL",
    )
    .inert(&["3"]),
    N::new(
        "Parameters",
        "RUSAGE_UPDATE_RATE",
        "sbatchd reports resource usage on its own schedule",
    )
    .inert(&["1"]),
    N::new(
        "Parameters",
        "RUSAGE_UPDATE_PERCENT",
        "sbatchd reports resource usage on its own schedule",
    )
    .inert(&["10"]),
    N::new(
        "Parameters",
        "MC_PLUGIN_UPDATE_INTERVAL",
        "mbatchd asks each remote cluster for its queues and jobs every BASALT_MC_POLL_MS",
    )
    .by_design(),
    N::new("Parameters", "FAIRSHARE_ADJUSTMENT_FACTOR", FS_ADJUST).inert(&["0"]),
    N::new(
        "Parameters",
        "DEFAULT_USER_GROUP",
        "a job without bsub -G is charged to the first group of the share list that has its user",
    ),
    N::new(
        "Parameters",
        "ACCT_ARCHIVE_SIZE",
        "lsb.acct is not archived",
    ),
    N::new("Parameters", "ACCT_ARCHIVE_AGE", "lsb.acct is not archived"),
    N::new(
        "Parameters",
        "MAX_ACCT_ARCHIVE_FILE",
        "lsb.acct is not archived",
    ),
    N::new("Parameters", "DEFAULT_HOST_SPEC", NO_NORMALISATION),
    N::new(
        "Parameters",
        "DISABLE_UACCT_MAP",
        "user account mapping is not implemented",
    ),
    N::new(
        "Parameters",
        "SYSTEM_MAPPING_ACCOUNT",
        "user account mapping is not implemented",
    ),
    N::new(
        "Parameters",
        "ENABLE_EVENT_STREAM",
        "no lsb.stream event stream is written",
    )
    .inert(&["N", "NO"]),
    N::new(
        "Parameters",
        "JOB_DEP_LAST_SUB",
        "a job-name dependency covers every earlier job of that name, not only the last one submitted",
    )
    .inert(&["0"]),
    N::new(
        "Parameters",
        "JOB_PRIORITY_OVER_TIME",
        "automatic job priority escalation is not implemented",
    ),
    N::new(
        "Parameters",
        "MAX_USER_PRIORITY",
        "user-assigned job priority (bsub -sp) is not implemented",
    )
    .rest("bsub refuses a -sp above it"),
    N::new(
        "Parameters",
        "JOB_SPOOL_DIR",
        "job files are spooled in LSB_SHAREDIR/<cluster>/logdir/info",
    ),
    N::new(
        "Parameters",
        "SHARED_RESOURCE_UPDATE_FACTOR",
        "a dynamic shared resource's value is taken from LIM at every scheduling pass",
    ),
    N::new(
        "Parameters",
        "MC_PLUGIN_SCHEDULE_ENHANCE",
        "dynamic cluster weighting is not supported by Basalt",
    )
    .part(
        "DYN_CLUSTER_WEIGHTING",
        "MC_PLUGIN_SCHEDULE_ENHANCE = DYN_CLUSTER_WEIGHTING",
        "the value is ignored",
    )
    .by_design(),
    N::new(
        "Parameters",
        "PARALLEL_SCHED_BY_SLOT",
        "parallel jobs are always scheduled by job slots",
    )
    .inert(&["Y", "YES"])
    .by_design(),
    N::new(
        "Parameters",
        "EVENT_UPDATE_INTERVAL",
        "lsb.events is written and synced as events happen",
    )
    .by_design(),
    N::new(
        "Parameters",
        "FRESH_PERIOD",
        "mbatchd uses each load report of the master LIM as it arrives",
    )
    .by_design(),
    N::new(
        "Parameters",
        "JOB_SCHEDULING_INTERVAL",
        "scheduling is event-driven",
    )
    .by_design(),
    N::new("Parameters", "MAX_SCHED_STAY", "scheduling is event-driven").by_design(),
    N::new(
        "Parameters",
        "MAX_CONCURRENT_JOB_QUERY",
        "mbatchd answers queries itself, without query children",
    )
    .by_design(),
    N::new(
        "Parameters",
        "MBD_REFRESH_TIME",
        "mbatchd answers queries itself, without query children",
    )
    .by_design(),
    N::new(
        "Parameters",
        "MAX_INFO_DIRS",
        "job files are kept in one info directory",
    )
    .by_design(),
];

/// lsb.queues.
pub const LSB_QUEUES: &[NotApplied] = &[
    N::new(
        "Queue",
        "PROCLIMIT",
        "bsub -n is not checked against it and jobs get no default slot count from it",
    ),
    N::new(
        "Queue",
        "EXCLUSIVE",
        "compute units are not implemented",
    )
    .part(
        "CU[",
        "EXCLUSIVE = CU[...]",
        "the queue is host-exclusive instead",
    ),
    N::new("Queue", "CPULIMIT", NO_NORMALISATION).part(
        "/",
        "CPULIMIT /host_spec",
        "the limit applies as written",
    ),
    N::new("Queue", "RUNLIMIT", NO_NORMALISATION).part(
        "/",
        "RUNLIMIT /host_spec",
        "the limit applies as written",
    ),
    N::new("Queue", "DEFAULT_HOST_SPEC", NO_NORMALISATION),
    N::new(
        "Queue",
        "PROCESSLIMIT",
        "sbatchd does not limit the number of a job's processes",
    )
    .rest("only a bsub -p above it is refused"),
    N::new(
        "Queue",
        "POLICIES",
        "queue scheduling policies are not implemented",
    ),
    N::new(
        "Queue",
        "OWNERSHIP",
        "ownership scheduling is not implemented",
    ),
    N::new(
        "Queue",
        "IGNORE_DEADLINE",
        "deadline-constraint scheduling is not implemented: jobs start even when their run limit outlasts the run window",
    )
    .inert(&["Y", "YES"]),
    N::new("Queue", "NEW_JOB_SCHED_DELAY", "scheduling is event-driven")
        .inert(&["0"])
        .by_design(),
    N::new("Queue", "FAIRSHARE_ADJUSTMENT_FACTOR", FS_ADJUST).inert(&["0"]),
];

/// lsb.hosts.
pub const LSB_HOSTS: &[NotApplied] = &[
    N::new(
        "Host",
        "HOST_NAME",
        "mbatchd takes MXJ, JL/U, DISPATCH_WINDOW and loadSched thresholds only from rows naming a host of the cluster and from `default`",
    )
    .custom(),
    N::new("Host", "CHKPNT", CHECKPOINT),
    N::new(
        "Host",
        "EXIT_RATE",
        "the job exit-rate check of hosts is not implemented",
    ),
    N::new("Host", "AFFINITY", "CPU and memory affinity is not implemented"),
    N::new(
        "HostGroup",
        "CONDENSE",
        "host groups are not condensed in bhosts or bjobs output",
    ),
];

/// lsb.users.
pub const LSB_USERS: &[NotApplied] = &[
    N::new("User", "PRIORITY", "user priority is not implemented"),
    N::new(
        "UserGroup",
        "GROUP_ADMIN",
        "changing user shares (bconf) is not implemented",
    )
    .part(
        "[USERSHARES]",
        "GROUP_ADMIN name[usershares]",
        "group administrators without [usershares] control their members' jobs",
    ),
    N::new(
        "UserGroup",
        "PRIORITY",
        "user group priority is not implemented",
    ),
];

/// lsb.resources.
const LIMIT_ONLY: &str =
    "a Limit's SLOTS, JOBS, MEM, SWP, TMP and RESOURCE are enforced, not its other resources";
const LIMIT_PERCENT: &str =
    "a share of the hosts' memory, swap or /tmp is counted per host: it applies with PER_HOST only";

pub const LSB_RESOURCES: &[NotApplied] = &[
    N::new("Limit", "MEM", LIMIT_PERCENT)
        .part("%", "MEM = n%", "it has no effect")
        .custom(),
    N::new("Limit", "SWP", LIMIT_PERCENT)
        .part("%", "SWP = n%", "it has no effect")
        .custom(),
    N::new("Limit", "TMP", LIMIT_PERCENT)
        .part("%", "TMP = n%", "it has no effect")
        .custom(),
    N::new(
        "Limit",
        "SLOTS_PER_PROCESSOR",
        "it is counted per host: it applies with PER_HOST only",
    )
    .custom(),
    N::new("Limit", "JOBS_PER_SCHED_CYCLE", LIMIT_ONLY),
    N::new(
        "Limit",
        "LIC_PROJECTS",
        "License Scheduler projects are not implemented",
    ),
    N::new(
        "Limit",
        "PER_LIC_PROJECT",
        "License Scheduler projects are not implemented",
    ),
];

/// lsb.applications.
pub const LSB_APPLICATIONS: &[NotApplied] = &[N::new(
    "Application",
    "*",
    "of an application profile only RES_REQ, PRE_EXEC, POST_EXEC, JOB_INCLUDE_POSTPROC, JOB_POSTPROC_TIMEOUT, JOB_STARTER, REQUEUE_EXIT_VALUES, SUCCESS_EXIT_VALUES, MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME, NO_PREEMPT_FINISH_TIME, CHKPNT_DIR, CHKPNT_PERIOD, CHKPNT_INITPERIOD, CHKPNT_METHOD and the resource limits apply",
)];

/// The keywords of an application profile that apply to its jobs (the `*` entry of
/// [`LSB_APPLICATIONS`] leaves them out).
pub const APPLIED_APPLICATION_KEYS: &[&str] = &[
    "NAME",
    "DESCRIPTION",
    "RES_REQ",
    "PRE_EXEC",
    "POST_EXEC",
    "JOB_INCLUDE_POSTPROC",
    "JOB_POSTPROC_TIMEOUT",
    "JOB_STARTER",
    "REQUEUE_EXIT_VALUES",
    "SUCCESS_EXIT_VALUES",
    "MAX_JOB_PREEMPT",
    "NO_PREEMPT_RUN_TIME",
    "NO_PREEMPT_FINISH_TIME",
    "CHKPNT_DIR",
    "CHKPNT_PERIOD",
    "CHKPNT_INITPERIOD",
    "CHKPNT_METHOD",
    "CPULIMIT",
    "RUNLIMIT",
    "MEMLIMIT",
    "SWAPLIMIT",
    "PROCESSLIMIT",
    "FILELIMIT",
    "DATALIMIT",
    "STACKLIMIT",
    "CORELIMIT",
];

/// lsf.conf (no sections).
pub const LSF_CONF: &[NotApplied] = &[
    N::new("", "LSB_SET_TMPDIR", "jobs get no TMPDIR of their own").inert(&["N", "NO"]),
    N::new(
        "",
        "LSB_STDOUT_DIRECT",
        "a job's output always goes straight to its -o file",
    )
    .inert(&["Y", "YES"])
    .by_design(),
];

/// lsf.cluster.<cluster>.
pub const LSF_CLUSTER: &[NotApplied] = &[
    N::new(
        "RemoteClusters",
        "EQUIV",
        "lsrun, lsload and the other LIM commands do not reach remote clusters",
    )
    .inert(&["N", "-"]),
    N::new(
        "RemoteClusters",
        "CACHE_INTERVAL",
        "mbatchd asks each remote cluster for its queues and jobs every BASALT_MC_POLL_MS",
    )
    .inert(&["60", "-"])
    .by_design(),
    N::new(
        "RemoteClusters",
        "AUTH",
        "requests between clusters carry a credential sealed with the key they share (BASALT_MC_KEY)",
    )
    .inert(&["-"])
    .by_design(),
    N::new(
        "Host",
        "RUNWINDOW",
        "LIM does not close hosts outside their run window",
    ),
    N::new("Host", "REXPRI", "remote execution priority is not applied"),
    N::new("Host", "ND", "LIM does not use the number of local disks"),
    N::new(
        "ResourceMap",
        "ResourceMap",
        "the scheduler sees Numeric shared resources (static, or dynamic from an ELIM) and static Boolean and String ones: a dynamic Boolean or String one is not seen by select",
    )
    .custom(),
    N::new(
        "Parameters",
        "ADJUST_DURATION",
        "LIM makes no load adjustment for placed tasks",
    ),
    N::new(
        "Parameters",
        "LSF_ELIM_DEBUG",
        "ELIM debugging is not implemented",
    ),
    N::new(
        "Parameters",
        "LSF_ELIM_BLOCKTIME",
        "LIM reads an ELIM's lines whenever it writes them",
    )
    .by_design(),
    N::new(
        "Parameters",
        "LSF_HOST_ADDR_RANGE",
        "hosts cannot join the cluster dynamically",
    ),
    N::new(
        "Parameters",
        "FLOAT_CLIENTS",
        "floating clients are not implemented",
    ),
    N::new(
        "Parameters",
        "FLOAT_CLIENTS_ADDR_RANGE",
        "floating clients are not implemented",
    ),
];

/// Every table with the file it belongs to (`lsf.cluster` for `lsf.cluster.<cluster>`).
pub const TABLES: &[(&str, &[NotApplied])] = &[
    ("lsf.conf", LSF_CONF),
    ("lsf.cluster", LSF_CLUSTER),
    ("lsb.params", LSB_PARAMS),
    ("lsb.queues", LSB_QUEUES),
    ("lsb.hosts", LSB_HOSTS),
    ("lsb.users", LSB_USERS),
    ("lsb.resources", LSB_RESOURCES),
    ("lsb.applications", LSB_APPLICATIONS),
];

/// The entries of `table` for `keyword` of `section` (case-insensitive), custom ones
/// included.
pub fn lookup<'t>(
    table: &'t [NotApplied],
    section: &'t str,
    keyword: &'t str,
) -> impl Iterator<Item = &'t NotApplied> + 't {
    table.iter().filter(move |e| {
        e.section.eq_ignore_ascii_case(section)
            && (e.keyword.eq_ignore_ascii_case(keyword)
                || (e.keyword == "*"
                    && !APPLIED_APPLICATION_KEYS
                        .iter()
                        .any(|k| k.eq_ignore_ascii_case(keyword))))
    })
}

/// Warn about `keyword = value` of `section` at `line` when the table says it is not
/// applied.
pub(crate) fn check_entry(
    ctx: &mut Ctx<'_>,
    table: &[NotApplied],
    section: &str,
    keyword: &str,
    value: &str,
    line: usize,
) {
    for e in lookup(table, section, keyword) {
        if !e.custom && e.matches_value(value) {
            let label = if e.keyword == "*" {
                keyword.to_ascii_uppercase()
            } else {
                e.label().to_owned()
            };
            ctx.not_applied(line, e.message(&label, None));
        }
    }
}

/// Warn, at the header line, about each column of a horizontal section that the table
/// says is not applied and that some row sets.
pub(crate) fn check_columns(ctx: &mut Ctx<'_>, table: &[NotApplied], section: &str, rows: &Table) {
    for (i, column) in rows.columns.iter().enumerate() {
        for e in lookup(table, section, column) {
            let set = rows
                .rows
                .iter()
                .any(|r| r.get(Some(i)).is_some_and(|v| e.matches_value(v)));
            if !e.custom && set {
                ctx.not_applied(rows.line, e.message(e.label(), None));
            }
        }
    }
}

/// The custom entry `keyword` of `section` in `table`.
pub(crate) fn custom(
    table: &'static [NotApplied],
    section: &str,
    keyword: &str,
) -> Option<&'static NotApplied> {
    table
        .iter()
        .find(|e| e.custom && e.section == section && e.keyword == keyword)
}

/// Warn that a whole section (HostPartition, ResourceMap, a Limit, ...) at `line` is
/// not applied; `label` names it.
pub(crate) fn check_section(
    ctx: &mut Ctx<'_>,
    table: &'static [NotApplied],
    section: &str,
    label: &str,
    line: usize,
) {
    if let Some(e) = custom(table, section, section) {
        ctx.not_applied(line, e.message(label, None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_names_each_keyword_of_a_section_once_per_part() {
        for (file, table) in TABLES {
            for (i, a) in table.iter().enumerate() {
                assert!(!a.reason.is_empty(), "{file} {}", a.keyword);
                for b in &table[i + 1..] {
                    assert!(
                        !(a.section == b.section && a.keyword == b.keyword && a.when == b.when),
                        "{file}: {} {} twice",
                        a.section,
                        a.keyword
                    );
                }
            }
        }
    }

    #[test]
    fn a_message_says_read_but_not_applied_with_the_reason() {
        let e = lookup(LSB_QUEUES, "queue", "policies")
            .next()
            .copied()
            .unwrap_or_else(|| panic!("POLICIES is in the table"));
        assert_eq!(
            e.message(e.label(), None),
            "POLICIES is read but not applied yet (queue scheduling policies are not implemented); it has no effect"
        );
        let e = lookup(LSB_PARAMS, "Parameters", "MBD_REFRESH_TIME")
            .next()
            .copied()
            .unwrap_or_else(|| panic!("MBD_REFRESH_TIME is in the table"));
        assert!(
            e.message(e.label(), None)
                .starts_with("MBD_REFRESH_TIME is read but not applied (mbatchd"),
            "{}",
            e.message(e.label(), None)
        );
    }

    #[test]
    fn inert_values_and_parts_decide_whether_a_value_is_not_applied() {
        let stream = lookup(LSB_PARAMS, "Parameters", "ENABLE_EVENT_STREAM")
            .next()
            .copied()
            .unwrap_or_else(|| panic!("ENABLE_EVENT_STREAM is in the table"));
        assert!(stream.matches_value("Y"));
        assert!(!stream.matches_value(" n "));
        assert!(!stream.matches_value(""));
        let excl = lookup(LSB_QUEUES, "Queue", "EXCLUSIVE")
            .next()
            .copied()
            .unwrap_or_else(|| panic!("EXCLUSIVE is in the table"));
        assert!(excl.matches_value("CU[enclosure]"));
        assert!(!excl.matches_value("Y"));
        // An application profile's RUNLIMIT applies; its NICE does not.
        assert!(
            lookup(LSB_APPLICATIONS, "Application", "RUNLIMIT")
                .next()
                .is_none()
        );
        assert!(
            lookup(LSB_APPLICATIONS, "Application", "NICE")
                .next()
                .is_some()
        );
        assert!(
            lookup(LSB_APPLICATIONS, "Application", "DESCRIPTION")
                .next()
                .is_none()
        );
    }
}
