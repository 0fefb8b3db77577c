//! Unit tests of the supervisor's pure helpers.

use super::control::Control;
use super::files::{output_path, place_job_file};
use super::launch::ChildInfo;
use super::{limit, limit_value};
use basalt_proto::sbatchd::JobSpec;
use nix::sys::signal::Signal;
use std::os::unix::fs::MetadataExt;

#[test]
fn job_controls_are_signals_or_commands() {
    assert_eq!(Control::parse("SIGTSTP"), Control::Signal(Signal::SIGTSTP));
    assert_eq!(Control::parse("usr2"), Control::Signal(Signal::SIGUSR2));
    assert_eq!(Control::parse("9"), Control::Signal(Signal::SIGKILL));
    assert_eq!(
        Control::parse("kill -STOP -$LSB_JOBPGIDS"),
        Control::Command("kill -STOP -$LSB_JOBPGIDS".into())
    );
    assert_eq!(
        Control::parse("/usr/local/bin/stopper"),
        Control::Command("/usr/local/bin/stopper".into())
    );
}

/// `-M`: the per-process RLIMIT_RSS by default (the OS enforces it); with
/// LSB_JOB_MEMLIMIT=Y only the per-job limit sbatchd enforces (no RLIMIT_RSS); with
/// LSB_MEMLIMIT_ENFORCE=Y both.
#[test]
fn the_memory_limit_is_per_process_per_job_or_both() {
    let spec = JobSpec {
        rlimits: vec![-1, -1, -1, -1, -1, 2048, -1, -1, -1, -1, -1],
        ..Default::default()
    };
    let rss = |launch: &crate::state::Launch| {
        super::limits::rlimits(&spec, launch)
            .iter()
            .any(|r| r.name == "RLIMIT_RSS")
    };
    let os_only = crate::state::Launch::default();
    assert!(rss(&os_only));
    let job_memlimit = crate::state::Launch {
        enforce_memlimit: true,
        ..Default::default()
    };
    assert!(!rss(&job_memlimit));
    let both = crate::state::Launch {
        enforce_memlimit: true,
        os_memlimit_too: true,
        ..Default::default()
    };
    assert!(rss(&both));
}

#[test]
fn limits() {
    let spec = JobSpec {
        rlimits: vec![-1, 0, 100, -1, 0, 2048, -1, -1, -1, 60],
        ..Default::default()
    };
    assert_eq!(limit_value(&spec, limit::CPU), None);
    assert_eq!(limit_value(&spec, limit::FSIZE), None);
    assert_eq!(limit_value(&spec, limit::DATA), Some(100));
    assert_eq!(limit_value(&spec, limit::CORE), Some(0));
    assert_eq!(limit_value(&spec, limit::RSS), Some(2048));
    assert_eq!(limit_value(&spec, limit::RUN), Some(60));
    assert_eq!(limit_value(&spec, limit::PROCESS), None);
}

#[test]
fn output_paths() {
    let spec = JobSpec {
        job_id: 9,
        idx: 2,
        is_array: true,
        ..Default::default()
    };
    assert_eq!(output_path("o.%J.%I", &spec, "out"), "o.9.2");
    assert_eq!(output_path("/tmp/", &spec, "out"), "/tmp/9_2.out");
    let plain = JobSpec {
        job_id: 9,
        ..Default::default()
    };
    assert_eq!(output_path("/tmp", &plain, "err"), "/tmp/9.err");
}

#[test]
fn job_file_names_never_collide() {
    let d = tempfile::tempdir().expect("tempdir");
    let home = d.path().to_string_lossy().into_owned();
    let me = nix::unistd::geteuid();
    let a = place_job_file(&home, me, "100.5", b"a").expect("first");
    let b = place_job_file(&home, me, "100.5", b"b").expect("second");
    assert_eq!(a, d.path().join(".lsbatch/100.5"));
    assert_eq!(b, d.path().join(".lsbatch/100.5.1"));
    assert_eq!(std::fs::read(&b).expect("read"), b"b");
    let md = std::fs::metadata(d.path().join(".lsbatch")).expect("md");
    assert_eq!(md.mode() & 0o777, 0o700);
    // A finished job's kept spool file keeps its name taken after its job file went.
    std::fs::remove_file(&a).expect("rm");
    std::fs::write(d.path().join(".lsbatch/100.5.out"), b"kept").expect("spool");
    let c = place_job_file(&home, me, "100.5", b"c").expect("third");
    assert_eq!(c, d.path().join(".lsbatch/100.5.2"));
}

