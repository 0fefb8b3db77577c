//! Unit tests of `bhist`'s formats and selection.

use super::*;
use basalt_cli::batch::timefmt;
use basalt_eventlog::parse_line;

const T0: i64 = 1_795_339_535; // Sun Nov 22 09:25:35 2026 UTC

fn fx(now: i64) -> Fx {
    Fx {
        tm: timefmt::utc,
        now,
        short_hosts: true,
    }
}

fn rec(line: &str) -> Record {
    match parse_line(line) {
        Ok(Some(r)) => r,
        other => panic!("cannot parse {line}: {other:?}"),
    }
}

/// event-log.md §5 (OpenLava 4.0dev4), job 101 and 102, plus a finish for 101.
fn sample() -> Vec<Record> {
    [
            "\"LOAD_INDEX\" \"40\" 1795339510 11 \"r15s\" \"r1m\" \"r15m\" \"ut\" \"pg\" \"io\" \"ls\" \"it\" \"tmp\" \"swp\" \"mem\"",
            "\"MBD_START\" \"40\" 1795339510 \"vm\" \"openlava\" 0 1",
            "\"JOB_NEW\" \"40\" 1795339535 101 0 33554434 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"\" \"\" \"/root\" \"1795339535.101\" 0 \"\" \"\" \"\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1",
            "\"JOB_NEW\" \"40\" 1795339535 102 0 33554451 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"/home/alice/run/out.%J\" \"\" \"/root\" \"1795339535.102\" 0 \"\" \"\" \"myjob\" \"env | grep -E \"\"^LSB_|^LSF_|^LS_\"\" | sort\" 0 \"\" \"default\" 1 \"linux\" \"\" 7184 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1",
            "\"JOB_START\" \"40\" 1795339540 101 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 0 \"\"",
            "\"JOB_START_ACCEPT\" \"40\" 1795339540 101 25592 25592 0 2097152",
            "\"JOB_EXECUTE\" \"40\" 1795339540 101 0 25592 \"/home/alice/run\" \"/root\" \"root\" 25592 0",
            "\"JOB_START\" \"40\" 1795339540 102 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 0 \"\"",
            "\"JOB_STATUS\" \"40\" 1795339540 102 64 0 0 0.0236 1795339540 1 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 0 0",
            "\"JOB_STATUS\" \"40\" 1795339540 102 192 0 0 0.0236 1795339540 0 0 0",
            "\"JOB_SIGNAL\" \"40\" 1795339560 101 0 1 \"STOP\" 0 \"root\"",
            "\"JOB_STATUS\" \"40\" 1795339560 101 16 65538 0 0.0000 0 0 0 0",
            "\"JOB_STATUS\" \"40\" 1795339562 101 4 65537 0 0.0000 0 0 0 0",
        ]
        .iter()
        .map(|l| rec(l))
        .collect()
}

fn all_args() -> Args {
    Args {
        all: true,
        ..Args::default()
    }
}

#[test]
fn default_table_matches_the_reference() {
    let jobs = history::build(sample());
    let a = all_args();
    let f = Filter::new(&a, Vec::new(), "root");
    let text = report(jobs, &a, &f, &fx(T0 + 35)).unwrap_or_default();
    assert_eq!(
        text,
        "Summary of time in seconds spent in various states:\n\
             JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL\n\
             101     root    sleep 30  5       0       28      2       0       0       35        \n\
             102     root    myjob     5       0       0       0       0       0       5         \n\
             \n"
    );
}

#[test]
fn long_names_are_cut_unless_wide() {
    let mut jobs = history::build(sample());
    jobs.truncate(1);
    jobs[0].sub.job_name = "long_name_for_test".into();
    jobs[0].sub.user_name = "administrator".into();
    let f = fx(T0 + 35);
    assert_eq!(
        row(&jobs[0], false, &f),
        "101     adminis *or_test  5       0       28      2       0       0       35        \n"
    );
    assert_eq!(
        row(&jobs[0], true, &f),
        "101     administrator long_name_for_test 5       0       28      2       0       0       35        \n"
    );
}

