//! The default and `-w` tables: one row per job with the time spent in each state.

use super::*;

/// `%-W.Ws`: cut to `w` characters, padded to `w`.
pub(super) fn cut(s: &str, w: usize) -> String {
    let t: String = s.chars().take(w).collect();
    format!("{t:<w$}")
}

pub(super) fn numbers(t: &StateTimes, w: usize, last: usize) -> String {
    format!(
        "{:<w$}{:<w$}{:<w$}{:<w$}{:<w$}{:<w$}{:<last$}",
        t.pend,
        t.psusp,
        t.run,
        t.ususp,
        t.ssusp,
        t.unkwn,
        t.total()
    )
}

/// The job id, user and name a job shows.
pub(super) fn identity(j: &JobHistory) -> (String, String, String) {
    (
        super::super::job_id_text(j.job_id, j.idx),
        j.sub.user_name.clone(),
        super::super::shown_name(&j.sub.job_name, &j.sub.command, j.idx),
    )
}

/// One row of the default (`wide = false`) or `-w` table, with its newline.
pub fn row(j: &JobHistory, wide: bool, fx: &Fx) -> String {
    let (id, user, name) = identity(j);
    let (t, _) = j.state_times(fx.now);
    if wide {
        format!("{id:<7} {user:<7} {name:<9} {}\n", numbers(&t, 8, 10))
    } else {
        format!(
            "{} {} {} {}\n",
            cut(&id, 7),
            cut(&user, 7),
            cut(&star_cut(&name, 8), 9),
            numbers(&t, 8, 10)
        )
    }
}

/// The default (or `-w`) report: the summary table and a closing blank line.
pub fn table(jobs: &[JobHistory], wide: bool, fx: &Fx) -> String {
    let mut out = String::from("Summary of time in seconds spent in various states:\n");
    out.push_str(TABLE_HEADER);
    out.push('\n');
    for j in jobs {
        out.push_str(&row(j, wide, fx));
    }
    out.push('\n');
    out
}
