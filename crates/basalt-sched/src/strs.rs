//! Strings the core keeps per job, made small: [`Str`], an immutable string whose clone
//! shares it and whose empty value allocates nothing, and [`Interner`], the pool through
//! which the jobs' often repeated strings (user, queue, host, cwd, project...) and limits
//! are kept once however many jobs name them.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// An immutable string: 16 bytes, a clone shares the text, "" allocates nothing.
/// It reads as a `&str` (`Deref`) and compares, orders and hashes as one.
#[derive(Clone, Default)]
pub struct Str(Option<Arc<str>>);

impl Str {
    /// The empty string.
    pub const EMPTY: Str = Str(None);

    pub fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }

    /// The same allocation as `other` (or both empty): equal without comparing text.
    fn ptr_eq(&self, other: &Str) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

impl std::ops::Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str((!s.is_empty()).then(|| Arc::from(s)))
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str::from(s.as_str())
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str((!s.is_empty()).then(|| Arc::from(s)))
    }
}

impl From<&Str> for String {
    fn from(s: &Str) -> String {
        s.as_str().to_owned()
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.as_str().to_owned()
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl PartialEq for Str {
    fn eq(&self, other: &Str) -> bool {
        self.ptr_eq(other) || self.as_str() == other.as_str()
    }
}

impl Eq for Str {}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        *self == other.as_str()
    }
}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str {
    fn cmp(&self, other: &Str) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for Str {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h);
    }
}

/// A pool of shared values: [`Interner::intern`] gives the pool's copy of a text (or
/// [`Interner::limits`] of a job's limits), so every job naming it shares one allocation.
/// Values no job holds any more are dropped once the pool has doubled since it was last
/// pruned.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    strs: Pool<str>,
    limits: Pool<[i64; 11]>,
}

#[derive(Debug)]
struct Pool<T: ?Sized> {
    pool: BTreeSet<Arc<T>>,
    /// The pool's size after the last pruning.
    kept: usize,
}

impl<T: ?Sized> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            pool: BTreeSet::new(),
            kept: 0,
        }
    }
}

impl<T: ?Sized + Ord> Pool<T> {
    fn shared(&mut self, v: &T, new: impl FnOnce() -> Arc<T>) -> Arc<T> {
        if let Some(shared) = self.pool.get(v) {
            return shared.clone();
        }
        if self.pool.len() >= 2 * self.kept + 64 {
            self.pool.retain(|a| Arc::strong_count(a) > 1);
            self.kept = self.pool.len();
        }
        let arc = new();
        self.pool.insert(arc.clone());
        arc
    }
}

impl Interner {
    /// The pool's copy of a job's limits.
    pub(crate) fn limits(&mut self, l: &Arc<[i64; 11]>) -> Arc<[i64; 11]> {
        self.limits.shared(l, || l.clone())
    }

    /// The pool's string equal to `s` (added when it has none).
    pub(crate) fn intern(&mut self, s: &Str) -> Str {
        match &s.0 {
            None => Str::EMPTY,
            Some(arc) => Str(Some(self.strs.shared(arc, || arc.clone()))),
        }
    }

    /// [`Interner::intern`] of a `&str` (allocated only when the pool has no copy).
    pub(crate) fn intern_text(&mut self, s: &str) -> Str {
        if s.is_empty() {
            return Str::EMPTY;
        }
        Str(Some(self.strs.shared(s, || Arc::from(s))))
    }

    /// [`Interner::intern`] of each of `fields` in place.
    pub(crate) fn intern_all<const N: usize>(&mut self, fields: [&mut Str; N]) {
        for f in fields {
            *f = self.intern(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_unallocated_and_equal_to_empty_text() {
        assert!(Str::from("").0.is_none());
        assert!(Str::from(String::new()).0.is_none());
        assert_eq!(Str::from(""), Str::default());
        assert_eq!(Str::default(), "");
        assert_eq!(std::mem::size_of::<Str>(), 16);
    }

    #[test]
    fn reads_compares_and_prints_as_its_text() {
        let s = Str::from("alice");
        assert_eq!(s, "alice");
        assert_eq!(s, String::from("alice"));
        assert_eq!(&*s, "alice");
        assert_eq!(format!("{s} {s:?}"), "alice \"alice\"");
        let (a, b) = (Str::from("a"), Str::from("b"));
        assert!(a < b && Str::default() < a);
        assert_eq!(String::from(&s), "alice");
    }

    #[test]
    fn interned_texts_share_one_allocation() {
        let mut pool = Interner::default();
        let a = pool.intern(&Str::from("/home/alice"));
        let b = pool.intern(&Str::from(String::from("/home/alice")));
        assert!(a.ptr_eq(&b));
        assert!(pool.intern(&Str::default()).0.is_none());
        let l = pool.limits(&Arc::new([-1; 11]));
        assert!(Arc::ptr_eq(&l, &pool.limits(&Arc::new([-1; 11]))));
    }

    #[test]
    fn texts_no_one_holds_are_pruned() {
        let mut pool = Interner::default();
        for i in 0..1000 {
            pool.intern(&Str::from(format!("/tmp/{i}")));
        }
        let kept = pool.intern(&Str::from("/kept"));
        for i in 1000..1100 {
            pool.intern(&Str::from(format!("/tmp/{i}")));
        }
        assert!(pool.strs.pool.len() < 300, "{}", pool.strs.pool.len());
        assert!(pool.intern(&Str::from("/kept")).ptr_eq(&kept));
    }
}
