//! The CLI contract real LSF clients rely on (`lsf-reference/cli-contract.md` §2 rows
//! 1–30 and the quirks of §11), checked against the real commands on running batch
//! clusters of real processes: output bytes, exit codes, stdout versus stderr.
//!
//! Each test function starts its own cluster (tests run in parallel threads) and
//! covers a group of rows; every assertion message names its row (`row 7`) or quirk
//! (`§11 J`). Rows 19 (job arrays) and 23 (`-w` dependencies) have their own tests.

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::{ClusterSpec, ProcessCluster, wait_for};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Hellos every second; bkill escalates to SIGKILL after 2 s.
const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

/// How long a short job may take from bsub to DONE/EXIT.
const JOB_DEADLINE: Duration = Duration::from_secs(60);

/// What a command did.
#[derive(Debug, Clone)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Out {
    fn show(&self) -> String {
        format!(
            "exit {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// One job as `bjobs -json` shows it: upper-case field -> value.
type Rec = BTreeMap<String, String>;

/// The fields [`T::jobs`] asks for.
const FIELDS: &str =
    "jobid stat exit_code exit_reason exec_host queue job_name proj_name from_host start_time finish_time";

/// A running cluster, a work directory and who we are.
struct T {
    c: ProcessCluster,
    work: PathBuf,
    user: String,
    uid: String,
}

fn id_of(flag: &str) -> Result<String> {
    let o = std::process::Command::new("id").arg(flag).output()?;
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

impl T {
    fn start(name: &str, hosts: usize) -> Result<T> {
        let c = ProcessCluster::start_batch(name, &ClusterSpec::new(hosts), PARAMS)?;
        let work = c.dir.path().join("work-area");
        std::fs::create_dir_all(&work)?;
        Ok(T {
            c,
            work,
            user: id_of("-un")?,
            uid: id_of("-u")?,
        })
    }

    /// Run `cmd args` in `cwd` with extra environment and optional stdin text.
    fn run_full(
        &self,
        cwd: &Path,
        cmd: &str,
        args: &[&str],
        stdin: Option<&str>,
        env: &[(&str, &str)],
    ) -> Result<Out> {
        let mut command = self.c.command(cmd);
        command.args(args).current_dir(cwd);
        for (k, v) in env {
            command.env(k, v);
        }
        command
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .with_context(|| format!("running {cmd}"))?;
        if let Some(text) = stdin
            && let Some(mut pipe) = child.stdin.take()
        {
            pipe.write_all(text.as_bytes())?;
        }
        let o = child.wait_with_output()?;
        Ok(Out {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        })
    }

    fn run(&self, cmd: &str, args: &[&str]) -> Result<Out> {
        self.run_full(&self.work, cmd, args, None, &[])
    }

    /// stdout of a command that must exit 0.
    fn ok(&self, cmd: &str, args: &[&str]) -> Result<String> {
        let o = self.run(cmd, args)?;
        if o.code != Some(0) {
            bail!("{cmd} {args:?} failed:\n{}", o.show());
        }
        Ok(o.stdout)
    }

    /// bsub from `cwd`; checks row 1 (one stdout line naming the job and its queue,
    /// exit 0) and returns the job id.
    fn submit_full(
        &self,
        cwd: &Path,
        args: &[&str],
        stdin: Option<&str>,
        env: &[(&str, &str)],
        queue: Option<&str>,
    ) -> Result<u64> {
        let o = self.run_full(cwd, "bsub", args, stdin, env)?;
        submitted(&o, queue).with_context(|| format!("row 1: bsub {args:?}"))
    }

    /// bsub with no `-q` (the default queue) from the work directory.
    fn submit(&self, args: &[&str]) -> Result<u64> {
        self.submit_full(&self.work, args, None, &[], None)
    }

    /// bsub with `-q queue` (or `#BSUB -q`) from the work directory.
    fn submit_q(&self, queue: &str, args: &[&str]) -> Result<u64> {
        self.submit_full(&self.work, args, None, &[], Some(queue))
    }

    /// Every job (all users, finished ones too) by id, from `bjobs -json`.
    fn jobs(&self) -> Result<BTreeMap<u64, Rec>> {
        let o = self.run("bjobs", &["-a", "-u", "all", "-json", "-o", FIELDS])?;
        if o.stdout.trim().is_empty() {
            return Ok(BTreeMap::new());
        }
        let v: serde_json::Value = serde_json::from_str(&o.stdout)
            .with_context(|| format!("bjobs -json:\n{}", o.show()))?;
        let mut out = BTreeMap::new();
        for r in v["RECORDS"].as_array().cloned().unwrap_or_default() {
            let Some(obj) = r.as_object() else { continue };
            let rec: Rec = obj
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect();
            if let Some(id) = rec.get("JOBID").and_then(|i| i.parse::<u64>().ok()) {
                out.insert(id, rec);
            }
        }
        Ok(out)
    }

    fn wait_stat(&self, id: u64, stat: &str, deadline: Duration) -> Result<Rec> {
        wait_for(&format!("job {id} to be {stat}"), deadline, || {
            match self.jobs() {
                Ok(m) => {
                    let r = m.get(&id).cloned();
                    (
                        r.clone().filter(|r| r.get("STAT").map(String::as_str) == Some(stat)),
                        format!("{r:?}"),
                    )
                }
                Err(e) => (None, e.to_string()),
            }
        })
    }

    /// Wait until every job of `ids` is DONE or EXIT.
    fn wait_final(&self, ids: &[u64], deadline: Duration) -> Result<BTreeMap<u64, Rec>> {
        wait_for("jobs to finish", deadline, || match self.jobs() {
            Ok(m) => {
                let left: Vec<_> = ids
                    .iter()
                    .filter(|id| {
                        !m.get(id).is_some_and(|r| {
                            matches!(r.get("STAT").map(String::as_str), Some("DONE" | "EXIT"))
                        })
                    })
                    .map(|id| (id, m.get(id).and_then(|r| r.get("STAT").cloned())))
                    .collect();
                if left.is_empty() {
                    (Some(m), String::new())
                } else {
                    (None, format!("unfinished: {left:?}"))
                }
            }
            Err(e) => (None, e.to_string()),
        })
    }

    /// A file of the work directory ("" when it does not exist).
    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.work.join(name)).unwrap_or_default()
    }

    /// The value of `VAR=` in a job's output file.
    fn var(&self, file: &str, var: &str) -> Option<String> {
        self.file(file).lines().find_map(|l| {
            l.strip_prefix(var)
                .and_then(|r| r.strip_prefix('='))
                .map(str::to_owned)
        })
    }
}

/// Check row 1 on a bsub result and return the job id: exit 0, stdout exactly one
/// line `Job <N> is submitted to default queue <normal>.` (no `-q`) or
/// `Job <N> is submitted to queue <Q>.`; nothing precedes it (first digits = N, D).
fn submitted(o: &Out, queue: Option<&str>) -> Result<u64> {
    if o.code != Some(0) {
        bail!("bsub failed:\n{}", o.show());
    }
    let rest = o
        .stdout
        .strip_prefix("Job <")
        .ok_or_else(|| anyhow!("stdout does not start with `Job <`:\n{}", o.show()))?;
    let (digits, tail) = rest.split_once('>').unwrap_or(("", ""));
    let id: u64 = digits
        .parse()
        .map_err(|_| anyhow!("no job id:\n{}", o.show()))?;
    let want = match queue {
        None => " is submitted to default queue <normal>.\n".to_owned(),
        Some(q) => format!(" is submitted to queue <{q}>.\n"),
    };
    if tail != want || id == 0 {
        bail!("expected `Job <{id}>{want}` alone on stdout:\n{}", o.show());
    }
    Ok(id)
}

/// `%-W.Ws` with LSF's `*` truncation (written here independently of basalt-cli).
fn col(s: &str, w: usize) -> String {
    let n = s.chars().count();
    let v = if n > w {
        format!("*{}", s.chars().skip(n - (w - 1)).collect::<String>())
    } else {
        s.to_owned()
    };
    format!("{v:<w$}")
}

/// `%b %e %H:%M` as a 12-character table time (`Nov 22 09:25`, `Nov  2 09:25`).
fn is_table_time(s: &str) -> bool {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let b = s.as_bytes();
    s.len() == 12
        && MONTHS.contains(&&s[..3])
        && b[3] == b' '
        && (b[4] == b' ' || b[4].is_ascii_digit())
        && b[5].is_ascii_digit()
        && b[6] == b' '
        && b[7].is_ascii_digit()
        && b[8].is_ascii_digit()
        && b[9] == b':'
        && b[10].is_ascii_digit()
        && b[11].is_ascii_digit()
}

/// Undo the 79-column wrapping of the long formats (toil removes each newline
/// followed by 21 spaces).
fn unwrap_long(s: &str) -> String {
    s.replace(&format!("\n{}", " ".repeat(21)), "")
}

/// Lines of the reference shape `    KEY = VALUE` (`KEY` one word, a value present).
fn is_key_value(line: &str) -> bool {
    line.strip_prefix("    ")
        .and_then(|r| r.split_once(" = "))
        .is_some_and(|(k, v)| {
            !k.is_empty()
                && !k.contains(char::is_whitespace)
                && !v.trim().is_empty()
                && !line.ends_with(' ')
        })
}

/// Fields of an lsb.events line as snakemake's gawk reads them:
/// `FPAT = "([^ ]+)|(\"[^\"]+\")"` (leftmost-longest; quotes kept).
fn gawk_fields(line: &str) -> Vec<String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' ' {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < b.len() && b[end] != b' ' {
            end += 1;
        }
        if b[i] == b'"'
            && let Some(k) = b[i + 1..].iter().position(|c| *c == b'"')
            && k > 0
        {
            end = end.max(i + 1 + k + 1);
        }
        out.push(line[i..end].to_owned());
        i = end;
    }
    out
}

