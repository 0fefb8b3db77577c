//! lsb.users: the User, UserGroup and UserMap sections.
//!
//! `UserMap` is LSF's system-level MultiCluster user account mapping (columns `LOCAL`,
//! `REMOTE`, `DIRECTION`): `import` rows name the local user that jobs of the remote
//! users (`user@cluster`) received from those clusters run as; `export` rows name the
//! remote user that the local users' jobs run as when they are sent to a cluster. A list
//! is written in parentheses. Names are users (user groups are refused by name).

use std::collections::BTreeMap;

use crate::error::Ctx;
use crate::lexer::{self, Section, Table};
use crate::not_applied::{self, LSB_USERS};
use crate::shared::check_columns;

use super::Batch;
use super::hosts::groups;

/// A User row of lsb.users.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchUser {
    /// A user, a group, `group@` (each member) or `default`.
    pub name: String,
    pub max_jobs: Option<u32>,
    /// JL/P.
    pub jl_p: Option<f64>,
    /// Other known columns (MAX_PEND_JOBS, MAX_PEND_SLOTS, PRIORITY), raw.
    pub other: BTreeMap<String, String>,
    pub line: usize,
}

pub(super) fn batch_users(
    ctx: &mut Ctx<'_>,
    section: &Section,
    table: &Table,
    out: &mut Vec<BatchUser>,
) {
    const OTHER: &[&str] = &["MAX_PEND_JOBS", "MAX_PEND_SLOTS", "PRIORITY"];
    let mut known = vec!["USER_NAME", "MAX_JOBS", "JL/P"];
    known.extend_from_slice(OTHER);
    if !check_columns(ctx, section, table, &known, &["USER_NAME"]) {
        return;
    }
    let (n, mj, jp) = (
        table.col("USER_NAME"),
        table.col("MAX_JOBS"),
        table.col("JL/P"),
    );
    for row in &table.rows {
        let Some(name) = row.get(n) else {
            ctx.err(row.line, "missing USER_NAME");
            continue;
        };
        if let Some(first) = out.iter().find(|u| u.name == name) {
            ctx.err(
                row.line,
                format!("duplicate user `{name}` (first at line {})", first.line),
            );
            continue;
        }
        let mut u = BatchUser {
            name: name.to_owned(),
            max_jobs: row.get(mj).and_then(|v| ctx.uint(row.line, "MAX_JOBS", v)),
            jl_p: None,
            other: BTreeMap::new(),
            line: row.line,
        };
        if let Some(v) = row.get(jp) {
            match ctx.float(row.line, "JL/P", v) {
                Some(x) if x < 0.0 => ctx.err(row.line, "JL/P must not be negative"),
                x => u.jl_p = x,
            }
        }
        for o in OTHER {
            if let Some(v) = row.get(table.col(o)) {
                u.other.insert((*o).to_owned(), v.to_owned());
            }
        }
        out.push(u);
    }
}

/// Which way a UserMap row maps (its `DIRECTION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapDirection {
    /// Jobs of the remote users received from their clusters run as the local users.
    Import,
    /// Jobs of the local users sent to the remote users' clusters run there as the
    /// remote users.
    Export,
}

/// A user of another cluster: `user@cluster`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUser {
    pub user: String,
    pub cluster: String,
}

/// One row of the UserMap section of lsb.users.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserMapRow {
    /// Local users, in the order written.
    pub local: Vec<String>,
    /// Remote users, in the order written.
    pub remote: Vec<RemoteUser>,
    pub direction: MapDirection,
    pub line: usize,
}

/// The UserMap section of lsb.users: MultiCluster user account mapping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserMap {
    /// The rows in file order.
    pub rows: Vec<UserMapRow>,
}

impl UserMap {
    /// The local users the import rows give for jobs of `remote_user` received from
    /// `cluster`, in file order (none: no import mapping for that user).
    pub fn import(&self, cluster: &str, remote_user: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for row in self.rows.iter().filter(|r| {
            r.direction == MapDirection::Import
                && r.remote
                    .iter()
                    .any(|u| u.user == remote_user && u.cluster == cluster)
        }) {
            for l in &row.local {
                if !out.contains(&l.as_str()) {
                    out.push(l);
                }
            }
        }
        out
    }

    /// The remote user the export rows give for jobs of `local_user` sent to `cluster`:
    /// the first of that cluster's users in the first export row naming `local_user`
    /// and that cluster (None: no export mapping).
    pub fn export(&self, local_user: &str, cluster: &str) -> Option<&str> {
        self.rows
            .iter()
            .filter(|r| {
                r.direction == MapDirection::Export && r.local.iter().any(|l| l == local_user)
            })
            .find_map(|r| r.remote.iter().find(|u| u.cluster == cluster))
            .map(|u| u.user.as_str())
    }
}

/// A UserMap list: one name, or names in parentheses (the lexer has taken the
/// parentheses off).
fn map_names(v: &str) -> Vec<&str> {
    v.split_whitespace().collect()
}

