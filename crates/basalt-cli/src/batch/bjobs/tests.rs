//! Unit tests of `bjobs`'s formatters and option handling.
use super::*;
use basalt_core::job::{pend, susp};

const T0: i64 = 1_795_339_535; // Sun Nov 22 09:25:35 2026 UTC

fn fx() -> Fx {
    Fx {
        tm: timefmt::utc,
        short_hosts: true,
        now: T0 + 100,
    }
}

fn job(id: u64, state: u32, name: &str, hosts: &[&str]) -> JobInfo {
    JobInfo {
        job_id: id,
        user: "root".into(),
        state,
        queue: "normal".into(),
        from_host: "vm".into(),
        exec_hosts: hosts.iter().map(|h| h.to_string()).collect(),
        job_name: name.into(),
        command: name.into(),
        submit_time: T0,
        start_time: if hosts.is_empty() { 0 } else { T0 + 5 },
        project: "default".into(),
        exit_code: -1,
        num_processors: 1,
        max_processors: 1,
        run_limit: -1,
        ..Default::default()
    }
}

#[test]
fn default_table_matches_the_reference() {
    let jobs = vec![
        job(101, status::RUN, "sleep 30", &["vm"]),
        job(103, status::PEND, "sleep 20", &[]),
        job(106, status::PEND, "arr[1]", &[]),
        job(521, status::PEND, "long_name_for_test", &[]),
    ];
    let mut jobs = jobs;
    jobs[2].submit_time = T0 + 60;
    jobs[3].submit_time = T0 + 30 * 60;
    let got = table(&jobs, &TableOpts::default(), &fx());
    let want = "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n\
101     root    RUN   normal     vm          vm          sleep 30   Nov 22 09:25  \n\
103     root    PEND  normal     vm                      sleep 20   Nov 22 09:25  \n\
106     root    PEND  normal     vm                      arr[1]     Nov 22 09:26  \n\
521     root    PEND  normal     vm                      *_for_test Nov 22 09:55  \n";
    assert_eq!(got, want);
    let noheader = table(
        &jobs[..1],
        &TableOpts {
            noheader: true,
            ..Default::default()
        },
        &fx(),
    );
    assert!(noheader.starts_with("101 "));
}

#[test]
fn parallel_jobs_show_more_hosts() {
    let j = job(
        7,
        status::RUN,
        "mpi",
        &["hostA", "hostA", "hostA", "hostA", "hostB"],
    );
    let got = row(&j, false, &fx());
    assert_eq!(
        got,
        "7       root    RUN   normal     vm          4*hostA     mpi        Nov 22 09:25  \n\
\x20                                            hostB\n"
    );
    let long_list = Fx {
        short_hosts: false,
        ..fx()
    };
    let got = row(&job(8, status::RUN, "p", &["a", "b"]), false, &long_list);
    assert!(got.ends_with(&format!("\n{}b\n", " ".repeat(45))));
    // A started job without hosts.
    let mut j = job(9, status::RUN, "x", &[]);
    j.start_time = T0;
    assert!(row(&j, false, &fx()).contains("vm             -        x"));
}

#[test]
fn wide_rows_never_truncate() {
    let mut j = job(
        1234567,
        status::RUN,
        "a_very_long_job_name",
        &["hostA", "hostA", "hostB"],
    );
    j.user = "someverylonguser".into();
    let got = row(&j, true, &fx());
    assert_eq!(
        got,
        "1234567 someverylonguser RUN   normal     vm          2*hostA:hostB a_very_long_job_name Nov 22 09:25\n"
    );
    let p = row(&job(5, status::PEND, "x", &[]), true, &fx());
    assert_eq!(
        p,
        "5       root    PEND  normal     vm          -           x          Nov 22 09:25\n"
    );
}

