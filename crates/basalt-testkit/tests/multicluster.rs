//! Two linked clusters as processes ([`ProcessCluster::start_multicluster`]): both come
//! up on addresses of their own, with the same host names, and each one's commands talk
//! to that cluster only. (Forwarding itself is mbatchd's, tested with it.)

use basalt_testkit::{McMember, ProcessCluster, bin_dir, jobs, skip, work_dir};
use std::time::Duration;

#[test]
fn two_linked_clusters_start_side_by_side() -> anyhow::Result<()> {
    if let Err(e) = bin_dir() {
        skip("two_linked_clusters_start_side_by_side", &e.to_string());
        return Ok(());
    }
    let west = McMember::new("west", 2).queues(
        "\nBegin Queue\nQUEUE_NAME = send\nPRIORITY = 30\nSNDJOBS_TO = recv@east\nEnd Queue\n",
    );
    let east = McMember::new("east", 1).queues(
        "\nBegin Queue\nQUEUE_NAME = recv\nPRIORITY = 30\nRCVJOBS_FROM = west\n\
         IMPT_JOBBKLG = 10\nEnd Queue\n",
    );
    let clusters = ProcessCluster::start_multicluster("mc-up", &[west, east])?;
    let [w, e] = &clusters[..] else {
        anyhow::bail!("{} clusters started", clusters.len());
    };
    assert_eq!((w.cluster.as_str(), e.cluster.as_str()), ("west", "east"));
    // Same host names, different addresses.
    assert_eq!(w.hosts[0], e.hosts[0]);
    assert_ne!(w.addrs[0], e.addrs[0]);
    assert_ne!(w.envdir, e.envdir);

    // Each cluster's commands reach that cluster.
    let lsid = w.ok("lsid", &[])?;
    assert!(lsid.contains("My cluster name is west"), "{lsid}");
    let lsid = e.ok("lsid", &[])?;
    assert!(lsid.contains("My cluster name is east"), "{lsid}");
    let queues = |c: &ProcessCluster| -> anyhow::Result<Vec<String>> {
        Ok(c.ok("bqueues", &[])?
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .collect())
    };
    let (wq, eq) = (queues(w)?, queues(e)?);
    assert!(
        wq.contains(&"send".to_owned()) && !wq.contains(&"recv".to_owned()),
        "{wq:?}"
    );
    assert!(
        eq.contains(&"recv".to_owned()) && !eq.contains(&"send".to_owned()),
        "{eq:?}"
    );

    // A job submitted in east runs there and west does not know it.
    let dir = work_dir(e.dir.path())?;
    let id = e.bsub(&dir, &["-q", "normal", "true"])?;
    jobs::wait_finished(e, &[id], Duration::from_secs(60))?;
    assert!(!jobs::jobs(w)?.contains_key(&id));
    Ok(())
}
