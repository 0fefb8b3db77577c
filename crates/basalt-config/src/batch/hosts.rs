//! lsb.hosts: the Host and HostGroup sections, checked against the cluster file.

use std::collections::BTreeMap;

use crate::cluster::ClusterFile;
use crate::error::Ctx;
use crate::lexer::{self, Section, Table};
use crate::not_applied::{self, LSB_HOSTS};
use crate::shared::{Shared, check_columns};
use crate::timewindow::TimeWindow;

use super::queues::Threshold;
use super::{Batch, list, window};

/// MXJ: the slot limit of a batch host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mxj {
    /// `!`: one slot per CPU.
    Ncpus,
    Slots(u32),
}

/// A Host row of lsb.hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchHost {
    /// A host, a host model or type, or `default`.
    pub name: String,
    pub mxj: Option<Mxj>,
    /// JL/U.
    pub jl_u: Option<u32>,
    /// Load thresholds by canonical index name.
    pub thresholds: BTreeMap<String, Threshold>,
    pub dispatch_window: Option<TimeWindow>,
    /// Other known columns (CHKPNT, EXIT_RATE, AFFINITY, MIG), raw, upper-case keys.
    pub other: BTreeMap<String, String>,
    pub line: usize,
}

/// A HostGroup or UserGroup row.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: String,
    /// GROUP_MEMBER tokens (`all`, `!`, `~x`, names).
    pub members: Vec<String>,
    /// USER_SHARES, raw (without the outer parentheses).
    pub shares: Option<String>,
    /// GROUP_ADMIN tokens (users, user groups, `name[usershares]`/`name[full]`): shown by
    /// bugroup -l and bmgroup -l. A user group's administrators (all but `[usershares]`
    /// ones) control its members' jobs; a host group's open and close its hosts.
    pub admins: Vec<String>,
    pub line: usize,
}

enum HostCol {
    Name,
    Mxj,
    JlU,
    Window,
    Threshold(String),
    Other(String),
    Ignored,
}

pub(super) fn batch_hosts(
    ctx: &mut Ctx<'_>,
    section: &Section,
    table: &Table,
    shared: &Shared,
) -> Vec<BatchHost> {
    let mut cols = Vec::new();
    for c in &table.columns {
        let u = c.to_ascii_uppercase();
        cols.push(match u.as_str() {
            "HOST_NAME" => HostCol::Name,
            "MXJ" => HostCol::Mxj,
            "JL/U" => HostCol::JlU,
            "DISPATCH_WINDOW" => HostCol::Window,
            "CHKPNT" | "EXIT_RATE" | "AFFINITY" | "MIG" => HostCol::Other(u),
            _ => match shared.threshold_index(c) {
                Some(i) => HostCol::Threshold(i),
                None => {
                    ctx.warn(
                        table.line,
                        format!("unknown column `{c}` in section {} ignored", section.name),
                    );
                    HostCol::Ignored
                }
            },
        });
    }
    if table.col("HOST_NAME").is_none() {
        ctx.err(
            table.line,
            "section Host: required column HOST_NAME is missing",
        );
        return Vec::new();
    }
    let mut out: Vec<BatchHost> = Vec::new();
    for row in &table.rows {
        let mut h = BatchHost {
            name: String::new(),
            mxj: None,
            jl_u: None,
            thresholds: BTreeMap::new(),
            dispatch_window: None,
            other: BTreeMap::new(),
            line: row.line,
        };
        for (col, field) in cols.iter().zip(&row.fields) {
            let Some(v) = field.as_deref() else {
                continue;
            };
            match col {
                HostCol::Name => h.name = v.to_owned(),
                HostCol::Mxj => {
                    if v == "!" {
                        h.mxj = Some(Mxj::Ncpus);
                    } else if let Some(n) = ctx.parse(row.line, "MXJ", v, "a slot count or `!`") {
                        h.mxj = Some(Mxj::Slots(n));
                    }
                }
                HostCol::JlU => h.jl_u = ctx.uint(row.line, "JL/U", v),
                HostCol::Window => h.dispatch_window = window(ctx, row.line, "DISPATCH_WINDOW", v),
                HostCol::Threshold(i) => match Threshold::parse(v) {
                    Ok(t) => {
                        h.thresholds.insert(i.clone(), t);
                    }
                    Err(e) => ctx.err(row.line, format!("{i}: {e}")),
                },
                HostCol::Other(k) => {
                    // MIG: minutes (automatic migration); `()` is none.
                    if k == "MIG" && v != "()" && ctx.uint(row.line, "MIG", v).is_none() {
                        continue;
                    }
                    h.other.insert(k.clone(), v.to_owned());
                }
                HostCol::Ignored => {}
            }
        }
        if h.name.is_empty() {
            ctx.err(row.line, "missing HOST_NAME");
            continue;
        }
        if let Some(first) = out.iter().find(|x| x.name == h.name) {
            ctx.err(
                row.line,
                format!("duplicate host `{}` (first at line {})", h.name, first.line),
            );
            continue;
        }
        out.push(h);
    }
    out
}

