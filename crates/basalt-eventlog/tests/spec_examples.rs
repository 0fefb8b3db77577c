//! The literal example lines of event-log.md §5 (OpenLava 4.0dev4 `"40"`, its lsb.acct,
//! volclava `"22"`): every line parses, key fields are right, and writing the parsed record
//! gives the same fields back.

use basalt_eventlog::{Dialect, Field, JobFinish, Record, Rusage, parse_line, split_fields};

const OPENLAVA: &str = r#"#80
"LOAD_INDEX" "40" 1795339510 11 "r15s" "r1m" "r15m" "ut" "pg" "io" "ls" "it" "tmp" "swp" "mem"
"MBD_START" "40" 1795339510 "vm" "openlava" 0 1
"JOB_NEW" "40" 1795339535 101 0 33554434 1 1795339535 0 0 -65535 0 0 "root" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "" 100.00 18 "normal" "" "vm" "/home/alice/run" "" "" "" "" "/root" "1795339535.101" 0 "" "" "" "sleep 30" 0 "" "default" 1 "linux" "" 1040 0 "" "" "" -1 "" -1 "" -1
"JOB_NEW" "40" 1795339535 102 0 33554451 1 1795339535 0 0 -65535 0 0 "root" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "" 100.00 18 "normal" "" "vm" "/home/alice/run" "" "" "/home/alice/run/out.%J" "" "/root" "1795339535.102" 0 "" "" "myjob" "env | grep -E ""^LSB_|^LSF_|^LS_"" | sort" 0 "" "default" 1 "linux" "" 7184 0 "" "" "" -1 "" -1 "" -1
"JOB_START" "40" 1795339540 101 4 0 0 100.0 1 "vm" "" "" 2097160 0 ""
"JOB_START_ACCEPT" "40" 1795339540 101 25592 25592 0 2097152
"JOB_EXECUTE" "40" 1795339540 101 0 25592 "/home/alice/run" "/root" "root" 25592 0
"JOB_STATUS" "40" 1795339540 102 64 0 0 0.0236 1795339540 1 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 0 0
"JOB_STATUS" "40" 1795339540 102 192 0 0 0.0236 1795339540 0 0 0
"JOB_STATUS" "40" 1795339582 104 16 65538 0 0.0000 0 0 0 0
"JOB_STATUS" "40" 1795339584 104 4 65537 0 0.0000 0 0 0 0
"JOB_STATUS" "40" 1795340840 310 8 64 0 0.0000 0 0 0 0
"JOB_SIGNAL" "40" 1795339586 105 0 1 "KILL" 0 "root"
"JOB_STATUS" "40" 1795339586 105 32 0 0 0.0211 1795339586 1 0.005440 0.015618 4392 0 -1 0 0 782 0 0 0 32 -1 0 0 0 18 6 -1 33280 0
"HOST_CTRL" "40" 1795339586 2 "vm" 0 "root" ""
"JOB_MODIFY2" "40" 1795339586 "103" 8388609 4096 0 0 "root" 1795339586 18 2147483646 0 0 0 0 "newname" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "/root" "" "vm" "" 956046368 2147483646 "" 0
"MBD_DIE" "40" 1795339614 "vm" 0 202
"LOG_SWITCH" "40" 1795341347 623
"JOB_CLEAN" "40" 1795341358 521 0
"JOB_START" "40" 1795339590 106 4 0 0 100.0 1 "vm" "" "" 2097160 1 ""
"#;

const ACCT: &str = r#""JOB_FINISH" "40" 1795339540 102 0 33554451 1 1795339535 0 0 1795339540 "root" "normal" "" "" "" "vm" "/home/alice/run" "" "/home/alice/run/out.%J" "" "1795339535.102" 0 1 "vm" 64 100.0 "myjob" "env | grep -E ""^LSB_|^LSF_|^LS_"" | sort" 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 "" "default" 0 1 "" 0 3976 11224 "" """#;

const VOLCLAVA: &str = r#""JOB_START" "22" 1795340503 1 4 0 0 100.0 1 "vm" "" "" 0 0 "select[type == local] order[r15s:pg]"
"JOB_SWITCH" "22" 1795342025 0 5 "lowq" 0 "root"
"JOB_MOVE" "22" 1795342025 0 6 1 1 0 "root"
"QUEUE_CTRL" "22" 1795342025 2 "lowq" 0 "root" ""
"JOB_FORCE" "22" 1795342025 6 0 0 1 1  "vm" "root"
"JOB_SIGNAL" "22" 1795342032 6 0 4 "REQUEUE_PEND" 0 "root"
"JOB_REQUEUE" "22" 1795342036 6 0
"#;

