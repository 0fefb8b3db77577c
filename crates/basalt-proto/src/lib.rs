//! Basalt's wire schemas: prost messages and tonic clients/servers generated at build time
//! from `proto/basalt/<svc>/v1/*.proto` by protox (no `protoc` needed), plus conversions
//! between wire messages and `basalt-core` types.
//!
//! Inputs: the `.proto` files. Outputs: the `basalt::<svc>::v1` modules and the
//! [`PROTOCOL`] version every peer sends.

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
    pub mod sbatchd {
        pub mod v1 {
            tonic::include_proto!("basalt.sbatchd.v1");
        }
    }
}

pub use basalt::common::v1 as common;
pub use basalt::lim::v1 as lim;
pub use basalt::mbatchd::v1 as mbatchd;
pub use basalt::sbatchd::v1 as sbatchd;

mod convert;
pub use convert::*;

/// The schemas' API as a canonical listing (one line per message, field, enum value and
/// RPC), rendered by the build script; `tests/api_lock.rs` compares it with the checked-in
/// `proto/api.lock` so that no wire change goes unnoticed.
pub const API: &str = include_str!(concat!(env!("OUT_DIR"), "/api.txt"));

/// The wire protocol version this build speaks.
pub const PROTOCOL: common::ProtocolVersion = common::ProtocolVersion { major: 1, minor: 0 };

/// True when a peer's protocol version can be served by this build.
pub fn compatible(peer: Option<&common::ProtocolVersion>) -> bool {
    peer.is_some_and(|p| p.major == PROTOCOL.major)
}
