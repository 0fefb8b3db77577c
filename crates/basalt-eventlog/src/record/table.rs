//! The field-table macros: from one list of `field: kind = "wireName"` per record type
//! they generate both the parser and the writer of those fields, so the two can never
//! disagree on order, format or presence.
//!
//! An entry is `field: kind = "name"`, optionally followed by `, if COND` (the field is
//! read and written only when `COND` holds) or `, write_if COND` (always read when
//! present, written only when `COND` holds). `COND` may use the record (`r` below) and its
//! [`Dialect`](super::Dialect) (`d`), both named by the table, and fields earlier in the
//! table are already set when it is evaluated during parsing. The kinds:
//!
//! | kind | read | written |
//! |---|---|---|
//! | `int` | integer | `%d` |
//! | `bits` | `int` bit set (may be negative) | C's `%d` of an `int` |
//! | `str` | quoted string | quoted string |
//! | `opt_str` | quoted string, `""` when the line ends | quoted string |
//! | `opt_bits` | bit set, `0` when the line ends | bit set |
//! | `f6_2`, `f3_1`, `f4_4` | number | `%6.2f`, `%3.1f`, `%4.4f` |
//! | `hosts("countName")` | count, then that many hosts (`"4*h"` expanded) | count, hosts |
//! | `names("countName")` | count, then that many strings | count, strings |
//! | `rlimits` | the [`rlimit::COUNT`](super::rlimit::COUNT) limits | the limits |
//! | `xf("countName")` | count, then `"subFn" "execFn" options` each | the same |
//! | `rusage` | the 19 [`Rusage`](super::Rusage) values | the 19 values |
//! | `opt_rusage("flagName")` | flag, the 19 values when it is not 0 | `0`, or `1` and values |
//!
//! Dialect-dependent tails that are read "while present" stay hand-written next to their
//! record type, and call these generated functions for the fixed parts.

