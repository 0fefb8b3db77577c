//! lsb.users: the User and UserGroup sections.

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

pub(super) fn parse_users(ctx: &mut Ctx<'_>, text: &str, batch: &mut Batch) {
    for section in lexer::parse_sections(ctx, text) {
        let name = section.name.to_ascii_lowercase();
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