#[test]
fn long_format_matches_the_reference() {
    let jobs = history::build(sample());
    let text = long(&jobs, true, &fx(T0 + 35));
    let expected = "
Job <101>, User <root>, Project <default>, Command <sleep 30>
Sun Nov 22 09:25:35: Submitted from host <vm>, to Queue <normal>, CWD </home/al
                     ice/run>;
Sun Nov 22 09:25:40: Dispatched to <vm>;
Sun Nov 22 09:25:40: Starting (Pid 25592);
Sun Nov 22 09:25:40: Running with execution home </root>, Execution CWD </home/
                     alice/run>, Execution Pid <25592>;
Sun Nov 22 09:26:00: Signal <STOP> requested by user or administrator <root>;
Sun Nov 22 09:26:00: Suspended by the user or administrator;
Sun Nov 22 09:26:02: Running;

Summary of time in seconds spent in various states by  Sun Nov 22 09:26:10
  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL
  5        0        28       2        0        0        35          
------------------------------------------------------------------------------

Job <102>, Job Name <myjob>, User <root>, Project <default>, Command <env | gre
                     p -E \"^LSB_|^LSF_|^LS_\" | sort>
Sun Nov 22 09:25:35: Submitted from host <vm>, to Queue <normal>, CWD </home/al
                     ice/run>, Output File </home/alice/run/out.%J>;
Sun Nov 22 09:25:40: Dispatched to <vm>;
Sun Nov 22 09:25:40: Done successfully. The CPU time used is 0.0 seconds;
Sun Nov 22 09:25:40: Post job process done successfully;

Summary of time in seconds spent in various states by  Sun Nov 22 09:25:40
  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL
  5        0        0        0        0        0        5           

";
    assert_eq!(text, expected);
    // snakemake greps `Project <...>` out of `bhist -l -a`.
    assert!(text.contains("Project <default>"));
}

#[test]
fn brief_format_leaves_out_the_details() {
    let jobs = history::build(sample());
    let text = long(&jobs[1..], false, &fx(T0 + 35));
    assert!(text.contains(
            "Sun Nov 22 09:25:35: Submitted from host <vm>, to Queue <normal>, CWD </home/al\n                     ice/run>;\n"
        ));
    assert!(!text.contains("Output File"));
}

