//! The job's top process: who it runs as ([`Identity`]), and its set-up after the
//! fork (session, signals, rlimits, nice, user, umask, job file, checkpoint directory,
//! working directory, redirections, environment) up to `exec /bin/sh <job file>` (a
//! restarted job: `/bin/sh -c <LSB_RESTART_CMD>` when erestart left one), reported to
//! the supervisor through the start pipe.

use super::env::{EnvContext, host_file_text, job_env};
use super::files::{open_output, output_path, place_job_file};
use super::finish::take_fs_identity;
use super::limits::rlimits;
use crate::paths;
use crate::spawn::{self, Become, Plan, SpawnError};
use crate::state::Launch;
use basalt_proto::sbatchd::JobSpec;
use nix::unistd::{Gid, Pid, Uid};
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::Receiver;

/// Who the job runs as.
#[derive(Debug, Clone)]
pub(super) struct Identity {
    /// Switch to the user (the supervisor is root).
    pub(super) switch: bool,
    pub(super) uid: Uid,
    pub(super) gid: Gid,
    pub(super) groups: Vec<Gid>,
    pub(super) name: String,
    pub(super) home: String,
    pub(super) shell: String,
    pub(super) group_name: Option<String>,
}

pub(super) fn resolve_identity(spec: &JobSpec, launch: &Launch) -> Result<Identity, String> {
    let host = launch.host.as_str();
    let root = nix::unistd::geteuid().is_root();
    let user = if root {
        match nix::unistd::User::from_name(&spec.user) {
            Ok(Some(u)) => u,
            Ok(None) => {
                return Err(format!(
                    "User <{}> does not exist on host <{host}>",
                    spec.user
                ));
            }
            Err(e) => return Err(format!("cannot look up user <{}>: {e}", spec.user)),
        }
    } else {
        match nix::unistd::User::from_uid(nix::unistd::getuid()) {
            Ok(Some(u)) => u,
            _ => {
                return Err(format!(
                    "cannot look up the daemon's own user (uid {})",
                    nix::unistd::getuid()
                ));
            }
        }
    };
    let groups = if root {
        CString::new(user.name.clone())
            .ok()
            .and_then(|n| nix::unistd::getgrouplist(&n, user.gid).ok())
            .unwrap_or_else(|| vec![user.gid])
    } else {
        Vec::new()
    };
    let group_name = nix::unistd::Group::from_gid(user.gid)
        .ok()
        .flatten()
        .map(|g| g.name);
    let ident = Identity {
        switch: root,
        uid: user.uid,
        gid: user.gid,
        groups,
        name: user.name,
        home: user.dir.to_string_lossy().into_owned(),
        shell: user.shell.to_string_lossy().into_owned(),
        group_name,
    };
    refuse_root(&ident, spec, launch)?;
    Ok(ident)
}

/// Never a job as root by accident: mbatchd refuses root's submissions without
/// LSF_ROOT_REX, and this host checks again (a user named in the job whose account
/// here is uid 0 is refused too).
fn refuse_root(ident: &Identity, spec: &JobSpec, launch: &Launch) -> Result<(), String> {
    if ident.switch && ident.uid.is_root() && launch.refuse_root {
        return Err(format!(
            "User <{}> is root on host <{}> and LSF_ROOT_REX is not set: root's jobs are not run",
            spec.user, launch.host
        ));
    }
    Ok(())
}

/// How long a user looked up stays known to the supervisor (while `/etc/passwd` and
/// `/etc/group` keep their modification times): a host running many short jobs of one
/// user does not read the user and group databases for each.
pub(super) const IDENTITY_TTL: std::time::Duration = std::time::Duration::from_secs(10);

/// Users looked up recently ([`IDENTITY_TTL`]); forgotten at once when `/etc/passwd` or
/// `/etc/group` changes.
#[derive(Debug, Default)]
pub(super) struct IdentityCache {
    entries: std::collections::HashMap<String, (Identity, std::time::Instant)>,
    /// The modification times of `/etc/passwd` and `/etc/group` the entries are from.
    stamp: Option<(std::time::SystemTime, std::time::SystemTime)>,
}