/// The report writer acts on files as the job's user, in its own thread only: as root,
/// a thread that took nobody's identity cannot append to a root-only file but can to
/// one nobody may write, and the process (its other threads) stays root.
#[test]
fn report_writer_thread_acts_as_the_user_and_only_in_its_thread() {
    use super::finish::{deliver, take_fs_identity};
    use super::launch::Identity;
    use nix::unistd::{Gid, Uid};
    use std::os::unix::fs::PermissionsExt;
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: needs root to take another identity");
        return;
    }
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let closed = d.path().join("root-only.out");
    let open = d.path().join("nobody.out");
    std::fs::write(&closed, "").expect("write");
    std::fs::write(&open, "").expect("write");
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let nobody = Identity {
        switch: true,
        uid: Uid::from_raw(65534),
        gid: Gid::from_raw(65534),
        groups: vec![Gid::from_raw(65534)],
        name: "nobody".into(),
        home: "/nonexistent".into(),
        shell: "/bin/sh".into(),
        group_name: None,
    };
    let info = |p: &std::path::Path| ChildInfo {
        job_file: d.path().join("no-job-file").to_string_lossy().into_owned(),
        out_path: p.to_string_lossy().into_owned(),
        err_path: p.to_string_lossy().into_owned(),
        ..Default::default()
    };
    let (a, b) = (info(&closed), info(&open));
    let id = nobody.clone();
    let (refused, written) = std::thread::spawn(move || {
        take_fs_identity(&id).expect("identity");
        (
            deliver(&a, "REPORT\n", "", false),
            deliver(&b, "REPORT\n", "", false),
        )
    })
    .join()
    .expect("thread");
    let e = refused.expect_err("nobody cannot append to a root-only file");
    assert!(e.contains("ermission denied"), "{e}");
    written.expect("nobody may append to a world-writable file");
    assert_eq!(std::fs::read_to_string(&open).expect("read"), "REPORT\n");
    assert_eq!(std::fs::read_to_string(&closed).expect("read"), "");
    // This thread is still root.
    deliver(&info(&closed), "ROOT\n", "", false).expect("root appends");
    assert_eq!(std::fs::read_to_string(&closed).expect("read"), "ROOT\n");
}

/// A user looked up for one job is known for the next ones, but the refusal of root's
/// jobs (without LSF_ROOT_REX) is decided for every job, cached or not.
#[test]
fn a_cached_user_still_meets_the_root_refusal_of_each_job() {
    use super::launch::IdentityCache;
    use crate::state::Launch;
    let me = nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .expect("this process's user");
    let spec = JobSpec {
        user: me.name.clone(),
        ..Default::default()
    };
    let allow = Launch {
        host: "hostA".into(),
        refuse_root: false,
        ..Default::default()
    };
    let mut users = IdentityCache::default();
    let first = users.resolve(&spec, &allow).expect("first look-up");
    let again = users.resolve(&spec, &allow).expect("from the cache");
    assert_eq!(
        (first.uid, first.gid, &first.home),
        (again.uid, again.gid, &again.home)
    );
    let refuse = Launch {
        refuse_root: true,
        ..allow
    };
    let third = users.resolve(&spec, &refuse);
    if nix::unistd::geteuid().is_root() {
        let e = third.expect_err("root's job refused although root is cached");
        assert!(e.contains("LSF_ROOT_REX is not set"), "{e}");
    } else {
        third.expect("not root: nothing to refuse");
    }
}