const COMMAND: &str = r#"env | grep -E "^LSB_|^LSF_|^LS_" | sort"#;

fn parse_all(text: &str) -> Vec<Record> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| match parse_line(l) {
            Ok(r) => r,
            Err(e) => panic!("line {}: {e}\n{l}", i + 1),
        })
        .collect()
}

/// Writing a parsed example gives the same fields (the only byte difference allowed is
/// volclava's double space in JOB_FORCE, which Basalt writes as one).
fn assert_rewrites(text: &str) {
    for line in text.lines() {
        let Some(rec) = parse_line(line).unwrap() else {
            continue;
        };
        let out = rec.to_line();
        assert_eq!(
            split_fields(&out).unwrap(),
            split_fields(line).unwrap(),
            "\n in: {line}\nout: {out}"
        );
        if !line.contains("  ") {
            assert_eq!(out, line);
        }
        assert_eq!(parse_line(&out).unwrap(), Some(rec));
    }
}

#[test]
fn openlava_lines_parse_with_key_fields() {
    let recs = parse_all(OPENLAVA);
    assert_eq!(recs.len(), 20, "the #80 header is skipped");
    for r in &recs {
        assert_eq!(r.header().version, "40");
        assert_eq!(r.header().dialect(), Dialect::OpenLava);
    }

    let Record::LoadIndex(li) = &recs[0] else {
        panic!("{:?}", recs[0])
    };
    assert_eq!(li.names.len(), 11);
    assert_eq!(li.names[10], "mem");

    let Record::MbdStart(ms) = &recs[1] else {
        panic!()
    };
    assert_eq!(
        (ms.master.as_str(), ms.cluster.as_str()),
        ("vm", "openlava")
    );
    assert_eq!((ms.num_hosts, ms.num_queues), (0, 1));

    let Record::JobNew(j) = &recs[2] else {
        panic!()
    };
    assert_eq!(j.job_id, 101);
    assert_eq!(j.command, "sleep 30");
    assert_eq!(j.sig_value, -65535);
    assert_eq!(j.rlimits, [-1; 11]);
    assert_eq!(j.host_factor, 100.0);
    assert_eq!(j.umask, 18);
    assert_eq!(j.options2, 1040);
    assert_eq!(j.user_priority, -1);
    assert_eq!((j.abs_run_limit, j.priority), (-1, -1));

    let Record::JobNew(j) = &recs[3] else {
        panic!()
    };
    assert_eq!(j.header.time, 1795339535);
    assert_eq!(j.job_id, 102);
    assert_eq!(j.user_id, 0);
    assert_eq!(j.options, 33554451);
    assert_eq!(j.user_name, "root");
    assert_eq!(j.queue, "normal");
    assert_eq!(j.from_host, "vm");
    assert_eq!(j.cwd, "/home/alice/run");
    assert_eq!(j.out_file, "/home/alice/run/out.%J");
    assert_eq!(j.sub_home_dir, "/root");
    assert_eq!(j.job_file, "1795339535.102");
    assert!(j.asked_hosts.is_empty());
    assert_eq!(j.job_name, "myjob");
    assert_eq!(j.command, COMMAND);
    assert_eq!(j.project_name, "default");
    assert_eq!(j.max_num_processors, 1);
    assert_eq!(j.sched_host_type, "linux");
    assert_eq!(j.options2, 7184);
    assert_eq!(j.idx, 0);
    assert!(j.foreign_tail.is_none());

    let Record::JobStart(s) = &recs[4] else {
        panic!()
    };
    assert_eq!((s.job_id, s.j_status, s.job_pid), (101, 4, 0));
    assert_eq!(s.host_factor, 100.0);
    assert_eq!(s.exec_hosts, ["vm"]);
    assert_eq!(s.j_flags, 2097160);
    assert_eq!(s.idx, 0);

    let Record::JobStartAccept(a) = &recs[5] else {
        panic!()
    };
    assert_eq!(
        (a.job_id, a.job_pid, a.job_pgid, a.idx, a.j_flags),
        (101, 25592, 25592, 0, 2097152)
    );

    let Record::JobExecute(x) = &recs[6] else {
        panic!()
    };
    assert_eq!(x.exec_cwd, "/home/alice/run");
    assert_eq!(x.exec_home, "/root");
    assert_eq!(x.exec_username, "root");
    assert_eq!(x.job_pid, 25592);

    let Record::JobStatus(st) = &recs[7] else {
        panic!()
    };
    assert_eq!(
        (st.job_id, st.j_status, st.reason, st.subreasons),
        (102, 64, 0, 0)
    );
    assert_eq!(st.cpu_time, 0.0236);
    assert_eq!(st.end_time, 1795339540);
    let ru = st.rusage.expect("ru = 1");
    assert_eq!(ru.utime, 0.008610);
    assert_eq!(ru.stime, 0.015018);
    assert_eq!(ru.maxrss, 3976.0);
    assert_eq!(ru.ixrss, 0.0);
    assert_eq!(ru.ismrss, -1.0);
    assert_eq!(ru.minflt, 1053.0);
    assert_eq!(ru.majflt, 3.0);
    assert_eq!(ru.inblock, 912.0);
    assert_eq!(ru.oublock, 32.0);
    assert_eq!(ru.ioch, -1.0);
    assert_eq!(ru.nvcsw, 24.0);
    assert_eq!(ru.nivcsw, 6.0);
    assert_eq!(ru.exutime, -1.0);
    assert_eq!((st.exit_status, st.idx), (0, 0));
    assert!(st.mem.is_none());

    let Record::JobStatus(st) = &recs[8] else {
        panic!()
    };
    assert_eq!(st.j_status, 192, "DONE|PDONE");
    assert!(st.rusage.is_none());

    let Record::JobStatus(st) = &recs[9] else {
        panic!()
    };
    assert_eq!(
        (st.j_status, st.reason),
        (16, 0x2 | 0x10000),
        "bstop: USUSP, USER_STOP|MBD_LOCK"
    );
    let Record::JobStatus(st) = &recs[11] else {
        panic!()
    };
    assert_eq!(
        (st.j_status, st.reason, st.subreasons),
        (8, 0x40, 0),
        "SSUSP on r15s"
    );

    let Record::JobSignal(sig) = &recs[12] else {
        panic!()
    };
    assert_eq!((sig.job_id, sig.run_count), (105, 1));
    assert_eq!(sig.signal_symbol, "KILL");
    assert_eq!(sig.user_name, "root");

    let Record::JobStatus(st) = &recs[13] else {
        panic!()
    };
    assert_eq!((st.j_status, st.exit_status), (32, 33280), "exit code 130");

    let Record::HostCtrl(h) = &recs[14] else {
        panic!()
    };
    assert_eq!(
        (h.op_code, h.host.as_str(), h.message.as_str()),
        (2, "vm", "")
    );

    let Record::JobModify2(m) = &recs[15] else {
        panic!()
    };
    assert_eq!(m.job_key(), Some((103, 0)));
    assert_eq!(Some(103), recs[15].job_id());
    assert_eq!(Some(0), recs[15].idx());
    assert_eq!(
        (m.options, m.options2, m.del_options, m.user_id),
        (0x80_0001, 0x1000, 0, 0)
    );
    assert_eq!(
        (m.user_name.as_str(), m.submit_time, m.umask),
        ("root", 1_795_339_586, 18)
    );
    assert_eq!(m.num_processors, basalt_eventlog::modify::DEFAULT_NUMPRO);
    assert_eq!((m.begin_time, m.term_time), (0, 0));
    assert_eq!(m.job_name, "newname");
    assert!(m.queue.is_empty() && m.asked_hosts.is_empty());
    assert_eq!(m.rlimits, [-1; basalt_eventlog::rlimit::COUNT]);
    assert_eq!(
        (m.sub_home_dir.as_str(), m.job_file.as_str()),
        ("/root", "")
    );
    assert_eq!((m.from_host.as_str(), m.cwd.as_str()), ("vm", ""));
    assert_eq!(
        (m.nios_port, m.max_num_processors),
        (956_046_368, 2_147_483_646)
    );
    assert_eq!((m.sched_host_type.as_str(), m.del_options2), ("", 0));
    assert_eq!(m.user_priority, -1);
    assert_eq!(m.basalt_options, 0);
    assert!(m.post_exec_cmd.is_empty() && m.basalt_extra.is_empty());

    let Record::MbdDie(d) = &recs[16] else {
        panic!()
    };
    assert_eq!(
        (d.master.as_str(), d.num_remove_jobs, d.exit_code),
        ("vm", 0, 202)
    );

    let Record::LogSwitch(l) = &recs[17] else {
        panic!()
    };
    assert_eq!(l.last_job_id, 623);
    let Record::JobClean(c) = &recs[18] else {
        panic!()
    };
    assert_eq!((c.job_id, c.idx), (521, 0));

    let Record::JobStart(s) = &recs[19] else {
        panic!()
    };
    assert_eq!((s.job_id, s.idx), (106, 1), "array element");
}

