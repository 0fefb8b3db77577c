//! LSF's C API (issue 52) against a running cluster: the C test program
//! (`crates/basalt-capi/tests/c/api_test.c`) compiled with the system `cc` against
//! the headers and the built `libbat.so`, run as LSF programs run — `lsb_init`, the
//! cluster's names, `ls_readconfenv`, a submit / query / suspend / resume / kill cycle,
//! error codes for a bad job id, a bad queue and a permission denial, and, inside a
//! 2-host parallel job, `lsb_getalloc` and `lsb_launch`; then Python's `ctypes` loading
//! `libbat.so` and `liblsf.so` to submit and query a job, as sites' scripts do.

use anyhow::{Result, anyhow, bail};
use basalt_testkit::jobs::wait_state;
use basalt_testkit::{ClusterSpec, Commands, InProcessBatch, is_root, output_text, work_dir};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const PARAMS: &str = "BASALT_SBD_HELLO_INTERVAL = 1\nJOB_TERMINATE_INTERVAL = 2";

use basalt_testkit::capi::{self, capi_dir, checked, lib_dir};

/// Run `api_test` with the cluster's environment; every check printed "ok".
fn run_ok(c: &InProcessBatch, exe: &Path, args: &[&str], cwd: &Path) -> Result<String> {
    let mut cmd = c.command(&exe.to_string_lossy());
    cmd.env_remove("LD_LIBRARY_PATH").current_dir(cwd);
    checked(cmd, args)
}

#[test]
fn c_programs_submit_query_control_jobs_and_read_lsf_errors() -> Result<()> {
    let c = InProcessBatch::start("capi", &ClusterSpec::new(3), PARAMS)?;
    let work = work_dir(c.dir.path())?;
    let exe = capi::build("api_test", &work)?;

    let out = run_ok(&c, &exe, &["init"], &work)?;
    assert!(out.contains("cluster "), "{out}");
    assert!(out.contains("master "), "{out}");
    // lsb_perror: "usrMsg: message" on stderr.
    assert!(out.contains("api_test: No matching job found"), "{out}");
    // ls_perror: the same, with ls_sysmsg()'s text.
    assert!(
        out.contains("api_test-ls: Unable to open file lsf.conf"),
        "{out}"
    );

    let out = run_ok(&c, &exe, &["cycle", &work.to_string_lossy()], &work)?;
    let id: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("job "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| anyhow!("no job id in:\n{out}"))?;
    let text = std::fs::read_to_string(work.join(format!("capi.{id}.out")))?;
    assert!(text.contains("hello from capi"), "{text}");

    ctypes_submit_and_query(&c, &work)?;
    under_valgrind(&c, &exe, &work)?;

    if is_root() {
        permission_denied(&c, &exe, &work)?;
    } else {
        basalt_testkit::skip("permission denial through the C API", "needs root");
    }
    Ok(())
}

/// The library leaks nothing and touches no memory it should not: `init` and a second
/// `cycle` under Valgrind (`.ci/run` installs it), definite leaks and memory errors
/// failing the run.
fn under_valgrind(c: &InProcessBatch, exe: &Path, work: &Path) -> Result<()> {
    for args in [vec!["init"], vec!["cycle", &work.to_string_lossy()]] {
        let Some(mut cmd) = capi::valgrind(&c.envdir, "the C API under Valgrind") else {
            return Ok(());
        };
        cmd.arg(exe).current_dir(work);
        checked(cmd, &args)?;
    }
    Ok(())
}

/// Another user's job: `lsb_signaljob` fails with `LSBE_PERMISSION`.
fn permission_denied(c: &InProcessBatch, exe: &Path, work: &Path) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let (Some(a), Some(b)) = (
        basalt_testkit::jobs::test_user("basalt-ua"),
        basalt_testkit::jobs::test_user("basalt-ub"),
    ) else {
        bail!("cannot create the test users basalt-ua / basalt-ub");
    };
    let o = c
        .command("bsub")
        .args(["-o", "/dev/null", "sleep 60"])
        .current_dir(work)
        .uid(a.0)
        .gid(a.1)
        .env("HOME", work)
        .output()?;
    let id: u64 = String::from_utf8_lossy(&o.stdout)
        .split(['<', '>'])
        .nth(1)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow!("no id: {}", output_text(&o)))?;
    wait_state(c, id, "RUN", Duration::from_secs(30))?;
    let o = c
        .command(&exe.to_string_lossy())
        .env_remove("LD_LIBRARY_PATH")
        .args(["denied", &id.to_string()])
        .current_dir(work)
        .uid(b.0)
        .gid(b.1)
        .env("HOME", work)
        .output()?;
    let text = output_text(&o);
    if !o.status.success() || text.contains("FAIL") {
        bail!("api_test denied failed:\n{text}");
    }
    c.ok("bkill", &[&id.to_string()])?;
    Ok(())
}

