//! Text helpers of the batch commands (cli-output.md §1): `*` truncation,
//! the 79-column wrapping of the long formats, short host lists.

/// A value longer than `width` becomes `*` followed by its last `width - 1` characters
/// (`long_name_for_test` in 10 columns is `*_for_test`).
pub fn star_cut(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width || width == 0 {
        return s.to_owned();
    }
    let tail: String = s.chars().skip(n - (width - 1)).collect();
    format!("*{tail}")
}

/// `%-W.Ws` with LSF's `*` truncation.
pub fn col(s: &str, width: usize) -> String {
    format!("{:<width$}", star_cut(s, width))
}

/// `%W.Ws` (right-aligned) with LSF's `*` truncation.
pub fn rcol(s: &str, width: usize) -> String {
    format!("{:>width$}", star_cut(s, width))
}

/// Width of the first line of a long-format paragraph.
pub const WRAP_FIRST: usize = 79;
/// Characters on each continuation line after its indentation.
pub const WRAP_NEXT: usize = 58;
/// Indentation of continuation lines.
pub const WRAP_INDENT: usize = 21;

/// Wrap one logical line of a long format: 79 characters, then continuation lines of
/// 21 spaces and up to 58 characters; a space that would begin a continuation line is
/// dropped. The result has no trailing newline.
pub fn wrap(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len() + 32);
    let first = chars.len().min(WRAP_FIRST);
    out.extend(&chars[..first]);
    let mut pos = first;
    while pos < chars.len() {
        if chars[pos] == ' ' {
            pos += 1;
            if pos >= chars.len() {
                break;
            }
        }
        let end = (pos + WRAP_NEXT).min(chars.len());
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', WRAP_INDENT));
        out.extend(&chars[pos..end]);
        pos = end;
    }
    out
}

/// Group runs of the same host: `[a, a, b]` -> `[(a, 2), (b, 1)]`.
pub fn group_hosts(hosts: &[String]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for h in hosts {
        match out.last_mut() {
            Some((last, n)) if last == h => *n += 1,
            _ => out.push((h.clone(), 1)),
        }
    }
    out
}

/// The host words a command shows: with short host lists `4*hostA`, else one word per slot.
pub fn host_words(hosts: &[String], short: bool) -> Vec<String> {
    if !short {
        return hosts.to_vec();
    }
    group_hosts(hosts)
        .into_iter()
        .map(|(h, n)| if n > 1 { format!("{n}*{h}") } else { h })
        .collect()
}

/// Does `name` match a `-J` pattern with `*` wildcards (whole-string match)?
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len() && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_the_tail() {
        assert_eq!(star_cut("long_name_for_test", 10), "*_for_test");
        assert_eq!(star_cut("sleep 30", 10), "sleep 30");
        assert_eq!(star_cut("exactly_10", 10), "exactly_10");
        assert_eq!(col("vm", 11), "vm         ");
        assert_eq!(rcol("-", 5), "    -");
    }

    #[test]
    fn wrapping_matches_the_reference() {
        let line = "Job <101>, User <root>, Project <default>, Status <RUN>, Queue <normal>, Command <sleep 30>";
        assert_eq!(
            wrap(line),
            "Job <101>, User <root>, Project <default>, Status <RUN>, Queue <normal>, Comman\n                     d <sleep 30>"
        );
        let started = "Sun Nov 22 09:25:40: Started 1 Task(s) on Host(s) <vm>, Allocated 1 Slot(s) on Host(s) <vm>, Execution Home </root>, Execution CWD </home/alice/run>;";
        assert_eq!(
            wrap(started),
            "Sun Nov 22 09:25:40: Started 1 Task(s) on Host(s) <vm>, Allocated 1 Slot(s) on \n                     Host(s) <vm>, Execution Home </root>, Execution CWD </home\n                     /alice/run>;"
        );
        assert_eq!(wrap("short"), "short");
        // A space at the wrap point is dropped from the continuation.
        let s = format!("{} tail", "x".repeat(79));
        assert_eq!(
            wrap(&s),
            format!("{}\n                     tail", "x".repeat(79))
        );
    }

    #[test]
    fn host_lists() {
        let hosts: Vec<String> = ["a", "a", "a", "a", "b"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(host_words(&hosts, true), vec!["4*a", "b"]);
        assert_eq!(host_words(&hosts, false).len(), 5);
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*abc*", "xxabcyy"));
        assert!(wildcard_match("job*", "job1"));
        assert!(!wildcard_match("job*", "xjob1"));
        assert!(wildcard_match("a*b*c", "axxbyyc"));
        assert!(wildcard_match("exact", "exact"));
        assert!(!wildcard_match("exact", "exactly"));
    }
}
