//! The sequential job-file spool `logdir/spool/<n>.seg`: the job files of many
//! submissions appended to one file and made durable with one `fdatasync`, instead of
//! one file, two `fsync`s and one inode per job in `info/`.
//!
//! mbatchd appends each submission's rendered job file ([`JobSpool::append`]) while it
//! handles the submission, and [`JobSpool::sync`] writes what the loop iteration
//! appended in one write and one `fdatasync` before the iteration's `JOB_NEW` records
//! go to `lsb.events`: a logged job always has its job file, and an acknowledged one
//! has it durably. [`JobSpool::read`] finds a job file for its dispatch,
//! [`JobSpool::remove`] forgets it after `JOB_CLEAN`; a segment none of whose job files
//! is wanted any more is deleted.
//!
//! A segment is a sequence of records, each
//! `"BJF1" | body length (u32 LE) | CRC-32 of name and body (u32 LE) | name length (u16
//! LE) | name | body`, the name being the job file's (`<submitTime>.<jobId>`). A later
//! record of the same job id replaces an earlier one (`bmod` of the command). A new
//! segment is started when the current one passes [`SEGMENT_MAX`] bytes.
//!
//! [`JobSpool::open`] reads the segments' records back (each one's CRC checked), so the
//! spool's index (job id → segment, offset, length: 16 bytes per job file) is
//! rebuilt at start and after a takeover; a record cut short by a crash at the end of
//! the newest segment is cut off (its `JOB_NEW` was never logged: the sync comes first).
//! [`JobSpool::retain`] then forgets the job files of jobs mbatchd no longer has. A
//! spool appends to segments it created itself (never to one it found), so that an
//! mbatchd that lost the lock and has not noticed yet, still appending to its own
//! segment, cannot shift the offsets of the one that took over.
//!
//! A segment is extended [`PREALLOC`] bytes of zeros at a time (written and synced with
//! the records that needed the room), and records are written over those zeros: the
//! `fdatasync` of an ordinary commit then flushes data only, with no change to the
//! file's size or blocks for the file system's journal to commit (about 0.1 – 0.6 ms
//! less per commit on the build machine). Zeros after the last record are the
//! segment's unused room, not damage; a segment that is no longer appended to is cut
//! to its records.

use std::collections::BTreeMap;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Seek};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::EventLogError;

/// The spool's directory under the log directory.
pub const SPOOL_DIR: &str = "spool";

/// A segment grows to about this size before the next one is started.
pub const SEGMENT_MAX: u64 = 16 << 20;

/// A segment's room is extended by this many bytes of zeros at a time.
pub const PREALLOC: u64 = 1 << 20;

const MAGIC: &[u8; 4] = b"BJF1";
/// magic, body length, CRC, name length.
const HEADER: usize = 4 + 4 + 4 + 2;
/// A record's body is at most this long (a job file; LSF's command limit is far less).
pub const BODY_MAX: usize = 64 << 20;

/// Where a job file's record is (16 bytes: a pending job's memory counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// Job ids stay below `MAX_JOBID`, a `u32`; a job file of a larger id is refused
    /// ([`JobSpool::append`]) and goes to `info/`.
    job_id: u32,
    seg: u32,
    /// Offset of the record in its segment (segments stay far below 4 GiB).
    off: u32,
    /// The whole record's length; 0: removed (a tombstone, dropped at the next compaction).
    len: u32,
}

/// The job id a job file's name ends with (`<submitTime>.<jobId>`).
fn job_id_of(name: &str) -> Option<u32> {
    name.rsplit_once('.').and_then(|(_, id)| id.parse().ok())
}

fn segment_name(seg: u32) -> String {
    format!("{seg:010}.seg")
}

fn segment_number(name: &str) -> Option<u32> {
    name.strip_suffix(".seg").and_then(|n| n.parse().ok())
}

fn encode(name: &str, body: &[u8], out: &mut Vec<u8>) {
    let mut crc = crc32fast::Hasher::new();
    crc.update(name.as_bytes());
    crc.update(body);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(body);
}

/// A record's header: (body length, CRC, name length); None when it is not one.
fn header(b: &[u8]) -> Option<(usize, u32, usize)> {
    if b.len() < HEADER || &b[..4] != MAGIC {
        return None;
    }
    let body = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    let crc = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    let name = u16::from_le_bytes([b[12], b[13]]) as usize;
    (body <= BODY_MAX && name > 0).then_some((body, crc, name))
}

