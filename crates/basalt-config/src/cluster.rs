//! `lsf.cluster.<cluster>`: administrators, hosts (in master-candidate order),
//! LIM parameters, the resource map and the remote clusters (MultiCluster).

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::error::Ctx;
use crate::lexer::{self, Section, Table};
use crate::not_applied::{self, LSF_CLUSTER};
use crate::shared::{Shared, check_columns};
use crate::timewindow::TimeWindow;

/// The contents of `lsf.cluster.<cluster>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterFile {
    /// The cluster name (first ClusterName of lsf.shared).
    pub name: String,
    /// `Administrators` of the ClusterAdmins section.
    pub admins: Vec<String>,
    /// Hosts in file order (= master-candidate order).
    pub hosts: Vec<ClusterHost>,
    pub params: LimParams,
    /// ResourceMap rows: (RESOURCENAME, LOCATION with its outer parentheses removed).
    pub resource_map: Vec<(String, String)>,
    /// RemoteClusters rows (MultiCluster), in file order; empty when the section is
    /// absent (LSF: then every other cluster of lsf.shared is a remote cluster).
    pub remote_clusters: Vec<RemoteCluster>,
}

impl ClusterFile {
    /// A host by name (LSF host-name comparison).
    pub fn host(&self, name: &str) -> Option<&ClusterHost> {
        self.hosts
            .iter()
            .find(|h| basalt_core::same_host(&h.name, name))
    }

    /// The RemoteClusters row of cluster `name`.
    pub fn remote_cluster(&self, name: &str) -> Option<&RemoteCluster> {
        self.remote_clusters.iter().find(|r| r.name == name)
    }
}

/// A row of the RemoteClusters section (LSF 10.1 MultiCluster): a cluster this one
/// talks to. Each must be a ClusterName of lsf.shared other than this cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteCluster {
    /// CLUSTERNAME.
    pub name: String,
    /// EQUIV (`Y`/`N`, default N): the remote cluster is equivalent to the local one for
    /// load and host information.
    pub equiv: bool,
    /// CACHE_INTERVAL: seconds remote load information is cached (default 60).
    pub cache_interval: u32,
    /// RECV_FROM (`Y`/`N`, default Y): this cluster accepts jobs forwarded from it.
    pub recv_from: bool,
    /// AUTH: the authentication method for it (`-` or absent: none).
    pub auth: Option<String>,
}

impl RemoteCluster {
    /// A row naming `name` with every other column at its default.
    pub fn new(name: &str) -> RemoteCluster {
        RemoteCluster {
            name: name.to_owned(),
            equiv: false,
            cache_interval: 60,
            recv_from: true,
            auth: None,
        }
    }
}

/// A row of the Host section.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterHost {
    pub name: String,
    /// `None` when unset or `!` (detect).
    pub model: Option<String>,
    /// `None` when unset or `!` (detect).
    pub host_type: Option<String>,
    /// `server` column (default true).
    pub server: bool,
    /// RESOURCES list (`name` or `name=value`).
    pub resources: Vec<String>,
    /// RUNWINDOW: when the host is available to LIM (None = always).
    pub run_window: Option<TimeWindow>,
    /// LIM busy thresholds: canonical load-index or Numeric-resource name -> value.
    pub busy_thresholds: BTreeMap<String, f64>,
    /// Basalt extension: the ADDRESS column.
    pub address: Option<IpAddr>,
    /// Line of the row in the file.
    pub line: usize,
}

impl ClusterHost {
    /// A row of line `line` naming `name` and leaving every other column at its
    /// default: a server host, no model, type, resources, run window, thresholds or
    /// address.
    pub fn named(name: &str, line: usize) -> ClusterHost {
        ClusterHost {
            name: name.to_owned(),
            model: None,
            host_type: None,
            server: true,
            resources: Vec::new(),
            run_window: None,
            busy_thresholds: BTreeMap::new(),
            address: None,
            line,
        }
    }
}

