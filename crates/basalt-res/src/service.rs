//! The `Res` gRPC service: a task per `Run` stream, its standard streams relayed both
//! ways, signals forwarded to its process group, its wait status last.

use crate::task::{TaskError, UserTask};
use basalt_auth::{Need, Verifier};
use basalt_proto::res::res_server::Res;
use basalt_proto::res::{Started, TaskInput, TaskOutput, task_input, task_output};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};
use tracing::{info, warn};

/// How long the task's output may still come after it exited (a background process
/// holding its standard output open is not waited for longer).
const OUTPUT_GRACE: Duration = Duration::from_secs(2);
/// How long an lsrcp copy whose client is gone has after SIGTERM before SIGKILL.
const FILE_OP_GRACE: Duration = Duration::from_secs(2);
/// The largest output chunk sent at once.
const CHUNK: usize = 32 * 1024;

/// The RES of one host.
pub struct ResService {
    host: String,
    verifier: Arc<Verifier>,
    root_rex: bool,
    /// sbatchd's directory of the jobs' control sockets on this host (Attach).
    ctl_dir: std::path::PathBuf,
    /// `LSF_SERVERDIR` (eexec).
    serverdir: std::path::PathBuf,
    /// The tasks running now.
    live: LiveTasks,
}

/// What a RES (its worker) serves now: its tasks' process groups (a task is in from its
/// start until its status is sent or its client is gone) and its attached jobs' relays.
#[derive(Debug, Clone)]
pub struct LiveTasks(Arc<tokio::sync::watch::Sender<Running>>);

#[derive(Debug, Default)]
pub struct Running {
    tasks: BTreeSet<i32>,
    attached: usize,
}

impl Running {
    fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.attached == 0
    }
}

impl Default for LiveTasks {
    fn default() -> Self {
        LiveTasks(Arc::new(
            tokio::sync::watch::Sender::new(Running::default()),
        ))
    }
}

impl LiveTasks {
    /// Count the task of process group `group` in until the returned guard is dropped.
    pub(crate) fn add_task(&self, group: Pid) -> Live {
        self.0.send_modify(|r| {
            r.tasks.insert(group.as_raw());
        });
        Live {
            set: self.clone(),
            group: Some(group.as_raw()),
        }
    }

    /// Count an attached job's relay in until the returned guard is dropped.
    pub(crate) fn add_attached(&self) -> Live {
        self.0.send_modify(|r| r.attached += 1);
        Live {
            set: self.clone(),
            group: None,
        }
    }

    /// How many tasks and attached jobs are served now.
    pub fn len(&self) -> usize {
        let r = self.0.borrow();
        r.tasks.len() + r.attached
    }

    /// Whether nothing is served now.
    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }

    /// Send `sig` to every task's process group (attached jobs are their sbatchd's).
    pub fn signal_all(&self, sig: Signal) {
        for g in self.0.borrow().tasks.iter() {
            kill_group(Pid::from_raw(*g), sig);
        }
    }

    /// Resolves when nothing is served.
    pub async fn idle(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(Running::is_empty).await;
    }
}

/// A running task's or attached job's place in [`LiveTasks`].
pub(crate) struct Live {
    set: LiveTasks,
    group: Option<i32>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.set.0.send_modify(|r| match self.group {
            Some(g) => {
                r.tasks.remove(&g);
            }
            None => r.attached = r.attached.saturating_sub(1),
        });
    }
}

impl std::fmt::Debug for ResService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResService")
            .field("host", &self.host)
            .finish()
    }
}

impl ResService {
    pub fn new(
        host: String,
        verifier: Arc<Verifier>,
        root_rex: bool,
        ctl_dir: std::path::PathBuf,
        serverdir: std::path::PathBuf,
    ) -> ResService {
        ResService {
            host,
            verifier,
            root_rex,
            ctl_dir,
            serverdir,
            live: LiveTasks::default(),
        }
    }

    /// What this RES serves now.
    pub fn live(&self) -> LiveTasks {
        self.live.clone()
    }
}

pub(crate) fn refused(e: TaskError) -> Status {
    match e {
        TaskError::Permission => Status::permission_denied(e.to_string()),
        TaskError::NotFound(_) => Status::not_found(e.to_string()),
        TaskError::Empty => Status::invalid_argument(e.to_string()),
        TaskError::NoUser(..) | TaskError::Start(..) => Status::failed_precondition(e.to_string()),
        TaskError::EexecInput => Status::invalid_argument(e.to_string()),
    }
}

