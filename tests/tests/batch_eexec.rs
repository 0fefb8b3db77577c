//! esub and eexec on a real cluster, a test per sentence of the seed
//! (`001_b333d4d2a6c04a08.txt`, "External submission and execution executables"):
//! "On the execution host, eexec is run at job start-up and completion time", "The
//! environment variable LS_EXEC_T is set to START, END", "esub can write the data to its
//! standard output; eexec can read the data from its standard input", "eexec is executed
//! as the user after the job's environment variables have been set", "The parent job
//! process waits for eexec to complete before proceeding", "The environment variable
//! LS_JOBPID stores the process ID of the process that invoked eexec". One cluster serves
//! them all (`InProcessBatch`).

use anyhow::Result;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

fn write_exec(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// (LS_EXEC_T, user, LSB_JOBID, LS_JOBPID, eexec's parent pid, stdin) per eexec run.
type Run = (String, String, String, String, String, String);

fn runs(log: &Path) -> Vec<Run> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let f: Vec<String> = l.splitn(6, ' ').map(str::to_owned).collect();
            let g = |i: usize| f.get(i).cloned().unwrap_or_default();
            (g(0), g(1), g(2), g(3), g(4), g(5))
        })
        .collect()
}

#[test]
fn eexec_runs_at_job_start_and_end_with_what_esub_printed() -> Result<()> {
    let c = InProcessBatch::start("batch-eexec", &ClusterSpec::new(1), "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    let serverdir = c.dir.path().join("serverdir");
    let log = work.join("eexec.log");
    let done = work.join("eexec.done");
    write_exec(&serverdir.join("esub"), "#!/bin/sh\necho token-123\n")?;
    write_exec(
        &serverdir.join("eexec"),
        &format!(
            "#!/bin/sh\n\
             data=$(cat)\n\
             echo \"$LS_EXEC_T $(id -un) $LSB_JOBID $LS_JOBPID $PPID $data\" >> {log}\n\
             if [ \"$LS_EXEC_T\" = START ]; then sleep 1; touch {done}; fi\n",
            log = log.display(),
            done = done.display()
        ),
    )?;
    let out = work.join("job.out");
    let id = c.bsub(
        &work,
        &[
            "-o",
            &out.display().to_string(),
            &format!("[ -e {} ] && echo waited", done.display()),
        ],
    )?;
    wait_for(&format!("job {id} to end"), Duration::from_secs(60), || {
        let s = c
            .stdout_ok("bjobs", &["-o", "stat", "-noheader", &id.to_string()])
            .unwrap_or_default();
        let s = s.trim().to_owned();
        ((s == "DONE" || s == "EXIT").then_some(s.clone()), s)
    })?;
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())?
        .map(|u| u.name)
        .unwrap_or_default();
    let r = runs(&log);
    // At start-up and at completion, LS_EXEC_T saying which.
    assert_eq!(
        r.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        vec!["START", "END"],
        "{r:?}"
    );
    for (when, who, job, jobpid, parent, data) in &r {
        // As the user, with the job's environment (LSB_JOBID) set.
        assert_eq!(who, &user, "{when}");
        assert_eq!(job, &id.to_string(), "{when}");
        // What esub printed, on its standard input.
        assert_eq!(data, "token-123", "{when}");
        // LS_JOBPID is the process that invoked it.
        assert_eq!(jobpid, parent, "{when}");
    }
    // The job started once eexec had finished.
    let text = std::fs::read_to_string(&out)?;
    assert!(text.starts_with("waited\n"), "{text}");
    Ok(())
}
