//! The spooled job file (event-log.md §9): a `/bin/sh` wrapper that restores the
//! submission environment and then runs the user's command or script.
//!
//! mbatchd renders it at submit time and spools it in `logdir/info/<submitTime>.<jobId>`;
//! sbatchd copies it to the execution host and runs it with `/bin/sh` after setting
//! the `LSB_*` variables, which the file never overrides.

/// Variables of the submission environment the job file does not restore: the job's own
/// `LSB_*`/`LS_*` variables are set by sbatchd, the rest belong to the submitting shell.
/// `LSB_JOB_INCLUDE_POSTPROC` is the user's choice for the job, read by sbatchd from the
/// file ([`exported`]).
fn skipped(name: &str) -> bool {
    (name.starts_with("LSB_") && name != "LSB_DEFAULTQUEUE" && name != "LSB_JOB_INCLUDE_POSTPROC")
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
    out.push_str(TRAPSIGS);
    push_user_input(&mut out, command, is_script);
    out
}

/// The wrapper's line after the exports; the user's input follows it.
const TRAPSIGS: &str = "$LSB_TRAPSIGS\n";

/// The user's command or script, and the wrapper's end.
fn push_user_input(out: &mut String, command: &str, is_script: bool) {
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
    out.push_str(INPUT_END);
}

/// A job file [`render`] wrote, running command line `command` instead of what it was
/// rendered with (`bmod -Z`): the same environment, the new command. None when the file
/// is not one `render` wrote.
pub fn with_command(job_file: &str, command: &str) -> Option<String> {
    let at = job_file.find(&format!("\n{TRAPSIGS}"))? + 1 + TRAPSIGS.len();
    let mut out = job_file[..at].to_owned();
    push_user_input(&mut out, command, false);
    Some(out)
}

/// The end every job file [`render`] or [`with_starter`] writes: after the user's input,
/// its exit status kept, the wrapper's exit.
macro_rules! input_end {
    () => {
        "ExitStat=$?\n# LSBATCH: End user input\nexit $ExitStat\n"
    };
}
const INPUT_END: &str = input_end!();

/// A job file with `bsub -f` transfers (LSF's `XF_OP_*` bits, [`crate::job::xf`]): each
/// `(local, remote, ops)` copying the submission host's `local` (`from_host:local`) to
/// `remote` before the user's input, and `remote` back after it, with `lsrcp` (from
/// `$LSF_BINDIR` when it has one, else `PATH`), appending (`lsrcp -a`) for the append
/// operations. A copy that fails says so on the job's standard error; the job goes on.
/// None when the file is not one [`render`] wrote.
pub fn with_transfers(
    job_file: &str,
    from_host: &str,
    files: &[(String, String, u32)],
) -> Option<String> {
    use crate::job::xf;
    if files.is_empty() {
        return Some(job_file.to_owned());
    }
    let at = job_file.find(&format!("\n{TRAPSIGS}"))? + 1 + TRAPSIGS.len();
    let body = job_file.strip_suffix(INPUT_END)?;
    if body.len() < at {
        return None;
    }
    let copy = |append: bool, from: &str, to: &str| {
        format!(
            "\"$LSB_LSRCP\" {}{} {} || echo \"bsub -f: cannot copy {} to {}\" >&2\n",
            if append { "-a " } else { "" },
            sh_quote(from),
            sh_quote(to),
            from.replace(['"', '$', '`', '\\'], "_"),
            to.replace(['"', '$', '`', '\\'], "_"),
        )
    };
    let mut before = String::from(
        "LSB_LSRCP=\"${LSF_BINDIR:+$LSF_BINDIR/}lsrcp\"; [ -x \"$LSB_LSRCP\" ] || LSB_LSRCP=lsrcp\n",
    );
    let mut after = String::new();
    for (local, remote, ops) in files {
        let there = format!("{from_host}:{local}");
        if ops & (xf::SUB2EXEC | xf::SUB2EXEC_APPEND) != 0 {
            before.push_str(&copy(ops & xf::SUB2EXEC == 0, &there, remote));
        }
        if ops & (xf::EXEC2SUB | xf::EXEC2SUB_APPEND) != 0 {
            after.push_str(&copy(ops & xf::EXEC2SUB == 0, remote, &there));
        }
    }
    Some(format!(
        "{}{before}{}ExitStat=$?\n{after}# LSBATCH: End user input\nexit $ExitStat\n",
        &job_file[..at],
        &body[at..],
    ))
}

