//! Room for client requests in flight: the `Mbatchd` service (the commands' and the C
//! API's) takes at most [`IN_FLIGHT_BOUND`] requests at once, each counted from its
//! arrival — before its credential is checked — until its answer has been sent (its
//! response body dropped). One past that is answered at once with "mbatchd is busy"
//! and the retry metadata ([`crate::inbox::busy`]). The serving layer does the counting
//! (`basalt_runtime::serve::Admission`).
//!
//! Why this beside the owner's inbox bound ([`crate::inbox`]): a request costs memory
//! long before its message reaches the inbox and after its answer leaves the owner —
//! its HTTP/2 stream and task, the check of its credential (an HMAC and a write to the
//! replay journal), its answer held until the client's flow-control window lets it out.
//! Measured with tests/tests/mbatchd_flood.rs (100,000 requests from 500 connections
//! at once, 200 in flight on each, a debug build; growth of mbatchd's resident size):
//! unbounded, 845 to 929 MB; the inbox bounded alone (never full: the owner kept up), 370 MB —
//! the requests waited in front of their credential's check; with this bound at 256,
//! 1,024, 2,048, 4,096 and 16,384 requests: 83, 124, 149, 215 and 414 MB (about 33 KB
//! for each request in flight, the rest the refused ones' streams).
//!
//! The sbatchds' peer service and the other clusters' service are not counted: their
//! calls are bounded by the hosts and links that make them, and must not be refused.

/// The path prefix of the commands' service.
pub(crate) const CLIENT_SERVICE: &str = "/basalt.mbatchd.v1.Mbatchd/";

/// The most client requests in flight at once: twice what the inbox holds (as many
/// being checked, answered and sent as waiting for the owner). Far above what the
/// bench's 64 concurrent clients or any crowd of commands keep in flight (LSF's own
/// query threads, `MAX_CONCURRENT_QUERY`, default to 100), and it keeps a flood's cost
/// near 150 MB (see above).
pub(crate) const IN_FLIGHT_BOUND: usize = 2 * crate::inbox::CLIENT_BOUND;

/// The admission of the commands' service.
pub(crate) fn admission() -> basalt_runtime::serve::Admission {
    basalt_runtime::serve::Admission::new(CLIENT_SERVICE, IN_FLIGHT_BOUND, crate::inbox::busy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counted_prefix_is_the_commands_service() {
        use basalt_proto::mbatchd::mbatchd_server::MbatchdServer;
        use tonic::server::NamedService;
        assert_eq!(
            CLIENT_SERVICE,
            format!(
                "/{}/",
                <MbatchdServer<crate::MbatchdService> as NamedService>::NAME
            )
        );
    }
}
