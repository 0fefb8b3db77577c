//! Number and column formatting shared by the commands (cli-output.md §1).

/// Right-align `s` in `width` columns.
pub fn right(s: &str, width: usize) -> String {
    format!("{s:>width$}")
}

/// `%-W.Ws`: left-align and cut to `width`.
pub fn left_cut(s: &str, width: usize) -> String {
    let cut: String = s.chars().take(width).collect();
    format!("{cut:<width$}")
}

/// `%W.Ws`: right-align and cut to `width`.
pub fn right_cut(s: &str, width: usize) -> String {
    let cut: String = s.chars().take(width).collect();
    format!("{cut:>width$}")
}

/// C's `%.0e` without the decimal point: `2e+08`.
pub fn short_exp(v: f64) -> String {
    let s = format!("{v:.0e}"); // Rust gives "2e8"
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// Fit a formatted value into a field of `width` (which includes the blank that
/// separates it from the previous column): LSF falls back to `%g`-style
/// exponent notation when the value is too long.
pub fn fit(formatted: String, value: f64, width: usize) -> String {
    if formatted.len() < width {
        formatted
    } else {
        short_exp(value)
    }
}

/// A memory-like value in MB as lsload shows it: `812M`, switching to `G` above 1024 MB.
pub fn mem_mb(mb: f64) -> String {
    if mb > 1024.0 {
        let g = mb / 1024.0;
        if g < 10.0 {
            format!("{g:.1}G")
        } else {
            format!("{g:.0}G")
        }
    } else {
        format!("{mb:.0}M")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_like_c() {
        assert_eq!(short_exp(2.0e8), "2e+08");
        assert_eq!(short_exp(123456789.0), "1e+08");
        assert_eq!(fit("200000000".into(), 2.0e8, 6), "2e+08");
        assert_eq!(fit("12".into(), 12.0, 6), "12");
    }

    #[test]
    fn memory_units() {
        assert_eq!(mem_mb(0.0), "0M");
        assert_eq!(mem_mb(812.4), "812M");
        assert_eq!(mem_mb(23.0 * 1024.0 + 100.0), "23G");
        assert_eq!(mem_mb(2.5 * 1024.0), "2.5G");
    }

    #[test]
    fn columns() {
        assert_eq!(left_cut("averyveryverylongname", 5), "avery");
        assert_eq!(right_cut("ab", 4), "  ab");
        assert_eq!(right("x", 3), "  x");
    }
}
