//! The library's state between calls: the configuration (`LSF_ENVDIR/lsf.conf` and
//! the cluster file, read by `lsb_init` or by the first call that needs it), and how a
//! call talks to the daemons: a current-thread runtime of its own for its few RPCs
//! (nothing keeps running between calls, so a program may fork freely), mbatchd found
//! through the master LIM as the commands find it.

use crate::consts::*;
use crate::errno::Fail;
use basalt_config::Config;
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use basalt_runtime::AuthChannel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

static CONFIG: Mutex<Option<Arc<Config>>> = Mutex::new(None);

/// Read the configuration again (`lsb_init`).
pub fn init() -> Result<Arc<Config>, Fail> {
    let envdir = basalt_runtime::envdir();
    let loaded = basalt_config::load_lim(&envdir).map_err(|e| {
        let code = if envdir.join("lsf.conf").is_file() {
            LSE_CONF_SYNTAX
        } else {
            LSE_LSFCONF
        };
        Fail::base(code, e.to_string())
    })?;
    let c = Arc::new(loaded.config);
    if let Ok(mut slot) = CONFIG.lock() {
        *slot = Some(c.clone());
    }
    Ok(c)
}

/// The configuration, read on first use.
pub fn config() -> Result<Arc<Config>, Fail> {
    if let Some(c) = CONFIG.lock().ok().and_then(|s| s.clone()) {
        return Ok(c);
    }
    init()
}

/// A current-thread runtime (no thread of its own: it runs only inside `block_on`).
pub fn runtime() -> Result<tokio::runtime::Runtime, Fail> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fail::batch(LSBE_SYS_CALL, format!("cannot start a runtime: {e}")))
}

/// Run `f` to completion on a runtime of this call's own.
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, Fail> {
    Ok(runtime()?.block_on(f))
}

/// An lsf.conf setting, the environment first.
pub fn setting(config: &Config, key: &str) -> Option<String> {
    std::env::var(key)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| config.lsf_conf.get(key).map(|v| v.to_string()))
}

/// How long a call keeps trying to reach mbatchd: `LSB_API_CONNTIMEOUT` seconds
/// (default 10, as LSF).
pub fn connect_timeout(config: &Config) -> Duration {
    let secs = setting(config, "LSB_API_CONNTIMEOUT")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(10);
    Duration::from_secs(secs)
}

/// Connect to mbatchd (the master may be moving: tried until [`connect_timeout`]).
pub async fn mbatchd(config: &Config) -> Result<MbatchdClient<AuthChannel>, Fail> {
    use basalt_cli::batch::{ConnectTry, connect_mbatchd_once};
    let deadline = Instant::now() + connect_timeout(config);
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let per_try = remaining.clamp(Duration::from_millis(200), Duration::from_secs(3));
        let err = match connect_mbatchd_once(config, per_try).await {
            Ok(c) => return Ok(c),
            Err(ConnectTry::Final(e)) => return Err(connect_fail(e)),
            Err(ConnectTry::Again(e)) => e,
        };
        if Instant::now() >= deadline {
            return Err(connect_fail(err));
        }
        tokio::time::sleep(Duration::from_millis(300).min(remaining)).await;
    }
}

fn connect_fail(e: basalt_cli::batch::ConnectError) -> Fail {
    use basalt_cli::batch::ConnectError;
    match e {
        ConnectError::LsfDown => Fail::base(LSE_MASTR_UNKNW, ""),
        ConnectError::Mbatchd(r) => Fail::batch(LSBE_CONN_REFUSED, r),
        ConnectError::Permission(r) => Fail::batch(LSBE_PERMISSION, r),
    }
}

/// One call to mbatchd: config, runtime, connection, `f`; a refusal becomes LSF's code.
pub fn with_mbatchd<T, F, Fut>(f: F) -> Result<T, Fail>
where
    F: FnOnce(MbatchdClient<AuthChannel>, Arc<Config>) -> Fut,
    Fut: std::future::Future<Output = Result<T, Fail>>,
{
    let config = config()?;
    block_on(async move {
        let client = mbatchd(&config).await?;
        f(client, config).await
    })?
}

/// Record `r`'s failure (or clear the error) and map it to the C return value.
pub fn finish<T>(r: Result<T, Fail>, failed: T) -> T {
    match r {
        Ok(v) => {
            crate::errno::clear();
            v
        }
        Err(f) => {
            f.record();
            failed
        }
    }
}
