//! [`LineReader`]: reading the lines the index points at by byte offset.

use super::*;

/// Reads lines at given offsets of one file, mostly forwards.
pub struct LineReader {
    pub(super) path: PathBuf,
    pub(super) reader: BufReader<File>,
    pub(super) pos: u64,
}

impl LineReader {
    pub fn open(path: &Path) -> Result<LineReader, StoreError> {
        let f = File::open(path).map_err(|e| io_err(path, e))?;
        Ok(LineReader {
            path: path.to_owned(),
            reader: BufReader::with_capacity(1 << 16, f),
            pos: 0,
        })
    }

    pub(super) fn seek(&mut self, to: u64) -> Result<(), StoreError> {
        if to >= self.pos && to - self.pos < (1 << 16) {
            self.reader
                .seek_relative(i64::try_from(to - self.pos).unwrap_or(0))
                .map_err(|e| io_err(&self.path, e))?;
        } else {
            self.reader
                .seek(SeekFrom::Start(to))
                .map_err(|e| io_err(&self.path, e))?;
        }
        self.pos = to;
        Ok(())
    }

    /// The complete line that starts at `off` (with its newline). A line that does not
    /// start right after a newline, or that has none at its end, is a [`StoreError::Stale`].
    pub fn line_at(&mut self, off: u64, out: &mut Vec<u8>) -> Result<(), StoreError> {
        out.clear();
        if off > 0 {
            self.seek(off - 1)?;
            let n = self
                .reader
                .read_until(b'\n', out)
                .map_err(|e| io_err(&self.path, e))?;
            self.pos += n as u64;
            if n != 1 || out.first() != Some(&b'\n') {
                return Err(StoreError::Stale {
                    path: self.path.clone(),
                });
            }
            out.clear();
        } else {
            self.seek(0)?;
        }
        let n = self
            .reader
            .read_until(b'\n', out)
            .map_err(|e| io_err(&self.path, e))?;
        self.pos += n as u64;
        if out.last() != Some(&b'\n') {
            return Err(StoreError::Stale {
                path: self.path.clone(),
            });
        }
        Ok(())
    }
}
