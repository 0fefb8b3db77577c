//! Issue 28 on a real log: jobs run one at a time on a 1-host cluster of the real
//! binaries (a queue with QJOB_LIMIT = 1); `badmin whatif` on its lsb.events replays the
//! unchanged configuration in the recorded dispatch order, and with the limit lifted
//! (the queue file edited, the daemons untouched) reports shorter waits.

use anyhow::{Context, Result};
use basalt_testkit::jobs::wait_finished;
use basalt_testkit::{ClusterSpec, ProcessCluster, output_text, wait_for, work_dir};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(90);

#[test]
fn badmin_whatif_replays_a_real_log_and_answers_for_a_lifted_limit() -> Result<()> {
    let c = ProcessCluster::start_batch("whatif", &ClusterSpec::new(1), "JOB_ACCEPT_INTERVAL = 0")?;
    let work = work_dir(c.dir.path())?;
    c.append_batch_file(
        "lsb.queues",
        "\nBegin Queue\nQUEUE_NAME = one\nPRIORITY = 30\nQJOB_LIMIT = 1\nEnd Queue\n",
    )?;
    c.ok("badmin", &["reconfig"])?;
    wait_for("the queue one", LONG, || {
        let out = c.stdout_ok("bqueues", &["one"]).unwrap_or_default();
        (out.contains("one").then_some(()), out)
    })?;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(c.bsub(&work, &["-q", "one", "-o", "/dev/null", "sleep 2"])?);
    }
    wait_finished(&c, &ids, LONG)?;
    let events = c.dir.path().join("work/basalt/logdir/lsb.events");
    let ev = events.to_string_lossy().into_owned();

    // The unchanged configuration: the recorded order, the recorded waits.
    let o = c.run("badmin", &["whatif", "--events", &ev, "-json"])?;
    assert!(o.status.success(), "{}", output_text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).context("json")?;
    assert_eq!(j["fidelity"]["same_order"], true, "{j:#}");
    assert_eq!(j["fidelity"]["compared"], 5, "{j:#}");
    let before = j["before"]["queues"]["one"]["wait_mean"]
        .as_f64()
        .context("before")?;
    let after = j["after"]["queues"]["one"]["wait_mean"]
        .as_f64()
        .context("after")?;
    assert!(before >= 3.0, "they waited for each other: {j:#}");
    assert!((after - before).abs() <= 2.0, "{j:#}");

    // The limit lifted in the configuration files: the jobs would have run together on
    // the host's slots.
    // The simulated host gets the slots it used at most in the log (1) unless told:
    // --hosts gives it 3.
    let q = c.batch_dir().join("lsb.queues");
    let text = std::fs::read_to_string(&q)?;
    std::fs::write(&q, text.replace("QJOB_LIMIT = 1\n", ""))?;
    let host = c
        .ok("bhosts", &[])?
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .context("bhosts")?;
    let hosts = format!("{host}:3");
    let plot = c.dir.path().join("whatif.svg");
    let plot_arg = plot.to_string_lossy().into_owned();
    let o = c.run(
        "badmin",
        &[
            "whatif", "--events", &ev, "--hosts", &hosts, "--plot", &plot_arg,
        ],
    )?;
    assert!(o.status.success(), "{}", output_text(&o));
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(table.contains("queue one"), "{table}");
    assert!(table.contains("of 3 slots"), "{table}");
    // --plot: the SVG of both sides' queue length and utilisation.
    let svg = std::fs::read_to_string(&plot).context("the plot")?;
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("recorded (1 slots)") && svg.contains("what-if (3 slots)"));
    assert!(svg.contains("Queue length: slots pending"));
    eprintln!("badmin whatif --events lsb.events --hosts {hosts}\n{table}");
    let o = c.run(
        "badmin",
        &["whatif", "--events", &ev, "--hosts", &hosts, "-json"],
    )?;
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).context("json")?;
    let lifted = j["after"]["queues"]["one"]["wait_mean"]
        .as_f64()
        .context("after")?;
    assert!(lifted < before, "{table}\n{j:#}");

    // A log with nothing in the window, a missing file: errors.
    let o = c.run(
        "badmin",
        &["whatif", "--events", &ev, "--from", "4000000000"],
    )?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    let o = c.run("badmin", &["whatif", "--events", "/nonexistent/lsb.events"])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    // A plot that is not SVG, or cannot be written.
    let o = c.run("badmin", &["whatif", "--events", &ev, "--plot", "q.png"])?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert!(output_text(&o).contains(".svg"), "{}", output_text(&o));
    let o = c.run(
        "badmin",
        &["whatif", "--events", &ev, "--plot", "/nonexistent/q.svg"],
    )?;
    assert_eq!(o.status.code(), Some(255), "{}", output_text(&o));
    assert!(
        output_text(&o).contains("cannot write the plot"),
        "{}",
        output_text(&o)
    );
    Ok(())
}