impl IdentityCache {
    /// [`resolve_identity`], answered from the cache when the user was looked up less
    /// than [`IDENTITY_TTL`] ago and the files did not change since.
    pub(super) fn resolve(&mut self, spec: &JobSpec, launch: &Launch) -> Result<Identity, String> {
        let now = std::time::Instant::now();
        let stamp = files_stamp();
        if stamp.is_none() || stamp != self.stamp {
            self.entries.clear();
            self.stamp = stamp;
        }
        if let Some((ident, at)) = self.entries.get(&spec.user)
            && now.duration_since(*at) < IDENTITY_TTL
        {
            refuse_root(ident, spec, launch)?;
            return Ok(ident.clone());
        }
        let ident = resolve_identity(spec, launch)?;
        if self.stamp.is_some() {
            if self.entries.len() >= 1024 {
                self.entries.clear();
            }
            self.entries.insert(spec.user.clone(), (ident.clone(), now));
        }
        Ok(ident)
    }
}

/// The modification times of `/etc/passwd` and `/etc/group` (None when one cannot be read).
fn files_stamp() -> Option<(std::time::SystemTime, std::time::SystemTime)> {
    let m = |p: &str| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    Some((m("/etc/passwd")?, m("/etc/group")?))
}

/// Where the job's top process started: its files and working directory, as the job
/// sees them and as the supervisor uses them (absolute).
#[derive(Debug, Clone, Default)]
pub(super) struct ChildInfo {
    pub(super) job_file: String,
    pub(super) cwd: String,
    pub(super) out_path: String,
    pub(super) err_path: String,
    /// The output goes to the spool file (`<job file>.out`), removed at the end.
    pub(super) spool: bool,
}

/// What the launcher thread hands back to the supervisor's loop.
#[derive(Debug)]
pub(super) enum Launched {
    /// The job's top process exec'ed `/bin/sh <job file>`.
    /// `io`: an interactive job's ends of its streams ([`super::interactive`]).
    Running {
        pid: Pid,
        info: ChildInfo,
        io: Option<super::interactive::JobIo>,
    },
    /// The top process failed before its `exec` and exited (status 127).
    ChildFailed { pid: Pid, message: String },
    /// No top process: the set-up failed before it.
    Failed(String),
}

pub(super) fn switch_identity(ident: &Identity) -> Result<(), String> {
    if !ident.switch {
        return Ok(());
    }
    nix::unistd::setgroups(&ident.groups).map_err(|e| format!("setgroups: {e}"))?;
    nix::unistd::setgid(ident.gid).map_err(|e| format!("setgid({}): {e}", ident.gid))?;
    nix::unistd::setuid(ident.uid).map_err(|e| format!("setuid({}): {e}", ident.uid))?;
    Ok(())
}

/// A pre- or post-execution command of the job: the queue's PRE_EXEC or POST_EXEC, or
/// the job's `bsub -E`.
#[derive(Debug, Clone)]
pub(super) struct Hook {
    pub(super) cmd: String,
    /// The queue's: runs in `/tmp` with its standard streams on `/dev/null` and
    /// `PATH=/bin:/usr/bin:/sbin:/usr/sbin`, as PRE_POST_EXEC_USER when set. A job's runs
    /// like the job: its working directory, standard streams and environment.
    pub(super) queue_level: bool,
    /// Standard streams on `/dev/null` (a queue's commands, a job's post-execution
    /// command); else the job's.
    pub(super) quiet: bool,
    /// PRE_POST_EXEC_USER's identity (None = the job's user).
    pub(super) user: Option<Identity>,
    /// Extra environment (`LSB_JOBEXIT_STAT` for a post-execution command).
    pub(super) env: Vec<(String, String)>,
    /// Its exit status counts: a pre-execution command's failure requeues the job, a
    /// post-execution command's is the job's post-execution status. An eexec's does not.
    pub(super) checked: bool,
    /// Its standard input (eexec: what the submission's esubs printed); None: the job's
    /// or `/dev/null`.
    pub(super) input: Option<String>,
    /// Something ran before it that wrote to the job's output files: open them to append.
    pub(super) append: bool,
}

