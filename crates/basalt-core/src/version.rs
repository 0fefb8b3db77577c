//! Version strings printed by `lsid` and `-V`.
//!
//! Clients read the first dotted number of `lsid`'s first line as the LSF
//! version (dask-jobqueue compares it with "10"), so that number is the LSF
//! release whose behaviour Basalt implements; Basalt's own version follows.

/// The LSF release Basalt is compatible with.
pub const LSF_COMPAT_VERSION: &str = "10.1.0.13";

/// Basalt's own version (the workspace version).
pub const BASALT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The product line printed first by `lsid` and by `-V` on every command.
pub fn product_line() -> String {
    format!("Basalt {LSF_COMPAT_VERSION} (LSF-compatible), basalt {BASALT_VERSION}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn first_dotted_number_is_lsf_version() {
        let line = super::product_line();
        let first = line
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .find(|w| w.contains('.') && w.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_owned);
        assert_eq!(first.as_deref(), Some("10.1.0.13"));
    }
}
