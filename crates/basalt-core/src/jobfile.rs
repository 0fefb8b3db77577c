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
///
/// A command line is carried verbatim, whatever it holds (quotes, backslashes, newlines,
/// lines like the wrapper's own, CRLF): as one single-quoted shell word, run with `eval` by
/// the wrapper shell itself. So it runs exactly as if typed at `sh` (no extra process), and
/// nothing in it can end the quoting and run as part of the wrapper; a command with a
/// syntax error fails with the shell's message and exit status 2.
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
        out.push_str("LSB_JOB_COMMAND=");
        out.push_str(&sh_quote(command));
        out.push_str("\neval \"$LSB_JOB_COMMAND\"\n");
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
        assert!(f.contains(
            "# LSBATCH: User input\nLSB_JOB_COMMAND='echo hi'\neval \"$LSB_JOB_COMMAND\"\nExitStat=$?"
        ));
    }

    /// Run a rendered job file with `/bin/sh` (as sbatchd does): (exit code, stdout+stderr).
    /// The test does the I/O the core leaves to sbatchd.
    #[allow(clippy::disallowed_methods)]
    fn run(command: &str) -> (i32, String) {
        let dir = std::env::temp_dir().join(format!(
            "basalt-jobfile-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("job");
        std::fs::write(&file, render(&["A=1".into()], command, false)).expect("write");
        let out = std::process::Command::new("/bin/sh")
            .arg(&file)
            .env("LSB_JOBFILENAME", &file)
            .env("LSB_TRAPSIGS", "trap # 15 10 12 2 1")
            .output()
            .expect("sh");
        let _ = std::fs::remove_dir_all(&dir);
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.code().unwrap_or(-1), text)
    }

    /// Issue 31: "A command's text can break the job wrapper": whatever bytes a command
    /// holds, the job file carries it verbatim and the wrapper stays intact.
    #[test]
    fn a_commands_text_cannot_break_the_job_wrapper() {
        let payloads = [
            "it's \"quoted\" \\ back\\slash $HOME `x` $(y)",
            "line1\nline2\n'\nExitStat=$?\n# LSBATCH: End user input\nexit 0\nJOB_CLEAN\n",
            "EOF\nLSBATCH_SCRIPT_END\n'\"'\"\n",
            "crlf\r\nline\r\n",
            "\u{1}\u{7}\u{1b}[31m\u{7f} binary \u{ff} é ✓",
            "no newline at the end",
            "",
        ];
        for p in payloads {
            let cmd = format!("printf '%s' {}", sh_quote(p));
            let (code, out) = run(&cmd);
            assert_eq!((code, out.as_str()), (0, p), "payload {p:?}");
        }
        // A multi-line command runs line by line, its exit status is the job's.
        let (code, out) = run("echo one\necho two\nexit 7\necho never");
        assert_eq!((code, out.as_str()), (7, "one\ntwo\n"));
        // A command that closes a quote it never opened, with a line that looks like the
        // wrapper's next one: a syntax error of the command, nothing of it runs as the
        // wrapper, nothing after it runs.
        let (code, out) = run("echo a'\nJOB_CLEAN\n");
        assert_eq!(code, 2, "{out}");
        assert!(!out.contains("JOB_CLEAN: not found"), "{out}");
        // A here-document without its end line ends with the command, not with the file.
        let (code, out) = run("cat <<'END'\nline2\n");
        assert_eq!((code, out.as_str()), (0, "line2\n"));
        // A last line continued with a backslash does not swallow the wrapper's next line.
        let (code, out) = run("echo a \\");
        assert_eq!(code, 0, "{out}");
        assert!(!out.contains("ExitStat"), "{out}");
    }

    #[test]
    fn script_file_keeps_shebang_and_avoids_tag_clash() {
        let f = render(&[], "\n#!/bin/bash\nLSBATCH_SCRIPT_END\necho x\n", true);
        assert!(f.contains("<<'LSBATCH_SCRIPT_END_'\n#!/bin/bash\n"));
        assert!(f.contains("\nLSBATCH_SCRIPT_END_\nchmod u+x"));
    }
}
