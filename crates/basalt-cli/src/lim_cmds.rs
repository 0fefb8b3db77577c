//! Output of the LIM-level commands: `lsid`, `lsload`, `lshosts`,
//! `lsclusters`, `lsinfo` (cli-output.md §6).

use crate::numfmt::{fit, left_cut, mem_mb, right, right_cut};
use basalt_config::{Config, ResourceKind};
use basalt_core::{LoadIndex, effective_run_queue, normalized_run_queue};
use basalt_proto::lim::{ClusterInfoReply, HostRecord, HostStatus, HostsReply};
use serde_json::{Map, Value, json};

/// `lsid`.
pub fn lsid(info: &ClusterInfoReply) -> String {
    format!(
        "{}\n\nMy cluster name is {}\nMy master name is {}\n",
        basalt_core::version::product_line(),
        info.cluster,
        info.master
    )
}

/// Which form of the run-queue indices `lsload` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunQueue {
    /// What the kernel reports (plain `lsload`).
    Raw,
    /// `-N`.
    Normalized,
    /// `-E`.
    Effective,
}

/// `lsload` options.
#[derive(Debug, Clone)]
pub struct LoadOpts {
    pub long: bool,
    pub wide: bool,
    pub run_queue: RunQueue,
    /// `-I r15s:r1m:...`: only these indices.
    pub indices: Option<Vec<String>>,
}

const DEFAULT_COLUMNS: [LoadIndex; 10] = [
    LoadIndex::R15s,
    LoadIndex::R1m,
    LoadIndex::R15m,
    LoadIndex::Ut,
    LoadIndex::Pg,
    LoadIndex::Ls,
    LoadIndex::It,
    LoadIndex::Tmp,
    LoadIndex::Swp,
    LoadIndex::Mem,
];

/// A column of the load table: a built-in index or an external one.
#[derive(Debug, Clone, PartialEq)]
enum Column {
    Builtin(LoadIndex),
    External(String),
}

impl Column {
    fn name(&self) -> &str {
        match self {
            Column::Builtin(i) => i.name(),
            Column::External(n) => n,
        }
    }

    fn width(&self) -> usize {
        match self {
            Column::Builtin(LoadIndex::Ut) => 5,
            Column::Builtin(LoadIndex::Ls) => 4,
            Column::Builtin(_) => 6,
            Column::External(n) => (n.len() + 1).max(7),
        }
    }
}

fn columns(reply: &HostsReply, opts: &LoadOpts) -> Vec<Column> {
    let mut cols: Vec<Column> = if opts.long {
        basalt_core::BUILTIN_INDICES
            .iter()
            .map(|i| Column::Builtin(*i))
            .collect()
    } else {
        DEFAULT_COLUMNS
            .iter()
            .map(|i| Column::Builtin(*i))
            .collect()
    };
    if opts.long {
        let mut externals: Vec<String> = reply
            .hosts
            .iter()
            .flat_map(|h| h.load.iter())
            .filter(|v| LoadIndex::from_name(&v.name).is_none())
            .map(|v| v.name.clone())
            .collect();
        externals.sort();
        externals.dedup();
        cols.extend(externals.into_iter().map(Column::External));
    }
    if let Some(only) = &opts.indices {
        cols = only
            .iter()
            .map(|n| match LoadIndex::from_name(n) {
                Some(i) => Column::Builtin(i),
                None => Column::External(n.clone()),
            })
            .collect();
    }
    cols
}

fn status_text(h: &HostRecord) -> &'static str {
    match HostStatus::try_from(h.status).unwrap_or(HostStatus::Unspecified) {
        HostStatus::Ok => "ok",
        HostStatus::Busy => "busy",
        HostStatus::LockedUser => "lockU",
        HostStatus::LockedWindow => "lockW",
        HostStatus::Unavail | HostStatus::Unknown | HostStatus::Unspecified => "unavail",
    }
}

