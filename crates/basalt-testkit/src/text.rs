//! Reading what commands and daemons wrote: a command's output for failure messages,
//! event-log lines split the way an outside reader would.

use std::process::Output;

/// A command's exit status, stdout and stderr, for failure messages.
pub fn output_text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}stderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Fields of one event-log line, read the way an awk script or LSF's own reader does:
/// quoted strings (with `""` for a quote) and bare words, separated by spaces. Written
/// here, independently of basalt-eventlog, so that tests check the log against an
/// outside reading of it.
pub fn event_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if b[i] == ' ' {
            i += 1;
            continue;
        }
        if b[i] == '"' {
            let mut s = String::new();
            i += 1;
            while i < b.len() {
                if b[i] == '"' {
                    if i + 1 < b.len() && b[i + 1] == '"' {
                        s.push('"');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                s.push(b[i]);
                i += 1;
            }
            out.push(s);
        } else {
            let start = i;
            while i < b.len() && b[i] != ' ' {
                i += 1;
            }
            out.push(b[start..i].iter().collect());
        }
    }
    out
}
