//! Issue 50 item 11 from the configuration files to the wire: what mbatchd's bqueues
//! answer carries of a queue configured in LSF's syntax (user and host groups, commands,
//! requeue values, checkpointing, slot reservation, conditions, job controls) and of a
//! `badmin qclose -C` comment; and what its blimits answer counts as configured.

use basalt_config::embedded::{DefaultCluster, DefaultHost, ExtraResource};
use basalt_sched::{Caller, JobQuery, Sched, SchedConfig, Submission};
use std::path::Path;

const T: i64 = 1_800_000_000_000;

const QUEUE: &str = "
Begin Queue
QUEUE_NAME   = eng
PRIORITY     = 40
USERS        = eng carol
HOSTS        = hg_ab hostC+2
RUNLIMIT     = 10
PRE_EXEC     = /bin/true pre
POST_EXEC    = /bin/true post
PRE_POST_EXEC_USER = root
JOB_STARTER  = /usr/bin/env
REQUEUE_EXIT_VALUES = 99 EXCLUDE(3)
RERUNNABLE   = yes
CHKPNT       = /tmp 10
MIG          = 30
BACKFILL     = Y
EXCLUSIVE    = Y
INTERACTIVE  = NO
SLOT_RESERVE = MAX_RESERVE_TIME[5]
STOP_COND    = r1m > 3.0
RESUME_COND  = r1m < 1.0
JOB_CONTROLS = SUSPEND[SIGTSTP]
TERMINATE_WHEN = LOAD
r1m          = 2.0/3.5
DESCRIPTION  = Engineering
End Queue
";

/// A three-host cluster with user group `eng`, host group `hg_ab`, the queue `eng`, a
/// Limit section and an lsb.users MAX_JOBS row.
fn config(top: &Path) -> basalt_config::Config {
    let hosts = ["hostA", "hostB", "hostC"]
        .iter()
        .map(|h| DefaultHost {
            name: (*h).into(),
            address: None,
            server: true,
        })
        .collect();
    let mut cluster = DefaultCluster::new("basalt", "root", hosts);
    for name in ["scratch", "verilog"] {
        cluster.extra_resources.push(ExtraResource {
            name: name.into(),
            kind: "Numeric".into(),
            interval: None,
            increasing: None,
            description: format!("({name})"),
        });
    }
    let envdir = cluster.write(top).expect("write the cluster");
    // One verilog licence shared by every host.
    let lsf_cluster = top.join("conf/lsf.cluster.basalt");
    let mut text = std::fs::read_to_string(&lsf_cluster).expect("lsf.cluster");
    text.push_str(
        "\nBegin ResourceMap\nRESOURCENAME  LOCATION\nverilog       (1@[all])\nEnd ResourceMap\n",
    );
    std::fs::write(&lsf_cluster, text).expect("write lsf.cluster");
    let dir = top.join("conf/lsbatch/basalt/configdir");
    let append = |file: &str, text: &str| {
        let path = dir.join(file);
        let mut all = std::fs::read_to_string(&path).unwrap_or_default();
        all.push_str(text);
        std::fs::write(&path, all).expect("write");
    };
    append("lsb.queues", QUEUE);
    append(
        "lsb.hosts",
        "\nBegin HostGroup\nGROUP_NAME  GROUP_MEMBER\nhg_ab       (hostA hostB)\nEnd HostGroup\n",
    );
    append(
        "lsb.users",
        "Begin UserGroup\nGROUP_NAME  GROUP_MEMBER\neng         (alice bob)\nEnd UserGroup\n\n\
         Begin User\nUSER_NAME  MAX_JOBS\nalice      10\nEnd User\n",
    );
    append(
        "lsb.resources",
        "Begin Limit\nNAME  = engSlots\nUSERS = eng\nHOSTS = hg_ab\nSLOTS = 4\nEnd Limit\n",
    );
    let loaded = basalt_config::load(&envdir).expect("the configuration loads");
    loaded.config
}

