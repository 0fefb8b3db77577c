//! Start a job's top process without copying the supervisor: `clone(CLONE_VM |
//! CLONE_VFORK)` (what `posix_spawn` does), a child that only makes system calls on
//! memory prepared before it (a [`Plan`]) and then `exec`s.
//!
//! A `fork` copies the caller's page tables, and every page either side writes before
//! the `exec` is then copied again; an `exec` after it tears that copy down. The child
//! here shares the caller's memory instead, and the calling thread sleeps until the
//! child has `exec`ed or exited (the kernel's `vfork` guarantee), so nothing is copied
//! and the child's failures come back in memory. What the child may do is therefore
//! narrow: no allocation, no lock, no Rust code that could panic; only plain system
//! calls (identity changes as raw system calls, since glibc's `setuid` family signals
//! every thread of the process) on data the [`Plan`] holds. Everything else (files
//! opened as the user, the working directory, the umask, the environment) is done
//! before, by the thread that calls [`spawn`]: the child starts with that thread's
//! credentials and a copy of its working directory and umask.

use nix::errno::Errno;
use nix::unistd::Pid;
use std::ffi::{CStr, CString, c_void};
use std::os::fd::RawFd;

/// One resource limit the child sets: `resource`, soft and hard values, and the name
/// printed if the kernel refuses it.
#[derive(Debug, Clone)]
pub(crate) struct Rlimit {
    pub resource: libc::__rlimit_resource_t,
    pub soft: libc::rlim_t,
    pub hard: libc::rlim_t,
    pub name: &'static str,
}

/// Who the child becomes (when the caller is root): its groups, gid and uid.
#[derive(Debug, Clone)]
pub(crate) struct Become {
    pub groups: Vec<libc::gid_t>,
    pub gid: libc::gid_t,
    pub uid: libc::uid_t,
}

/// Everything the child needs, built before it exists.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The program and its arguments (`argv[0]` is the program's path).
    pub argv: Vec<CString>,
    /// `KEY=VALUE` strings.
    pub env: Vec<CString>,
    /// The name of a variable (`LS_JOBPID`) whose value the child sets to its own pid.
    pub pid_var: Option<&'static str>,
    /// Standard input, output and error of the child (dup2'ed to 0, 1, 2; left open
    /// in the caller, which closes them after [`spawn`]).
    pub stdio: [RawFd; 3],
    /// Which of the child's standard streams (0, 1 or 2) is a pseudo-terminal that
    /// becomes its controlling terminal (an interactive job's, `bsub -Ip`); None: none.
    pub ctty: Option<RawFd>,
    /// Bytes written to the child's standard error before the `exec` (set-up notes).
    pub notes: Vec<u8>,
    pub rlimits: Vec<Rlimit>,
    /// The nice value (0: unchanged); a refusal is ignored.
    pub nice: i32,
    pub become_user: Option<Become>,
}

/// The step of the child's set-up that failed (its number is what the child records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum Step {
    Setsid = 1,
    Setgroups,
    Setgid,
    Setuid,
    Dup2,
    Exec,
    Ctty,
}

/// Why [`spawn`] did not start the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SpawnError {
    /// No child: `clone` (or the stack for it) failed.
    NoChild(Errno),
    /// The child failed at `step` and exited with status 127 (the caller reaps it).
    Child { pid: Pid, step: Step, errno: Errno },
}

/// Room for the pid's digits in the `pid_var` string.
const PID_DIGITS: usize = 10;

/// The child's stack: small, with a guard page below it.
const STACK: usize = 64 * 1024;
const GUARD: usize = 4096;

/// What the child reads (and writes, on failure), in the caller's memory.
#[repr(C)]
struct Shared {
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    /// The `pid_var` string's digits (PID_DIGITS bytes, NUL after them) and the
    /// byte where its value starts.
    pid_digits: *mut u8,
    stdio: [RawFd; 3],
    /// -1: no controlling terminal.
    ctty: RawFd,
    notes: *const u8,
    notes_len: usize,
    rlimits: *const Rlimit,
    rlimits_len: usize,
    nice: i32,
    become_user: *const Become,
    /// Set by the child when a step fails (0: none).
    failed_step: i32,
    failed_errno: i32,
}