#[test]
fn event_texts_for_every_record_kind() {
    let jobs = history::build(sample());
    let j = &jobs[0];
    let text =
        |line: &str, started: bool| record_text(&rec(line), j, started, true).unwrap_or_default();
    assert_eq!(
        text(
            "\"JOB_SWITCH\" \"22\" 1795342025 0 101 \"lowq\" 0 \"root\"",
            false
        ),
        "Switched to Queue <lowq> by user or administrator <root>;"
    );
    assert_eq!(
        text("\"JOB_MOVE\" \"22\" 1795342025 0 101 1 1 0 \"root\"", false),
        "Job moved to position 1 relative to <top> of the queue by user or administrator <root>;"
    );
    assert_eq!(
        text(
            "\"JOB_MOVE\" \"22\" 1795342025 0 101 2 2 0 \"alice\"",
            false
        ),
        "Job moved to position 2 relative to <bottom> of the queue by user or administrator <alice>;"
    );
    assert_eq!(
        text(
            "\"JOB_FORCE\" \"22\" 1795342025 101 0 0 1 1  \"vm\" \"root\"",
            false
        ),
        "Job is forced to run by user or administrator <root>;"
    );
    assert_eq!(
        text(
            "\"JOB_SIGNAL\" \"40\" 1795339586 101 0 1 \"KILL\" 0 \"root\"",
            true
        ),
        "Signal <KILL> requested by user or administrator <root>;"
    );
    // bmig in an OpenLava or LSF log (MIG: jobId numAskedHosts hosts userId idx userName).
    assert_eq!(
        text(
            "\"MIG\" \"40\" 1795339586 101 2 \"hostB\" \"hostC\" 0 0 \"root\"",
            true
        ),
        "Migration requested by user or administrator <root>; Specified Hosts <hostB>, <hostC>;"
    );
    assert_eq!(
        text("\"MIG\" \"40\" 1795339586 101 0 0 0 \"\"", true),
        "Migration requested by unknown user;"
    );
    // Checkpoints (issue 27): the order (JOB_SIGACT SIG_CHKPNT ACT_START: jobId period
    // pid jStatus reasons flags actStatus "signalSymbol" idx) and its end (CHKPNT: jobId
    // period pid ok flags idx, Basalt's reason last).
    assert_eq!(
        text(
            "\"JOB_SIGACT\" \"10.1\" 1795339586 101 -1 0 4 0 0 1 \"SIG_CHKPNT\" 0",
            true
        ),
        "Checkpoint initiated (actpid 0);"
    );
    assert_eq!(
        text(
            "\"JOB_SIGACT\" \"10.1\" 1795339586 101 -1 0 4 0 5 1 \"SIG_CHKPNT\" 0",
            true
        ),
        "Migration checkpoint initiated (actpid 0);"
    );
    assert_eq!(
        text(
            "\"JOB_SIGACT\" \"10.1\" 1795339586 101 600 0 4 0 0 1 \"SIG_CHKPNT\" 0",
            true
        ),
        "Checkpoint initiated (actpid 0); checkpoint period is set to 10 minutes;"
    );
    assert_eq!(
        text("\"CHKPNT\" \"10.1\" 1795339587 101 0 321 1 0 0", true),
        "Checkpoint succeeded (actpid 321);"
    );
    assert_eq!(
        text(
            "\"CHKPNT\" \"10.1\" 1795339587 101 0 0 0 0 0 \"the job ended before writing its checkpoint\"",
            true
        ),
        "Checkpoint failed (actpid 0): the job ended before writing its checkpoint;"
    );
    // Preemption (issue 23): killed (TERMINATE_WHEN = PREEMPT) or suspended for a
    // higher-priority job.
    assert_eq!(
        text(
            "\"JOB_SIGNAL\" \"40\" 1795339586 101 0 1 \"KILL_PREEMPT\" 0 \"root\"",
            true
        ),
        "Signal <KILL> requested to preempt the job for a higher priority job;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795339586 101 8 65664 0 0.0000 0 0 0 0",
            true
        ),
        "Suspended: The job was preempted by a higher priority job;"
    );
    assert_eq!(
        text(
            "\"JOB_SIGNAL\" \"40\" 1795339586 101 0 0 \"DELETEJOB\" 0 \"bob\"",
            true
        ),
        "Delete requested by user or administrator <bob>;"
    );
    assert_eq!(
        text("\"JOB_REQUEUE\" \"22\" 1795342036 101 0", true),
        "Pending: Job has been requeued;"
    );
    // MultiCluster (issue 25): forwarded from here, accepted there.
    assert_eq!(
        text(
            "\"JOB_FORWARD\" \"10.1\" 1795342036 101 0 \"east\" 0 1 \"recv\"",
            false
        ),
        "Forwarded job to cluster <east>, queue <recv>;"
    );
    assert_eq!(
        text(
            "\"JOB_ACCEPT\" \"10.1\" 1795342036 5 101 \"west\" 0 4 0 1",
            false
        ),
        "Job accepted from cluster <west>, job ID <101>;"
    );
    // Exits: code, signal, no CPU time before a start.
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795339586 101 32 0 0 0.1000 1795339586 0 768 0",
            true
        ),
        "Exited with exit code 3. The CPU time used is 0.1 seconds;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795339586 105 32 0 0 0.0211 1795339586 1 0.005440 0.015618 4392 0 -1 0 0 782 0 0 0 32 -1 0 0 0 18 6 -1 9 0",
            true
        ),
        "Exited by signal 9. The CPU time used is 0.0 seconds;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795339586 101 32 0 0 0.0000 1795339586 0 0 0",
            false
        ),
        "Exited;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795340840 101 8 64 0 0.0000 0 0 0 0",
            true
        ),
        "Suspended: Host load exceeded threshold:  15-second CPU run queue length (r15s);"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795340840 101 8 65537 0 0.0000 0 0 0 0",
            true
        ),
        "Suspended: Waiting for re-scheduling after being resumed by user;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795340840 101 1 1601 0 0.0000 0 0 0 0",
            true
        ),
        "Pending: Unable to reach slave batch server;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795340840 101 2 2 0 0.0000 0 0 0 0",
            false
        ),
        "Suspended by the user or administrator while pending;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795340840 101 65536 0 0 0.0000 0 0 0 0",
            true
        ),
        "Unknown; unable to reach the execution host;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"40\" 1795340840 101 32 2 0 0.0000 0 0 0 0",
            true
        ),
        "Execution host unavailable; job is killed;"
    );
    assert_eq!(
        text(
            "\"JOB_STATUS\" \"22\" 1795340840 101 320 0 0 0.0000 0 0 0 0",
            true
        ),
        "Post job process failed;"
    );
    assert_eq!(
        text(
            "\"JOB_START\" \"40\" 1795339590 101 4 0 0 100.0 4 \"a\" \"a\" \"a\" \"b\" \"\" \"\" 0 0 \"\"",
            false
        ),
        "Dispatched to 4 Hosts/Processors <3*a> <b>;"
    );
    assert_eq!(
        text(
            "\"JOB_EXECUTE\" \"40\" 1795339540 101 500 25592 \"/tmp\" \"/home/bob\" \"bob\" 25592 0",
            true
        ),
        "Running with execution home </home/bob>, Execution CWD </tmp>, Execution Pid <25592>, Execution user name <bob>;"
    );
    assert!(record_text(&rec("\"JOB_CLEAN\" \"40\" 1795341358 101 0"), j, true, true).is_none());
}