#[test]
fn openlava_lines_rewrite_identically() {
    assert_rewrites(OPENLAVA);
}

#[test]
fn acct_line_parses() {
    let recs = parse_all(ACCT);
    let [Record::JobFinish(f)] = recs.as_slice() else {
        panic!("{recs:?}")
    };
    let f: &JobFinish = f;
    assert_eq!(f.header.time, 1795339540);
    assert_eq!(f.job_id, 102);
    assert_eq!(f.options, 33554451);
    assert_eq!(f.submit_time, 1795339535);
    assert_eq!(f.start_time, 1795339540);
    assert_eq!(f.user_name, "root");
    assert_eq!(f.queue, "normal");
    assert_eq!(f.from_host, "vm");
    assert_eq!(f.out_file, "/home/alice/run/out.%J");
    assert_eq!(f.job_file, "1795339535.102");
    assert!(f.asked_hosts.is_empty());
    assert_eq!(f.exec_hosts, ["vm"]);
    assert_eq!(f.j_status, 64);
    assert_eq!(f.host_factor, 100.0);
    assert_eq!(f.job_name, "myjob");
    assert_eq!(f.command, COMMAND);
    assert_eq!(f.rusage.maxrss, 3976.0);
    assert_eq!(f.rusage.exutime, -1.0);
    assert!((f.rusage.cpu_time() - 0.023628).abs() < 1e-9);
    assert_eq!(f.project_name, "default");
    assert_eq!((f.exit_status, f.max_num_processors, f.idx), (0, 1, 0));
    assert_eq!((f.max_rmem, f.max_rswap), (3976, 11224));
    assert!(f.foreign_tail.is_none());
    assert_rewrites(ACCT);
    assert_eq!(f.to_line(), ACCT);
}

