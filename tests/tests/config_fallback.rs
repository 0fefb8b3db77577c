//! Issue 30 item 2: a broken configuration on disk no longer stops batch at the next
//! mbatchd restart. mbatchd keeps the last configuration it accepted beside the event log;
//! killed (-9) after `lsb.queues` was broken, it comes back on that configuration, serves,
//! and every `bqueues`/`bhosts`/`bparams` says which file and line block the new one. Once
//! the file is fixed, `badmin reconfig` brings the new configuration in and the banner goes.

use anyhow::{Result, bail};
use basalt_testkit::{ClusterSpec, ProcessCluster, output_text, wait_for};
use std::time::Duration;

#[test]
fn a_broken_configuration_does_not_stop_batch_at_a_restart() -> Result<()> {
    let c = ProcessCluster::start_batch("cfg-fallback", &ClusterSpec::new(1), "")?;
    let work = c.dir.path().join("w");
    std::fs::create_dir_all(&work)?;
    wait_for("bqueues to answer", Duration::from_secs(30), || {
        let o = c.run("bqueues", &[]);
        let ok = o.as_ref().is_ok_and(|o| o.status.success());
        (ok.then_some(()), format!("{o:?}"))
    })?;
    let logdir = basalt_config::load(&c.envdir)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .config
        .logdir();
    let snapshot = logdir.join(basalt_config::snapshot::FILE);
    wait_for(
        "the accepted configuration to be kept",
        Duration::from_secs(10),
        || {
            (
                snapshot.is_file().then_some(()),
                snapshot.display().to_string(),
            )
        },
    )?;

    // Break lsb.queues the way the administrator did.
    let queues = c.envdir.join("lsbatch/basalt/configdir/lsb.queues");
    let good = std::fs::read_to_string(&queues)?;
    let bad = good.replacen("PRIORITY     = 43", "PRIORITY     = high43", 1);
    if bad == good {
        bail!("unexpected lsb.queues:\n{good}");
    }
    std::fs::write(&queues, &bad)?;
    // badmin reconfig refuses it, and mbatchd serves on.
    let o = c.run("badmin", &["reconfig"])?;
    assert!(!o.status.success(), "{}", output_text(&o));
    assert!(output_text(&o).contains("high43"), "{}", output_text(&o));

    // kill -9: sbatchd restarts mbatchd, which must come back on the accepted configuration.
    let killed = c.kill9_pids_of("mbatchd", "hostA");
    assert!(killed > 0, "no mbatchd to kill");
    let banner = wait_for("mbatchd to serve again", Duration::from_secs(60), || {
        let o = c.run("bqueues", &["priority"]);
        match o {
            Ok(o) if o.status.success() => (Some(o), String::new()),
            Ok(o) => (None, output_text(&o)),
            Err(e) => (None, e.to_string()),
        }
    })?;
    let out = String::from_utf8_lossy(&banner.stdout);
    let err = String::from_utf8_lossy(&banner.stderr);
    assert!(out.contains("priority") && out.contains("43"), "{out}");
    assert!(
        err.contains("last accepted configuration") && err.contains("lsb.queues"),
        "{err}"
    );
    assert!(
        err.contains("high43"),
        "which line blocks the new one: {err}"
    );
    for cmd in ["bhosts", "bparams"] {
        let o = c.run(cmd, &[])?;
        assert!(o.status.success(), "{}", output_text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("last accepted configuration"),
            "{cmd}: {}",
            output_text(&o)
        );
    }
    let id = c.bsub(&work, &["-o", "out.%J", "true"])?;
    wait_for("the job to finish", Duration::from_secs(30), || {
        let o = c
            .stdout_ok("bjobs", &["-a", &id.to_string()])
            .unwrap_or_default();
        (o.contains("DONE").then_some(()), o)
    })?;

    // Fixed and reconfigured: the banner is gone.
    std::fs::write(&queues, &good)?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("the banner to go", Duration::from_secs(60), || {
        match c.run("bqueues", &[]) {
            Ok(o) if o.status.success() && o.stderr.is_empty() => (Some(()), String::new()),
            Ok(o) => (None, output_text(&o)),
            Err(e) => (None, e.to_string()),
        }
    })?;
    Ok(())
}