#[test]
fn selection() {
    let jobs = history::build(sample());
    let pick = |a: &Args, ids: Vec<IdSel>, caller: &str| -> Vec<u64> {
        let f = Filter::new(a, ids, caller);
        jobs.iter()
            .filter(|j| f.matches(j))
            .map(|j| j.job_id)
            .collect()
    };
    // Default: the caller's unfinished jobs.
    assert_eq!(pick(&Args::default(), Vec::new(), "root"), vec![101]);
    assert!(pick(&Args::default(), Vec::new(), "alice").is_empty());
    let a = |f: fn(&mut Args)| {
        let mut a = Args::default();
        f(&mut a);
        a
    };
    assert_eq!(
        pick(&a(|a| a.all = true), Vec::new(), "root"),
        vec![101, 102]
    );
    assert_eq!(pick(&a(|a| a.done = true), Vec::new(), "root"), vec![102]);
    assert!(pick(&a(|a| a.exited = true), Vec::new(), "root").is_empty());
    assert_eq!(pick(&a(|a| a.run = true), Vec::new(), "root"), vec![101]);
    assert!(pick(&a(|a| a.pend = true), Vec::new(), "root").is_empty());
    assert!(pick(&a(|a| a.susp = true), Vec::new(), "root").is_empty());
    assert_eq!(
        pick(
            &a(|a| {
                a.all = true;
                a.user = Some("all".into())
            }),
            Vec::new(),
            "alice"
        ),
        vec![101, 102]
    );
    // Job ids: any user, any state.
    let ids = super::super::parse_ids(&["102".into()]).unwrap_or_default();
    assert_eq!(pick(&Args::default(), ids, "alice"), vec![102]);
    assert_eq!(
        pick(
            &a(|a| {
                a.all = true;
                a.job_name = Some("my*".into())
            }),
            Vec::new(),
            "root"
        ),
        vec![102]
    );
    assert!(
        pick(
            &a(|a| {
                a.all = true;
                a.queue = Some("other".into())
            }),
            Vec::new(),
            "root"
        )
        .is_empty()
    );
    assert_eq!(
        pick(
            &a(|a| {
                a.all = true;
                a.host = Some("vm".into())
            }),
            Vec::new(),
            "root"
        ),
        vec![101, 102]
    );
}