#[test]
fn pending_and_suspending_reasons() {
    let mut p = job(103, status::PEND, "sleep 20", &[]);
    p.pend_reasons = vec![
        PendReason {
            code: pend::HOST_JOB_LIMIT,
            hosts: vec!["vm".into()],
            num_hosts: 1,
            ..Default::default()
        },
        PendReason {
            code: pend::NEW_JOB,
            ..Default::default()
        },
        PendReason {
            code: pend::NOT_ENOUGH_SLOTS,
            hosts: vec!["a".into(), "b".into(), "c".into()],
            num_hosts: 3,
            ..Default::default()
        },
    ];
    let mut s = job(310, status::SSUSP, "burn", &["vm"]);
    s.queue = "lowq".into();
    s.submit_time = T0 + 25 * 60;
    s.reasons = susp::LOAD_REASON;
    s.subreasons = 0;
    let o = TableOpts {
        pend_reasons: true,
        susp_reasons: true,
        noheader: true,
        ..Default::default()
    };
    let got = table(&[p.clone(), s], &o, &fx());
    assert_eq!(
        got,
        "103     root    PEND  normal     vm                      sleep 20   Nov 22 09:25  \n\
\x20Job slot limit reached: 1 host;\n\
\x20New job is waiting for scheduling;\n\
\x20Not enough job slot(s): 3 hosts;\n\
310     root    SSUSP lowq       vm          vm          burn       Nov 22 09:50  \n\
\x20Host load exceeded threshold:  15-second CPU run queue length (r15s)\n"
    );
    assert_eq!(
        pend_reason_lines(&p, true),
        " Job slot limit reached: vm;\n New job is waiting for scheduling;\n Not enough job slot(s): a, b, c;\n"
    );
}

/// Issue 50 item 12: bjobs -p prints the specific reasons as LSF does — the resource a
/// reservation falls short of (mbatchd sends its name), the exclusive-execution reason,
/// and hosts whose slots other jobs reserve.
#[test]
fn issue_50_item_12_specific_pending_reasons_are_printed() {
    let mut p = job(7, status::PEND, "sim", &[]);
    p.pend_reasons = vec![
        PendReason {
            code: pend::RESERVE_BASE + 12,
            detail: "verilog".into(),
            num_hosts: 3,
            ..Default::default()
        },
        PendReason {
            code: pend::NONEXCLUSIVE,
            num_hosts: 2,
            ..Default::default()
        },
        PendReason {
            code: pend::SLOTS_RESERVED,
            hosts: vec!["hostB".into()],
            num_hosts: 1,
            ..Default::default()
        },
    ];
    assert_eq!(
        pend_reason_lines(&p, false),
        " Job requirements for reserving resource (verilog) not satisfied: 3 hosts;\n\
\x20Job's requirement for exclusive execution not satisfied: 2 hosts;\n\
\x20Job slots are reserved for other jobs: 1 host;\n"
    );
    assert!(
        pend_reason_lines(&p, true).ends_with(" Job slots are reserved for other jobs: hostB;\n")
    );
}

#[test]
fn host_reasons_without_host_names_are_counted_from_num_hosts() {
    // What mbatchd sends unless bjobs -l asks for the names (JobsRequest.reason_hosts).
    let mut p = job(104, status::PEND, "sleep 20", &[]);
    p.pend_reasons = vec![PendReason {
        code: pend::HOST_JOB_LIMIT,
        num_hosts: 1000,
        ..Default::default()
    }];
    assert_eq!(
        pend_reason_lines(&p, false),
        " Job slot limit reached: 1000 hosts;\n"
    );
    // -l without names (an answer to a request that did not ask) still counts.
    assert_eq!(
        pend_reason_lines(&p, true),
        " Job slot limit reached: 1000 hosts;\n"
    );
}

#[test]
fn long_format_matches_the_reference() {
    let mut j = job(101, status::RUN, "sleep 30", &["vm"]);
    j.command = "sleep 30".into();
    j.cwd = "/home/alice/run".into();
    j.out_file = "/home/alice/run/out.%J".into();
    j.exec_home = "/root".into();
    j.exec_cwd = "/home/alice/run".into();
    j.pid = 25592;
    j.pgid = 25592;
    j.pids = vec![25592, 25593];
    j.rusage_time = T0 + 15;
    j.cpu_time = 2.0;
    j.mem_kb = 3 * 1024 + 10;
    j.swap_kb = 10 * 1024 + 10;
    j.max_mem_kb = 3 * 1024 + 10;
    j.avg_mem_kb = 2 * 1024 + 10;
    j.options = sub::OUT_FILE | sub::PROJECT_NAME;
    let got = long(&[j], &[], &fx());
    let want = "
Job <101>, User <root>, Project <default>, Status <RUN>, Queue <normal>, Comman
                     d <sleep 30>
Sun Nov 22 09:25:35: Submitted from host <vm>, CWD </home/alice/run>, Output Fi
                     le </home/alice/run/out.%J>;
Sun Nov 22 09:25:40: Started 1 Task(s) on Host(s) <vm>, Allocated 1 Slot(s) on 
                     Host(s) <vm>, Execution Home </root>, Execution CWD </home
                     /alice/run>;
Sun Nov 22 09:25:50: Resource usage collected.
                     The CPU time used is 2 seconds.
                     MEM: 3 Mbytes;  SWAP: 10 Mbytes
                     PGID: 25592;  PIDs: 25592 25593

 MEMORY USAGE:
 MAX MEM: 3 Mbytes;  AVG MEM: 2 Mbytes

 SCHEDULING PARAMETERS:
           r15s   r1m  r15m   ut      pg    io   ls    it    tmp    swp    mem
 loadSched   -     -     -     -       -     -    -     -     -      -      -  
 loadStop    -     -     -     -       -     -    -     -     -      -      -  

";
    assert_eq!(got, want);
}

