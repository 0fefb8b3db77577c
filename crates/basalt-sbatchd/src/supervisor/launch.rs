//! The job's top process: who it runs as ([`Identity`]), and its set-up after the
//! fork (session, signals, rlimits, nice, user, umask, job file, working directory,
//! redirections, environment) up to `exec /bin/sh <job file>`, reported to the
//! supervisor through the start pipe.

use super::env::{EnvContext, host_file_text, job_env};
use super::files::{open_output, output_path, place_job_file};
use super::limits::apply_rlimits;
use crate::paths;
use crate::state::Launch;
use crate::sys;
use crate::sys::Disposition;
use basalt_proto::sbatchd::JobSpec;
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::unistd::{Gid, Uid};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

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
    // Never a job as root by accident: mbatchd refuses root's submissions without
    // LSF_ROOT_REX, and this host checks again (a user named in the job whose account
    // here is uid 0 is refused too).
    if root && user.uid.is_root() && launch.refuse_root {
        return Err(format!(
            "User <{}> is root on host <{host}> and LSF_ROOT_REX is not set: root's jobs are not run",
            spec.user
        ));
    }
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
    Ok(Identity {
        switch: root,
        uid: user.uid,
        gid: user.gid,
        groups,
        name: user.name,
        home: user.dir.to_string_lossy().into_owned(),
        shell: user.shell.to_string_lossy().into_owned(),
        group_name,
    })
}

/// What the job's top process tells the supervisor through the start pipe.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct ChildInfo {
    pub(super) job_file: String,
    pub(super) cwd: String,
    pub(super) out_path: String,
    pub(super) err_path: String,
    /// The output goes to the spool file (`<job file>.out`), removed at the end.
    pub(super) spool: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) enum ChildMsg {
    Ready(ChildInfo),
    Failed(String),
}

/// What the top process said on the start pipe: the first failure, else the last
/// `Ready` (None when it said nothing readable).
pub(super) fn parse_child_msgs(text: &str) -> Option<ChildMsg> {
    let mut last = None;
    for line in text.lines() {
        if let Ok(m) = serde_json::from_str::<ChildMsg>(line) {
            match m {
                ChildMsg::Failed(_) => return Some(m),
                ChildMsg::Ready(_) => last = Some(m),
            }
        }
    }
    last
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

/// The job's top process, after fork. Never returns.
pub(super) fn child_main(spec: &JobSpec, launch: &Launch, ident: &Identity, wfd: OwnedFd) -> ! {
    let mut pipe = std::fs::File::from(wfd);
    let err = match child_setup(spec, launch, ident, &mut pipe) {
        Ok(never) => match never {},
        Err(e) => e,
    };
    if let Ok(line) = serde_json::to_string(&ChildMsg::Failed(err)) {
        let _ = writeln!(pipe, "{line}");
    }
    sys::exit_now(127)
}

enum Never {}

fn child_setup(
    spec: &JobSpec,
    launch: &Launch,
    ident: &Identity,
    pipe: &mut std::fs::File,
) -> Result<Never, String> {
    nix::unistd::setsid().map_err(|e| format!("setsid: {e}"))?;
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
    let _ = sys::set_disposition(Signal::SIGPIPE, Disposition::Default);
    let _ = sys::set_disposition(Signal::SIGHUP, Disposition::Ignore);
    apply_rlimits(spec, launch);
    if spec.nice != 0
        && let Err(e) = sys::set_nice(spec.nice)
    {
        tracing::debug!("nice {}: {e}", spec.nice);
    }
    switch_identity(ident)?;
    let umask = if spec.umask == 0 {
        0o022
    } else {
        spec.umask & 0o777
    };
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(umask as _));

    let job_file = place_job_file(&ident.home, ident.uid, &spec.job_file_name, &spec.job_file)?;
    let job_file_s = job_file.to_string_lossy().into_owned();
    let host_file = PathBuf::from(format!("{job_file_s}.hostfile"));
    let hosts = if spec.exec_hosts.is_empty() {
        vec![launch.host.clone()]
    } else {
        spec.exec_hosts.clone()
    };
    std::fs::write(&host_file, host_file_text(&hosts))
        .map_err(|e| format!("cannot write {}: {e}", host_file.display()))?;

    let mut notes = Vec::new();
    let want = paths::job_cwd(
        &spec.spec_cwd,
        &spec.sub_cwd,
        &ident.home,
        spec.job_id,
        spec.idx,
    );
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

    // stdin
    let stdin = if spec.in_file.is_empty() {
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
    let (stdout, out_path, spool) = if spec.out_file.is_empty() {
        let f = open_output(&spool_path, true)
            .map_err(|e| format!("cannot open the spool file {spool_path}: {e}"))?;
        (f, spool_path.clone(), true)
    } else {
        let p = output_path(&spec.out_file, spec, "out");
        given_out = Some(p.clone());
        match open_output(&p, spec.out_overwrite) {
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
    let (stderr, err_path) = if spec.err_file.is_empty() {
        (
            stdout.try_clone().map_err(|e| format!("dup: {e}"))?,
            out_path.clone(),
        )
    } else {
        let p = output_path(&spec.err_file, spec, "err");
        given_err = Some(p.clone());
        match open_output(&p, spec.err_overwrite) {
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
    nix::unistd::dup2_stdin(&stdin).map_err(|e| format!("dup2: {e}"))?;
    nix::unistd::dup2_stdout(&stdout).map_err(|e| format!("dup2: {e}"))?;
    nix::unistd::dup2_stderr(&stderr).map_err(|e| format!("dup2: {e}"))?;
    drop((stdin, stdout, stderr));
    for n in &notes {
        let _ = writeln!(std::io::stderr(), "{n}");
    }

    let ctx = EnvContext {
        cluster: launch.cluster.clone(),
        exec_user: ident.name.clone(),
        home: ident.home.clone(),
        shell: ident.shell.clone(),
        group: ident.group_name.clone(),
        job_file: job_file_s.clone(),
        host_file: host_file.to_string_lossy().into_owned(),
        pid: std::process::id(),
        out_file: given_out,
        err_file: given_err,
        envdir: launch.envdir.clone(),
        bindir: launch.bindir.clone(),
        serverdir: launch.serverdir.clone(),
        libdir: launch.libdir.clone(),
    };
    let env: Vec<CString> = job_env(spec, &ctx)
        .into_iter()
        .filter_map(|(k, v)| CString::new(format!("{k}={v}")).ok())
        .collect();
    // The supervisor (report, bpeek) does not run in the job's directory: give it
    // absolute paths. The job itself sees the paths as given (LSB_OUTPUTFILE).
    let absolute = |p: String| {
        if Path::new(&p).is_absolute() {
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
    let line = serde_json::to_string(&ChildMsg::Ready(info)).map_err(|e| e.to_string())?;
    writeln!(pipe, "{line}").map_err(|e| format!("start pipe: {e}"))?;
    let sh = c"/bin/sh";
    let file = CString::new(job_file_s).map_err(|_| "job file path contains NUL".to_owned())?;
    let e = nix::unistd::execve(sh, &[sh, file.as_c_str()], &env);
    Err(format!(
        "cannot execute /bin/sh: {}",
        e.err().map_or_else(String::new, |e| e.to_string())
    ))
}
