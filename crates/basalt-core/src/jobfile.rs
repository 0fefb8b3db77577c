//! The spooled job file (event-log.md §9): a `/bin/sh` wrapper that restores the
//! submission environment and then runs the user's command or script.
//!
//! mbatchd renders it at submit time and spools it in `logdir/info/<submitTime>.<jobId>`;
//! sbatchd copies it to the execution host and runs it with `/bin/sh` after setting
//! the `LSB_*` variables, which the file never overrides.

/// Variables of the submission environment the job file does not restore: the job's own
/// `LSB_*`/`LS_*` variables are set by sbatchd, the rest belong to the submitting shell.
fn skipped(name: &str) -> bool {
    (name.starts_with("LSB_") && name != "LSB_DEFAULTQUEUE")
        || matches!(
            name,
            "LS_JOBPID" | "LS_EXEC_T" | "LS_SUBCWD" | "PWD" | "OLDPWD" | "SHLVL" | "_"
        )
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Quote a value for `sh` with single quotes.
pub fn sh_quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "'\\''"))
}

/// A script's text as it is run: leading blank lines (before the `#!`) removed.
pub fn script_text(script: &str) -> &str {
    let mut s = script;
    loop {
        let trimmed = s.trim_start_matches([' ', '\t', '\r']);
        if let Some(rest) = trimmed.strip_prefix('\n') {
            s = rest;
        } else {
            return s;
        }
    }
}

/// Render the job file. `env` is `KEY=VALUE` strings; `command` is the command line, or the
/// script text when `is_script` (then it is written next to the job file as
/// `$LSB_JOBFILENAME.shell` and executed, so its own `#!` interpreter runs it).
pub fn render(env: &[String], command: &str, is_script: bool) -> String {
    let mut out = String::from("#! /bin/sh\n\n");
    for kv in env {
        let Some((k, v)) = kv.split_once('=') else {
            continue;
        };
        if !valid_name(k) || skipped(k) {
            continue;
        }
        out.push_str(&format!("{k}={}; export {k}\n", sh_quote(v)));
    }
    out.push_str("$LSB_TRAPSIGS\n");
    if is_script {
        let text = script_text(command);
        let mut tag = String::from("LSBATCH_SCRIPT_END");
        while text.lines().any(|l| l == tag) {
            tag.push('_');
        }
        out.push_str("LSB_SCRIPT_FILE=\"${LSB_JOBFILENAME}.shell\"\n");
        out.push_str(&format!("cat > \"$LSB_SCRIPT_FILE\" <<'{tag}'\n"));
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{tag}\n"));
        out.push_str("chmod u+x \"$LSB_SCRIPT_FILE\"\n");
        out.push_str("# LSBATCH: User input\n");
        out.push_str("\"$LSB_SCRIPT_FILE\"\n");
    } else {
        out.push_str("# LSBATCH: User input\n");
        out.push_str(command);
        out.push('\n');
    }
    out.push_str("ExitStat=$?\n# LSBATCH: End user input\nexit $ExitStat\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_file() {
        let f = render(
            &[
                "HOME=/home/a".into(),
                "Q=it's".into(),
                "LSB_JOBID=5".into(),
                "BASH_FUNC_x%%=() {}".into(),
            ],
            "echo hi",
            false,
        );
        assert!(f.starts_with("#! /bin/sh\n"));
        assert!(f.contains("HOME='/home/a'; export HOME\n"));
        assert!(f.contains("Q='it'\\''s'; export Q\n"));
        assert!(!f.contains("LSB_JOBID"));
        assert!(!f.contains("BASH_FUNC"));
        assert!(f.contains("# LSBATCH: User input\necho hi\nExitStat=$?"));
    }

    #[test]
    fn script_file_keeps_shebang_and_avoids_tag_clash() {
        let f = render(&[], "\n#!/bin/bash\nLSBATCH_SCRIPT_END\necho x\n", true);
        assert!(f.contains("<<'LSBATCH_SCRIPT_END_'\n#!/bin/bash\n"));
        assert!(f.contains("\nLSBATCH_SCRIPT_END_\nchmod u+x"));
    }
}
