//! The CLI contract real LSF clients rely on (`lsf-reference/cli-contract.md` §2 rows
//! 1–30 and the quirks of §11), checked against the real commands on running batch
//! clusters (daemons in the test process, `InProcessBatch`; jobs under real job
//! supervisors): output bytes, exit codes, stdout versus stderr.
//!
//! Each test function starts its own cluster (tests run in parallel threads) and
//! covers a group of rows; every assertion message names its row (`row 7`) or quirk
//! (`§11 J`). Rows 19 (job arrays) and 23 (`-w` dependencies) have their own tests.

use anyhow::{Context, Result, anyhow, bail};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
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
const FIELDS: &str = "jobid stat exit_code exit_reason exec_host queue job_name proj_name from_host start_time finish_time";

/// A running cluster, a work directory and who we are.
struct T {
    c: InProcessBatch,
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
        let c = InProcessBatch::start(name, &ClusterSpec::new(hosts), PARAMS)?;
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
        let mut child = command.spawn().with_context(|| format!("running {cmd}"))?;
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
                        r.clone()
                            .filter(|r| r.get("STAT").map(String::as_str) == Some(stat)),
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

    // Row 2 (-G, -app): the user group and the application profile the jobs name exist,
    // as at an LSF site (mbatchd refuses names lsb.users / lsb.applications lack).
    let confdir = t.c.dir.path().join("conf/lsbatch/basalt/configdir");
    std::fs::write(
        confdir.join("lsb.users"),
        "Begin UserGroup\nGROUP_NAME      GROUP_MEMBER\ncontract_group  (all)\nEnd UserGroup\n",
    )?;
    std::fs::write(
        confdir.join("lsb.applications"),
        "Begin Application\nNAME = contract_app\nEnd Application\n",
    )?;
    t.c.ok("badmin", &["reconfig"])?;
    // The restarted mbatchd knows contract_app: it gets as far as the unknown queue.
    wait_for("mbatchd to read lsb.applications", JOB_DEADLINE, || {
        let o = t.run(
            "bsub",
            &["-app", "contract_app", "-q", "nosuchqueue", "true"],
        );
        let o = o.map(|o| o.show()).unwrap_or_else(|e| e.to_string());
        (o.contains("Queue does not exist").then_some(()), o)
    })?;

    // Row 1: the two success lines, nothing on stderr; errors on stderr, exit 255.
    let o = t.run("bsub", &["-o", "/dev/null", "true"])?;
    let plain = submitted(&o, None).context("row 1")?;
    assert_eq!(
        o.stderr,
        "",
        "row 1: stderr of a successful bsub\n{}",
        o.show()
    );
    let o = t.run("bsub", &["-q", "priority", "-o", "/dev/null", "true"])?;
    let queued = submitted(&o, Some("priority")).context("row 1")?;
    assert_eq!(o.stderr, "", "row 1\n{}", o.show());
    let o = t.run("bsub", &["-q", "nosuchqueue", "true"])?;
    assert_eq!(o.code, Some(255), "row 1: rejected bsub\n{}", o.show());
    assert_eq!(
        o.stdout,
        "",
        "row 1: nothing on stdout when rejected\n{}",
        o.show()
    );
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
    let append = t.submit(&[
        "-o",
        "app.out",
        "-e",
        "app.err",
        "echo to-out; echo to-err >&2",
    ])?;
    std::fs::write(w.join("ovr.out"), "stale out\n")?;
    std::fs::write(w.join("ovr.err"), "stale err\n")?;
    let overwrite = t.submit(&[
        "-oo",
        "ovr.out",
        "-eo",
        "ovr.err",
        "echo new-out; echo new-err >&2",
    ])?;
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
    let o = t.run("bsub", &["-app", "contract_app", "-o", "/dev/null", "true"])?;
    let app_job = submitted(&o, None).context("row 2: -app")?;
    for (args, why) in [
        (["-G", "nosuchgroup"], "Bad user group name"),
        (["-app", "nosuchapp"], "Application profile does not exist"),
    ] {
        let o = t.run("bsub", &[args[0], args[1], "true"])?;
        assert_eq!(o.code, Some(255), "row 2: bsub {args:?}\n{}", o.show());
        assert_eq!(
            o.stderr,
            format!("{why}. Job not submitted.\n"),
            "row 2: bsub {args:?}\n{}",
            o.show()
        );
        assert_eq!(o.stdout, "", "row 2: bsub {args:?}\n{}", o.show());
    }

    // Rows 2, 13: -n 2 on one host, the LSF environment inside the job.
    let env_cmd = "env | grep -E '^(LSB_|LSF_ENVDIR=)' | sort; \
                   echo HOSTFILE_LINES=$(wc -l < \"$LSB_DJOB_HOSTFILE\")";
    let par = t.submit(&[
        "-n",
        "2",
        "-R",
        "span[hosts=1]",
        "-J",
        "par_env",
        "-o",
        "par.%J",
        env_cmd,
    ])?;
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
    let merged_script =
        "#!/bin/sh\n#BSUB -R \"select[hname!='hostA']\"\n#BSUB -o /dev/null\ntrue\n";
    let merged = t.submit_full(
        w,
        &["-R", "select[hname!='hostB']"],
        Some(merged_script),
        &[],
        None,
    )?;
    let ptile = t.submit(&[
        "-n",
        "2",
        "-R",
        "span[ptile=1]",
        "-o",
        "ptile.%J",
        "echo $LSB_HOSTS",
    ])?;

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
        shebangs.push((
            label,
            t.submit_full(w, &[], Some(&script), &[], None)?,
            want,
        ));
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
    let cwd_abs = t.submit(&[
        "-cwd",
        &other_s,
        "-o",
        &w.join("cwd_abs.out").to_string_lossy(),
        "pwd",
    ])?;
    let cwd_rel = t.submit(&[
        "-cwd",
        "other",
        "-o",
        &w.join("cwd_rel.out").to_string_lossy(),
        "pwd",
    ])?;
    let cwd_dot = t.submit_full(
        &sub,
        &[
            "-cwd",
            ".",
            "-o",
            &w.join("cwd_dot.out").to_string_lossy(),
            "pwd",
        ],
        None,
        &[],
        None,
    )?;
    let cwd_default = t.submit_full(
        &sub,
        &["-o", &w.join("cwd_default.out").to_string_lossy(), "pwd"],
        None,
        &[],
        None,
    )?;

    // Row 11: argv words joined with spaces and run by a shell, inner quoting kept.
    std::fs::write(w.join("words.sh"), "echo \"script got $1\"\n")?;
    let words = t.submit(&["-o", "words.%J", "echo", "a", "b  c"])?;
    let one_string = t.submit(&["-o", "onestr.%J", "printf '%s|' 'x  y' \"q r\" | tr x z"])?;
    let sh_script = t.submit(&["-o", "shscript.%J", "sh", "words.sh", "arg1"])?;
    let env_bash = t.submit(&[
        "-o",
        "envbash.%J",
        "/usr/bin/env",
        "bash",
        "words.sh",
        "arg2",
    ])?;
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
    std::fs::write(
        w.join("rel.sh"),
        "#!/bin/sh\n#BSUB -o rel.%J\necho rel-ran\n",
    )?;
    let relative = t.submit(&["rel.sh"])?;
    std::fs::remove_file(w.join("rel.sh"))?;

    // Row 18: the job report (a failing job as well).
    let failing = t.submit(&["-o", "fail.%J", "echo about-to-fail; exit 3"])?;

    // Row 2: -H holds the job (PSUSP); let it go, then wait for everything.
    t.wait_stat(held, "PSUSP", JOB_DEADLINE)
        .context("row 2: -H")?;
    let o = t.run("bresume", &[&held.to_string()])?;
    assert_eq!(o.code, Some(0), "bresume\n{}", o.show());
    let mut all: Vec<u64> = vec![
        plain,
        queued,
        named,
        append,
        overwrite,
        both,
        proj,
        excl,
        held,
        group,
        app_job,
        par,
        nnodes,
        env_lines,
        merged,
        ptile,
        from_stdin,
        overridden,
        cwd_abs,
        cwd_rel,
        cwd_dot,
        cwd_default,
        words,
        one_string,
        sh_script,
        env_bash,
        snake,
        spooled,
        relative,
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
        assert_eq!(
            field(*id, "STAT"),
            want,
            "job {id} ended wrong: {:?}",
            rec(*id)
        );
    }