/// The Parameters section (LIM timing).
#[derive(Debug, Clone, PartialEq)]
pub struct LimParams {
    /// EXINTERVAL, seconds (Basalt default 1.0; fractions allowed; > 0).
    pub exinterval_secs: f64,
    /// HOST_INACTIVITY_LIMIT, in exchange intervals.
    pub host_inactivity_limit: u32,
    /// MASTER_INACTIVITY_LIMIT, in exchange intervals.
    pub master_inactivity_limit: u32,
    /// RETRY_LIMIT, in exchange intervals.
    pub retry_limit: u32,
    /// PROBE_TIMEOUT, seconds.
    pub probe_timeout_secs: f64,
    /// ELIM_POLL_INTERVAL, seconds (> 0 and <= 5).
    pub elim_poll_interval_secs: f64,
    /// Every other parameter, raw (ELIMARGS, LSF_ELIM_RESTARTS, ADJUST_DURATION, …).
    pub other: BTreeMap<String, String>,
}

impl Default for LimParams {
    fn default() -> LimParams {
        LimParams {
            exinterval_secs: 1.0,
            host_inactivity_limit: 5,
            master_inactivity_limit: 2,
            retry_limit: 2,
            probe_timeout_secs: 2.0,
            elim_poll_interval_secs: 5.0,
            other: BTreeMap::new(),
        }
    }
}

/// Parameters of lsf.cluster's Parameters section kept raw in [`LimParams::other`].
pub const KNOWN_LIM_PARAMS: &[&str] = &[
    "ADJUST_DURATION",
    "ELIMARGS",
    "LSF_ELIM_DEBUG",
    "LSF_ELIM_BLOCKTIME",
    "LSF_ELIM_RESTARTS",
    "LSF_HOST_ADDR_RANGE",
    "FLOAT_CLIENTS",
    "FLOAT_CLIENTS_ADDR_RANGE",
];

/// Host-section columns other than load indices.
const HOST_COLUMNS: &[&str] = &[
    "HOSTNAME",
    "MODEL",
    "TYPE",
    "SERVER",
    "RESOURCES",
    "RUNWINDOW",
    "REXPRI",
    "ND",
    "ADDRESS",
];

/// Parse `lsf.cluster.<name>`.
pub(crate) fn parse(ctx: &mut Ctx<'_>, text: &str, name: &str, shared: &Shared) -> ClusterFile {
    let mut cf = ClusterFile {
        name: name.to_owned(),
        ..ClusterFile::default()
    };
    let mut saw_hosts = false;
    for section in lexer::parse_sections(ctx, text) {
        match section.name.to_ascii_lowercase().as_str() {
            "clusteradmins" => {
                for e in lexer::vertical(ctx, &section) {
                    if e.upper() == "ADMINISTRATORS" {
                        cf.admins = e.value.split_whitespace().map(str::to_owned).collect();
                    } else {
                        ctx.warn(
                            e.line,
                            format!("unknown keyword {} in ClusterAdmins ignored", e.key),
                        );
                    }
                }
            }
            "host" => {
                saw_hosts = true;
                if let Some(t) = lexer::horizontal(ctx, &section) {
                    hosts(ctx, &section, &t, shared, &mut cf.hosts);
                    not_applied::check_columns(ctx, LSF_CLUSTER, "Host", &t);
                }
            }
            "parameters" => params(ctx, &section, &mut cf.params),
            "resourcemap" => {
                if let Some(t) = lexer::horizontal(ctx, &section) {
                    if !check_columns(
                        ctx,
                        &section,
                        &t,
                        &["RESOURCENAME", "LOCATION"],
                        &["RESOURCENAME", "LOCATION"],
                    ) {
                        continue;
                    }
                    // The scheduler sees Numeric shared resources (static, or dynamic
                    // from an ELIM) and static Boolean and String ones; a row naming a
                    // dynamic Boolean or String one is read but not applied.
                    let (n, l) = (t.col("RESOURCENAME"), t.col("LOCATION"));
                    let unseen = t.rows.iter().any(|row| {
                        row.get(n)
                            .and_then(|n| shared.resource(n))
                            .is_some_and(|d| {
                                d.kind != crate::ResourceKind::Numeric && d.interval.is_some()
                            })
                    });
                    if unseen {
                        not_applied::check_section(
                            ctx,
                            LSF_CLUSTER,
                            "ResourceMap",
                            "ResourceMap",
                            section.line,
                        );
                    }
                    for row in &t.rows {
                        match (row.get(n), row.get(l)) {
                            (Some(n), Some(l)) => {
                                if shared.resource(n).is_none() {
                                    ctx.err(
                                        row.line,
                                        format!("resource `{n}` is not defined in lsf.shared"),
                                    );
                                }
                                cf.resource_map.push((n.to_owned(), l.to_owned()));
                            }
                            _ => {
                                ctx.err(row.line, "ResourceMap row needs RESOURCENAME and LOCATION")
                            }
                        }
                    }
                }
            }
            "remoteclusters" => {
                if let Some(t) = lexer::horizontal(ctx, &section) {
                    remote_clusters(ctx, &section, &t, shared, &mut cf);
                    not_applied::check_columns(ctx, LSF_CLUSTER, "RemoteClusters", &t);
                }
            }
            _ => ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            ),
        }
    }
    if !saw_hosts {
        ctx.err(0, "no Host section");
    }
    cf
}

