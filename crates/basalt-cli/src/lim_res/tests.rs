//! Unit tests of select expressions and shared resources (its `config` is used by `lim_cmds`'s tests).
use super::*;
use basalt_config::{ClusterHost, Config, ResourceDef};

fn resource(name: &str, kind: ResourceKind, interval: Option<u32>) -> ResourceDef {
    ResourceDef {
        name: name.into(),
        kind,
        interval,
        increasing: None,
        description: String::new(),
    }
}

/// A configuration with hosts `hosts`, lsf.shared resources `cs` (Boolean), `gpu`
/// (Numeric), `licA` (static Numeric), `os` (String), `scratch` (dynamic Numeric),
/// and the ResourceMap rows `map`.
pub(crate) fn config(hosts: &[&str], map: &[(&str, &str)]) -> Config {
    let host = |name: &str| ClusterHost::named(name, 1);
    let mut cluster = basalt_config::ClusterFile {
        name: "basalt".into(),
        hosts: hosts.iter().map(|h| host(h)).collect(),
        ..Default::default()
    };
    cluster.resource_map = map
        .iter()
        .map(|(n, l)| ((*n).to_owned(), (*l).to_owned()))
        .collect();
    Config {
        envdir: "/nonexistent".into(),
        lsf_conf: Default::default(),
        confdir: "/nonexistent".into(),
        cluster_name: "basalt".into(),
        shared: basalt_config::Shared {
            resources: vec![
                resource("cs", ResourceKind::Boolean, None),
                resource("gpu", ResourceKind::Numeric, None),
                resource("licA", ResourceKind::Numeric, None),
                resource("os", ResourceKind::String, None),
                resource("scratch", ResourceKind::Numeric, Some(60)),
            ],
            ..Default::default()
        },
        cluster,
        batch: Default::default(),
        derived: Default::default(),
    }
}