pub(super) fn user_map(ctx: &mut Ctx<'_>, section: &Section, table: &Table, out: &mut UserMap) {
    const COLUMNS: &[&str] = &["LOCAL", "REMOTE", "DIRECTION"];
    if !check_columns(ctx, section, table, COLUMNS, COLUMNS) {
        return;
    }
    let (lc, rc, dc) = (
        table.col("LOCAL"),
        table.col("REMOTE"),
        table.col("DIRECTION"),
    );
    for row in &table.rows {
        let (Some(local), Some(remote), Some(direction)) = (row.get(lc), row.get(rc), row.get(dc))
        else {
            let missing: Vec<&str> = [("LOCAL", lc), ("REMOTE", rc), ("DIRECTION", dc)]
                .iter()
                .filter(|(_, c)| row.get(*c).is_none())
                .map(|(n, _)| *n)
                .collect();
            ctx.err(
                row.line,
                format!(
                    "UserMap: missing {} (LOCAL REMOTE DIRECTION)",
                    missing.join(", ")
                ),
            );
            continue;
        };
        let direction = match direction.to_ascii_lowercase().as_str() {
            "import" => MapDirection::Import,
            "export" => MapDirection::Export,
            _ => {
                ctx.err(
                    row.line,
                    format!("UserMap: DIRECTION must be import or export, found `{direction}`"),
                );
                continue;
            }
        };
        let mut ok = true;
        let mut locals = Vec::new();
        for l in map_names(local) {
            if l.contains('@') {
                ctx.err(
                    row.line,
                    format!("UserMap: LOCAL `{l}`: a local user is a user name, without @cluster"),
                );
                ok = false;
            } else {
                locals.push(l.to_owned());
            }
        }
        let mut remotes = Vec::new();
        for r in map_names(remote) {
            match r.split_once('@') {
                Some((u, c)) if !u.is_empty() && !c.is_empty() && !c.contains('@') => {
                    remotes.push(RemoteUser {
                        user: u.to_owned(),
                        cluster: c.to_owned(),
                    });
                }
                _ => {
                    ctx.err(
                        row.line,
                        format!("UserMap: REMOTE `{r}`: expected user@cluster"),
                    );
                    ok = false;
                }
            }
        }
        if ok {
            out.rows.push(UserMapRow {
                local: locals,
                remote: remotes,
                direction,
                line: row.line,
            });
        }
    }
}

/// UserMap rows that cannot take effect: a user group where a user is meant (Basalt maps
/// users only), a remote user of this cluster or of a cluster that is not a remote one
/// (a warning: the entry never applies), an export mapping that an earlier row already
/// gives for the same local user and cluster (a warning: the earlier one is used).
pub(super) fn check_user_map(
    ctx: &mut Ctx<'_>,
    batch: &Batch,
    shared: &crate::shared::Shared,
    cluster: &crate::cluster::ClusterFile,
) {
    let mut exported: Vec<(&str, &str, usize)> = Vec::new();
    for row in &batch.user_map.rows {
        for l in &row.local {
            if batch.user_groups.iter().any(|g| g.name == *l) {
                ctx.err(
                    row.line,
                    format!(
                        "UserMap: LOCAL `{l}` is a user group of lsb.users; UserMap maps users only: name them"
                    ),
                );
            }
        }
        for r in &row.remote {
            let why = if r.cluster == cluster.name {
                Err(format!("`{}` is this cluster", r.cluster))
            } else {
                super::multicluster::known_remote(shared, cluster, &r.cluster)
            };
            if let Err(why) = why {
                ctx.warn(
                    row.line,
                    format!(
                        "UserMap: REMOTE {}@{}: {why}; this mapping never applies",
                        r.user, r.cluster
                    ),
                );
            }
        }
        if row.direction == MapDirection::Export {
            for l in &row.local {
                let mut clusters: Vec<&str> = Vec::new();
                for r in &row.remote {
                    if !clusters.contains(&r.cluster.as_str()) {
                        clusters.push(&r.cluster);
                    }
                }
                for c in clusters {
                    if let Some((_, _, first)) = exported
                        .iter()
                        .find(|(el, ec, _)| *el == l.as_str() && *ec == c)
                    {
                        ctx.warn(
                            row.line,
                            format!(
                                "UserMap: {l} is already exported to cluster {c} at line {first}; this row's mapping of {l} to {c} is never used"
                            ),
                        );
                    } else {
                        exported.push((l, c, row.line));
                    }
                }
            }
        }
    }
}

pub(super) fn parse_users(ctx: &mut Ctx<'_>, text: &str, batch: &mut Batch) {
    for section in lexer::parse_sections(ctx, text) {
        let name = section.name.to_ascii_lowercase();
        if name == "usermap" {
            if let Some(table) = lexer::horizontal(ctx, &section) {
                user_map(ctx, &section, &table, &mut batch.user_map);
            }
            continue;
        }
        if name != "user" && name != "usergroup" {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        let Some(table) = lexer::horizontal(ctx, &section) else {
            continue;
        };
        if name == "user" {
            batch_users(ctx, &section, &table, &mut batch.users);
            not_applied::check_columns(ctx, LSB_USERS, "User", &table);
        } else {
            groups(
                ctx,
                &section,
                &table,
                &[
                    "GROUP_NAME",
                    "GROUP_MEMBER",
                    "USER_SHARES",
                    "GROUP_ADMIN",
                    "PRIORITY",
                ],
                &mut batch.user_groups,
            );
            not_applied::check_columns(ctx, LSB_USERS, "UserGroup", &table);
        }
    }
}
