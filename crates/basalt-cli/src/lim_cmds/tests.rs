//! Unit tests of the LIM-level commands' output.
use super::*;
use basalt_proto::common::{HostInfo, LoadValue};

fn host(name: &str, status: HostStatus, load: &[(&str, f64)], busy: &[&str]) -> HostRecord {
    HostRecord {
        info: Some(HostInfo {
            name: name.into(),
            host_type: "linux".into(),
            model: "IntelI5".into(),
            cpu_factor: 100.0,
            ncpus: 2,
            max_mem_mb: 24105,
            max_swp_mb: 0,
            max_tmp_mb: 1000,
            server: true,
            resources: vec!["cs".into()],
        }),
        has_info: true,
        load: load
            .iter()
            .map(|(n, v)| LoadValue {
                name: (*n).into(),
                value: *v,
            })
            .collect(),
        status: status as i32,
        busy: busy.iter().map(|s| (*s).to_owned()).collect(),
        thresholds: vec![],
        age_ms: 0,
    }
}

fn opts() -> LoadOpts {
    LoadOpts {
        long: false,
        wide: false,
        run_queue: RunQueue::Raw,
        indices: None,
    }
}

#[test]
fn lsload_matches_lsf_layout() {
    let reply = HostsReply {
        is_master: true,
        master: "vm".into(),
        hosts: vec![
            host(
                "vm",
                HostStatus::Ok,
                &[
                    ("r15s", 2.5),
                    ("r1m", 1.1),
                    ("r15m", 0.4),
                    ("ut", 0.0),
                    ("pg", 0.0),
                    ("ls", 0.0),
                    ("it", 2.0e8),
                    ("tmp", 79.0 * 1024.0),
                    ("swp", 0.0),
                    ("mem", 23.0 * 1024.0),
                ],
                &[],
            ),
            host("down", HostStatus::Unavail, &[], &[]),
        ],
        ..Default::default()
    };
    let text = lsload(&reply, &opts());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "HOST_NAME       status  r15s   r1m  r15m   ut    pg  ls    it   tmp   swp   mem"
    );
    assert_eq!(
        lines[1],
        "vm                  ok   2.5   1.1   0.4   0%   0.0   0 2e+08   79G    0M   23G"
    );
    // `%-15.15s %6s`: the status is wider than its field.
    assert_eq!(lines[2], "down            unavail");
}

#[test]
fn busy_values_are_starred() {
    let reply = HostsReply {
        is_master: true,
        master: "vm".into(),
        hosts: vec![host("vm", HostStatus::Busy, &[("r1m", 10.0)], &["r1m"])],
        ..Default::default()
    };
    let text = lsload(&reply, &opts());
    assert!(
        text.lines()
            .nth(1)
            .unwrap_or("")
            .starts_with("vm                busy     - *10.0")
    );
}

#[test]
fn effective_run_queue_on_two_cpus() {
    let reply = HostsReply {
        is_master: true,
        master: "vm".into(),
        hosts: vec![host("vm", HostStatus::Ok, &[("r15s", 2.1)], &[])],
        ..Default::default()
    };
    let mut o = opts();
    o.run_queue = RunQueue::Effective;
    o.indices = Some(vec!["r15s".into()]);
    // cpuf 100 does not matter for effective values: they are scaled back.
    let text = lsload(&reply, &o);
    assert_eq!(text.lines().nth(1), Some("vm                  ok   1.0"));
}

#[test]
fn long_format_adds_io_and_externals() {
    let reply = HostsReply {
        is_master: true,
        master: "vm".into(),
        hosts: vec![host(
            "vm",
            HostStatus::Ok,
            &[("io", 12.0), ("gpu_util", 42.0)],
            &[],
        )],
        ..Default::default()
    };
    let mut o = opts();
    o.long = true;
    let text = lsload(&reply, &o);
    let header = text.lines().next().unwrap_or("");
    assert!(header.starts_with("HOST_NAME               status  r15s"));
    assert!(header.contains("    pg    io  ls"));
    assert!(header.ends_with(" gpu_util"));
    assert!(text.lines().nth(1).unwrap_or("").ends_with("    42.0"));
    let js: Value = serde_json::from_str(&lsload_json(&reply, &o)).unwrap_or(Value::Null);
    assert_eq!(js["RECORDS"][0]["gpu_util"], 42.0);
    assert_eq!(js["RECORDS"][0]["io"], 12.0);
}

/// Issue 30 item 12: `-json` values are JSON numbers where they are numbers (in the
/// table's units) and null where unknown, as the user guide promises.
#[test]
fn json_values_are_numbers_and_unknown_ones_null() {
    let reply = HostsReply {
        hosts: vec![
            host(
                "hostA",
                HostStatus::Ok,
                &[("r15s", 0.123), ("ut", 0.25), ("mem", 2048.4), ("it", 3.0)],
                &[],
            ),
            host("hostB", HostStatus::Unavail, &[("r15s", 1.0)], &[]),
        ],
        ..Default::default()
    };
    let js: Value = serde_json::from_str(&lsload_json(&reply, &opts())).unwrap_or(Value::Null);
    let a = &js["RECORDS"][0];
    assert_eq!(a["r15s"], 0.1);
    assert_eq!(a["ut"], 25.0);
    assert_eq!(a["mem"], 2048.0);
    assert_eq!(a["it"], 3.0);
    assert_eq!(a["r1m"], Value::Null, "no value: null");
    assert_eq!(js["RECORDS"][1]["r15s"], Value::Null, "unavail: null");
}