    // Row 2 checks.
    assert_eq!(
        field(named, "JOB_NAME"),
        odd_name,
        "row 2: -J keeps every character"
    );
    assert_eq!(
        t.file(&format!("named.{named}")).lines().next(),
        Some(odd_name),
        "row 2: LSB_JOBNAME"
    );
    let app = t.file("app.out");
    assert!(
        app.starts_with("previous out\nto-out\n"),
        "row 2: -o appends:\n{app}"
    );
    assert!(
        !app.lines().any(|l| l == "to-err"),
        "row 2: -e takes stderr:\n{app}"
    );
    assert!(
        t.file("app.err").starts_with("previous err\nto-err\n"),
        "row 2: -e appends:\n{}",
        t.file("app.err")
    );
    let ovr = t.file("ovr.out");
    assert!(
        ovr.starts_with("new-out\n") && !ovr.contains("stale"),
        "row 2: -oo overwrites:\n{ovr}"
    );
    let ovr_err = t.file("ovr.err");
    assert!(
        ovr_err.starts_with("new-err\n") && !ovr_err.contains("stale"),
        "row 2: -eo overwrites:\n{ovr_err}"
    );
    let both_out = t.file(&format!("both.{both}"));
    assert!(
        both_out.contains("to-out\n") && both_out.contains("to-err\n"),
        "row 2: no -e => stderr in the -o file:\n{both_out}"
    );
    for (id, wl, minutes, mem) in &limited {
        let v = t.ok(
            "bjobs",
            &["-o", "runtimelimit", "-noheader", &id.to_string()],
        )?;
        let got: f64 = v
            .trim()
            .parse()
            .map_err(|_| anyhow!("row 2: runtimelimit of -W {wl}: {v:?}"))?;
        assert!(
            (got - minutes).abs() < 0.01,
            "row 2: -W {wl} is {minutes} min, bjobs says {got} (-M {mem})"
        );
    }
    assert_eq!(field(proj, "PROJ_NAME"), "contract_proj", "row 2: -P");
    let x = t.ok(
        "bjobs",
        &["-o", "exclusive", "-noheader", &excl.to_string()],
    )?;
    assert_eq!(x, "Y\n", "row 2: -x");

    // Row 13: the job's LSF environment.
    let pf = format!("par.{par}");
    let host = field(par, "EXEC_HOST");
    let h = host.trim_start_matches("2*").to_owned();
    assert!(
        host == format!("2*{h}") && !h.is_empty(),
        "row 2: -n 2 span[hosts=1] on one host: {host:?}"
    );
    assert_eq!(
        t.var(&pf, "LSB_JOBID"),
        Some(par.to_string()),
        "row 13: LSB_JOBID\n{}",
        t.file(&pf)
    );
    assert_eq!(
        t.var(&pf, "LSB_JOBINDEX").as_deref(),
        Some("0"),
        "row 13: LSB_JOBINDEX"
    );
    assert_eq!(
        t.var(&pf, "LSB_HOSTS"),
        Some(format!("{h} {h}")),
        "row 13: LSB_HOSTS one entry per slot"
    );
    let mcpu = t.var(&pf, "LSB_MCPU_HOSTS").unwrap_or_default();
    assert_eq!(
        mcpu.split_whitespace().collect::<Vec<_>>(),
        vec![h.as_str(), "2"],
        "row 13: LSB_MCPU_HOSTS {mcpu:?}"
    );
    assert_eq!(
        t.var(&pf, "LSB_DJOB_NUMPROC").as_deref(),
        Some("2"),
        "row 13: LSB_DJOB_NUMPROC"
    );
    assert_eq!(
        t.var(&pf, "HOSTFILE_LINES").as_deref(),
        Some("2"),
        "row 13: LSB_DJOB_HOSTFILE"
    );
    assert_eq!(
        t.var(&pf, "LSB_JOBNAME").as_deref(),
        Some("par_env"),
        "row 13: LSB_JOBNAME"
    );
    assert_eq!(
        t.var(&pf, "LSB_QUEUE").as_deref(),
        Some("normal"),
        "row 13: LSB_QUEUE"
    );
    assert_eq!(
        t.var(&pf, "LSF_ENVDIR"),
        Some(t.c.envdir.display().to_string()),
        "row 16: LSF_ENVDIR exported to jobs"
    );

    // Row 3.
    for (label, id, file) in &env_jobs {
        let out = t.file(file);
        let want = match *label {
            "none" => format!("CV=unset CX=unset ID={id}"),
            "var" => format!("CV=unset CX=val ID={id}"),
            "default" | "all" => format!("CV=from-submitter CX=unset ID={id}"),
            _ => format!("CV=from-submitter CX=val ID={id}"),
        };
        assert_eq!(
            out.lines().next(),
            Some(want.as_str()),
            "row 3: -env {label}:\n{out}"
        );
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
    let rr = t.ok(
        "bjobs",
        &["-o", "effective_resreq", "-noheader", &merged.to_string()],
    )?;
    assert!(
        rr.contains("hname!='hostA'") && rr.contains("hname!='hostB'"),
        "row 6: -R from the command line and #BSUB are merged: {rr:?}"
    );
    let rr = t.ok(
        "bjobs",
        &[
            "-o",
            "effective_resreq",
            "-noheader",
            &resreq_jobs[1].0.to_string(),
        ],
    )?;
    for part in ["rusage[tmp=10]", "affinity[core(1)]", "type==any"] {
        assert!(
            rr.contains(part),
            "row 6: repeated -R merged: {rr:?} lacks {part}"
        );
    }
    let pt = t.file(&format!("ptile.{ptile}"));
    let pt_hosts: Vec<&str> = pt.lines().next().unwrap_or("").split_whitespace().collect();
    assert!(
        pt_hosts.len() == 2 && pt_hosts[0] != pt_hosts[1],
        "row 6: span[ptile=1] with -n 2: {pt:?}"
    );

    // Row 8.
    assert_eq!(
        field(from_stdin, "JOB_NAME"),
        "stdin_bash",
        "row 8 / §11 I: indented #BSUB is a comment"
    );
    assert_eq!(
        field(from_stdin, "QUEUE"),
        "priority",
        "row 8 / §11 B: trailing # comment ignored"
    );
    assert_eq!(
        field(from_stdin, "PROJ_NAME"),
        "scripted_proj",
        "row 8 / §11 RS: trailing blanks"
    );
    let so = t.file(&format!("stdin.{from_stdin}"));
    assert!(
        so.starts_with("interp=/bin/bash "),
        "row 8: #!/bin/bash runs bash:\n{so}"
    );
    assert!(
        !so.lines().any(|l| l == "to-err"),
        "row 8: #BSUB -e after commands applies:\n{so}"
    );
    assert!(
        t.file(&format!("stdin_err.{from_stdin}"))
            .contains("to-err"),
        "row 8: #BSUB -e after commands"
    );
    for (label, id, want) in &shebangs {
        let out = t.file(&format!("shebang_{label}.out"));
        let interp = out
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("interp="))
            .unwrap_or("");
        assert_eq!(
            interp.split_whitespace().next(),
            Some(*want),
            "row 8: shebang {label} (job {id}):\n{out}"
        );
    }
    let ov = t.file(&format!("override.{overridden}"));
    assert_eq!(
        ov.lines().next(),
        Some("name=cli_name queue=normal"),
        "row 8: command line beats #BSUB:\n{ov}"
    );
    assert_eq!(
        t.file(&format!("wrong.{overridden}")),
        "",
        "row 8: -o from the command line wins"
    );

    // Row 9.
    let first_line = |f: &str| t.file(f).lines().next().unwrap_or("").to_owned();
    assert_eq!(
        first_line("cwd_abs.out"),
        other_s,
        "row 9: -cwd <abs> (job {cwd_abs})"
    );
    assert_eq!(
        first_line("cwd_rel.out"),
        other_s,
        "row 9: -cwd <relative> (job {cwd_rel})"
    );
    let sub_s = sub.to_string_lossy().into_owned();
    assert_eq!(
        first_line("cwd_dot.out"),
        sub_s,
        "row 9: -cwd . (job {cwd_dot})"
    );
    assert_eq!(
        first_line("cwd_default.out"),
        sub_s,
        "row 9: default is the submission directory (job {cwd_default})"
    );

