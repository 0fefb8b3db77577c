//! Keywords Basalt reads but does not apply yet warn, one family per file, with file,
//! line and keyword; keywords that are applied (and values that ask for what Basalt
//! does anyway) do not.

use std::fs;
use std::path::Path;

use basalt_config::{Loaded, load};

mod common;
use common::{edit, line_of, scratch};

fn load_ok(dir: &Path) -> Loaded {
    load(dir).unwrap_or_else(|e| panic!("configuration errors:\n{e}"))
}

/// The not-applied warning at `file`:(line of `needle`) naming `label`, with `reason` in it.
fn assert_warns(loaded: &Loaded, dir: &Path, file: &str, needle: &str, label: &str, reason: &str) {
    let path = dir.join(file);
    let line = line_of(dir, file, needle);
    let found = loaded.warnings.iter().find(|w| {
        w.not_applied && w.file == path && w.line == line && w.message.starts_with(label)
    });
    let Some(w) = found else {
        panic!(
            "no warning {}:{line}: {label} ...; got {:#?}",
            path.display(),
            loaded.warnings
        );
    };
    let text = w.to_string();
    assert!(
        text.starts_with(&format!("{}:{line}: {label}", path.display())),
        "{text}"
    );
    assert!(text.contains(" is read but not applied"), "{text}");
    assert!(text.contains(reason), "{text}");
}

/// No warning at all in `file`.
fn assert_silent(loaded: &Loaded, dir: &Path, file: &str) {
    let path = dir.join(file);
    let w: Vec<_> = loaded.warnings.iter().filter(|w| w.file == path).collect();
    assert!(w.is_empty(), "{w:#?}");
}

#[test]
fn lsb_params_keywords_not_applied_warn_with_file_and_line() {
    let d = scratch("openlava");
    edit(
        d.path(),
        "lsb.params",
        "End Parameters",
        "PREEMPT_FOR = GROUP_JLP\nHIST_HOURS = 5\nMAX_PEND_JOBS = 100\nMBD_REFRESH_TIME = 10\n\
         ACCT_ARCHIVE_AGE = 7\nRESOURCE_RESERVE_PER_SLOT = N\nMAX_SBD_FAIL = 3\n\
         CLEAN_PERIOD = 600\nBASALT_HOST_LOST_GRACE = 30\nEnd Parameters",
    );
    let loaded = load_ok(d.path());
    let p = "lsb.params";
    // PREEMPT_FOR is applied (issue 23).
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.message.starts_with("PREEMPT_FOR is read")),
        "{:#?}",
        loaded.warnings
    );
    // HIST_HOURS is applied (issue 24: fairshare).
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.message.starts_with("HIST_HOURS is read")),
        "{:#?}",
        loaded.warnings
    );
    // MAX_PEND_JOBS is applied (issue 20).
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.message.starts_with("MAX_PEND_JOBS is read")),
        "{:#?}",
        loaded.warnings
    );
    assert_warns(
        &loaded,
        d.path(),
        p,
        "ACCT_ARCHIVE_AGE",
        "ACCT_ARCHIVE_AGE",
        "archived",
    );
    // LSF tuning Basalt's design does not need: no "yet".
    assert_warns(
        &loaded,
        d.path(),
        p,
        "MBD_REFRESH_TIME",
        "MBD_REFRESH_TIME is read but not applied (",
        "query children",
    );
    // N and 3 are what Basalt does anyway; CLEAN_PERIOD, MAX_PEND_JOBS and Basalt's own
    // are applied.
    let expected = common::assert_lists_every_not_applied(&loaded);
    let params = d.path().join(p);
    assert_eq!(
        expected.iter().filter(|(f, _, _)| *f == params).count(),
        2,
        "{expected:#?}"
    );
}

