//! Hostile requests against a running mbatchd: the checks of the fuzz target
//! `mbatchd_requests`, also run on stable with a fixed set of inputs by
//! `crates/basalt-mbatchd/tests/hostile_requests.rs` (which includes this file with
//! `#[path]`).
//!
//! **Input**: bytes, decoded by [`ops`] into a sequence of requests that a user (or a
//! cluster administrator) can send: submissions whose every field is drawn from a
//! dictionary of awkward values (deep or long dependency expressions, array specs, `%J`
//! patterns, huge numbers, NUL and newlines, long host lists and environments) and then
//! mutated by the input, job queries, job control (kill, stop, resume, signal, switch,
//! move, force), queue and host control, and the read-only queries.
//!
//! **Target**: a real mbatchd serving its gRPC service in this process, with a real LIM,
//! its event log on disk and the requests signed like a real command's ([`Target::start`]).
//!
//! **Checks** ([`Target::drive`]), besides "never panics": every request gets an answer
//! (a reply or a refusal; a transport failure, a timeout or a cancelled call means mbatchd
//! did not answer), the mbatchd task is still running after each one, and it still answers
//! a job query at the end.

use basalt_proto::mbatchd as pb;
use basalt_proto::mbatchd::mbatchd_client::MbatchdClient;
use std::sync::Arc;
use std::time::Duration;

/// How long one request may take before it counts as not answered.
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(20);

/// One request, and whether the administrator sends it (else an ordinary user).
#[derive(Debug, Clone)]
pub enum Op {
    Submit(bool, Box<pb::SubmitRequest>),
    Jobs(bool, pb::JobsRequest),
    Signal(bool, pb::SignalRequest),
    Switch(bool, pb::SwitchRequest),
    Modify(bool, Box<pb::ModifyRequest>),
    Move(bool, pb::MoveRequest),
    Force(bool, pb::ForceRequest),
    Queues(bool, pb::QueuesRequest),
    Hosts(bool, pb::HostsRequest),
    Params(bool),
    QueueCtl(bool, pb::QueueCtlRequest),
    HostCtl(bool, pb::HostCtlRequest),
}

impl Op {
    /// Sent by the administrator (root)?
    pub fn admin(&self) -> bool {
        match self {
            Op::Submit(a, _)
            | Op::Jobs(a, _)
            | Op::Signal(a, _)
            | Op::Switch(a, _)
            | Op::Modify(a, _)
            | Op::Move(a, _)
            | Op::Force(a, _)
            | Op::Queues(a, _)
            | Op::Hosts(a, _)
            | Op::Params(a)
            | Op::QueueCtl(a, _)
            | Op::HostCtl(a, _) => *a,
        }
    }
}

/// The input, read a byte at a time (zeros once it is used up).
struct Src<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Src<'_> {
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    fn pick<'b>(&mut self, from: &[&'b str]) -> &'b str {
        from[usize::from(self.u8()) % from.len()]
    }

    /// How many times to repeat a piece: mostly small, sometimes past every bound.
    fn count(&mut self) -> usize {
        match self.u8() % 8 {
            0 => 0,
            1..=4 => usize::from(self.u8() % 16),
            5 => usize::from(self.u8()) * 8,
            6 => 2_000 + usize::from(self.u8()) * 40,
            _ => 70_000,
        }
    }

    /// A value built from the dictionary `dict`, then mutated.
    fn text(&mut self, dict: &[&str]) -> String {
        let mut s = String::new();
        for _ in 0..1 + self.u8() % 3 {
            let piece = self.pick(dict);
            match self.u8() % 4 {
                0 => {
                    let n = self.count();
                    s.push_str(&piece.repeat(n.max(1)));
                }
                1 => {
                    // Nest: n openers, the piece, n closers.
                    let (open, close) = match self.u8() % 4 {
                        0 => ("(", ")"),
                        1 => ("!", ""),
                        2 => ("[", "]"),
                        _ => ("\"", "\""),
                    };
                    let n = self.count();
                    s.push_str(&open.repeat(n));
                    s.push_str(piece);
                    s.push_str(&close.repeat(n));
                }
                _ => s.push_str(piece),
            }
        }
        // Byte-level mutations, kept valid UTF-8 (a gRPC string must be).
        for _ in 0..self.u8() % 4 {
            let at = if s.is_empty() {
                0
            } else {
                let mut i = self.u32() as usize % (s.len() + 1);
                while !s.is_char_boundary(i) {
                    i -= 1;
                }
                i
            };
            match self.u8() % 4 {
                0 => s.insert(at, char::from(self.u8() % 128)),
                1 => s.truncate(at),
                2 => s.insert_str(at, self.pick(AWKWARD)),
                _ => {
                    if let Some(c) = char::from_u32(self.u32() % 0x11_0000) {
                        s.insert(at, c);
                    }
                }
            }
        }
        s
    }

    fn ids(&mut self) -> Vec<pb::JobRef> {
        (0..self.u8() % 4)
            .map(|_| pb::JobRef {
                job_id: match self.u8() % 4 {
                    0 => 0,
                    1 => u64::from(self.u8() % 16),
                    2 => u64::MAX,
                    _ => u64::from(self.u32()),
                },
                idx: match self.u8() % 3 {
                    0 => 0,
                    1 => u32::from(self.u8()),
                    _ => self.u32(),
                },
                has_idx: self.bool(),
            })
            .collect()
    }
}