    // Row 11.
    assert_eq!(
        first_line(&format!("words.{words}")),
        "a b c",
        "row 11: words joined"
    );
    assert_eq!(
        first_line(&format!("onestr.{one_string}")),
        "z  y|q r|",
        "row 11: inner quoting preserved"
    );
    assert_eq!(
        first_line(&format!("shscript.{sh_script}")),
        "script got arg1",
        "row 11: sh script"
    );
    assert_eq!(
        first_line(&format!("envbash.{env_bash}")),
        "script got arg2",
        "row 11: /usr/bin/env bash script"
    );
    assert_eq!(
        first_line(&format!("snake.{snake}")),
        "zero=r:k=v,k2=v2 one=--target-jobs=x y",
        "row 11: single-quoted line"
    );

    // Row 12.
    assert_eq!(
        first_line(&format!("spooled.{spooled}")),
        "spooled ran file_script",
        "row 12: spooled script"
    );
    assert_eq!(
        first_line(&format!("rel.{relative}")),
        "rel-ran",
        "row 12: relative script path"
    );

    // Row 18: "Successfully completed." / "Exited with exit code 3." two lines above
    // "Resource usage summary:".
    let ok_report = t.file(&format!("both.{both}"));
    assert_eq!(
        report_verdict(&ok_report).as_deref(),
        Some("Successfully completed."),
        "row 18:\n{ok_report}"
    );
    let bad_report = t.file(&format!("fail.{failing}"));
    assert_eq!(
        report_verdict(&bad_report).as_deref(),
        Some("Exited with exit code 3."),
        "row 18:\n{bad_report}"
    );
    assert_eq!(field(failing, "EXIT_CODE"), "3", "row 18: exit code");
    Ok(())
}

