//! What `lsload -R`/`lshosts -R` select on: each host's values ([`HostValues`]), the
//! external load indices, the selection itself and shared resources' dynamic values;
//! and `lshosts -json`.

use super::*;

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