enum Col {
    Name,
    Model,
    Type,
    Server,
    Resources,
    RunWindow,
    Address,
    Threshold(String),
    Ignored,
}

fn hosts(
    ctx: &mut Ctx<'_>,
    section: &Section,
    table: &Table,
    shared: &Shared,
    out: &mut Vec<ClusterHost>,
) {
    // The names seen (lower case) and their lines: the duplicate check of each row is
    // a lookup, not a scan (a scan of 10,000 hosts made every command wait half a second
    // while it read the cluster file).
    let mut seen: std::collections::HashMap<String, usize> = out
        .iter()
        .map(|h| (h.name.to_ascii_lowercase(), h.line))
        .collect();
    let mut cols = Vec::with_capacity(table.columns.len());
    for c in &table.columns {
        let col = match c.to_ascii_uppercase().as_str() {
            "HOSTNAME" => Col::Name,
            "MODEL" => Col::Model,
            "TYPE" => Col::Type,
            "SERVER" => Col::Server,
            "RESOURCES" => Col::Resources,
            "RUNWINDOW" => Col::RunWindow,
            "ADDRESS" => Col::Address,
            u if HOST_COLUMNS.contains(&u) => Col::Ignored,
            _ => match shared.threshold_index(c) {
                Some(idx) => Col::Threshold(idx),
                None => {
                    ctx.warn(
                        table.line,
                        format!(
                            "unknown column `{c}` in section {} ignored (not a load index or Numeric resource)",
                            section.name
                        ),
                    );
                    Col::Ignored
                }
            },
        };
        cols.push(col);
    }
    if table.col("HOSTNAME").is_none() {
        ctx.err(
            table.line,
            "section Host: required column HOSTNAME is missing",
        );
        return;
    }
    for row in &table.rows {
        let mut host = ClusterHost::named("", row.line);
        for (col, field) in cols.iter().zip(&row.fields) {
            let Some(v) = field.as_deref() else {
                continue;
            };
            match col {
                Col::Name => host.name = v.to_owned(),
                Col::Model if v != "!" => {
                    if shared.host_model(v).is_none() {
                        ctx.err(
                            row.line,
                            format!(
                                "host model `{v}` is not defined in lsf.shared (HostModel section)"
                            ),
                        );
                    }
                    host.model = Some(v.to_owned());
                }
                Col::Type if v != "!" => {
                    if !shared.has_host_type(v) {
                        ctx.err(
                            row.line,
                            format!(
                                "host type `{v}` is not defined in lsf.shared (HostType section)"
                            ),
                        );
                    }
                    host.host_type = Some(v.to_owned());
                }
                Col::Model | Col::Type | Col::Ignored => {}
                Col::Server => match v {
                    "1" => host.server = true,
                    "0" => host.server = false,
                    _ => {
                        ctx.err(row.line, format!("server: expected 1 or 0, found `{v}`"));
                    }
                },
                Col::Resources => {
                    for r in v.split_whitespace() {
                        let rname = r.split_once('=').map_or(r, |(n, _)| n);
                        if shared.resource(rname).is_none() {
                            ctx.err(
                                row.line,
                                format!("resource `{rname}` is not defined in lsf.shared (Resource section)"),
                            );
                        }
                        host.resources.push(r.to_owned());
                    }
                }
                Col::RunWindow => match TimeWindow::parse(v) {
                    Ok(w) => host.run_window = Some(w),
                    Err(e) => {
                        ctx.err(row.line, format!("RUNWINDOW: {e}"));
                    }
                },
                Col::Address => match v.parse::<IpAddr>() {
                    Ok(a) => host.address = Some(a),
                    Err(_) => {
                        ctx.err(row.line, format!("ADDRESS: `{v}` is not an IP address"));
                    }
                },
                Col::Threshold(idx) => {
                    if let Some(t) = ctx.float(row.line, idx, v) {
                        host.busy_thresholds.insert(idx.clone(), t);
                    }
                }
            }
        }
        if host.name.is_empty() {
            ctx.err(row.line, "missing HOSTNAME");
            continue;
        }
        match seen.entry(host.name.to_ascii_lowercase()) {
            std::collections::hash_map::Entry::Occupied(first) => {
                ctx.err(
                    row.line,
                    format!(
                        "duplicate host `{}` (first defined at line {})",
                        host.name,
                        first.get()
                    ),
                );
                continue;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(host.line);
            }
        }
        out.push(host);
    }
}

