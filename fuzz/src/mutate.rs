//! A tiny deterministic mutator for the stable fuzz tests (`crates/*/tests/*_fuzz.rs`,
//! which include this file with `#[path]`): xorshift64* from a fixed seed, byte flips,
//! insertions, deletions, truncations, duplications, dictionary words, splices between
//! inputs and line reordering. No dependency; the same seed always gives the same
//! inputs, so a failure reproduces by rerunning the test.
//!
//! **Inputs**: seed inputs, a dictionary of interesting words, a count and a seed.
//! **Outputs**: the mutated inputs, each with a description of how it was made.

/// xorshift64*: tiny, deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Bytes the mutator inserts: separators and characters the parsers give a meaning to.
const BYTES: &[u8] = b" \t\n\r\"'\\#=:;,.()[]{}<>!&|+-*/%~@$`0129eE\0\xff\xc3\x80";

/// Numbers at the edges of the usual integer and float types.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1",
    "255",
    "256",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "1e308",
    "1e309",
    "-1e309",
    "NaN",
    "inf",
    "0.0000001",
    "1.",
    ".5",
    "1.2.3",
    "0x10",
    "",
];

/// One random change to `b`; `dict` holds words to insert, `others` inputs to splice
/// from. Returns what it did.
pub fn mutate(rng: &mut Rng, b: &mut Vec<u8>, dict: &[&str], others: &[Vec<u8>]) -> &'static str {
    let pos = |rng: &mut Rng, b: &Vec<u8>| rng.below(b.len() + 1);
    match rng.below(13) {
        0 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
            "flip a bit"
        }
        1 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] = *rng.pick(BYTES);
            "set a byte"
        }
        2 => {
            let i = pos(rng, b);
            let c = *rng.pick(BYTES);
            b.insert(i, c);
            "insert a byte"
        }
        3 if !b.is_empty() => {
            let i = rng.below(b.len());
            let n = (1 + rng.below(16)).min(b.len() - i);
            b.drain(i..i + n);
            "delete bytes"
        }
        4 => {
            let i = pos(rng, b);
            b.truncate(i);
            "truncate"
        }
        5 if !b.is_empty() => {
            let i = rng.below(b.len());
            let n = (1 + rng.below(64)).min(b.len() - i);
            let part = b[i..i + n].to_vec();
            let at = pos(rng, b);
            b.splice(at..at, part);
            "duplicate a range"
        }
        6 | 7 if !dict.is_empty() => {
            let at = pos(rng, b);
            b.splice(at..at, rng.pick(dict).bytes());
            "insert a word"
        }
        8 => {
            // Replace a number (a run of digits) by an edge case.
            let starts: Vec<usize> = (0..b.len())
                .filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()))
                .collect();
            if starts.is_empty() {
                return "no number to change";
            }
            let s = *rng.pick(&starts);
            let e = (s..b.len())
                .find(|&i| !(b[i].is_ascii_digit() || b[i] == b'.'))
                .unwrap_or(b.len());
            b.splice(s..e, rng.pick(NUMBERS).bytes());
            "change a number"
        }
        9 if !b.is_empty() => {
            // Replace a word (a run of non-blanks) by a dictionary word.
            let i = rng.below(b.len());
            let s = (0..=i)
                .rev()
                .find(|&k| b[k].is_ascii_whitespace())
                .map_or(0, |k| k + 1);
            let e = (i..b.len())
                .find(|&k| b[k].is_ascii_whitespace())
                .unwrap_or(b.len());
            let w: &str = if dict.is_empty() {
                ""
            } else {
                rng.pick::<&str>(dict)
            };
            b.splice(s.min(e)..e, w.bytes());
            "replace a word"
        }
        10 if !others.is_empty() => {
            let o = rng.pick(others);
            let from = rng.below(o.len() + 1);
            let at = pos(rng, b);
            b.truncate(at);
            b.extend_from_slice(&o[from..]);
            "splice with another input"
        }
        11 => {
            let at = pos(rng, b);
            let n = 1 + rng.below(40);
            let c = *rng.pick(b"([!-\\\"'");
            b.splice(at..at, std::iter::repeat_n(c, n));
            "insert a run of one byte"
        }
        _ => {
            // Line-level: duplicate, drop or swap whole lines.
            let mut lines: Vec<Vec<u8>> = b
                .split_inclusive(|&c| c == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            if lines.len() < 2 {
                b.push(b'\n');
                return "add a newline";
            }
            let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
            match rng.below(3) {
                0 => lines.swap(i, j),
                1 => {
                    let l = lines[i].clone();
                    lines.insert(j, l);
                }
                _ => {
                    lines.remove(i);
                }
            }
            *b = lines.concat();
            "reorder lines"
        }
    }
}

/// `n` mutants of `seeds` (round robin), each made by 1 to 4 mutations, passed to
/// `each` with a description ("mutation 12 of seed 3 (flip a bit, truncate)").
pub fn mutants(
    seeds: &[Vec<u8>],
    dict: &[&str],
    n: usize,
    seed: u64,
    mut each: impl FnMut(&str, &[u8]),
) {
    if seeds.is_empty() {
        return;
    }
    let mut rng = Rng(seed);
    for i in 0..n {
        let base = i % seeds.len();
        let mut b = seeds[base].clone();
        let mut how = Vec::new();
        for _ in 0..1 + rng.below(4) {
            how.push(mutate(&mut rng, &mut b, dict, seeds));
        }
        each(
            &format!("mutation {i} of seed {base} ({})", how.join(", ")),
            &b,
        );
    }
}

/// The files of `dir`, sorted by path: (path, bytes). A missing directory is empty.
pub fn read_dir_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let data = std::fs::read(e.path()).ok()?;
            Some((e.path().display().to_string(), data))
        })
        .collect();
    out.sort();
    out
}

/// Run `check` on `data`; when it panics, panic again naming the input so that it can be
/// pasted into a regression file.
pub fn run_one(what: &str, data: &[u8], check: impl Fn(&[u8])) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(data)));
    if r.is_err() {
        panic!(
            "{what} panicked (message above); input ({} bytes), save it under fuzz/regressions/:\n{:?}",
            data.len(),
            String::from_utf8_lossy(data)
        );
    }
}
