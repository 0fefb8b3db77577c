//! Reading a log file line by line with byte offsets, and telling event, accounting and
//! other files apart.

use super::*;

/// One line of a log file.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// 1-based.
    pub number: usize,
    /// Byte offset of its first character.
    pub offset: u64,
    /// Without the newline.
    pub text: String,
    /// Ended by a newline (false only for a torn last line).
    pub complete: bool,
}

/// Call `f` on every line of `path`.
pub fn for_each_line(path: &Path, mut f: impl FnMut(Line) -> io::Result<()>) -> io::Result<()> {
    let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut buf = Vec::with_capacity(4096);
    let mut offset = 0u64;
    let mut number = 0usize;
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let complete = buf.last() == Some(&b'\n');
        let body = if complete { &buf[..n - 1] } else { &buf[..] };
        let text = String::from_utf8_lossy(body)
            .trim_end_matches('\r')
            .to_owned();
        f(Line {
            number,
            offset,
            text,
            complete,
        })?;
        offset += n as u64;
    }
}

/// At most 200 characters of a line, for messages.
pub(super) fn excerpt(s: &str) -> String {
    const MAX: usize = 200;
    if s.chars().count() <= MAX {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}... ({} bytes)", s.len())
    }
}

/// What kind of log file a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// The current `lsb.events` (header `#<offset>`).
    Current,
    /// `lsb.events.N` (header `#<time>`).
    Old,
    /// `lsb.acct*` or anything else (no header expected).
    Other,
}

/// The kind of `path` by its name.
pub fn kind_of(path: &Path) -> FileKind {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == basalt_eventlog::EVENTS_FILE {
        FileKind::Current
    } else if name
        .strip_prefix("lsb.events.")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    {
        FileKind::Old
    } else {
        FileKind::Other
    }
}
