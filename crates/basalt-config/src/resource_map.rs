//! The shared resources of the ResourceMap section of `lsf.cluster.<cluster>`
//! ([`shared_instances`]): which hosts share each instance of a resource lsf.shared
//! defines, and its configured value. The host commands list them (`lshosts -s`,
//! `lsload -s`, `bhosts -s`); the scheduler counts what jobs reserve of them.

use crate::{Config, ResourceKind};

/// One instance of a shared resource: a value shared by a set of hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedInstance {
    pub resource: String,
    pub kind: ResourceKind,
    /// Dynamic: its value comes from an ELIM (INTERVAL in lsf.shared).
    pub dynamic: bool,
    /// The configured value (`value@[...]`) of a static resource.
    pub value: Option<String>,
    pub hosts: Vec<String>,
}

/// The instances of the ResourceMap section, in file order. `LOCATION` is
/// `[value@][host ...]` one or more times: `all` is every host of the cluster
/// (`~host` leaves one out), `default` an instance on each host.
pub fn shared_instances(config: &Config) -> Vec<SharedInstance> {
    let all: Vec<String> = config
        .cluster
        .hosts
        .iter()
        .map(|h| h.name.clone())
        .collect();
    let mut out = Vec::new();
    for (name, location) in &config.cluster.resource_map {
        let Some(def) = config.shared.resource(name) else {
            continue;
        };
        let mut rest = location
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        while let Some(open) = rest.find('[') {
            let value = rest[..open].trim().trim_end_matches('@').trim();
            let Some(close) = rest[open..].find(']') else {
                break;
            };
            let words: Vec<&str> = rest[open + 1..open + close].split_whitespace().collect();
            rest = &rest[open + close + 1..];
            let mut hosts: Vec<String> = Vec::new();
            let mut per_host = false;
            for w in &words {
                match *w {
                    "all" => hosts.extend(all.iter().cloned()),
                    "default" => {
                        per_host = true;
                        hosts.extend(all.iter().cloned());
                    }
                    _ => {}
                }
            }
            for w in &words {
                match w.strip_prefix('~') {
                    Some(x) => hosts.retain(|h| !basalt_core::same_host(h, x)),
                    None if *w == "all" || *w == "default" => {}
                    None => {
                        if !hosts.iter().any(|h| basalt_core::same_host(h, w)) {
                            hosts.push((*w).to_owned());
                        }
                    }
                }
            }
            let inst = |hosts: Vec<String>| SharedInstance {
                resource: def.name.clone(),
                kind: def.kind,
                dynamic: def.interval.is_some(),
                value: (!value.is_empty()).then(|| value.to_owned()),
                hosts,
            };
            if per_host {
                out.extend(hosts.into_iter().map(|h| inst(vec![h])));
            } else {
                out.push(inst(hosts));
            }
        }
    }
    out
}