fn is_unavail(h: &HostRecord) -> bool {
    status_text(h) == "unavail"
}

fn value_of(h: &HostRecord, col: &Column, rq: RunQueue) -> Option<f64> {
    let raw = h.load.iter().find(|v| v.name == col.name())?.value;
    let info = h.info.as_ref();
    let (ncpus, cpuf) = info.map(|i| (i.ncpus, i.cpu_factor)).unwrap_or((1, 1.0));
    Some(match (col, rq) {
        (Column::Builtin(i), RunQueue::Effective) if i.is_run_queue() => {
            effective_run_queue(raw, ncpus, cpuf)
        }
        (Column::Builtin(i), RunQueue::Normalized) if i.is_run_queue() => {
            normalized_run_queue(raw, ncpus, cpuf)
        }
        _ => raw,
    })
}

/// One value for `-json`: a number in the table's unit (run queues and pg to 0.1, ut in
/// percent, tmp/swp/mem in MB, io/ls/it whole), or null when it is not a finite number.
fn json_value(col: &Column, v: f64) -> Value {
    let round = |x: f64, places: i32| {
        let f = 10f64.powi(places);
        (x * f).round() / f
    };
    let n = match col {
        Column::Builtin(i) => match i {
            LoadIndex::R15s | LoadIndex::R1m | LoadIndex::R15m | LoadIndex::Pg => round(v, 1),
            LoadIndex::Ut => round(v * 100.0, 0),
            LoadIndex::Io | LoadIndex::Ls | LoadIndex::It => round(v, 0),
            LoadIndex::Tmp | LoadIndex::Swp | LoadIndex::Mem => round(v, 0),
        },
        Column::External(_) => v,
    };
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// Format one value for its column (without the busy marker).
fn format_value(col: &Column, v: f64) -> String {
    match col {
        Column::Builtin(i) => match i {
            LoadIndex::R15s | LoadIndex::R1m | LoadIndex::R15m | LoadIndex::Pg => {
                format!("{v:.1}")
            }
            LoadIndex::Ut => format!("{:.0}%", v * 100.0),
            LoadIndex::Io | LoadIndex::Ls | LoadIndex::It => format!("{v:.0}"),
            LoadIndex::Tmp | LoadIndex::Swp | LoadIndex::Mem => mem_mb(v),
        },
        Column::External(_) => format!("{v:.1}"),
    }
}

fn cell(h: &HostRecord, col: &Column, rq: RunQueue) -> String {
    match value_of(h, col, rq) {
        None => "-".to_owned(),
        Some(v) => {
            let busy = h.busy.iter().any(|b| b == col.name());
            let text = fit(format_value(col, v), v, col.width() - usize::from(busy));
            if busy { format!("*{text}") } else { text }
        }
    }
}

/// `lsload` as a table.
pub fn lsload(reply: &HostsReply, opts: &LoadOpts) -> String {
    let cols = columns(reply, opts);
    let wide = opts.wide || opts.long;
    let host_col = |name: &str| {
        if wide {
            format!("{name:<23}")
        } else {
            left_cut(name, 15)
        }
    };
    let mut out = format!("{} {}", host_col("HOST_NAME"), right("status", 6));
    for c in &cols {
        out.push_str(&right(c.name(), c.width()));
    }
    out.push('\n');
    for h in &reply.hosts {
        let name = h.info.as_ref().map(|i| i.name.as_str()).unwrap_or("");
        out.push_str(&format!("{} {}", host_col(name), right(status_text(h), 6)));
        if !is_unavail(h) {
            for c in &cols {
                out.push_str(&right(&cell(h, c, opts.run_queue), c.width()));
            }
        }
        out.push('\n');
    }
    out
}

/// `lsload -json`: LSF-style `{"COMMAND":..., "HOSTS":n, "RECORDS":[...]}` with string values.
pub fn lsload_json(reply: &HostsReply, opts: &LoadOpts) -> String {
    let cols = columns(
        reply,
        &LoadOpts {
            long: true,
            ..opts.clone()
        },
    );
    let records: Vec<Value> = reply
        .hosts
        .iter()
        .map(|h| {
            let mut m = Map::new();
            let name = h.info.as_ref().map(|i| i.name.clone()).unwrap_or_default();
            m.insert("HOST_NAME".into(), Value::String(name));
            m.insert("STATUS".into(), Value::String(status_text(h).into()));
            for c in &cols {
                let v = if is_unavail(h) {
                    None
                } else {
                    value_of(h, c, opts.run_queue)
                };
                m.insert(
                    c.name().to_owned(),
                    v.map_or(Value::Null, |v| json_value(c, v)),
                );
            }
            m.insert("BUSY".into(), Value::String(h.busy.join(" ")));
            Value::Object(m)
        })
        .collect();
    json!({"COMMAND": "lsload", "HOSTS": records.len(), "RECORDS": records}).to_string()
}

/// A host's static facts for `lshosts`: what the master knows, else the cluster file.
struct HostFacts {
    name: String,
    host_type: String,
    model: String,
    cpuf: f64,
    ncpus: Option<u32>,
    maxmem: Option<u64>,
    maxswp: Option<u64>,
    server: bool,
    resources: Vec<String>,
}

fn facts(config: &Config, h: &HostRecord) -> HostFacts {
    let info = h.info.clone().unwrap_or_default();
    let conf = config
        .cluster
        .hosts
        .iter()
        .find(|c| basalt_core::same_host(&c.name, &info.name));
    if h.has_info {
        let pos = |v: u64| (v > 0).then_some(v);
        HostFacts {
            name: info.name,
            host_type: info.host_type,
            model: info.model,
            cpuf: info.cpu_factor,
            ncpus: (info.ncpus > 0).then_some(info.ncpus),
            maxmem: pos(info.max_mem_mb),
            maxswp: pos(info.max_swp_mb),
            server: info.server,
            resources: info.resources,
        }
    } else {
        let model = conf
            .and_then(|c| c.model.clone())
            .unwrap_or_else(|| "-".into());
        HostFacts {
            cpuf: config.shared.cpu_factor(&model).unwrap_or(1.0),
            name: info.name,
            host_type: conf
                .and_then(|c| c.host_type.clone())
                .unwrap_or_else(|| "-".into()),
            model,
            ncpus: None,
            maxmem: None,
            maxswp: None,
            server: conf.is_none_or(|c| c.server),
            resources: conf.map(|c| c.resources.clone()).unwrap_or_default(),
        }
    }
}

fn mb_field(v: Option<u64>) -> String {
    match v {
        None => format!(" {:>6}", "-"),
        Some(mb) if mb > 99_999 => format!(" {:>5}G", mb / 1024),
        Some(mb) => format!(" {mb:>5}M"),
    }
}

/// `lshosts` as a table.
pub fn lshosts(config: &Config, reply: &HostsReply, wide: bool) -> String {
    let (w1, w2, w3) = if wide { (25, 10, 11) } else { (11, 7, 8) };
    let col = |s: &str, w: usize, left: bool| match (wide, left) {
        (true, true) => format!("{s:<w$}"),
        (true, false) => format!("{s:>w$}"),
        (false, true) => left_cut(s, w),
        (false, false) => right_cut(s, w),
    };
    let mut out = format!(
        "{} {} {} {} {} {} {} {} {}\n",
        col("HOST_NAME", w1, true),
        col("type", w2, false),
        col("model", w3, false),
        right_cut("cpuf", 5),
        right_cut("ncpus", 5),
        right_cut("maxmem", 6),
        right_cut("maxswp", 6),
        right_cut("server", 6),
        left_cut("RESOURCES", 9).trim_end()
    );
    for h in &reply.hosts {
        let f = facts(config, h);
        let ncpus = f
            .ncpus
            .map(|n| format!("{n:>5}"))
            .unwrap_or_else(|| format!("{:>5}", "-"));
        out.push_str(&format!(
            "{} {} {} {:>5.1} {}{}{} {} ({})\n",
            col(&f.name, w1, true),
            col(&f.host_type, w2, false),
            col(&f.model, w3, false),
            f.cpuf,
            ncpus,
            mb_field(f.maxmem),
            mb_field(f.maxswp),
            right_cut(if f.server { "Yes" } else { "No" }, 6),
            f.resources.join(" ")
        ));
    }
    out
}

/// `lshosts -json`.
pub fn lshosts_json(config: &Config, reply: &HostsReply) -> String {
    let records: Vec<Value> = reply
        .hosts
        .iter()
        .map(|h| {
            let f = facts(config, h);
            // Numbers as numbers (sizes in MB), unknown values null.
            json!({
                "HOST_NAME": f.name,
                "type": f.host_type,
                "model": f.model,
                "cpuf": serde_json::Number::from_f64((f.cpuf * 10.0).round() / 10.0)
                    .map_or(Value::Null, Value::Number),
                "ncpus": f.ncpus,
                "maxmem": f.maxmem,
                "maxswp": f.maxswp,
                "server": if f.server { "Yes" } else { "No" },
                "RESOURCES": f.resources.join(" "),
            })
        })
        .collect();
    json!({"COMMAND": "lshosts", "HOSTS": records.len(), "RECORDS": records}).to_string()
}

/// `lsclusters` (and `-l` with the extra lines).
pub fn lsclusters(config: &Config, info: Option<&ClusterInfoReply>, long: bool) -> String {
    let (status, master) = match info {
        Some(i) if !i.master.is_empty() => ("ok", i.master.as_str()),
        _ => ("unknown", "-"),
    };
    let admins = &config.cluster.admins;
    let admin = admins.first().map(String::as_str).unwrap_or("-");
    let hosts = config.cluster.hosts.len();
    let servers = config.cluster.hosts.iter().filter(|h| h.server).count();
    let mut out = format!(
        "{} {} {} {} {} {}\n",
        left_cut("CLUSTER_NAME", 14),
        left_cut("STATUS", 8),
        left_cut("MASTER_HOST", 15),
        right_cut("ADMIN", 15),
        right_cut("HOSTS", 8),
        right_cut("SERVERS", 8)
    );
    out.push_str(&format!(
        "{} {} {} {} {hosts:>8} {servers:>8}\n",
        left_cut(&config.cluster_name, 14),
        left_cut(status, 8),
        left_cut(master, 15),
        right_cut(admin, 15),
    ));
    if long {
        let resources: Vec<&str> = config
            .shared
            .resources
            .iter()
            .filter(|r| r.kind == ResourceKind::Boolean)
            .map(|r| r.name.as_str())
            .collect();
        let models: Vec<&str> = config
            .shared
            .host_models
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        out.push_str(&format!(
            "Cluster administrators: {}\nAvailable resources: {}\nAvailable host types: {}\nAvailable host models: {}\n",
            admins.join(" "),
            resources.join(" "),
            config.shared.host_types.join(" "),
            models.join(" ")
        ));
    }
    out
}

/// What `lsinfo` shows.
#[derive(Debug, Clone, Default)]
pub struct InfoOpts {
    pub resources_only: bool,
    pub types_only: bool,
    pub models_only: bool,
    pub long: bool,
    /// Resource names given as arguments.
    pub names: Vec<String>,
}

/// The resources `lsinfo` lists: built-in load indices, LSF's built-in static
/// resources, then those of lsf.shared. (name, type, order, description).
fn info_resources(config: &Config) -> Vec<(String, String, String, String)> {
    let mut out: Vec<(String, String, String, String)> = basalt_core::BUILTIN_INDICES
        .iter()
        .map(|i| {
            let order = if i.increasing() { "Inc" } else { "Dec" };
            (
                i.name().to_owned(),
                "Numeric".to_owned(),
                order.to_owned(),
                i.description().to_owned(),
            )
        })
        .collect();
    let statics = [
        ("type", "String", "N/A", "Host type"),
        ("model", "String", "N/A", "Host model"),
        ("status", "String", "N/A", "Host status"),
        ("hname", "String", "N/A", "Host name"),
        ("server", "Boolean", "N/A", "LSF server host"),
        ("cpuf", "Numeric", "Dec", "CPU factor"),
        ("ncpus", "Numeric", "Dec", "Number of CPUs"),
        ("maxmem", "Numeric", "Dec", "Maximum memory (Mbytes)"),
        ("maxswp", "Numeric", "Dec", "Maximum swap space (Mbytes)"),
        ("maxtmp", "Numeric", "Dec", "Maximum /tmp space (Mbytes)"),
    ];
    out.extend(
        statics
            .iter()
            .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string())),
    );
    for r in &config.shared.resources {
        let (kind, order) = match r.kind {
            ResourceKind::Boolean => ("Boolean", "N/A"),
            ResourceKind::String => ("String", "N/A"),
            ResourceKind::Numeric => (
                "Numeric",
                if r.increasing == Some(false) {
                    "Dec"
                } else {
                    "Inc"
                },
            ),
        };
        out.push((
            r.name.clone(),
            kind.to_owned(),
            order.to_owned(),
            r.description.clone(),
        ));
    }
    out
}