/// Pieces that have broken parsers before, or look like what a parser treats specially.
const AWKWARD: &[&str] = &[
    "", " ", "\0", "\n", "\r\n", "'", "\"", "\\", "(", ")", "[", "]", "!", "&&", "||", "*", "%J",
    "%I", "%", ",", ":", "-", "=", "==", "!=", ">=", "é", "✓", "\u{202e}", "\u{feff}",
];

const DEPEND: &[&str] = &[
    "done(1)",
    "ended(2)",
    "exit(3, != 0)",
    "started(\"name\")",
    "done(arr[*])",
    "post_done(1) && post_err(2)",
    "!done(1)",
    "(done(1) || exit(2)) && ended(3)",
    "done(name*)",
    " && done(4)",
    " || done(5)",
    "exit(1, >= 2147483648)",
    "done(18446744073709551615)",
    "done(1[4294967295])",
];

const NAMES: &[&str] = &[
    "job",
    "arr[1-10]%2",
    "arr[1-2147483646]",
    "arr[0-3]",
    "arr[1,3,5-7:2]",
    "arr[1-100:0]",
    "arr[",
    "a]b[",
    "big[1-1000000000]",
    "rule[x]",
    "%J.%I",
    "name with spaces",
];

const COMMANDS: &[&str] = &[
    "true",
    "sleep 1",
    "echo hi",
    "line1\nline2\n'\nJOB_CLEAN\n",
    "cat <<'EOF'\nEOF\n",
    "exit 3",
    "#!/bin/sh\necho script\n",
];

const PATHS: &[&str] = &[
    "/tmp/out.%J",
    "out.%J.%I",
    "/tmp/",
    "",
    "%J",
    "/dev/null",
    "a/b/c",
];

const RESREQ: &[&str] = &[
    "select[mem>100] rusage[mem=10]",
    "span[hosts=1]",
    "span[ptile=2]",
    "order[r15s:pg]",
    "select[(r1m<2 && mem>1)||swp>0]",
    "rusage[mem=1:duration=5]",
    "same[type]",
];

const HOSTS: &[&str] = &[
    "hostA",
    "hostA+1",
    "others",
    "all",
    "nohost",
    "hostA.example.org",
];

const QUEUES: &[&str] = &["normal", "", "nosuchqueue", "priority", "night"];

const USERS: &[&str] = &["all", "", "root", "hostile", "nobody"];

const SIGNALS: &[&str] = &[
    "USR1",
    "KILL",
    "9",
    "0",
    "-1",
    "99999999999",
    "SIGTERM",
    "BOGUS",
    "",
];