#[test]
fn long_format_pending_finished_and_separators() {
    let mut p = job(5, status::PEND, "pj", &[]);
    p.cwd = "run".into();
    p.options = sub::JOB_NAME;
    p.options2 = sub2::HOLD | sub2::JOB_CMD_SPOOL;
    p.command = "#!/bin/sh\necho hi\n".into();
    p.pend_reasons = vec![PendReason {
        code: pend::NEW_JOB,
        ..Default::default()
    }];
    let mut d = job(6, status::EXIT, "x", &["vm"]);
    d.end_time = T0 + 10;
    d.exit_status = 3 << 8;
    d.cpu_time = 0.1;
    d.term_reason = "TERM_OWNER".into();
    d.max_mem_kb = 500;
    d.avg_mem_kb = 400;
    let mut q = QueueInfo {
        name: "normal".into(),
        ..Default::default()
    };
    q.load_sched.insert("r1m".into(), 0.3);
    q.load_stop.insert("r1m".into(), 1.0);
    q.load_sched.insert("mem".into(), 100.0);
    q.load_sched.insert("ut".into(), 0.5);
    let got = long(&[p, d], &[q], &fx());
    assert!(got.contains(
        "Job <5>, Job Name <pj>, User <root>, Project <default>, Status <PEND>, Queue <n"
    ));
    assert!(got.contains("Command(Spooled) <#!/bin/sh;echo hi>"));
    assert!(got.contains("Submitted from host <vm> on hold, CWD <$HOME/run>;\n"));
    assert!(got.contains(" PENDING REASONS:\n New job is waiting for scheduling;\n"));
    assert!(got.contains(&format!("\n{}\n\nJob <6>", "-".repeat(78))));
    assert!(got.contains(
        "Sun Nov 22 09:25:45: Exited with exit code 3. The CPU time used is 0.1 seconds.\n"
    ));
    assert!(
        got.contains("Sun Nov 22 09:25:45: Completed <exit>; TERM_OWNER: job killed by owner.\n")
    );
    assert!(got.contains(" MAX MEM: 500 Kbytes;  AVG MEM: 400 Kbytes\n"));
    assert!(got.contains(
            " loadSched   -    0.3    -   0.5       -     -    -     -     -      -    100M \n loadStop    -    1.0    -  "
        ));
    assert!(got.ends_with("\n\n"));
    let mut done = job(7, status::DONE, "ok", &["vm"]);
    done.end_time = T0 + 1;
    assert!(
        long(&[done], &[], &fx())
            .contains(": Done successfully. The CPU time used is 0.0 seconds.\n")
    );
}

#[test]
fn long_thresholds_are_the_stricter_of_queue_and_exec_host() {
    let mut r = job(8, status::SSUSP, "burn", &["vm"]);
    r.reasons = susp::LOAD_REASON;
    r.subreasons = 1;
    let mut q = QueueInfo {
        name: "normal".into(),
        ..Default::default()
    };
    q.load_sched.insert("r1m".into(), 0.3);
    q.load_stop.insert("r1m".into(), 1.8);
    q.load_sched.insert("mem".into(), 100.0);
    let mut h = BatchHostInfo {
        name: "vm".into(),
        ..Default::default()
    };
    h.load_sched.insert("r1m".into(), 0.5);
    h.load_stop.insert("r1m".into(), 1.2);
    h.load_sched.insert("mem".into(), 200.0);
    h.load_sched.insert("ut".into(), 0.5);
    let got = long_with_hosts(&[r], &[q], &[h], &fx());
    assert!(got.contains(
            " SUSPENDING REASONS:\n Host load exceeded threshold:  1-minute CPU run queue length (r1m)\n"
        ), "{got}");
    assert!(got.contains(
            " loadSched   -    0.3    -   0.5       -     -    -     -     -      -    200M \n loadStop    -    1.2    -  "
        ), "{got}");
}