/// `lsinfo`. Returns the text and the names that are not resources (for errors).
pub fn lsinfo(config: &Config, opts: &InfoOpts) -> (String, Vec<String>) {
    let all = !(opts.resources_only || opts.types_only || opts.models_only);
    let mut out = String::new();
    let mut unknown = Vec::new();
    if all || opts.resources_only {
        let resources = info_resources(config);
        let selected: Vec<_> = if opts.names.is_empty() {
            resources.iter().collect()
        } else {
            opts.names
                .iter()
                .filter_map(|n| {
                    let r = resources.iter().find(|r| &r.0 == n);
                    if r.is_none() {
                        unknown.push(n.clone());
                    }
                    r
                })
                .collect()
        };
        if opts.long {
            for (name, kind, order, desc) in selected {
                let interval = config
                    .shared
                    .resource(name)
                    .and_then(|r| r.interval)
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "0".into());
                out.push_str(&format!(
                    "\nRESOURCE_NAME:  {name}\nDESCRIPTION: {desc}\nTYPE       ORDER  INTERVAL  BUILTIN  DYNAMIC\n{kind:<10} {order:<6} {interval:>8}  {:<7}  {}\n",
                    if config.shared.resource(name).is_some() { "No" } else { "Yes" },
                    if kind == "Numeric" && (order != "N/A") { "Yes" } else { "No" },
                ));
            }
        } else if !selected.is_empty() {
            out.push_str("RESOURCE_NAME   TYPE   ORDER  DESCRIPTION\n");
            for (name, kind, order, desc) in selected {
                out.push_str(&format!(
                    "{} {} {}   {desc}\n",
                    left_cut(name, 13),
                    right_cut(kind, 7),
                    right_cut(order, 5)
                ));
            }
        }
    }
    if all || opts.types_only {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("TYPE_NAME\n");
        for t in &config.shared.host_types {
            out.push_str(&format!("{t}\n"));
        }
    }
    if all || opts.models_only {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("MODEL_NAME      CPU_FACTOR      ARCHITECTURE\n");
        for m in &config.shared.host_models {
            let line = format!(
                "{:<16}{:>10.2}      {}",
                m.name,
                m.cpu_factor,
                m.architecture.as_deref().unwrap_or("")
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    (out, unknown)
}

#[cfg(test)]
mod tests {
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
}
