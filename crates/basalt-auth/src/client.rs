//! The client side: where a process's tickets come from, and the credential it makes
//! for each request ([`Authenticator::credential_for`]), which [`crate::channel`] puts
//! into every request a channel sends.

use crate::cred::{self, Ticket};
use crate::key::KeySource;
use crate::{AuthError, CRED_METADATA, EAUTH_METADATA, Identity, eauth};
use basalt_proto::common::EauthData;
use prost::Message;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tonic::metadata::{BinaryMetadataValue, MetadataMap};

/// Where tickets come from.
#[derive(Debug)]
enum Source {
    /// Issued here with a key (daemons; users who can read the cluster key; an mbatchd
    /// speaking to another cluster with the MultiCluster key).
    Key {
        keys: Arc<KeySource>,
        who: Identity,
        cluster: String,
    },
    /// Asked of a LIM's credential socket; the first one is fetched up front.
    Socket { name: String, trusted: Vec<u32> },
    /// `LSF_AUTH=eauth`: `eauth -c <host>`.
    Eauth {
        program: PathBuf,
        uid: u32,
        gid: u32,
        user: String,
    },
    /// No way to authenticate: every request fails with this reason.
    Unavailable(String),
}

/// A ticket is used for this long after it was had, then a new one is had: well inside
/// [`crate::TICKET_TTL`], so that clock skew between hosts leaves it fresh.
const TICKET_REUSE: Duration = Duration::from_secs(60);

#[derive(Debug)]
struct Inner {
    source: Source,
    /// The ticket in use and when it was had.
    ticket: Mutex<Option<(Instant, Ticket)>>,
    /// The address requests should come from (the host's own address), when known.
    local: Option<IpAddr>,
    /// The host the credentials name.
    host: Option<String>,
}

/// Makes the credential of every request; cheap to clone.
#[derive(Debug, Clone)]
pub struct Authenticator {
    inner: Arc<Inner>,
    /// The host of the daemon the requests go to (what each request's seal names;
    /// `eauth -c <host>`).
    target: Option<Arc<str>>,
}

impl Authenticator {
    fn of(
        source: Source,
        ticket: Option<Ticket>,
        local: Option<IpAddr>,
        host: Option<String>,
    ) -> Authenticator {
        Authenticator {
            inner: Arc::new(Inner {
                source,
                ticket: Mutex::new(ticket.map(|t| (Instant::now(), t))),
                local,
                host,
            }),
            target: None,
        }
    }

    /// Sign as `who` with `keys` (a daemon, a user who can read the cluster key, or —
    /// `who.kind` inter-cluster, the MultiCluster key — an mbatchd speaking for its
    /// cluster).
    pub fn with_key(
        keys: Arc<KeySource>,
        who: Identity,
        cluster: &str,
        local: Option<IpAddr>,
    ) -> Authenticator {
        let host = Some(who.host.clone());
        Authenticator::of(
            Source::Key {
                keys,
                who,
                cluster: cluster.to_owned(),
            },
            None,
            local,
            host,
        )
    }

    /// Get tickets from the LIM credential socket `name`; fails if the first one cannot
    /// be had within `timeout`. `local` maps the ticket's host to its address.
    pub fn from_socket(
        name: &str,
        trusted: Vec<u32>,
        timeout: Duration,
        local: impl FnOnce(&str) -> Option<IpAddr>,
    ) -> Result<Authenticator, AuthError> {
        let first = crate::socket::fetch(name, &trusted, timeout)?;
        let host = first.credential().host.clone();
        let addr = local(&host);
        Ok(Authenticator::of(
            Source::Socket {
                name: name.to_owned(),
                trusted,
            },
            Some(first),
            addr,
            Some(host),
        ))
    }

    /// `LSF_AUTH=eauth` as this process's real user.
    pub fn eauth(program: PathBuf, local: Option<IpAddr>) -> Authenticator {
        let uid = nix::unistd::getuid().as_raw();
        Authenticator::of(
            Source::Eauth {
                program,
                uid,
                gid: nix::unistd::getgid().as_raw(),
                user: crate::user_name(uid).unwrap_or_else(|| uid.to_string()),
            },
            None,
            local,
            None,
        )
    }

