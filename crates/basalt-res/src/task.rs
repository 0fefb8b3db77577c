//! One task as RES starts it: who it runs as, with what, where ([`UserTask::prepare`]),
//! and its start in a session of its own ([`UserTask::spawn`]).

use basalt_proto::res::TaskStart;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The PATH a task gets when its environment has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Why a task is not run (the text is what the user sees).
#[derive(Debug, Error)]
pub enum TaskError {
    /// Root's task without `LSF_ROOT_REX`, or another user's on a personal cluster.
    #[error("User permission denied")]
    Permission,
    #[error("User <{0}> is not known on host <{1}>")]
    NoUser(String, String),
    #[error("No command is given")]
    Empty,
    /// The program does not exist (or is not executable) on the host.
    #[error("{0}: Command not found")]
    NotFound(String),
    #[error("Cannot start {0}: {1}")]
    Start(String, std::io::Error),
    #[error("The esub output for eexec is longer than {MAX_EEXEC_INPUT} bytes")]
    EexecInput,
}

/// The identity a task takes (when RES runs as root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Become {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

/// A task ready to start.
#[derive(Debug, Clone, PartialEq)]
pub struct UserTask {
    /// What runs: the command, or `/bin/sh -c` around `LSF_JOB_STARTER` and it.
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub umask: u32,
    pub become_user: Option<Become>,
    /// Said on the task's standard error before it runs (a working directory that
    /// does not exist here).
    pub notes: String,
    /// eexec's standard input (what the command's esub printed), when eexec runs first.
    pub eexec_input: Option<Vec<u8>>,
}

/// The largest eexec input RES takes (it goes through a pipe written before the task
/// starts): bsub's bound on esub output.
pub const MAX_EEXEC_INPUT: usize = 60 * 1024;

/// Quote `v` for `/bin/sh` with single quotes.
fn sh_quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "'\\''"))
}

impl UserTask {
    /// The task `start` asks for, for `user` (as the credential proved it) on `host`.
    /// `root_rex`: lsf.conf `LSF_ROOT_REX` is set (root's tasks may run). `eexec`:
    /// `LSF_SERVERDIR/eexec` when it is there: it runs first (seed 001: "the RES runs
    /// eexec before starting the task", each time, only at its start), as the user with
    /// the task's environment, `LS_EXEC_T=START` and `LS_JOBPID` (the process that then
    /// becomes the task), what the esub printed on its standard input; the task waits for
    /// it. Not for a file operation (lsrcp).
    pub fn prepare(
        user: &str,
        start: &TaskStart,
        host: &str,
        root_rex: bool,
        eexec: Option<&Path>,
    ) -> Result<UserTask, TaskError> {
        if start.argv.first().is_none_or(|a| a.is_empty()) {
            return Err(TaskError::Empty);
        }
        let account = nix::unistd::User::from_name(user)
            .ok()
            .flatten()
            .ok_or_else(|| TaskError::NoUser(user.to_owned(), host.to_owned()))?;
        if account.uid.is_root() && !root_rex {
            return Err(TaskError::Permission);
        }
        let me = nix::unistd::geteuid();
        let become_user = if me.is_root() {
            let groups = std::ffi::CString::new(user)
                .ok()
                .and_then(|name| nix::unistd::getgrouplist(&name, account.gid).ok())
                .unwrap_or_else(|| vec![account.gid]);
            Some(Become {
                uid: account.uid.as_raw(),
                gid: account.gid.as_raw(),
                groups: groups.iter().map(|g| g.as_raw()).collect(),
            })
        } else if me == account.uid {
            None
        } else {
            return Err(TaskError::Permission);
        };
        let mut env: Vec<(String, String)> = start
            .env
            .iter()
            .filter_map(|kv| kv.split_once('='))
            .filter(|(k, _)| !k.is_empty())
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        if !env.iter().any(|(k, _)| k == "PATH") {
            env.push(("PATH".to_owned(), DEFAULT_PATH.to_owned()));
        }
        let mut notes = String::new();
        let cwd = if !start.cwd.is_empty() && Path::new(&start.cwd).is_dir() {
            PathBuf::from(&start.cwd)
        } else {
            let fallback = if account.dir.is_dir() {
                account.dir.clone()
            } else {
                PathBuf::from("/tmp")
            };
            if !start.cwd.is_empty() {
                notes = format!(
                    "{}: No such directory on host <{host}>; running in {}\n",
                    start.cwd,
                    fallback.display()
                );
            }
            fallback
        };
        // A command-level job starter (LSF_JOB_STARTER): it runs, with the command as
        // one argument.
        let starter = env
            .iter()
            .find(|(k, _)| k == "LSF_JOB_STARTER")
            .map(|(_, v)| v.trim().to_owned())
            .filter(|v| !v.is_empty());
        let argv = match starter {
            Some(s) => vec![
                "/bin/sh".to_owned(),
                "-c".to_owned(),
                format!("{s} {}", sh_quote(&start.argv.join(" "))),
            ],
            None => start.argv.clone(),
        };
        let (argv, eexec_input) = match eexec.filter(|_| !start.file_op) {
            Some(path) => {
                if start.eexec_input.len() > MAX_EEXEC_INPUT {
                    return Err(TaskError::EexecInput);
                }
                env.retain(|(k, _)| k != "LS_EXEC_T");
                env.push(("LS_EXEC_T".to_owned(), "START".to_owned()));
                let mut wrapped = vec![
                    "/bin/sh".to_owned(),
                    "-c".to_owned(),
                    // eexec reads its input on fd 3 (RES's pipe); then the task replaces
                    // the shell, whose pid eexec had as LS_JOBPID.
                    "LS_JOBPID=$$ \"$0\" <&3 3<&-; exec 3<&-; exec \"$@\"".to_owned(),
                    path.to_string_lossy().into_owned(),
                ];
                wrapped.extend(argv);
                (wrapped, Some(start.eexec_input.clone()))
            }
            None => (argv, None),
        };
        Ok(UserTask {
            argv,
            env,
            cwd,
            umask: start.umask & 0o777,
            become_user,
            notes,
            eexec_input,
        })
    }