/// Decode a whole record: (name, body) when it is intact.
fn decode(rec: &[u8]) -> Option<(&str, &[u8])> {
    let (body_len, crc, name_len) = header(rec)?;
    if rec.len() != HEADER + name_len + body_len {
        return None;
    }
    let name = &rec[HEADER..HEADER + name_len];
    let body = &rec[HEADER + name_len..];
    let mut h = crc32fast::Hasher::new();
    h.update(name);
    h.update(body);
    if h.finalize() != crc {
        return None;
    }
    Some((std::str::from_utf8(name).ok()?, body))
}

/// The segment being appended to.
#[derive(Debug)]
struct Current {
    seg: u32,
    file: File,
    /// Bytes of records on disk (written, maybe not synced yet).
    len: u64,
    /// The file's length: records, then zeros (room written ahead, see the module's
    /// documentation).
    room: u64,
}

/// The spool (see the module's documentation). One owner: mbatchd's state-owning thread.
#[derive(Debug)]
pub struct JobSpool {
    dir: PathBuf,
    current: Option<Current>,
    /// Records appended since the last [`JobSpool::sync`] (they go at `current.len`).
    pending: Vec<u8>,
    /// The records of the last write, kept for reads (a job is usually dispatched by
    /// the iteration that spooled it): they start at `flushed_at` in the current segment.
    flushed: Vec<u8>,
    flushed_at: u64,
    /// The spool directory gained a segment since the last sync (its entry must be made
    /// durable too).
    dir_dirty: bool,
    /// Sorted by job id (ids only grow, except when `MAX_JOBID` wraps).
    index: Vec<Entry>,
    /// Tombstones in `index`.
    removed: usize,
    /// Wanted records per segment.
    live: BTreeMap<u32, usize>,
    /// The segment the next new one follows.
    last_seg: u32,
    /// Problems worked around (a torn tail cut off, a segment that could not be
    /// removed), for the caller's log ([`JobSpool::take_notes`]).
    notes: Vec<String>,
}

impl JobSpool {
    /// Open the spool of `logdir` (the directory is created when it is first written):
    /// read every segment's record headers, cut a torn record off the end of the newest
    /// one, and build the index. Returns the spool and the names of the job files it
    /// holds.
    pub fn open(logdir: &Path) -> Result<(JobSpool, Vec<String>), EventLogError> {
        let dir = logdir.join(SPOOL_DIR);
        let mut spool = JobSpool {
            dir: dir.clone(),
            current: None,
            pending: Vec::new(),
            flushed: Vec::new(),
            flushed_at: 0,
            dir_dirty: false,
            index: Vec::new(),
            removed: 0,
            live: BTreeMap::new(),
            last_seg: 0,
            notes: Vec::new(),
        };
        let segs = segment_numbers(&dir)?;
        let mut names: BTreeMap<u32, String> = BTreeMap::new();
        let newest = segs.last().copied();
        for &seg in &segs {
            let path = dir.join(segment_name(seg));
            let (found, good_len, file_len) = scan_segment(&path)?;
            if good_len < file_len {
                spool.notes.push(format!(
                    "{}: {} byte(s) after offset {good_len} are not an intact job-file record{}",
                    path.display(),
                    file_len - good_len,
                    if Some(seg) == newest {
                        " (a write cut short by a crash); cut off"
                    } else {
                        "; the job files after it are lost"
                    }
                ));
                if Some(seg) == newest {
                    OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .and_then(|f| {
                            f.set_len(good_len)?;
                            f.sync_all()
                        })
                        .map_err(|e| EventLogError::io(&path, "cut the spool's torn tail", e))?;
                }
                // A damaged record inside an older segment: the disk lost data the spool
                // had synced. The job files after it are missing; their jobs fail at
                // dispatch with a message naming the file.
            }
            for (off, len, name) in found {
                let Some(job_id) = job_id_of(&name) else {
                    continue;
                };
                spool.put(Entry {
                    job_id,
                    seg,
                    off,
                    len,
                });
                names.insert(job_id, name);
            }
            spool.last_seg = seg;
        }
        // Segments no record is wanted from (all replaced or emptied) go at once. The
        // newest one is not appended to again: this spool's first job file starts a
        // segment of its own (see [`JobSpool::append`]).
        let empty: Vec<u32> = segs
            .iter()
            .copied()
            .filter(|s| spool.live.get(s).copied().unwrap_or(0) == 0)
            .collect();
        for s in empty {
            spool.delete_segment(s);
        }
        Ok((spool, names.into_values().collect()))
    }

