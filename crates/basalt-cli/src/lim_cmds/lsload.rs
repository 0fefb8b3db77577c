//! `lsload`: the load table (`-l`, `-w`, `-N`/`-E` run queues, `-I` indices) and `-json`.

use super::*;

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

pub(super) const DEFAULT_COLUMNS: [LoadIndex; 10] = [
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
pub(super) enum Column {
    Builtin(LoadIndex),
    External(String),
}

impl Column {
    pub(super) fn name(&self) -> &str {
        match self {
            Column::Builtin(i) => i.name(),
            Column::External(n) => n,
        }
    }

    pub(super) fn width(&self) -> usize {
        match self {
            Column::Builtin(LoadIndex::Ut) => 5,
            Column::Builtin(LoadIndex::Ls) => 4,
            Column::Builtin(_) => 6,
            Column::External(n) => (n.len() + 1).max(7),
        }
    }
}

pub(super) fn columns(reply: &HostsReply, opts: &LoadOpts) -> Vec<Column> {
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

pub(super) fn status_text(h: &HostRecord) -> &'static str {
    match HostStatus::try_from(h.status).unwrap_or(HostStatus::Unspecified) {
        HostStatus::Ok => "ok",
        HostStatus::Busy => "busy",
        HostStatus::LockedUser => "lockU",
        HostStatus::LockedWindow => "lockW",
        HostStatus::Unavail | HostStatus::Unknown | HostStatus::Unspecified => "unavail",
    }
}

pub fn is_unavail(h: &HostRecord) -> bool {
    status_text(h) == "unavail"
}

pub(super) fn value_of(h: &HostRecord, col: &Column, rq: RunQueue) -> Option<f64> {
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
pub(super) fn json_value(col: &Column, v: f64) -> Value {
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
pub(super) fn format_value(col: &Column, v: f64) -> String {
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

pub(super) fn cell(h: &HostRecord, col: &Column, rq: RunQueue) -> String {
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