    /// Start the task in a session of its own (its pid is its process group), its
    /// standard streams piped; with `pty` (rows, columns) on a new pseudo-terminal,
    /// whose master is returned (the task's standard streams are its slave). The task
    /// is reaped with [`wait_task`], which gives its resource usage too.
    pub fn spawn(&self, pty: Option<(u16, u16)>) -> Result<Spawned, TaskError> {
        let program = self.argv[0].clone();
        let failed = |e: std::io::Error| TaskError::Start(program.clone(), e);
        let mut cmd = std::process::Command::new(&program);
        cmd.args(&self.argv[1..])
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let master = match pty {
            Some((rows, cols)) => {
                let ws = nix::pty::Winsize {
                    ws_row: rows,
                    ws_col: cols,
                    ws_xpixel: 0,
                    ws_ypixel: 0,
                };
                let p = nix::pty::openpty(&ws, None).map_err(|e| failed(e.into()))?;
                // Not inherited by other children of this process (the task gets the
                // slave as its standard streams, dup'ed).
                for fd in [&p.master, &p.slave] {
                    nix::fcntl::fcntl(
                        fd,
                        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
                    )
                    .map_err(|e| failed(e.into()))?;
                }
                let slave = std::fs::File::from(p.slave);
                cmd.stdin(slave.try_clone().map_err(failed)?)
                    .stdout(slave.try_clone().map_err(failed)?)
                    .stderr(slave);
                Some(std::fs::File::from(p.master))
            }
            None => {
                cmd.stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                None
            }
        };
        let cwd = std::ffi::CString::new(self.cwd.as_os_str().as_encoded_bytes())
            .map_err(|e| failed(std::io::Error::other(e)))?;
        // eexec's input: a pipe filled (it fits, MAX_EEXEC_INPUT) and closed before the
        // task starts, its read end the child's fd 3.
        let eexec_in = match &self.eexec_input {
            Some(bytes) => {
                use std::io::Write;
                let (r, w) = nix::unistd::pipe2(
                    nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK,
                )
                .map_err(|e| failed(e.into()))?;
                std::fs::File::from(w).write_all(bytes).map_err(failed)?;
                Some(r)
            }
            None => None,
        };
        crate::sys::in_own_session_as(
            &mut cmd,
            self.become_user.clone(),
            self.umask,
            cwd,
            pty.is_some(),
            eexec_in.as_ref().map(std::os::fd::AsRawFd::as_raw_fd),
        );
        let mut child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => TaskError::NotFound(program.clone()),
            _ => TaskError::Start(program.clone(), e),
        })?;
        // (Inside the runtime: the pipes are registered with its reactor.)
        Ok(Spawned {
            pid: child.id(),
            stdin: child
                .stdin
                .take()
                .and_then(|p| tokio::process::ChildStdin::from_std(p).ok()),
            stdout: child
                .stdout
                .take()
                .and_then(|p| tokio::process::ChildStdout::from_std(p).ok()),
            stderr: child
                .stderr
                .take()
                .and_then(|p| tokio::process::ChildStderr::from_std(p).ok()),
            master,
        })
    }
}