    /// The names of the job files in the spool of `logdir`, read without changing
    /// anything (for tools and tests; mbatchd opens it with [`JobSpool::open`]).
    pub fn list(logdir: &Path) -> Result<Vec<String>, EventLogError> {
        let dir = logdir.join(SPOOL_DIR);
        let mut names: BTreeMap<u32, String> = BTreeMap::new();
        for seg in segment_numbers(&dir)? {
            let (found, _, _) = scan_segment(&dir.join(segment_name(seg)))?;
            for (_, _, name) in found {
                if let Some(id) = job_id_of(&name) {
                    names.insert(id, name);
                }
            }
        }
        Ok(names.into_values().collect())
    }

    /// Append a job file (durable once [`JobSpool::sync`] returns). Its name must end with
    /// the job id (`<submitTime>.<jobId>`); a job file of the same job id appended before
    /// is replaced (then it returns true).
    pub fn append(&mut self, name: &str, body: &[u8]) -> Result<bool, EventLogError> {
        let invalid = || EventLogError::InvalidJobFileName {
            name: name.to_owned(),
        };
        let job_id = job_id_of(name).ok_or_else(invalid)?;
        if name.len() > usize::from(u16::MAX) || body.len() > BODY_MAX {
            return Err(invalid());
        }
        let full = self
            .current
            .as_ref()
            .is_none_or(|c| c.len + self.pending.len() as u64 >= SEGMENT_MAX);
        if full {
            self.start_segment()?;
        }
        let Some(cur) = self.current.as_ref() else {
            return Err(EventLogError::io(
                &self.dir,
                "append to the spool",
                io::Error::other("no segment"),
            ));
        };
        let off = cur.len + self.pending.len() as u64;
        let seg = cur.seg;
        let before = self.pending.len();
        encode(name, body, &mut self.pending);
        let len = (self.pending.len() - before) as u32;
        Ok(self.put(Entry {
            job_id,
            seg,
            off: u32::try_from(off).unwrap_or(u32::MAX),
            len,
        }))
    }

    /// Write the job files appended since the last sync in one write, then one
    /// `fdatasync` (and one `fsync` of the directory when a segment was started).
    /// On failure the spool must be opened again ([`JobSpool::open`]): what reached the
    /// disk is then the truth; [`JobSpool::unwritten`] gives the job files that were to
    /// be written, so that the caller can put them elsewhere.
    pub fn sync(&mut self) -> Result<(), EventLogError> {
        self.flush(true)
    }

    /// [`JobSpool::sync`], or with `durable` false, the write without any sync (for a
    /// log directory configured not to sync).
    pub fn flush(&mut self, durable: bool) -> Result<(), EventLogError> {
        if self.pending.is_empty() && !self.dir_dirty {
            return Ok(());
        }
        if let Some(cur) = self.current.as_mut() {
            let path = self.dir.join(segment_name(cur.seg));
            if !self.pending.is_empty() {
                let end = cur.len + self.pending.len() as u64;
                if end > cur.room {
                    // More room: zeros up to the next multiple of PREALLOC, synced with
                    // the records below (this commit's sync also commits the new size).
                    let room = end.div_ceil(PREALLOC) * PREALLOC;
                    write_zeros(&cur.file, cur.room, room)
                        .map_err(|e| EventLogError::io(&path, "extend spool segment", e))?;
                    cur.room = room;
                }
                cur.file
                    .write_all_at(&self.pending, cur.len)
                    .map_err(|e| EventLogError::io(&path, "write spool segment", e))?;
                self.flushed_at = cur.len;
                cur.len = end;
                std::mem::swap(&mut self.flushed, &mut self.pending);
                self.pending.clear();
            }
            if durable {
                cur.file
                    .sync_data()
                    .map_err(|e| EventLogError::io(&path, "fdatasync spool segment", e))?;
            }
        }
        if self.dir_dirty && durable {
            File::open(&self.dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| EventLogError::io(&self.dir, "fsync directory", e))?;
            self.dir_dirty = false;
        }
        Ok(())
    }

