//! Hostile requests against a running mbatchd (see `basalt_fuzz::mbatchd`): one mbatchd
//! and LIM for the whole run, in this process; each input is decoded into up to 64
//! requests, every one must be answered, and mbatchd must keep serving. Jobs are killed
//! after each input so a long run does not fill mbatchd.
#![no_main]

use basalt_fuzz::mbatchd::{Target, ops};
use libfuzzer_sys::fuzz_target;
use std::sync::{Mutex, OnceLock};

struct State {
    rt: tokio::runtime::Runtime,
    target: Target,
}

fn state() -> &'static Mutex<State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let target = rt
            .block_on(Target::start("fuzz-mbd"))
            .expect("mbatchd and its LIM start");
        Mutex::new(State { rt, target })
    })
}

fuzz_target!(|data: &[u8]| {
    let ops = ops(data, 64);
    let mut guard = state().lock().unwrap_or_else(|e| e.into_inner());
    let State { rt, target } = &mut *guard;
    rt.block_on(async {
        if let Err(e) = target.drive(&ops).await {
            panic!("{e}");
        }
        target.kill_all().await;
    });
});