#[test]
fn mc_plugin_schedule_enhance_dyn_cluster_weighting_warns_with_file_and_line() {
    let d = scratch("openlava");
    edit(
        d.path(),
        "lsb.params",
        "End Parameters",
        "MC_PLUGIN_SCHEDULE_ENHANCE = DYN_CLUSTER_WEIGHTING\nEnd Parameters",
    );
    let loaded = load_ok(d.path());
    assert_warns(
        &loaded,
        d.path(),
        "lsb.params",
        "MC_PLUGIN_SCHEDULE_ENHANCE",
        "MC_PLUGIN_SCHEDULE_ENHANCE = DYN_CLUSTER_WEIGHTING",
        "not supported by Basalt",
    );
    // Not planned: "not applied", without "yet".
    assert!(
        loaded.warnings.iter().any(|w| w.message.starts_with(
            "MC_PLUGIN_SCHEDULE_ENHANCE = DYN_CLUSTER_WEIGHTING is read but not applied ("
        )),
        "{:#?}",
        loaded.warnings
    );
    assert_eq!(loaded.config.batch.params.mc_schedule_enhance, None);
    common::assert_lists_every_not_applied(&loaded);

    // The other values apply: no warning.
    let d = scratch("openlava");
    edit(
        d.path(),
        "lsb.params",
        "End Parameters",
        "MC_PLUGIN_SCHEDULE_ENHANCE = COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY\nEnd Parameters",
    );
    let loaded = load_ok(d.path());
    assert_silent(&loaded, d.path(), "lsb.params");
    assert!(common::assert_lists_every_not_applied(&loaded).is_empty());
}

#[test]
fn lsb_queues_keywords_not_applied_warn_with_file_and_line() {
    let d = scratch("openlava");
    edit(
        d.path(),
        "lsb.queues",
        "DESCRIPTION  = For normal low priority jobs",
        "PREEMPTION = PREEMPTIVE[idle]\nFAIRSHARE = USER_SHARES[[default,1]]\n\
         PRE_EXEC = /bin/true\nPOST_EXEC = /bin/true\nJOB_STARTER = exec\n\
         RES_REQ = select[mem>100] span[hosts=1]\nRUNLIMIT = 10/hostA\nCPULIMIT = 60\n\
         PROCLIMIT = 4\nPROCESSLIMIT = 8\nTERMINATE_WHEN = LOAD PREEMPT\n\
         HOSTS = hostA+2 hostB\nEXCLUSIVE = CU[enclosure]\nINTERACTIVE = ONLY\n\
         NEW_JOB_SCHED_DELAY = 0\nREQUEUE_EXIT_VALUES = 99\nPJOB_LIMIT = 2\n\
         MEMLIMIT = 100 200\nUJOB_LIMIT = 3\nJOB_ACCEPT_INTERVAL = 2\n\
         DESCRIPTION  = For normal low priority jobs",
    );
    let loaded = load_ok(d.path());
    let q = "lsb.queues";
    assert_warns(&loaded, d.path(), q, "PROCLIMIT =", "PROCLIMIT", "bsub -n");
    // Applied since issue 20: no warning.
    for k in [
        "PRE_EXEC",
        "POST_EXEC",
        "REQUEUE_EXIT_VALUES",
        "JOB_STARTER",
        "JOB_ACCEPT_INTERVAL",
        "RES_REQ",
        // Since issue 21 (interactive batch jobs).
        "INTERACTIVE",
        // Since issue 23 (preemption).
        "PREEMPTION",
        "TERMINATE_WHEN",
        // Since issue 24 (fairshare).
        "FAIRSHARE",
    ] {
        assert!(
            !loaded.warnings.iter().any(|w| w
                .message
                .starts_with(&format!("{k} is read but not applied"))),
            "{k} still warned: {:#?}",
            loaded.warnings
        );
    }
    assert_warns(
        &loaded,
        d.path(),
        q,
        "RUNLIMIT",
        "RUNLIMIT /host_spec",
        "normalised",
    );
    assert_warns(
        &loaded,
        d.path(),
        q,
        "PROCESSLIMIT",
        "PROCESSLIMIT",
        "bsub -p above it",
    );
    // HOSTS preference (host+N) applies (issue 20).
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.message.starts_with("HOSTS preference")),
        "{:#?}",
        loaded.warnings
    );
    assert_warns(
        &loaded,
        d.path(),
        q,
        "EXCLUSIVE",
        "EXCLUSIVE = CU[...]",
        "compute units",
    );
    // CPULIMIT, MEMLIMIT and UJOB_LIMIT apply; NEW_JOB_SCHED_DELAY = 0 is what Basalt does.
    for k in ["CPULIMIT", "MEMLIMIT", "UJOB_LIMIT", "NEW_JOB_SCHED_DELAY"] {
        let line = line_of(d.path(), q, k);
        assert!(
            !loaded.warnings.iter().any(|w| w.line == line),
            "{k}: {:#?}",
            loaded.warnings
        );
    }
    common::assert_lists_every_not_applied(&loaded);
}

