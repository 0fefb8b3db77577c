//! The `res` binary: `-C` checks the configuration and the cluster key; started for a
//! host, it runs a task for the user whose credential comes with the request and
//! answers with its output and wait status.

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use basalt_proto::res::{TaskInput, TaskStart, task_input, task_output};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn write_config(top: &Path) -> PathBuf {
    // An address of its own: other tests' daemons use other 127.x addresses.
    let addr = IpAddr::V4(Ipv4Addr::new(127, 78, (std::process::id() % 250) as u8, 1));
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map_or_else(|| "root".to_owned(), |u| u.name);
    let mut spec = DefaultCluster::new(
        "basalt",
        &user,
        vec![DefaultHost {
            name: "hostA".into(),
            address: Some(addr),
            server: true,
        }],
    );
    spec.root_rex = nix::unistd::geteuid().is_root();
    spec.write(top).expect("write the configuration")
}

#[test]
fn check_accepts_the_embedded_default() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_config(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_res"))
        .arg("-C")
        .env("LSF_ENVDIR", &envdir)
        .output()
        .expect("run res");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "res -C failed: {stderr}");
    assert!(stderr.contains("No errors found"), "{stderr}");
}

/// Kills the daemon when the test ends, however it ends.
struct Daemon(std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_daemon_runs_a_task_and_returns_its_output_and_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_config(dir.path());
    let _res = Daemon(
        Command::new(env!("CARGO_BIN_EXE_res"))
            .args(["-H", "hostA"])
            .env("LSF_ENVDIR", &envdir)
            .spawn()
            .expect("start res"),
    );
    let config = basalt_config::load_lim(&envdir).expect("config").config;
    let addr = basalt_runtime::res_addr(&config, "hostA").expect("address");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "res never listened on {addr}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (stdout, status) = rt.block_on(async {
        let auth = basalt_runtime::user_auth(&config);
        let mut client =
            basalt_runtime::res_channel(&config, "hostA", Duration::from_secs(10), &auth)
                .expect("client");
        let start = TaskInput {
            what: Some(task_input::What::Start(TaskStart {
                argv: vec![
                    "sh".into(),
                    "-c".into(),
                    "read x; echo got $x; exit 4".into(),
                ],
                env: vec!["PATH=/usr/bin:/bin".into()],
                cwd: "/".into(),
                umask: 0o022,
                ..Default::default()
            })),
        };
        let input = TaskInput {
            what: Some(task_input::What::Stdin(b"line\n".to_vec())),
        };
        let end = TaskInput {
            what: Some(task_input::What::StdinEof(true)),
        };
        let mut out = client
            .run(tokio_stream::iter(vec![start, input, end]))
            .await
            .expect("run")
            .into_inner();
        let (mut stdout, mut status) = (Vec::new(), None);
        while let Some(m) = out.message().await.expect("message") {
            match m.what {
                Some(task_output::What::Stdout(b)) => stdout.extend(b),
                Some(task_output::What::Exited(raw)) => status = Some(raw),
                _ => {}
            }
        }
        (stdout, status)
    });
    assert_eq!(String::from_utf8_lossy(&stdout), "got line\n");
    assert_eq!(status, Some(4 << 8));
}