    /// Cannot authenticate; requests fail with `reason`.
    pub fn unavailable(reason: impl Into<String>) -> Authenticator {
        Authenticator::of(Source::Unavailable(reason.into()), None, None, None)
    }

    /// The same credentials, for requests to the daemons of `host`.
    pub fn towards(&self, host: &str) -> Authenticator {
        Authenticator {
            inner: self.inner.clone(),
            target: Some(Arc::from(host)),
        }
    }

    /// The host the requests go to ([`Authenticator::towards`]).
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The address requests should leave from (bind it, so the receiver sees the host).
    pub fn local_addr(&self) -> Option<IpAddr> {
        self.inner.local
    }

    /// The host the credentials name (None for eauth and when unavailable).
    pub fn host(&self) -> Option<&str> {
        self.inner.host.as_deref()
    }

    /// The master host as the LIM whose credential socket this authenticator uses knows
    /// it, asked on that LIM's master socket ([`crate::socket::master_name`]). `None`
    /// when credentials do not come from a LIM socket, the LIM knows no master, or it
    /// does not answer within `timeout`.
    pub fn local_master(&self, timeout: Duration) -> Option<String> {
        match &self.inner.source {
            Source::Socket { name, trusted, .. } => {
                crate::socket::fetch_master(&crate::socket::master_name(name), trusted, timeout)
                    .ok()
                    .flatten()
            }
            _ => None,
        }
    }

    /// Why requests cannot be authenticated, if they cannot.
    pub fn unavailable_reason(&self) -> Option<&str> {
        match &self.inner.source {
            Source::Unavailable(r) => Some(r),
            _ => None,
        }
    }

    /// The ticket to seal with now: the one in use while it is young enough, else a new
    /// one.
    fn ticket(&self) -> Result<Ticket, AuthError> {
        let mut held = match self.inner.ticket.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        // Young enough by the monotonic clock and by the wall clock (which the receiver
        // judges it by: after a step of the wall clock, a new ticket at once).
        if let Some((at, t)) = held.as_ref()
            && at.elapsed() < TICKET_REUSE
            && cred::fresh(
                t.credential().issued_ms,
                cred::now_ms(),
                TICKET_REUSE.as_millis() as u64,
            )
        {
            return Ok(t.clone());
        }
        let t = match &self.inner.source {
            Source::Key { keys, who, cluster } => {
                Ticket::issue(&keys.current(), who, cluster, cred::now_ms())?
            }
            Source::Socket { name, trusted } => {
                crate::socket::fetch(name, trusted, Duration::from_secs(5))?
            }
            Source::Eauth { .. } => {
                return Err(AuthError::NoCredential("eauth has no tickets".into()));
            }
            Source::Unavailable(r) => return Err(AuthError::NoCredential(r.clone())),
        };
        *held = Some((Instant::now(), t.clone()));
        Ok(t)
    }

    /// The credential of one request for `path` with `body` (the request body as it will
    /// be sent; None for a client-streaming method) to the target host: (metadata key,
    /// value).
    pub fn credential_for(
        &self,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<(&'static str, Vec<u8>), AuthError> {
        if let Source::Eauth {
            program,
            uid,
            gid,
            user,
        } = &self.inner.source
        {
            let host = self.target.as_deref().unwrap_or("");
            let data = eauth::client_data(program, host)?;
            return Ok((
                EAUTH_METADATA,
                EauthData {
                    uid: *uid,
                    gid: *gid,
                    user: user.clone(),
                    data,
                }
                .encode_to_vec(),
            ));
        }
        let target = self
            .target
            .as_deref()
            .ok_or_else(|| AuthError::NoCredential("no target host for the request".into()))?;
        let ticket = self.ticket()?;
        let bytes = ticket.seal(target, &cred::binding(path, body), cred::now_ms())?;
        Ok((CRED_METADATA, bytes))
    }

    /// Put the credential of one request ([`Authenticator::credential_for`]) and this
    /// build's protocol version into `md`.
    pub fn stamp(
        &self,
        md: &mut MetadataMap,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<(), AuthError> {
        let (key, value) = self.credential_for(path, body)?;
        md.insert_bin(key, BinaryMetadataValue::from_bytes(&value));
        if let Ok(v) = basalt_proto::protocol_text().parse() {
            md.insert(basalt_proto::PROTOCOL_METADATA, v);
        }
        Ok(())
    }
}
