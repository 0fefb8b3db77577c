//! `lsinfo`: the resource table (built-in indices, static resources, lsf.shared's),
//! host types and models, and its `-l`, `-r`, `-t`, `-m` forms and resource-name arguments.

use super::*;

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
pub fn info_resources(config: &Config) -> Vec<(String, String, String, String)> {
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