#[test]
fn volclava_lines_parse() {
    let recs = parse_all(VOLCLAVA);
    assert_eq!(recs.len(), 7);
    assert!(
        recs.iter()
            .all(|r| r.header().dialect() == Dialect::Volclava)
    );

    let Record::JobStart(s) = &recs[0] else {
        panic!()
    };
    assert_eq!(s.effective_res_req, "select[type == local] order[r15s:pg]");
    assert_eq!(s.user_group, "");

    let Record::JobSwitch(sw) = &recs[1] else {
        panic!()
    };
    assert_eq!(
        (sw.user_id, sw.job_id, sw.queue.as_str(), sw.idx),
        (0, 5, "lowq", 0)
    );

    let Record::JobMove(m) = &recs[2] else {
        panic!()
    };
    assert_eq!((m.job_id, m.position, m.base), (6, 1, 1));

    let Record::QueueCtrl(q) = &recs[3] else {
        panic!()
    };
    assert_eq!((q.op_code, q.queue.as_str()), (2, "lowq"));

    let Record::JobForce(f) = &recs[4] else {
        panic!()
    };
    assert_eq!((f.job_id, f.user_id, f.idx, f.options), (6, 0, 0, 1));
    assert_eq!(
        f.exec_hosts,
        ["vm"],
        "the double space before the host list is tolerated"
    );
    assert_eq!(f.user_name, "root");

    let Record::JobSignal(sig) = &recs[5] else {
        panic!()
    };
    assert_eq!(sig.signal_symbol, "REQUEUE_PEND");
    assert_eq!(sig.run_count, 4);

    let Record::JobRequeue(r) = &recs[6] else {
        panic!()
    };
    assert_eq!((r.job_id, r.idx), (6, 0));

    assert_rewrites(VOLCLAVA);
}