/// An interactive job's streams: pipes (`-I`) or one pseudo-terminal (`-Ip`, `-Is`, its
/// controlling terminal); the supervisor keeps the other end of each stream the job got
/// (a stream a file took has none).
#[test]
fn interactive_streams_are_pipes_or_a_terminal_and_files_take_theirs() {
    use super::interactive::{PTY, STDERR, STDIN, STDOUT, Terminal};
    use std::io::{Read, Write};
    let bits = |io: &super::interactive::JobIo| io.ends.iter().map(|(b, _)| *b).collect::<Vec<_>>();
    // -I, with -e: stdin and stdout are pipes; stderr is the file's.
    let mut t = Terminal::open(1).expect("pipes");
    let child_in = t.take(0).expect("stdin");
    let mut child_out = t.take(1).expect("stdout");
    assert_eq!(t.ctty(), None);
    let io = t.finish().expect("ends");
    assert_eq!(bits(&io), vec![STDIN, STDOUT]);
    // What the job writes comes out of the kept end.
    child_out.write_all(b"out").expect("write");
    drop(child_out);
    drop(child_in);
    let mut got = String::new();
    std::fs::File::from(io.ends.into_iter().nth(1).expect("stdout end").1)
        .read_to_string(&mut got)
        .expect("read");
    assert_eq!(got, "out");
    // -Ip with -i: the terminal takes stdout and stderr, and is the controlling one.
    let mut t = Terminal::open(2).expect("pty");
    assert!(t.take(1).is_some() && t.take(2).is_some());
    assert_eq!(t.ctty(), Some(1));
    assert_eq!(bits(&t.finish().expect("ends")), vec![PTY]);
    // -I alone: three pipes; every stream to a file: nothing to attach to.
    let mut t = Terminal::open(1).expect("pipes");
    assert!((0..3).all(|i| t.take(i).is_some()));
    assert_eq!(
        bits(&t.finish().expect("ends")),
        vec![STDIN, STDOUT, STDERR]
    );
    let t = Terminal::open(1).expect("pipes");
    assert!(t.finish().is_none());
}

/// `echkpnt.<method>` / `erestart.<method>`: in LSB_ECHKPNT_METHOD_DIR when set, else in
/// LSF_SERVERDIR; `default` is built in when no program has its name; executables only.
#[test]
fn checkpoint_methods_are_found_in_the_method_dir_else_the_server_dir() {
    use super::method::{Method, find};
    use crate::state::Launch;
    use std::os::unix::fs::PermissionsExt;
    let methods = tempfile::tempdir().expect("tempdir");
    let server = tempfile::tempdir().expect("tempdir");
    let put = |dir: &std::path::Path, name: &str, mode: u32| {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
        p
    };
    let in_server = put(server.path(), "echkpnt.blcr", 0o755);
    put(server.path(), "echkpnt.plain", 0o644);
    let mut launch = Launch {
        serverdir: Some(server.path().to_string_lossy().into_owned()),
        ..Default::default()
    };
    assert_eq!(find("echkpnt", "blcr", &launch), Method::Program(in_server));
    assert_eq!(find("echkpnt", "default", &launch), Method::Builtin);
    assert_eq!(find("erestart", "default", &launch), Method::Builtin);
    assert_eq!(
        find("echkpnt", "plain", &launch),
        Method::Missing(format!(
            "echkpnt.plain: not found in {}",
            server.path().display()
        ))
    );
    assert!(matches!(
        find("echkpnt", "../x", &launch),
        Method::Missing(m) if m.contains("not a method name")
    ));
    // LSB_ECHKPNT_METHOD_DIR replaces LSF_SERVERDIR; a `default` program there is used.
    launch.echkpnt_method_dir = Some(methods.path().to_string_lossy().into_owned());
    let own_default = put(methods.path(), "echkpnt.default", 0o755);
    assert_eq!(
        find("echkpnt", "default", &launch),
        Method::Program(own_default)
    );
    assert!(matches!(
        find("echkpnt", "blcr", &launch),
        Method::Missing(m) if m.ends_with(&format!("not found in {}", methods.path().display()))
    ));
    let none = Launch::default();
    assert!(matches!(
        find("erestart", "blcr", &none),
        Method::Missing(m) if m.contains("neither LSB_ECHKPNT_METHOD_DIR nor LSF_SERVERDIR")
    ));
}

#[test]
fn echkpnt_and_erestart_take_lsf_arguments() {
    use super::method::{echkpnt_argv, erestart_argv};
    let p = std::path::Path::new("/srv/echkpnt.x");
    assert_eq!(
        echkpnt_argv(p, false, false, "/ck/5", 4242),
        ["/srv/echkpnt.x", "-d", "/ck/5", "4242"]
    );
    assert_eq!(
        echkpnt_argv(p, true, true, "/ck/5", 4242),
        ["/srv/echkpnt.x", "-f", "-k", "-d", "/ck/5", "4242"]
    );
    let r = std::path::Path::new("/srv/erestart.x");
    assert_eq!(
        erestart_argv(r, false, "/ck/5"),
        ["/srv/erestart.x", "/ck/5"]
    );
    assert_eq!(
        erestart_argv(r, true, "/ck/5"),
        ["/srv/erestart.x", "-f", "/ck/5"]
    );
}