/// `Y` or `N` (either case) of a RemoteClusters column; anything else is an error.
fn strict_yes_no(ctx: &mut Ctx<'_>, line: usize, column: &str, v: &str) -> Option<bool> {
    match v {
        "Y" | "y" => Some(true),
        "N" | "n" => Some(false),
        _ => {
            ctx.err(line, format!("{column}: expected Y or N, found `{v}`"));
            None
        }
    }
}

/// The RemoteClusters section: each row names a ClusterName of lsf.shared other than
/// this cluster, once.
fn remote_clusters(
    ctx: &mut Ctx<'_>,
    section: &Section,
    table: &Table,
    shared: &Shared,
    cf: &mut ClusterFile,
) {
    if !check_columns(
        ctx,
        section,
        table,
        &[
            "CLUSTERNAME",
            "EQUIV",
            "CACHE_INTERVAL",
            "RECV_FROM",
            "AUTH",
        ],
        &["CLUSTERNAME"],
    ) {
        return;
    }
    let cols = (
        table.col("CLUSTERNAME"),
        table.col("EQUIV"),
        table.col("CACHE_INTERVAL"),
        table.col("RECV_FROM"),
        table.col("AUTH"),
    );
    let mut lines: Vec<usize> = Vec::new();
    for row in &table.rows {
        let Some(name) = row.get(cols.0) else {
            ctx.err(row.line, "RemoteClusters: missing CLUSTERNAME");
            continue;
        };
        let mut rc = RemoteCluster::new(name);
        let mut ok = true;
        if let Some(v) = row.get(cols.1) {
            match strict_yes_no(ctx, row.line, "EQUIV", v) {
                Some(b) => rc.equiv = b,
                None => ok = false,
            }
        }
        if let Some(v) = row.get(cols.2) {
            match ctx.uint(row.line, "CACHE_INTERVAL", v) {
                Some(n) => rc.cache_interval = n,
                None => ok = false,
            }
        }
        if let Some(v) = row.get(cols.3) {
            match strict_yes_no(ctx, row.line, "RECV_FROM", v) {
                Some(b) => rc.recv_from = b,
                None => ok = false,
            }
        }
        rc.auth = row.get(cols.4).map(str::to_owned);
        if name == cf.name {
            ctx.err(
                row.line,
                format!("RemoteClusters: `{name}` is this cluster; list only the other clusters"),
            );
            continue;
        }
        if !shared.clusters.iter().any(|c| c == name) {
            ctx.err(
                row.line,
                format!(
                    "RemoteClusters: cluster `{name}` is not a ClusterName of lsf.shared (Cluster section)"
                ),
            );
            continue;
        }
        if let Some(i) = cf.remote_clusters.iter().position(|r| r.name == name) {
            ctx.err(
                row.line,
                format!(
                    "RemoteClusters: cluster `{name}` listed twice (first at line {})",
                    lines[i]
                ),
            );
            continue;
        }
        if ok {
            cf.remote_clusters.push(rc);
            lines.push(row.line);
        }
    }
}

