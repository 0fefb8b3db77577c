//! lsb.resources: the Limit sections.

use std::collections::BTreeMap;

use crate::error::Ctx;
use crate::lexer::{self, Entry};
use crate::not_applied;
use crate::timewindow::TimeWindow;

use super::{list, window};

/// Limit keywords besides those typed in [`Limit`]; kept raw in [`Limit::other`].
pub const OTHER_LIMIT_KEYS: &[&str] = &[
    "MEM",
    "SWP",
    "TMP",
    "RESOURCE",
    "SLOTS_PER_PROCESSOR",
    "APPS",
    "PER_APP",
    "LIC_PROJECTS",
    "PER_LIC_PROJECT",
    "JOBS_PER_SCHED_CYCLE",
];

/// A Limit section of lsb.resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub name: String,
    pub users: Vec<String>,
    pub per_user: Vec<String>,
    pub queues: Vec<String>,
    pub per_queue: Vec<String>,
    pub hosts: Vec<String>,
    pub per_host: Vec<String>,
    pub projects: Vec<String>,
    pub per_project: Vec<String>,
    /// SLOTS.
    pub slots: Option<u32>,
    /// The time window of `SLOTS = n window` (None = always).
    pub slots_window: Option<TimeWindow>,
    /// JOBS.
    pub jobs: Option<u32>,
    /// Other keywords, raw, upper-case keys.
    pub other: BTreeMap<String, String>,
    /// Line of the `Begin Limit` (vertical) or of the row (horizontal).
    pub line: usize,
}

pub(super) fn limit_from(ctx: &mut Ctx<'_>, entries: &[Entry], line: usize) -> Option<Limit> {
    let mut l = Limit {
        name: String::new(),
        users: Vec::new(),
        per_user: Vec::new(),
        queues: Vec::new(),
        per_queue: Vec::new(),
        hosts: Vec::new(),
        per_host: Vec::new(),
        projects: Vec::new(),
        per_project: Vec::new(),
        slots: None,
        slots_window: None,
        jobs: None,
        other: BTreeMap::new(),
        line,
    };
    for e in entries {
        let key = e.upper();
        let Some(v) = lexer::field_value(&e.value) else {
            continue;
        };
        let v = v.as_str();
        match key.as_str() {
            "NAME" => l.name = v.to_owned(),
            "USERS" => l.users = list(v),
            "PER_USER" => l.per_user = list(v),
            "QUEUES" => l.queues = list(v),
            "PER_QUEUE" => l.per_queue = list(v),
            "HOSTS" => l.hosts = list(v),
            "PER_HOST" => l.per_host = list(v),
            "PROJECTS" => l.projects = list(v),
            "PER_PROJECT" => l.per_project = list(v),
            "SLOTS" => {
                let (n, w) = v.split_once(char::is_whitespace).unwrap_or((v, ""));
                l.slots = ctx.uint(e.line, "SLOTS", n);
                if !w.trim().is_empty() {
                    l.slots_window = window(ctx, e.line, "SLOTS", w);
                }
            }
            "JOBS" => l.jobs = ctx.uint(e.line, "JOBS", v),
            k => {
                if !OTHER_LIMIT_KEYS.contains(&k) {
                    ctx.warn(e.line, format!("unknown keyword {} in Limit", e.key));
                }
                // SLOTS and JOBS are enforced; the other resources are read only.
                not_applied::check_entry(ctx, not_applied::LSB_RESOURCES, "Limit", k, v, e.line);
                l.other.insert(key.clone(), v.to_owned());
            }
        }
    }
    if l.name.is_empty() {
        ctx.err(line, "Limit without NAME");
        return None;
    }
    Some(l)
}

pub(super) fn parse_resources(ctx: &mut Ctx<'_>, text: &str, out: &mut Vec<Limit>) {
    for section in lexer::parse_sections(ctx, text) {
        if !section.is("Limit") {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        let mut found = Vec::new();
        if section.looks_vertical() {
            let entries = lexer::vertical(ctx, &section);
            found.extend(limit_from(ctx, &entries, section.line));
        } else if let Some(table) = lexer::horizontal(ctx, &section) {
            for row in &table.rows {
                let entries: Vec<Entry> = table
                    .columns
                    .iter()
                    .zip(&row.fields)
                    .filter_map(|(c, f)| {
                        f.as_ref().map(|v| Entry {
                            key: c.clone(),
                            value: v.clone(),
                            line: row.line,
                        })
                    })
                    .collect();
                found.extend(limit_from(ctx, &entries, row.line));
            }
        }
        for l in found {
            if let Some(first) = out.iter().find(|x| x.name == l.name) {
                ctx.err(
                    l.line,
                    format!(
                        "duplicate Limit NAME `{}` (first at line {})",
                        l.name, first.line
                    ),
                );
            } else {
                out.push(l);
            }
        }
    }
}
