//! `lsf.shared`: cluster names (with each cluster's master candidates, for
//! MultiCluster), host types, host models and resource definitions.

use std::net::IpAddr;

use crate::error::Ctx;
use crate::lexer::{self, Section, Table};

/// The contents of `lsf.shared`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shared {
    /// `ClusterName` rows of the Cluster section, in order (the first is this cluster).
    pub clusters: Vec<String>,
    /// The rows of the Cluster section, in the order of [`Shared::clusters`]: each
    /// cluster's `Servers` (and Basalt's `ADDRESSES`), for MultiCluster.
    pub cluster_rows: Vec<SharedCluster>,
    /// `TYPENAME` rows of the HostType section.
    pub host_types: Vec<String>,
    pub host_models: Vec<HostModel>,
    pub resources: Vec<ResourceDef>,
}

/// A row of the Cluster section: a cluster and the hosts its master may run on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedCluster {
    /// `ClusterName`.
    pub name: String,
    /// `Servers`: the cluster's master candidates, the first one tried first (empty for
    /// `-` or without the column). LSF writes `(hostA hostB)` or one name.
    pub servers: Vec<String>,
    /// Basalt extension, the `ADDRESSES` column: the address of each of `servers` (same
    /// length); `None` (`-` in the list, or no column) means "resolve the name".
    pub addresses: Vec<Option<IpAddr>>,
}

/// A HostModel row.
#[derive(Debug, Clone, PartialEq)]
pub struct HostModel {
    pub name: String,
    pub cpu_factor: f64,
    /// The parenthesised ARCHITECTURE list joined by single blanks.
    pub architecture: Option<String>,
}

/// The type of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    Boolean,
    Numeric,
    String,
}

impl ResourceKind {
    /// Parse `Boolean`, `Numeric` or `String` (any case).
    pub fn from_name(s: &str) -> Option<ResourceKind> {
        match s.to_ascii_lowercase().as_str() {
            "boolean" => Some(ResourceKind::Boolean),
            "numeric" => Some(ResourceKind::Numeric),
            "string" => Some(ResourceKind::String),
            _ => None,
        }
    }

    /// The name as LSF prints it.
    pub fn name(self) -> &'static str {
        match self {
            ResourceKind::Boolean => "Boolean",
            ResourceKind::Numeric => "Numeric",
            ResourceKind::String => "String",
        }
    }
}

/// A Resource row.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDef {
    pub name: String,
    pub kind: ResourceKind,
    /// Update interval in seconds (numeric ELIM indices).
    pub interval: Option<u32>,
    /// `Y` = a larger value means more loaded.
    pub increasing: Option<bool>,
    pub description: String,
}

impl Shared {
    /// The Cluster-section row of cluster `name`.
    pub fn cluster(&self, name: &str) -> Option<&SharedCluster> {
        self.cluster_rows.iter().find(|c| c.name == name)
    }

    /// The CPU factor of a host model (case-insensitive).
    pub fn cpu_factor(&self, model: &str) -> Option<f64> {
        self.host_model(model).map(|m| m.cpu_factor)
    }

    /// A host model by name (case-insensitive).
    pub fn host_model(&self, model: &str) -> Option<&HostModel> {
        self.host_models
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(model))
    }

    /// True when `host_type` is in the HostType section (case-insensitive).
    pub fn has_host_type(&self, host_type: &str) -> bool {
        self.host_types
            .iter()
            .any(|t| t.eq_ignore_ascii_case(host_type))
    }

    /// A resource by name (exact match first, then case-insensitive).
    pub fn resource(&self, name: &str) -> Option<&ResourceDef> {
        self.resources.iter().find(|r| r.name == name).or_else(|| {
            self.resources
                .iter()
                .find(|r| r.name.eq_ignore_ascii_case(name))
        })
    }

    /// The canonical name of a load index usable as a threshold: a built-in
    /// index (`r1m`, `swap` -> `swp`) or a Numeric resource.
    pub fn threshold_index(&self, name: &str) -> Option<String> {
        if let Some(i) = basalt_core::LoadIndex::from_name(name) {
            return Some(i.name().to_owned());
        }
        self.resource(name)
            .filter(|r| r.kind == ResourceKind::Numeric)
            .map(|r| r.name.clone())
    }
}