/// Rows 5, 7, 10, 14, 17 and 20, the messages and exit codes of §6, and §11 J, B,
/// G, CO/Q, F, T: what `bjobs` lists and how.
#[test]
fn bjobs_listings_filters_and_formats() -> Result<()> {
    let t = T::start("contract-bjobs", 3)?;

    // §6: nothing to show is not an error; unknown and malformed ids are.
    let o = t.run("bjobs", &[])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(0), "", "No unfinished job found\n"),
        "§6\n{}",
        o.show()
    );
    let o = t.run("bjobs", &["-a"])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(0), "", "No job found\n"),
        "§6\n{}",
        o.show()
    );
    let o = t.run("bjobs", &["999999"])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(255), "", "Job <999999> is not found\n"),
        "§6\n{}",
        o.show()
    );
    let o = t.run("bjobs", &["abc"])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(255), "", "abc: Illegal job ID.\n"),
        "§6\n{}",
        o.show()
    );

    // A finished, a failed, two running (one on two slots) and a pending job.
    let o = t.run("badmin", &["hclose", "hostC"])?;
    assert_eq!(o.code, Some(0), "badmin hclose\n{}", o.show());
    let done = t.submit(&["-J", "short_done", "-o", "/dev/null", "true"])?;
    let failed = t.submit(&["-J", "exit3", "-o", "/dev/null", "exit 3"])?;
    let long_name = "long_running_job_name_xyz";
    let run = t.submit(&[
        "-J",
        long_name,
        "-m",
        "hostA hostB",
        "-o",
        "/dev/null",
        "sleep 300",
    ])?;
    let par = t.submit_q(
        "priority",
        &[
            "-q",
            "priority",
            "-J",
            "prio_sleep",
            "-n",
            "2",
            "-R",
            "span[hosts=1]",
            "-m",
            "hostA hostB",
            "-o",
            "/dev/null",
            "sleep 300",
        ],
    )?;
    let pend = t.submit(&[
        "-J",
        "pend_closed",
        "-m",
        "hostC",
        "-o",
        "/dev/null",
        "true",
    ])?;
    t.wait_final(&[done, failed], JOB_DEADLINE)?;
    let r = t.wait_stat(run, "RUN", JOB_DEADLINE)?;
    let p = t.wait_stat(par, "RUN", JOB_DEADLINE)?;
    let m = t.jobs()?;
    assert_eq!(
        m[&pend]["STAT"], "PEND",
        "the job for a closed host pends: {:?}",
        m[&pend]
    );
    let from = r["FROM_HOST"].clone();
    let run_host = r["EXEC_HOST"].clone();
    let par_host = p["EXEC_HOST"].trim_start_matches("2*").to_owned();
    assert_eq!(
        p["EXEC_HOST"],
        format!("2*{par_host}"),
        "row 10: two slots on one host"
    );
    let ids_of = |out: &str| -> Vec<u64> {
        out.lines()
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect()
    };

    // Row 5: unfinished only without ids or -a; finished ones by id and with -a.
    let all_unfinished = vec![run, par, pend];
    let out = t.ok("bjobs", &[])?;
    assert_eq!(
        ids_of(&out),
        all_unfinished,
        "row 5: plain bjobs lists unfinished jobs:\n{out}"
    );
    let out = t.ok("bjobs", &[&done.to_string()])?;
    assert_eq!(
        ids_of(&out),
        vec![done],
        "row 5: a finished job by id:\n{out}"
    );
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|l| l.split_whitespace().nth(2) == Some("DONE")),
        "row 5:\n{out}"
    );
    let out = t.ok("bjobs", &["-a"])?;
    let mut every = vec![done, failed, run, par, pend];
    every.sort_unstable();
    let mut listed = ids_of(&out);
    listed.sort_unstable();
    assert_eq!(listed, every, "row 5: -a adds finished jobs:\n{out}");
    let o = t.run("bjobs", &[&done.to_string(), "999999"])?;
    assert_eq!(o.code, Some(255), "§6: known + unknown\n{}", o.show());
    assert_eq!(
        ids_of(&o.stdout),
        vec![done],
        "§6: rows of the known ones\n{}",
        o.show()
    );
    assert_eq!(o.stderr, "Job <999999> is not found\n", "§6\n{}", o.show());

    // Row 10: the default table, byte for byte up to the submit time.
    const HEADER: &str =
        "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME";
    let out = t.ok("bjobs", &[])?;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(HEADER),
        "row 10: header\n{out}"
    );
    let check_row = |line: &str, prefix: &str| {
        let rest = line.strip_prefix(prefix);
        assert!(
            rest.is_some_and(|r| r.len() == 14 && r.ends_with("  ") && is_table_time(&r[..12])),
            "row 10: want {prefix:?} + `%-14.14s` submit time, got\n{line:?}"
        );
    };
    let row_prefix = |id: u64, stat: &str, queue: &str, exec: &str, name: &str| {
        format!(
            "{} {} {} {} {} {} {} ",
            col(&id.to_string(), 7),
            col(&t.user, 7),
            col(stat, 5),
            col(queue, 10),
            col(&from, 11),
            col(exec, 11),
            col(name, 10)
        )
    };
    let line_of = |out: &str, id: u64| -> String {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(&id.to_string()))
            .unwrap_or("")
            .to_owned()
    };
    check_row(
        &line_of(&out, run),
        &row_prefix(run, "RUN", "normal", &run_host, long_name),
    );
    assert!(
        line_of(&out, run).contains(" *_name_xyz "),
        "row 10: `*` + last 9 characters\n{out}"
    );
    check_row(
        &line_of(&out, par),
        &row_prefix(
            par,
            "RUN",
            "priority",
            &format!("2*{par_host}"),
            "prio_sleep",
        ),
    );
    // §11 CO/Q: a pending job's EXEC_HOST is blank.
    check_row(
        &line_of(&out, pend),
        &row_prefix(pend, "PEND", "normal", "", "pend_closed"),
    );
    let out_nh = t.ok("bjobs", &["-noheader"])?;
    assert_eq!(
        out_nh,
        lines[1..]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
        "row 10: -noheader drops only the header"
    );
    // -w: nothing truncated, pending EXEC_HOST is `-`.
    let wide = t.ok("bjobs", &["-w"])?;
    assert_eq!(wide.lines().next(), Some(HEADER), "row 10: -w header");
    let wr: Vec<String> = line_of(&wide, run)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        wr.get(..7).map(<[String]>::to_vec),
        Some(vec![
            run.to_string(),
            t.user.clone(),
            "RUN".into(),
            "normal".into(),
            from.clone(),
            run_host.clone(),
            long_name.into()
        ]),
        "row 10: -w row\n{wide}"
    );
    let wp: Vec<String> = line_of(&wide, par)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let joined = format!("{par_host}:{par_host}");
    let short = format!("2*{par_host}");
    assert!(
        wp.get(5).is_some_and(|h| *h == joined || *h == short),
        "row 10: -w exec hosts\n{wide}"
    );
    let wpend_line = line_of(&wide, pend);
    let wpend: Vec<&str> = wpend_line.split_whitespace().collect();
    assert_eq!(
        wpend.get(5).copied(),
        Some("-"),
        "row 10: -w pending EXEC_HOST\n{wide}"
    );

    // Row 7: -o.
    let d = done.to_string();
    let o_out = |args: &[&str]| t.ok("bjobs", args);
    assert_eq!(
        o_out(&["-o", "jobid stat queue", &d])?,
        format!("JOBID STAT QUEUE\n{done} DONE normal\n"),
        "row 7: un-sized fields, value + one space"
    );
    assert_eq!(
        o_out(&["-o", "jobid stat queue", "-noheader", &d])?,
        format!("{done} DONE normal\n"),
        "row 7: -noheader"
    );
    assert_eq!(
        o_out(&["-o", "id st", &d])?,
        format!("JOBID STAT\n{done} DONE\n"),
        "row 7: aliases id, st"
    );
    assert_eq!(
        o_out(&["-o", "JobID STAT Queue", "-noheader", &d])?,
        format!("{done} DONE normal\n"),
        "row 7: case-insensitive names"
    );
    assert_eq!(
        o_out(&["-o", "jobid:10 stat:6 queue:", &d])?,
        format!(
            "{:<10} {:<6} QUEUE\n{:<10} {:<6} normal\n",
            "JOBID", "STAT", done, "DONE"
        ),
        "row 7: fixed widths, no trailing blanks"
    );
    let cut = o_out(&["-o", "job_name:5", "-noheader", &run.to_string()])?;
    assert_eq!(
        cut.trim_end_matches('\n').chars().count(),
        5,
        "row 7: name:N truncates: {cut:?}"
    );
    assert_eq!(
        o_out(&["-o", "jobid stat queue delimiter='|'", "-noheader", &d])?,
        format!("{done}|DONE|normal\n"),
        "row 7: delimiter"
    );
    assert_eq!(
        o_out(&[
            "-o",
            "jobid exec_host exit_reason",
            "-noheader",
            &pend.to_string()
        ])?,
        format!("{pend} - -\n"),
        "row 7: empty values print -"
    );
    // §11 B: `RUN hostA` split on one space; F: the line ends with the queue.
    assert_eq!(
        o_out(&["-o", "stat exec_host", "-noheader", &run.to_string()])?,
        format!("RUN {run_host}\n"),
        "§11 B"
    );
    assert_eq!(
        o_out(&["-o", "jobid queue", "-noheader", &run.to_string()])?,
        format!("{run} normal\n"),
        "§11 F"
    );
    // §11 G: every line of `bjobs -a -o "id stat" -noheader` is exactly two tokens.
    let g = o_out(&["-a", "-o", "id stat", "-noheader"])?;
    assert!(
        g.lines().count() == 5 && g.lines().all(|l| l.split_whitespace().count() == 2),
        "§11 G:\n{g}"
    );
    // Every field clients use, with a delimiter: 15 parts, none empty.
    let used = "jobid stat user queue exec_host exit_code exit_reason kill_reason suspend_reason pend_reason start_time submit_time finish_time job_name command";
    let all_o = o_out(&["-a", "-o", &format!("{used} delimiter='^'")])?;
    let mut all_lines = all_o.lines();
    assert_eq!(
        all_lines.next().map(str::to_owned),
        Some(used.to_uppercase().replace(' ', "^")),
        "row 7: header names"
    );
    for l in all_lines {
        let parts: Vec<&str> = l.split('^').collect();
        assert!(
            parts.len() == 15 && parts.iter().all(|p| !p.is_empty()),
            "row 7: 15 values, `-` when empty: {l:?}"
        );
    }
    let plain_all = o_out(&["-a", "-o", used])?;
    assert!(
        plain_all
            .lines()
            .all(|l| !l.ends_with(' ') && !l.ends_with('\t')),
        "row 7: no trailing blanks:\n{plain_all}"
    );
    // §6: -o -noheader for an unknown id: empty stdout (G reads that as "forgotten").
    let o = t.run("bjobs", &["-o", "stat", "-noheader", "999999"])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(255), "", "Job <999999> is not found\n"),
        "§6\n{}",
        o.show()
    );

    // Row 14: filters.
    let sorted = |mut v: Vec<u64>| {
        v.sort_unstable();
        v
    };
    let ids = |args: &[&str]| -> Result<Vec<u64>> { Ok(sorted(ids_of(&t.ok("bjobs", args)?))) };
    assert_eq!(
        ids(&["-p", "-r"])?,
        sorted(vec![run, par, pend]),
        "row 14: -p -r = pending or running"
    );
    assert_eq!(ids(&["-pr"])?, sorted(vec![run, par, pend]), "row 14: -pr");
    assert_eq!(ids(&["-p"])?, vec![pend], "row 14: -p");
    assert_eq!(ids(&["-r"])?, sorted(vec![run, par]), "row 14: -r");
    assert_eq!(
        ids(&["-u", &t.user])?,
        sorted(vec![run, par, pend]),
        "row 14: -u <user>"
    );
    assert_eq!(
        ids(&["-u", "all"])?,
        sorted(vec![run, par, pend]),
        "row 14: -u all"
    );
    assert_eq!(ids(&["-q", "priority"])?, vec![par], "row 14: -q");
    assert_eq!(
        ids(&["-a", "-q", "normal"])?,
        sorted(vec![done, failed, run, pend]),
        "row 14: -a -q"
    );
    assert_eq!(ids(&["-J", "long_*"])?, vec![run], "row 14: -J prefix*");
    assert_eq!(
        ids(&["-J", "*_running_*"])?,
        vec![run],
        "row 14: -J *infix*"
    );
    assert_eq!(ids(&["-aJ", "short_done"])?, vec![done], "row 14: -aJ");
    assert_eq!(
        ids(&["-a", "-J", "*o*"])?,
        sorted(vec![done, run, par, pend]),
        "row 14: -a -J *o*"
    );
    let o = t.run("bjobs", &["-J", "nomatch_*"])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(255), "", "Job <nomatch_*> is not found\n"),
        "§6: -J without a match\n{}",
        o.show()
    );

    // Row 17 and §11 J, T: -json.
    let o = t.run(
        "bjobs",
        &[
            "-json",
            "-o",
            "jobid stat exit_code exit_reason kill_reason suspend_reason start_time",
            &d,
            &failed.to_string(),
            "999999",
        ],
    )?;
    assert_eq!(
        o.code,
        Some(0),
        "row 17: -json exits 0 even with unknown ids\n{}",
        o.show()
    );
    let v: serde_json::Value = serde_json::from_str(&o.stdout)
        .with_context(|| format!("row 17: stdout is only the JSON document\n{}", o.show()))?;
    assert_eq!(v["COMMAND"], "bjobs", "row 17");
    let recs = v["RECORDS"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        v["JOBS"],
        serde_json::json!(recs.len()),
        "row 17: JOBS counts RECORDS\n{}",
        o.stdout
    );
    assert_eq!(recs.len(), 3, "row 17\n{}", o.stdout);
    for r in &recs {
        let obj = r.as_object().cloned().unwrap_or_default();
        assert!(
            obj.iter()
                .all(|(k, v)| v.is_string() && *k == k.to_uppercase()),
            "row 17: upper-case keys, string values: {r}"
        );
    }
    let by_id = |id: &str| {
        recs.iter()
            .find(|r| r["JOBID"] == id)
            .cloned()
            .unwrap_or_default()
    };
    let rd = by_id(&d);
    let rf = by_id(&failed.to_string());
    assert_eq!(rd["STAT"], "DONE", "row 17: {rd}");
    assert_eq!(rf["STAT"], "EXIT", "row 17: {rf}");
    assert_eq!(rf["EXIT_CODE"], "3", "§11 T: EXIT_CODE: {rf}");
    for r in [&rd, &rf] {
        for k in ["EXIT_REASON", "KILL_REASON", "SUSPEND_REASON"] {
            assert_eq!(
                r[k], "",
                "§11 J: {k} is \"\" for an ordinary job (even one exiting 3): {r}"
            );
        }
        assert!(
            r["START_TIME"].as_str().is_some_and(is_table_time),
            "§11 T: START_TIME like `Jun 20 10:46`: {r}"
        );
    }
    assert_eq!(
        by_id("999999"),
        serde_json::json!({"JOBID": "999999", "ERROR": "Job <999999> is not found"}),
        "row 17: ERROR record"
    );
    let o = t.ok("bjobs", &["-json", &d])?;
    let v: serde_json::Value = serde_json::from_str(&o)?;
    let keys: Vec<String> = v["RECORDS"][0]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let mut want: Vec<String> = [
        "JOBID",
        "USER",
        "STAT",
        "QUEUE",
        "FROM_HOST",
        "EXEC_HOST",
        "JOB_NAME",
        "SUBMIT_TIME",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    want.sort();
    let mut got = keys;
    got.sort();
    assert_eq!(got, want, "row 17: default -json fields\n{o}");
    // §11 J: every state shown is one of LSF's.
    let states = [
        "PEND", "PSUSP", "RUN", "USUSP", "SSUSP", "DONE", "EXIT", "UNKWN", "WAIT", "ZOMBI", "PROV",
    ];
    for l in t.ok("bjobs", &["-a", "-o", "stat", "-noheader"])?.lines() {
        assert!(states.contains(&l), "§11 J: unknown state {l:?}");
    }

    // Row 20: bjobs -l.
    let check_long = |id: u64, must: &[String]| -> Result<String> {
        let l = t.ok("bjobs", &["-l", &id.to_string()])?;
        assert!(
            l.lines().all(|x| x.chars().count() <= 79),
            "row 20: lines wrap at 79 columns:\n{l}"
        );
        let flat = unwrap_long(&l);
        for m in must {
            assert!(
                flat.contains(m.as_str()),
                "row 20: `{m}` missing from bjobs -l:\n{l}"
            );
        }
        Ok(flat)
    };
    check_long(
        done,
        &[
            format!(
                "Job <{done}>, Job Name <short_done>, User <{}>, Project <default>, Status <DONE>, Queue <normal>, Command <true>",
                t.user
            ),
            "Submitted from host".into(),
            "Started 1 Task(s) on Host(s)".into(),
            "Done successfully.".into(),
        ],
    )?;
    check_long(
        failed,
        &["Status <EXIT>".into(), "Exited with exit code 3.".into()],
    )?;
    check_long(pend, &["Status <PEND>".into(), "PENDING REASONS:".into()])?;
    // toil: `Command ?<(.*?)>` and `MAX ?MEM: ?(.*?);` once usage is collected.
    let flat = wait_for(
        "row 20: MAX MEM of a running job",
        Duration::from_secs(45),
        || {
            let l = t.ok("bjobs", &["-l", &run.to_string()]).unwrap_or_default();
            let flat = unwrap_long(&l);
            (flat.contains("MAX MEM:").then(|| flat.clone()), l)
        },
    )?;
    assert_eq!(
        angle_after(&flat, "Command "),
        Some("sleep 300"),
        "row 20: Command <…>\n{flat}"
    );
    let after = flat.split("MAX MEM:").nth(1).unwrap_or("");
    assert!(
        after.contains(';') && after.split(';').next().is_some_and(|v| v.contains("bytes")),
        "row 20: `MAX MEM: N Mbytes;`\n{flat}"
    );

    // The end: kill what runs, and "nothing unfinished" again.
    let o = t.run(
        "bkill",
        &[&run.to_string(), &par.to_string(), &pend.to_string()],
    )?;
    assert_eq!(o.code, Some(0), "bkill\n{}", o.show());
    t.wait_final(&[run, par, pend], JOB_DEADLINE)?;
    let o = t.run("bjobs", &[])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(0), "", "No unfinished job found\n"),
        "§6\n{}",
        o.show()
    );
    Ok(())
}

