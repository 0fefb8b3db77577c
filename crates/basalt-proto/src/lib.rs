//! Basalt's wire schemas: prost messages and tonic clients/servers generated at build time
//! from `proto/basalt/<svc>/v1/*.proto` by protox (no `protoc` needed), plus conversions
//! between wire messages and `basalt-core` types.
//!
//! Inputs: the `.proto` files. Outputs: the `basalt::<svc>::v1` modules and the
//! [`PROTOCOL`] version every peer sends in each request's metadata
//! ([`PROTOCOL_METADATA`]; no message carries it: the body `protocol` fields requests
//! had before are reserved).
//!
//! The schemas' rules (stated in each `.proto` header): enum value 0 is `*_UNSPECIFIED`
//! and refused by receivers; removed field numbers are reserved; [`API`] must match the
//! checked-in `proto/api.lock`; requests outside `PROTOCOL_MIN..=PROTOCOL` are refused
//! (once, by `basalt_runtime::serve`'s layer, with [`check_protocol_text`]);
//! each daemon serves a client service and a daemon-only peer service on one port.

#![allow(clippy::all, missing_docs, unreachable_pub)]

pub mod basalt {
    pub mod common {
        pub mod v1 {
            tonic::include_proto!("basalt.common.v1");
        }
    }
    pub mod lim {
        pub mod v1 {
            tonic::include_proto!("basalt.lim.v1");
        }
    }
    pub mod mbatchd {
        pub mod v1 {
            tonic::include_proto!("basalt.mbatchd.v1");
        }
    }
    pub mod res {
        pub mod v1 {
            tonic::include_proto!("basalt.res.v1");
        }
    }
    pub mod sbatchd {
        pub mod v1 {
            tonic::include_proto!("basalt.sbatchd.v1");
        }
    }
}

pub use basalt::common::v1 as common;
pub use basalt::lim::v1 as lim;
pub use basalt::mbatchd::v1 as mbatchd;
pub use basalt::res::v1 as res;
pub use basalt::sbatchd::v1 as sbatchd;

mod convert;
pub use convert::*;

/// The schemas' API as a canonical listing (one line per message, field, enum value and
/// RPC), rendered by the build script; `tests/api_lock.rs` compares it with the checked-in
/// `proto/api.lock` so that no wire change goes unnoticed.
pub const API: &str = include_str!(concat!(env!("OUT_DIR"), "/api.txt"));

include!(concat!(env!("OUT_DIR"), "/client_streaming.rs"));

/// The wire protocol version this build speaks.
///
/// 2.0: every enum's value 0 means "unspecified" (1.0 used 0 for KILL, OK, USER), so a 1.0
/// peer is not served.
///
/// 3.0: a credential is a ticket of a domain (user, daemon, inter-cluster: each signed with
/// its own key) with a seal for one request (its method and body, the target host, a few
/// seconds, a nonce accepted once across restarts); a 2.0 credential authorised any
/// request for five minutes, so a 2.0 peer is not served.
pub const PROTOCOL: common::ProtocolVersion = common::ProtocolVersion { major: 3, minor: 0 };

/// The oldest protocol version this build still serves: peers in `PROTOCOL_MIN..=PROTOCOL`
/// are served, others are refused with a message naming both versions.
pub const PROTOCOL_MIN: common::ProtocolVersion = common::ProtocolVersion { major: 3, minor: 0 };

/// The gRPC metadata key every request carries its sender's protocol version in
/// (`major.minor`); clients add it with their credential, servers check it before any
/// handler runs. It is the only place a request carries its version, and that check the
/// only one.
pub const PROTOCOL_METADATA: &str = "basalt-protocol";

/// The gRPC metadata of a refusal the client may try again after, in seconds (mbatchd's
/// pending job threshold, MAX_PEND_JOBS: SUB_TRY_INTERVAL).
pub const RETRY_SECS_METADATA: &str = "basalt-retry-secs";

/// The gRPC metadata that marks a refusal as "busy": the daemon had no room for the
/// request and did nothing of it (mbatchd's bound on client requests); the client sends
/// the same request again after [`RETRY_SECS_METADATA`] (`basalt_auth::AuthService`
/// does, when made with `retrying_when_busy`).
pub const BUSY_METADATA: &str = "basalt-busy";

/// [`PROTOCOL`] as the value of [`PROTOCOL_METADATA`].
pub fn protocol_text() -> String {
    format!("{}.{}", PROTOCOL.major, PROTOCOL.minor)
}

/// True when a peer's protocol version can be served by this build
/// (`PROTOCOL_MIN..=PROTOCOL`).
pub fn compatible(peer: Option<&common::ProtocolVersion>) -> bool {
    peer.is_some_and(|p| {
        let v = (p.major, p.minor);
        (PROTOCOL_MIN.major, PROTOCOL_MIN.minor) <= v && v <= (PROTOCOL.major, PROTOCOL.minor)
    })
}

/// Check the [`PROTOCOL_METADATA`] value of a request: `Err` says why it is not served.
pub fn check_protocol_text(value: Option<&str>) -> Result<(), String> {
    let Some(value) = value else {
        return Err(format!(
            "the request carries no protocol version; this build speaks {}.{}..={}",
            PROTOCOL_MIN.major,
            PROTOCOL_MIN.minor,
            protocol_text()
        ));
    };
    let parsed = value
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
    let peer = parsed.map(|(major, minor)| common::ProtocolVersion { major, minor });
    if compatible(peer.as_ref()) {
        Ok(())
    } else {
        Err(format!(
            "incompatible protocol version {value:?}; this build speaks {}.{}..={}",
            PROTOCOL_MIN.major,
            PROTOCOL_MIN.minor,
            protocol_text()
        ))
    }
}

#[cfg(test)]
mod protocol_tests {
    use super::*;

    #[test]
    fn the_protocol_window_serves_min_to_current_only() {
        assert!(check_protocol_text(Some(&protocol_text())).is_ok());
        assert!(check_protocol_text(Some("3.0")).is_ok());
        // 1.0 gave enum value 0 a meaning (KILL, OK, USER): refused.
        let old = check_protocol_text(Some("1.0")).unwrap_err();
        assert!(old.contains("3.0..=3.0"), "{old}");
        // 2.0's credentials authorised any request for five minutes: refused.
        assert!(check_protocol_text(Some("2.0")).is_err());
        let too_new = format!("{}.{}", PROTOCOL.major, PROTOCOL.minor + 1);
        assert!(check_protocol_text(Some(&too_new)).is_err());
        assert!(check_protocol_text(Some("0.9")).is_err());
        assert!(check_protocol_text(Some("4.0")).is_err());
        assert!(check_protocol_text(Some("one")).is_err());
        let missing = check_protocol_text(None).unwrap_err();
        assert!(missing.contains("no protocol version"), "{missing}");
        assert!(!compatible(None));
    }
}
