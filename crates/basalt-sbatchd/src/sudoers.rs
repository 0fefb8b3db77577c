//! `/etc/lsf.sudoers`: settings only root may make, such as `LSF_EEXEC_USER` (the user
//! eexec runs as). LSF reads the file only when root owns it and nobody else may write it;
//! so does Basalt.

use std::path::Path;

/// Where lsf.sudoers is.
pub const PATH: &str = "/etc/lsf.sudoers";

/// The value of `key` in lsf.sudoers, if the file is trustworthy and sets it.
pub fn setting(key: &str) -> Option<String> {
    setting_in(Path::new(PATH), key)
}

/// [`setting`] of the file at `path`.
pub fn setting_in(path: &Path, key: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    if meta.uid() != 0 || meta.mode() & 0o022 != 0 {
        tracing::warn!(
            "{}: not owned by root or writable by others; ignored",
            path.display()
        );
        return None;
    }
    parse(&std::fs::read_to_string(path).ok()?, key)
}

/// `KEY=value` lines (`#` comments, optional quotes); the last one for `key` wins.
pub fn parse(text: &str, key: &str) -> Option<String> {
    let mut found = None;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if k.trim() == key {
            let v = v.trim().trim_matches('"').trim_matches('\'').trim();
            found = (!v.is_empty()).then(|| v.to_owned());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsf_eexec_user_is_read_from_key_value_lines() {
        let text = "# who runs eexec\nLSF_STARTUP_USERS=\"lsfadmin\"\nLSF_EEXEC_USER=root\n";
        assert_eq!(parse(text, "LSF_EEXEC_USER").as_deref(), Some("root"));
        assert_eq!(
            parse(text, "LSF_STARTUP_USERS").as_deref(),
            Some("lsfadmin")
        );
        assert_eq!(parse(text, "NOPE"), None);
        assert_eq!(parse("LSF_EEXEC_USER=\n", "LSF_EEXEC_USER"), None);
    }

    #[test]
    fn a_file_others_may_write_is_not_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("lsf.sudoers");
        std::fs::write(&p, "LSF_EEXEC_USER=root\n").expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        assert_eq!(setting_in(&p, "LSF_EEXEC_USER"), None);
        if nix::unistd::geteuid().is_root() {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
            assert_eq!(setting_in(&p, "LSF_EEXEC_USER").as_deref(), Some("root"));
        }
    }
}