fn submit(src: &mut Src) -> pb::SubmitRequest {
    let n1 = src.u32() % 8;
    let job = pb::JobSubmission {
        queue: src.text(QUEUES),
        job_name: if src.bool() {
            String::new()
        } else {
            src.text(NAMES)
        },
        command: src.text(COMMANDS),
        is_script: src.bool(),
        cwd: src.text(PATHS),
        spec_cwd: if src.bool() {
            String::new()
        } else {
            src.text(PATHS)
        },
        in_file: String::new(),
        out_file: if src.bool() {
            src.text(PATHS)
        } else {
            String::new()
        },
        err_file: if src.bool() {
            src.text(PATHS)
        } else {
            String::new()
        },
        num_processors: match src.u8() % 4 {
            0 => n1,
            1 => src.u32(),
            _ => 1,
        },
        max_processors: match src.u8() % 4 {
            0 => src.u32() % 8,
            1 => u32::MAX,
            _ => 0,
        },
        asked_hosts: (0..src.count().min(20_000))
            .map(|_| src.pick(HOSTS).to_owned())
            .collect(),
        res_req: if src.bool() {
            src.text(RESREQ)
        } else {
            String::new()
        },
        project: if src.bool() {
            src.text(&["proj", "default"])
        } else {
            String::new()
        },
        begin_time: match src.u8() % 8 {
            0 => i64::from(src.u32()),
            1 => -1,
            2 => i64::MAX,
            _ => 0,
        },
        term_time: match src.u8() % 8 {
            0 => i64::from(src.u32()),
            1 => i64::MIN,
            _ => 0,
        },
        rlimits: (0..src.u8() % 14)
            .map(|_| match src.u8() % 4 {
                0 => -1,
                1 => i64::MAX,
                2 => -5,
                _ => i64::from(src.u32()),
            })
            .collect(),
        env: (0..src.u8() % 4)
            .map(|_| format!("V{}={}", src.u8(), src.text(AWKWARD)))
            .collect(),
        depend_cond: if src.bool() {
            src.text(DEPEND)
        } else {
            String::new()
        },
        pre_exec: if src.u8().is_multiple_of(8) {
            src.text(COMMANDS)
        } else {
            String::new()
        },
        mail_user: String::new(),
        umask: if src.u8().is_multiple_of(8) {
            src.u32()
        } else {
            0o022
        },
        home_dir: "/tmp".into(),
        from_host: src.text(HOSTS),
        options: src.u32(),
        options2: src.u32(),
        ..Default::default()
    };
    pb::SubmitRequest {
        job: Some(job),
        submit_token: if src.bool() {
            String::new()
        } else {
            src.text(&["tok", "x"])
        },
    }
}

/// Decode `data` into requests (at most `max`).
pub fn ops(data: &[u8], max: usize) -> Vec<Op> {
    let mut src = Src { data, pos: 0 };
    let mut out = Vec::new();
    while !src.done() && out.len() < max {
        let admin = src.u8().is_multiple_of(4);
        let op = match src.u8() % 16 {
            0..=5 => Op::Submit(admin, Box::new(submit(&mut src))),
            6 | 7 => Op::Jobs(
                admin,
                pb::JobsRequest {
                    ids: src.ids(),
                    user: src.text(USERS),
                    queue: if src.bool() {
                        src.text(QUEUES)
                    } else {
                        String::new()
                    },
                    host: if src.bool() {
                        src.text(HOSTS)
                    } else {
                        String::new()
                    },
                    job_name: if src.bool() {
                        src.text(NAMES)
                    } else {
                        String::new()
                    },
                    states: src.u32(),
                    reason_hosts: src.bool(),
                },
            ),
            8 | 9 => Op::Signal(
                admin,
                pb::SignalRequest {
                    ids: src.ids(),
                    kind: i32::from(src.u8() % 9),
                    signal: src.text(SIGNALS),
                    remove: src.bool(),
                    as_done: src.bool(),
                    user: src.text(USERS),
                    queue: String::new(),
                    host: String::new(),
                    job_name: if src.bool() {
                        src.text(NAMES)
                    } else {
                        String::new()
                    },
                    hold: src.bool(),
                    requeue_done: src.bool(),
                    requeue_exit: src.bool(),
                    requeue_running: src.bool(),
                    migrate_hosts: if src.bool() {
                        vec![src.text(HOSTS)]
                    } else {
                        Vec::new()
                    },
                    chkpnt_kill: src.bool(),
                    chkpnt_period: src.bool().then(|| i64::from(src.u8()) * 60),
                    chkpnt_force: src.bool(),
                },
            ),
            10 if src.bool() => Op::Switch(
                admin,
                pb::SwitchRequest {
                    ids: src.ids(),
                    queue: src.text(QUEUES),
                },
            ),
            10 => {
                // bmod: the options named (bmod's and some that are not), the values
                // of a random submission.
                let names = |src: &mut Src| -> Vec<String> {
                    (0..src.u8() % 6)
                        .map(|_| src.pick(MODIFY_OPTIONS).to_owned())
                        .collect()
                };
                let set = names(&mut src);
                let reset = names(&mut src);
                Op::Modify(
                    admin,
                    Box::new(pb::ModifyRequest {
                        job: src.ids().pop(),
                        values: submit(&mut src).job,
                        set,
                        reset,
                    }),
                )
            }
            11 => Op::Move(
                admin,
                pb::MoveRequest {
                    id: src.ids().pop(),
                    position: src.u32(),
                    from_bottom: src.bool(),
                },
            ),
            12 => Op::Force(
                admin,
                pb::ForceRequest {
                    id: src.ids().pop(),
                    hosts: (0..src.count().min(5_000))
                        .map(|_| src.pick(HOSTS).to_owned())
                        .collect(),
                    force: src.bool(),
                },
            ),
            13 => match src.u8() % 3 {
                0 => Op::Queues(
                    admin,
                    pb::QueuesRequest {
                        queues: vec![src.text(QUEUES)],
                    },
                ),
                1 => Op::Hosts(
                    admin,
                    pb::HostsRequest {
                        hosts: vec![src.text(HOSTS)],
                    },
                ),
                _ => Op::Params(admin),
            },
            14 => Op::QueueCtl(
                admin,
                pb::QueueCtlRequest {
                    // Never close or deactivate the queues for good: open or activate
                    // them again later in the same run is as likely.
                    op: i32::from(src.u8() % 6),
                    queues: vec![src.text(QUEUES)],
                    message: src.text(AWKWARD),
                },
            ),
            _ => Op::HostCtl(
                admin,
                pb::HostCtlRequest {
                    op: i32::from(src.u8() % 4),
                    hosts: vec![src.text(HOSTS)],
                    message: src.text(AWKWARD),
                },
            ),
        };
        out.push(op);
    }
    out
}

