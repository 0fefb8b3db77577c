//! lsb.applications: the Application profiles.

use std::collections::BTreeMap;

use crate::error::Ctx;
use crate::lexer;
use crate::not_applied::{self, LSB_APPLICATIONS};

/// Application-profile keywords accepted without a warning.
pub const APPLICATION_KEYS: &[&str] = &[
    "NAME",
    "DESCRIPTION",
    "ABS_RUNLIMIT",
    "BIND_JOB",
    "CHKPNT_DIR",
    "CHKPNT_INITPERIOD",
    "CHKPNT_PERIOD",
    "CHKPNT_METHOD",
    "CORELIMIT",
    "CPULIMIT",
    "DATALIMIT",
    "ENV_VARS",
    "FILELIMIT",
    "JOB_CWD",
    "JOB_INCLUDE_POSTPROC",
    "JOB_POSTPROC_TIMEOUT",
    "JOB_STARTER",
    "LOCAL_MAX_PREEXEC_RETRY",
    "MAX_JOB_PREEMPT",
    "MAX_JOB_REQUEUE",
    "MAX_PREEXEC_RETRY",
    "MEMLIMIT",
    "MEMLIMIT_TYPE",
    "MIG",
    "NICE",
    "NO_PREEMPT_FINISH_TIME",
    "NO_PREEMPT_RUN_TIME",
    "POST_EXEC",
    "PRE_EXEC",
    "PROCESSLIMIT",
    "PROCLIMIT",
    "REQUEUE_EXIT_VALUES",
    "RERUNNABLE",
    "RES_REQ",
    "RESUME_CONTROL",
    "RUNLIMIT",
    "RUNTIME",
    "STACKLIMIT",
    "SUCCESS_EXIT_VALUES",
    "SUSPEND_CONTROL",
    "SWAPLIMIT",
    "TASKLIMIT",
    "TERMINATE_CONTROL",
    "THREADLIMIT",
];

/// An Application section of lsb.applications.
#[derive(Debug, Clone, PartialEq)]
pub struct Application {
    pub name: String,
    pub description: String,
    /// Every other keyword, raw, upper-case keys.
    pub other: BTreeMap<String, String>,
    pub line: usize,
}

pub(super) fn parse_applications(ctx: &mut Ctx<'_>, text: &str, out: &mut Vec<Application>) {
    for section in lexer::parse_sections(ctx, text) {
        if !section.is("Application") {
            ctx.warn(
                section.line,
                format!("unknown section {} ignored", section.name),
            );
            continue;
        }
        let mut app = Application {
            name: String::new(),
            description: String::new(),
            other: BTreeMap::new(),
            line: section.line,
        };
        for e in lexer::vertical(ctx, &section) {
            let key = e.upper();
            match key.as_str() {
                "NAME" => app.name = e.value.clone(),
                "DESCRIPTION" => app.description = e.value.clone(),
                k => {
                    if APPLICATION_KEYS.contains(&k) {
                        not_applied::check_entry(
                            ctx,
                            LSB_APPLICATIONS,
                            "Application",
                            &e.key,
                            &e.value,
                            e.line,
                        );
                    } else {
                        ctx.warn(
                            e.line,
                            format!("unknown keyword {} in lsb.applications", e.key),
                        );
                    }
                    if matches!(k, "NO_PREEMPT_RUN_TIME" | "NO_PREEMPT_FINISH_TIME")
                        && let Err(err) = super::NoPreemptTime::parse(&e.value)
                    {
                        ctx.err(e.line, format!("{k}: {err}"));
                        continue;
                    }
                    if k == "MAX_JOB_PREEMPT" && ctx.uint(e.line, k, &e.value).is_none() {
                        continue;
                    }
                    if !e.value.trim().is_empty()
                        && let Err(err) = super::rlimits::check(k, &e.value)
                    {
                        ctx.err(e.line, err);
                        continue;
                    }
                    if matches!(k, "JOB_INCLUDE_POSTPROC" | "JOB_POSTPROC_TIMEOUT") {
                        if super::postproc_setting(ctx, e.line, k, &e.value) {
                            app.other
                                .insert(key.clone(), e.value.trim().to_ascii_uppercase());
                        }
                    } else if !e.value.is_empty() {
                        app.other.insert(key.clone(), e.value.clone());
                    }
                }
            }
        }
        if app.name.is_empty() {
            ctx.err(section.line, "Application section without NAME");
        } else if let Some(first) = out.iter().find(|a| a.name == app.name) {
            ctx.err(
                app.line,
                format!(
                    "duplicate application `{}` (first at line {})",
                    app.name, first.line
                ),
            );
        } else {
            out.push(app);
        }
    }
}
