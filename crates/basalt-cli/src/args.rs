//! LSF-style argument handling on top of clap.
//!
//! LSF commands take multi-letter options with a single dash (`-json`,
//! `-noheader`, `-env`), which clap would read as bundles of short flags. Before
//! clap sees argv, [`rewrite`] turns each listed single-dash long option into its
//! `--` form; everything else (bundles like `-lw`, values) is left alone.

use std::ffi::OsString;

/// Rewrite `-name` into `--name` for each `name` in `long_opts` (exact matches only).
pub fn rewrite(args: impl IntoIterator<Item = OsString>, long_opts: &[&str]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut after_dashdash = false;
    for (i, a) in args.into_iter().enumerate() {
        if i > 0 && !after_dashdash {
            if a == "--" {
                after_dashdash = true;
            } else if let Some(s) = a.to_str()
                && let Some(name) = s.strip_prefix('-')
                && !name.starts_with('-')
                && long_opts.contains(&name)
            {
                out.push(OsString::from(format!("--{name}")));
                continue;
            }
        }
        out.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn rewrites_only_listed_options() {
        let got = rewrite(
            os(&["lsload", "-json", "-lw", "-j", "--", "-json"]),
            &["json"],
        );
        assert_eq!(got, os(&["lsload", "--json", "-lw", "-j", "--", "-json"]));
    }
}