impl Hook {
    /// A command run like the job (`bsub -E`, `-Ep`) or like a queue's (`quiet`).
    pub(super) fn new(cmd: &str, queue_level: bool, quiet: bool) -> Hook {
        Hook {
            cmd: cmd.to_owned(),
            queue_level,
            quiet,
            user: None,
            env: Vec::new(),
            checked: true,
            input: None,
            append: false,
        }
    }
}

/// What a launcher starts: the job itself (`append`: a job-level pre-execution command
/// wrote to its output files already) or one of its hooks.
#[derive(Debug, Clone)]
pub(super) enum Step {
    Job { append: bool },
    Hook(Box<Hook>),
}

/// Start the thread that sets the job up and starts its top process, or one of its
/// pre- or post-execution commands ([`launch_job`]); its outcome comes on the returned
/// channel ([`super::start_worker`]).
pub(super) fn start_launcher(
    spec: &JobSpec,
    launch: &Launch,
    ident: &Identity,
    step: Step,
    notify: Option<Arc<OwnedFd>>,
) -> Result<Receiver<Launched>, String> {
    let (spec, launch, ident) = (spec.clone(), launch.clone(), ident.clone());
    super::start_worker("sbd-launch", LAUNCHER_STACK, notify, move || {
        launch_job(&spec, &launch, &ident, &step)
    })
    .map_err(|e| format!("cannot start the thread that starts the job: {e}"))
}

/// The identity a queue's pre- and post-execution commands run as (PRE_POST_EXEC_USER);
/// root only when named.
/// The job's umask (`022` when the submission gave none), for the job and the programs
/// run for it (checkpoint methods, eexec).
pub(super) fn job_umask(spec: &JobSpec) -> u32 {
    if spec.umask == 0 {
        0o022
    } else {
        spec.umask & 0o777
    }
}

pub(super) fn hook_identity(name: &str, host: &str) -> Result<Identity, String> {
    let user = match nix::unistd::User::from_name(name) {
        Ok(Some(u)) => u,
        Ok(None) => {
            return Err(format!(
                "PRE_POST_EXEC_USER <{name}> does not exist on host <{host}>"
            ));
        }
        Err(e) => return Err(format!("cannot look up PRE_POST_EXEC_USER <{name}>: {e}")),
    };
    let groups = CString::new(user.name.clone())
        .ok()
        .and_then(|n| nix::unistd::getgrouplist(&n, user.gid).ok())
        .unwrap_or_else(|| vec![user.gid]);
    let group_name = nix::unistd::Group::from_gid(user.gid)
        .ok()
        .flatten()
        .map(|g| g.name);
    Ok(Identity {
        switch: nix::unistd::geteuid().is_root(),
        uid: user.uid,
        gid: user.gid,
        groups,
        name: user.name,
        home: user.dir.to_string_lossy().into_owned(),
        shell: user.shell.to_string_lossy().into_owned(),
        group_name,
    })
}

/// The stack of a launcher thread.
const LAUNCHER_STACK: usize = 256 * 1024;

/// In the launcher thread: take the user's file-system identity and a working
/// directory and umask of this thread's own, set the job's files up as the user, and
/// start the top process ([`spawn`]), which inherits them.
pub(super) fn launch_job(
    spec: &JobSpec,
    launch: &Launch,
    ident: &Identity,
    step: &Step,
) -> Launched {
    if let Err(e) = nix::sched::unshare(nix::sched::CloneFlags::CLONE_FS) {
        return Launched::Failed(format!("unshare(CLONE_FS): {e}"));
    }
    if let Err(e) = take_fs_identity(ident) {
        return Launched::Failed(e);
    }
    let (mut prepared, info) = match prepare(spec, launch, ident, step) {
        Ok(p) => p,
        Err(e) => return Launched::Failed(e),
    };
    let outcome = spawn::spawn(&mut prepared.plan);
    drop(prepared.files);
    match outcome {
        Ok(pid) => Launched::Running {
            pid,
            info,
            io: prepared.io,
        },
        Err(SpawnError::NoChild(e)) => Launched::Failed(format!("clone: {e}")),
        Err(SpawnError::Child { pid, step, errno }) => Launched::ChildFailed {
            pid,
            message: format!(
                "{}: {errno}",
                step.describe(SH, prepared.plan.become_user.as_ref())
            ),
        },
    }
}

