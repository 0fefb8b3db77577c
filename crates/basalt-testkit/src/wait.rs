//! Waits with a deadline: poll a condition until it holds, or fail naming what was
//! awaited and what was last seen.

use anyhow::{Result, bail};
use std::time::{Duration, Instant};

/// Poll `cond` every 50 ms until it returns `Some`, or fail after `deadline`
/// naming `what` and the last observation.
pub fn wait_for<T>(
    what: &str,
    deadline: Duration,
    mut cond: impl FnMut() -> (Option<T>, String),
) -> Result<T> {
    let end = Instant::now() + deadline;
    loop {
        let (got, seen) = cond();
        if let Some(v) = got {
            return Ok(v);
        }
        if Instant::now() > end {
            bail!("timed out after {deadline:?} waiting for {what}; last seen:\n{seen}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Async flavour of [`wait_for`].
pub async fn wait_for_async<T, F, Fut>(what: &str, deadline: Duration, mut cond: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = (Option<T>, String)>,
{
    let end = Instant::now() + deadline;
    loop {
        let (got, seen) = cond().await;
        if let Some(v) = got {
            return Ok(v);
        }
        if Instant::now() > end {
            bail!("timed out after {deadline:?} waiting for {what}; last seen:\n{seen}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Check `cond` every 100 ms for `window`: fails at the first observation where it does
/// not hold (naming `what` and that observation). For "nothing changes" checks, where
/// a sleep followed by one look would miss a change that comes and goes.
pub fn holds_for(
    what: &str,
    window: Duration,
    mut cond: impl FnMut() -> (bool, String),
) -> Result<()> {
    let end = Instant::now() + window;
    loop {
        let (ok, seen) = cond();
        if !ok {
            bail!("{what} stopped holding; seen:\n{seen}");
        }
        if Instant::now() > end {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