#[test]
fn issue_50_item_11_the_queue_answer_carries_what_is_in_force_as_configured() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let mut s = Sched::new(SchedConfig::from_config(&config), T);
    s.start(T, "hostA");
    let root = Caller {
        uid: 0,
        user: "root".into(),
        host: "hostA".into(),
    };
    s.queue_ctl(T, &root, 2, "eng", "maintenance friday")
        .expect("qclose");
    let reply = basalt_wire::queues_reply(&s.queues_view(&["eng".into()]));
    let q = &reply.queues[0];
    // Expanded for the checks, as configured for bqueues -l.
    assert_eq!(q.users, ["alice", "bob", "carol"]);
    assert_eq!(q.users_configured, ["eng/", "carol"]);
    assert_eq!(q.hosts_configured, ["hg_ab/", "hostC+2"]);
    assert!(!q.open);
    assert_eq!(q.admin_comment, "maintenance friday");
    assert_eq!(q.pre_exec, "/bin/true pre");
    assert_eq!(q.post_exec, "/bin/true post");
    assert_eq!(q.pre_post_exec_user, "root");
    assert_eq!(q.job_starter, "/usr/bin/env");
    assert_eq!(q.requeue_exit_values, "99 EXCLUDE(3)");
    assert!(q.rerunnable && q.backfill && q.exclusive);
    assert_eq!((q.chkpnt_dir.as_str(), q.chkpnt_period), ("/tmp", 600));
    assert_eq!(q.interactive, "NO");
    // MAX_RESERVE_TIME[5] cycles of MBD_SLEEP_TIME (10 s).
    assert_eq!(q.slot_reserve_secs, 50);
    assert_eq!(q.stop_cond, "r1m > 3.0");
    assert_eq!(q.resume_cond, "r1m < 1.0");
    assert_eq!(
        q.job_controls.get("SUSPEND").map(String::as_str),
        Some("SIGTSTP")
    );
    assert_eq!(q.terminate_when, ["LOAD"]);
    assert_eq!(q.mig_minutes, Some(30));
    assert_eq!(q.accept_interval_secs, None);
    assert_eq!(q.settings.get("RUNLIMIT").map(String::as_str), Some("10"));
    // blimits: the Limit section is configured; lsb.users' MAX_JOBS row is not one.
    assert_eq!(s.limit_sections(), 1);
    // A queue with none of it says so.
    let reply = basalt_wire::queues_reply(&s.queues_view(&["normal".into()]));
    let q = &reply.queues[0];
    assert_eq!(q.users_configured, ["all"]);
    assert_eq!(q.hosts_configured, ["all"]);
    assert!(q.pre_exec.is_empty() && q.admin_comment.is_empty() && !q.rerunnable);
    assert_eq!((q.slot_reserve_secs, q.mig_minutes), (0, None));
}

/// Issue 50 item 12 on the wire: a job short of the verilog licence it reserves pends
/// with LSF's PEND_HOST_JOB_RUSAGE + verilog's index in the resource table (the 11
/// built-in indices, then lsf.shared's `cs fs scratch verilog`), and bjobs gets the
/// resource's name with it.
#[test]
fn issue_50_item_12_the_jobs_answer_names_the_resource_a_reservation_lacks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let mut s = Sched::new(SchedConfig::from_config(&config), T);
    for h in ["hostA", "hostB", "hostC"] {
        s.lim_update(h, 2, 1.0, true, Default::default());
    }
    s.start(T, "hostA");
    let alice = Caller {
        uid: 1000,
        user: "alice".into(),
        host: "hostA".into(),
    };
    for c in ["sim one", "sim two"] {
        let sub = Submission {
            command: c.into(),
            res_req: "rusage[verilog=1]".into(),
            rlimits: [-1; 11].into(),
            ..Default::default()
        };
        s.submit(T, &alice, sub).expect("submit");
    }
    s.schedule(T + 10);
    let reply = basalt_wire::jobs_reply(&s.jobs_view(&JobQuery::default()), false);
    let two = reply
        .jobs
        .iter()
        .find(|j| j.job_id == 2)
        .expect("job 2 listed");
    assert_eq!(two.state, 1, "{two:?}");
    let code = basalt_core::job::pend::RESERVE_BASE + 11 + 3;
    let r = two
        .pend_reasons
        .iter()
        .find(|r| r.code == code)
        .unwrap_or_else(|| panic!("no reason {code} in {:?}", two.pend_reasons));
    assert_eq!((r.detail.as_str(), r.num_hosts), ("verilog", 3));
}