fn values(name: &str, host_type: &str, numbers: &[(&str, f64)], booleans: &[&str]) -> HostValues {
    HostValues {
        name: name.into(),
        numbers: numbers.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
        strings: [
            ("hname", name),
            ("type", host_type),
            ("model", "PC"),
            ("status", "ok"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect(),
        booleans: booleans.iter().map(|b| (*b).to_owned()).collect(),
    }
}

/// The names of the hosts `res_req` selects, `local` being the command's host.
fn selected(res_req: &str, local: usize) -> Result<Vec<String>, BadResReq> {
    let cfg = config(&["hostA", "hostB"], &[]);
    let hosts = [
        values(
            "hostA",
            "LINUX",
            &[("mem", 2000.0), ("ncpus", 4.0), ("r1m", 0.5), ("gpu", 2.0)],
            &["cs", "server"],
        ),
        values(
            "hostB",
            "AIX",
            &[("mem", 100.0), ("ncpus", 1.0)],
            &["server"],
        ),
    ];
    let sel = Select::parse(res_req, &cfg, &[])?;
    Ok(hosts
        .iter()
        .filter(|h| sel.matches(h, hosts.get(local)))
        .map(|h| h.name.clone())
        .collect())
}

fn names(v: &[&str]) -> Result<Vec<String>, BadResReq> {
    Ok(v.iter().map(|s| (*s).to_owned()).collect())
}

#[test]
fn select_filters_hosts_on_load_static_string_and_boolean_values() {
    assert_eq!(selected("mem>1000", 0), names(&["hostA"]));
    assert_eq!(selected("select[type==AIX]", 0), names(&["hostB"]));
    assert_eq!(selected("select[type == \"AIX\"]", 0), names(&["hostB"]));
    assert_eq!(selected("hname!='hostA'", 0), names(&["hostB"]));
    assert_eq!(selected("cs", 0), names(&["hostA"]));
    assert_eq!(selected("!cs && mem < 500", 0), names(&["hostB"]));
    assert_eq!(selected("type==any", 0), names(&["hostA", "hostB"]));
    assert_eq!(selected("type==local", 1), names(&["hostB"]));
    assert_eq!(selected("defined(gpu)", 0), names(&["hostA"]));
    assert_eq!(selected("select[mem>=1GB]", 0), names(&["hostA"]));
    // Old syntax: `:` is AND; aliases of the built-in indices.
    assert_eq!(selected("mem>50:ncpus>=4", 0), names(&["hostA"]));
    assert_eq!(selected("cpu < 1", 0), names(&["hostA"]));
    // Sections other than select[] do not filter; several select parts are ANDed.
    assert_eq!(
        selected(
            "select[mem>50] order[r15s] rusage[mem=10] select[server]",
            0
        ),
        names(&["hostA", "hostB"])
    );
    assert_eq!(selected("server && gpu > 1", 0), names(&["hostA"]));
    assert_eq!(selected("", 0), names(&["hostA", "hostB"]));
}

#[test]
fn malformed_or_unknown_select_expressions_are_refused() {
    for bad in [
        "mem >",
        "(mem > 1",
        "nosuchres > 1",
        "type > 3",
        "'LINUX'",
        "mem > 'x'",
        "defined(nosuchres)",
        "mem > 1XB",
        "mem $ 1",
    ] {
        assert_eq!(selected(bad, 0), Err(BadResReq), "{bad}");
    }
}

#[test]
fn resource_map_locations_become_shared_instances() {
    let cfg = config(
        &["hostA", "hostB", "hostC"],
        &[
            ("licA", "5@[hostA hostB] 3@[hostC]"),
            ("scratch", "[all ~hostB]"),
            ("os", "(linux@[default])"),
        ],
    );
    let got: Vec<(String, Option<String>, Vec<String>, bool)> = shared_instances(&cfg)
        .into_iter()
        .map(|i| (i.resource, i.value, i.hosts, i.dynamic))
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        got,
        vec![
            (
                "licA".into(),
                Some("5".into()),
                s(&["hostA", "hostB"]),
                false
            ),
            ("licA".into(), Some("3".into()), s(&["hostC"]), false),
            ("scratch".into(), None, s(&["hostA", "hostC"]), true),
            ("os".into(), Some("linux".into()), s(&["hostA"]), false),
            ("os".into(), Some("linux".into()), s(&["hostB"]), false),
            ("os".into(), Some("linux".into()), s(&["hostC"]), false),
        ]
    );
}

fn sp(n: usize) -> String {
    " ".repeat(n)
}

#[test]
fn shared_resource_tables_have_lsf_layouts() {
    let cfg = config(
        &["hostA", "hostB"],
        &[("licA", "5@[hostA hostB]"), ("scratch", "[all]")],
    );
    let all = shared_instances(&cfg);
    let statics =
        select_instances(&all, &[], |i| shown_by(SharedKind::Static, i)).unwrap_or_default();
    assert_eq!(
        shared_table(SharedKind::Static, &statics, |i| i
            .value
            .clone()
            .unwrap_or_default()),
        format!(
            "RESOURCE{}VALUE{}LOCATION\nlicA{}5{}hostA hostB \n",
            sp(32),
            sp(7),
            sp(40),
            sp(7)
        )
    );
    let dynamic =
        select_instances(&all, &[], |i| shown_by(SharedKind::Dynamic, i)).unwrap_or_default();
    assert_eq!(
        shared_table(SharedKind::Dynamic, &dynamic, |_| "120".into()),
        format!(
            "RESOURCE{}VALUE{}LOCATION\nscratch{}120{}hostA hostB \n",
            sp(32),
            sp(7),
            sp(35),
            sp(7)
        )
    );
    assert_eq!(
        shared_table(SharedKind::Static, &[], |_| String::new()),
        "No static shared resources defined \n"
    );
    assert_eq!(
        shared_table(SharedKind::Dynamic, &[], |_| String::new()),
        "No dynamic shared resources defined \n"
    );
    let every = select_instances(&all, &[], |_| true).unwrap_or_default();
    assert_eq!(
        batch_shared_table(
            &every,
            |i| i.value.clone().unwrap_or_else(|| "-".into()),
            |_| "0.0".into(),
        ),
        format!(
            "RESOURCE{}TOTAL{}RESERVED{}LOCATION\n\
                 licA{}5{}0.0{}hostA hostB \n\
                 scratch{}-{}0.0{}hostA hostB \n",
            sp(17),
            sp(7),
            sp(7),
            sp(25),
            sp(12),
            sp(7),
            sp(22),
            sp(12),
            sp(7)
        )
    );
    assert_eq!(
        select_instances(&all, &["nosuch".to_string()], |_| true).map(|v| v.len()),
        Err("nosuch".to_string())
    );
}

#[test]
fn long_host_lists_wrap_before_column_80_under_the_location_column() {
    let hosts: Vec<String> = (0..6).map(|i| format!("hostname{i}")).collect();
    let host_refs: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let cfg = config(&host_refs, &[("licA", "2@[all]")]);
    let all = shared_instances(&cfg);
    let shown: Vec<&SharedInstance> = all.iter().collect();
    let text = shared_table(SharedKind::Static, &shown, |_| "2".into());
    let lines: Vec<&str> = text.lines().collect();
    // 52 columns, then two 10-column names a line.
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines.iter().all(|l| l.len() <= 80), "{text}");
    assert!(lines[1].ends_with("       hostname0 hostname1 "), "{text}");
    assert_eq!(lines[3], format!("{}hostname4 hostname5 ", sp(52)));
}