#[test]
fn custom_format_without_and_with_delimiter() {
    let jobs = vec![
        job(101, status::RUN, "sleep 30", &["hostA", "hostA", "hostB"]),
        job(103, status::PEND, "p", &[]),
    ];
    let f = parse_format("jobID st queue exec_host").unwrap_or_default();
    assert_eq!(
        custom(&jobs, &f, false, &fx()),
        "JOBID STAT QUEUE EXEC_HOST\n101 RUN normal 2*hostA:hostB\n103 PEND normal -\n"
    );
    let f = parse_format("id stat").unwrap_or_default();
    assert_eq!(custom(&jobs, &f, true, &fx()), "101 RUN\n103 PEND\n");
    let f = parse_format("jobid: stat:7 job_name:-6 delimiter=','").unwrap_or_default();
    assert_eq!(f.delimiter.as_deref(), Some(","));
    assert_eq!(
        custom(&jobs, &f, false, &fx()),
        "JOBID  ,STAT   ,JOB_NA\n101    ,RUN    ,*ep 30\n103    ,PEND   ,     p\n"
    );
    let f = parse_format("jobid stat submit_time start_time exit_code exit_reason delimiter='|'")
        .unwrap_or_default();
    assert_eq!(
        custom(&jobs[1..], &f, true, &fx()),
        "103|PEND|Nov 22 09:25|-|-|-\n"
    );
    let f = parse_format("user queue").unwrap_or_default();
    // Un-sized: one space between values and none at the end.
    assert_eq!(custom(&jobs[..1], &f, true, &fx()), "root normal\n");
    assert!(parse_format("jobid bogus").is_err());
    assert!(parse_format("").is_err());
    assert!(parse_format("jobid:x").is_err());
}

#[test]
fn json_output() {
    let mut done = job(101, status::EXIT, "x", &["vm"]);
    done.exit_code = 3;
    let fields: Vec<&FieldDef> = [
        "jobid",
        "stat",
        "exit_reason",
        "kill_reason",
        "suspend_reason",
    ]
    .iter()
    .filter_map(|n| field(n))
    .collect();
    let nf = vec![JobRef {
        job_id: 999,
        idx: 0,
        has_idx: false,
    }];
    let got = json(&[done.clone()], &nf, &fields, &fx());
    assert_eq!(
        got,
        "{\"COMMAND\":\"bjobs\",\"JOBS\":2,\"RECORDS\":[\n  {\"JOBID\":\"101\",\"STAT\":\"EXIT\",\"EXIT_REASON\":\"\",\"KILL_REASON\":\"\",\"SUSPEND_REASON\":\"\"},\n  {\"JOBID\":\"999\",\"ERROR\":\"Job <999> is not found\"}]}\n"
    );
    let parsed: serde_json::Value = serde_json::from_str(&got).unwrap_or_default();
    assert_eq!(parsed["JOBS"], 2);
    let defaults: Vec<&FieldDef> = DEFAULT_JSON_FIELDS
        .iter()
        .filter_map(|n| field(n))
        .collect();
    assert_eq!(defaults.len(), 8);
    let got = json(&[job(5, status::PEND, "a\"b", &[])], &[], &defaults, &fx());
    assert!(got.contains("{\"JOBID\":\"5\",\"USER\":\"root\",\"STAT\":\"PEND\",\"QUEUE\":\"normal\",\"FROM_HOST\":\"vm\",\"EXEC_HOST\":\"\",\"JOB_NAME\":\"a\\\"b\",\"SUBMIT_TIME\":\"Nov 22 09:25\"}"));
    assert_eq!(
        json(&[], &[], &defaults, &fx()),
        "{\"COMMAND\":\"bjobs\",\"JOBS\":0,\"RECORDS\":[]}\n"
    );
    // An LSF kill has an exit reason starting with its TERM_ code.
    done.term_reason = "TERM_RUNLIMIT".into();
    assert!(field_value(&done, "exit_reason", &fx()).starts_with("TERM_RUNLIMIT"));
}

