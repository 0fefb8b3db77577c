//! lsb.resources: the Limit sections and the ReservationUsage section.

use std::collections::BTreeMap;

use crate::error::Ctx;
use crate::lexer::{self, Entry};
use crate::not_applied;
use crate::timewindow::TimeWindow;

use super::{list, window};
use crate::shared::{ResourceKind, Shared};

/// How a job reserves a resource it asks for with `rusage[]` (ReservationUsage METHOD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReserveMethod {
    /// Once for the whole job.
    PerJob,
    /// Once on each host the job runs on (LSF's default).
    PerHost,
    /// Once per task (job slot).
    PerTask,
}

impl ReserveMethod {
    /// `PER_JOB`, `PER_HOST`, `PER_TASK` (case-insensitive).
    pub fn parse(s: &str) -> Option<ReserveMethod> {
        match s.trim().to_ascii_uppercase().as_str() {
            "PER_JOB" => Some(ReserveMethod::PerJob),
            "PER_HOST" => Some(ReserveMethod::PerHost),
            "PER_TASK" => Some(ReserveMethod::PerTask),
            _ => None,
        }
    }

    /// As written in lsb.resources.
    pub fn name(self) -> &'static str {
        match self {
            ReserveMethod::PerJob => "PER_JOB",
            ReserveMethod::PerHost => "PER_HOST",
            ReserveMethod::PerTask => "PER_TASK",
        }
    }
}

/// A row of the ReservationUsage section: how jobs reserve one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservationUsage {
    pub resource: String,
    pub method: ReserveMethod,
    /// RESERVE: pending jobs reserve the resource while they wait (read, not applied).
    pub reserve: bool,
    pub line: usize,
}

/// The built-in load indices a job may reserve.
const RESERVABLE_BUILTINS: &[&str] = &["mem", "swp", "tmp"];

fn reservation_usage(
    ctx: &mut Ctx<'_>,
    section: &lexer::Section,
    shared: &Shared,
    out: &mut Vec<ReservationUsage>,
) {
    let Some(table) = lexer::horizontal(ctx, section) else {
        return;
    };
    for c in &table.columns {
        if !["RESOURCE", "METHOD", "RESERVE"]
            .iter()
            .any(|k| k.eq_ignore_ascii_case(c))
        {
            ctx.warn(
                table.line,
                format!("unknown column `{c}` in section ReservationUsage ignored"),
            );
        }
    }
    let (Some(rc), Some(mc)) = (table.col("RESOURCE"), table.col("METHOD")) else {
        ctx.err(
            table.line,
            "section ReservationUsage: required columns RESOURCE and METHOD are missing",
        );
        return;
    };
    let vc = table.col("RESERVE");
    for row in &table.rows {
        let field = |i: usize| row.fields.get(i).cloned().flatten().unwrap_or_default();
        let resource = field(rc);
        let known = RESERVABLE_BUILTINS.contains(&resource.as_str())
            || shared
                .resource(&resource)
                .is_some_and(|r| r.kind == ResourceKind::Numeric);
        if !known {
            ctx.err(
                row.line,
                format!(
                    "ReservationUsage: `{resource}` is not a numeric resource of lsf.shared (nor mem, swp, tmp)"
                ),
            );
            continue;
        }
        let Some(method) = ReserveMethod::parse(&field(mc)) else {
            ctx.err(
                row.line,
                format!(
                    "ReservationUsage: METHOD `{}` of `{resource}` is not PER_JOB, PER_HOST or PER_TASK",
                    field(mc)
                ),
            );
            continue;
        };
        let reserve = match vc.map(field).as_deref().map(str::trim) {
            None | Some("") | Some("N") | Some("n") => false,
            Some("Y") | Some("y") => true,
            Some(other) => {
                ctx.err(
                    row.line,
                    format!("ReservationUsage: RESERVE `{other}` of `{resource}` is not Y or N"),
                );
                continue;
            }
        };
        if reserve {
            ctx.not_applied(
                row.line,
                format!(
                    "ReservationUsage: RESERVE=Y of `{resource}`: pending jobs do not reserve resources while they wait (it comes with processor reservation); treated as N"
                ),
            );
        }
        if let Some(first) = out.iter().find(|u| u.resource == resource) {
            ctx.err(
                row.line,
                format!(
                    "ReservationUsage: `{resource}` again (first at line {})",
                    first.line
                ),
            );
            continue;
        }
        out.push(ReservationUsage {
            resource,
            method,
            reserve,
            line: row.line,
        });
    }
}

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

pub(super) fn limit_from(
    ctx: &mut Ctx<'_>,
    entries: &[Entry],
    line: usize,
    known: &super::names::Known<'_>,
) -> Option<Limit> {
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
    // The line of a keyword of this Limit (its section's when not found).
    let line_of = |key: &str| {
        entries
            .iter()
            .find(|e| e.key.eq_ignore_ascii_case(key))
            .map_or(line, |e| e.line)
    };
    // MEM/SWP/TMP as a share of each host's size: counted per host.
    for key in ["MEM", "SWP", "TMP"] {
        if l.per_host.is_empty()
            && l.other.get(key).is_some_and(|v| v.contains('%'))
            && let Some(e) =
                not_applied::lookup(not_applied::LSB_RESOURCES, "Limit", key).find(|e| e.custom)
        {
            ctx.not_applied(line_of(key), e.message(e.label(), None));
        }
    }
    if let Some(v) = l.other.get("SLOTS_PER_PROCESSOR") {
        let at = line_of("SLOTS_PER_PROCESSOR");
        if v.trim()
            .parse::<f64>()
            .ok()
            .is_none_or(|n| !n.is_finite() || n <= 0.0)
        {
            ctx.err(
                at,
                format!("SLOTS_PER_PROCESSOR: expected a positive number, found `{v}`"),
            );
        } else if l.per_host.is_empty() {
            // Counted per host: without PER_HOST there is no host to count it on.
            if let Some(e) =
                not_applied::custom(not_applied::LSB_RESOURCES, "Limit", "SLOTS_PER_PROCESSOR")
            {
                ctx.not_applied(at, e.message(e.label(), None));
            }
        }
    }
    // The queues and hosts it names must exist (the others are dropped; a list left with
    // nothing valid makes the Limit ignored).
    if !super::names::check_limit(ctx, &mut l, known, &line_of) {
        return None;
    }
    Some(l)
}

pub(super) fn parse_resources(
    ctx: &mut Ctx<'_>,
    text: &str,
    shared: &Shared,
    known: &super::names::Known<'_>,
    out: &mut Vec<Limit>,
    usage: &mut Vec<ReservationUsage>,
) {
    for section in lexer::parse_sections(ctx, text) {
        if section.is("ReservationUsage") {
            reservation_usage(ctx, &section, shared, usage);
            continue;
        }
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
            found.extend(limit_from(ctx, &entries, section.line, known));
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
                found.extend(limit_from(ctx, &entries, row.line, known));
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