/// A mapping for the child's stack, unmapped on drop.
struct Stack {
    base: *mut c_void,
    len: usize,
}

impl Stack {
    #[allow(unsafe_code)]
    fn new() -> Result<Stack, Errno> {
        let len = STACK + GUARD;
        // SAFETY: an anonymous private mapping; no existing memory is touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Errno::last());
        }
        let stack = Stack { base, len };
        // SAFETY: the lowest page of the mapping just made; an overflow faults there.
        if unsafe { libc::mprotect(base, GUARD, libc::PROT_NONE) } != 0 {
            return Err(Errno::last());
        }
        Ok(stack)
    }

    /// The top of the stack (it grows down), 16-byte aligned.
    fn top(&self) -> *mut c_void {
        let top = self.base as usize + self.len;
        (top & !15) as *mut c_void
    }
}

impl Drop for Stack {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`; the child no longer runs on it (it
        // exec'ed or exited before `clone` returned).
        unsafe {
            libc::munmap(self.base, self.len);
        }
    }
}

/// Start `plan`'s program in a new session; returns its pid once it has `exec`ed.
///
/// The calling thread sleeps while the child sets itself up (a few system calls) and
/// until the kernel has loaded the program. The child starts with the calling thread's
/// credentials, working directory and umask, and every signal blocked; it sets SIGPIPE,
/// SIGSEGV and SIGBUS to their default action and SIGHUP to ignored (as LSF's jobs
/// have it), applies the limits, nice value and identity, redirects its standard
/// streams, writes the notes to its standard error and unblocks every signal just
/// before the `exec`. Descriptors not marked close-on-exec stay open in the program.
#[allow(unsafe_code)]
pub(crate) fn spawn(plan: &mut Plan) -> Result<Pid, SpawnError> {
    // The pid variable (added if missing) gets room for the digits the child writes.
    let mut pid_entry: Option<usize> = None;
    if let Some(var) = plan.pid_var {
        let prefix = format!("{var}=");
        let mut bytes = prefix.clone().into_bytes();
        bytes.extend(std::iter::repeat_n(b'0', PID_DIGITS));
        if let Ok(c) = CString::new(bytes) {
            let found = plan
                .env
                .iter()
                .position(|e| e.as_bytes().starts_with(prefix.as_bytes()));
            pid_entry = Some(match found {
                Some(i) => {
                    plan.env[i] = c;
                    i
                }
                None => {
                    plan.env.push(c);
                    plan.env.len() - 1
                }
            });
        }
    }
    let argv = c_vector(&plan.argv);
    let envp = c_vector(&plan.env);
    let pid_digits = match (pid_entry, plan.pid_var) {
        (Some(i), Some(var)) => {
            // The digits follow "VAR=" in the CString's own buffer, which the child
            // overwrites in place (the CString is not read again before it is dropped).
            plan.env[i]
                .as_ptr()
                .cast_mut()
                .cast::<u8>()
                .wrapping_add(var.len() + 1)
        }
        _ => std::ptr::null_mut(),
    };
    let become_user = plan
        .become_user
        .as_ref()
        .map_or(std::ptr::null(), |b| b as *const Become);
    let mut shared = Shared {
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        pid_digits,
        stdio: plan.stdio,
        ctty: plan.ctty.unwrap_or(-1),
        notes: plan.notes.as_ptr(),
        notes_len: plan.notes.len(),
        rlimits: plan.rlimits.as_ptr(),
        rlimits_len: plan.rlimits.len(),
        nice: plan.nice,
        become_user,
        failed_step: 0,
        failed_errno: 0,
    };
    let stack = Stack::new().map_err(SpawnError::NoChild)?;

    // Every signal blocked in this thread across the clone: the child starts with
    // them blocked and so runs none of the process's handlers on shared memory.
    // SAFETY: plain data that sigfillset/pthread_sigmask fill.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to sigset_t values owned by this frame.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    // SAFETY: `child` only makes system calls on `shared` and on what it points to,
    // all alive until `clone` returns: with CLONE_VFORK this thread sleeps until the
    // child has exec'ed or exited, and the child runs on `stack`, not on this thread's.
    let pid = unsafe {
        libc::clone(
            child,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw mut shared).cast::<c_void>(),
        )
    };
    let clone_errno = Errno::last();
    // SAFETY: restores this thread's mask saved above.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    drop(stack);
    if pid < 0 {
        return Err(SpawnError::NoChild(clone_errno));
    }
    let pid = Pid::from_raw(pid);
    // SAFETY: the child wrote these (if at all) before it exited; it no longer runs.
    let (step, errno) = unsafe {
        (
            std::ptr::read_volatile(&raw const shared.failed_step),
            std::ptr::read_volatile(&raw const shared.failed_errno),
        )
    };
    drop(argv);
    drop(envp);
    match step_of(step) {
        None => Ok(pid),
        Some(step) => Err(SpawnError::Child {
            pid,
            step,
            errno: Errno::from_raw(errno),
        }),
    }
}

/// The step the child recorded (0: none failed).
/// `strings` as a C vector: their pointers, then a null one (they must outlive it).
fn c_vector(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

fn step_of(n: i32) -> Option<Step> {
    [
        Step::Setsid,
        Step::Setgroups,
        Step::Setgid,
        Step::Setuid,
        Step::Dup2,
        Step::Exec,
        Step::Ctty,
    ]
    .into_iter()
    .find(|s| *s as i32 == n)
}

/// The child, between `clone` and `exec`: system calls only (see the module's
/// documentation). Never returns normally.
#[allow(unsafe_code)]
extern "C" fn child(arg: *mut c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Shared` of `spawn`, alive while this child runs.
    let s = unsafe { &mut *arg.cast::<Shared>() };
    // SAFETY: each call below is a system call (or glibc's thin wrapper of one) on
    // memory `spawn` prepared and keeps alive; nothing allocates or takes a lock.
    unsafe {
        for (sig, action) in [
            (libc::SIGSEGV, libc::SIG_DFL),
            (libc::SIGBUS, libc::SIG_DFL),
            (libc::SIGPIPE, libc::SIG_DFL),
            (libc::SIGHUP, libc::SIG_IGN),
        ] {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = action;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
        if libc::setsid() < 0 {
            fail(s, Step::Setsid);
        }
        for i in 0..s.rlimits_len {
            let r = &*s.rlimits.add(i);
            let lim = libc::rlimit {
                rlim_cur: r.soft,
                rlim_max: r.hard,
            };
            if libc::setrlimit(r.resource, &lim) != 0 {
                let errno = *libc::__errno_location();
                write_all(2, b"setrlimit ");
                write_all(2, r.name.as_bytes());
                write_all(2, b": ");
                write_errno(2, errno);
                write_all(2, b"\n");
            }
        }
        if s.nice != 0 {
            libc::setpriority(libc::PRIO_PROCESS, 0, s.nice);
        }
        if !s.become_user.is_null() {
            let b = &*s.become_user;
            if libc::syscall(libc::SYS_setgroups, b.groups.len(), b.groups.as_ptr()) != 0 {
                fail(s, Step::Setgroups);
            }
            if libc::syscall(libc::SYS_setgid, b.gid) != 0 {
                fail(s, Step::Setgid);
            }
            if libc::syscall(libc::SYS_setuid, b.uid) != 0 {
                fail(s, Step::Setuid);
            }
        }
        for (i, fd) in s.stdio.iter().enumerate() {
            let target = i as RawFd;
            if *fd == target {
                // dup2 onto itself would keep close-on-exec: clear it instead.
                if libc::fcntl(target, libc::F_SETFD, 0) != 0 {
                    fail(s, Step::Dup2);
                }
            } else if libc::dup2(*fd, target) < 0 {
                fail(s, Step::Dup2);
            }
        }
        // The new session's controlling terminal (the session leader takes it).
        if s.ctty >= 0 && libc::ioctl(s.ctty, libc::TIOCSCTTY, 0) != 0 {
            fail(s, Step::Ctty);
        }
        if s.notes_len > 0 {
            write_all(2, std::slice::from_raw_parts(s.notes, s.notes_len));
        }
        if !s.pid_digits.is_null() {
            let pid = libc::syscall(libc::SYS_getpid) as u64;
            let mut digits = [0u8; 20];
            let n = format_u64(pid, &mut digits);
            let n = n.min(PID_DIGITS);
            std::ptr::copy_nonoverlapping(digits.as_ptr(), s.pid_digits, n);
            *s.pid_digits.add(n) = 0;
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(*s.argv, s.argv, s.envp);
        fail(s, Step::Exec)
    }
}

/// Record the failed step (and errno) for `spawn` and leave.
#[allow(unsafe_code)]
unsafe fn fail(s: &mut Shared, step: Step) -> ! {
    // SAFETY: `s` is the caller's live `Shared`; the errno location is this task's.
    unsafe {
        std::ptr::write_volatile(&raw mut s.failed_errno, *libc::__errno_location());
        std::ptr::write_volatile(&raw mut s.failed_step, step as i32);
        libc::_exit(127)
    }
}

/// `n` in decimal at the start of `out`; returns the number of digits.
fn format_u64(mut n: u64, out: &mut [u8; 20]) -> usize {
    let mut tmp = [0u8; 20];
    let mut len = 0;
    loop {
        tmp[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 || len == tmp.len() {
            break;
        }
    }
    for i in 0..len {
        out[i] = tmp[len - 1 - i];
    }
    len
}

/// Write all of `bytes` to `fd` (best effort: an error ends it).
#[allow(unsafe_code)]
fn write_all(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: a valid pointer and length from a live slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            if n < 0 && Errno::last() == Errno::EINTR {
                continue;
            }
            return;
        }
        bytes = bytes.get(n as usize..).unwrap_or(&[]);
    }
}

/// `errno` as `std::io::Error` shows it ("No such file or directory (os error 2)"),
/// without allocating: nix's static description and the number.
fn write_errno(fd: RawFd, errno: i32) {
    write_all(fd, Errno::from_raw(errno).desc().as_bytes());
    write_all(fd, b" (os error ");
    let mut digits = [0u8; 20];
    let n = format_u64(u64::from(errno.unsigned_abs()), &mut digits);
    write_all(fd, digits.get(..n).unwrap_or(&[]));
    write_all(fd, b")");
}

impl Step {
    /// How the set-up step is named in a start failure's message.
    pub(crate) fn describe(self, plan_program: &CStr, b: Option<&Become>) -> String {
        match self {
            Step::Setsid => "setsid".to_owned(),
            Step::Setgroups => "setgroups".to_owned(),
            Step::Setgid => format!("setgid({})", b.map_or(0, |b| b.gid)),
            Step::Setuid => format!("setuid({})", b.map_or(0, |b| b.uid)),
            Step::Dup2 => "dup2".to_owned(),
            Step::Ctty => "ioctl(TIOCSCTTY)".to_owned(),
            Step::Exec => format!("cannot execute {}", plan_program.to_string_lossy()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;

    fn reap(pid: Pid) -> i32 {
        match nix::sys::wait::waitpid(pid, None) {
            Ok(nix::sys::wait::WaitStatus::Exited(_, c)) => c,
            other => panic!("unexpected wait status {other:?}"),
        }
    }

    fn plan(args: &[&str], out: RawFd) -> Plan {
        Plan {
            argv: args.iter().map(|a| CString::new(*a).expect("c")).collect(),
            env: vec![CString::new("A=1").expect("c")],
            pid_var: Some("MYPID"),
            stdio: [out, out, out],
            ctty: None,
            notes: Vec::new(),
            rlimits: Vec::new(),
            nice: 0,
            become_user: None,
        }
    }

    #[test]
    fn the_child_runs_the_program_with_its_own_pid_in_the_environment() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("out");
        let f = std::fs::File::create(&path).expect("create");
        let mut p = plan(&["/bin/sh", "-c", "echo \"$A $MYPID $$\""], f.as_raw_fd());
        let pid = spawn(&mut p).expect("spawn");
        assert_eq!(reap(pid), 0);
        let text = std::fs::read_to_string(&path).expect("read");
        let me = pid.as_raw().to_string();
        assert_eq!(text.trim(), format!("1 {me} {me}"));
    }

    #[test]
    fn a_failed_exec_comes_back_with_its_step_and_errno() {
        let f = std::fs::File::open("/dev/null").expect("null");
        let mut p = plan(&["/nonexistent/program"], f.as_raw_fd());
        match spawn(&mut p) {
            Err(SpawnError::Child { pid, step, errno }) => {
                assert_eq!(step, Step::Exec);
                assert_eq!(errno, Errno::ENOENT);
                assert_eq!(reap(pid), 127);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn notes_go_to_the_jobs_standard_error_and_a_refused_limit_does_not_stop_it() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("err");
        let f = std::fs::File::create(&path).expect("create");
        let mut p = plan(&["/bin/sh", "-c", "echo ran >&2"], f.as_raw_fd());
        p.notes = b"a note\n".to_vec();
        // A soft limit above the hard one is refused (EINVAL).
        p.rlimits = vec![Rlimit {
            resource: libc::RLIMIT_CORE,
            soft: 10,
            hard: 5,
            name: "RLIMIT_CORE",
        }];
        let pid = spawn(&mut p).expect("spawn");
        assert_eq!(reap(pid), 0);
        let mut text = String::new();
        std::fs::File::open(&path)
            .expect("open")
            .read_to_string(&mut text)
            .expect("read");
        // The refused limit is told on the supervisor's standard error (its log), not
        // the job's; the job runs.
        assert_eq!(text, "a note\nran\n");
    }

    #[test]
    fn the_child_leads_a_new_session_and_inherits_the_threads_directory_and_umask() {
        let dir = tempfile::tempdir().expect("dir");
        let out = dir.path().join("out");
        let work = dir.path().join("work");
        std::fs::create_dir(&work).expect("mkdir");
        let f = std::fs::File::create(&out).expect("create");
        let fd = f.as_raw_fd();
        let work2 = work.clone();
        // A thread with its own working directory and umask, as the supervisor's
        // launcher has.
        let pid = std::thread::spawn(move || {
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_FS).expect("unshare");
            std::env::set_current_dir(&work2).expect("chdir");
            nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o027));
            let mut p = plan(
                &[
                    "/bin/sh",
                    "-c",
                    "pwd; umask; set -- $(cat /proc/$$/stat); echo $6",
                ],
                fd,
            );
            spawn(&mut p).expect("spawn")
        })
        .join()
        .expect("thread");
        assert_eq!(reap(pid), 0);
        let text = std::fs::read_to_string(&out).expect("read");
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        assert_eq!(lines.first().copied(), Some(work.to_str().expect("utf8")));
        assert_eq!(lines.get(1).copied(), Some("0027"));
        assert_eq!(
            lines.get(2).copied(),
            Some(pid.as_raw().to_string().as_str())
        );
        // The process's own directory did not move.
        assert_ne!(std::env::current_dir().expect("cwd"), work);
    }

    #[test]
    fn decimal_digits_without_allocation() {
        let mut d = [0u8; 20];
        let n = format_u64(0, &mut d);
        assert_eq!(&d[..n], b"0");
        let n = format_u64(4_194_304, &mut d);
        assert_eq!(&d[..n], b"4194304");
        let n = format_u64(u64::MAX, &mut d);
        assert_eq!(&d[..n], u64::MAX.to_string().as_bytes());
    }
}
