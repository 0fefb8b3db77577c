//! `lshosts -l`: LSF 10.1's block per host (static shared resources, RESOURCES,
//! RUN_WINDOWS, LOAD_THRESHOLDS).

use super::*;

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
