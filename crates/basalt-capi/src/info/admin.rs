//! `lsb_queuecontrol`, `lsb_hostcontrol`, `lsb_reconfig`: what `badmin qopen qclose
//! qact qinact`, `hopen hclose hrestart hshutdown` and `reconfig mbdrestart ckconfig`
//! do, through the same requests. mbatchd (or the host's sbatchd) decides who may:
//! anyone else gets `LSBE_PERMISSION`.

use super::*;
use crate::mem::{given, opt_str};
use crate::session::{block_on, config, finish, with_mbatchd};
use basalt_proto::common::{ControlOp, Daemon};
use basalt_proto::mbatchd::{
    CtlReply, HostCtlRequest, HostOp, QueueCtlRequest, QueueOp, ReconfigRequest,
};

/// The first refusal of a control reply, as LSF's error.
fn check(reply: &CtlReply) -> Result<(), Fail> {
    match reply.results.iter().find(|r| !r.ok) {
        Some(bad) => Err(fail_from_text(&bad.message)),
        None => Ok(()),
    }
}

/// `int lsb_queuecontrol(struct queueCtrlReq *req)`: open, close, activate or
/// inactivate a queue (`QUEUE_OPEN`, `QUEUE_CLOSED`, `QUEUE_ACTIVATE`,
/// `QUEUE_INACTIVATE`), with the administrator's `message` (`badmin -C`). 0, or -1.
///
/// # Safety
/// `req` is NULL or points to a `struct queueCtrlReq` whose strings are NULL or strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_queuecontrol(req: *mut queueCtrlReq) -> c_int {
    // SAFETY: the caller's promise.
    let r = match unsafe { req.as_ref() } {
        None => Err(bad_arg("no request")),
        // SAFETY: the caller's promise.
        Some(q) => unsafe { queue_control(q) },
    };
    finish(r.map(|()| 0), -1)
}

/// # Safety
/// As [`lsb_queuecontrol`].
unsafe fn queue_control(q: &queueCtrlReq) -> Result<(), Fail> {
    let op = match q.opCode {
        QUEUE_OPEN => QueueOp::Open,
        QUEUE_CLOSED => QueueOp::Close,
        QUEUE_ACTIVATE => QueueOp::Activate,
        QUEUE_INACTIVATE => QueueOp::Inactivate,
        QUEUE_CLEAN => {
            return Err(bad_arg(
                "QUEUE_CLEAN: this LSF operation is not supported by Basalt",
            ));
        }
        other => return Err(bad_arg(format!("{other} is not a queue operation"))),
    };
    // SAFETY: the caller's promise.
    let (queue, message) = unsafe { (given(q.queue), opt_str(q.message)) };
    let queue = queue.ok_or_else(|| Fail::batch(LSBE_BAD_QUEUE, "no queue named"))?;
    let req = QueueCtlRequest {
        op: op as i32,
        queues: vec![queue],
        message: message.unwrap_or_default(),
    };
    with_mbatchd(|mut c, _| async move {
        let reply = c
            .queue_ctl(req)
            .await
            .map_err(|s| Fail::from_status(&s))?
            .into_inner();
        check(&reply)
    })
}

/// `int lsb_hostcontrol(struct hostCtrlReq *req)`: open or close a host for batch jobs
/// (`HOST_OPEN`, `HOST_CLOSE`, with the administrator's `message`), or restart or shut
/// down its sbatchd (`HOST_REBOOT`, `HOST_SHUTDOWN`; its running jobs go on). `host`
/// NULL is this host. 0, or -1.
///
/// # Safety
/// `req` is NULL or points to a `struct hostCtrlReq` whose strings are NULL or strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_hostcontrol(req: *mut hostCtrlReq) -> c_int {
    // SAFETY: the caller's promise.
    let r = match unsafe { req.as_ref() } {
        None => Err(bad_arg("no request")),
        // SAFETY: the caller's promise.
        Some(h) => unsafe { host_control(h) },
    };
    finish(r.map(|()| 0), -1)
}