/// The job's shell.
const SH: &std::ffi::CStr = c"/bin/sh";

/// The `PATH` of a queue's pre- and post-execution commands (LSF's).
const QUEUE_HOOK_PATH: &str = "/bin:/usr/bin:/sbin:/usr/sbin";

/// A plan and the files it names (open until the child has its copies).
struct Prepared {
    plan: Plan,
    files: Vec<std::fs::File>,
    /// An interactive job's ends of its streams.
    io: Option<super::interactive::JobIo>,
}

/// The set-up of the job's top process, done by the launcher thread as the user
/// (file-system identity) in its own working directory: umask, job file, host file,
/// working directory (`/tmp` when the job's cannot be used, with a note), standard
/// streams, environment, limits.
fn prepare(
    spec: &JobSpec,
    launch: &Launch,
    ident: &Identity,
    step: &Step,
) -> Result<(Prepared, ChildInfo), String> {
    let hook = match step {
        Step::Hook(h) => Some(h),
        Step::Job { .. } => None,
    };
    let queue_hook = hook.is_some_and(|h| h.queue_level);
    // An interactive job's own pre- and post-execution commands have no terminal: their
    // streams are /dev/null unless it has an output file.
    let quiet =
        hook.is_some_and(|h| h.quiet || (spec.interactive != 0 && spec.out_file.is_empty()));
    // An interactive job's streams no file takes: pipes or a pseudo-terminal.
    let mut term = match hook {
        None if spec.interactive != 0 => {
            Some(super::interactive::Terminal::open(spec.interactive)?)
        }
        _ => None,
    };
    // A job-level pre-execution command wrote to the output files: the job appends.
    let append = matches!(step, Step::Job { append: true }) || hook.is_some_and(|h| h.append);
    let umask = job_umask(spec);
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(umask as _));

    // The queue's JOB_STARTER wraps the user's command (a file it cannot read runs as it is).
    let started = (!spec.job_starter.trim().is_empty())
        .then(|| std::str::from_utf8(&spec.job_file).ok())
        .flatten()
        .and_then(|text| basalt_core::jobfile::with_starter(text, &spec.job_starter));
    // bsub -f: lsrcp from and to the submission host around the user's command.
    let transferred = (!spec.files.is_empty())
        .then(|| {
            let text = match &started {
                Some(t) => t.as_str(),
                None => std::str::from_utf8(&spec.job_file).ok()?,
            };
            let files: Vec<(String, String, u32)> = spec
                .files
                .iter()
                .map(|f| (f.local.clone(), f.remote.clone(), f.ops))
                .collect();
            basalt_core::jobfile::with_transfers(text, &spec.from_host, &files)
        })
        .flatten();
    let bytes = transferred
        .as_ref()
        .or(started.as_ref())
        .map_or(&spec.job_file[..], |t| t.as_bytes());
    let job_file = place_job_file(&ident.home, ident.uid, &spec.job_file_name, bytes)?;
    let job_file_s = job_file.to_string_lossy().into_owned();
    let host_file = PathBuf::from(format!("{job_file_s}.hostfile"));
    let hosts = if spec.exec_hosts.is_empty() {
        vec![launch.host.clone()]
    } else {
        spec.exec_hosts.clone()
    };
    std::fs::write(&host_file, host_file_text(&hosts))
        .map_err(|e| format!("cannot write {}: {e}", host_file.display()))?;
    if hook.is_none() && !spec.chkpnt_dir.is_empty() {
        make_chkpnt_dir(spec, bytes)?;
    }

    let mut notes = Vec::new();
    let want = paths::job_cwd(
        &spec.spec_cwd,
        &spec.sub_cwd,
        &ident.home,
        spec.job_id,
        spec.idx,
    );
    let want = if queue_hook {
        PathBuf::from("/tmp")
    } else {
        want
    };
    let cwd = match std::env::set_current_dir(&want) {
        Ok(()) => want,
        Err(e) => {
            notes.push(format!(
                "Unable to change to the working directory <{}>: {e}; the job runs in </tmp>.",
                want.display()
            ));
            let tmp = PathBuf::from("/tmp");
            std::env::set_current_dir(&tmp).map_err(|e| format!("chdir /tmp: {e}"))?;
            tmp
        }
    };

    // stdin: an eexec's input (written next to the job file and opened; the name goes
    // at once), else the job's input file.
    let eexec_in = match hook.and_then(|h| h.input.as_ref()) {
        Some(input) => {
            let p = format!("{job_file_s}.eexec");
            let f = std::fs::write(&p, input.as_bytes()).and_then(|()| std::fs::File::open(&p));
            let _ = std::fs::remove_file(&p);
            Some(f.map_err(|e| format!("cannot write {p}: {e}"))?)
        }
        None => None,
    };
    let stdin = if eexec_in.is_some() {
        eexec_in
    } else if let Some(t) = term.as_mut().filter(|_| spec.in_file.is_empty()) {
        t.take(0)
    } else if spec.in_file.is_empty() || quiet {
        None
    } else {
        let p = paths::substitute(&spec.in_file, spec.job_id, spec.idx);
        match std::fs::File::open(&p) {
            Ok(f) => Some(f),
            Err(e) => {
                notes.push(format!(
                    "Unable to open the input file <{p}>: {e}; using /dev/null."
                ));
                None
            }
        }
    };
    let stdin = match stdin {
        Some(f) => f,
        None => std::fs::File::open("/dev/null").map_err(|e| format!("/dev/null: {e}"))?,
    };
    // stdout
    let spool_path = format!("{job_file_s}.out");
    let mut given_out = None;
    let mut given_err = None;
    let (stdout, out_path, spool) = if quiet {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(|e| format!("/dev/null: {e}"))?;
        (f, spool_path.clone(), spec.out_file.is_empty())
    } else if let Some(f) = term
        .as_mut()
        .filter(|_| spec.out_file.is_empty())
        .and_then(|t| t.take(1))
    {
        (f, String::new(), false)
    } else if spec.out_file.is_empty() {
        let f = open_output(&spool_path, !append)
            .map_err(|e| format!("cannot open the spool file {spool_path}: {e}"))?;
        (f, spool_path.clone(), true)
    } else {
        let p = output_path(&spec.out_file, spec, "out");
        given_out = Some(p.clone());
        match open_output(&p, spec.out_overwrite && !append) {
            Ok(f) => (f, p, false),
            Err(e) => {
                notes.push(format!(
                    "Unable to open the output file <{p}>: {e}; the output is in <{spool_path}>."
                ));
                let f = open_output(&spool_path, true)
                    .map_err(|e| format!("cannot open the spool file {spool_path}: {e}"))?;
                (f, spool_path.clone(), false)
            }
        }
    };
    // stderr
    let term_err = term
        .as_mut()
        .filter(|_| spec.err_file.is_empty())
        .and_then(|t| t.take(2));
    let (stderr, err_path) = if let Some(f) = term_err {
        (f, String::new())
    } else if spec.err_file.is_empty() || quiet {
        (
            stdout.try_clone().map_err(|e| format!("dup: {e}"))?,
            out_path.clone(),
        )
    } else {
        let p = output_path(&spec.err_file, spec, "err");
        given_err = Some(p.clone());
        match open_output(&p, spec.err_overwrite && !append) {
            Ok(f) => (f, p),
            Err(e) => {
                notes.push(format!(
                    "Unable to open the error file <{p}>: {e}; errors go to the output file."
                ));
                (
                    stdout.try_clone().map_err(|e| format!("dup: {e}"))?,
                    out_path.clone(),
                )
            }
        }
    };
    let stdio = [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()];
    let files = vec![stdin, stdout, stderr];
    let mut note_bytes = Vec::new();
    for n in &notes {
        note_bytes.extend_from_slice(n.as_bytes());
        note_bytes.push(b'\n');
    }

    let ctx = EnvContext {
        cluster: launch.cluster.clone(),
        exec_user: ident.name.clone(),
        home: ident.home.clone(),
        shell: ident.shell.clone(),
        group: ident.group_name.clone(),
        job_file: job_file_s.clone(),
        host_file: host_file.to_string_lossy().into_owned(),
        // The top process writes its own pid in (`Plan::pid_var`).
        pid: 0,
        out_file: given_out,
        err_file: given_err,
        envdir: launch.envdir.clone(),
        bindir: launch.bindir.clone(),
        serverdir: launch.serverdir.clone(),
        libdir: launch.libdir.clone(),
    };
    let mut vars = job_env(spec, &ctx);
    if let Some(h) = hook {
        if h.queue_level {
            vars.retain(|(k, _)| k != "PATH");
            vars.push(("PATH".to_owned(), QUEUE_HOOK_PATH.to_owned()));
        }
        for (k, v) in &h.env {
            vars.retain(|(name, _)| name != k);
            vars.push((k.clone(), v.clone()));
        }
    }
    let env: Vec<CString> = vars
        .into_iter()
        .filter_map(|(k, v)| CString::new(format!("{k}={v}")).ok())
        .collect();
    // The supervisor (report, bpeek) does not run in the job's directory: give it
    // absolute paths. The job itself sees the paths as given (LSB_OUTPUTFILE).
    let absolute = |p: String| {
        if p.is_empty() || Path::new(&p).is_absolute() {
            p
        } else {
            cwd.join(&p).to_string_lossy().into_owned()
        }
    };
    let info = ChildInfo {
        job_file: job_file_s.clone(),
        cwd: cwd.to_string_lossy().into_owned(),
        out_path: absolute(out_path),
        err_path: absolute(err_path),
        spool,
    };
    let argv = match hook {
        Some(h) => vec![
            SH.to_owned(),
            c"-c".to_owned(),
            CString::new(h.cmd.as_str()).map_err(|_| "the command contains NUL".to_owned())?,
        ],
        // A job restarted from its checkpoint runs erestart's LSB_RESTART_CMD if it
        // wrote one.
        None => match (spec.restart && !spec.chkpnt_dir.is_empty())
            .then(|| super::restart::read_restart_cmd(&spec.chkpnt_dir))
            .flatten()
        {
            Some(cmd) => vec![
                SH.to_owned(),
                c"-c".to_owned(),
                CString::new(cmd).map_err(|_| "LSB_RESTART_CMD contains NUL".to_owned())?,
            ],
            None => vec![
                SH.to_owned(),
                CString::new(job_file_s).map_err(|_| "job file path contains NUL".to_owned())?,
            ],
        },
    };
    let runs_as = hook.and_then(|h| h.user.as_ref()).unwrap_or(ident);
    let plan = Plan {
        argv,
        env,
        pid_var: Some("LS_JOBPID"),
        stdio,
        ctty: term.as_ref().and_then(|t| t.ctty()),
        // The notes (working directory, files) go to the job's own output only.
        notes: if hook.is_some() {
            Vec::new()
        } else {
            note_bytes
        },
        rlimits: rlimits(spec, launch),
        nice: spec.nice,
        become_user: runs_as.switch.then(|| Become {
            groups: runs_as.groups.iter().map(|g| g.as_raw()).collect(),
            gid: runs_as.gid.as_raw(),
            uid: runs_as.uid.as_raw(),
        }),
    };
    let io = term.and_then(|t| t.finish());
    Ok((Prepared { plan, files, io }, info))
}

/// A checkpointable job's directory (`mkdir -p`, 0700, as the user) and the copy of its
/// job file there (`LSB_CHKFILENAME`), so that a restart elsewhere has it.
fn make_chkpnt_dir(spec: &JobSpec, job_file: &[u8]) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = &spec.chkpnt_dir;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create the checkpoint directory {dir}: {e}"))?;
    let copy = super::env::chkpnt_file(spec);
    std::fs::write(&copy, job_file).map_err(|e| format!("cannot copy the job file to {copy}: {e}"))
}
