//! The output of a job submitted without `-o`, as LSF delivers it: by mail to the
//! submitter (or to `bsub -u`, or to `LSB_MAILTO` with `!U` standing for the user), through
//! `LSB_MAILPROG` or a sendmail-compatible program found on the execution host
//! (`/usr/sbin/sendmail`, `/usr/lib/sendmail`), invoked as `<prog> -oi <recipient>` with
//! the message on its standard input.
//!
//! The message is the job report (the `Subject:` of the report is the mail's), then
//! `The output (if any) follows:` and the output. When there is no mail program, or it
//! fails, the output is not thrown away: it stays in the spool file next to the job file
//! (`~/.lsbatch/<submitTime>.<jobId>.out`, or `/tmp/.lsbatch.<uid>/...` when the home is
//! not usable) with the report appended.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Where sendmail-compatible programs usually are.
pub const SENDMAIL: &[&str] = &["/usr/sbin/sendmail", "/usr/lib/sendmail"];

/// How long the mail program may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The mail program: `LSB_MAILPROG` when set (even if it does not exist: the output is
/// then kept), else the first sendmail found.
pub fn program(configured: Option<&str>) -> Option<String> {
    match configured.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => Some(p.to_owned()),
        None => SENDMAIL
            .iter()
            .find(|p| Path::new(p).is_file())
            .map(|p| (*p).to_owned()),
    }
}

/// The recipient: `bsub -u`, else `LSB_MAILTO` (default `!U`) with `!U` replaced by the
/// job's user.
pub fn recipient(mail_user: &str, mail_to: Option<&str>, user: &str) -> String {
    if !mail_user.trim().is_empty() {
        return mail_user.trim().to_owned();
    }
    mail_to
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .unwrap_or("!U")
        .replace("!U", user)
}

/// The message's headers and text before the output.
pub fn head(to: &str, report: &str) -> String {
    let subject = report
        .lines()
        .find_map(|l| l.strip_prefix("Subject: "))
        .unwrap_or("LSF job report");
    let from = report
        .lines()
        .find_map(|l| l.strip_prefix("Sender: "))
        .unwrap_or("LSF System");
    let body = report
        .lines()
        .skip_while(|l| !l.starts_with("Subject: "))
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        "From: {from}\nTo: {to}\nSubject: {subject}\n\n{}\n\nThe output (if any) follows:\n\n",
        body.trim_start_matches('\n').trim_end()
    )
}

/// Send the report and the output in `spool` to `to` with `prog`; an error says why not.
pub fn send(prog: &str, to: &str, report: &str, spool: &Path) -> Result<(), String> {
    if to.starts_with('-') {
        return Err(format!("refusing the recipient `{to}`"));
    }
    let mut child = std::process::Command::new(prog)
        .arg("-oi")
        .arg(to)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {prog}: {e}"))?;
    let written = (|| -> std::io::Result<()> {
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("no stdin"))?;
        stdin.write_all(head(to, report).as_bytes())?;
        let mut f = std::fs::File::open(spool)?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            stdin.write_all(&buf[..n])?;
        }
        Ok(())
    })();
    let end = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{prog} did not finish within {} s",
                    TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("waiting for {prog}: {e}")),
        }
    };
    written.map_err(|e| format!("writing to {prog}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{prog} exited with {status}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recipient_is_bsub_u_else_lsb_mailto_else_the_user() {
        assert_eq!(recipient("", None, "alice"), "alice");
        assert_eq!(recipient("bob@x", Some("!U@site"), "alice"), "bob@x");
        assert_eq!(
            recipient("", Some("!U@site.org"), "alice"),
            "alice@site.org"
        );
        assert_eq!(recipient("", Some("ops"), "alice"), "ops");
    }

    #[test]
    fn the_message_carries_the_reports_subject_and_text() {
        let report = "\n------\nSender: LSF System <root@hostA>\nSubject: Job 5: <x> in cluster <c> Done\n\nJob <x> was submitted\nSuccessfully completed.\n";
        let h = head("alice", report);
        assert!(h.starts_with(
            "From: LSF System <root@hostA>\nTo: alice\nSubject: Job 5: <x> in cluster <c> Done\n\n"
        ));
        assert!(h.contains("Job <x> was submitted\nSuccessfully completed.\n"));
        assert!(h.ends_with("The output (if any) follows:\n\n"));
    }
}