#[test]
fn argument_handling() {
    let items = super::super::opts::parse(
        &[
            "-aJ".into(),
            "*x*".into(),
            "-pr".into(),
            "-u".into(),
            "all".into(),
            "12".into(),
        ],
        &SPEC,
        false,
    )
    .unwrap_or_default();
    let a = args_from(items);
    assert!(a.all && a.pend && a.run);
    assert_eq!(a.job_name.as_deref(), Some("*x*"));
    assert_eq!(a.user.as_deref(), Some("all"));
    assert_eq!(a.ids, vec!["12".to_string()]);
    let pr = Args {
        pend: true,
        run: true,
        ..Default::default()
    };
    assert_eq!(state_bits(&pr), status::PEND | status::PSUSP | status::RUN);
    assert_eq!(state_bits(&Args::default()), 0);
    assert_eq!(nothing_message(&Args::default()), "No unfinished job found");
    assert_eq!(
        nothing_message(&Args {
            all: true,
            ..Default::default()
        }),
        "No job found"
    );
}

#[test]
fn array_summary_and_array_limit_reason() {
    let mut jobs = Vec::new();
    for (i, st) in [
        status::DONE,
        status::DONE,
        status::RUN,
        status::RUN,
        status::PEND,
        status::EXIT,
        status::PSUSP,
        status::PEND,
    ]
    .into_iter()
    .enumerate()
    {
        let idx = [1, 2, 3, 4, 5, 7, 8, 9][i];
        let mut j = job(106, st, &format!("arr[{idx}]"), &[]);
        j.idx = idx;
        jobs.push(j);
    }
    // An ordinary job and a finished array are left out (the latter without -a).
    jobs.push(job(107, status::RUN, "plain", &["vm"]));
    let mut fin = job(108, status::DONE, "old[1]", &[]);
    fin.idx = 1;
    jobs.push(fin);
    let want = "JOBID    ARRAY_SPEC  OWNER   NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP\n\
106      arr[1-5,     root       8    2    2    2    1     0     0     1\n";
    assert_eq!(array_summary(&jobs, false, false), want);
    let with_all = array_summary(&jobs, true, true);
    assert_eq!(with_all.lines().count(), 2, "{with_all}");
    assert!(
        with_all
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("108      old[1]"))
    );
    assert_eq!(array_summary(&jobs[8..9], false, false), "");
    assert_eq!(index_ranges(&[1, 2, 3, 5, 7, 8, 9]), "1-3,5,7-9");
    // A reason code basalt-core has no text for shows mbatchd's detail.
    let mut p = job(106, status::PEND, "arr[9]", &[]);
    p.pend_reasons = vec![PendReason {
        code: 38,
        detail: "The job array has reached its running element limit".into(),
        ..Default::default()
    }];
    assert_eq!(
        pend_reason_lines(&p, false),
        " The job array has reached its running element limit;\n"
    );
}

#[test]
fn sum_is_its_own_option_not_s_u_m() {
    let items = super::super::opts::parse(&["-sum".into()], &SPEC, false).unwrap_or_default();
    let a = args_from(items);
    assert!(a.sum);
    assert!(!a.susp);
    assert_eq!(a.user, None);
    assert_eq!(a.host, None);
    // Unfinished jobs only, whatever else is asked.
    assert_eq!(state_bits(&a) & (status::DONE | status::EXIT), 0);
    assert_ne!(state_bits(&a) & status::PEND, 0);
    assert_ne!(state_bits(&a) & status::USUSP, 0);
}

#[test]
fn sum_counts_job_slots_of_unfinished_jobs_by_state() {
    // A 2,4 job that got 4 slots, a pending 3-slot job, a PSUSP job, suspended ones.
    let mut run = job(1, status::RUN, "mpi", &["a", "a", "b", "b"]);
    run.num_processors = 2;
    run.max_processors = 4;
    let mut pend = job(2, status::PEND, "p", &[]);
    pend.num_processors = 3;
    let jobs = vec![
        run,
        pend,
        job(3, status::PSUSP, "h", &[]),
        job(4, status::SSUSP, "s", &["a", "b"]),
        job(5, status::USUSP, "u", &["a"]),
        job(6, status::UNKWN, "k", &["b"]),
        job(7, status::DONE, "d", &["a"]),
    ];
    assert_eq!(
        sum(&jobs),
        "RUN        SSUSP      USUSP      UNKNOWN    PEND       FWD_PEND   \n\
             4          2          1          1          4          0          \n"
    );
    assert_eq!(
        sum(&[]),
        "RUN        SSUSP      USUSP      UNKNOWN    PEND       FWD_PEND   \n\
             0          0          0          0          0          0          \n"
    );
}

