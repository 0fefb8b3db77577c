//! The client side: a tonic interceptor putting a fresh credential in every request.

use crate::key::KeySource;
use crate::{AuthError, CRED_METADATA, EAUTH_METADATA, Identity, PERMISSION_DENIED, cred, eauth};
use basalt_proto::common::EauthData;
use prost::Message;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tonic::metadata::{BinaryMetadataValue, MetadataMap};
use tonic::{Request, Status};

/// Where credentials come from.
#[derive(Debug)]
enum Source {
    /// Signed here with the cluster key (daemons; users who can read the key).
    Key {
        keys: Arc<KeySource>,
        who: Identity,
        cluster: String,
    },
    /// Asked of a LIM's credential socket; the first one is fetched up front.
    Socket {
        name: String,
        trusted: Vec<u32>,
        first: Mutex<Option<Vec<u8>>>,
        /// Credentials of a batch ([`crate::socket::fetch_batch`]) not used yet, with
        /// when they came; None once the LIM turned out to have no batch socket.
        stash: Mutex<Option<Stash>>,
    },
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

/// Credentials of a batch not used yet, each with when it came.
type Stash = Vec<(Instant, Vec<u8>)>;

/// A credential of a batch is used within this long of its minting (well inside
/// [`crate::CRED_TTL`], so that clock skew between hosts leaves it fresh), else dropped.
const STASH_MAX_AGE: Duration = Duration::from_secs(10);

#[derive(Debug)]
struct Inner {
    source: Source,
    /// The address requests should come from (the host's own address), when known.
    local: Option<IpAddr>,
    /// The host the credentials name.
    host: Option<String>,
}

/// Puts a credential in every request it intercepts; cheap to clone.
#[derive(Debug, Clone)]
pub struct Authenticator {
    inner: Arc<Inner>,
    /// The host of the daemon the requests go to (`eauth -c <host>`).
    target: Option<Arc<str>>,
}

impl Authenticator {
    fn of(source: Source, local: Option<IpAddr>, host: Option<String>) -> Authenticator {
        Authenticator {
            inner: Arc::new(Inner {
                source,
                local,
                host,
            }),
            target: None,
        }
    }

    /// Sign as `who` with the cluster key (a daemon, or a user who can read the key).
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
            local,
            host,
        )
    }

    /// Fetch credentials from the LIM credential socket `name`; fails if the first one
    /// cannot be had within `timeout`. `local` maps the credential's host to its address.
    pub fn from_socket(
        name: &str,
        trusted: Vec<u32>,
        timeout: Duration,
        local: impl FnOnce(&str) -> Option<IpAddr>,
    ) -> Result<Authenticator, AuthError> {
        let first = crate::socket::fetch(name, &trusted, timeout)?;
        let host = cred::peek(&first)
            .map(|c| c.host)
            .ok_or_else(|| AuthError::NoCredential("unreadable credential".into()))?;
        let addr = local(&host);
        Ok(Authenticator::of(
            Source::Socket {
                name: name.to_owned(),
                trusted,
                first: Mutex::new(Some(first)),
                stash: Mutex::new(Some(Vec::new())),
            },
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
            local,
            None,
        )
    }

    /// Cannot authenticate; requests fail with `reason`.
    pub fn unavailable(reason: impl Into<String>) -> Authenticator {
        Authenticator::of(Source::Unavailable(reason.into()), None, None)
    }

    /// The same credentials, for requests to the daemons of `host`.
    pub fn towards(&self, host: &str) -> Authenticator {
        Authenticator {
            inner: self.inner.clone(),
            target: Some(Arc::from(host)),
        }
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

    /// One fresh credential: (metadata key, value).
    pub fn credential(&self) -> Result<(&'static str, Vec<u8>), AuthError> {
        match &self.inner.source {
            Source::Key { keys, who, cluster } => {
                let c = cred::mint(who, cluster, cred::now_ms())?;
                Ok((CRED_METADATA, cred::seal(&keys.current(), &c)?))
            }
            Source::Socket {
                name,
                trusted,
                first,
                stash,
            } => {
                let cached = match first.lock() {
                    Ok(mut g) => g.take(),
                    Err(p) => p.into_inner().take(),
                };
                if let Some(b) = cached {
                    return Ok((CRED_METADATA, b));
                }
                // The first one went to the first request; the next ones come in batches
                // (one round trip to the LIM for many requests), while the LIM has them.
                let mut stash = match stash.lock() {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
                if let Some(kept) = stash.as_mut() {
                    let now = Instant::now();
                    kept.retain(|(at, _)| now.duration_since(*at) < STASH_MAX_AGE);
                    if let Some((_, b)) = kept.pop() {
                        return Ok((CRED_METADATA, b));
                    }
                    let batch = crate::socket::batch_name(name);
                    match crate::socket::fetch_batch(&batch, trusted, Duration::from_secs(5)) {
                        Ok(mut got) => {
                            if let Some(b) = got.pop() {
                                kept.extend(got.into_iter().map(|c| (now, c)));
                                return Ok((CRED_METADATA, b));
                            }
                        }
                        Err(AuthError::Socket { .. }) => *stash = None,
                        Err(e) => return Err(e),
                    }
                }
                drop(stash);
                Ok((
                    CRED_METADATA,
                    crate::socket::fetch(name, trusted, Duration::from_secs(5))?,
                ))
            }
            Source::Eauth {
                program,
                uid,
                gid,
                user,
            } => {
                let host = self.target.as_deref().unwrap_or("");
                let data = eauth::client_data(program, host)?;
                Ok((
                    EAUTH_METADATA,
                    EauthData {
                        uid: *uid,
                        gid: *gid,
                        user: user.clone(),
                        data,
                    }
                    .encode_to_vec(),
                ))
            }
            Source::Unavailable(r) => Err(AuthError::NoCredential(r.clone())),
        }
    }

    /// Put a fresh credential and this build's protocol version into `md`.
    pub fn stamp(&self, md: &mut MetadataMap) -> Result<(), AuthError> {
        let (key, value) = self.credential()?;
        md.insert_bin(key, BinaryMetadataValue::from_bytes(&value));
        if let Ok(v) = basalt_proto::protocol_text().parse() {
            md.insert(basalt_proto::PROTOCOL_METADATA, v);
        }
        Ok(())
    }
}

impl tonic::service::Interceptor for Authenticator {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        self.stamp(req.metadata_mut())
            .map_err(|e| Status::unauthenticated(format!("{PERMISSION_DENIED}: {e}")))?;
        Ok(req)
    }
}
