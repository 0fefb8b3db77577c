//! `lshosts`: the host table (static facts: type, model, cpuf, ncpus, memory, resources).

use super::*;

/// A host's static facts for `lshosts`: what the master knows, else the cluster file.
pub struct HostFacts {
    pub name: String,
    pub host_type: String,
    pub model: String,
    pub cpuf: f64,
    pub ncpus: Option<u32>,
    pub maxmem: Option<u64>,
    pub maxswp: Option<u64>,
    pub maxtmp: Option<u64>,
    pub server: bool,
    pub resources: Vec<String>,
}

pub fn facts(config: &Config, h: &HostRecord) -> HostFacts {
    let info = h.info.clone().unwrap_or_default();
    let conf = basalt_runtime::cluster_host(config, &info.name);
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

pub(super) fn mb_field(v: Option<u64>) -> String {
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
pub(super) fn size6(v: Option<u64>) -> String {
    match v {
        None => format!("{:>6}", "-"),
        Some(mb) if mb > 99_999 => format!("{:>5}G", mb / 1024),
        Some(mb) => format!("{mb:>5}M"),
    }
}

/// The load indices `lshosts -l` shows thresholds for: the built-in ones, then the
/// external (ELIM) indices of lsf.shared that are not shared resources.
pub(super) fn threshold_indices(config: &Config) -> Vec<String> {
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
pub(super) fn threshold_cell(name: &str, value: Option<f64>) -> (usize, String) {
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