/// Warn about columns not in `known`; error (at the header) for each missing `required` one.
pub(crate) fn check_columns(
    ctx: &mut Ctx<'_>,
    section: &Section,
    table: &Table,
    known: &[&str],
    required: &[&str],
) -> bool {
    for c in &table.columns {
        if !known.iter().any(|k| k.eq_ignore_ascii_case(c)) {
            ctx.warn(
                table.line,
                format!("unknown column `{c}` in section {} ignored", section.name),
            );
        }
    }
    let mut ok = true;
    for r in required {
        if table.col(r).is_none() {
            ctx.err(
                table.line,
                format!("section {}: required column {r} is missing", section.name),
            );
            ok = false;
        }
    }
    ok
}

/// Parse `lsf.shared`.
pub(crate) fn parse(ctx: &mut Ctx<'_>, text: &str) -> Shared {
    let mut shared = Shared::default();
    for section in lexer::parse_sections(ctx, text) {
        let name = section.name.to_ascii_lowercase();
        match name.as_str() {
            "cluster" | "hosttype" | "hostmodel" | "resource" => {}
            _ => {
                ctx.warn(
                    section.line,
                    format!("unknown section {} ignored", section.name),
                );
                continue;
            }
        }
        let Some(table) = lexer::horizontal(ctx, &section) else {
            continue;
        };
        match name.as_str() {
            "cluster" => cluster(ctx, &section, &table, &mut shared),
            "hosttype" => host_type(ctx, &section, &table, &mut shared),
            "hostmodel" => host_model(ctx, &section, &table, &mut shared),
            _ => resource(ctx, &section, &table, &mut shared),
        }
    }
    if shared.clusters.is_empty() {
        ctx.err(
            0,
            "no cluster name: the Cluster section needs a ClusterName row",
        );
    }
    shared
}