/// A pending job holding slots (SLOT_RESERVE) says where and since when, as LSF's
/// `bjobs -l` does.
#[test]
fn long_format_shows_a_pending_jobs_reserved_slots() {
    let mut p = job(8, status::PEND, "big", &[]);
    p.num_processors = 4;
    p.reserved_hosts = vec!["hostA".into(), "hostA".into(), "hostB".into()];
    p.reserve_time = T0 + 10;
    let got = long(&[p], &[], &fx());
    assert!(
        got.contains("Sun Nov 22 09:25:45: Reserved <3> job slots on host(s) <2*hostA> <hostB>;\n"),
        "{got}"
    );
    let mut one = job(9, status::PEND, "big", &[]);
    one.reserved_hosts = vec!["hostB".into()];
    one.reserve_time = T0 + 10;
    assert!(long(&[one], &[], &fx()).contains(": Reserved <1> job slot on host <hostB>;\n"));
    // None reserved: no such line.
    assert!(!long(&[job(10, status::PEND, "x", &[])], &[], &fx()).contains("Reserved"));
}

/// Issue 23: bjobs -l says why a job was preempted (its suspending reason, the job that
/// preempted it) and how often.
#[test]
fn long_format_shows_why_and_how_often_a_job_was_preempted() {
    let mut p = job(9, status::SSUSP, "sim", &["vm"]);
    p.reasons = susp::MBD_PREEMPT | susp::MBD_LOCK;
    p.preempt_count = 2;
    p.preempted_by = "12".into();
    let got = long(&[p.clone()], &[], &fx());
    assert!(
        got.contains(" SUSPENDING REASONS:\n The job was preempted by a higher priority job;\n"),
        "{got}"
    );
    assert!(
        got.contains("\n PREEMPTION:\n Preempted <2> times; last by job <12>.\n"),
        "{got}"
    );
    // Running again after one preemption, its preempting job not known (a restart).
    p.state = status::RUN;
    p.reasons = 0;
    p.preempt_count = 1;
    p.preempted_by.clear();
    let got = long(&[p], &[], &fx());
    assert!(
        got.contains("\n PREEMPTION:\n Preempted <1> time.\n"),
        "{got}"
    );
    assert!(!got.contains("SUSPENDING REASONS"), "{got}");
    // Never preempted: no such section.
    assert!(!long(&[job(10, status::RUN, "x", &["vm"])], &[], &fx()).contains("PREEMPTION"));
}

/// Issue 50, item 2: bjobs -l says how many times a job was requeued by its exit value.
#[test]
fn long_format_shows_how_often_a_job_was_requeued_by_its_exit_value() {
    let mut p = job(9, status::PEND, "sim", &[]);
    p.reasons = pend::REQUEUED;
    p.requeue_count = 2;
    let got = long(&[p.clone()], &[], &fx());
    assert!(
        got.contains(
            "\n REQUEUE:\n Requeued <2> times for its exit value (REQUEUE_EXIT_VALUES).\n"
        ),
        "{got}"
    );
    p.requeue_count = 1;
    p.state = status::RUN;
    let got = long(&[p], &[], &fx());
    assert!(
        got.contains("\n REQUEUE:\n Requeued <1> time for its exit value (REQUEUE_EXIT_VALUES).\n"),
        "{got}"
    );
    // Never requeued: no such section.
    assert!(!long(&[job(10, status::RUN, "x", &["vm"])], &[], &fx()).contains("REQUEUE"));
}

/// MultiCluster, submission side: job 201 forwarded to cluster `east`, queue `recv`,
/// where it is job 5 and runs on hostA (2 slots) and hostB.
fn forwarded(state: u32) -> JobInfo {
    let hosts: &[&str] = if state == status::PEND {
        &[]
    } else {
        &["hostA@east", "hostA@east", "hostB@east"]
    };
    let mut j = job(201, state, "mc", hosts);
    j.forward_cluster = "east".into();
    j.forward_queue = "recv".into();
    j.forward_time = T0 + 2;
    j.remote_job_id = 5;
    j
}