/// Generates `fn $parse(r: &mut Self, d: Dialect, c: &mut Cursor) -> Result<(), ParseError>`
/// and `fn $write(r: &Self, d: Dialect, w: &mut LineWriter)` for the table's fields, in
/// table order. See the module docs for the entry syntax.
macro_rules! field_table {
    (
        $ty:ident :: { $parse:ident, $write:ident } |$r:ident, $d:ident| {
            $( $field:ident : $kind:ident $(($arg:literal))? = $wire:literal
               $(, if $both:expr)? $(, write_if $wonly:expr)? ; )*
        }
    ) => {
        impl $ty {
            #[allow(unused_variables)]
            fn $parse(
                $r: &mut $ty,
                $d: $crate::record::Dialect,
                c: &mut $crate::field::Cursor<'_>,
            ) -> Result<(), $crate::error::ParseError> {
                $( field_table!(@parse c, $r, $field, $kind $(($arg))?, $wire, [$($both)?]); )*
                Ok(())
            }

            #[allow(unused_variables)]
            fn $write(
                $r: &$ty,
                $d: $crate::record::Dialect,
                w: &mut $crate::field::LineWriter<'_>,
            ) {
                $( field_table!(@write w, $r, $field, $kind, [$($both)?], [$($wonly)?]); )*
            }
        }
    };

    // A record made of its table alone: `parse` and `write` too.
    (
        $ty:ident |$r:ident, $d:ident| { $($body:tt)* }
    ) => {
        field_table!($ty :: { parse_fields, write_fields } |$r, $d| { $($body)* });

        impl $ty {
            pub(super) fn parse(
                c: &mut $crate::field::Cursor<'_>,
                header: $crate::record::Header,
            ) -> Result<$ty, $crate::error::ParseError> {
                let d = header.dialect();
                let mut r = $ty { header, ..$ty::default() };
                $ty::parse_fields(&mut r, d, c)?;
                Ok(r)
            }

            pub(super) fn write(&self, kind: &str, out: &mut String) {
                let mut w = $crate::field::LineWriter::start(
                    out,
                    kind,
                    &self.header.version,
                    self.header.time,
                );
                $ty::write_fields(self, self.header.dialect(), &mut w);
            }
        }
    };

    (@parse $c:ident, $r:ident, $f:ident, $kind:ident $(($arg:literal))?, $w:literal, []) => {
        field_table!(@get $c, $r, $f, $kind $(($arg))?, $w);
    };
    (
        @parse $c:ident, $r:ident, $f:ident, $kind:ident $(($arg:literal))?, $w:literal,
        [$cond:expr]
    ) => {
        if $cond {
            field_table!(@get $c, $r, $f, $kind $(($arg))?, $w);
        }
    };

    (@write $w:ident, $r:ident, $f:ident, $kind:ident, [], []) => {
        field_table!(@put $w, $r, $f, $kind);
    };
    (@write $w:ident, $r:ident, $f:ident, $kind:ident, [$cond:expr], []) => {
        if $cond {
            field_table!(@put $w, $r, $f, $kind);
        }
    };
    (@write $w:ident, $r:ident, $f:ident, $kind:ident, [], [$cond:expr]) => {
        if $cond {
            field_table!(@put $w, $r, $f, $kind);
        }
    };

    // ---------------------------------------------------------------- reading, per kind
    (@get $c:ident, $r:ident, $f:ident, int, $w:literal) => {
        $r.$f = $c.int($w)?;
    };
    (@get $c:ident, $r:ident, $f:ident, bits, $w:literal) => {
        $r.$f = $c.bits($w)?;
    };
    (@get $c:ident, $r:ident, $f:ident, opt_bits, $w:literal) => {
        $r.$f = $c.opt_bits($w)?.unwrap_or(0);
    };
    (@get $c:ident, $r:ident, $f:ident, str, $w:literal) => {
        $r.$f = $c.str($w)?;
    };
    (@get $c:ident, $r:ident, $f:ident, opt_str, $w:literal) => {
        $r.$f = $c.opt_str($w)?.unwrap_or_default();
    };
    (@get $c:ident, $r:ident, $f:ident, f6_2, $w:literal) => {
        $r.$f = $c.float($w)?;
    };
    (@get $c:ident, $r:ident, $f:ident, f3_1, $w:literal) => {
        $r.$f = $c.float($w)?;
    };
    (@get $c:ident, $r:ident, $f:ident, f4_4, $w:literal) => {
        $r.$f = $c.float($w)?;
    };
    (@get $c:ident, $r:ident, $f:ident, hosts($n:literal), $w:literal) => {
        let n: i64 = $c.int($n)?;
        $r.$f = $c.hosts(n, $w)?;
    };
    (@get $c:ident, $r:ident, $f:ident, names($n:literal), $w:literal) => {
        let n: i64 = $c.int($n)?;
        let mut names = Vec::new();
        for _ in 0..n.max(0) {
            names.push($c.str($w)?);
        }
        $r.$f = names;
    };
    (@get $c:ident, $r:ident, $f:ident, rlimits, $w:literal) => {
        for (v, name) in $r.$f.iter_mut().zip($crate::record::rlimit::NAMES) {
            *v = $c.int(name)?;
        }
    };
    (@get $c:ident, $r:ident, $f:ident, xf($n:literal), $w:literal) => {
        let n: i64 = $c.int($n)?;
        for _ in 0..n.max(0) {
            $r.$f.push($crate::record::XFile {
                sub_fn: $c.str(concat!($w, ".subFn"))?,
                exec_fn: $c.str(concat!($w, ".execFn"))?,
                options: $c.bits(concat!($w, ".options"))?,
            });
        }
    };
    (@get $c:ident, $r:ident, $f:ident, rusage, $w:literal) => {
        $r.$f = $crate::record::Rusage::parse($c)?;
    };
    (@get $c:ident, $r:ident, $f:ident, opt_rusage($n:literal), $w:literal) => {
        let flag: i64 = $c.int($n)?;
        if flag != 0 {
            $r.$f = Some($crate::record::Rusage::parse($c)?);
        }
    };

    // ---------------------------------------------------------------- writing, per kind
    (@put $w:ident, $r:ident, $f:ident, int) => {
        $w.int($r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, bits) => {
        $w.bits($r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, opt_bits) => {
        $w.bits($r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, str) => {
        $w.str(&$r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, opt_str) => {
        $w.str(&$r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, f6_2) => {
        $w.f6_2($r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, f3_1) => {
        $w.f3_1($r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, f4_4) => {
        $w.f4_4($r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, hosts) => {
        $w.hosts(&$r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, names) => {
        $w.hosts(&$r.$f);
    };
    (@put $w:ident, $r:ident, $f:ident, rlimits) => {
        for v in $r.$f {
            $w.int(v);
        }
    };
    (@put $w:ident, $r:ident, $f:ident, xf) => {
        $w.int($r.$f.len());
        for x in &$r.$f {
            $w.str(&x.sub_fn).str(&x.exec_fn).bits(x.options);
        }
    };
    (@put $w:ident, $r:ident, $f:ident, rusage) => {
        $r.$f.write($w);
    };
    (@put $w:ident, $r:ident, $f:ident, opt_rusage) => {
        match &$r.$f {
            Some(ru) => {
                $w.int(1);
                ru.write($w);
            }
            None => {
                $w.int(0);
            }
        }
    };
}