#[test]
fn method_programs_get_the_lsf_environment() {
    use super::launch::Identity;
    use super::method::method_env;
    use nix::unistd::{Gid, Uid};
    let spec = JobSpec {
        job_id: 5,
        idx: 2,
        chkpnt_dir: "/ck/5".into(),
        job_file_name: "100.5".into(),
        chkpnt_method: "blcr".into(),
        ..Default::default()
    };
    let launch = crate::state::Launch {
        serverdir: Some("/srv".into()),
        ..Default::default()
    };
    let ident = Identity {
        switch: false,
        uid: Uid::from_raw(1000),
        gid: Gid::from_raw(1000),
        groups: Vec::new(),
        name: "alice".into(),
        home: "/home/alice".into(),
        shell: "/bin/sh".into(),
        group_name: None,
    };
    let env = method_env(&spec, &launch, &ident, true);
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("LSB_JOBID"), Some("5"));
    assert_eq!(get("LSB_JOBINDEX"), Some("2"));
    assert_eq!(get("LSB_CHKPNT_DIR"), Some("/ck/5"));
    assert_eq!(get("LSB_CHKFILENAME"), Some("/ck/5/100.5"));
    assert_eq!(get("LSB_ECHKPNT_METHOD"), Some("blcr"));
    assert_eq!(get("LSB_ECHKPNT_METHOD_DIR"), None);
    assert_eq!(get("LSF_SERVERDIR"), Some("/srv"));
    assert_eq!(get("LSB_CHKPNT_MIG"), Some("Y"));
    assert_eq!(get("LSB_RESTART"), None);
    assert_eq!(
        (get("HOME"), get("USER"), get("LOGNAME")),
        (Some("/home/alice"), Some("alice"), Some("alice"))
    );
    assert!(get("PATH").is_some());
    let plain = method_env(&spec, &launch, &ident, false);
    assert!(!plain.iter().any(|(k, _)| k == "LSB_CHKPNT_MIG"));
}

#[test]
fn restart_commands_come_from_their_line_of_restart_cmd() {
    use super::restart::restart_cmd;
    assert_eq!(
        restart_cmd("# written by erestart\nLSB_RESTART_CMD=./a.out -resume state\n"),
        Some("./a.out -resume state".into())
    );
    assert_eq!(
        restart_cmd("LSB_RESTART_CMD=\"prog 'quoted arg'\"\r\nLSB_RESTART_CMD=second\n"),
        Some("prog 'quoted arg'".into())
    );
    assert_eq!(
        restart_cmd("LSB_RESTART_CMD='a' b 'c'"),
        Some("'a' b 'c'".into())
    );
    assert_eq!(restart_cmd("LSB_RESTART_CMD=   \n"), None);
    assert_eq!(restart_cmd("OTHER=1\n"), None);
    assert_eq!(restart_cmd(""), None);
}

#[test]
fn the_built_in_method_signal_is_a_name_or_a_number() {
    use super::chkpnt::parse_signal;
    assert_eq!(parse_signal(None), Ok(Signal::SIGWINCH));
    assert_eq!(parse_signal(Some(" ")), Ok(Signal::SIGWINCH));
    assert_eq!(parse_signal(Some("SIGUSR1")), Ok(Signal::SIGUSR1));
    assert_eq!(parse_signal(Some("usr2")), Ok(Signal::SIGUSR2));
    assert_eq!(parse_signal(Some("28")), Ok(Signal::SIGWINCH));
    assert!(parse_signal(Some("NOSUCH")).is_err());
    assert!(parse_signal(Some("KILL")).is_err());
    assert!(parse_signal(Some("0")).is_err());
}

#[test]
fn checkpoint_requests_and_failure_lines() {
    use super::chkpnt::Request;
    use super::method::last_line;
    use std::io::Write;
    assert_eq!(
        Request::parse("1 0 1".split_whitespace()),
        Request {
            kill: true,
            force: false,
            migrate: true
        }
    );
    assert_eq!(Request::parse("".split_whitespace()), Request::default());
    let mut f = tempfile::tempfile().expect("tempfile");
    assert_eq!(last_line(&f), None);
    f.write_all(b"one\n  two  \n\n \n").expect("write");
    assert_eq!(last_line(&f).as_deref(), Some("two"));
    // Only the end of a long output is read.
    f.write_all(&vec![b'x'; 10_000]).expect("write");
    f.write_all(b"\nlast words\n").expect("write");
    assert_eq!(last_line(&f).as_deref(), Some("last words"));
}
