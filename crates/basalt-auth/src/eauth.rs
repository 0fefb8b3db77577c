//! LSF's external authentication (`LSF_AUTH=eauth`), as the LSF administrator's guide
//! describes it: the client runs `eauth -c <host>` and sends what it prints; the daemon
//! keeps one `eauth -s` running (as the primary LSF administrator when it is root) and
//! writes `uid gid username client_addr client_port data_len data` to it for each
//! request, reading `1` (accept) or `0` (refuse). A dead `eauth -s` is started again on
//! the next request.

use crate::AuthError;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The most data `eauth -c` may print.
pub const MAX_DATA: usize = 16 * 1024;
/// How long `eauth` may take to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Run `program -c host` and return its standard output.
pub fn client_data(program: &Path, host: &str) -> Result<Vec<u8>, AuthError> {
    let out = std::process::Command::new(program)
        .arg("-c")
        .arg(host)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| AuthError::Eauth(format!("{}: {e}", program.display())))?;
    if !out.status.success() {
        return Err(AuthError::Eauth(format!(
            "{} -c {host} failed ({})",
            program.display(),
            out.status
        )));
    }
    if out.stdout.len() > MAX_DATA {
        return Err(AuthError::Eauth(format!(
            "{} -c printed more than {MAX_DATA} bytes",
            program.display()
        )));
    }
    Ok(out.stdout)
}

/// The line written to `eauth -s` for one request.
pub fn server_line(uid: u32, gid: u32, user: &str, addr: &str, port: u16, data: &[u8]) -> Vec<u8> {
    let mut v = format!("{uid} {gid} {user} {addr} {port} {} ", data.len()).into_bytes();
    v.extend_from_slice(data);
    v.push(b'\n');
    v
}

/// One long-lived `eauth -s`.
#[derive(Debug)]
pub struct EauthServer {
    program: PathBuf,
    /// Run it as this uid/gid (the primary LSF administrator) when the daemon is root.
    run_as: Option<(u32, u32)>,
    child: tokio::sync::Mutex<Option<Running>>,
}

#[derive(Debug)]
struct Running {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl EauthServer {
    pub fn new(program: PathBuf, run_as: Option<(u32, u32)>) -> EauthServer {
        EauthServer {
            program,
            run_as,
            child: tokio::sync::Mutex::new(None),
        }
    }

    fn start(&self) -> Result<Running, AuthError> {
        let mut c = Command::new(&self.program);
        c.arg("-s")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        if let Some((uid, gid)) = self.run_as {
            c.uid(uid).gid(gid);
        }
        let mut child = c
            .spawn()
            .map_err(|e| AuthError::Eauth(format!("{} -s: {e}", self.program.display())))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(AuthError::Eauth("eauth -s without pipes".into()));
        };
        Ok(Running {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    /// Ask `eauth -s` about one request: Ok(true) accepted, Ok(false) refused.
    pub async fn check(
        &self,
        uid: u32,
        gid: u32,
        user: &str,
        addr: &str,
        port: u16,
        data: &[u8],
    ) -> Result<bool, AuthError> {
        if user.is_empty() || user.contains(char::is_whitespace) {
            return Ok(false);
        }
        let mut slot = self.child.lock().await;
        if slot.is_none() {
            *slot = Some(self.start()?);
        }
        let line = server_line(uid, gid, user, addr, port, data);
        let r = match slot.as_mut() {
            Some(run) => {
                tokio::time::timeout(TIMEOUT, async {
                    run.stdin.write_all(&line).await?;
                    run.stdin.flush().await?;
                    let mut answer = String::new();
                    let n = run.stdout.read_line(&mut answer).await?;
                    Ok::<_, std::io::Error>((n, answer))
                })
                .await
            }
            None => return Err(AuthError::Eauth("eauth -s not running".into())),
        };
        let failed = |why: String, slot: &mut Option<Running>| {
            if let Some(mut run) = slot.take() {
                let _ = run.child.start_kill();
            }
            AuthError::Eauth(why)
        };
        match r {
            Ok(Ok((0, _))) => Err(failed("eauth -s exited".into(), &mut slot)),
            Ok(Ok((_, a))) => match a.trim() {
                "1" => Ok(true),
                "0" => Ok(false),
                other => Err(failed(
                    format!("eauth -s answered {other:?}, not 1 or 0"),
                    &mut slot,
                )),
            },
            Ok(Err(e)) => Err(failed(format!("eauth -s: {e}"), &mut slot)),
            Err(_) => Err(failed("eauth -s did not answer".into(), &mut slot)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, text: &str) -> PathBuf {
        let p = dir.join("eauth");
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    const EAUTH: &str = r#"#!/bin/sh
# -c host: print a token; -s: accept lines whose data is "tok-<uid>".
if [ "$1" = "-c" ]; then printf 'tok-%s' "$(id -u)"; exit 0; fi
while read uid gid user addr port len data; do
  if [ "$data" = "tok-$uid" ]; then echo 1; else echo 0; fi
done
"#;

    #[test]
    fn server_line_is_lsfs_format() {
        assert_eq!(
            server_line(5, 6, "bob", "10.0.0.1", 4000, b"xyz"),
            b"5 6 bob 10.0.0.1 4000 3 xyz\n".to_vec()
        );
    }

    #[tokio::test]
    async fn client_and_server_agree_and_a_dead_server_restarts() {
        let d = tempfile::tempdir().unwrap();
        let p = script(d.path(), EAUTH);
        let me = nix::unistd::getuid().as_raw();
        let data = client_data(&p, "hostA").unwrap();
        assert_eq!(data, format!("tok-{me}").into_bytes());
        let s = EauthServer::new(p.clone(), None);
        assert!(s.check(me, 0, "u", "127.0.0.1", 1, &data).await.unwrap());
        assert!(
            !s.check(me + 1, 0, "u", "127.0.0.1", 1, &data)
                .await
                .unwrap()
        );
        assert!(!s.check(me, 0, "a b", "127.0.0.1", 1, &data).await.unwrap());
        // Kill it: the next request starts a new one.
        if let Some(run) = s.child.lock().await.as_mut() {
            run.child.start_kill().unwrap();
            let _ = run.child.wait().await;
        }
        let first = s.check(me, 0, "u", "127.0.0.1", 1, &data).await;
        let ok = match first {
            Ok(v) => v,
            Err(_) => s.check(me, 0, "u", "127.0.0.1", 1, &data).await.unwrap(),
        };
        assert!(ok);
        // A broken eauth: errors, never an acceptance.
        let bad = script(d.path(), "#!/bin/sh\nexit 3\n");
        assert!(client_data(&bad, "h").is_err());
        let s = EauthServer::new(bad, None);
        assert!(s.check(me, 0, "u", "127.0.0.1", 1, b"x").await.is_err());
    }
}