/// MultiCluster, execution side: job 5 forwarded here from cluster `west`, where it is
/// job 201 submitted from hostW.
fn received() -> JobInfo {
    let mut j = job(5, status::RUN, "mc", &["vm"]);
    j.from_host = "hostW".into();
    j.source_cluster = "west".into();
    j.source_job_id = 201;
    j
}

#[test]
fn forwarded_jobs_in_the_tables() {
    let got = table(
        &[forwarded(status::RUN), received()],
        &TableOpts::default(),
        &fx(),
    );
    assert_eq!(
        got,
        "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n\
201     root    RUN   normal     vm          *hostA@east mc         Nov 22 09:25  \n\
\x20                                            hostB@east\n\
5       root    RUN   normal     hostW@west  vm          mc         Nov 22 09:25  \n"
    );
    assert_eq!(
        row(&forwarded(status::RUN), true, &fx()),
        "201     root    RUN   normal     vm          2*hostA@east:hostB@east mc         Nov 22 09:25\n"
    );
    // Without short host lists every slot's host is its own line.
    let long_list = Fx {
        short_hosts: false,
        ..fx()
    };
    assert!(
        row(&forwarded(status::RUN), false, &long_list).ends_with(&format!(
            " hostA@east  mc         Nov 22 09:25  \n{0}hostA@east\n{0}hostB@east\n",
            " ".repeat(45)
        ))
    );
    assert_eq!(from_host_name(&received()), "hostW@west");
    assert_eq!(from_host_name(&forwarded(status::RUN)), "vm");
}

#[test]
fn long_format_says_where_a_job_was_forwarded_and_from_where() {
    let got = long_job(&forwarded(status::RUN), None, &fx());
    assert!(
        got.contains(
            "Sun Nov 22 09:25:35: Submitted from host <vm>, CWD <$HOME>;\n\
             Sun Nov 22 09:25:37: Forwarded job to cluster <east>, queue <recv>, remote job \n\
             \x20                    ID <5>;\n\
             Sun Nov 22 09:25:40: Started 3 Task(s) on Host(s) <2*hostA@east> <hostB@east>, \n"
        ),
        "{got}"
    );
    // Pending there after coming back once; its id there not known yet.
    let mut p = forwarded(status::PEND);
    p.remote_job_id = 0;
    p.mc_returns = 1;
    let got = long_job(&p, None, &fx());
    assert!(
        got.contains(
            "CWD <$HOME>;\n\
             Sun Nov 22 09:25:37: Forwarded job to cluster <east>, queue <recv>;\n\
             \x20The job returned <1> time(s) from remote clusters without starting;\n\
             \x20PENDING REASONS:\n"
        ),
        "{got}"
    );
    // Back here for good: no forward line, the returns still counted.
    p.forward_cluster.clear();
    p.forward_queue.clear();
    p.mc_returns = 2;
    assert_eq!(
        mc_lines(&p, &fx()),
        " The job returned <2> time(s) from remote clusters without starting;\n"
    );
    // The execution side.
    let got = long_job(&received(), None, &fx());
    assert!(
        got.contains(
            "Sun Nov 22 09:25:35: Submitted from host <hostW@west>, CWD <$HOME>;\n\
             \x20Forwarded from cluster <west>, job ID <201>;\n\
             Sun Nov 22 09:25:40: "
        ),
        "{got}"
    );
    // A local job has none of these lines.
    assert_eq!(mc_lines(&job(1, status::RUN, "x", &["vm"]), &fx()), "");
}

#[test]
fn long_thresholds_are_not_taken_from_a_local_host_for_a_remote_one() {
    let mut q = QueueInfo {
        name: "normal".into(),
        ..Default::default()
    };
    q.load_sched.insert("r1m".into(), 3.0);
    let host = BatchHostInfo {
        name: "hostA".into(),
        load_sched: [("r1m".to_owned(), 1.0)].into_iter().collect(),
        ..Default::default()
    };
    let mut j = forwarded(status::RUN);
    // Its short name is a local host's, but it is east's.
    j.exec_hosts = vec!["hostA.example.com@east".into()];
    let got = long_with_hosts(&[j], &[q], &[host], &fx());
    assert!(got.contains(" loadSched   -    3.0    -  "), "{got}");
}

