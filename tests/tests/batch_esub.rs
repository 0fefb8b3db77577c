//! LSF's external submission executable on a real cluster: "When a job is submitted,
//! esub is executed if it is found in LSF_SERVERDIR" — bsub runs it with the job's
//! options in LSB_SUB_PARM_FILE and applies what it writes to LSB_SUB_MODIFY_FILE (the
//! job goes to another queue) and LSB_SUB_MODIFY_ENVFILE (the job's environment);
//! `bsub -a name` runs `esub.name` after it. "esub can read the file and exit with a
//! special exit code to cause the job submission ... to be aborted": exit
//! $LSB_SUB_ABORT_VALUE refuses the job with the esub's message and LSF's, no job is
//! created; another exit value does not stop the submission. The daemons run in the test
//! process (`InProcessBatch`).

use anyhow::{Context, Result};
use basalt_testkit::jobs::{jobs, wait_state};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A one-host cluster and a work directory.
fn cluster(name: &str) -> Result<(InProcessBatch, PathBuf)> {
    let c = InProcessBatch::start(name, &ClusterSpec::new(1), "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    Ok((c, work))
}

/// Install `LSF_SERVERDIR/<name>` (a `/bin/sh` script) with mode 0755.
fn install(c: &InProcessBatch, name: &str, body: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let path = c.dir.path().join("serverdir").join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n"))
        .with_context(|| format!("writing {}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

fn field(c: &InProcessBatch, id: u64, field: &str) -> String {
    c.stdout_ok("bjobs", &["-o", field, "-noheader", &id.to_string()])
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[test]
fn when_a_job_is_submitted_esub_is_executed_if_it_is_found_in_lsf_serverdir() -> Result<()> {
    let (c, work) = cluster("batch-esub-run")?;
    let w = work.display();
    // The site's esub: keeps what it saw, says something on stdout (meant for eexec),
    // moves the normal queue's jobs to `priority` and gives them a variable.
    install(
        &c,
        "esub",
        &format!(
            ". \"$LSB_SUB_PARM_FILE\"\n\
             cp \"$LSB_SUB_PARM_FILE\" {w}/parm.seen\n\
             echo \"$LSB_SUB_PARM_FILE\" > {w}/parm.path\n\
             echo esub >> {w}/order\n\
             echo 'for eexec, not for the user'\n\
             if [ \"$LSB_SUB_QUEUE\" = normal ]; then\n\
               echo 'LSB_SUB_QUEUE=\"priority\"' > \"$LSB_SUB_MODIFY_FILE\"\n\
               echo 'ESUB_MARK=\"set by esub\"' > \"$LSB_SUB_MODIFY_ENVFILE\"\n\
             fi"
        ),
    )?;
    let out = work.join("job.out");
    // c.bsub also checks that bsub printed one line: the esub's stdout is not bsub's.
    let id = c.bsub(
        &work,
        &[
            "-q",
            "normal",
            "-J",
            "say \"hi\"",
            "-o",
            &out.display().to_string(),
            "echo \"mark=$ESUB_MARK\"",
        ],
    )?;
    assert_eq!(field(&c, id, "queue"), "priority");
    wait_state(&c, id, "DONE", Duration::from_secs(60))?;
    assert!(read(&out).contains("mark=set by esub"), "{}", read(&out));
    // The parameter file had the options as LSF writes them; it is gone now.
    let parm = read(&work.join("parm.seen"));
    for line in [
        r#"LSB_SUB_QUEUE="normal""#,
        r#"LSB_SUB_JOB_NAME="say \"hi\"""#,
        &format!(r#"LSB_SUB_OUT_FILE="{}""#, out.display()),
    ] {
        assert!(parm.lines().any(|l| l == line), "{line} not in\n{parm}");
    }
    let parm_path = read(&work.join("parm.path"));
    assert!(
        !Path::new(parm_path.trim()).exists(),
        "{parm_path} left behind"
    );

    // -a: esub.<name> runs after esub, with its arguments; what it writes applies too.
    install(
        &c,
        "esub.tag",
        &format!(
            "echo \"tag $1\" >> {w}/order\n\
             echo \"LSB_SUB_PROJECT_NAME=\\\"tag-$1\\\"\" >> \"$LSB_SUB_MODIFY_FILE\""
        ),
    )?;
    let tagged = c.bsub(&work, &["-a", "tag(x)", "-o", "/dev/null", "true"])?;
    assert_eq!(field(&c, tagged, "proj"), "tag-x");
    assert_eq!(field(&c, tagged, "queue"), "normal");
    assert_eq!(read(&work.join("order")), "esub\nesub\ntag x\n");
    // An application with no esub.<name> refuses the job.
    let before = jobs(&c)?.len();
    let o = c.run("bsub", &["-a", "nosuch", "-o", "/dev/null", "true"])?;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(255), "{err}");
    assert!(
        err.contains("Application <nosuch>: esub.nosuch does not exist in LSF_SERVERDIR")
            && err.trim_end().ends_with("Job not submitted."),
        "{err}"
    );
    assert_eq!(jobs(&c)?.len(), before);
    Ok(())
}

#[test]
fn esub_can_exit_with_a_special_exit_code_to_cause_the_job_submission_to_be_aborted() -> Result<()>
{
    let (c, work) = cluster("batch-esub-abort")?;
    install(
        &c,
        "esub",
        ". \"$LSB_SUB_PARM_FILE\"\n\
         if [ -z \"$LSB_SUB_PROJECT_NAME\" ]; then\n\
           echo 'Please name a project with -P.' >&2\n\
           exit $LSB_SUB_ABORT_VALUE\n\
         fi\n\
         # Any other exit value does not stop the submission.\n\
         exit 3",
    )?;
    let o = c.run("bsub", &["-o", "/dev/null", "true"])?;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(255), "{err}");
    assert_eq!(
        err,
        "Please name a project with -P.\nRequest aborted by esub. Job not submitted.\n"
    );
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(jobs(&c)?.is_empty(), "a refused job was created");
    let id = c.bsub(&work, &["-P", "physics", "-o", "/dev/null", "true"])?;
    assert_eq!(field(&c, id, "proj"), "physics");
    assert_eq!(jobs(&c)?.len(), 1);
    Ok(())
}
