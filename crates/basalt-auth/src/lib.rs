//! Who is asking: the proof every Basalt request carries and the checks every daemon makes
//! before acting on it (docs/security.md).
//!
//! Owns:
//! * the **cluster key** ([`key`]): a file of hex keys readable only by root (or by the
//!   owner of a personal cluster), re-read when it changes so keys rotate without restarts;
//! * **credentials** ([`cred`]): a ticket (kind, uid, gid, user, host, cluster, time, nonce)
//!   signed with the key of its domain — user, daemon or inter-cluster, each derived
//!   from the key file with its own label — good for [`TICKET_TTL`], and per request a
//!   seal bound to the method, the body and the target host, good for [`SEAL_TTL`] and
//!   accepted once ([`replay`]: the nonces seen, kept across restarts);
//! * the **credential socket** ([`socket`]): the LIM of every host issues user tickets
//!   on a Unix socket, learning the caller's uid/gid from the kernel (SO_PEERCRED);
//! * **eauth** ([`eauth`]): `LSF_AUTH=eauth` runs LSF's external authenticator
//!   (`eauth -c host` on the client, one long-lived `eauth -s` on the server);
//! * the client side ([`Authenticator`]; [`channel::AuthService`], a transport that seals
//!   every request it sends) and the server side ([`Verifier`]: signatures, domain,
//!   freshness, target, binding, replay, cluster membership, the request's source
//!   address, personal-cluster ownership; run by the daemons' authentication layer
//!   before a request's body is read).
//!
//! Inputs: the configuration (lsf.conf `LSF_AUTH`, `BASALT_CLUSTER_KEY`, the cluster's
//! hosts and their addresses, given by the caller), gRPC metadata and peer addresses.
//! Outputs: credentials in metadata, verified [`Identity`]s or `User permission denied`.

pub mod channel;
pub mod cred;
pub mod eauth;
pub mod hosts;
pub mod key;
pub mod policy;
pub mod replay;
pub mod socket;

mod client;
mod verify;

pub use basalt_proto::common::credential::Kind;
pub use client::Authenticator;
pub use hosts::HostTable;
pub use verify::{InterClusterTrust, Need, Pending, Verified, Verifier};

use std::path::PathBuf;
use std::time::Duration;

/// gRPC metadata entry carrying a sealed credential.
pub const CRED_METADATA: &str = "basalt-cred-bin";
/// gRPC metadata entry carrying eauth data (`LSF_AUTH=eauth`).
pub const EAUTH_METADATA: &str = "basalt-eauth-bin";
/// How long a ticket stays valid (either side of the receiver's clock), like MUNGE's
/// credentials. A ticket alone authorises nothing: each request needs a seal.
pub const TICKET_TTL: Duration = Duration::from_secs(300);
/// How long a request's seal stays valid (either side of the receiver's clock): what one
/// call needs, plus the clock skew between hosts that NTP leaves.
pub const SEAL_TTL: Duration = Duration::from_secs(30);
/// What the client sees when its request is refused (LSF's message).
pub const PERMISSION_DENIED: &str = "User permission denied";

/// A proven requester.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub kind: Kind,
    pub uid: u32,
    pub gid: u32,
    pub user: String,
    /// The cluster host the request came from.
    pub host: String,
}

/// Why something about authentication failed.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("cluster key {path}: {reason}")]
    Key { path: PathBuf, reason: String },
    #[error("no random numbers: {0}")]
    Random(String),
    /// The request is refused; the reason goes to the daemon's log, the client sees
    /// [`PERMISSION_DENIED`].
    #[error("{0}")]
    Refused(String),
    #[error("cannot get a credential: {0}")]
    NoCredential(String),
    #[error("eauth: {0}")]
    Eauth(String),
    #[error("credential socket {name}: {reason}")]
    Socket { name: String, reason: String },
    /// The replay cache's files cannot be used.
    #[error("replay cache: {0}")]
    Replay(String),
}

/// Where the cluster key is: lsf.conf `BASALT_CLUSTER_KEY` (relative to `LSF_ENVDIR`),
/// else `LSF_ENVDIR/basalt.key`.
pub fn key_path(config: &basalt_config::Config) -> PathBuf {
    match config
        .lsf_conf
        .get("BASALT_CLUSTER_KEY")
        .filter(|v| !v.trim().is_empty())
    {
        Some(p) => config.resolve_path(p.trim()),
        None => config.envdir.join("basalt.key"),
    }
}

/// Is `LSF_AUTH=eauth` configured?
pub fn uses_eauth(config: &basalt_config::Config) -> bool {
    config
        .lsf_conf
        .get("LSF_AUTH")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("eauth"))
}

/// The eauth executable: `LSF_SERVERDIR/eauth`.
pub fn eauth_program(config: &basalt_config::Config) -> PathBuf {
    config.serverdir().join("eauth")
}

/// May root run jobs? (`LSF_ROOT_REX` set to anything but `n`/`no`/`false`/`0`.)
pub fn root_rex(config: &basalt_config::Config) -> bool {
    config.lsf_conf.get("LSF_ROOT_REX").is_some_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        !v.is_empty() && !matches!(v.as_str(), "n" | "no" | "false" | "0")
    })
}

/// The user name of `uid` from the password database.
pub fn user_name(uid: u32) -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
}

/// This process's identity as a daemon of `host`.
pub fn daemon_identity(host: &str) -> Identity {
    let uid = nix::unistd::geteuid().as_raw();
    Identity {
        kind: Kind::Daemon,
        uid,
        gid: nix::unistd::getegid().as_raw(),
        user: user_name(uid).unwrap_or_else(|| uid.to_string()),
        host: host.to_owned(),
    }
}