/// Row 4 (and §5, §6, §11 J), row 18's `TERM_…` lines, rows 28, 29 and 30: job control
/// messages and exit codes, then what lsb.events, `bhist` and `bacct` show.
#[test]
fn job_control_event_log_and_history() -> Result<()> {
    // 4 hosts of 2 slots: the run-limit job and six sleepers run at once.
    let t = T::start("contract-kill", 4)?;
    // First, the run-limit job: one minute before its TERM_RUNLIMIT.
    let runlimit = t.submit(&["-W", "1", "-o", "rl.out", "-e", "rl.err", "sleep 300"])?;

    let sleeper = |name: &str| {
        t.submit(&[
            "-J",
            name,
            "-o",
            &format!("{name}.out"),
            "-e",
            &format!("{name}.err"),
            "sleep 300",
        ])
    };
    let k1 = sleeper("k1")?;
    let k2 = sleeper("k2")?;
    let k_d = sleeper("k_d")?;
    let k_r = sleeper("k_r")?;
    let stopme = sleeper("stopme")?;
    let sig = t.submit(&[
        "-o",
        "sig.out",
        "trap 'echo got-usr1; exit 0' USR1; while :; do sleep 0.2; done",
    ])?;
    for id in [k1, k2, k_d, k_r, stopme, sig] {
        t.wait_stat(id, "RUN", JOB_DEADLINE)?;
    }
    let o = t.run("badmin", &["hclose", "all"])?;
    assert_eq!(o.code, Some(0), "badmin hclose all\n{}", o.show());
    let pending = t.submit(&["-o", "/dev/null", "true"])?;

    // Row 4: one line per job on stdout, exit 0.
    let o = t.run("bkill", &[&k1.to_string()])?;
    assert_eq!(
        (o.code, o.stdout.clone(), o.stderr.as_str()),
        (Some(0), format!("Job <{k1}> is being terminated\n"), ""),
        "row 4\n{}",
        o.show()
    );
    let o = t.run("bkill", &[&k2.to_string(), "999999"])?;
    assert_eq!(
        o.code,
        Some(255),
        "row 4: one unknown id fails the call\n{}",
        o.show()
    );
    assert_eq!(
        o.stdout,
        format!("Job <{k2}> is being terminated\n"),
        "row 4\n{}",
        o.show()
    );
    assert_eq!(
        o.stderr,
        "Job <999999>: No matching job found\n",
        "row 4\n{}",
        o.show()
    );
    let o = t.run("bkill", &["999999"])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(255), "", "Job <999999>: No matching job found\n"),
        "row 4\n{}",
        o.show()
    );
    let o = t.run("bkill", &["abc"])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(255), "", "abc: Illegal job ID.\n"),
        "§6 / §11 RS\n{}",
        o.show()
    );
    // bkill -d (kill, record DONE), -r (force removal), -s (signal), a pending job.
    let o = t.run("bkill", &["-d", &k_d.to_string()])?;
    assert_eq!(
        (o.code, o.stdout.clone()),
        (Some(0), format!("Job <{k_d}> is being terminated\n")),
        "row 4: bkill -d\n{}",
        o.show()
    );
    let o = t.run("bkill", &["-r", &k_r.to_string()])?;
    assert_eq!(o.code, Some(0), "row 4: bkill -r\n{}", o.show());
    assert!(
        o.stdout.starts_with(&format!("Job <{k_r}> is being ")),
        "row 4: bkill -r\n{}",
        o.show()
    );
    let o = t.run("bkill", &["-s", "USR1", &sig.to_string()])?;
    assert_eq!(
        (o.code, o.stdout.clone()),
        (Some(0), format!("Job <{sig}> is being signaled\n")),
        "row 4: bkill -s\n{}",
        o.show()
    );
    let o = t.run("bkill", &[&pending.to_string()])?;
    assert_eq!(
        (o.code, o.stdout.clone()),
        (Some(0), format!("Job <{pending}> is being terminated\n")),
        "§5: bkill of a pending job\n{}",
        o.show()
    );
    // §5: bstop / bresume.
    let o = t.run("bstop", &[&stopme.to_string()])?;
    assert_eq!(
        (o.code, o.stdout.clone()),
        (Some(0), format!("Job <{stopme}> is being stopped\n")),
        "§5 bstop\n{}",
        o.show()
    );
    t.wait_stat(stopme, "USUSP", JOB_DEADLINE)?;
    let o = t.run("bresume", &[&stopme.to_string()])?;
    assert_eq!(
        (o.code, o.stdout.clone()),
        (Some(0), format!("Job <{stopme}> is being resumed\n")),
        "§5 bresume\n{}",
        o.show()
    );
    t.wait_stat(stopme, "RUN", JOB_DEADLINE)?;
    let o = t.run("bkill", &[&stopme.to_string()])?;
    assert_eq!(o.code, Some(0), "{}", o.show());

    let m = t.wait_final(&[k1, k2, k_d, k_r, sig, pending, stopme], JOB_DEADLINE)?;
    let stat = |id: u64| {
        m.get(&id)
            .and_then(|r| r.get("STAT").cloned())
            .unwrap_or_default()
    };
    assert_eq!(stat(k1), "EXIT", "§5: bkill ends EXIT");
    let l = unwrap_long(&t.ok("bjobs", &["-l", &k1.to_string()])?);
    assert!(
        l.contains("TERM_OWNER"),
        "row 20: TERM_OWNER in bjobs -l\n{l}"
    );
    assert!(
        m[&k1]["EXIT_REASON"].starts_with("TERM_OWNER"),
        "§4.3: exit reason of bkill: {:?}",
        m[&k1]
    );
    assert_eq!(stat(k_d), "DONE", "row 4: bkill -d records DONE");
    assert_eq!(stat(k_r), "EXIT", "row 4: bkill -r");
    assert_eq!(stat(pending), "EXIT", "§5: a killed pending job is EXIT");
    assert_eq!(
        stat(sig),
        "DONE",
        "row 4: bkill -s USR1 reached the job's trap"
    );
    assert!(
        t.file("sig.out").lines().any(|l| l == "got-usr1"),
        "row 4: bkill -s USR1\n{}",
        t.file("sig.out")
    );
    // Finished: `Job has already finished`, exit 255 (§11 J matches it).
    let o = t.run("bkill", &[&k1.to_string()])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.clone()),
        (
            Some(255),
            "",
            format!("Job <{k1}>: Job has already finished\n")
        ),
        "row 4\n{}",
        o.show()
    );
    // Row 18: TERM_OWNER in the report.
    let k1_out = t.file("k1.out");
    assert!(
        k1_out.contains("TERM_OWNER: job killed by owner."),
        "row 18: TERM_OWNER line\n{k1_out}"
    );
    assert!(
        report_verdict(&k1_out).is_some_and(|v| v.starts_with("Exited with exit code")),
        "row 18\n{k1_out}"
    );

    // Rows 28-30 on two plain jobs, one with a project.
    let o = t.run("badmin", &["hopen", "all"])?;
    assert_eq!(o.code, Some(0), "badmin hopen all\n{}", o.show());
    let ok_job = t.submit(&["-J", "ev_done", "-o", "/dev/null", "true"])?;
    let bad_job = t.submit(&[
        "-J",
        "ev_exit",
        "-P",
        "ev_proj",
        "-o",
        "/dev/null",
        "exit 2",
    ])?;
    t.wait_final(&[ok_job, bad_job], JOB_DEADLINE)?;

    // Row 28: $LSB_SHAREDIR/<cluster>/logdir/lsb.events, read like snakemake's gawk.
    let conf = std::fs::read_to_string(t.c.envdir.join("lsf.conf"))?;
    let sharedir = conf_value(&conf, "LSB_SHAREDIR")
        .ok_or_else(|| anyhow!("row 16: no LSB_SHAREDIR in lsf.conf"))?;
    let events_path = Path::new(&sharedir).join("basalt/logdir/lsb.events");
    let events = std::fs::read_to_string(&events_path)
        .with_context(|| format!("row 28: {}", events_path.display()))?;
    let mut new_seen = BTreeMap::new();
    let mut statuses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in events.lines() {
        let f = gawk_fields(line);
        match f.first().map(String::as_str) {
            Some("\"JOB_NEW\"") if f.len() > 41 => {
                assert!(f[1].starts_with("\"10."), "row 28: JOB_NEW version: {line}");
                new_seen.insert(f[3].clone(), (f[4].clone(), f[41].clone()));
            }
            Some("\"JOB_STATUS\"") if f.len() > 4 => {
                statuses.entry(f[3].clone()).or_default().push(f[4].clone());
            }
            _ => {}
        }
    }
    for (id, name, final_status) in [(ok_job, "ev_done", "64"), (bad_job, "ev_exit", "32")] {
        let key = id.to_string();
        assert_eq!(
            new_seen.get(&key),
            Some(&(t.uid.clone(), format!("\"{name}\""))),
            "row 28: JOB_NEW $4 id, $5 uid, $42 name"
        );
        let seen: Vec<&String> = statuses
            .get(&key)
            .map(|v| v.iter().filter(|s| *s != "192").collect())
            .unwrap_or_default();
        assert_eq!(
            seen.last().map(|s| s.as_str()),
            Some(final_status),
            "row 28: last JOB_STATUS $5 of job {id} (192 skipped): {seen:?}"
        );
    }

    // Row 29 and §11 S: `bhist -l -a`; a line that mentions Project holds `Project <…>`.
    let h = t.ok("bhist", &["-l", "-a"])?;
    for l in h.lines().filter(|l| l.contains("Project")) {
        assert!(
            angle_after(l, "Project ").is_some(),
            "§11 S: `Project` without `Project <…>` on one line: {l:?}\n{h}"
        );
    }
    let flat = unwrap_long(&h);
    assert!(flat.contains("Project <default>"), "row 29\n{h}");
    assert!(flat.contains("Project <ev_proj>"), "row 29\n{h}");
    assert_eq!(
        flat.matches("Project <").count(),
        flat.matches("\nJob <").count() + usize::from(flat.starts_with("Job <")),
        "row 29: one Project <…> per job\n{h}"
    );

    // Row 30.
    let a = t.ok("bacct", &["-l", &ok_job.to_string()])?;
    assert!(a.contains("Completed <done>"), "row 30\n{a}");
    let a = t.ok("bacct", &["-l", &bad_job.to_string()])?;
    assert!(a.contains("Completed <exit>"), "row 30\n{a}");

    // Row 18 / §9: TERM_RUNLIMIT in the report and at the start of a line of the -e file.
    let r = t.wait_stat(runlimit, "EXIT", Duration::from_secs(120))?;
    assert!(
        r["EXIT_REASON"].starts_with("TERM_RUNLIMIT"),
        "row 18: {r:?}"
    );
    let rl_out = t.file("rl.out");
    assert!(
        rl_out.lines().any(|l| l.starts_with("TERM_RUNLIMIT:")),
        "row 18: TERM_RUNLIMIT in the -o report\n{rl_out}"
    );
    let rl_err = t.file("rl.err");
    assert!(
        rl_err.lines().any(|l| l.starts_with("TERM_RUNLIMIT:")),
        "§9 (MQ): a `TERM_RUNLIMIT:` line in the -e file\n{rl_err}"
    );
    Ok(())
}

