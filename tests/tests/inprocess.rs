//! The in-process tier: LIMs as tasks of the test runtime, each on its own
//! loopback address of a fresh /24.

use basalt_testkit::{ClusterSpec, InProcessCluster, wait_for_async};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_cluster_fails_over_and_back() -> anyhow::Result<()> {
    let mut c = InProcessCluster::start("inproc", &ClusterSpec::new(3)).await?;
    c.wait_master("hostA", Duration::from_secs(20)).await?;
    wait_for_async("3 hosts reporting", Duration::from_secs(20), || async {
        let t = c.hosts_table().await;
        let n = t
            .as_ref()
            .map(|t| {
                t.hosts
                    .iter()
                    .filter(|h| h.has_info && !h.load.is_empty())
                    .count()
            })
            .unwrap_or(0);
        ((n == 3).then_some(()), format!("{n} hosts reporting"))
    })
    .await?;
    c.kill_host("hostA").await?;
    c.wait_master("hostB", Duration::from_secs(20)).await?;
    c.start_host("hostA").await?;
    c.wait_master("hostA", Duration::from_secs(20)).await?;
    Ok(())
}