#[test]
fn file_sources() {
    let a = Args::default();
    assert_eq!(source(&a, false), Ok(EventSource::Current));
    assert_eq!(source(&a, true), Ok(EventSource::Newest(0)));
    let n = Args {
        num_files: Some("2".into()),
        ..Args::default()
    };
    assert_eq!(source(&n, true), Ok(EventSource::Newest(2)));
    let bad = Args {
        num_files: Some("x".into()),
        ..Args::default()
    };
    assert!(source(&bad, false).is_err());
    let f = Args {
        file: Some("/tmp/lsb.events.3".into()),
        ..Args::default()
    };
    assert_eq!(
        source(&f, false),
        Ok(EventSource::File("/tmp/lsb.events.3".into()))
    );
}

#[test]
fn arguments() {
    let items = basalt_cli::batch::opts::parse(
        &[
            "-la".into(),
            "-u".into(),
            "all".into(),
            "-n0".into(),
            "101".into(),
        ],
        &SPEC,
        false,
    )
    .unwrap_or_default();
    let a = args_from(items);
    assert!(a.long && a.all);
    assert_eq!(a.user.as_deref(), Some("all"));
    assert_eq!(a.num_files.as_deref(), Some("0"));
    assert_eq!(a.ids, vec!["101".to_string()]);
}

/// event-log.md §5's `bmod -J newname`, for job 101.
const MODIFY2: &str = "\"JOB_MODIFY2\" \"40\" 1795339586 \"101\" 8388609 4096 0 0 \"root\" 1795339586 18 2147483646 0 0 0 0 \"newname\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"/root\" \"\" \"vm\" \"\" 956046368 2147483646 \"\" 0";

fn modify2(f: impl FnOnce(&mut basalt_eventlog::JobModify2)) -> basalt_eventlog::JobModify2 {
    let mut m = basalt_eventlog::JobModify2 {
        header: basalt_eventlog::Header::new(T0 + 100),
        job_id_str: "101".into(),
        user_name: "root".into(),
        ..Default::default()
    };
    f(&mut m);
    m
}

#[test]
fn job_modify2_in_the_long_format() {
    let mut recs = sample();
    recs.push(rec(MODIFY2));
    let jobs = history::build(recs);
    let j = &jobs[0];
    assert_eq!(j.job_id, 101);
    // The job goes by its new name (header, -J).
    assert_eq!(j.sub.job_name, "newname");
    let text = long_job(j, true, &fx(T0 + 60));
    assert!(
        text.starts_with("\nJob <101>, Job Name <newname>, User <root>, Project <default>,"),
        "{text}"
    );
    assert!(
        text.contains(
            "Sun Nov 22 09:26:02: Running;\n\
             Sun Nov 22 09:26:26: Parameters of Job are changed:\n    \
             Job name changes to : newname;\n\
             \nSummary of time"
        ),
        "{text}"
    );
    // The modification does not change the job's state or times.
    assert_eq!(j.state().0, 4);
}