/// Rows 16, 21, 22, 24, 25, 26 and 27, and §11 T, S: the installation layout clients
/// read and the admin reports (`bparams -a`, `lsadmin showconf lim`, `badmin showconf
/// mbd`, `lsid`, `lsclusters`), plus the rest of `lsadmin`.
#[test]
fn installation_layout_and_admin_reports() -> Result<()> {
    let t = T::start("contract-admin", 2)?;

    // Row 16: $LSF_ENVDIR/lsf.conf, `KEY=VALUE` lines with the keys clients read.
    let conf = std::fs::read_to_string(t.c.envdir.join("lsf.conf")).context("row 16: lsf.conf")?;
    for l in conf
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (k, _) = l.split_once('=').unwrap_or(("", ""));
        assert!(
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
            "row 16: not a KEY=VALUE line: {l:?}"
        );
    }
    // dask scans bottom-up for LSF_UNIT_FOR_LIMITS and takes the first letter after '='.
    let unit_line = conf
        .lines()
        .rev()
        .find(|l| l.starts_with("LSF_UNIT_FOR_LIMITS"));
    assert_eq!(unit_line, Some("LSF_UNIT_FOR_LIMITS=MB"), "row 16");
    let confdir = conf_value(&conf, "LSF_CONFDIR").ok_or_else(|| anyhow!("row 16: LSF_CONFDIR"))?;
    let sharedir =
        conf_value(&conf, "LSB_SHAREDIR").ok_or_else(|| anyhow!("row 16: LSB_SHAREDIR"))?;
    assert!(
        Path::new(&sharedir)
            .join("basalt/logdir/lsb.events")
            .is_file(),
        "row 28: lsb.events under LSB_SHAREDIR"
    );

    // Row 27: lsb.params with DEFAULT_QUEUE = normal inside Begin/End Parameters.
    let params_path = Path::new(&confdir).join("lsbatch/basalt/configdir/lsb.params");
    let params = std::fs::read_to_string(&params_path)
        .with_context(|| format!("row 27: {}", params_path.display()))?;
    let mut inside = false;
    let mut default_queue = None;
    for l in params.lines() {
        let l = l.trim();
        if l.starts_with("Begin Parameters") {
            inside = true;
        } else if l.starts_with("End Parameters") {
            inside = false;
        } else if inside && l.starts_with("DEFAULT_QUEUE") {
            // snakemake: split on the first '=', cut the value at '#'.
            default_queue = l
                .split_once('=')
                .map(|(_, v)| v.split('#').next().unwrap_or("").trim().to_owned());
        }
    }
    assert_eq!(default_queue.as_deref(), Some("normal"), "row 27\n{params}");
    for f in ["lsb.queues", "lsb.hosts"] {
        assert!(
            params_path.with_file_name(f).is_file(),
            "§10: {f} next to lsb.params"
        );
    }

    // Row 21: lsid.
    let lsid = t.ok("lsid", &[])?;
    let line1 = lsid.lines().next().unwrap_or("");
    let first_dotted = line1
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|w| w.contains('.') && w.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or("");
    assert!(
        first_dotted.starts_with("10."),
        "row 21: first dotted number of line 1 is 10.x: {line1:?}"
    );
    assert!(
        lsid.contains("\nMy cluster name is basalt\n"),
        "row 21\n{lsid}"
    );
    assert!(
        lsid.contains("\nMy master name is hostA\n"),
        "row 21\n{lsid}"
    );

    // Row 22 and §11 T: bparams -a and lsadmin showconf lim.
    let kv_report = |cmd: &str, args: &[&str], header: &str| -> Result<String> {
        let o = t.run(cmd, args)?;
        assert_eq!(o.code, Some(0), "row 22: {cmd} {args:?}\n{}", o.show());
        let mut lines = o.stdout.lines();
        let first = lines.next().unwrap_or("");
        assert!(
            first.starts_with(header) && !first.contains('='),
            "row 22: {cmd} header {first:?}"
        );
        for l in lines {
            assert!(
                is_key_value(l),
                "row 22: {cmd}: not `    KEY = VALUE`: {l:?}\n{}",
                o.stdout
            );
        }
        Ok(o.stdout)
    };
    let bp = kv_report("bparams", &["-a"], "")?;
    assert!(
        bp.contains("\n    DEFAULT_QUEUE = normal\n"),
        "row 22: bparams -a\n{bp}"
    );
    let lim = kv_report("lsadmin", &["showconf", "lim"], "LIM configuration at ")?;
    // toil: lines split on '=' into exactly two tokens; LSF_UNIT_FOR_LIMITS found.
    let unit = lim.lines().filter_map(|l| {
        let parts: Vec<&str> = l.split('=').collect();
        (parts.len() == 2 && parts[0].trim() == "LSF_UNIT_FOR_LIMITS")
            .then(|| parts[1].trim().to_owned())
    });
    assert_eq!(
        unit.collect::<Vec<_>>(),
        vec!["MB".to_owned()],
        "§11 T: LSF_UNIT_FOR_LIMITS from lsadmin\n{lim}"
    );
    let at = lim
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("LIM configuration at "))
        .unwrap_or("");
    assert!(
        at.len() == 24 && at[20..].parse::<u32>().is_ok(),
        "row 22: ctime in the header: {at:?}"
    );
    let one = kv_report(
        "lsadmin",
        &["showconf", "lim", "hostB"],
        "LIM configuration for host <hostB> at ",
    )?;
    assert!(
        one.contains("\n    LSF_UNIT_FOR_LIMITS = MB\n"),
        "lsadmin showconf lim hostB\n{one}"
    );
    let o = t.run("lsadmin", &["showconf", "lim", "-h", "nosuchhost"])?;
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(255), ""),
        "lsadmin: unknown host\n{}",
        o.show()
    );
    assert!(o.stderr.contains("nosuchhost"), "{}", o.show());

    // Row 25 and §11 S: badmin showconf mbd.
    let mbd = kv_report("badmin", &["showconf", "mbd"], "MBD configuration at ")?;
    for k in ["LSB_SHAREDIR", "LSF_CONFDIR", "LSF_UNIT_FOR_LIMITS"] {
        assert!(
            mbd.lines().any(|l| l.starts_with(&format!("    {k} = "))),
            "row 25: {k}\n{mbd}"
        );
    }
    let unit = mbd
        .lines()
        .find_map(|l| l.strip_prefix("    LSF_UNIT_FOR_LIMITS = "))
        .unwrap_or("");
    assert!(
        unit.starts_with(['K', 'M', 'G', 'T']),
        "§11 S: LSF_UNIT_FOR_LIMITS starts with K/M/G/T: {unit:?}"
    );

    // Row 26: lsclusters (plain and -w, which snakemake's shell=True really runs plain).
    for args in [&[][..], &["-w"][..]] {
        let out = t.ok("lsclusters", args)?;
        let mut lines = out.lines();
        assert!(
            lines.next().is_some_and(|h| h.starts_with("CLUSTER_NAME")),
            "row 26\n{out}"
        );
        assert_eq!(
            lines.next().and_then(|l| l.split_whitespace().next()),
            Some("basalt"),
            "row 26: first token of line 2\n{out}"
        );
    }

    // Row 24: -V exits 0 and prints the version (LSF: on stderr).
    for cmd in ["bsub", "bjobs", "bkill", "lsadmin", "bparams", "badmin"] {
        let o = t.run(cmd, &["-V"])?;
        assert_eq!(o.code, Some(0), "row 24: {cmd} -V\n{}", o.show());
        let text = format!("{}{}", o.stdout, o.stderr);
        assert!(
            text.contains("10.1"),
            "row 24: {cmd} -V prints the version\n{}",
            o.show()
        );
    }

    // The rest of lsadmin: ckconfig, -h, and refused daemon control.
    let o = t.run("lsadmin", &["ckconfig"])?;
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (
            Some(0),
            "",
            "Checking configuration files ...\n\nNo errors found.\n"
        ),
        "lsadmin ckconfig\n{}",
        o.show()
    );
    let o = t.run("lsadmin", &["ckconfig", "-v"])?;
    assert_eq!(o.code, Some(0), "lsadmin ckconfig -v\n{}", o.show());
    assert!(
        o.stderr.contains("Reading configuration from ")
            && o.stderr.ends_with("No errors found.\n"),
        "{}",
        o.show()
    );
    let o = t.run("lsadmin", &["-h"])?;
    assert!(
        o.code == Some(0) && o.stderr.starts_with("Usage: lsadmin"),
        "lsadmin -h\n{}",
        o.show()
    );
    for sub in [
        "limlock",
        "limunlock",
        "resstartup",
        "resshutdown",
        "resrestart",
    ] {
        let o = t.run("lsadmin", &[sub])?;
        assert_eq!(
            (o.code, o.stdout.as_str()),
            (Some(255), ""),
            "lsadmin {sub}\n{}",
            o.show()
        );
        assert_eq!(
            o.stderr,
            format!("lsadmin: {sub}: not supported by Basalt yet\n"),
            "lsadmin {sub}"
        );
    }
    let o = t.run("lsadmin", &["bogus"])?;
    assert!(
        o.code == Some(255) && o.stderr.contains("Invalid command <bogus>"),
        "{}",
        o.show()
    );
    // A broken lsf.shared: ckconfig names the problem and fails.
    let shared = Path::new(&confdir).join("lsf.shared");
    let text = std::fs::read_to_string(&shared)?;
    std::fs::write(
        &shared,
        text.replacen("Begin Cluster", "Begin Cluster\nnot a cluster line (", 1),
    )?;
    let o = t.run("lsadmin", &["ckconfig"])?;
    std::fs::write(&shared, text)?;
    assert_eq!(
        o.code,
        Some(255),
        "lsadmin ckconfig on a broken lsf.shared\n{}",
        o.show()
    );
    assert!(
        o.stderr.contains("lsf.shared") && o.stderr.ends_with("There are fatal errors.\n"),
        "{}",
        o.show()
    );
    Ok(())
}