/// bmod's option names, and a few that are not.
const MODIFY_OPTIONS: &[&str] = &[
    "J", "q", "m", "R", "w", "i", "o", "oo", "e", "eo", "E", "Ep", "u", "P", "L", "G", "n", "b",
    "t", "x", "r", "N", "B", "Q", "app", "cwd", "c", "W", "M", "v", "F", "D", "S", "C", "p", "Z",
    "", "qq", "\u{0}",
];

/// A small deterministic generator (xorshift64*) for inputs without a fuzzer.
pub fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

type Client = MbatchdClient<basalt_runtime::AuthChannel>;

/// A running mbatchd (with its LIM) and clients for an ordinary user and for root.
pub struct Target {
    pub lims: basalt_testkit::InProcessCluster,
    pub config: Arc<basalt_config::Config>,
    pub user: Client,
    pub admin: Client,
    pub mbd: tokio::task::JoinHandle<()>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

fn client_as(config: &basalt_config::Config, uid: u32, user: &str) -> anyhow::Result<Client> {
    let keys = basalt_runtime::cluster_keys(config)?;
    let who = basalt_runtime::Identity {
        kind: basalt_auth::Kind::User,
        uid,
        gid: uid,
        user: user.to_owned(),
        host: "hostA".into(),
    };
    let auth = basalt_runtime::Authenticator::with_key(
        keys,
        who,
        &config.cluster_name,
        basalt_runtime::host_addr(config, "hostA").ok(),
    );
    Ok(basalt_runtime::mbatchd_channel(
        config,
        "hostA",
        ANSWER_DEADLINE,
        &auth,
    )?)
}

/// Is this status mbatchd's answer (a refusal), or the sign that it did not answer?
pub fn answered(s: &tonic::Status) -> bool {
    !matches!(
        s.code(),
        tonic::Code::Unavailable
            | tonic::Code::Cancelled
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Unknown
    )
}

impl Target {
    /// A one-host cluster (`name` picks its directory): a LIM and mbatchd in this process.
    pub async fn start(name: &str) -> anyhow::Result<Target> {
        let lims =
            basalt_testkit::InProcessCluster::start(name, &basalt_testkit::ClusterSpec::new(1))
                .await?;
        lims.wait_master("hostA", Duration::from_secs(20)).await?;
        let envdir = lims.dir.path().join("conf");
        let config = Arc::new(
            basalt_config::load(&envdir)
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .config,
        );
        let addr = basalt_runtime::mbd_addr(&config, "hostA")?;
        let mut listener = None;
        for _ in 0..100 {
            match tokio::net::TcpListener::bind(addr).await {
                Ok(l) => {
                    listener = Some(l);
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
        let listener = listener.ok_or_else(|| anyhow::anyhow!("cannot bind {addr}"))?;
        let (stop, rx) = tokio::sync::oneshot::channel::<()>();
        let run_config = config.clone();
        let mbd = tokio::spawn(async move {
            let r = basalt_mbatchd::run(run_config, "hostA", listener, async move {
                let _ = rx.await;
            })
            .await;
            if let Err(e) = r {
                eprintln!("mbatchd: {e}");
            }
        });
        let user = client_as(&config, 4242, "hostile")?;
        let admin = client_as(&config, 0, "root")?;
        let mut t = Target {
            lims,
            config,
            user,
            admin,
            mbd,
            stop: Some(stop),
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while t.serving().await.is_err() {
            if tokio::time::Instant::now() > deadline {
                anyhow::bail!("mbatchd did not start serving");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(t)
    }

    /// Does mbatchd answer a job query?
    pub async fn serving(&mut self) -> Result<(), String> {
        if self.mbd.is_finished() {
            return Err("the mbatchd task ended".into());
        }
        let q = pb::JobsRequest {
            user: "all".into(),
            ..Default::default()
        };
        match tokio::time::timeout(ANSWER_DEADLINE, self.user.jobs(q)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(s)) => Err(format!("job query refused: {s:?}")),
            Err(_) => Err("job query not answered".into()),
        }
    }

    /// Send every request; check each is answered and mbatchd keeps serving. Returns
    /// how many were accepted.
    pub async fn drive(&mut self, ops: &[Op]) -> Result<usize, String> {
        let mut accepted = 0;
        for op in ops {
            let c = if op.admin() {
                &mut self.admin
            } else {
                &mut self.user
            };
            let call = async {
                let r: Result<(), tonic::Status> = match op.clone() {
                    Op::Submit(_, r) => c.submit(*r).await.map(drop),
                    Op::Jobs(_, r) => c.jobs(r).await.map(drop),
                    Op::Signal(_, r) => c.signal(r).await.map(drop),
                    Op::Switch(_, r) => c.switch(r).await.map(drop),
                    Op::Modify(_, r) => c.modify(*r).await.map(drop),
                    Op::Move(_, r) => c.r#move(r).await.map(drop),
                    Op::Force(_, r) => c.force(r).await.map(drop),
                    Op::Queues(_, r) => c.queues(r).await.map(drop),
                    Op::Hosts(_, r) => c.hosts(r).await.map(drop),
                    Op::Params(_) => c.params(pb::ParamsRequest::default()).await.map(drop),
                    Op::QueueCtl(_, r) => c.queue_ctl(r).await.map(drop),
                    Op::HostCtl(_, r) => c.host_ctl(r).await.map(drop),
                };
                r
            };
            match tokio::time::timeout(ANSWER_DEADLINE, call).await {
                Ok(Ok(())) => accepted += 1,
                Ok(Err(s)) if answered(&s) => {}
                Ok(Err(s)) => return Err(format!("no answer to {}: {s:?}", describe(op))),
                Err(_) => return Err(format!("no answer in time to {}", describe(op))),
            }
            if self.mbd.is_finished() {
                return Err(format!("mbatchd ended after {}", describe(op)));
            }
        }
        self.serving().await?;
        Ok(accepted)
    }

    /// Kill every job (keeps a long fuzzing run from filling mbatchd).
    pub async fn kill_all(&mut self) {
        let r = pb::SignalRequest {
            ids: vec![pb::JobRef {
                job_id: 0,
                idx: 0,
                has_idx: false,
            }],
            kind: pb::SignalKind::Kill as i32,
            remove: true,
            user: "all".into(),
            ..Default::default()
        };
        let _ = tokio::time::timeout(ANSWER_DEADLINE, self.admin.signal(r)).await;
    }

    /// Stop mbatchd and wait for it.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(20), &mut self.mbd).await;
    }
}

/// A short description of a request for a failure message (values can be megabytes).
pub fn describe(op: &Op) -> String {
    let mut s = format!("{op:?}");
    if s.len() > 600 {
        let mut end = 600;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}
