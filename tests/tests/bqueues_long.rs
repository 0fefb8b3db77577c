//! Issue 50 item 11 on a real cluster, as an LSF administrator uses it: a queue
//! configured in LSF's syntax (a user group and a host group, a run limit, the
//! pre/post-execution commands, a job starter, requeue values, rerunnable,
//! checkpointing, backfill, exclusive, slot reservation, conditions, job controls) shows
//! all of it in `bqueues -l` as LSF does, with the comment of `badmin qclose -C`; and
//! `blimits` names the groups of a Limit section as configured and leaves out lsb.users'
//! MAX_JOBS. The daemons run in the test process (`InProcessBatch`).

use anyhow::Result;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, wait_for};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

#[test]
fn issue_50_item_11_bqueues_l_and_blimits_show_the_configuration_as_lsf_does() -> Result<()> {
    let c = InProcessBatch::start("bqueues-long", &ClusterSpec::new(3), "")?;
    let work = c.dir.path().join("w");
    let chk = c.dir.path().join("chk");
    std::fs::create_dir_all(&work)?;
    std::fs::create_dir_all(&chk)?;
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())?
        .map(|u| u.name)
        .unwrap_or_default();
    let conf = c.dir.path().join("conf/lsbatch/basalt/configdir");
    let append = |file: &str, text: &str| -> Result<()> {
        let path = conf.join(file);
        let mut all = std::fs::read_to_string(&path).unwrap_or_default();
        all.push_str(text);
        std::fs::write(&path, all)?;
        Ok(())
    };
    append(
        "lsb.users",
        &format!(
            "\nBegin UserGroup\nGROUP_NAME  GROUP_MEMBER\neng         ({user} alice)\nEnd UserGroup\n\
             \nBegin User\nUSER_NAME  MAX_JOBS\n{user}  10\nEnd User\n"
        ),
    )?;
    append(
        "lsb.hosts",
        "\nBegin HostGroup\nGROUP_NAME  GROUP_MEMBER\nhg_ab       (hostA hostB)\nEnd HostGroup\n",
    )?;
    append(
        "lsb.resources",
        "\nBegin Limit\nNAME  = engSlots\nUSERS = eng\nHOSTS = hg_ab\nSLOTS = 4\nEnd Limit\n",
    )?;
    append(
        "lsb.queues",
        &format!(
            "\nBegin Queue\nQUEUE_NAME = eng\nPRIORITY = 40\nUSERS = eng carol\n\
             HOSTS = hg_ab hostC+2\nRUNLIMIT = 10\nPRE_EXEC = /bin/true\nPOST_EXEC = /bin/true\n\
             JOB_STARTER = /usr/bin/env\nREQUEUE_EXIT_VALUES = 99\nRERUNNABLE = yes\n\
             CHKPNT = {} 10\nBACKFILL = Y\nEXCLUSIVE = Y\nSLOT_RESERVE = MAX_RESERVE_TIME[5]\n\
             STOP_COND = r1m > 3.0\nRESUME_COND = r1m < 1.0\nJOB_CONTROLS = SUSPEND[SIGTSTP]\n\
             TERMINATE_WHEN = LOAD\nDESCRIPTION = Engineering\nEnd Queue\n",
            chk.display()
        ),
    )?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("bqueues to know the queue eng", LONG, || {
        let out = c.stdout_ok("bqueues", &["eng"]).unwrap_or_default();
        (out.contains("eng").then_some(()), out)
    })?;
    c.ok("badmin", &["qclose", "-C", "maintenance friday", "eng"])?;
    let long = wait_for("bqueues -l to show the comment", LONG, || {
        let out = c.stdout_ok("bqueues", &["-l", "eng"]).unwrap_or_default();
        (
            out.contains("ADMIN ACTION COMMENT").then(|| out.clone()),
            out,
        )
    })?;
    for want in [
        "QUEUE: eng\n  -- Engineering\n",
        "Closed:Active",
        "\n RUNLIMIT                \n 10.0 min                \n",
        "\nSCHEDULING POLICIES:  BACKFILL  EXCLUSIVE\n",
        "\nUSERS: eng/ carol\nHOSTS:  hg_ab/ hostC+2\n",
        "\nPRE_EXEC:  /bin/true\nPOST_EXEC:  /bin/true\nREQUEUE_EXIT_VALUES:  99\n",
        "\nMaximum slot reservation time: ",
        "\nRESUME_COND:  r1m < 1.0\nSTOP_COND:  r1m > 3.0\nJOB_STARTER:  /usr/bin/env\nRERUNNABLE :  yes\n",
        &format!("\nCHKPNTDIR : {}\nCHKPNTPERIOD : 600\n", chk.display()),
        "\nADMIN ACTION COMMENT: \"maintenance friday\"\n\nJOB_CONTROLS:\n    SUSPEND:     [SIGTSTP]\n\nTERMINATE_WHEN = LOAD\n",
    ] {
        assert!(long.contains(want), "missing {want:?} in\n{long}");
    }
    assert!(!long.contains("alice"), "USERS expanded:\n{long}");

    // A job of the user on hostA counts against the Limit section of eng on hg_ab.
    let gate = work.join("gate");
    let hold = format!("while [ ! -e {} ]; do sleep 0.1; done", gate.display());
    let id = c.bsub(&work, &["-o", "/dev/null", "-m", "hostA", &hold])?;
    let limits = wait_for("blimits to count the job", LONG, || {
        let out = c.stdout_ok("blimits", &[]).unwrap_or_default();
        (out.contains("1/4").then(|| out.clone()), out)
    })?;
    let rows: Vec<Vec<&str>> = limits
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("NAME"))
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| !r.is_empty())
        .collect();
    assert_eq!(
        rows,
        vec![vec![
            "engSlots", "eng/", "-", "hg_ab/", "-", "1/4", "-", "-", "-", "-"
        ]],
        "{limits}"
    );
    std::fs::write(&gate, "")?;
    wait_for(&format!("job {id} to end"), LONG, || {
        let s = c
            .stdout_ok("bjobs", &["-o", "stat", "-noheader", &id.to_string()])
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        ((s == "DONE").then_some(()), s)
    })?;
    Ok(())
}