/// A started task: its pid (= its process group and session), its piped standard
/// streams, or its pseudo-terminal's master.
#[derive(Debug)]
pub struct Spawned {
    pub pid: u32,
    pub stdin: Option<tokio::process::ChildStdin>,
    pub stdout: Option<tokio::process::ChildStdout>,
    pub stderr: Option<tokio::process::ChildStderr>,
    pub master: Option<std::fs::File>,
}

/// What a task used: user and system CPU seconds, and its largest resident set (its
/// own or a waited-for descendant's) in KB.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TaskUsage {
    pub utime: f64,
    pub stime: f64,
    pub max_rss_kb: u64,
}

/// Reap task `pid` (a blocking `wait4` on a thread of the runtime's pool): its raw wait
/// status and resource usage.
pub async fn wait_task(pid: u32) -> std::io::Result<(i32, TaskUsage)> {
    tokio::task::spawn_blocking(move || crate::sys::wait4(pid))
        .await
        .map_err(std::io::Error::other)?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> String {
        nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map(|u| u.name)
            .unwrap_or_default()
    }

    fn start(argv: &[&str], cwd: &str, env: &[&str]) -> TaskStart {
        TaskStart {
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            env: env.iter().map(|e| (*e).to_owned()).collect(),
            cwd: cwd.to_owned(),
            umask: 0o022,
            ..Default::default()
        }
    }

    /// The working directory if it exists here, else the user's home (or /tmp) with a
    /// note; a PATH when the environment has none; LSF_JOB_STARTER around the command.
    #[test]
    fn a_task_gets_its_directory_path_and_job_starter() {
        let user = me();
        let t = UserTask::prepare(&user, &start(&["true"], "/", &[]), "hostA", true, None)
            .expect("prepared");
        assert_eq!(t.cwd, PathBuf::from("/"));
        assert!(t.notes.is_empty());
        assert!(t.env.iter().any(|(k, v)| k == "PATH" && v == DEFAULT_PATH));
        let t = UserTask::prepare(
            &user,
            &start(
                &["echo", "a b"],
                "/no/such/dir",
                &["LSF_JOB_STARTER=/bin/sh -c"],
            ),
            "hostA",
            true,
            None,
        )
        .expect("prepared");
        assert!(
            t.notes
                .starts_with("/no/such/dir: No such directory on host <hostA>")
        );
        assert_eq!(t.argv, vec!["/bin/sh", "-c", "/bin/sh -c 'echo a b'"]);
    }

    /// Seed 001: "the RES runs eexec before starting the task" (with what the esub
    /// printed on its standard input, LS_EXEC_T=START); not for lsrcp's file operations.
    #[test]
    fn eexec_runs_before_the_task_with_the_esub_output() {
        let eexec = Path::new("/srv/eexec");
        let mut s = start(&["echo", "hi"], "/", &[]);
        s.eexec_input = b"from esub".to_vec();
        let t = UserTask::prepare(&me(), &s, "hostA", true, Some(eexec)).expect("prepared");
        assert_eq!(t.argv[0], "/bin/sh");
        assert_eq!(t.argv[3..], ["/srv/eexec", "echo", "hi"]);
        assert!(t.argv[2].contains("<&3"), "{:?}", t.argv);
        assert_eq!(t.eexec_input.as_deref(), Some(&b"from esub"[..]));
        assert!(t.env.iter().any(|(k, v)| k == "LS_EXEC_T" && v == "START"));
        s.file_op = true;
        let t = UserTask::prepare(&me(), &s, "hostA", true, Some(eexec)).expect("prepared");
        assert_eq!(t.argv, ["echo", "hi"]);
        assert!(t.eexec_input.is_none());
        s.file_op = false;
        s.eexec_input = vec![b'x'; MAX_EEXEC_INPUT + 1];
        assert!(matches!(
            UserTask::prepare(&me(), &s, "hostA", true, Some(eexec)),
            Err(TaskError::EexecInput)
        ));
    }

    #[test]
    fn root_needs_lsf_root_rex_and_an_unknown_user_or_empty_command_is_refused() {
        let s = start(&["true"], "/", &[]);
        assert!(matches!(
            UserTask::prepare("root", &s, "hostA", false, None),
            Err(TaskError::Permission)
        ));
        assert!(matches!(
            UserTask::prepare("no-such-user-here", &s, "hostA", true, None),
            Err(TaskError::NoUser(..))
        ));
        assert!(matches!(
            UserTask::prepare(&me(), &start(&[], "/", &[]), "hostA", true, None),
            Err(TaskError::Empty)
        ));
    }
}