#[test]
fn multicluster_fields_of_o_and_json() {
    let fmt = parse_format(
        "jobid fwd_cluster:8 forward_time srcjobid dstjobid srcluster from_host delimiter='|'",
    )
    .unwrap_or_default();
    let names: Vec<&str> = fmt.columns.iter().map(|c| c.def.name).collect();
    assert_eq!(
        names,
        [
            "jobid",
            "forward_cluster",
            "forward_time",
            "srcjobid",
            "dstjobid",
            "source_cluster",
            "from_host"
        ]
    );
    let got = custom(
        &[
            forwarded(status::RUN),
            received(),
            job(7, status::RUN, "x", &["vm"]),
        ],
        &fmt,
        false,
        &fx(),
    );
    assert_eq!(
        got,
        "JOBID|FORWARD_|FORWARD_TIME|SRCJOBID|DSTJOBID|SOURCE_CLUSTER|FROM_HOST\n\
         201|east    |Nov 22 09:25|-|5|-|vm\n\
         5|-       |-|201|-|west|hostW@west\n\
         7|-       |-|-|-|-|vm\n"
    );
    let fields: Vec<&FieldDef> = fmt.columns.iter().map(|c| c.def).collect();
    let js: serde_json::Value =
        serde_json::from_str(&json(&[received()], &[], &fields, &fx())).unwrap_or_default();
    assert_eq!(js["RECORDS"][0]["SOURCE_CLUSTER"], "west");
    assert_eq!(js["RECORDS"][0]["SRCJOBID"], "201");
    assert_eq!(js["RECORDS"][0]["FORWARD_CLUSTER"], "");
    assert_eq!(js["RECORDS"][0]["FROM_HOST"], "hostW@west");
}

#[test]
fn sum_counts_forwarded_pending_jobs_as_fwd_pend() {
    let mut p = forwarded(status::PEND);
    p.num_processors = 3;
    let jobs = vec![forwarded(status::RUN), p, job(2, status::PEND, "p", &[])];
    assert_eq!(
        sum(&jobs),
        "RUN        SSUSP      USUSP      UNKNOWN    PEND       FWD_PEND   \n\
             3          0          0          0          1          3          \n"
    );
}

/// Issue 27: a checkpointable job's submission line names its checkpoint period and
/// directory; its checkpoints, and why the last checkpoint or restart failed, have a
/// CHECKPOINT block.
#[test]
fn long_format_shows_checkpoint_settings_and_outcomes() {
    let mut j = job(7, status::RUN, "ck", &["vm"]);
    j.chkpnt_dir = "/ckpt/7".into();
    j.chkpnt_period = 600;
    j.chkpnt_count = 2;
    j.chkpnt_time = T0 + 4;
    j.chkpnt_error = "the job did not write /ckpt/7/chkpnt.done within 60 s of SIGWINCH".into();
    let got = long_job(&j, None, &fx());
    assert!(
        got.contains(
            "Sun Nov 22 09:25:35: Submitted from host <vm>, CWD <$HOME>, Checkpoint period 1\n\
             \x20                    0 min., Checkpoint directory </ckpt/7>;\n"
        ),
        "{got}"
    );
    assert!(
        got.contains(
            "\n CHECKPOINT:\n Checkpointed <2> time(s), last at Sun Nov 22 09:25:39;\n \
             Last checkpoint failed: the job did not write /ckpt/7/chkpnt.done within 60 s of SIGWINCH;\n"
        ),
        "{got}"
    );
    // Not checkpointable: neither.
    let got = long_job(&job(8, status::RUN, "plain", &["vm"]), None, &fx());
    assert!(!got.contains("Checkpoint"), "{got}");
    // A restart that failed.
    let mut p = job(9, status::PEND, "ck", &[]);
    p.chkpnt_dir = "/ckpt/9".into();
    p.restart = true;
    p.restart_error = "no checkpoint in /ckpt/9 (chkpnt.done is missing)".into();
    let got = long_job(&p, None, &fx());
    assert!(
        got.contains(
            " CHECKPOINT:\n Last restart failed: no checkpoint in /ckpt/9 (chkpnt.done is missing);\n"
        ),
        "{got}"
    );
}