/// # Safety
/// As [`lsb_hostcontrol`].
unsafe fn host_control(h: &hostCtrlReq) -> Result<(), Fail> {
    // SAFETY: the caller's promise.
    let (host, message) = unsafe { (given(h.host), opt_str(h.message).unwrap_or_default()) };
    let config = config()?;
    let host = host.unwrap_or_else(|| basalt_cli::batch::local_host(&config));
    let op = match h.opCode {
        HOST_OPEN => HostOp::Open,
        HOST_CLOSE => HostOp::Close,
        HOST_REBOOT | HOST_SHUTDOWN => {
            if !message.is_empty() {
                return Err(bad_arg(
                    "message: Basalt records no message for HOST_REBOOT or HOST_SHUTDOWN",
                ));
            }
            let op = if h.opCode == HOST_REBOOT {
                ControlOp::Restart
            } else {
                ControlOp::Shutdown
            };
            return sbatchd_control(&config, &host, op);
        }
        HOST_CLOSE_REMOTE => {
            return Err(bad_arg(
                "HOST_CLOSE_REMOTE: this LSF operation (leased hosts) is not supported by Basalt",
            ));
        }
        other => return Err(bad_arg(format!("{other} is not a host operation"))),
    };
    let req = HostCtlRequest {
        op: op as i32,
        hosts: vec![host],
        message,
    };
    with_mbatchd(|mut c, _| async move {
        let reply = c
            .host_ctl(req)
            .await
            .map_err(|s| Fail::from_status(&s))?
            .into_inner();
        check(&reply)
    })
}

/// Restart or shut down the sbatchd of `host` (`badmin hrestart` / `hshutdown`).
fn sbatchd_control(config: &basalt_config::Config, host: &str, op: ControlOp) -> Result<(), Fail> {
    let name = basalt_runtime::canonical_host(config, host)
        .ok_or_else(|| Fail::batch(LSBE_BAD_HOST, host.to_owned()))?;
    let auth = basalt_runtime::user_auth(config);
    let r = block_on(basalt_runtime::control::request(
        config,
        &name,
        Daemon::Sbatchd,
        op,
        &auth,
    ))?;
    r.map(|_| ()).map_err(|why| {
        let code = if why.to_ascii_lowercase().contains("permission") {
            LSBE_PERMISSION
        } else {
            LSBE_SBATCHD
        };
        Fail::batch(code, why)
    })
}

/// `int lsb_reconfig(struct mbdCtrlReq *req)`: `MBD_RECONFIG` (`badmin reconfig`) or
/// `MBD_RESTART` (`badmin mbdrestart`): the configuration is checked here first (fatal
/// errors: `LSBE_CONF_FATAL` and nothing is asked), then mbatchd re-reads it, then every
/// batch host's sbatchd (one that cannot be reached reads it when it next starts).
/// `MBD_CKCONFIG` (`badmin ckconfig`): the check alone, `LSBE_CONF_FATAL` or
/// `LSBE_CONF_WARNING` with the first problem as the message's detail. `name` is unused
/// (LSF's too); a `message` is refused (Basalt records none). 0, or -1.
///
/// # Safety
/// `req` is NULL or points to a `struct mbdCtrlReq` whose strings are NULL or strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_reconfig(req: *mut mbdCtrlReq) -> c_int {
    // SAFETY: the caller's promise.
    let r = match unsafe { req.as_ref() } {
        None => Err(bad_arg("no request")),
        // SAFETY: the caller's promise.
        Some(m) => unsafe { reconfig(m) },
    };
    finish(r.map(|()| 0), -1)
}

/// The batch configuration check of `badmin ckconfig`: the first fatal error, else the
/// first warning (`warnings`), as LSF's error.
fn config_check(warnings: bool) -> Result<(), Fail> {
    let envdir = basalt_runtime::envdir();
    match basalt_runtime::load_batch_config(&envdir) {
        Err(e) => {
            let first = e.0.first().map(ToString::to_string).unwrap_or_default();
            Err(Fail::batch(LSBE_CONF_FATAL, first))
        }
        Ok(l) if warnings && !l.warnings.is_empty() => {
            Err(Fail::batch(LSBE_CONF_WARNING, l.warnings[0].to_string()))
        }
        Ok(_) => Ok(()),
    }
}

/// # Safety
/// As [`lsb_reconfig`].
unsafe fn reconfig(m: &mbdCtrlReq) -> Result<(), Fail> {
    // SAFETY: the caller's promise.
    if unsafe { given(m.message) }.is_some() {
        return Err(bad_arg(
            "message: Basalt records no message for a reconfiguration",
        ));
    }
    let restart = match m.opCode {
        MBD_CKCONFIG => return config_check(true),
        MBD_RECONFIG => false,
        MBD_RESTART => true,
        other => return Err(bad_arg(format!("{other} is not an mbatchd operation"))),
    };
    config_check(false)?;
    let config = with_mbatchd(|mut c, config| async move {
        c.reconfig(ReconfigRequest { restart })
            .await
            .map_err(|s| Fail::from_status(&s))
            .and_then(|r| check(r.get_ref()))?;
        Ok(config)
    })?;
    block_on(basalt_cli::batch::badmin::reconfig_sbatchds(&config))?;
    Ok(())
}