#[test]
fn job_modify2_changes_one_line_each() {
    use basalt_core::job::{sub, sub2};
    use basalt_eventlog::{modify, rlimit};
    let f = fx(T0);
    let m = modify2(|m| {
        m.options = sub::QUEUE
            | sub::JOB_NAME
            | sub::HOST
            | sub::RES_REQ
            | sub::DEPEND_COND
            | sub::OUT_FILE
            | sub::PRE_EXEC
            | sub::MAIL_USER
            | sub::PROJECT_NAME
            | sub::MODIFY;
        m.options2 = sub2::MODIFY_CMD | sub2::JOB_PRIORITY;
        m.queue = "short".into();
        m.job_name = "newname".into();
        m.asked_hosts = vec!["h1".into(), "h2".into()];
        m.res_req = "rusage[mem=100]".into();
        m.depend_cond = "done(100)".into();
        m.out_file = "/tmp/o.%J".into();
        m.command = "sleep 10".into();
        m.pre_exec_cmd = "true".into();
        m.mail_user = "bob".into();
        m.project_name = "p2".into();
        m.begin_time = T0 + 3600;
        m.term_time = T0 + 7200;
        m.num_processors = 2;
        m.max_num_processors = 4;
        m.rlimits[rlimit::RUN] = 5400;
        m.rlimits[rlimit::CPU] = 600;
        m.rlimits[rlimit::RSS] = 102_400;
        m.user_priority = 50;
        m.basalt_options = modify::POST_EXEC | modify::REQUEUE | modify::APP | modify::CWD;
        m.post_exec_cmd = "echo done".into();
        m.requeue_exit_values = "99".into();
        m.app = "fluent".into();
        m.specified_cwd = "/scratch/%J".into();
    });
    assert_eq!(
        modify2_text(&m, &f),
        "Parameters of Job are changed:
    Job queue changes to : short;
    Job name changes to : newname;
    Hosts change to : h1 h2;
    Resource requirement changes to : rusage[mem=100];
    Dependency condition changes to : done(100);
    Output file changes to : /tmp/o.%J;
    Command changes to : sleep 10;
    Pre-execution command changes to : true;
    Post-execution command changes to : echo done;
    Mail user changes to : bob;
    Project changes to : p2;
    Job new begin time is : Sun Nov 22 10:25:35 2026;
    Job new end time is : Sun Nov 22 11:25:35 2026;
    Number of processors changes to : 2,4;
    CPULIMIT changes to : 10.0 min;
    MEMLIMIT changes to : 102400 KB;
    RUNLIMIT changes to : 90.0 min;
    Job priority changes to : 50;
    Requeue exit values change to : 99;
    Application profile changes to : fluent;
    Current working directory changes to : /scratch/%J;"
    );
    // -n n (min = max): one number.
    let m = modify2(|m| {
        m.num_processors = 3;
        m.max_num_processors = 3;
    });
    assert_eq!(
        modify2_changes(&m, &f),
        vec!["Number of processors changes to : 3"]
    );
    // Nothing changed: the heading alone.
    assert_eq!(
        modify2_text(&modify2(|_| {}), &f),
        "Parameters of Job are changed:"
    );
    // 0 processors (an unset field) is "unchanged" too.
    let m = modify2(|m| {
        m.num_processors = 0;
        m.max_num_processors = 0;
    });
    assert!(modify2_changes(&m, &f).is_empty());
}