/// `KEY=value` of a shell-style file (last assignment wins, quotes removed).
fn conf_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().split_once('='))
        .filter(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().trim_matches('"').to_owned())
        .next_back()
}

/// The text between the first `<` and `>` after `prefix` (`Job <12>` -> `12`).
fn angle_after<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let at = s.find(prefix)? + prefix.len();
    let rest = s[at..].strip_prefix('<')?;
    rest.split_once('>').map(|(v, _)| v)
}

/// The line two above `Resource usage summary:` in a job report.
fn report_verdict(report: &str) -> Option<String> {
    let lines: Vec<&str> = report.lines().collect();
    let at = lines.iter().position(|l| *l == "Resource usage summary:")?;
    at.checked_sub(2).map(|i| lines[i].to_owned())
}

/// Rows 1, 2, 3, 6, 8, 9, 11, 12, 13, 15 and 18, and §11 D, G, I, B, RS, SF: every
/// submission form and option, what the job sees and the report in its `-o` file.
#[test]
fn bsub_forms_options_environment_and_reports() -> Result<()> {
    let t = T::start("contract-bsub", 3)?;
    let w = &t.work;

    // Row 1: the two success lines, nothing on stderr; errors on stderr, exit 255.
    let o = t.run("bsub", &["-o", "/dev/null", "true"])?;
    let plain = submitted(&o, None).context("row 1")?;
    assert_eq!(o.stderr, "", "row 1: stderr of a successful bsub\n{}", o.show());
    let o = t.run("bsub", &["-q", "priority", "-o", "/dev/null", "true"])?;
    let queued = submitted(&o, Some("priority")).context("row 1")?;
    assert_eq!(o.stderr, "", "row 1\n{}", o.show());
    let o = t.run("bsub", &["-q", "nosuchqueue", "true"])?;
    assert_eq!(o.code, Some(255), "row 1: rejected bsub\n{}", o.show());
    assert_eq!(o.stdout, "", "row 1: nothing on stdout when rejected\n{}", o.show());
    assert!(
        o.stderr.ends_with(". Job not submitted.\n") && o.stderr.to_lowercase().contains("queue"),
        "row 1: `<reason>. Job not submitted.` on stderr\n{}",
        o.show()
    );
    let o = t.run("bsub", &["-n"])?;
    assert_eq!(o.code, Some(255), "row 1: bad option\n{}", o.show());
    assert_eq!(o.stdout, "", "row 1\n{}", o.show());

    // Row 2: -J with any characters; -o/-e append, %J, stderr to -o without -e;
    // -oo/-eo overwrite; -W and -M forms; -P, -G, -x, -H, -n.
    let odd_name = "Snakemake_rule_r:k=v,k2=v2___(0f3a-uuid)]";
    let named = t.submit(&["-J", odd_name, "-o", "named.%J", "echo \"$LSB_JOBNAME\""])?;
    std::fs::write(w.join("app.out"), "previous out\n")?;
    std::fs::write(w.join("app.err"), "previous err\n")?;
    let append = t.submit(&["-o", "app.out", "-e", "app.err", "echo to-out; echo to-err >&2"])?;
    std::fs::write(w.join("ovr.out"), "stale out\n")?;
    std::fs::write(w.join("ovr.err"), "stale err\n")?;
    let overwrite = t.submit(&["-oo", "ovr.out", "-eo", "ovr.err", "echo new-out; echo new-err >&2"])?;
    let both = t.submit(&["-o", "both.%J", "echo to-out; echo to-err >&2"])?;
    let mut limited = Vec::new();
    for (wl, minutes, mem) in [
        ("5", 5.0, "2000"),
        ("1:30", 90.0, "2048MB"),
        ("01:30", 90.0, "1048576KB"),
        ("100:00", 6000.0, "4G"),
        ("60:05", 3605.0, "0.0977"),
    ] {
        let id = t.submit(&["-W", wl, "-M", mem, "-o", "/dev/null", "true"])?;
        limited.push((id, wl, minutes, mem));
    }
    let proj = t.submit(&["-P", "contract_proj", "-o", "/dev/null", "true"])?;
    let excl = t.submit(&["-x", "-o", "/dev/null", "true"])?;
    let held = t.submit(&["-H", "-o", "/dev/null", "true"])?;
    let o = t.run("bsub", &["-G", "contract_group", "-o", "/dev/null", "true"])?;
    let group = submitted(&o, None).context("row 2: -G")?;

    // Rows 2, 13: -n 2 on one host, the LSF environment inside the job.
    let env_cmd = "env | grep -E '^(LSB_|LSF_ENVDIR=)' | sort; \
                   echo HOSTFILE_LINES=$(wc -l < \"$LSB_DJOB_HOSTFILE\")";
    let par = t.submit(&["-n", "2", "-R", "span[hosts=1]", "-J", "par_env", "-o", "par.%J", env_cmd])?;
    // Row 15: -nnodes is accepted.
    let nnodes = t.submit(&["-nnodes", "1", "-o", "/dev/null", "true"])?;

    // Row 3: environment propagation.
    let env = [("CONTRACT_VAR", "from-submitter")];
    let show = "echo CV=${CONTRACT_VAR:-unset} CX=${CONTRACT_X:-unset} ID=${LSB_JOBID:-unset}";
    let mut env_jobs = Vec::new();
    for (label, extra) in [
        ("default", vec![]),
        ("none", vec!["-env", "none"]),
        ("all", vec!["-env", "all"]),
        ("var", vec!["-env", "CONTRACT_X=val"]),
        ("all_var", vec!["-env", "all, CONTRACT_X=val"]),
        ("repeated", vec!["-env", "all", "-env", "CONTRACT_X=val"]),
    ] {
        let file = format!("env_{label}.out");
        let mut args: Vec<&str> = extra;
        args.extend(["-o", file.as_str(), show]);
        let id = t.submit_full(w, &args, None, &env, None)?;
        env_jobs.push((label, id, file));
    }
    // J writes one `#BSUB -env NAME=value` line per variable.
    let j_script = format!(
        "#!/bin/bash\n#BSUB -env CONTRACT_X=val\n#BSUB -env CONTRACT_Y=why\n#BSUB -o env_lines.out\n{show} CY=${{CONTRACT_Y:-unset}}\n"
    );
    let env_lines = t.submit_full(w, &[], Some(&j_script), &env, None)?;

    // Row 6: repeated and combined -R, on the command line and as #BSUB.
    let model = t
        .ok("lshosts", &[])?
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(2))
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("no host model in lshosts"))?;
    let model_sel = format!("select[model == {model}]");
    let mut resreq_jobs = Vec::new();
    for rs in [
        vec!["select[mem>=8MB] rusage[mem=8MB]", "span[hosts=1]"],
        vec!["rusage[tmp=10]", "affinity[core(1)]", "select[type==any]"],
        vec!["rusage[mem=5]", "rusage[mem=100.0]"],
        vec![model_sel.as_str(), "select[hname!='hostA']"],
        vec!["select[mem>=8192MB] rusage[mem=8MB]"],
    ] {
        let mut args = Vec::new();
        for r in &rs {
            args.extend(["-R", *r]);
        }
        args.extend(["-o", "/dev/null", "true"]);
        resreq_jobs.push((t.submit(&args)?, rs.join(" | ")));
    }
    let merged_script = "#!/bin/sh\n#BSUB -R \"select[hname!='hostA']\"\n#BSUB -o /dev/null\ntrue\n";
    let merged = t.submit_full(w, &["-R", "select[hname!='hostB']"], Some(merged_script), &[], None)?;
    let ptile = t.submit(&["-n", "2", "-R", "span[ptile=1]", "-o", "ptile.%J", "echo $LSB_HOSTS"])?;

    // Row 8: scripts on stdin: #BSUB in column 0 only, trailing comments and blanks,
    // directives after blank lines and commands, shebang interpreters, command line wins.
    let stdin_script = "#!/bin/bash\n#BSUB -J stdin_bash\n#BSUB -o stdin.%J\n#BSUB -q priority   # a trailing comment\n    #BSUB -J indented_must_be_ignored\n#BSUB -P scripted_proj \n\n#BSUB -R \"select[type==any]\"    # Allow any type\necho \"interp=$(tr '\\0' ' ' < /proc/$$/cmdline)\"\n#BSUB -e stdin_err.%J\necho to-err >&2\n";
    let from_stdin = t.submit_full(w, &[], Some(stdin_script), &[], Some("priority"))?;
    let mut shebangs = Vec::new();
    for (label, first, want) in [
        ("bash", "#!/bin/bash", "/bin/bash"),
        ("bash_l", "#!/bin/bash -l", "/bin/bash"),
        ("env_bash", "#!/usr/bin/env bash", "bash"),
        ("sh", "#!/bin/sh", "/bin/sh"),
        ("blank_first", "\n#!/bin/bash", "/bin/bash"),
    ] {
        let script = format!(
            "{first}\n#BSUB -o shebang_{label}.out\necho \"interp=$(tr '\\0' ' ' < /proc/$$/cmdline)\"\n"
        );
        shebangs.push((label, t.submit_full(w, &[], Some(&script), &[], None)?, want));
    }
    let override_script = "#!/bin/sh\n#BSUB -J script_name\n#BSUB -o wrong.%J\n#BSUB -q priority\necho \"name=$LSB_JOBNAME queue=$LSB_QUEUE\"\n";
    let overridden = t.submit_full(
        w,
        &["-J", "cli_name", "-o", "override.%J", "-q", "normal"],
        Some(override_script),
        &[],
        Some("normal"),
    )?;

    // Row 9: -cwd absolute, relative, `.`, and the submission directory by default.
    let sub = w.join("subdir");
    std::fs::create_dir_all(w.join("other"))?;
    std::fs::create_dir_all(&sub)?;
    let other = w.join("other");
    let other_s = other.to_string_lossy().into_owned();
    let cwd_abs = t.submit(&["-cwd", &other_s, "-o", &w.join("cwd_abs.out").to_string_lossy(), "pwd"])?;
    let cwd_rel = t.submit(&["-cwd", "other", "-o", &w.join("cwd_rel.out").to_string_lossy(), "pwd"])?;
    let cwd_dot = t.submit_full(&sub, &["-cwd", ".", "-o", &w.join("cwd_dot.out").to_string_lossy(), "pwd"], None, &[], None)?;
    let cwd_default = t.submit_full(&sub, &["-o", &w.join("cwd_default.out").to_string_lossy(), "pwd"], None, &[], None)?;

    // Row 11: argv words joined with spaces and run by a shell, inner quoting kept.
    std::fs::write(w.join("words.sh"), "echo \"script got $1\"\n")?;
    let words = t.submit(&["-o", "words.%J", "echo", "a", "b  c"])?;
    let one_string = t.submit(&["-o", "onestr.%J", "printf '%s|' 'x  y' \"q r\" | tr x z"])?;
    let sh_script = t.submit(&["-o", "shscript.%J", "sh", "words.sh", "arg1"])?;
    let env_bash = t.submit(&["-o", "envbash.%J", "/usr/bin/env", "bash", "words.sh", "arg2"])?;
    let snake = t.submit(&[
        "-o",
        "snake.%J",
        "sh -c 'echo \"zero=$0 one=$1\"' 'r:k=v,k2=v2' '--target-jobs=x y'",
    ])?;

    // Row 12 and §11 RS, SF, D: a script file argument is spooled at submit (deleted
    // right after bsub), need not be executable, may start with a blank line.
    let file_script = w.join("spooled.sh");
    std::fs::write(
        &file_script,
        "\n#!/bin/bash\n#BSUB -J file_script  \n#BSUB -o spooled.%J \necho \"spooled ran $LSB_JOBNAME\"\n",
    )?;
    let spooled = t.submit(&[&file_script.to_string_lossy()])?;
    std::fs::remove_file(&file_script)?;
    std::fs::write(w.join("rel.sh"), "#!/bin/sh\n#BSUB -o rel.%J\necho rel-ran\n")?;
    let relative = t.submit(&["rel.sh"])?;
    std::fs::remove_file(w.join("rel.sh"))?;

    // Row 18: the job report (a failing job as well).
    let failing = t.submit(&["-o", "fail.%J", "echo about-to-fail; exit 3"])?;

    // Let the held job go, then wait for everything.
    let o = t.run("bresume", &[&held.to_string()])?;
    assert_eq!(o.code, Some(0), "bresume\n{}", o.show());
    let mut all: Vec<u64> = vec![
        plain, queued, named, append, overwrite, both, proj, excl, held, group, par, nnodes,
        env_lines, merged, ptile, from_stdin, overridden, cwd_abs, cwd_rel, cwd_dot,
        cwd_default, words, one_string, sh_script, env_bash, snake, spooled, relative,
        failing,
    ];
    all.extend(limited.iter().map(|l| l.0));
    all.extend(env_jobs.iter().map(|e| e.1));
    all.extend(shebangs.iter().map(|s| s.1));
    all.extend(resreq_jobs.iter().map(|r| r.0));
    let m = t.wait_final(&all, JOB_DEADLINE)?;
    let rec = |id: u64| m.get(&id).cloned().unwrap_or_default();
    let field = |id: u64, k: &str| rec(id).get(k).cloned().unwrap_or_default();
    for id in &all {
        let want = if *id == failing { "EXIT" } else { "DONE" };
        assert_eq!(field(*id, "STAT"), want, "job {id} ended wrong: {:?}", rec(*id));
    }

    // Row 2 checks.
    assert_eq!(field(named, "JOB_NAME"), odd_name, "row 2: -J keeps every character");
    assert_eq!(t.file(&format!("named.{named}")).lines().next(), Some(odd_name), "row 2: LSB_JOBNAME");
    let app = t.file("app.out");
    assert!(app.starts_with("previous out\nto-out\n"), "row 2: -o appends:\n{app}");
    assert!(!app.lines().any(|l| l == "to-err"), "row 2: -e takes stderr:\n{app}");
    assert!(t.file("app.err").starts_with("previous err\nto-err\n"), "row 2: -e appends:\n{}", t.file("app.err"));
    let ovr = t.file("ovr.out");
    assert!(ovr.starts_with("new-out\n") && !ovr.contains("stale"), "row 2: -oo overwrites:\n{ovr}");
    let ovr_err = t.file("ovr.err");
    assert!(ovr_err.starts_with("new-err\n") && !ovr_err.contains("stale"), "row 2: -eo overwrites:\n{ovr_err}");
    let both_out = t.file(&format!("both.{both}"));
    assert!(both_out.contains("to-out\n") && both_out.contains("to-err\n"), "row 2: no -e => stderr in the -o file:\n{both_out}");
    for (id, wl, minutes, mem) in &limited {
        let v = t.ok("bjobs", &["-o", "runtimelimit", "-noheader", &id.to_string()])?;
        let got: f64 = v.trim().parse().map_err(|_| anyhow!("row 2: runtimelimit of -W {wl}: {v:?}"))?;
        assert!((got - minutes).abs() < 0.01, "row 2: -W {wl} is {minutes} min, bjobs says {got} (-M {mem})");
    }
    assert_eq!(field(proj, "PROJ_NAME"), "contract_proj", "row 2: -P");
    let x = t.ok("bjobs", &["-o", "exclusive", "-noheader", &excl.to_string()])?;
    assert_eq!(x, "Y\n", "row 2: -x");

    // Row 13: the job's LSF environment.
    let pf = format!("par.{par}");
    let host = field(par, "EXEC_HOST");
    let h = host.trim_start_matches("2*").to_owned();
    assert!(host == format!("2*{h}") && !h.is_empty(), "row 2: -n 2 span[hosts=1] on one host: {host:?}");
    assert_eq!(t.var(&pf, "LSB_JOBID"), Some(par.to_string()), "row 13: LSB_JOBID\n{}", t.file(&pf));
    assert_eq!(t.var(&pf, "LSB_JOBINDEX").as_deref(), Some("0"), "row 13: LSB_JOBINDEX");
    assert_eq!(t.var(&pf, "LSB_HOSTS"), Some(format!("{h} {h}")), "row 13: LSB_HOSTS one entry per slot");
    let mcpu = t.var(&pf, "LSB_MCPU_HOSTS").unwrap_or_default();
    assert_eq!(mcpu.split_whitespace().collect::<Vec<_>>(), vec![h.as_str(), "2"], "row 13: LSB_MCPU_HOSTS {mcpu:?}");
    assert_eq!(t.var(&pf, "LSB_DJOB_NUMPROC").as_deref(), Some("2"), "row 13: LSB_DJOB_NUMPROC");
    assert_eq!(t.var(&pf, "HOSTFILE_LINES").as_deref(), Some("2"), "row 13: LSB_DJOB_HOSTFILE");
    assert_eq!(t.var(&pf, "LSB_JOBNAME").as_deref(), Some("par_env"), "row 13: LSB_JOBNAME");
    assert_eq!(t.var(&pf, "LSB_QUEUE").as_deref(), Some("normal"), "row 13: LSB_QUEUE");
    assert_eq!(t.var(&pf, "LSF_ENVDIR"), Some(t.c.envdir.display().to_string()), "row 16: LSF_ENVDIR exported to jobs");

    // Row 3.
    for (label, id, file) in &env_jobs {
        let out = t.file(file);
        let want = match *label {
            "none" => format!("CV=unset CX=unset ID={id}"),
            "var" => format!("CV=unset CX=val ID={id}"),
            "default" | "all" => format!("CV=from-submitter CX=unset ID={id}"),
            _ => format!("CV=from-submitter CX=val ID={id}"),
        };
        assert_eq!(out.lines().next(), Some(want.as_str()), "row 3: -env {label}:\n{out}");
    }
    let lines_out = t.file("env_lines.out");
    assert_eq!(
        lines_out.lines().next(),
        Some(format!("CV=unset CX=val ID={env_lines} CY=why").as_str()),
        "row 3: one #BSUB -env line per variable:\n{lines_out}"
    );

    // Row 6.
    for (id, rs) in &resreq_jobs {
        assert_eq!(field(*id, "STAT"), "DONE", "row 6: -R {rs}");
    }
    // The merged requirement is what the job carries (placement by select[] is the
    // scheduler's business, not the command line's).
    let rr = t.ok("bjobs", &["-o", "effective_resreq", "-noheader", &merged.to_string()])?;
    assert!(
        rr.contains("hname!='hostA'") && rr.contains("hname!='hostB'"),
        "row 6: -R from the command line and #BSUB are merged: {rr:?}"
    );
    let rr = t.ok("bjobs", &["-o", "effective_resreq", "-noheader", &resreq_jobs[1].0.to_string()])?;
    for part in ["rusage[tmp=10]", "affinity[core(1)]", "type==any"] {
        assert!(rr.contains(part), "row 6: repeated -R merged: {rr:?} lacks {part}");
    }
    let pt = t.file(&format!("ptile.{ptile}"));
    let pt_hosts: Vec<&str> = pt.lines().next().unwrap_or("").split_whitespace().collect();
    assert!(pt_hosts.len() == 2 && pt_hosts[0] != pt_hosts[1], "row 6: span[ptile=1] with -n 2: {pt:?}");

    // Row 8.
    assert_eq!(field(from_stdin, "JOB_NAME"), "stdin_bash", "row 8 / §11 I: indented #BSUB is a comment");
    assert_eq!(field(from_stdin, "QUEUE"), "priority", "row 8 / §11 B: trailing # comment ignored");
    assert_eq!(field(from_stdin, "PROJ_NAME"), "scripted_proj", "row 8 / §11 RS: trailing blanks");
    let so = t.file(&format!("stdin.{from_stdin}"));
    assert!(so.starts_with("interp=/bin/bash "), "row 8: #!/bin/bash runs bash:\n{so}");
    assert!(!so.lines().any(|l| l == "to-err"), "row 8: #BSUB -e after commands applies:\n{so}");
    assert!(t.file(&format!("stdin_err.{from_stdin}")).contains("to-err"), "row 8: #BSUB -e after commands");
    for (label, id, want) in &shebangs {
        let out = t.file(&format!("shebang_{label}.out"));
        let interp = out.lines().next().and_then(|l| l.strip_prefix("interp=")).unwrap_or("");
        assert_eq!(interp.split_whitespace().next(), Some(*want), "row 8: shebang {label} (job {id}):\n{out}");
    }
    let ov = t.file(&format!("override.{overridden}"));
    assert_eq!(ov.lines().next(), Some("name=cli_name queue=normal"), "row 8: command line beats #BSUB:\n{ov}");
    assert_eq!(t.file(&format!("wrong.{overridden}")), "", "row 8: -o from the command line wins");

    // Row 9.
    let first_line = |f: &str| t.file(f).lines().next().unwrap_or("").to_owned();
    assert_eq!(first_line("cwd_abs.out"), other_s, "row 9: -cwd <abs> (job {cwd_abs})");
    assert_eq!(first_line("cwd_rel.out"), other_s, "row 9: -cwd <relative> (job {cwd_rel})");
    let sub_s = sub.to_string_lossy().into_owned();
    assert_eq!(first_line("cwd_dot.out"), sub_s, "row 9: -cwd . (job {cwd_dot})");
    assert_eq!(first_line("cwd_default.out"), sub_s, "row 9: default is the submission directory (job {cwd_default})");

    // Row 11.
    assert_eq!(first_line(&format!("words.{words}")), "a b c", "row 11: words joined");
    assert_eq!(first_line(&format!("onestr.{one_string}")), "z  y|q r|", "row 11: inner quoting preserved");
    assert_eq!(first_line(&format!("shscript.{sh_script}")), "script got arg1", "row 11: sh script");
    assert_eq!(first_line(&format!("envbash.{env_bash}")), "script got arg2", "row 11: /usr/bin/env bash script");
    assert_eq!(first_line(&format!("snake.{snake}")), "zero=r:k=v,k2=v2 one=--target-jobs=x y", "row 11: single-quoted line");

    // Row 12.
    assert_eq!(first_line(&format!("spooled.{spooled}")), "spooled ran file_script", "row 12: spooled script");
    assert_eq!(first_line(&format!("rel.{relative}")), "rel-ran", "row 12: relative script path");

    // Row 18: "Successfully completed." / "Exited with exit code 3." two lines above
    // "Resource usage summary:".
    let ok_report = t.file(&format!("both.{both}"));
    assert_eq!(report_verdict(&ok_report).as_deref(), Some("Successfully completed."), "row 18:\n{ok_report}");
    let bad_report = t.file(&format!("fail.{failing}"));
    assert_eq!(report_verdict(&bad_report).as_deref(), Some("Exited with exit code 3."), "row 18:\n{bad_report}");
    assert_eq!(field(failing, "EXIT_CODE"), "3", "row 18: exit code");
    Ok(())
}