#[test]
fn lsb_hosts_columns_rows_and_sections_not_applied_warn_with_file_and_line() {
    let d = scratch("openlava");
    edit(
        d.path(),
        "lsb.hosts",
        "HOST_NAME  MXJ  JL/U  r1m      pg     ls   tmp  DISPATCH_WINDOW\n",
        "HOST_NAME  MXJ  JL/U  r1m      pg     ls   tmp  DISPATCH_WINDOW CHKPNT\n\
         IntelI5    4    ()    ()       ()     ()   ()   ()              ()\n\
         linux      ()   ()    ()/3     ()     ()   ()   ()              ()\n\
         group0     2    ()    ()       ()     ()   ()   ()              ()\n",
    );
    edit(
        d.path(),
        "lsb.hosts",
        "(20:00-8:30)",
        "(20:00-8:30)    (/ckpt)",
    );
    edit(
        d.path(),
        "lsb.hosts",
        "GROUP_NAME  GROUP_MEMBER\ngroup0      (hostA hostB)",
        "GROUP_NAME  GROUP_MEMBER   GROUP_ADMIN\ngroup0      (hostA hostB)  (alice)",
    );
    fs::write(
        d.path().join("lsb.hosts"),
        fs::read_to_string(d.path().join("lsb.hosts")).unwrap_or_default()
            + "\nBegin HostPartition\nHPART_NAME = p\nHOSTS = all\nUSER_SHARES = [default,1]\nEnd HostPartition\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let loaded = load_ok(d.path());
    let h = "lsb.hosts";
    assert_warns(
        &loaded,
        d.path(),
        h,
        "HOST_NAME",
        "CHKPNT",
        "echkpnt method",
    );
    assert_warns(
        &loaded,
        d.path(),
        h,
        "IntelI5",
        "HOST_NAME `IntelI5` (a host model)",
        "only from rows naming a host",
    );
    assert_warns(
        &loaded,
        d.path(),
        h,
        "group0     2",
        "HOST_NAME `group0` (not a host of the cluster",
        "it has no effect",
    );
    // A host group's GROUP_ADMIN applies (its administrators open and close its hosts).
    let admin_line = line_of(d.path(), h, "GROUP_ADMIN");
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.file == d.path().join(h) && w.line == admin_line),
        "{:#?}",
        loaded.warnings
    );
    // Host partitions apply (issue 24): no warning for the section.
    let part = line_of(d.path(), h, "Begin HostPartition");
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.file == d.path().join(h) && w.line == part),
        "{:#?}",
        loaded.warnings
    );
    // A host-type row with only a loadStop threshold applies (sbatchd), as do host rows.
    let linux = line_of(d.path(), h, "linux");
    assert!(!loaded.warnings.iter().any(|w| w.line == linux));
    common::assert_lists_every_not_applied(&loaded);
}

#[test]
fn lsb_users_columns_not_applied_warn_with_file_and_line() {
    let d = scratch("openlava");
    edit(
        d.path(),
        "lsb.users",
        "GROUP_NAME  GROUP_MEMBER        USER_SHARES\n\
         G1          (david john zebra)  ([david,1] [john,1] [zebra,1])\n\
         develop     (alice bob)         ()",
        "GROUP_NAME  GROUP_MEMBER        GROUP_ADMIN\n\
         G1          (david john zebra)  ()\n\
         develop     (alice bob)         (alice[usershares])",
    );
    edit(
        d.path(),
        "lsb.users",
        "USER_NAME   MAX_JOBS  JL/P",
        "USER_NAME   MAX_JOBS  MAX_PEND_SLOTS",
    );
    let loaded = load_ok(d.path());
    let u = "lsb.users";
    assert_warns(
        &loaded,
        d.path(),
        u,
        "GROUP_ADMIN",
        "GROUP_ADMIN name[usershares]",
        "bconf",
    );
    // MAX_JOBS and MAX_PEND_SLOTS are applied (issue 20): no warning.
    for k in ["MAX_JOBS", "MAX_PEND_SLOTS"] {
        assert!(
            !loaded
                .warnings
                .iter()
                .any(|w| w.message.starts_with(&format!("{k} is read"))),
            "{:#?}",
            loaded.warnings
        );
    }
    common::assert_lists_every_not_applied(&loaded);
}