/// The value a job file [`render`] wrote exports for `name` (None: it exports none, or
/// the file is not one `render` wrote).
pub fn exported(job_file: &str, name: &str) -> Option<String> {
    let prefix = format!("{name}='");
    let suffix = format!("'; export {name}");
    // The exports come before the wrapper's first own line.
    let head = job_file.split(&format!("\n{TRAPSIGS}")).next()?;
    head.lines()
        .find_map(|l| {
            l.strip_prefix(prefix.as_str())?
                .strip_suffix(suffix.as_str())
        })
        .map(|quoted| quoted.replace("'\\''", "'"))
}

/// The end of a rendered job file running a command line.
const COMMAND_END: &str = concat!("'\neval \"$LSB_JOB_COMMAND\"\n", input_end!());
/// The end of a rendered job file running a script.
const SCRIPT_END: &str = concat!(
    "# LSBATCH: User input\n\"$LSB_SCRIPT_FILE\"\n",
    input_end!()
);
const COMMAND_START: &str = "# LSBATCH: User input\nLSB_JOB_COMMAND='";

/// A queue's `JOB_STARTER` applied to a rendered job file (done by sbatchd when the job
/// starts): the user's command becomes the starter with `%USRCMD` replaced by it (or the
/// starter followed by it when the starter has no `%USRCMD`), run by the wrapper shell as
/// the command was. A script's invocation (`"$LSB_SCRIPT_FILE"`) stands for the command.
/// None when the file is not one [`render`] wrote (it then runs as it is).
pub fn with_starter(job_file: &str, starter: &str) -> Option<String> {
    let starter = starter.trim();
    let wrap = |cmd: &str| {
        if starter.contains("%USRCMD") {
            starter.replace("%USRCMD", cmd)
        } else {
            format!("{starter} {cmd}")
        }
    };
    if let Some(head) = job_file.strip_suffix(SCRIPT_END) {
        return Some(format!(
            "{head}# LSBATCH: User input\n{}\n{INPUT_END}",
            wrap("\"$LSB_SCRIPT_FILE\"")
        ));
    }
    let body = job_file.strip_suffix(COMMAND_END)?;
    let at = body.rfind(COMMAND_START)?;
    let quoted = &body[at + COMMAND_START.len()..];
    let command = quoted.replace("'\\''", "'");
    Some(format!(
        "{}{}{}{}",
        &body[..at],
        "# LSBATCH: User input\nLSB_JOB_COMMAND=",
        sh_quote(&wrap(&command)),
        &COMMAND_END[1..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bsub -f: `>` copies in before the user's input, `<` back after it (the job's exit
    /// status kept), `<<` appends; the copies run with the shell as the job does.
    #[test]
    fn transfers_wrap_the_users_input() {
        use crate::job::xf;
        let f = render(&[], "exit 3", false);
        let files = vec![
            ("/sub/in".to_owned(), "in".to_owned(), xf::SUB2EXEC),
            ("/sub/out".to_owned(), "out".to_owned(), xf::EXEC2SUB_APPEND),
        ];
        let g = with_transfers(&f, "hostA", &files).expect("rendered");
        let copy_in = g.find("'hostA:/sub/in' 'in'").expect("copy in");
        let user = g.find("eval \"$LSB_JOB_COMMAND\"").expect("user input");
        let copy_out = g.find("-a 'out' 'hostA:/sub/out'").expect("copy out");
        assert!(copy_in < user && user < copy_out, "{g}");
        assert!(
            g.ends_with("# LSBATCH: End user input\nexit $ExitStat\n"),
            "{g}"
        );
        let exit_stat = g.find("ExitStat=$?").expect("status");
        assert!(
            exit_stat < copy_out,
            "the job's status is taken before the copy back"
        );
        assert_eq!(
            with_transfers(&f, "hostA", &[]).as_deref(),
            Some(f.as_str())
        );
        assert_eq!(with_transfers("#!/bin/sh\nls\n", "hostA", &files), None);
    }

    /// bmod -Z: the file runs the new command line with the same environment, whether it
    /// ran a command or a script; a file render did not write is left alone (None).
    #[test]
    fn with_command_puts_a_new_command_line_in_place_of_the_old_input() {
        let env = ["Q=it's".to_owned()];
        for (old, is_script) in [("echo old", false), ("#!/bin/sh\necho old\n", true)] {
            let f = render(&env, old, is_script);
            let g = with_command(&f, "echo 'new one'").expect("rendered");
            assert_eq!(g, render(&env, "echo 'new one'", false));
        }
        assert_eq!(with_command("#!/bin/sh\necho mine\n", "x"), None);
    }

    #[test]
    fn the_users_lsb_job_include_postproc_is_exported_and_read_back() {
        let f = render(
            &[
                "LSB_JOB_INCLUDE_POSTPROC=Y".into(),
                "LSB_JOBID=5".into(),
                "Q=it's".into(),
            ],
            "echo LSB_JOB_INCLUDE_POSTPROC='N'; export LSB_JOB_INCLUDE_POSTPROC",
            false,
        );
        assert_eq!(
            exported(&f, "LSB_JOB_INCLUDE_POSTPROC").as_deref(),
            Some("Y")
        );
        assert_eq!(exported(&f, "Q").as_deref(), Some("it's"));
        assert_eq!(
            exported(&f, "LSB_JOBID"),
            None,
            "set by sbatchd, not the file"
        );
        let none = render(&[], "echo LSB_JOB_INCLUDE_POSTPROC", false);
        assert_eq!(exported(&none, "LSB_JOB_INCLUDE_POSTPROC"), None);
    }

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
        run_file(&render(&["A=1".into()], command, false))
    }

    #[allow(clippy::disallowed_methods)]
    fn run_file(text: &str) -> (i32, String) {
        let dir = std::env::temp_dir().join(format!(
            "basalt-jobfile-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("job");
        std::fs::write(&file, text).expect("write");
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

    /// The queue's JOB_STARTER: "%USRCMD" stands for the user's command; without it the
    /// command follows the starter. Whatever the command holds, it reaches the starter as
    /// its text.
    #[test]
    fn a_job_starter_runs_the_users_command_in_its_place() {
        let payload = "it's \"quoted\"\nline2\n'\neval \"$LSB_JOB_COMMAND\"\n";
        let cmd = format!("printf '%s' {}", sh_quote(payload));
        let file = render(&["A=1".into()], &cmd, false);
        let started = with_starter(&file, "echo before; %USRCMD; echo; echo after").expect("ours");
        let (code, out) = run_file(&started);
        assert_eq!(code, 0);
        assert_eq!(out, format!("before\n{payload}\nafter\n"));
        // Without %USRCMD: the command follows the starter (`env echo x`).
        let started = with_starter(&render(&[], "echo x", false), "env").expect("ours");
        assert_eq!(run_file(&started), (0, "x\n".to_owned()));
        // A script: its invocation is the command.
        let script = render(&[], "#!/bin/sh\necho in-script\n", true);
        let started = with_starter(&script, "echo pre; %USRCMD").expect("ours");
        assert!(started.contains("echo pre; \"$LSB_SCRIPT_FILE\"\n"));
        // Not a file render wrote: left alone.
        assert_eq!(with_starter("#!/bin/sh\ntrue\n", "x"), None);
    }
}