fn cluster(ctx: &mut Ctx<'_>, section: &Section, table: &Table, shared: &mut Shared) {
    if !check_columns(
        ctx,
        section,
        table,
        &["CLUSTERNAME", "SERVERS", "ADDRESSES"],
        &["CLUSTERNAME"],
    ) {
        return;
    }
    let (col, servers_col, addr_col) = (
        table.col("CLUSTERNAME"),
        table.col("SERVERS"),
        table.col("ADDRESSES"),
    );
    for row in &table.rows {
        let Some(name) = row.get(col) else {
            ctx.err(row.line, "missing ClusterName");
            continue;
        };
        let servers: Vec<String> = row
            .get(servers_col)
            .map(|v| v.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let mut addresses = vec![None; servers.len()];
        if let Some(v) = row.get(addr_col) {
            let given: Vec<&str> = v.split_whitespace().collect();
            if given.len() != servers.len() {
                ctx.err(
                    row.line,
                    format!(
                        "cluster {name}: ADDRESSES has {} entries but Servers has {} hosts; give one address (or `-`) per server",
                        given.len(),
                        servers.len()
                    ),
                );
            } else {
                for (slot, a) in addresses.iter_mut().zip(given) {
                    if a == "-" {
                        continue;
                    }
                    match a.parse::<IpAddr>() {
                        Ok(ip) => *slot = Some(ip),
                        Err(_) => ctx.err(
                            row.line,
                            format!("cluster {name}: ADDRESSES: `{a}` is not an IP address"),
                        ),
                    }
                }
            }
        }
        shared.clusters.push(name.to_owned());
        shared.cluster_rows.push(SharedCluster {
            name: name.to_owned(),
            servers,
            addresses,
        });
    }
}

fn host_type(ctx: &mut Ctx<'_>, section: &Section, table: &Table, shared: &mut Shared) {
    if !check_columns(ctx, section, table, &["TYPENAME"], &["TYPENAME"]) {
        return;
    }
    let col = table.col("TYPENAME");
    for row in &table.rows {
        let Some(n) = row.get(col) else {
            ctx.err(row.line, "missing TYPENAME");
            continue;
        };
        if shared.has_host_type(n) {
            ctx.warn(row.line, format!("host type `{n}` defined twice; ignored"));
        } else {
            shared.host_types.push(n.to_owned());
        }
    }
}

fn host_model(ctx: &mut Ctx<'_>, section: &Section, table: &Table, shared: &mut Shared) {
    if !check_columns(
        ctx,
        section,
        table,
        &["MODELNAME", "CPUFACTOR", "ARCHITECTURE"],
        &["MODELNAME", "CPUFACTOR"],
    ) {
        return;
    }
    let (name_col, cpuf_col, arch_col) = (
        table.col("MODELNAME"),
        table.col("CPUFACTOR"),
        table.col("ARCHITECTURE"),
    );
    for row in &table.rows {
        let Some(name) = row.get(name_col) else {
            ctx.err(row.line, "missing MODELNAME");
            continue;
        };
        let Some(cpuf) = row.get(cpuf_col) else {
            ctx.err(row.line, format!("host model `{name}`: missing CPUFACTOR"));
            continue;
        };
        let Some(cpu_factor) = ctx.float(row.line, "CPUFACTOR", cpuf) else {
            continue;
        };
        if cpu_factor <= 0.0 {
            ctx.err(
                row.line,
                format!("CPUFACTOR must be positive, found `{cpuf}`"),
            );
            continue;
        }
        if shared.host_model(name).is_some() {
            ctx.warn(
                row.line,
                format!("host model `{name}` defined twice; ignored"),
            );
            continue;
        }
        shared.host_models.push(HostModel {
            name: name.to_owned(),
            cpu_factor,
            architecture: row
                .get(arch_col)
                .map(|a| a.split_whitespace().collect::<Vec<_>>().join(" ")),
        });
    }
}

fn resource(ctx: &mut Ctx<'_>, section: &Section, table: &Table, shared: &mut Shared) {
    if !check_columns(
        ctx,
        section,
        table,
        &[
            "RESOURCENAME",
            "TYPE",
            "INTERVAL",
            "INCREASING",
            "DESCRIPTION",
            "RELEASE",
            "CONSUMABLE",
        ],
        &["RESOURCENAME", "TYPE"],
    ) {
        return;
    }
    let cols = (
        table.col("RESOURCENAME"),
        table.col("TYPE"),
        table.col("INTERVAL"),
        table.col("INCREASING"),
        table.col("DESCRIPTION"),
    );
    for row in &table.rows {
        let Some(name) = row.get(cols.0) else {
            ctx.err(row.line, "missing RESOURCENAME");
            continue;
        };
        let kind = match row.get(cols.1) {
            None => {
                ctx.err(row.line, format!("resource `{name}`: missing TYPE"));
                continue;
            }
            Some(t) => match ResourceKind::from_name(t) {
                Some(k) => k,
                None => {
                    ctx.err(
                        row.line,
                        format!(
                            "resource `{name}`: unknown TYPE `{t}` (expected Boolean, Numeric or String)"
                        ),
                    );
                    continue;
                }
            },
        };
        let mut ok = true;
        let interval = match row.get(cols.2) {
            None => None,
            Some(v) => {
                let i = ctx.uint(row.line, "INTERVAL", v);
                ok &= i.is_some();
                i
            }
        };
        let increasing = match row.get(cols.3) {
            None => None,
            Some(v) => {
                let i = ctx.yes_no(row.line, "INCREASING", v);
                ok &= i.is_some();
                i
            }
        };
        if !ok {
            continue;
        }
        if basalt_core::LoadIndex::from_name(name).is_some() {
            ctx.err(
                row.line,
                format!("resource `{name}` has the name of a built-in load index"),
            );
            continue;
        }
        if shared.resources.iter().any(|r| r.name == name) {
            ctx.warn(
                row.line,
                format!("resource `{name}` defined twice; ignored"),
            );
            continue;
        }
        shared.resources.push(ResourceDef {
            name: name.to_owned(),
            kind,
            interval,
            increasing,
            description: row.get(cols.4).unwrap_or("").to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Diag;
    use std::path::Path;

    fn parse_str(text: &str) -> (Shared, Diag) {
        let mut d = Diag::default();
        let s = parse(&mut d.file(Path::new("lsf.shared")), text);
        (s, d)
    }

    #[test]
    fn reference_example() {
        let (s, d) = parse_str(
            "Begin Cluster\nClusterName\nbasalt\nEnd Cluster\n\
             Begin HostType\nTYPENAME\nlinux\nEnd HostType\n\
             Begin HostModel\nMODELNAME  CPUFACTOR   ARCHITECTURE\nIntelI5 100 (x86_64  aarch64)\nEnd HostModel\n\
             Begin Resource\nRESOURCENAME  TYPE    INTERVAL INCREASING  DESCRIPTION\n\
             fs Boolean () () (File server)\ngpu numeric 10 N (GPUs)\nEnd Resource\n",
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert!(d.warnings.is_empty());
        assert_eq!(s.clusters, vec!["basalt"]);
        assert_eq!(s.host_types, vec!["linux"]);
        assert_eq!(s.cpu_factor("inteli5"), Some(100.0));
        assert_eq!(
            s.host_models[0].architecture.as_deref(),
            Some("x86_64 aarch64")
        );
        let fs = s.resource("fs").unwrap();
        assert_eq!(fs.kind, ResourceKind::Boolean);
        assert_eq!(fs.description, "File server");
        assert_eq!(fs.interval, None);
        let gpu = s.resource("gpu").unwrap();
        assert_eq!(gpu.kind, ResourceKind::Numeric);
        assert_eq!(gpu.interval, Some(10));
        assert_eq!(gpu.increasing, Some(false));
        assert_eq!(s.threshold_index("gpu").as_deref(), Some("gpu"));
        assert_eq!(s.threshold_index("fs"), None);
        assert_eq!(s.threshold_index("SWAP").as_deref(), Some("swp"));
    }

    #[test]
    fn errors_and_warnings() {
        let (_, d) = parse_str(
            "Begin Cluster\nClusterName\nc\nEnd Cluster\n\
             Begin HostModel\nMODELNAME CPUFACTOR\nm fast\nEnd HostModel\n\
             Begin Resource\nRESOURCENAME TYPE COLOR\nx Float red\nEnd Resource\n\
             Begin Whatever\nEnd Whatever\n",
        );
        let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![7, 11]);
        let wl: Vec<usize> = d.warnings.iter().map(|e| e.line).collect();
        assert_eq!(wl, vec![10, 13]);
    }

    #[test]
    fn cluster_rows_with_servers_and_addresses() {
        let (s, d) = parse_str(
            "Begin Cluster\nClusterName  Servers          ADDRESSES\n\
             west         (hostA hostB)    (127.0.2.1 -)\n\
             east         hostE\n\
             north        -                -\n\
             south        ( hs1  hs2 )     (::1 10.0.0.2)\n\
             End Cluster\n",
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(s.clusters, vec!["west", "east", "north", "south"]);
        let names: Vec<&str> = s.cluster_rows.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, s.clusters);
        let west = s.cluster("west").unwrap();
        assert_eq!(west.servers, vec!["hostA", "hostB"]);
        assert_eq!(
            west.addresses,
            vec![Some("127.0.2.1".parse().unwrap()), None]
        );
        let east = s.cluster("east").unwrap();
        assert_eq!(east.servers, vec!["hostE"]);
        assert_eq!(east.addresses, vec![None]);
        let north = s.cluster("north").unwrap();
        assert!(north.servers.is_empty() && north.addresses.is_empty());
        let south = s.cluster("south").unwrap();
        assert_eq!(south.servers, vec!["hs1", "hs2"]);
        assert_eq!(
            south.addresses,
            vec![
                Some("::1".parse().unwrap()),
                Some("10.0.0.2".parse().unwrap())
            ]
        );
        assert!(s.cluster("nowhere").is_none());

        // Without the ADDRESSES column (LSF's own syntax) every address is None.
        let (s, d) = parse_str("Begin Cluster\nClusterName Servers\nc (h1 h2)\nEnd Cluster\n");
        assert!(d.errors.is_empty() && d.warnings.is_empty());
        assert_eq!(s.cluster_rows[0].servers, vec!["h1", "h2"]);
        assert_eq!(s.cluster_rows[0].addresses, vec![None, None]);
        // Only a ClusterName column: no servers.
        let (s, _) = parse_str("Begin Cluster\nClusterName\nc\nEnd Cluster\n");
        assert_eq!(
            s.cluster_rows,
            vec![SharedCluster {
                name: "c".into(),
                servers: vec![],
                addresses: vec![]
            }]
        );
    }

    #[test]
    fn cluster_addresses_errors_name_file_and_line() {
        let (_, d) = parse_str(
            "Begin Cluster\nClusterName Servers ADDRESSES\n\
             c (h1 h2) (127.0.0.1)\n\
             d (h1 h2) (127.0.0.1 999.0.0.1)\n\
             e - (127.0.0.1)\n\
             f h1 127.0.0.1\n\
             End Cluster\n",
        );
        let e: Vec<String> = d.errors.iter().map(ToString::to_string).collect();
        assert_eq!(e.len(), 3, "{e:#?}");
        assert!(
            e[0].starts_with("lsf.shared:3: cluster c: ADDRESSES has 1 entries but Servers has 2"),
            "{e:#?}"
        );
        assert_eq!(
            e[1],
            "lsf.shared:4: cluster d: ADDRESSES: `999.0.0.1` is not an IP address"
        );
        assert!(
            e[2].starts_with("lsf.shared:5: cluster e: ADDRESSES has 1 entries but Servers has 0")
        );
    }

    #[test]
    fn no_cluster_name_is_an_error() {
        let (_, d) = parse_str("Begin HostType\nTYPENAME\nlinux\nEnd HostType\n");
        assert_eq!(d.errors.len(), 1);
    }
}