#[test]
fn lsb_resources_slots_and_jobs_apply_and_other_resources_warn_with_file_and_line() {
    let d = scratch("openlava");
    fs::write(
        d.path().join("lsb.resources"),
        "Begin Limit\nNAME = night\nSLOTS = 4 20:00-8:00\nMEM = 10%\nTMP = 100\nEnd Limit\n\n\
         Begin Limit\nNAME    PER_HOST  JOBS\nperhost (hostA)   2\nEnd Limit\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let loaded = load_ok(d.path());
    let r = "lsb.resources";
    assert_warns(
        &loaded,
        d.path(),
        r,
        "MEM = 10%",
        "MEM = n%",
        "PER_HOST only",
    );
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.message.starts_with("Limit `")),
        "{:#?}",
        loaded.warnings
    );
    common::assert_lists_every_not_applied(&loaded);
}

#[test]
fn an_application_profiles_unapplied_settings_warn_but_its_applied_ones_and_name_do_not() {
    let d = scratch("openlava");
    fs::write(
        d.path().join("lsb.applications"),
        "Begin Application\nNAME = short\nDESCRIPTION = Short jobs\nRUNLIMIT = 10\n\
         PRE_EXEC = /bin/true\nJOB_STARTER = nice\nNICE = 5\nBIND_JOB = BALANCE\n\
         End Application\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let loaded = load_ok(d.path());
    let a = "lsb.applications";
    for k in ["NICE", "BIND_JOB"] {
        assert_warns(&loaded, d.path(), a, k, k, "application profile");
    }
    // Applied (issue 20): RUNLIMIT, PRE_EXEC, JOB_STARTER; and the name.
    for k in ["NAME", "DESCRIPTION", "RUNLIMIT", "PRE_EXEC", "JOB_STARTER"] {
        let line = line_of(d.path(), a, k);
        assert!(
            !loaded
                .warnings
                .iter()
                .any(|w| w.line == line && w.file == d.path().join(a)),
            "{k}"
        );
    }
    assert_eq!(loaded.config.batch.applications[0].name, "short");
    common::assert_lists_every_not_applied(&loaded);
}

#[test]
fn lsf_conf_and_lsf_cluster_keywords_not_applied_warn_with_file_and_line() {
    let d = scratch("openlava");
    edit(
        d.path(),
        "lsf.conf",
        "LSF_AUTH=eauth",
        "LSF_AUTH=eauth\nLSB_SET_TMPDIR=y\nRESOURCE_RESERVE_PER_TASK=N\nLSB_STDOUT_DIRECT=N",
    );
    let c = "lsf.cluster.openlava";
    edit(
        d.path(),
        c,
        "HOSTNAME   model    type   server  r1m  RESOURCES\n\
         hostA      IntelI5  linux  1       3.5  (cs)",
        "HOSTNAME   model    type   server  r1m  RESOURCES RUNWINDOW\n\
         hostA      IntelI5  linux  1       3.5  (cs)     (8:00-18:00)",
    );
    edit(
        d.path(),
        c,
        "PROBE_TIMEOUT = 2",
        "PROBE_TIMEOUT = 2\nADJUST_DURATION = 3\nELIMARGS = -v",
    );
    fs::write(
        d.path().join(c),
        fs::read_to_string(d.path().join(c)).unwrap_or_default()
            + "\nBegin ResourceMap\nRESOURCENAME LOCATION\nfs ([all])\nEnd ResourceMap\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let loaded = load_ok(d.path());
    assert_warns(
        &loaded,
        d.path(),
        "lsf.conf",
        "LSB_SET_TMPDIR",
        "LSB_SET_TMPDIR",
        "TMPDIR",
    );
    assert_warns(
        &loaded,
        d.path(),
        "lsf.conf",
        "LSB_STDOUT_DIRECT",
        "LSB_STDOUT_DIRECT",
        "straight to its -o file",
    );
    assert_warns(&loaded, d.path(), c, "RUNWINDOW", "RUNWINDOW", "run window");
    assert_warns(
        &loaded,
        d.path(),
        c,
        "ADJUST_DURATION",
        "ADJUST_DURATION",
        "load adjustment",
    );
    // A static Boolean shared resource (`fs`) is seen by select: no warning.
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.message.starts_with("ResourceMap is read")),
        "{:#?}",
        loaded.warnings
    );
    // RESOURCE_RESERVE_PER_TASK is applied; so is ELIMARGS.
    let elimargs = line_of(d.path(), c, "ELIMARGS");
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.line == elimargs && w.file == d.path().join(c))
    );
    let expected = common::assert_lists_every_not_applied(&loaded);
    let conf = d.path().join("lsf.conf");
    assert_eq!(expected.iter().filter(|(f, _, _)| *f == conf).count(), 2);
}