#[test]
fn volclava_job_new_with_post_exec_and_trailing_fields() {
    // volclava inserts "postExecCmd" after "preExecCmd" when SUB_POST_EXEC (0x40000000)
    // is set, and appends "jobDesc" "specifiedCwd"; JOB_STATUS appends maxMem avgMem.
    let options = 0x4000_0000u32 | 0x2 | 0x1;
    let line = format!(
        r#""JOB_NEW" "22" 1795340500 7 1000 {options} 1 1795340500 0 0 0 0 0 "alice" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "" 100.00 18 "normal" "" "vm" "/home/alice" "" "" "" "" "/home/alice" "1795340500.7" 0 "" "echo pre" "echo post" "named" "sleep 1" 0 "" "default" 1 "" "" 0 0 "" "" "" -1 "a description" "/scratch/%J""#
    );
    let Some(Record::JobNew(j)) = parse_line(&line).unwrap() else {
        panic!()
    };
    assert_eq!(j.pre_exec_cmd, "echo pre");
    assert_eq!(j.post_exec_cmd, "echo post");
    assert_eq!(j.job_name, "named");
    assert_eq!(j.command, "sleep 1");
    assert_eq!(j.job_description, "a description");
    assert_eq!(j.specified_cwd, "/scratch/%J");
    assert_eq!(Record::JobNew(j.clone()).to_line(), line);

    let st = r#""JOB_STATUS" "22" 1795340600 7 64 0 0 0.5000 1795340600 0 0 0 2048 1024"#;
    let Some(Record::JobStatus(s)) = parse_line(st).unwrap() else {
        panic!()
    };
    let mem = s.mem.expect("maxMem avgMem");
    assert_eq!((mem.max_mem, mem.avg_mem), (2048, 1024));
}

#[test]
fn ibm_lsf_records_keep_their_tail() {
    // An LSF 9.13 JOB_NEW: the common prefix up to "loginShell", then fields this crate
    // does not model (no Basalt mark).
    let line = r#""JOB_NEW" "9.13" 1495678422 101 506 33554435 1 1495678422 0 0 -65535 0 0 "user1" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 ""  60.00 18 "normal" "" "hostA" "$HOME" "" "" "" "" "/home/user1" "1495678422.101" 0 "" "" "job1" "sleep 100" 0 "" "default" 1 "LINUX86" "" "" "" 0 2048 0 "" "" "" -1 "" "" 0 "" 0 "" -1 "" "" "" "" -1 "" -1 0"#;
    let Some(Record::JobNew(j)) = parse_line(line).unwrap() else {
        panic!()
    };
    assert_eq!(j.header.dialect(), Dialect::Lsf);
    assert_eq!((j.job_id, j.user_id), (101, 506));
    assert_eq!(j.job_name, "job1");
    assert_eq!(j.command, "sleep 100");
    assert_eq!(j.host_factor, 60.0);
    let tail = j.foreign_tail.as_ref().expect("LSF tail kept");
    assert_eq!(tail[0], Field::Str(String::new()));
    assert_eq!(j.options2, 0, "not interpreted");
    assert_eq!(Record::JobNew(j).to_line(), line);

    // Other dotted versions are accepted.
    for v in ["6.0", "7.06", "10.108", "10.1"] {
        let l = format!(r#""JOB_CLEAN" "{v}" 1 2 0"#);
        assert!(parse_line(&l).unwrap().is_some(), "{v}");
    }
    for bad in ["", "x", "1.a", ".1"] {
        let l = format!(r#""JOB_CLEAN" "{bad}" 1 2 0"#);
        assert_eq!(parse_line(&l).unwrap_err().field, 2, "{bad:?}");
    }
}

#[test]
fn short_eventfile_host_lists_are_expanded() {
    let line = r#""JOB_START" "10.108" 1 7 4 0 0 1.0 3 "4*hostA" "hostB" "hostC" "" "" 0 0"#;
    let Some(Record::JobStart(s)) = parse_line(line).unwrap() else {
        panic!()
    };
    assert_eq!(
        s.exec_hosts,
        ["hostA", "hostA", "hostA", "hostA", "hostB", "hostC"]
    );
}

#[test]
fn errors_carry_the_field_position() {
    let e = parse_line(r#""JOB_NEW" "40" 1795339535 abc 0"#).unwrap_err();
    assert_eq!(e.field, 4);
    assert!(e.message.contains("jobId"), "{e}");
    let e = parse_line(r#""JOB_STATUS" "40" 1795339540 102 64 0 0 0.0236 1795339540 1 0.1"#)
        .unwrap_err();
    assert_eq!(e.field, 12, "the second rusage field is missing");
    assert!(e.message.contains("ru_stime"), "{e}");
    let e = parse_line(r#""JOB_CLEAN" "40" 1 "521" 0"#).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("field $4: jobId: expected an integer"),
        "{e}"
    );
    // Comments and blank lines are not records.
    assert_eq!(parse_line("#80   ").unwrap(), None);
    assert_eq!(parse_line("   ").unwrap(), None);
    assert_eq!(parse_line("").unwrap(), None);
}

#[test]
fn rusage_defaults_to_unknown() {
    assert_eq!(Rusage::default().to_array(), [-1.0; 19]);
}