/// Row 19: job arrays — `-J "name[1-n]"` (and `%k`), `%I` in paths, `LSB_JOBINDEX`
/// from 1, `LSB_JOBID` the array's id, ids written `N[i]` for `bjobs` and `bkill`.
#[test]
fn job_arrays() -> Result<()> {
    let t = T::start("contract-arrays", 2)?;
    let arr = t.submit(&[
        "-J",
        "arr[1-3]",
        "-o",
        "arr.%J.%I",
        "echo idx=$LSB_JOBINDEX id=$LSB_JOBID",
    ])?;
    let limited = t.submit(&["-J", "lim[1-4]%2", "-o", "/dev/null", "true"])?;
    let sleepy = t.submit(&["-J", "sl[1-2]", "-o", "/dev/null", "sleep 300"])?;
    // bjobs by array id: one row per element, named name[i].
    let rows = |id: u64| -> Result<Vec<(String, String)>> {
        let out = t.ok(
            "bjobs",
            &[
                "-a",
                "-o",
                "jobid job_name stat",
                "-noheader",
                &id.to_string(),
            ],
        )?;
        Ok(out
            .lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.len() == 3 && w[0] == id.to_string()).then(|| (w[1].to_owned(), w[2].to_owned()))
            })
            .collect())
    };
    let all_done = |id: u64, n: usize| {
        move || match rows(id) {
            Ok(r) => (
                (r.len() == n && r.iter().all(|(_, s)| s == "DONE")).then_some(()),
                format!("{r:?}"),
            ),
            Err(e) => (None, e.to_string()),
        }
    };
    wait_for(
        "row 19: every element of arr[1-3] DONE",
        JOB_DEADLINE,
        all_done(arr, 3),
    )?;
    wait_for(
        "row 19: every element of lim[1-4]%2 DONE",
        JOB_DEADLINE,
        all_done(limited, 4),
    )?;
    let names: Vec<String> = rows(arr)?.into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        vec!["arr[1]", "arr[2]", "arr[3]"],
        "row 19: element names"
    );
    for i in 1..=3 {
        let out = t.file(&format!("arr.{arr}.{i}"));
        assert_eq!(
            out.lines().next(),
            Some(format!("idx={i} id={arr}").as_str()),
            "row 19: %I, LSB_JOBINDEX, LSB_JOBID"
        );
    }
    let one = t.ok(
        "bjobs",
        &[
            "-o",
            "jobid job_name stat",
            "-noheader",
            &format!("{arr}[2]"),
        ],
    )?;
    assert_eq!(one, format!("{arr} arr[2] DONE\n"), "row 19: bjobs N[i]");
    wait_for("row 19: sl[1-2] running", JOB_DEADLINE, || {
        match rows(sleepy) {
            Ok(r) => (
                (r.len() == 2 && r.iter().all(|(_, s)| s == "RUN")).then_some(()),
                format!("{r:?}"),
            ),
            Err(e) => (None, e.to_string()),
        }
    })?;
    let o = t.run("bkill", &[&format!("{sleepy}[2]")])?;
    assert_eq!(
        (o.code, o.stdout.clone()),
        (Some(0), format!("Job <{sleepy}[2]> is being terminated\n")),
        "row 19: bkill N[i]\n{}",
        o.show()
    );
    wait_for(
        "row 19: sl[2] EXIT, sl[1] still running",
        JOB_DEADLINE,
        || match rows(sleepy) {
            Ok(r) => (
                (r == vec![
                    ("sl[1]".to_owned(), "RUN".to_owned()),
                    ("sl[2]".to_owned(), "EXIT".to_owned()),
                ])
                .then_some(()),
                format!("{r:?}"),
            ),
            Err(e) => (None, e.to_string()),
        },
    )?;
    let o = t.run("bkill", &[&sleepy.to_string()])?;
    assert_eq!(
        o.code,
        Some(0),
        "row 19: bkill of the whole array\n{}",
        o.show()
    );
    Ok(())
}

