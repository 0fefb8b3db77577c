//! LSF's C API (issue 52), the batch information and administration calls, against a
//! running cluster: the C test program (`crates/basalt-capi/tests/c/info_test.c`)
//! compiled with the system `cc` against the headers and the built `libbat.so` asks for
//! the queues, hosts, users and parameters of the embedded default configuration (names,
//! counts, limits, thresholds; LSF's error codes for unknown names), then — after
//! `lsb_reconfig` picked up host and user groups, a user row and two application
//! profiles — for those; `lsb_queuecontrol` and `lsb_hostcontrol` close and open a queue
//! and a host (each checked with `bqueues` / `bhosts` too); a user who is no
//! administrator gets `LSBE_PERMISSION` for all three control calls. The queries also run
//! under Valgrind (definite leaks and memory errors fail).

use anyhow::{Result, anyhow, bail};
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, is_root, wait_for, work_dir};
use std::path::Path;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

use basalt_testkit::capi::{self, checked};

fn run_ok(c: &InProcessBatch, exe: &Path, args: &[&str], cwd: &Path) -> Result<String> {
    let mut cmd = c.command(&exe.to_string_lossy());
    cmd.current_dir(cwd);
    checked(cmd, args)
}

/// The row of `cmd name` (bqueues, bhosts) once it contains `want`.
fn wait_row(c: &InProcessBatch, cmd: &str, name: &str, want: &str) -> Result<()> {
    wait_for(&format!("{cmd} {name} to say {want}"), DEADLINE, || {
        let out = c.stdout_ok(cmd, &[name]).unwrap_or_default();
        let ok = out
            .lines()
            .any(|l| l.starts_with(&format!("{name} ")) && l.contains(want));
        (ok.then_some(()), out)
    })
}

fn me() -> Result<String> {
    nix::unistd::User::from_uid(nix::unistd::getuid())?
        .map(|u| u.name)
        .ok_or_else(|| anyhow!("no name for this uid"))
}

#[test]
fn c_programs_read_queues_hosts_groups_users_profiles_and_control_the_system() -> Result<()> {
    let c = InProcessBatch::start("capi-info", &ClusterSpec::new(3), "")?;
    let work = work_dir(c.dir.path())?;
    let exe = capi::build("info_test", &work)?;
    let me = me()?;

    // The embedded default configuration: 3 queues, 3 hosts, no group, no profile.
    run_ok(&c, &exe, &["query", "3", &me], &work)?;
    let mut local = c.command(&exe.to_string_lossy());
    local.current_dir(&work).env("BASALT_HOST", "hostB");
    checked(local, &["local", "hostB"])?;
    run_ok(&c, &exe, &["ckconfig"], &work)?;
    under_valgrind(&c, &exe, &work, &["query", "3", &me])?;

    // Groups, a user row and two profiles, picked up by lsb_reconfig.
    let conf = c.queues_file();
    let append = |file: &str, text: &str| -> Result<()> {
        let path = conf.with_file_name(file);
        let mut all = std::fs::read_to_string(&path).unwrap_or_default();
        all.push_str(text);
        std::fs::write(&path, all)?;
        Ok(())
    };
    append(
        "lsb.hosts",
        "\nBegin HostGroup\nGROUP_NAME  GROUP_MEMBER\nhg_ab       (hostA hostB)\nEnd HostGroup\n",
    )?;
    append(
        "lsb.users",
        &format!(
            "\nBegin UserGroup\nGROUP_NAME GROUP_MEMBER GROUP_ADMIN USER_SHARES\n\
             ug1 ({me}) ({me}) ([{me}, 3] [default, 1])\nug_top (ug1) - -\nEnd UserGroup\n\
             \nBegin User\nUSER_NAME  MAX_JOBS\n{me}  10\nEnd User\n"
        ),
    )?;
    append(
        "lsb.applications",
        "\nBegin Application\nNAME = fluent\nDESCRIPTION = CFD runs\nRUNLIMIT = 30\n\
         RERUNNABLE = y\nPRE_EXEC = /bin/true\nEnd Application\n\
         \nBegin Application\nNAME = short\nRUNLIMIT = 5\nEnd Application\n",
    )?;
    run_ok(&c, &exe, &["reconfig"], &work)?;
    wait_for("bapp to list the profiles", DEADLINE, || {
        let out = c.stdout_ok("bapp", &[]).unwrap_or_default();
        let ok = out.contains("fluent") && out.contains("short");
        (ok.then_some(()), out)
    })?;
    run_ok(&c, &exe, &["groups", &me], &work)?;

    // Queue and host control, as bqueues and bhosts see it.
    for (op, status) in [
        ("close", "Closed:Active"),
        ("open", "Open:Active"),
        ("inact", "Open:Inact"),
        ("act", "Open:Active"),
    ] {
        run_ok(&c, &exe, &["qctl", "normal", op], &work)?;
        wait_row(&c, "bqueues", "normal", status)?;
    }
    for (op, status) in [("close", "closed"), ("open", "ok")] {
        run_ok(&c, &exe, &["hctl", "hostB", op], &work)?;
        wait_row(&c, "bhosts", "hostB", status)?;
    }

    if is_root() {
        denied(&c, &exe, &work)?;
    } else {
        basalt_testkit::skip("permission denial of the control calls", "needs root");
    }
    Ok(())
}

/// A user who is no administrator: each control call fails with LSBE_PERMISSION, and
/// nothing changed.
fn denied(c: &InProcessBatch, exe: &Path, work: &Path) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let Some(u) = basalt_testkit::jobs::test_user("basalt-ua") else {
        bail!("cannot create the test user basalt-ua");
    };
    let mut cmd = c.command(&exe.to_string_lossy());
    cmd.current_dir(work).uid(u.0).gid(u.1).env("HOME", work);
    checked(cmd, &["denied", "normal", "hostB"])?;
    wait_row(c, "bqueues", "normal", "Open:Active")?;
    wait_row(c, "bhosts", "hostB", "ok")?;
    Ok(())
}

/// The queries under Valgrind (`.ci/run` installs it): definite leaks and memory errors
/// fail the run (`tests/c/valgrind.supp`: a false positive of tower's optimised code).
fn under_valgrind(c: &InProcessBatch, exe: &Path, work: &Path, args: &[&str]) -> Result<()> {
    let Some(mut cmd) = capi::valgrind(&c.envdir, "the info calls under Valgrind") else {
        return Ok(());
    };
    cmd.arg(exe).current_dir(work);
    checked(cmd, args).map(|_| ())
}