#[test]
fn applied_keywords_do_not_warn() {
    let d = scratch("openlava");
    fs::write(
        d.path().join("lsb.params"),
        "Begin Parameters\nDEFAULT_QUEUE = normal\nMBD_SLEEP_TIME = 10\nSBD_SLEEP_TIME = 7\n\
         JOB_ACCEPT_INTERVAL = 0\nCLEAN_PERIOD = 600\nMAX_JOB_NUM = 100\nPG_SUSP_IT = 60\n\
         MAX_JOBID = 99999\nMAX_JOB_ARRAY_SIZE = 100\nJOB_TERMINATE_INTERVAL = 5\n\
         DEFAULT_PROJECT = p\nBASALT_EVENT_SYNC = fsync\nBASALT_EVENT_LOCK_HEARTBEAT = 2\n\
         BASALT_SBD_HELLO_INTERVAL = 3\nBASALT_HOST_LOST_GRACE = 20\n\
         RESOURCE_RESERVE_PER_SLOT = N\nMAX_SBD_FAIL = 3\nEnd Parameters\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    edit(
        d.path(),
        "lsb.queues",
        "DESCRIPTION  = For normal low priority jobs",
        "ADMINISTRATORS = alice\nQJOB_LIMIT = 10\nUJOB_LIMIT = 2\nHJOB_LIMIT = 1\n\
         USERS = all ~bob\nHOSTS = hostA hostB\nDISPATCH_WINDOW = 8:00-18:00\nEXCLUSIVE = Y\n\
         STOP_COND = r1m > 2\nRESUME_COND = r1m < 1\nTERMINATE_WHEN = LOAD WINDOW\n\
         RERUNNABLE = yes\nCPULIMIT = 60\nRUNLIMIT = 10 60\nMEMLIMIT = 100 200\n\
         SWAPLIMIT = 1000\nFILELIMIT = 100\nDATALIMIT = 100\nSTACKLIMIT = 100\nCORELIMIT = 0\n\
         BACKFILL = N\nINTERACTIVE = NO\nIGNORE_DEADLINE = Y\nNEW_JOB_SCHED_DELAY = 0\n\
         DESCRIPTION  = For normal low priority jobs",
    );
    fs::remove_file(d.path().join("lsb.resources")).unwrap_or_else(|e| panic!("{e}"));
    fs::write(
        d.path().join("lsb.users"),
        "Begin UserGroup\nGROUP_NAME GROUP_MEMBER\nG1 (david john)\nG2 (G1 ~john)\nEnd UserGroup\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    fs::write(
        d.path().join("lsb.applications"),
        "Begin Application\nNAME = short\nDESCRIPTION = Short jobs\nEnd Application\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    edit(
        d.path(),
        "lsf.conf",
        "LSF_AUTH=eauth",
        "LSF_AUTH=eauth\nLSB_JOB_MEMLIMIT=Y\nLSB_STDOUT_DIRECT=Y\nLSB_SET_TMPDIR=N\n\
         LSF_MASTER_LIST=\"hostA hostB\"\nLSB_STOP_IGNORE_IT=Y",
    );
    let loaded = load_ok(d.path());
    assert!(loaded.warnings.is_empty(), "{:#?}", loaded.warnings);
    for f in [
        "lsb.params",
        "lsb.queues",
        "lsb.hosts",
        "lsb.users",
        "lsf.conf",
    ] {
        assert_silent(&loaded, d.path(), f);
    }
    assert!(common::assert_lists_every_not_applied(&loaded).is_empty());
}

#[test]
fn admin_guide_lists_every_keyword_read_but_not_applied() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/admin-guide.md");
    let text = fs::read_to_string(&guide).unwrap_or_else(|e| panic!("{}: {e}", guide.display()));
    let start = text
        .find("### Read but not applied")
        .unwrap_or_else(|| panic!("no \"Read but not applied\" section"));
    let section = &text[start..];
    let section = &section[..section[4..].find("\n#").map_or(section.len(), |e| e + 4)];
    for (file, table) in basalt_config::not_applied::TABLES {
        let rows: Vec<&str> = section
            .lines()
            .filter(|l| l.starts_with(&format!("| `{file}` |")))
            .collect();
        for e in *table {
            let named = if e.keyword == "*" {
                "every keyword".to_owned()
            } else {
                format!("`{}`", e.label())
            };
            assert!(
                rows.iter().any(|r| r.contains(&named)),
                "{file}: {named} is not in the admin guide's list"
            );
        }
    }
}