#[tonic::async_trait]
impl Res for ResService {
    type RunStream = ReceiverStream<Result<TaskOutput, Status>>;
    type AttachStream = ReceiverStream<Result<TaskOutput, Status>>;

    async fn attach(
        &self,
        request: Request<Streaming<TaskInput>>,
    ) -> Result<Response<Self::AttachStream>, Status> {
        let who = self.verifier.verify(&request, Need::User).await?;
        let mut input = request.into_inner();
        let a = match input.message().await?.and_then(|m| m.what) {
            Some(task_input::What::Attach(a)) => a,
            _ => {
                return Err(Status::invalid_argument(
                    "the first message must name the job to attach to",
                ));
            }
        };
        let (tx, rx) = mpsc::channel(64);
        crate::attach::serve(
            self.live.add_attached(),
            self.host.clone(),
            self.ctl_dir.clone(),
            who.user.clone(),
            a,
            input,
            tx,
        );
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn run(
        &self,
        request: Request<Streaming<TaskInput>>,
    ) -> Result<Response<Self::RunStream>, Status> {
        let who = self.verifier.verify(&request, Need::User).await?;
        let mut input = request.into_inner();
        let start = match input.message().await?.and_then(|m| m.what) {
            Some(task_input::What::Start(s)) => s,
            _ => {
                return Err(Status::invalid_argument(
                    "the first message must start a task",
                ));
            }
        };
        let eexec = self.serverdir.join("eexec");
        let eexec = basalt_config::is_executable(&eexec).then_some(eexec.as_path());
        let task = UserTask::prepare(&who.user, &start, &self.host, self.root_rex, eexec)
            .map_err(refused)?;
        let pty = start.pty.then(|| {
            let size = |v: u32, default: u16| match u16::try_from(v) {
                Ok(0) | Err(_) => default,
                Ok(n) => n,
            };
            (size(start.rows, 24), size(start.cols, 80))
        });
        let mut child = task.spawn(pty).map_err(refused)?;
        let master = child.master.take();
        let pid = child.pid;
        info!(
            user = %who.user,
            from = %who.host,
            pid,
            "task {:?}",
            task.argv
        );
        let (tx, rx) = mpsc::channel(64);
        let started = TaskOutput {
            what: Some(task_output::What::Started(Started {
                pid,
                host: self.host.clone(),
            })),
        };
        let _ = tx.send(Ok(started)).await;
        if !task.notes.is_empty() {
            let note = task_output::What::Stderr(task.notes.clone().into_bytes());
            let _ = tx.send(Ok(TaskOutput { what: Some(note) })).await;
        }
        let group = Pid::from_raw(i32::try_from(pid).unwrap_or(0));
        let live = self.live.add_task(group);
        // Under a pseudo-terminal its master carries both ways (output as standard
        // output); else three pipes.
        let (out, err, sink) = match master {
            Some(m) => {
                let (out, sink) = relay_terminal(m, &tx).map_err(|e| {
                    kill_group(group, Signal::SIGKILL);
                    Status::internal(format!("the task's terminal: {e}"))
                })?;
                (Some(out), None, sink)
            }
            None => {
                let out = child
                    .stdout
                    .take()
                    .map(|r| tokio::spawn(relay(r, tx.clone(), task_output::What::Stdout)));
                let err = child
                    .stderr
                    .take()
                    .map(|r| tokio::spawn(relay(r, tx.clone(), task_output::What::Stderr)));
                (
                    out,
                    err,
                    child
                        .stdin
                        .take()
                        .map_or(Sink::Closed, |w| Sink::Pipe(Box::new(w))),
                )
            }
        };
        let file_op = start.file_op;
        tokio::spawn(async move {
            let feeding = tokio::spawn(feed(input, sink, group));
            let mut waiting = Box::pin(crate::task::wait_task(pid));
            let status = tokio::select! {
                s = &mut waiting => s,
                // The client went away: its task goes too. An lsrcp copy first gets
                // SIGTERM, so that it removes its temporary file.
                () = tx.closed() => {
                    warn!(pid, "client gone; killing the task");
                    if file_op {
                        kill_group(group, Signal::SIGTERM);
                        if let Ok(s) = tokio::time::timeout(FILE_OP_GRACE, &mut waiting).await {
                            s
                        } else {
                            kill_group(group, Signal::SIGKILL);
                            waiting.await
                        }
                    } else {
                        kill_group(group, Signal::SIGKILL);
                        waiting.await
                    }
                }
            };
            feeding.abort();
            let (raw, usage) = match status {
                Ok(s) => s,
                Err(e) => {
                    warn!(pid, "waiting for the task: {e}");
                    (Signal::SIGKILL as i32, crate::task::TaskUsage::default())
                }
            };
            for relay in [out, err].into_iter().flatten() {
                if tokio::time::timeout(OUTPUT_GRACE, relay).await.is_err() {
                    warn!(pid, "the task's output is still open; not waiting for it");
                }
            }
            let usage = basalt_proto::res::TaskUsage {
                utime: usage.utime,
                stime: usage.stime,
                max_rss_kb: usage.max_rss_kb,
            };
            for what in [
                task_output::What::Usage(usage),
                task_output::What::Exited(raw),
            ] {
                let _ = tx.send(Ok(TaskOutput { what: Some(what) })).await;
            }
            drop(live);
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

pub(crate) fn kill_group(group: Pid, sig: Signal) {
    if group.as_raw() > 1 {
        let _ = killpg(group, sig);
    }
}

/// Send what `r` gives as `wrap` messages until its end.
pub(crate) async fn relay(
    mut r: impl AsyncRead + Unpin,
    tx: mpsc::Sender<Result<TaskOutput, Status>>,
    wrap: fn(Vec<u8>) -> task_output::What,
) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let msg = TaskOutput {
                    what: Some(wrap(buf[..n].to_vec())),
                };
                if tx.send(Ok(msg)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A pseudo-terminal's master (a task's, an attached job's): what comes out of it is
/// relayed as standard output; the returned sink takes standard input and window sizes.
pub(crate) fn relay_terminal(
    master: std::fs::File,
    tx: &mpsc::Sender<Result<TaskOutput, Status>>,
) -> std::io::Result<(tokio::task::JoinHandle<()>, Sink)> {
    let reader = master.try_clone()?;
    let out = tokio::spawn(relay(
        tokio::fs::File::from_std(reader),
        tx.clone(),
        task_output::What::Stdout,
    ));
    Ok((out, Sink::Terminal(tokio::fs::File::from_std(master))))
}

/// Where the client's standard input goes.
pub(crate) enum Sink {
    Pipe(Box<dyn tokio::io::AsyncWrite + Unpin + Send>),
    /// The master of the task's pseudo-terminal (its end of input: ^D).
    Terminal(tokio::fs::File),
    Closed,
}

impl Sink {
    async fn write(&mut self, bytes: &[u8]) {
        let ok = match self {
            Sink::Pipe(w) => w.write_all(bytes).await.is_ok(),
            Sink::Terminal(t) => t.write_all(bytes).await.is_ok() && t.flush().await.is_ok(),
            Sink::Closed => true,
        };
        if !ok {
            *self = Sink::Closed;
        }
    }

    /// The terminal's window size, when the sink is a terminal.
    pub(crate) fn set_window(&self, rows: u32, cols: u32) {
        if let Sink::Terminal(t) = self {
            use std::os::fd::AsFd;
            let rows = u16::try_from(rows).unwrap_or(u16::MAX);
            let cols = u16::try_from(cols).unwrap_or(u16::MAX);
            if let Err(e) = crate::sys::set_window(t.as_fd(), rows, cols) {
                warn!("window size: {e}");
            }
        }
    }

    async fn end(&mut self) {
        if let Sink::Terminal(_) = self {
            // The terminal's end-of-file character.
            self.write(&[0x04]).await;
        } else {
            *self = Sink::Closed;
        }
    }
}

/// The client's messages after the start: standard input, its end, signals, window
/// sizes.
pub(crate) async fn feed(mut input: Streaming<TaskInput>, mut sink: Sink, group: Pid) {
    loop {
        let what = match input.message().await {
            Ok(Some(m)) => m.what,
            // The client sends nothing more (its stdin may still be open: leave it), or
            // its stream broke (the relay's end notices the client is gone and ends the
            // task). Either way the task's standard input stays open until the task has
            // ended (this future is then dropped): an end of input the client never sent
            // must not look like one — an lsrcp copy cut short would take it for the end
            // of its data and put the half copy in place of its target.
            Ok(None) | Err(_) => {
                std::future::pending::<()>().await;
                return;
            }
        };
        match what {
            Some(task_input::What::Stdin(bytes)) => sink.write(&bytes).await,
            Some(task_input::What::StdinEof(_)) => sink.end().await,
            Some(task_input::What::Signal(s)) => match Signal::try_from(s.number) {
                Ok(sig) => kill_group(group, sig),
                Err(_) => warn!("signal {} unknown here; not sent", s.number),
            },
            Some(task_input::What::Window(w)) => sink.set_window(w.rows, w.cols),
            Some(task_input::What::Start(_) | task_input::What::Attach(_)) | None => {}
        }
    }
}