#[test]
fn job_modify2_resets_to_defaults() {
    use basalt_core::job::{sub, sub2};
    use basalt_eventlog::{modify, rlimit};
    let f = fx(T0);
    let m = modify2(|m| {
        m.del_options = sub::QUEUE
            | sub::JOB_NAME
            | sub::HOST
            | sub::RES_REQ
            | sub::DEPEND_COND
            | sub::IN_FILE
            | sub::OUT_FILE
            | sub::ERR_FILE
            | sub::EXCLUSIVE;
        m.del_options2 = sub2::JOB_PRIORITY;
        m.begin_time = modify::DELETE_NUMBER;
        m.num_processors = modify::DEL_NUMPRO;
        m.max_num_processors = modify::DEL_NUMPRO;
        m.rlimits[rlimit::RUN] = modify::DELETE_NUMBER;
        m.basalt_options = modify::POST_EXEC_DEL
            | modify::REQUEUE_DEL
            | modify::APP_DEL
            | modify::CWD_DEL
            | modify::USER_GROUP_DEL;
    });
    assert_eq!(
        modify2_changes(&m, &f),
        vec![
            "Job queue changes back to default",
            "Job name is canceled",
            "Host changes to default",
            "Resource requirement changes to default",
            "Dependency condition is canceled",
            "Input file is disabled",
            "Output file is disabled",
            "Error file is disabled",
            "Post-execution command is disabled",
            "Job begin time is removed",
            "Number of processors changes to default",
            "RUNLIMIT changes to default",
            "Job changes to nonexclusive",
            "Job priority changes to default",
            "Requeue exit values are canceled",
            "Application profile changes to default",
            "Current working directory changes to default",
            "User group changes to default",
        ]
    );
    // -G set, and volclava's own -Ep.
    let m = modify2(|m| {
        m.basalt_options = modify::USER_GROUP;
        m.user_group = "grp".into();
    });
    assert_eq!(modify2_changes(&m, &f), vec!["User group changes to : grp"]);
    let m = modify2(|m| {
        m.header.version = "22".into();
        m.options = basalt_eventlog::VOLCLAVA_SUB_POST_EXEC;
        m.post_exec_cmd = "post".into();
    });
    assert_eq!(
        modify2_changes(&m, &f),
        vec!["Post-execution command changes to : post"]
    );
}

#[test]
fn job_modify2_reaches_array_elements_and_moves_the_queue() {
    let new = "\"JOB_NEW\" \"40\" 1795339535 9 0 33554434 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"1795339535.9\" 0 \"\" \"\" \"arr[1-2]\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1";
    let start2 = "\"JOB_START\" \"40\" 1795339540 9 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 2 \"\"";
    let element = basalt_eventlog::Record::from(modify2(|m| {
        m.job_id_str = "9[1]".into();
        m.options = basalt_core::job::sub::QUEUE;
        m.queue = "short".into();
    }));
    let jobs = history::build(vec![rec(new), rec(start2), element]);
    let keys: Vec<(u64, u32, &str)> = jobs
        .iter()
        .map(|j| (j.job_id, j.idx, j.queue.as_str()))
        .collect();
    assert_eq!(keys, vec![(9, 1, "short"), (9, 2, "normal")]);
    let text = long_job(&jobs[0], true, &fx(T0 + 200));
    assert!(
        text.contains(": Parameters of Job are changed:\n    Job queue changes to : short;\n"),
        "{text}"
    );
}

/// A `bmig` of an OpenLava or LSF log is part of the job's history in `bhist -l`.
#[test]
fn a_mig_record_is_shown_in_the_long_history() {
    let mut recs = sample();
    recs.push(rec("\"MIG\" \"40\" 1795339600 101 1 \"vm2\" 0 0 \"root\""));
    let jobs = history::build(recs);
    let j = jobs.iter().find(|j| j.job_id == 101).expect("job 101");
    let text = long(std::slice::from_ref(j), false, &fx(1_795_339_700));
    assert!(
        text.contains("Migration requested by user or administrator <root>; Speci\n                     fied Hosts <vm2>;"),
        "{text}"
    );
}

/// Issue 50 item 3: `bmod -J "%1"` of an array (a JOB_MODIFY2 whose job name is `%1`)
/// changes its limit, not its name: bhist shows it and `-J` finds it by its name still.
#[test]
fn job_modify2_of_an_array_limit_keeps_its_name() {
    use basalt_core::job::sub;
    let mut recs = sample();
    for r in &mut recs {
        if let Record::JobNew(n) = r
            && n.job_id == 101
        {
            n.job_name = "arr[1-3]".into();
        }
    }
    recs.push(Record::JobModify2(Box::new(modify2(|m| {
        m.options = sub::JOB_NAME;
        m.job_name = "%1".into();
    }))));
    let jobs = history::build(recs);
    let j = jobs.iter().find(|j| j.job_id == 101).expect("job 101");
    assert_eq!(j.sub.job_name, "arr[1-3]%1");
}