/// hostA of [`lim_res::tests::config`]: X86_64 / Intel_EM64T, cs, r1m/ut/mem thresholds.
fn long_host() -> HostRecord {
    let mut h = host(
        "hostA",
        HostStatus::Ok,
        &[("r1m", 2.1), ("mem", 900.0)],
        &[],
    );
    if let Some(i) = h.info.as_mut() {
        i.host_type = "X86_64".into();
        i.model = "Intel_EM64T".into();
        i.cpu_factor = 60.0;
        i.ncpus = 8;
    }
    h.thresholds = [("r1m", 3.5), ("ut", 0.9), ("mem", 100.0)]
        .iter()
        .map(|(n, v)| LoadValue {
            name: (*n).into(),
            value: *v,
        })
        .collect();
    h
}

/// Issue 30 item 10: `lshosts -l` prints LSF's block per host.
#[test]
fn lshosts_long_prints_a_block_per_host_with_lsf_columns() {
    let config = crate::lim_res::tests::config(&["hostA"], &[("licA", "5@[hostA]")]);
    let shared = lim_res::shared_instances(&config);
    let mut client = host("hostC", HostStatus::Unavail, &[], &[]);
    client.has_info = false;
    let reply = HostsReply {
        hosts: vec![long_host(), client],
        ..Default::default()
    };
    let text = lshosts_long(&config, &reply, &shared);
    let expected = concat!(
        "\nHOST_NAME:  hostA\n",
        "type             model  cpuf ncpus ndisks maxmem maxswp maxtmp rexpri server nprocs ncores nthreads\n",
        "X86_64     Intel_EM64T  60.0     8      - 24105M      -  1000M      0    Yes      -      -        -\n",
        "  licA\n",
        "     5\n",
        "\n",
        "RESOURCES: (cs)\n",
        "RUN_WINDOWS:  (always open)\n",
        "\n",
        "LOAD_THRESHOLDS:\n",
        "  r15s   r1m  r15m   ut    pg    io   ls   it   tmp   swp   mem scratch\n",
        "     -   3.5     -  90%     -     -    -    -     -     -  100M       -\n",
    );
    assert!(text.starts_with(expected), "{text}");
    // An ELIM index of lsf.shared (`scratch`, not in the ResourceMap) has a column.
    // A host the master has no information for shows what the cluster file says.
    let rest = &text[expected.len()..];
    assert!(rest.starts_with("\nHOST_NAME:  hostC\n"), "{rest}");
    assert!(rest.contains("RESOURCES: Not defined\n"), "{rest}");
}

/// `-R` sees run queues as effective values, static values, resources and static
/// shared resources.
#[test]
fn select_sees_effective_run_queues_statics_and_shared_resources() {
    let config = crate::lim_res::tests::config(&["hostA", "hostB"], &[("licA", "5@[hostA]")]);
    let shared = lim_res::shared_instances(&config);
    let v = host_values(&config, &long_host(), &shared);
    // 2.1 on 8 CPUs is an effective run queue well below 1.
    assert!(v.numbers.get("r1m").is_some_and(|r| *r < 1.0), "{v:?}");
    assert_eq!(v.numbers.get("ncpus"), Some(&8.0));
    assert_eq!(v.numbers.get("maxmem"), Some(&24105.0));
    assert_eq!(v.numbers.get("licA"), Some(&5.0));
    assert_eq!(v.strings.get("type").map(String::as_str), Some("X86_64"));
    assert!(v.booleans.contains(&"cs".to_string()));
    let mut reply = HostsReply {
        hosts: vec![
            long_host(),
            host("hostB", HostStatus::Ok, &[("r1m", 2.1)], &[]),
            host("hostD", HostStatus::Unavail, &[("r1m", 0.0)], &[]),
        ],
        ..Default::default()
    };
    let sel = lim_res::Select::parse("r1m < 0.5 && licA >= 5", &config, &[])
        .unwrap_or_else(|_| panic!("parse"));
    retain_selected(&config, &mut reply, &sel, "hostB");
    let names: Vec<&str> = reply
        .hosts
        .iter()
        .filter_map(|h| h.info.as_ref().map(|i| i.name.as_str()))
        .collect();
    assert_eq!(names, vec!["hostA"]);
    // The load of an unavailable host is unknown: it never satisfies a load test.
    let mut reply = HostsReply {
        hosts: vec![host("hostD", HostStatus::Unavail, &[("r1m", 0.0)], &[])],
        ..Default::default()
    };
    let sel = lim_res::Select::parse("r1m < 1", &config, &[]).unwrap_or_else(|_| panic!("parse"));
    retain_selected(&config, &mut reply, &sel, "hostB");
    assert!(reply.hosts.is_empty());
}

#[test]
fn dynamic_shared_value_comes_from_a_host_of_its_location() {
    let config =
        crate::lim_res::tests::config(&["hostA", "hostB"], &[("scratch", "[hostB hostA]")]);
    let shared = lim_res::shared_instances(&config);
    let reply = HostsReply {
        hosts: vec![
            host("hostA", HostStatus::Ok, &[("scratch", 7.0)], &[]),
            host("hostB", HostStatus::Ok, &[("scratch", 120.0)], &[]),
        ],
        ..Default::default()
    };
    assert_eq!(dynamic_value(&reply, &shared[0]), "120");
    let reply = HostsReply::default();
    assert_eq!(dynamic_value(&reply, &shared[0]), "-");
}

#[test]
fn lsid_layout() {
    let info = ClusterInfoReply {
        cluster: "basalt".into(),
        master: "hostA".into(),
        ..Default::default()
    };
    let text = lsid(&info);
    assert!(text.ends_with("\n\nMy cluster name is basalt\nMy master name is hostA\n"));
}