/// HostGroup/UserGroup rows. `known` lists the accepted columns.
pub(super) fn groups(
    ctx: &mut Ctx<'_>,
    section: &Section,
    table: &Table,
    known: &[&str],
    out: &mut Vec<Group>,
) {
    if !check_columns(ctx, section, table, known, &["GROUP_NAME", "GROUP_MEMBER"]) {
        return;
    }
    let (n, m, s, a) = (
        table.col("GROUP_NAME"),
        table.col("GROUP_MEMBER"),
        table.col("USER_SHARES"),
        table.col("GROUP_ADMIN"),
    );
    for row in &table.rows {
        let Some(name) = row.get(n) else {
            ctx.err(row.line, "missing GROUP_NAME");
            continue;
        };
        if let Some(first) = out.iter().find(|g| g.name == name) {
            ctx.err(
                row.line,
                format!("duplicate group `{name}` (first at line {})", first.line),
            );
            continue;
        }
        out.push(Group {
            name: name.to_owned(),
            members: row.get(m).map(list).unwrap_or_default(),
            shares: row.get(s).map(str::to_owned),
            admins: row.get(a).map(list).unwrap_or_default(),
            line: row.line,
        });
    }
}

/// A `HostPartition` section of lsb.hosts: host-partition fairshare (seed 001 "Fairshare
/// in Host Partitions").
#[derive(Debug, Clone, PartialEq)]
pub struct HostPartition {
    pub name: String,
    /// HOSTS tokens (`all`, hosts, host groups, `~x`).
    pub hosts: Vec<String>,
    pub user_shares: Vec<super::ShareEntry>,
    pub line: usize,
}

fn host_partition(ctx: &mut Ctx<'_>, section: &Section) -> Option<HostPartition> {
    let mut p = HostPartition {
        name: String::new(),
        hosts: Vec::new(),
        user_shares: Vec::new(),
        line: section.line,
    };
    for e in lexer::vertical(ctx, section) {
        match e.upper().as_str() {
            "HPART_NAME" => p.name = e.value.trim().to_owned(),
            "HOSTS" => p.hosts = super::list(&e.value),
            "USER_SHARES" => match super::parse_share_list(&e.value) {
                Ok(l) => p.user_shares = l,
                Err(err) => ctx.err(e.line, format!("USER_SHARES: {err}")),
            },
            _ => ctx.warn(
                e.line,
                format!("unknown keyword {} in a HostPartition section", e.key),
            ),
        }
    }
    if p.name.is_empty() {
        ctx.err(section.line, "HostPartition section without HPART_NAME");
        return None;
    }
    if p.hosts.is_empty() {
        ctx.err(section.line, format!("host partition {}: no HOSTS", p.name));
        return None;
    }
    if p.user_shares.is_empty() {
        ctx.err(
            section.line,
            format!("host partition {}: no USER_SHARES", p.name),
        );
        return None;
    }
    Some(p)
}