    /// The job files appended since the last successful sync, as (name, body): after a
    /// failed [`JobSpool::sync`], what may not be on disk.
    pub fn unwritten(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut rest = self.pending.as_slice();
        while let Some((body, _, name)) = header(rest) {
            let len = HEADER + name + body;
            let Some((n, b)) = rest.get(..len).and_then(decode) else {
                break;
            };
            out.push((n.to_owned(), b.to_vec()));
            rest = &rest[len..];
        }
        out
    }

    /// The job ids whose job files the spool holds, in order.
    pub fn job_ids(&self) -> Vec<u64> {
        self.index
            .iter()
            .filter(|e| e.len != 0)
            .map(|e| u64::from(e.job_id))
            .collect()
    }

    /// Does the spool hold this job file?
    pub fn contains(&self, name: &str) -> bool {
        job_id_of(name).is_some_and(|id| self.find(id).is_some())
    }

    /// The job file named `name`; None when the spool does not hold it (or holds one of
    /// that job id under another name).
    pub fn read(&self, name: &str) -> Result<Option<Vec<u8>>, EventLogError> {
        let Some(e) = job_id_of(name).and_then(|id| self.find(id)) else {
            return Ok(None);
        };
        let mut rec = vec![0u8; e.len as usize];
        let path = self.dir.join(segment_name(e.seg));
        let off = u64::from(e.off);
        let read = match self.current.as_ref().filter(|c| c.seg == e.seg) {
            Some(c) if off >= c.len => {
                // Appended in this iteration, not written yet.
                let start = (off - c.len) as usize;
                match self.pending.get(start..start + rec.len()) {
                    Some(b) => {
                        rec.copy_from_slice(b);
                        Ok(())
                    }
                    None => return Ok(None),
                }
            }
            Some(c) => match off
                .checked_sub(self.flushed_at)
                .and_then(|start| usize::try_from(start).ok())
                .and_then(|start| self.flushed.get(start..start + rec.len()))
            {
                // Written by the last sync: still in memory.
                Some(b) => {
                    rec.copy_from_slice(b);
                    Ok(())
                }
                None => c.file.read_exact_at(&mut rec, off),
            },
            None => File::open(&path).and_then(|f| f.read_exact_at(&mut rec, off)),
        };
        read.map_err(|err| EventLogError::io(&path, "read spool segment", err))?;
        match decode(&rec) {
            Some((n, body)) if n == name => Ok(Some(body.to_vec())),
            Some(_) => Ok(None),
            None => Err(EventLogError::io(
                &path,
                "read spool segment",
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("the record of {name} at offset {} is damaged", e.off),
                ),
            )),
        }
    }

    /// Forget the job file named `name` (after its job's `JOB_CLEAN`); false when the
    /// spool did not hold it. A segment left with no wanted record is deleted (unless it
    /// is the one being appended to). Nothing is synced: a record that comes back after a
    /// crash is forgotten again by [`JobSpool::retain`].
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(id) = job_id_of(name) else {
            return false;
        };
        let forgotten = self.forget(id);
        if forgotten {
            self.compact(64);
        }
        forgotten
    }

    /// Keep only the job files whose job id `wanted` says yes to (after a replay: those
    /// of jobs mbatchd still has); the others are forgotten.
    pub fn retain(&mut self, wanted: impl Fn(u64) -> bool) {
        let gone: Vec<u32> = self
            .index
            .iter()
            .filter(|e| e.len != 0 && !wanted(u64::from(e.job_id)))
            .map(|e| e.job_id)
            .collect();
        for id in gone {
            self.forget(id);
        }
        self.compact(0);
    }

    /// Leave a tombstone for the job file of `id` and release its segment; false when
    /// the spool did not hold it.
    fn forget(&mut self, id: u32) -> bool {
        let Ok(i) = self.index.binary_search_by_key(&id, |e| e.job_id) else {
            return false;
        };
        if self.index[i].len == 0 {
            return false;
        }
        let seg = self.index[i].seg;
        self.index[i].len = 0;
        self.removed += 1;
        self.release(seg);
        true
    }

    /// Drop the tombstones once there are more than `min` of them and they are more than
    /// half of the index.
    fn compact(&mut self, min: usize) {
        if self.removed > min && self.removed * 2 > self.index.len() {
            self.index.retain(|e| e.len != 0);
            self.index.shrink_to_fit();
            self.removed = 0;
        }
    }

    /// Problems worked around since the last call, for the caller's log.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// How many job files the spool holds.
    pub fn len(&self) -> usize {
        self.index.len() - self.removed
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The segments on disk (for tests and tools).
    pub fn segments(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.live.keys().copied().collect();
        if let Some(c) = &self.current
            && !v.contains(&c.seg)
        {
            v.push(c.seg);
        }
        v.sort_unstable();
        v
    }

    fn find(&self, id: u32) -> Option<Entry> {
        self.index
            .binary_search_by_key(&id, |e| e.job_id)
            .ok()
            .map(|i| self.index[i])
            .filter(|e| e.len != 0)
    }

    /// Record where a job file is, replacing an earlier record of its job id (then it
    /// returns true).
    fn put(&mut self, e: Entry) -> bool {
        *self.live.entry(e.seg).or_insert(0) += 1;
        let at = match self.index.last() {
            Some(last) if last.job_id < e.job_id => Err(self.index.len()),
            None => Err(0),
            _ => self.index.binary_search_by_key(&e.job_id, |x| x.job_id),
        };
        match at {
            Ok(i) => {
                let old = self.index[i];
                self.index[i] = e;
                if old.len == 0 {
                    self.removed -= 1;
                    return false;
                }
                if old.seg != e.seg {
                    self.release(old.seg);
                } else if let Some(n) = self.live.get_mut(&old.seg) {
                    *n -= 1;
                }
                true
            }
            Err(i) => {
                self.index.insert(i, e);
                false
            }
        }
    }

    /// One record fewer is wanted from `seg`; delete it when none is (and it is not
    /// the current one).
    fn release(&mut self, seg: u32) {
        let left = match self.live.get_mut(&seg) {
            Some(n) => {
                *n = n.saturating_sub(1);
                *n
            }
            None => 0,
        };
        if left == 0 && self.current.as_ref().is_none_or(|c| c.seg != seg) {
            self.delete_segment(seg);
        }
    }

    fn delete_segment(&mut self, seg: u32) {
        self.live.remove(&seg);
        let path = self.dir.join(segment_name(seg));
        if let Err(e) = fs::remove_file(&path)
            && e.kind() != io::ErrorKind::NotFound
        {
            self.notes
                .push(format!("cannot remove {}: {e}", path.display()));
        }
    }

    /// Start a new segment (the previous one's pending records are written and synced
    /// first: only the current segment is synced by [`JobSpool::sync`]).
    fn start_segment(&mut self) -> Result<(), EventLogError> {
        if self.current.is_some() && !self.pending.is_empty() {
            self.sync()?;
        }
        if !self.dir.is_dir() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.dir)
                .map_err(|e| EventLogError::io(&self.dir, "create directory", e))?;
            if let Some(parent) = self.dir.parent() {
                File::open(parent)
                    .and_then(|d| d.sync_all())
                    .map_err(|e| EventLogError::io(parent, "fsync directory", e))?;
            }
        }
        // A new file, never one that exists: an mbatchd that lost the lock without
        // knowing it yet may still append to its own segments, and the offsets in this
        // spool's index must stay its own.
        let (seg, file) = loop {
            let seg = self.last_seg + 1;
            let path = self.dir.join(segment_name(seg));
            match OpenOptions::new()
                .write(true)
                .read(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(f) => break (seg, f),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.last_seg = seg,
                Err(e) => return Err(EventLogError::io(&path, "create spool segment", e)),
            }
        };
        let old = self.current.replace(Current {
            seg,
            file,
            len: 0,
            room: 0,
        });
        self.flushed.clear();
        self.flushed_at = 0;
        self.last_seg = seg;
        self.dir_dirty = true;
        if let Some(old) = old {
            if self.live.get(&old.seg).copied().unwrap_or(0) == 0 {
                self.delete_segment(old.seg);
            } else if old.room > old.len {
                // Its unused room goes (not synced: zeros left by a crash are room too).
                if let Err(e) = old.file.set_len(old.len) {
                    self.notes.push(format!(
                        "cannot cut {} to its records: {e}",
                        self.dir.join(segment_name(old.seg)).display()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The numbers of the segments in the spool directory `dir`, in order (none when it does
/// not exist yet).
fn segment_numbers(dir: &Path) -> Result<Vec<u32>, EventLogError> {
    let mut segs: Vec<u32> = match fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|e| segment_number(&e.file_name().to_string_lossy()))
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(EventLogError::io(dir, "read spool directory", e)),
    };
    segs.sort_unstable();
    Ok(segs)
}

/// Write zeros over `[from, to)` of `file`.
fn write_zeros(file: &File, from: u64, to: u64) -> io::Result<()> {
    let zeros = vec![0u8; (to - from).min(PREALLOC) as usize];
    let mut at = from;
    while at < to {
        let n = (to - at).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

/// Read a segment's records: (offset, length, name) of each intact record, the length
/// of its intact prefix and the file's length (the intact prefix's when only zeros
/// follow it: unused room, see the module's documentation).
type Scanned = (Vec<(u32, u32, String)>, u64, u64);

fn scan_segment(path: &Path) -> Result<Scanned, EventLogError> {
    let io_err = |e| EventLogError::io(path, "read spool segment", e);
    let mut f = io::BufReader::new(File::open(path).map_err(io_err)?);
    let file_len = f.get_ref().metadata().map_err(io_err)?.len();
    let mut out = Vec::new();
    let mut off = 0u64;
    let mut buf = vec![0u8; HEADER];
    while off + HEADER as u64 <= file_len {
        buf.truncate(HEADER);
        if f.read_exact(&mut buf).is_err() {
            break;
        }
        let Some((body, _, name_len)) = header(&buf) else {
            break;
        };
        let len = (HEADER + name_len + body) as u64;
        if off + len > file_len {
            break;
        }
        // The whole record is read to check its CRC: a record whose header made it to
        // the disk but not all of its body is a torn one.
        buf.resize(len as usize, 0);
        f.read_exact(&mut buf[HEADER..]).map_err(io_err)?;
        let Some((name, _)) = decode(&buf) else {
            break;
        };
        let (Ok(o), Ok(l)) = (u32::try_from(off), u32::try_from(len)) else {
            break;
        };
        out.push((o, l, name.to_owned()));
        off += len;
    }
    // Only zeros after the records: room written ahead, not a torn record.
    if off < file_len {
        f.seek(io::SeekFrom::Start(off)).map_err(io_err)?;
        let mut rest = Vec::new();
        f.read_to_end(&mut rest).map_err(io_err)?;
        if rest.iter().all(|&b| b == 0) {
            return Ok((out, off, off));
        }
    }
    Ok((out, off, file_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| (*s).to_owned()).collect()
    }

    /// A spool with `records` written and synced in one segment (closed again), and
    /// that segment's path.
    fn written(records: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = JobSpool::open(dir.path()).unwrap();
        for (name, body) in records {
            s.append(name, body).unwrap();
        }
        s.sync().unwrap();
        let seg = dir.path().join(SPOOL_DIR).join(segment_name(1));
        (dir, seg)
    }

    /// Where the records of a segment end (zeros of its room follow).
    fn records_end(seg: &Path) -> u64 {
        scan_segment(seg).unwrap().1
    }

    #[test]
    fn a_segment_has_room_written_ahead_and_its_zeros_are_no_damage() {
        let (dir, seg) = written(&[("100.1", b"one"), ("100.2", b"two")]);
        let end = records_end(&seg);
        assert_eq!(fs::metadata(&seg).unwrap().len(), PREALLOC);
        let (mut s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1", "100.2"]));
        assert!(
            s.take_notes().is_empty(),
            "zeros after the records are room"
        );
        assert_eq!(fs::metadata(&seg).unwrap().len(), PREALLOC, "left as it is");
        // Records written over the room, more room when they pass it.
        let big = vec![b'y'; PREALLOC as usize];
        s.append("100.3", &big).unwrap();
        s.append("100.4", b"four").unwrap();
        s.sync().unwrap();
        let seg2 = dir.path().join(SPOOL_DIR).join(segment_name(2));
        assert_eq!(fs::metadata(&seg2).unwrap().len(), 2 * PREALLOC);
        assert_eq!(s.read("100.4").unwrap().unwrap(), b"four");
        assert_eq!(s.read("100.3").unwrap().unwrap(), big);
        assert_eq!(s.read("100.1").unwrap().unwrap(), b"one");
        drop(s);
        let (s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1", "100.2", "100.3", "100.4"]));
        assert_eq!(s.read("100.4").unwrap().unwrap(), b"four");
        assert!(end < PREALLOC);
    }

    #[test]
    fn a_record_torn_inside_the_room_is_cut_off() {
        let (dir, seg) = written(&[("100.1", b"kept"), ("100.2", b"torn by the crash")]);
        // The crash left the record's end unwritten: zeros of the room in its place.
        let end = records_end(&seg);
        let f = OpenOptions::new().write(true).open(&seg).unwrap();
        f.write_all_at(&[0, 0, 0], end - 3).unwrap();
        drop(f);
        let (mut s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1"]));
        assert_eq!(s.take_notes().len(), 1, "{:?}", s.take_notes());
        assert_eq!(s.read("100.2").unwrap(), None);
    }

    #[test]
    fn a_segment_no_longer_appended_to_is_cut_to_its_records() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = JobSpool::open(dir.path()).unwrap();
        let big = vec![b'x'; (SEGMENT_MAX - 10) as usize];
        s.append("100.1", &big).unwrap();
        s.sync().unwrap();
        s.append("100.2", b"next segment").unwrap();
        s.sync().unwrap();
        assert_eq!(s.segments(), vec![1, 2]);
        let seg1 = dir.path().join(SPOOL_DIR).join(segment_name(1));
        assert_eq!(fs::metadata(&seg1).unwrap().len(), records_end(&seg1));
        assert_eq!(s.read("100.1").unwrap().unwrap(), big);
    }

    #[test]
    fn job_files_appended_read_before_and_after_sync_and_after_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, found) = JobSpool::open(dir.path()).unwrap();
        assert!(found.is_empty());
        s.append("100.1", b"#! /bin/sh\necho one\n").unwrap();
        s.append("100.2", b"#! /bin/sh\necho two\n").unwrap();
        // Readable before it is written out (a dispatch in the same iteration).
        assert_eq!(s.read("100.1").unwrap().unwrap(), b"#! /bin/sh\necho one\n");
        s.sync().unwrap();
        assert_eq!(s.read("100.2").unwrap().unwrap(), b"#! /bin/sh\necho two\n");
        assert_eq!(s.read("100.3").unwrap(), None);
        // Same job id, another submission time: not this job file.
        assert_eq!(s.read("999.1").unwrap(), None);
        drop(s);
        assert_eq!(
            JobSpool::list(dir.path()).unwrap(),
            names(&["100.1", "100.2"])
        );
        let (s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1", "100.2"]));
        assert_eq!(s.read("100.1").unwrap().unwrap(), b"#! /bin/sh\necho one\n");
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn a_later_record_of_the_same_job_replaces_the_earlier_one() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = JobSpool::open(dir.path()).unwrap();
        s.append("100.7", b"v1").unwrap();
        s.sync().unwrap();
        s.append("100.7", b"v2").unwrap();
        s.sync().unwrap();
        assert_eq!(s.read("100.7").unwrap().unwrap(), b"v2");
        assert_eq!(s.len(), 1);
        drop(s);
        let (s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.7"]));
        assert_eq!(s.read("100.7").unwrap().unwrap(), b"v2");
    }

    #[test]
    fn a_torn_record_at_the_end_is_cut_off_and_appending_goes_on_after_the_cut() {
        let (dir, seg) = written(&[("100.1", b"kept"), ("100.2", b"torn by the crash")]);
        let len = records_end(&seg);
        let f = OpenOptions::new().write(true).open(&seg).unwrap();
        f.set_len(len - 3).unwrap();
        drop(f);
        let (mut s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1"]));
        assert_eq!(s.read("100.2").unwrap(), None);
        s.append("100.3", b"after").unwrap();
        s.sync().unwrap();
        drop(s);
        let (s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1", "100.3"]));
        assert_eq!(s.read("100.3").unwrap().unwrap(), b"after");
    }

    #[test]
    fn a_flipped_byte_in_a_body_is_found_by_its_checksum() {
        let (dir, seg) = written(&[("100.1", b"intact"), ("100.2", b"damaged")]);
        let mut bytes = fs::read(&seg).unwrap();
        let last = records_end(&seg) as usize - 1;
        bytes[last] ^= 0x20;
        fs::write(&seg, &bytes).unwrap();
        let (s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1"]));
        assert_eq!(s.read("100.1").unwrap().unwrap(), b"intact");
    }

    #[test]
    fn segments_roll_over_and_one_with_no_wanted_job_file_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = JobSpool::open(dir.path()).unwrap();
        let big = vec![b'x'; (SEGMENT_MAX / 2) as usize];
        s.append("100.1", &big).unwrap();
        s.append("100.2", &big).unwrap();
        s.append("100.3", b"third").unwrap();
        s.sync().unwrap();
        assert_eq!(s.segments(), vec![1, 2]);
        assert_eq!(s.read("100.1").unwrap().unwrap().len(), big.len());
        assert!(s.remove("100.1"));
        assert!(!s.remove("100.1"));
        assert_eq!(
            s.segments(),
            vec![1, 2],
            "100.2 is still wanted from segment 1"
        );
        assert!(s.remove("100.2"));
        assert_eq!(s.segments(), vec![2]);
        assert!(!dir.path().join(SPOOL_DIR).join(segment_name(1)).exists());
        assert_eq!(s.read("100.3").unwrap().unwrap(), b"third");
        drop(s);
        let (s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.3"]));
        assert_eq!(s.segments(), vec![2]);
    }

    #[test]
    fn retain_forgets_the_job_files_of_jobs_no_longer_known_and_their_segments() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = JobSpool::open(dir.path()).unwrap();
        let big = vec![b'y'; SEGMENT_MAX as usize];
        s.append("100.1", &big).unwrap();
        s.append("100.2", b"second").unwrap();
        s.sync().unwrap();
        drop(s);
        let (mut s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1", "100.2"]));
        s.retain(|id| id == 2);
        assert_eq!(s.read("100.1").unwrap(), None);
        assert_eq!(s.segments(), vec![2]);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn many_removals_compact_the_index_and_ids_out_of_order_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = JobSpool::open(dir.path()).unwrap();
        for id in (1..=300u64).rev().step_by(2).chain((1..=299).step_by(2)) {
            s.append(&format!("7.{id}"), id.to_string().as_bytes())
                .unwrap();
        }
        s.sync().unwrap();
        for id in 1..=250u64 {
            assert!(s.remove(&format!("7.{id}")));
        }
        assert_eq!(s.len(), 50);
        for id in 251..=300u64 {
            assert_eq!(
                s.read(&format!("7.{id}")).unwrap().unwrap(),
                id.to_string().as_bytes()
            );
        }
    }

    #[test]
    fn the_job_files_not_written_yet_can_be_taken_back() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = JobSpool::open(dir.path()).unwrap();
        s.append("100.1", b"written").unwrap();
        s.sync().unwrap();
        s.append("100.2", b"two").unwrap();
        s.append("100.3", b"three").unwrap();
        assert_eq!(
            s.unwritten(),
            vec![
                ("100.2".to_owned(), b"two".to_vec()),
                ("100.3".to_owned(), b"three".to_vec())
            ]
        );
        s.flush(false).unwrap();
        assert!(s.unwritten().is_empty());
        assert_eq!(JobSpool::list(dir.path()).unwrap().len(), 3);
    }

    #[test]
    fn an_mbatchd_that_took_over_never_appends_to_a_segment_of_the_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let (mut before, _) = JobSpool::open(dir.path()).unwrap();
        before.append("100.1", b"one").unwrap();
        before.sync().unwrap();
        // The next mbatchd opens the spool while the one before still runs.
        let (mut after, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1"]));
        after.append("100.2", b"two").unwrap();
        after.sync().unwrap();
        // The one before, not knowing yet, appends again (to its own segment).
        before.append("100.3", b"stray").unwrap();
        before.sync().unwrap();
        after.append("100.4", b"four").unwrap();
        after.sync().unwrap();
        assert_eq!(after.read("100.2").unwrap().unwrap(), b"two");
        assert_eq!(after.read("100.4").unwrap().unwrap(), b"four");
        assert_eq!(after.read("100.1").unwrap().unwrap(), b"one");
        assert_eq!(after.segments(), vec![1, 2]);
        // A later start sees all of them, each intact.
        let (s, found) = JobSpool::open(dir.path()).unwrap();
        assert_eq!(found, names(&["100.1", "100.2", "100.3", "100.4"]));
        assert_eq!(s.read("100.3").unwrap().unwrap(), b"stray");
    }

    #[test]
    fn a_name_without_a_job_id_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = JobSpool::open(dir.path()).unwrap();
        assert!(matches!(
            s.append("nojobid", b"x"),
            Err(EventLogError::InvalidJobFileName { .. })
        ));
        // Beyond any MAX_JOBID: refused (the caller writes it to info/).
        assert!(matches!(
            s.append("100.4294967296", b"x"),
            Err(EventLogError::InvalidJobFileName { .. })
        ));
        assert!(!s.contains("nojobid"));
    }
}