/// Python's ctypes loads libbat.so and liblsf.so (the same library under LSF's two
/// names, as `cargo xtask install` installs it) and submits and queries a job.
fn ctypes_submit_and_query(c: &InProcessBatch, work: &Path) -> Result<()> {
    let lib = lib_dir()?;
    let libs = work.join("lib");
    std::fs::create_dir_all(&libs)?;
    for name in ["libbat.so", "liblsf.so"] {
        std::fs::copy(lib.join("libbat.so"), libs.join(name))?;
    }
    let script = capi_dir().join("tests/c/ctypes_test.py");
    let o = c
        .command("/usr/bin/env")
        .arg("python3")
        .arg(&script)
        .arg(&libs)
        .arg(work)
        .current_dir(work)
        .output()?;
    let text = output_text(&o);
    if !o.status.success() {
        bail!("the ctypes test failed:\n{text}");
    }
    assert!(text.contains("ctypes ok"), "{text}");
    Ok(())
}

#[test]
fn a_parallel_job_gets_its_slots_and_launches_tasks_through_the_c_api() -> Result<()> {
    let c = InProcessBatch::start("capi-par", &ClusterSpec::new(3), PARAMS)?;
    let work = work_dir(c.dir.path())?;
    let exe = capi::build("api_test", &work)?;
    let out = work.join("alloc.out");
    let o = c
        .command("bsub")
        .env("PATH", c.path_with_commands())
        .env_remove("LD_LIBRARY_PATH")
        .current_dir(&work)
        .args([
            "-K",
            "-n",
            "4",
            "-R",
            "span[ptile=2]",
            "-o",
            &out.to_string_lossy(),
            &format!("{} alloc", exe.display()),
        ])
        .output()?;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(o.status.success(), "{}\n{text}", output_text(&o));
    assert!(!text.contains("FAIL"), "{text}");
    assert!(text.contains("ok lsb_getalloc"), "{text}");
    assert!(text.contains("ok lsb_launch"), "{text}");
    let id = String::from_utf8_lossy(&o.stdout)
        .split(['<', '>'])
        .nth(1)
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("no id: {}", output_text(&o)))?;
    // One task per slot, numbered 1..4, each with the job's id and the added variable.
    for n in 1..=4 {
        let line = format!("task {n} of {id} on ");
        assert!(
            text.lines()
                .any(|l| l.starts_with(&line) && l.ends_with("with extra-value")),
            "no `{line}... with extra-value` in:\n{text}"
        );
    }
    Ok(())
}

/// `lsb_init` succeeds with a readable lsf.conf when no daemon runs (lsf-drmaa's
/// configure calls it); the calls that need a daemon fail with LSF's codes, within
/// their bounds (`LSB_API_CONNTIMEOUT`, `BASALT_CMD_TIMEOUT`).
#[test]
fn lsb_init_needs_no_daemon_and_calls_fail_with_lsf_codes_when_none_runs() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let spec = ClusterSpec::new(2);
    let envdir =
        basalt_testkit::write_config(&spec, basalt_testkit::fresh_subnet(7869), dir.path())?;
    let exe = capi::build("api_test", dir.path())?;
    let o = Command::new(&exe)
        .arg("nodaemon")
        .env("LSF_ENVDIR", &envdir)
        .env("LSB_API_CONNTIMEOUT", "1")
        .env("BASALT_CMD_TIMEOUT", "2")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("BASALT_HOST")
        .env_remove("LSF_SERVER_HOSTS")
        .output()?;
    let text = output_text(&o);
    if !o.status.success() || text.contains("FAIL") {
        bail!("api_test nodaemon:\n{text}");
    }
    Ok(())
}

/// A listing longer than one of mbatchd's pages (2,000 jobs): `lsb_openjobinfo` gives the
/// count with the first page and `lsb_readjobinfo` reads the rest as it goes.
#[test]
fn a_job_listing_of_several_pages_is_read_page_by_page() -> Result<()> {
    let c = InProcessBatch::start("capi-pages", &ClusterSpec::new(1), PARAMS)?;
    let work = work_dir(c.dir.path())?;
    let exe = capi::build("api_test", &work)?;
    c.ok("badmin", &["qinact", "priority"])?;
    // (Arrays of at most MAX_JOB_ARRAY_SIZE, 1,000.)
    for _ in 0..3 {
        c.bsub(
            &work,
            &[
                "-q",
                "priority",
                "-J",
                "p[1-1000]",
                "-o",
                "/dev/null",
                "true",
            ],
        )?;
    }
    run_ok(&c, &exe, &["pages", "3000"], &work)?;
    // mbatchd's side: the count on the first page only.
    let config = basalt_config::load_lim(&c.envdir)?.config;
    let pages = c.block_on(async {
        let mut client = bat::session::mbatchd(&config)
            .await
            .map_err(|e| anyhow!("{e:?}"))?;
        let mut stream = client
            .jobs_pages(basalt_proto::mbatchd::JobsRequest {
                user: "all".into(),
                ..Default::default()
            })
            .await?
            .into_inner();
        let mut pages = Vec::new();
        while let Some(p) = stream.message().await? {
            pages.push((p.jobs.len(), p.total));
        }
        Ok::<_, anyhow::Error>(pages)
    })?;
    assert!(pages.len() >= 2, "{pages:?}");
    assert_eq!(pages[0].1, Some(3000), "{pages:?}");
    assert!(pages[1..].iter().all(|p| p.1.is_none()), "{pages:?}");
    assert_eq!(pages.iter().map(|p| p.0).sum::<usize>(), 3000);
    Ok(())
}
