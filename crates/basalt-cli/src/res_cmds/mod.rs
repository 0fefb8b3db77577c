//! The commands that run tasks through RES: host placement from the master LIM's load
//! ([`place`]) and one remote task with its standard streams and signals relayed
//! ([`run_task`]); `lsrun` ([`lsrun`]), `lsgrun` ([`lsgrun`]), `lsrcp` ([`lsrcp`]),
//! `lsplace` ([`lsplace`]) and, inside batch jobs, `blaunch` ([`blaunch`]).

pub mod blaunch;
pub mod lsgrun;
pub mod lsplace;
pub mod lsrcp;
pub mod lsrun;
pub mod term;

use basalt_config::Config;
use basalt_proto::lim::{HostStatus, HostsReply};
use basalt_proto::res::{
    AttachJob, Signal as TaskSignal, TaskInput, TaskStart, task_input, task_output,
};
use std::io::Write as _;
use std::process::ExitCode;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

/// The hosts a task may be placed on, best first: those of `asked` (every host when
/// empty) whose LIM status is ok and that satisfy `res_req`'s select part, with LSF's
/// default `type==local` when it names no type or other string or Boolean resource,
/// the least loaded (r15s, then r1m) first. Err: LSF's reason.
pub fn place(
    config: &Config,
    mut reply: HostsReply,
    asked: &[String],
    res_req: Option<&str>,
    local: &str,
) -> Result<Vec<String>, String> {
    let mut wanted = Vec::new();
    for h in asked {
        match basalt_runtime::canonical_host(config, h) {
            Some(c) => wanted.push(c),
            None => return Err(format!("Unknown host <{h}>")),
        }
    }
    reply.hosts.retain(|h| {
        let name = h.info.as_ref().map_or("", |i| i.name.as_str());
        h.status == HostStatus::Ok as i32
            && (wanted.is_empty() || wanted.iter().any(|w| basalt_core::same_host(w, name)))
    });
    let externals = crate::lim_cmds::external_indices(&reply);
    let text = res_req.unwrap_or("");
    let select = crate::lim_res::Select::parse(text, config, &externals)
        .map_err(|_| "Bad resource requirement syntax".to_owned())?;
    crate::lim_cmds::retain_selected(config, &mut reply, &select, local);
    // The default type==local, when the local host is one of the cluster's (a client
    // the LIMs do not know has no type to compare with).
    let local_known = reply.hosts.iter().any(|h| {
        h.info
            .as_ref()
            .is_some_and(|i| basalt_core::same_host(&i.name, local))
    }) || basalt_runtime::canonical_host(config, local).is_some();
    if !select.names_string_or_boolean() && local_known {
        let local_type = crate::lim_res::Select::parse("type==local", config, &externals)
            .map_err(|_| "Bad resource requirement syntax".to_owned())?;
        crate::lim_cmds::retain_selected(config, &mut reply, &local_type, local);
    }
    let load = |h: &basalt_proto::lim::HostRecord, name: &str| {
        h.load
            .iter()
            .find(|l| l.name == name)
            .map_or(f64::MAX, |l| l.value)
    };
    reply.hosts.sort_by(|a, b| {
        (load(a, "r15s"), load(a, "r1m"))
            .partial_cmp(&(load(b, "r15s"), load(b, "r1m")))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let hosts: Vec<String> = reply
        .hosts
        .iter()
        .filter_map(|h| h.info.as_ref().map(|i| i.name.clone()))
        .collect();
    if hosts.is_empty() {
        return Err("Not enough host(s) currently eligible".to_owned());
    }
    Ok(hosts)
}

/// A RES command's parsed line (`Ok(None)`: `-h` or `-V`, answered here), or its exit:
/// the usage after `-h`, the version after `-V`, `cmd: error` and the usage after a bad
/// line.
pub fn parsed<T>(
    cmd: &str,
    args: &[String],
    usage: &str,
    line: Result<Option<T>, String>,
) -> Result<T, ExitCode> {
    match line {
        Ok(Some(a)) => Ok(a),
        Ok(None) if args.iter().any(|x| x == "-V") => Err(crate::print_version()),
        Ok(None) => {
            eprint!("{usage}");
            Err(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{cmd}: {e}");
            eprint!("{usage}");
            Err(crate::fail())
        }
    }
}

/// The command line of `lsrun` and `lsgrun`: what both have, and lsrun's `-P`, lsgrun's
/// `-p` and `-f`.
#[derive(Debug, Default, PartialEq)]
pub struct TaskLine {
    /// `-v`: say where each task runs.
    pub verbose: bool,
    /// `-P` (lsrun): under a pseudo-terminal.
    pub pty: bool,
    /// `-p` (lsgrun): on every host at once.
    pub parallel: bool,
    /// `-m "host ..."` (repeatable).
    pub hosts: Vec<String>,
    /// `-f host_file` (lsgrun).
    pub host_file: Option<String>,
    pub res_req: Option<String>,
    pub argv: Vec<String>,
}

/// Read a RES command's line by `spec` (without the program name); the options of
/// `refused` are refused as not supported yet. Ok(None): `-h` or `-V`. Err: the line to
/// print before the usage (a command is required).
pub fn task_line(
    args: &[String],
    spec: &crate::batch::opts::Spec,
    refused: &[&str],
) -> Result<Option<TaskLine>, String> {
    use crate::batch::opts::Item;
    let items = crate::batch::opts::parse(args, spec, true).map_err(|e| e.to_string())?;
    let mut a = TaskLine::default();
    for it in items {
        let (n, v) = match it {
            Item::Arg(x) => {
                a.argv.push(x);
                continue;
            }
            Item::Opt(n, v) => (n, v),
        };
        if refused.contains(&n.as_str()) {
            return Err(format!(
                "-{n}: this LSF option is not supported by Basalt yet"
            ));
        }
        match n.as_str() {
            "h" | "V" => return Ok(None),
            "v" => a.verbose = true,
            "P" => a.pty = true,
            "p" => a.parallel = true,
            "m" => a
                .hosts
                .extend(v.unwrap_or_default().split_whitespace().map(str::to_owned)),
            "f" => a.host_file = v,
            "R" => a.res_req = v,
            other => return Err(format!("illegal option -- {other}")),
        }
    }
    if a.argv.is_empty() {
        return Err("a command is required".to_owned());
    }
    Ok(Some(a))
}

/// The master LIM's table of every host (load, status, static information).
pub async fn master_hosts(config: &Config) -> Result<HostsReply, String> {
    let auth = crate::auth(config);
    let mut m = basalt_runtime::find_master(config, crate::RPC_TIMEOUT, &auth)
        .await
        .map_err(|e| e.to_string())?;
    m.client
        .hosts(basalt_proto::lim::HostsRequest {
            hosts: vec![],
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner())
        .map_err(|s| s.message().to_owned())
}

/// What a remote task is given besides its command.
#[derive(Debug, Clone)]
pub struct TaskSetup {
    pub env: Vec<String>,
    pub cwd: String,
    pub umask: u32,
    /// Relay this command's standard input (else the task's is empty).
    pub stdin: bool,
    /// Run the task under a pseudo-terminal of this window size (rows, columns).
    pub pty: Option<(u32, u32)>,
    /// What the command's esub printed: the standard input of the host's eexec.
    pub eexec_input: Vec<u8>,
    /// A file operation (lsrcp): the host runs no eexec for it.
    pub file_op: bool,
}

impl TaskSetup {
    /// This process's environment, working directory and umask.
    pub fn here(stdin: bool) -> TaskSetup {
        let umask = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
        nix::sys::stat::umask(umask);
        TaskSetup {
            env: std::env::vars_os()
                .filter_map(|(k, v)| Some(format!("{}={}", k.to_str()?, v.to_str()?)))
                .collect(),
            cwd: std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default(),
            umask: umask.bits(),
            stdin,
            pty: None,
            eexec_input: Vec::new(),
            file_op: false,
        }
    }
}

/// Run `LSF_SERVERDIR/esub` (and the `LSB_ESUB_METHOD` ones) for `invoke` (`lsrun`,
/// `lsgrun`) and `argv`, as bsub does for a job: seed 001, "lsrun invokes esub" (at
/// ls_connect time; what it prints goes to each task's eexec). Its parameter file has
/// `LSB_SUB_COMMAND_LINE`; what it writes to the modify files does not apply (a task is
/// not a job). Ok: its standard output (empty without an esub). Err: the exit after
/// its refusal (`Request aborted by esub`, 255) or a failure.
pub fn esub(config: &Config, invoke: &str, argv: &[String]) -> Result<Vec<u8>, ExitCode> {
    use crate::batch::bsub::{ABORTED, Verdict, esub_method, plan, quote, run_for};
    let method = esub_method(config);
    let esubs = match plan(&config.serverdir(), method.as_deref(), None) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{invoke}: {e}");
            return Err(crate::fail());
        }
    };
    if esubs.is_empty() {
        return Ok(Vec::new());
    }
    let parm = format!("LSB_SUB_COMMAND_LINE={}\n", quote(&argv.join(" ")));
    match run_for(&esubs, &parm, None, false, invoke) {
        Ok(Verdict::Aborted) => {
            eprintln!("{invoke}: {ABORTED}");
            Err(crate::fail())
        }
        Ok(Verdict::Accepted { stdout, .. }) => {
            if stdout.len() > basalt_core::bounds::MAX_ESUB_OUTPUT {
                eprintln!(
                    "{invoke}: the esub output for eexec is longer than {} bytes",
                    basalt_core::bounds::MAX_ESUB_OUTPUT
                );
                return Err(crate::fail());
            }
            Ok(stdout)
        }
        Err(e) => {
            eprintln!("{invoke}: {e}");
            Err(crate::fail())
        }
    }
}

/// Where a task's standard input comes from.
#[derive(Debug)]
pub enum TaskInputFrom {
    /// This process's standard input.
    Stdin,
    /// A file of this host, read to its end.
    File(std::fs::File),
    /// Nothing (end of input at once).
    Nothing,
}

/// Where a task's standard output goes (its standard error comes to this process's).
#[derive(Debug)]
pub enum TaskOutputTo {
    /// This process's standard output, as it comes.
    Stdout,
    /// A file of this host, as it comes.
    File(std::fs::File),
    /// Kept and returned.
    Kept,
}

/// The signals a command relays to its remote task.
const RELAYED: [i32; 6] = [
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// Run `argv` on `host` through its RES: its output goes to this process's standard
/// output and error as it comes, this process's standard input (when `setup.stdin`) and
/// the signals it gets go to the task. Ok: the task's raw wait status. Err: why it did
/// not run (the RES's or the connection's message).
pub async fn run_task(
    config: &Config,
    host: &str,
    argv: &[String],
    setup: &TaskSetup,
) -> Result<i32, String> {
    run_task_counted(config, host, argv, setup)
        .await
        .map(|(raw, _)| raw)
}

/// [`run_task`], with what the task used (when its RES said).
pub async fn run_task_counted(
    config: &Config,
    host: &str,
    argv: &[String],
    setup: &TaskSetup,
) -> Result<(i32, Option<basalt_proto::res::TaskUsage>), String> {
    let from = if setup.stdin {
        TaskInputFrom::Stdin
    } else {
        TaskInputFrom::Nothing
    };
    let end = run_started(config, host, argv, setup, from, TaskOutputTo::Stdout).await?;
    Ok((end.raw()?, end.usage))
}

/// [`run_task`] with the task's standard input taken `from` and its standard output
/// sent `to`; Ok: its raw wait status, its standard output when [`TaskOutputTo::Kept`],
/// and its standard error unless the output is [`TaskOutputTo::Stdout`] (then it came
/// to this process's).
pub async fn run_task_with(
    config: &Config,
    host: &str,
    argv: &[String],
    setup: &TaskSetup,
    from: TaskInputFrom,
    to: TaskOutputTo,
) -> Result<(i32, Vec<u8>, Vec<u8>), String> {
    let end = run_started(config, host, argv, setup, from, to).await?;
    Ok((end.raw()?, end.out, end.err))
}

/// One task's `Run` stream, relayed to its end.
async fn run_started(
    config: &Config,
    host: &str,
    argv: &[String],
    setup: &TaskSetup,
    from: TaskInputFrom,
    to: TaskOutputTo,
) -> Result<Ended, String> {
    let start = task_start(argv, setup);
    session(config, host, start, setup.pty.is_some(), from, to).await
}

/// The first message of a task's `Run` stream.
fn task_start(argv: &[String], setup: &TaskSetup) -> task_input::What {
    task_input::What::Start(TaskStart {
        argv: argv.to_vec(),
        env: setup.env.clone(),
        cwd: setup.cwd.clone(),
        umask: setup.umask,
        pty: setup.pty.is_some(),
        rows: setup.pty.map_or(0, |p| p.0),
        cols: setup.pty.map_or(0, |p| p.1),
        eexec_input: setup.eexec_input.clone(),
        file_op: setup.file_op,
    })
}

/// How a RES stream ended: the task's raw wait status when one came, its kept output
/// and error, what it used.
struct Ended {
    /// The pid the RES said the task (or attached job) has.
    started_pid: Option<u32>,
    status: Option<i32>,
    out: Vec<u8>,
    err: Vec<u8>,
    usage: Option<basalt_proto::res::TaskUsage>,
}

impl Ended {
    /// The task's raw wait status; Err when the stream ended without one.
    fn raw(&self) -> Result<i32, String> {
        self.status
            .ok_or_else(|| "the connection to RES broke before the task ended".to_owned())
    }
}

/// Attach to interactive batch job `job_id[idx]` running on `host` (`bsub -I`, `-Ip`,
/// `-Is`) through its RES: the job's output comes to this process's standard output and
/// error until it ends, this process's standard input and signals go to the job; `pty`:
/// the job's pseudo-terminal has this window size. Ok: the pid of the job's run it was
/// attached to. Err: why it could not attach.
pub async fn attach_job(
    config: &Config,
    host: &str,
    job_id: u64,
    idx: u32,
    pty: Option<(u32, u32)>,
) -> Result<u32, String> {
    let attach = task_input::What::Attach(AttachJob {
        job_id,
        idx,
        rows: pty.map_or(0, |p| p.0),
        cols: pty.map_or(0, |p| p.1),
    });
    session(
        config,
        host,
        attach,
        pty.is_some(),
        TaskInputFrom::Stdin,
        TaskOutputTo::Stdout,
    )
    .await
    .map(|end| end.started_pid.unwrap_or(0))
}

/// One RES stream that `first` opens (a task's start: `Run`; a job to attach to:
/// `Attach`), relayed until it ends.
async fn session(
    config: &Config,
    host: &str,
    first: task_input::What,
    pty: bool,
    from: TaskInputFrom,
    to: TaskOutputTo,
) -> Result<Ended, String> {
    let auth = crate::auth(config);
    let mut client = basalt_runtime::res_channel(config, host, crate::RPC_TIMEOUT, &auth)
        .map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel::<TaskInput>(16);
    let attach = matches!(first, task_input::What::Attach(_));
    tx.send(TaskInput { what: Some(first) })
        .await
        .map_err(|e| e.to_string())?;
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    let answer = if attach {
        client.attach(stream).await
    } else {
        client.run(stream).await
    };
    let mut output = answer.map_err(|s| s.message().to_owned())?.into_inner();
    // Standard input, then its end.
    let feeder = {
        let tx = tx.clone();
        tokio::spawn(async move {
            let reader: Option<Box<dyn tokio::io::AsyncRead + Unpin + Send>> = match from {
                TaskInputFrom::Stdin => Some(Box::new(tokio::io::stdin())),
                TaskInputFrom::File(f) => Some(Box::new(tokio::fs::File::from_std(f))),
                TaskInputFrom::Nothing => None,
            };
            if let Some(mut r) = reader {
                let mut buf = vec![0u8; 32 * 1024];
                loop {
                    match r.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let m = TaskInput {
                                what: Some(task_input::What::Stdin(buf[..n].to_vec())),
                            };
                            if tx.send(m).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
            let _ = tx
                .send(TaskInput {
                    what: Some(task_input::What::StdinEof(true)),
                })
                .await;
        })
    };
    // Signals this command gets go to the task.
    let mut signals = Vec::new();
    for sig in RELAYED {
        let kind = tokio::signal::unix::SignalKind::from_raw(sig);
        if let Ok(mut s) = tokio::signal::unix::signal(kind) {
            let tx = tx.clone();
            signals.push(tokio::spawn(async move {
                while s.recv().await.is_some() {
                    let m = TaskInput {
                        what: Some(task_input::What::Signal(TaskSignal { number: sig })),
                    };
                    if tx.send(m).await.is_err() {
                        return;
                    }
                }
            }));
        }
    }
    // Under a pseudo-terminal: this terminal's size changes go to it.
    if pty
        && let Ok(mut s) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())
    {
        let tx = tx.clone();
        signals.push(tokio::spawn(async move {
            while s.recv().await.is_some() {
                use std::os::fd::AsFd;
                let Some((rows, cols)) = term::window_size(std::io::stdout().as_fd()) else {
                    continue;
                };
                let m = TaskInput {
                    what: Some(task_input::What::Window(basalt_proto::res::WindowSize {
                        rows,
                        cols,
                    })),
                };
                if tx.send(m).await.is_err() {
                    return;
                }
            }
        }));
    }
    drop(tx);
    let keep = matches!(to, TaskOutputTo::Kept);
    // Standard error is kept unless the output comes to this process.
    let keep_err = !matches!(to, TaskOutputTo::Stdout);
    let mut file = match to {
        TaskOutputTo::File(f) => Some(f),
        _ => None,
    };
    let (mut kept_out, mut kept_err) = (Vec::new(), Vec::new());
    let mut status = Ok(None);
    let mut usage = None;
    let mut started_pid = None;
    loop {
        match output.message().await {
            Ok(Some(m)) => match m.what {
                Some(task_output::What::Stdout(b)) => {
                    if keep {
                        kept_out.extend_from_slice(&b);
                    } else if let Some(f) = file.as_mut() {
                        if let Err(e) = f.write_all(&b) {
                            status = Err(e.to_string());
                            break;
                        }
                    } else {
                        let mut out = std::io::stdout().lock();
                        let _ = out.write_all(&b);
                        let _ = out.flush();
                    }
                }
                Some(task_output::What::Stderr(b)) => {
                    if keep_err {
                        kept_err.extend_from_slice(&b);
                    } else {
                        let _ = std::io::stderr().lock().write_all(&b);
                    }
                }
                Some(task_output::What::Exited(raw)) => {
                    status = Ok(Some(raw));
                    break;
                }
                Some(task_output::What::Usage(u)) => usage = Some(u),
                Some(task_output::What::Started(s)) => started_pid = Some(s.pid),
                None => {}
            },
            Ok(None) => break,
            Err(s) => {
                status = Err(s.message().to_owned());
                break;
            }
        }
    }
    feeder.abort();
    for s in signals {
        s.abort();
    }
    status.map(|status| Ended {
        started_pid,
        status,
        out: kept_out,
        err: kept_err,
        usage,
    })
}

/// The exit code of a command that ran a task of raw wait status `raw`: its exit
/// code, or 128 + the signal that ended it.
pub fn exit_code(raw: i32) -> u8 {
    if libc::WIFSIGNALED(raw) {
        (128 + libc::WTERMSIG(raw)).clamp(0, 255) as u8
    } else {
        u8::try_from(libc::WEXITSTATUS(raw)).unwrap_or(255)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_of_wait_statuses() {
        assert_eq!(exit_code(0), 0);
        assert_eq!(exit_code(3 << 8), 3);
        assert_eq!(exit_code(libc::SIGKILL), 128 + 9);
        assert_eq!(exit_code(libc::SIGTERM | 0x80), 128 + 15, "core dumped");
    }
}