fn params(ctx: &mut Ctx<'_>, section: &Section, p: &mut LimParams) {
    for e in lexer::vertical(ctx, section) {
        let key = e.upper();
        if e.value.is_empty() {
            continue;
        }
        let v = e.value.as_str();
        let positive = |ctx: &mut Ctx<'_>, x: Option<f64>| match x {
            Some(x) if x > 0.0 => Some(x),
            Some(_) => {
                ctx.err(e.line, format!("{key} must be greater than 0, found `{v}`"));
                None
            }
            None => None,
        };
        match key.as_str() {
            "EXINTERVAL" => {
                let x = ctx.float(e.line, &key, v);
                if let Some(x) = positive(ctx, x) {
                    p.exinterval_secs = x;
                }
            }
            "PROBE_TIMEOUT" => {
                let x = ctx.float(e.line, &key, v);
                if let Some(x) = positive(ctx, x) {
                    p.probe_timeout_secs = x;
                }
            }
            "ELIM_POLL_INTERVAL" => {
                let x = ctx.float(e.line, &key, v);
                if let Some(x) = positive(ctx, x) {
                    if x > 5.0 {
                        ctx.err(
                            e.line,
                            format!("ELIM_POLL_INTERVAL must be at most 5 seconds, found `{v}`"),
                        );
                    } else {
                        p.elim_poll_interval_secs = x;
                    }
                }
            }
            "HOST_INACTIVITY_LIMIT" => {
                if let Some(x) = ctx.uint(e.line, &key, v) {
                    p.host_inactivity_limit = x;
                }
            }
            "MASTER_INACTIVITY_LIMIT" => {
                if let Some(x) = ctx.uint(e.line, &key, v) {
                    p.master_inactivity_limit = x;
                }
            }
            "RETRY_LIMIT" => {
                if let Some(x) = ctx.uint(e.line, &key, v) {
                    p.retry_limit = x;
                }
            }
            _ => {
                if KNOWN_LIM_PARAMS.contains(&key.as_str()) {
                    not_applied::check_entry(ctx, LSF_CLUSTER, "Parameters", &e.key, v, e.line);
                } else {
                    ctx.warn(
                        e.line,
                        format!("unknown parameter {} in lsf.cluster Parameters", e.key),
                    );
                }
                p.other.insert(key, e.value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Diag;
    use crate::shared::{HostModel, ResourceDef, ResourceKind};
    use std::path::Path;

    fn shared() -> Shared {
        Shared {
            clusters: vec!["c".into(), "east".into(), "west".into()],
            cluster_rows: Vec::new(),
            host_types: vec!["linux".into()],
            host_models: vec![HostModel {
                name: "IntelI5".into(),
                cpu_factor: 100.0,
                architecture: None,
            }],
            resources: vec![
                ResourceDef {
                    name: "cs".into(),
                    kind: ResourceKind::Boolean,
                    interval: None,
                    increasing: None,
                    description: String::new(),
                },
                ResourceDef {
                    name: "gpu".into(),
                    kind: ResourceKind::Numeric,
                    interval: Some(10),
                    increasing: Some(false),
                    description: String::new(),
                },
            ],
        }
    }

    fn parse_str(text: &str) -> (ClusterFile, Diag) {
        let mut d = Diag::default();
        let s = shared();
        let c = parse(&mut d.file(Path::new("lsf.cluster.c")), text, "c", &s);
        (c, d)
    }

    #[test]
    fn hosts_and_params() {
        let (c, d) = parse_str(
            "Begin   ClusterAdmins\nAdministrators = root lsfadmin\nEnd    ClusterAdmins\n\
             Begin Host\nhostname MODEL Type server r1m GPU address RESOURCES RunWindow\n\
             hostA IntelI5 linux 1 3.5 2 127.0.0.1 (cs) ()\n\
             hostB ! ! 0 - - ::1 () (8:00-17:00)\n\
             hostC\nEnd Host\n\
             Begin Parameters\nEXINTERVAL = 0.5\nELIM_POLL_INTERVAL = 2\nELIMARGS = -x 1\nEnd Parameters\n\
             Begin ResourceMap\nRESOURCENAME LOCATION\ngpu (2@[all])\nEnd ResourceMap\n",
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        // Only what LIM does not apply warns: the RUNWINDOW column (the ResourceMap of a
        // dynamic Numeric resource applies).
        let w: Vec<(usize, bool, &str)> = d
            .warnings
            .iter()
            .map(|w| (w.line, w.not_applied, w.message.as_str()))
            .collect();
        assert_eq!(w.len(), 1, "{w:#?}");
        assert!(
            w[0].0 == 5 && w[0].1 && w[0].2.starts_with("RUNWINDOW is read but not applied yet")
        );
        assert_eq!(c.admins, vec!["root", "lsfadmin"]);
        assert_eq!(c.hosts.len(), 3);
        let a = &c.hosts[0];
        assert_eq!(a.model.as_deref(), Some("IntelI5"));
        assert_eq!(a.busy_thresholds.get("r1m"), Some(&3.5));
        assert_eq!(a.busy_thresholds.get("gpu"), Some(&2.0));
        assert_eq!(a.resources, vec!["cs"]);
        assert_eq!(a.address, Some("127.0.0.1".parse().unwrap()));
        assert!(a.server && a.run_window.is_none());
        let b = &c.hosts[1];
        assert_eq!(b.model, None);
        assert!(!b.server);
        assert!(b.busy_thresholds.is_empty());
        assert!(b.run_window.is_some());
        assert!(c.hosts[2].server);
        assert_eq!(c.params.exinterval_secs, 0.5);
        assert_eq!(c.params.elim_poll_interval_secs, 2.0);
        assert_eq!(c.params.retry_limit, 2);
        assert_eq!(
            c.params.other.get("ELIMARGS").map(String::as_str),
            Some("-x 1")
        );
        assert_eq!(
            c.resource_map,
            vec![("gpu".to_owned(), "2@[all]".to_owned())]
        );
        assert!(c.host("HOSTA").is_some());
    }

    #[test]
    fn host_errors() {
        let (_, d) = parse_str(
            "Begin Host\nHOSTNAME model type server ADDRESS RESOURCES r1m color\n\
             h1 Nope linux 1 () () () red\n\
             h2 IntelI5 solaris 1 () () ()\n\
             h3 IntelI5 linux yes () () ()\n\
             h4 IntelI5 linux 1 999.1.1.1 () ()\n\
             h5 IntelI5 linux 1 () (cs nosuch) ()\n\
             h6 IntelI5 linux 1 () () high\n\
             h1 IntelI5 linux 1 () () ()\n\
             h7 IntelI5 linux 1 () () () x y\n\
             End Host\n\
             Begin Parameters\nEXINTERVAL = fast\nELIM_POLL_INTERVAL = 10\nPROBE_TIMEOUT = 0\nFOO = 1\nEnd Parameters\n",
        );
        let mut lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            vec![3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15],
            "{:#?}",
            d.errors
        );
        let wl: Vec<usize> = d.warnings.iter().map(|e| e.line).collect();
        assert_eq!(wl, vec![2, 16]);
    }

    #[test]
    fn remote_clusters() {
        let (c, d) = parse_str(
            "Begin Host\nHOSTNAME\nh1\nEnd Host\n\
             Begin RemoteClusters\n\
             CLUSTERNAME  EQUIV  CACHE_INTERVAL  RECV_FROM  AUTH\n\
             east         Y      30              n          KRB\n\
             west         -      -               -          -\n\
             End RemoteClusters\n",
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        // EQUIV, CACHE_INTERVAL and AUTH are read, not applied.
        let w: Vec<String> = d.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            d.warnings.iter().all(|w| w.not_applied && w.line == 6),
            "{w:?}"
        );
        assert!(w[0].contains("EQUIV is read but not applied yet"), "{w:?}");
        assert_eq!(
            c.remote_clusters,
            vec![
                RemoteCluster {
                    name: "east".into(),
                    equiv: true,
                    cache_interval: 30,
                    recv_from: false,
                    auth: Some("KRB".into()),
                },
                RemoteCluster::new("west"),
            ]
        );
        let west = c.remote_cluster("west").unwrap();
        assert!(!west.equiv && west.recv_from && west.cache_interval == 60);
        assert!(west.auth.is_none());
        assert!(c.remote_cluster("c").is_none());

        // Only CLUSTERNAME is required.
        let (c, d) = parse_str(
            "Begin Host\nHOSTNAME\nh1\nEnd Host\n\
             Begin RemoteClusters\nCLUSTERNAME\nwest\nEnd RemoteClusters\n",
        );
        assert!(d.errors.is_empty() && d.warnings.is_empty());
        assert_eq!(c.remote_clusters, vec![RemoteCluster::new("west")]);

        // Without the section there are none.
        let (c, _) = parse_str("Begin Host\nHOSTNAME\nh1\nEnd Host\n");
        assert!(c.remote_clusters.is_empty());
    }

    #[test]
    fn remote_cluster_errors_name_file_and_line() {
        let (c, d) = parse_str(
            "Begin Host\nHOSTNAME\nh1\nEnd Host\n\
             Begin RemoteClusters\n\
             CLUSTERNAME  EQUIV  CACHE_INTERVAL  RECV_FROM  COLOR\n\
             east         yes    -               -          red\n\
             west         N      soon            -\n\
             c            N      -               -\n\
             north        N      -               -\n\
             east         Y      -               maybe\n\
             west         Y\n\
             west         Y\n\
             End RemoteClusters\n\
             Begin RemoteClusters\nEQUIV\nY\nEnd RemoteClusters\n",
        );
        let e: Vec<String> = d.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            e,
            vec![
                "lsf.cluster.c:7: EQUIV: expected Y or N, found `yes`",
                "lsf.cluster.c:8: CACHE_INTERVAL: expected a non-negative integer, found `soon`",
                "lsf.cluster.c:9: RemoteClusters: `c` is this cluster; list only the other clusters",
                "lsf.cluster.c:10: RemoteClusters: cluster `north` is not a ClusterName of lsf.shared (Cluster section)",
                "lsf.cluster.c:11: RECV_FROM: expected Y or N, found `maybe`",
                "lsf.cluster.c:13: RemoteClusters: cluster `west` listed twice (first at line 12)",
                "lsf.cluster.c:16: section RemoteClusters: required column CLUSTERNAME is missing",
            ],
        );
        let w: Vec<String> = d.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            w.iter()
                .filter(|w| !w.contains("read but not applied"))
                .collect::<Vec<_>>(),
            vec!["lsf.cluster.c:6: unknown column `COLOR` in section RemoteClusters ignored"]
        );
        assert_eq!(
            c.remote_clusters,
            vec![RemoteCluster {
                equiv: true,
                ..RemoteCluster::new("west")
            }]
        );
    }
}
