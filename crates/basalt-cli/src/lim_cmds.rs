//! Output of the LIM-level commands: `lsid`, `lsload`, `lshosts`,
//! `lsclusters`, `lsinfo` (cli-output.md §6).

use crate::lim_res::{self, HostValues, SharedInstance, SharedKind};
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
    maxtmp: Option<u64>,
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
            maxtmp: pos(info.max_tmp_mb),
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
            maxtmp: None,
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

/// A size for `lshosts -l`: `%5dM` (`%5dG` above 99,999 MB), `-` when unknown.
fn size6(v: Option<u64>) -> String {
    match v {
        None => format!("{:>6}", "-"),
        Some(mb) if mb > 99_999 => format!("{:>5}G", mb / 1024),
        Some(mb) => format!("{mb:>5}M"),
    }
}

/// The load indices `lshosts -l` shows thresholds for: the built-in ones, then the
/// external (ELIM) indices of lsf.shared that are not shared resources.
fn threshold_indices(config: &Config) -> Vec<String> {
    let mut names: Vec<String> = basalt_core::BUILTIN_INDICES
        .iter()
        .map(|i| i.name().to_owned())
        .collect();
    names.extend(
        config
            .shared
            .resources
            .iter()
            .filter(|r| r.kind == ResourceKind::Numeric && r.interval.is_some())
            .filter(|r| {
                !config
                    .cluster
                    .resource_map
                    .iter()
                    .any(|(n, _)| *n == r.name)
            })
            .map(|r| r.name.clone()),
    );
    names
}

/// The field of one index in the LOAD_THRESHOLDS table: (header width, value text).
fn threshold_cell(name: &str, value: Option<f64>) -> (usize, String) {
    let builtin = LoadIndex::from_name(name);
    let width = match builtin {
        Some(LoadIndex::Ut | LoadIndex::Ls | LoadIndex::It) => 5,
        Some(_) => 6,
        None if name.len() >= 7 => name.len() + 1,
        None => 7,
    };
    let text = match value {
        None => "-".to_owned(),
        Some(v) => match builtin {
            Some(LoadIndex::R15s | LoadIndex::R1m | LoadIndex::R15m | LoadIndex::Pg) => {
                format!("{v:.1}")
            }
            Some(LoadIndex::Ut) => format!("{:.0}%", v * 100.0),
            Some(LoadIndex::Io | LoadIndex::Ls | LoadIndex::It) => format!("{v:.0}"),
            Some(LoadIndex::Tmp | LoadIndex::Swp | LoadIndex::Mem) => format!("{v:.0}M"),
            None => format!("{v:.1}"),
        },
    };
    (width, text)
}

/// `lshosts -l`: a block per host (LSF 10.1's columns, OpenLava's layout): the static
/// values, the static shared resources, RESOURCES, RUN_WINDOWS and the LIM's busy
/// thresholds. ndisks, nprocs, ncores and nthreads are not measured by Basalt's LIM
/// (`-`); rexpri is 0, the priority RES runs tasks at.
pub fn lshosts_long(config: &Config, reply: &HostsReply, shared: &[SharedInstance]) -> String {
    let statics: Vec<&SharedInstance> = shared
        .iter()
        .filter(|i| lim_res::shown_by(SharedKind::Static, i))
        .collect();
    let mut shared_names: Vec<&str> = statics.iter().map(|i| i.resource.as_str()).collect();
    shared_names.dedup();
    let indices = threshold_indices(config);
    let mut out = String::new();
    for h in &reply.hosts {
        let f = facts(config, h);
        out.push_str(&format!("\nHOST_NAME:  {}\n", f.name));
        out.push_str(&format!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {}\n",
            left_cut("type", 10),
            right_cut("model", 11),
            right_cut("cpuf", 5),
            right_cut("ncpus", 5),
            right_cut("ndisks", 6),
            right_cut("maxmem", 6),
            right_cut("maxswp", 6),
            right_cut("maxtmp", 6),
            right_cut("rexpri", 6),
            right_cut("server", 6),
            right_cut("nprocs", 6),
            right_cut("ncores", 6),
            right_cut("nthreads", 8),
        ));
        let head = format!(
            "{} {} {} ",
            left_cut(&f.host_type, 10),
            right_cut(&f.model, 11),
            right_cut(&format!("{:5.1}", f.cpuf), 5)
        );
        let dash = |w: usize| format!("{:>w$}", "-");
        if f.server {
            let ncpus = f.ncpus.map_or_else(|| dash(5), |n| format!("{n:>5}"));
            out.push_str(&format!(
                "{head}{ncpus} {} {} {} {} {:>6} {:>6} {} {} {}\n",
                dash(6),
                size6(f.maxmem),
                size6(f.maxswp),
                size6(f.maxtmp),
                0,
                "Yes",
                dash(6),
                dash(6),
                dash(8)
            ));
        } else {
            out.push_str(&format!(
                "{head}{} {} {} {} {} {} {:>6} {} {} {}\n",
                dash(5),
                dash(6),
                dash(6),
                dash(6),
                dash(6),
                dash(6),
                "No",
                dash(6),
                dash(6),
                dash(8)
            ));
        }
        if !shared_names.is_empty() {
            let cell = |name: &str, text: &str| {
                let cut: String = text.chars().take(name.len() + 1).collect();
                format!("{cut:>w$}", w = name.len() + 2)
            };
            let mut names = String::new();
            let mut values = String::new();
            for n in &shared_names {
                let value = statics
                    .iter()
                    .find(|i| {
                        i.resource == *n
                            && i.hosts.iter().any(|x| basalt_core::same_host(x, &f.name))
                    })
                    .and_then(|i| i.value.clone())
                    .unwrap_or_else(|| "-".to_owned());
                names.push_str(&cell(n, n));
                values.push_str(&cell(n, &value));
            }
            out.push_str(&format!("{names}\n{values}\n"));
        }
        out.push('\n');
        if f.resources.is_empty() {
            out.push_str("RESOURCES: Not defined\n");
        } else {
            out.push_str(&format!("RESOURCES: ({})\n", f.resources.join(" ")));
        }
        if !f.server {
            out.push_str("RUN_WINDOWS: Not applicable for client-only host\n\n");
            continue;
        }
        let window = config
            .cluster
            .host(&f.name)
            .and_then(|c| c.run_window.as_ref());
        match window {
            None => out.push_str("RUN_WINDOWS:  (always open)\n"),
            Some(w) => out.push_str(&format!("RUN_WINDOWS: {w}\n")),
        }
        out.push_str("\nLOAD_THRESHOLDS:\n");
        let mut header = String::new();
        let mut values = String::new();
        for name in &indices {
            let value = h
                .thresholds
                .iter()
                .find(|t| t.name == *name)
                .map(|t| t.value)
                .filter(|v| v.is_finite());
            let (w, text) = threshold_cell(name, value);
            header.push_str(&format!("{name:>w$}"));
            values.push_str(&format!("{text:>w$}"));
        }
        out.push_str(&format!("{header}\n{values}\n"));
    }
    out
}

