//! The last configuration mbatchd accepted, kept beside the event log so that a broken
//! file on disk cannot stop the batch service at the next restart or failover.
//!
//! A snapshot holds the text of every configuration file one successful [`crate::load`]
//! read, under the path it was read from. mbatchd writes it (atomically, fsynced) in the
//! log directory each time it starts on a configuration that loads without errors; the
//! master candidates share that directory. When the files on disk do not load, mbatchd
//! starts on [`load_snapshot`] instead, and says loudly which file and line block the new
//! configuration.
//!
//! The format is text: a header line `basalt-config-snapshot 1 <unix time>`, then for each
//! file a line `<byte length> <path>` followed by exactly that many bytes and a newline.

use crate::{ConfigErrors, Loaded};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The snapshot's file name in the log directory.
pub const FILE: &str = "basalt.config.snapshot";

const MAGIC: &str = "basalt-config-snapshot 1";

/// Configuration files by the path they were read from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    pub files: BTreeMap<PathBuf, String>,
    /// When it was taken (seconds since the epoch).
    pub taken: i64,
}

impl Snapshot {
    /// The files a successful load read.
    pub fn of(loaded: &Loaded, taken: i64) -> Snapshot {
        Snapshot {
            files: loaded.sources.iter().cloned().collect(),
            taken,
        }
    }

    /// The snapshot as bytes (see the module documentation).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = format!("{MAGIC} {}\n", self.taken).into_bytes();
        for (path, text) in &self.files {
            out.extend_from_slice(format!("{} {}\n", text.len(), path.display()).as_bytes());
            out.extend_from_slice(text.as_bytes());
            out.push(b'\n');
        }
        out
    }

    /// Read a snapshot back; an error says what is wrong with it.
    pub fn decode(bytes: &[u8]) -> Result<Snapshot, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "not text".to_owned())?;
        let (header, mut rest) = text
            .split_once('\n')
            .ok_or_else(|| "no header line".to_owned())?;
        let taken = header
            .strip_prefix(MAGIC)
            .map(str::trim)
            .and_then(|t| t.parse::<i64>().ok())
            .ok_or_else(|| format!("bad header `{header}`"))?;
        let mut files = BTreeMap::new();
        while !rest.is_empty() {
            let (line, after) = rest
                .split_once('\n')
                .ok_or_else(|| "a file entry without its line end".to_owned())?;
            let (len, path) = line
                .split_once(' ')
                .ok_or_else(|| format!("bad file entry `{line}`"))?;
            let len: usize = len.parse().map_err(|_| format!("bad length in `{line}`"))?;
            if after.len() < len + 1
                || !after.is_char_boundary(len)
                || after.as_bytes()[len] != b'\n'
            {
                return Err(format!("{path}: truncated"));
            }
            files.insert(PathBuf::from(path), after[..len].to_owned());
            rest = &after[len + 1..];
        }
        if files.is_empty() {
            return Err("no files".to_owned());
        }
        Ok(Snapshot { files, taken })
    }

    /// Write it to `path` atomically (a temporary file, fsynced, renamed into place).
    pub fn write_atomic(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
        let result = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&self.encode())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
            if let Some(dir) = path.parent()
                && let Ok(d) = std::fs::File::open(dir)
            {
                let _ = d.sync_all();
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// Read the snapshot at `path`.
    pub fn read(path: &Path) -> Result<Snapshot, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Snapshot::decode(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Load the configuration from a snapshot (as [`crate::load`] would have from the files
/// it holds). `envdir` is where lsf.conf was.
pub fn load_snapshot(envdir: &Path, snap: Snapshot) -> Result<Loaded, ConfigErrors> {
    crate::load_impl(envdir, true, Some(std::sync::Arc::new(snap)), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::{DefaultCluster, DefaultHost};

    fn cluster(top: &Path) -> PathBuf {
        let hosts = vec![DefaultHost {
            name: "hostA".into(),
            address: Some(std::net::IpAddr::from([127, 0, 0, 1])),
            server: true,
        }];
        DefaultCluster::new("basalt", "me", hosts)
            .write(top)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Issue 30 item 2: the last accepted configuration is kept and loads again, whatever
    /// the files on disk have become since.
    #[test]
    fn a_snapshot_loads_the_configuration_it_was_taken_of() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let envdir = cluster(dir.path());
        let good = crate::load(&envdir).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            good.sources.iter().any(|(p, _)| p.ends_with("lsb.queues")),
            "{:?}",
            good.sources.iter().map(|(p, _)| p).collect::<Vec<_>>()
        );
        let snap = Snapshot::of(&good, 1_800_000_000);
        let path = dir.path().join(FILE);
        snap.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
        let back = Snapshot::read(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, snap);

        // Break lsb.queues on disk: the disk no longer loads, the snapshot still does.
        let queues = good
            .sources
            .iter()
            .find(|(p, _)| p.ends_with("lsb.queues"))
            .map(|(p, _)| p.clone())
            .unwrap_or_else(|| panic!("no lsb.queues"));
        let text = std::fs::read_to_string(&queues).unwrap_or_default();
        std::fs::write(
            &queues,
            text.replacen("PRIORITY     = 30", "PRIORITY = high43", 1),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let errors = crate::load(&envdir).expect_err("a broken lsb.queues");
        assert!(errors.to_string().contains("high43"), "{errors}");
        let from_snap = load_snapshot(&envdir, back).unwrap_or_else(|e| panic!("{e}"));
        let normal = from_snap
            .config
            .batch
            .queues
            .iter()
            .find(|q| q.name == "normal")
            .map(|q| q.priority);
        assert_eq!(normal, Some(30));
    }

    #[test]
    fn damaged_snapshots_are_refused() {
        let mut files = BTreeMap::new();
        files.insert(
            PathBuf::from("/etc/lsf/lsf.conf"),
            "A=b\nline two\n".to_owned(),
        );
        let s = Snapshot { files, taken: 5 };
        let bytes = s.encode();
        assert_eq!(Snapshot::decode(&bytes), Ok(s));
        for cut in [0, 10, bytes.len() - 3] {
            assert!(Snapshot::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Snapshot::decode(b"something else 1\n").is_err());
    }
}