/// Row 23 and §11 SF: `-w "done(N)"`, `done(N) && done(M)`, and the condition wrapped
/// in literal double quotes.
#[test]
fn done_dependencies() -> Result<()> {
    let t = T::start("contract-deps", 2)?;
    let first = t.submit(&["-o", "/dev/null", "sleep 5"])?;
    let second = t.submit(&["-o", "/dev/null", "true"])?;
    let after_first = t.submit(&["-w", &format!("done({first})"), "-o", "/dev/null", "true"])?;
    let quoted = t.submit(&[
        "-w",
        &format!("\"done({first})\""),
        "-o",
        "/dev/null",
        "true",
    ])?;
    let both = t.submit(&[
        "-w",
        &format!("done({first}) && done({second})"),
        "-o",
        "/dev/null",
        "true",
    ])?;
    t.wait_stat(first, "RUN", JOB_DEADLINE)?;
    t.wait_final(&[second], JOB_DEADLINE)?;
    let m = t.jobs()?;
    if m[&first]["STAT"] == "RUN" {
        for id in [after_first, quoted, both] {
            assert_eq!(
                m[&id]["STAT"], "PEND",
                "row 23: job {id} waits for job {first}: {:?}",
                m[&id]
            );
        }
    }
    let m = t.wait_final(&[first, second, after_first, quoted, both], JOB_DEADLINE)?;
    for id in [after_first, quoted, both] {
        assert_eq!(m[&id]["STAT"], "DONE", "row 23: {:?}", m[&id]);
    }
    Ok(())
}

/// Issue 50 item 7: what LSF refuses at submission (the job would pend forever), as
/// `bsub` prints it — the reason then `. Job not submitted.` on stderr, nothing on
/// stdout, exit 255, no job: a `-m` host the queue does not use, a `-w` naming no job
/// mbatchd holds, an unclosed `[` in `-R`, a user with no share in a fairshare queue.
#[test]
fn submissions_lsf_refuses() -> Result<()> {
    let t = T::start("contract-refusals", 2)?;
    t.c.add_queues(
        "\nBegin Queue\nQUEUE_NAME = onlya\nPRIORITY = 10\nHOSTS = hostA\nEnd Queue\n\
         \nBegin Queue\nQUEUE_NAME = fair\nPRIORITY = 10\n\
         FAIRSHARE = USER_SHARES[[nosuchuser, 1]]\nEnd Queue\n",
    )?;
    let named = t.submit(&["-H", "-J", "named", "-o", "/dev/null", "true"])?;
    let arr = t.submit(&["-H", "-J", "arr[1-2]", "-o", "/dev/null", "true"])?;
    let no_job = "No matching job found. Job not submitted.\n";
    for (args, want) in [
        (
            &["-q", "onlya", "-m", "hostB", "true"][..],
            "hostB: Host or host group is not used by the queue. Job not submitted.\n",
        ),
        (&["-w", "done(99999)", "true"], no_job),
        (&["-w", "exit(nosuchname)", "true"], no_job),
        (&["-w", "done(arr[5])", "true"], no_job),
        (
            &["-R", "select[mem>0", "true"],
            "Bad resource requirement syntax. Job not submitted.\n",
        ),
        (
            &["-q", "fair", "true"],
            "User cannot use the queue. Job not submitted.\n",
        ),
    ] {
        let o = t.run("bsub", args)?;
        assert_eq!(
            (o.code, o.stdout.as_str(), o.stderr.as_str()),
            (Some(255), "", want),
            "bsub {args:?}\n{}",
            o.show()
        );
    }
    // What LSF takes.
    let mut ids = vec![named, arr];
    ids.push(t.submit_q(
        "onlya",
        &["-q", "onlya", "-m", "hostA", "-o", "/dev/null", "true"],
    )?);
    for cond in [
        format!("done({named})"),
        "ended(named)".into(),
        "done(arr[1])".into(),
    ] {
        ids.push(t.submit(&["-w", &cond, "-H", "-o", "/dev/null", "true"])?);
    }
    let jobs = t.jobs()?;
    assert_eq!(
        jobs.keys().copied().collect::<Vec<_>>(),
        ids,
        "no refused submission made a job: {jobs:?}"
    );
    Ok(())
}