/// What a host offers to `-R` select expressions: its load (unless unavailable; run
/// queues as effective values), static values, resources and shared static resources.
pub fn host_values(config: &Config, h: &HostRecord, shared: &[SharedInstance]) -> HostValues {
    let f = facts(config, h);
    let mut v = HostValues {
        name: f.name.clone(),
        ..Default::default()
    };
    let (ncpus, cpuf) = (f.ncpus.unwrap_or(1), f.cpuf);
    if !is_unavail(h) {
        for l in &h.load {
            let value = match LoadIndex::from_name(&l.name) {
                Some(i) if i.is_run_queue() => effective_run_queue(l.value, ncpus, cpuf),
                _ => l.value,
            };
            if value.is_finite() {
                v.numbers.insert(l.name.clone(), value);
            }
        }
    }
    v.numbers.insert("cpuf".into(), f.cpuf);
    if let Some(n) = f.ncpus {
        v.numbers.insert("ncpus".into(), f64::from(n));
    }
    for (name, value) in [
        ("maxmem", f.maxmem),
        ("maxswp", f.maxswp),
        ("maxtmp", f.maxtmp),
    ] {
        if let Some(mb) = value {
            v.numbers.insert(name.into(), mb as f64);
        }
    }
    if f.server {
        v.numbers.insert("rexpri".into(), 0.0);
        v.booleans.push("server".into());
    }
    v.strings.insert("hname".into(), f.name.clone());
    v.strings.insert("type".into(), f.host_type.clone());
    v.strings.insert("model".into(), f.model.clone());
    v.strings.insert("status".into(), status_text(h).to_owned());
    let mut put = |name: &str, value: Option<&str>| {
        let kind = config.shared.resource(name).map(|r| r.kind);
        match (kind, value) {
            (Some(ResourceKind::Numeric), Some(x)) => {
                if let Ok(n) = x.trim().parse::<f64>() {
                    v.numbers.insert(name.to_owned(), n);
                }
            }
            (Some(ResourceKind::String), Some(x)) => {
                v.strings.insert(name.to_owned(), x.to_owned());
            }
            (Some(ResourceKind::Boolean) | None, None) => v.booleans.push(name.to_owned()),
            _ => {}
        }
    };
    for r in &f.resources {
        match r.split_once('=') {
            Some((n, x)) => put(n, Some(x)),
            None => put(r, None),
        }
    }
    for i in shared.iter().filter(|i| !i.dynamic) {
        if i.hosts.iter().any(|x| basalt_core::same_host(x, &f.name)) {
            put(&i.resource, i.value.as_deref());
        }
    }
    v
}

/// The names of the external indices the hosts of `reply` report.
pub fn external_indices(reply: &HostsReply) -> Vec<String> {
    let mut names: Vec<String> = reply
        .hosts
        .iter()
        .flat_map(|h| h.load.iter())
        .filter(|l| LoadIndex::from_name(&l.name).is_none())
        .map(|l| l.name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Keep the hosts of `reply` that satisfy `select`; `local` names the host the command
/// runs on (`type==local`).
pub fn retain_selected(
    config: &Config,
    reply: &mut HostsReply,
    select: &lim_res::Select,
    local: &str,
) {
    let shared = lim_res::shared_instances(config);
    let local_values = reply
        .hosts
        .iter()
        .find(|h| {
            h.info
                .as_ref()
                .is_some_and(|i| basalt_core::same_host(&i.name, local))
        })
        .map(|h| host_values(config, h, &shared));
    reply
        .hosts
        .retain(|h| select.matches(&host_values(config, h, &shared), local_values.as_ref()));
}

/// The value of a dynamic shared resource: what the first host of its location that
/// reports it says (`-` when none does).
pub fn dynamic_value(reply: &HostsReply, i: &SharedInstance) -> String {
    i.hosts
        .iter()
        .find_map(|name| {
            let h = reply.hosts.iter().find(|h| {
                h.info
                    .as_ref()
                    .is_some_and(|x| basalt_core::same_host(&x.name, name))
            })?;
            if is_unavail(h) {
                return None;
            }
            h.load
                .iter()
                .find(|l| l.name == i.resource)
                .map(|l| lim_res::number_text(l.value))
        })
        .unwrap_or_else(|| "-".to_owned())
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
        let sel =
            lim_res::Select::parse("r1m < 1", &config, &[]).unwrap_or_else(|_| panic!("parse"));
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
}