pub(super) fn parse_hosts(ctx: &mut Ctx<'_>, text: &str, shared: &Shared, batch: &mut Batch) {
    for section in lexer::parse_sections(ctx, text) {
        let name = section.name.to_ascii_lowercase();
        match name.as_str() {
            "host" | "hostgroup" => {}
            "hostpartition" => {
                if let Some(p) = host_partition(ctx, &section) {
                    if let Some(first) = batch.host_partitions.iter().find(|x| x.name == p.name) {
                        ctx.err(
                            p.line,
                            format!(
                                "duplicate HPART_NAME `{}` (first at line {})",
                                p.name, first.line
                            ),
                        );
                    } else {
                        batch.host_partitions.push(p);
                    }
                }
                continue;
            }
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
        if name == "host" {
            let hosts = batch_hosts(ctx, &section, &table, shared);
            batch.hosts.extend(hosts);
            not_applied::check_columns(ctx, LSB_HOSTS, "Host", &table);
        } else {
            groups(
                ctx,
                &section,
                &table,
                &["GROUP_NAME", "GROUP_MEMBER", "CONDENSE", "GROUP_ADMIN"],
                &mut batch.host_groups,
            );
            not_applied::check_columns(ctx, LSB_HOSTS, "HostGroup", &table);
        }
    }
}

/// Warn about HostGroup members that are neither cluster hosts, groups nor special tokens.
pub(super) fn check_host_groups(ctx: &mut Ctx<'_>, batch: &Batch, cluster: &ClusterFile) {
    for g in &batch.host_groups {
        for m in &g.members {
            let name = m.trim_end_matches('/');
            let special =
                name == "all" || name == "!" || name.starts_with('~') || name.contains(['*', '[']);
            let known = special
                || cluster.host(name).is_some()
                || batch.host_groups.iter().any(|x| x.name == name);
            if !known {
                ctx.warn(
                    g.line,
                    format!(
                        "host group `{}`: member `{m}` is not a host of the cluster or a host group",
                        g.name
                    ),
                );
            }
        }
    }
}

/// Warn about lsb.hosts rows whose settings mbatchd does not apply: it takes MXJ, JL/U,
/// DISPATCH_WINDOW and the loadSched thresholds only from the row naming a host of the
/// cluster, else from `default`; sbatchd also honours the loadStop thresholds of a row
/// naming the host's model or type. A row naming anything else (a host group, a host
/// outside the cluster) has no effect at all.
pub(super) fn check_host_rows(
    ctx: &mut Ctx<'_>,
    batch: &Batch,
    cluster: &ClusterFile,
    shared: &Shared,
) {
    let Some(entry) = not_applied::custom(LSB_HOSTS, "Host", "HOST_NAME") else {
        return;
    };
    for h in &batch.hosts {
        if h.name == "default" || cluster.host(&h.name).is_some() {
            continue;
        }
        let sched = h.thresholds.values().any(|t| t.sched.is_some());
        let stop = h.thresholds.values().any(|t| t.stop.is_some());
        let for_mbatchd =
            h.mxj.is_some() || h.jl_u.is_some() || h.dispatch_window.is_some() || sched;
        let what = if shared.host_model(&h.name).is_some() {
            Some("a host model")
        } else if shared.has_host_type(&h.name) {
            Some("a host type")
        } else {
            None
        };
        match what {
            Some(what) if for_mbatchd => ctx.not_applied(
                h.line,
                entry.message(
                    &format!("HOST_NAME `{}` ({what})", h.name),
                    stop.then_some("only its loadStop thresholds apply (sbatchd)"),
                ),
            ),
            None if for_mbatchd || stop => ctx.not_applied(
                h.line,
                entry.message(
                    &format!(
                        "HOST_NAME `{}` (not a host of the cluster, a host model or a host type)",
                        h.name
                    ),
                    None,
                ),
            ),
            _ => {}
        }
    }
}
