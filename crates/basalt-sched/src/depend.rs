//! `bsub -w` dependency expressions: a small recursive-descent parser and a three-valued
//! evaluation (satisfied / not yet / never).
//!
//! Grammar (LSF's): `expr := and ('||' and)*`, `and := unary ('&&' unary)*`,
//! `unary := '!' unary | '(' expr ')' | cond`, `cond := func '(' target [',' [op] code] ')' |
//! target` where func is `done exit ended started post_done post_err` (a bare target means
//! `done`), a target is a job id (`123`, `123[4]`, `123[*]`) or a job name (`"name"`, `name`,
//! `name*`, `"arr[3]"`, `arr[*]`; a quoted number is a name), and op one of
//! `== != > >= < <=` (exit codes, `exit()` only). The whole expression may be wrapped in
//! literal double quotes (`'"done(5)"'`).
//!
//! Bounds (a user's input, parsed in mbatchd): at most [`MAX_LEN`] bytes, [`MAX_NESTING`]
//! levels of `(` and `!`, and [`MAX_CONDS`] conditions. Chains of `&&` / `||` are kept flat
//! (n-ary), so neither parsing, evaluating nor dropping an expression recurses deeper than
//! its nesting.

use basalt_core::job::JobState;

/// The dependency conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Done,
    Exit,
    Ended,
    Started,
    PostDone,
    PostErr,
}

/// Which elements of an array a target means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdxSel {
    /// Every element (or the job itself).
    All,
    /// One element.
    One(u32),
    /// `[*]`: the element with the dependent element's own index.
    Same,
}

/// What a condition names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Id(u64, IdxSel),
    /// A job name (possibly with `*` wildcards): the submitter's own jobs of that name.
    Name(String, IdxSel),
}

/// Exit-code comparison of `exit(job, op code)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Cmp {
    fn test(self, a: i32, b: i32) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
        }
    }
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Cond {
        func: Func,
        target: Target,
        exit: Option<(Cmp, i32)>,
    },
    Not(Box<Expr>),
    /// Every operand (two or more) must hold.
    And(Vec<Expr>),
    /// One operand (of two or more) must hold.
    Or(Vec<Expr>),
    /// A condition read back from a log that Basalt cannot parse: never satisfied.
    Invalid,
}

impl Expr {
    /// Call `f` with every target the expression names.
    pub fn for_each_target(&self, f: &mut dyn FnMut(&Target)) {
        match self {
            Expr::Cond { target, .. } => f(target),
            Expr::Not(x) => x.for_each_target(f),
            Expr::And(v) | Expr::Or(v) => v.iter().for_each(|x| x.for_each_target(f)),
            Expr::Invalid => {}
        }
    }

    /// Does the expression name `[*]` (its value then depends on the element)?
    pub fn uses_own_index(&self) -> bool {
        match self {
            Expr::Cond { target, .. } => matches!(
                target,
                Target::Id(_, IdxSel::Same) | Target::Name(_, IdxSel::Same)
            ),
            Expr::Not(x) => x.uses_own_index(),
            Expr::And(v) | Expr::Or(v) => v.iter().any(Expr::uses_own_index),
            Expr::Invalid => false,
        }
    }
}

/// The value of a condition now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tri {
    Yes,
    NotYet,
    /// Can never become true (unknown job, or a final state that contradicts it).
    Never,
}

/// A job a target resolved to: its state and exit code (the `wait()` code, not status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub state: JobState,
    pub exit_code: i32,
}

/// A syntax error (the position is a byte offset), or an expression past the bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError(pub usize);

/// The longest dependency expression accepted, in bytes.
pub const MAX_LEN: usize = 64 * 1024;
/// The deepest nesting of `(` and `!` accepted.
pub const MAX_NESTING: usize = 64;
/// The most conditions one expression may hold.
pub const MAX_CONDS: usize = 4096;

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    depth: usize,
    conds: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s.as_bytes()[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.pos..].starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    fn err<T>(&self) -> Result<T, SyntaxError> {
        Err(SyntaxError(self.pos))
    }

    fn expr(&mut self) -> Result<Expr, SyntaxError> {
        let first = self.and()?;
        if !self.eat("||") {
            return Ok(first);
        }
        let mut all = vec![first];
        loop {
            all.push(self.and()?);
            if !self.eat("||") {
                return Ok(Expr::Or(all));
            }
        }
    }

    fn and(&mut self) -> Result<Expr, SyntaxError> {
        let first = self.unary()?;
        if !self.eat("&&") {
            return Ok(first);
        }
        let mut all = vec![first];
        loop {
            all.push(self.unary()?);
            if !self.eat("&&") {
                return Ok(Expr::And(all));
            }
        }
    }

    /// One level deeper (`(` or `!`); refused past [`MAX_NESTING`].
    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.err();
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<Expr, SyntaxError> {
        match self.peek() {
            Some(b'!') if !self.s[self.pos..].starts_with("!=") => {
                self.enter()?;
                self.pos += 1;
                let e = Expr::Not(Box::new(self.unary()?));
                self.depth -= 1;
                Ok(e)
            }
            Some(b'(') => {
                self.enter()?;
                self.pos += 1;
                let e = self.expr()?;
                if !self.eat(")") {
                    return self.err();
                }
                self.depth -= 1;
                Ok(e)
            }
            Some(_) => {
                self.conds += 1;
                if self.conds > MAX_CONDS {
                    return self.err();
                }
                self.cond()
            }
            None => self.err(),
        }
    }

    /// A quoted string (`"…"`), without the quotes.
    fn quoted(&mut self) -> Result<String, SyntaxError> {
        self.ws();
        let rest = &self.s[self.pos..];
        let Some(body) = rest.strip_prefix('"') else {
            return self.err();
        };
        let Some(end) = body.find('"') else {
            return self.err();
        };
        let text = body[..end].to_string();
        self.pos += end + 2;
        Ok(text)
    }

    /// An unquoted word: up to whitespace or one of `( ) , & | ! "`.
    fn word(&mut self) -> &'a str {
        self.ws();
        let start = self.pos;
        let b = self.s.as_bytes();
        while self.pos < b.len()
            && !b[self.pos].is_ascii_whitespace()
            && !matches!(b[self.pos], b'(' | b')' | b',' | b'&' | b'|' | b'!' | b'"')
        {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    fn cond(&mut self) -> Result<Expr, SyntaxError> {
        if self.peek() == Some(b'"') {
            let name = self.quoted()?;
            return Ok(done(name_target(&name)?));
        }
        let save = self.pos;
        let w = self.word();
        if w.is_empty() {
            return self.err();
        }
        if self.peek() != Some(b'(') {
            return Ok(done(word_target(w).map_err(|_| SyntaxError(save))?));
        }
        let func = match w {
            "done" => Func::Done,
            "exit" => Func::Exit,
            "ended" => Func::Ended,
            "started" => Func::Started,
            "post_done" => Func::PostDone,
            "post_err" => Func::PostErr,
            _ => return Err(SyntaxError(save)),
        };
        self.pos += 1; // '('
        let target = if self.peek() == Some(b'"') {
            name_target(&self.quoted()?)?
        } else {
            let at = self.pos;
            let w = self.word();
            if w.is_empty() {
                return self.err();
            }
            word_target(w).map_err(|_| SyntaxError(at))?
        };
        let mut exit = None;
        if self.eat(",") {
            if func != Func::Exit {
                return self.err();
            }
            let op = if self.eat("==") {
                Cmp::Eq
            } else if self.eat("!=") {
                Cmp::Ne
            } else if self.eat(">=") {
                Cmp::Ge
            } else if self.eat("<=") {
                Cmp::Le
            } else if self.eat(">") {
                Cmp::Gt
            } else if self.eat("<") {
                Cmp::Lt
            } else {
                Cmp::Eq
            };
            self.ws();
            let start = self.pos;
            let b = self.s.as_bytes();
            if self.pos < b.len() && b[self.pos] == b'-' {
                self.pos += 1;
            }
            while self.pos < b.len() && b[self.pos].is_ascii_digit() {
                self.pos += 1;
            }
            let Ok(code) = self.s[start..self.pos].parse::<i32>() else {
                return Err(SyntaxError(start));
            };
            exit = Some((op, code));
        }
        if !self.eat(")") {
            return self.err();
        }
        Ok(Expr::Cond { func, target, exit })
    }
}

fn done(target: Target) -> Expr {
    Expr::Cond {
        func: Func::Done,
        target,
        exit: None,
    }
}

/// `name`, `name[4]`, `name[*]` (a name never has an index list: that would be an array
/// spec, which names the whole array by its base name).
fn name_target(s: &str) -> Result<Target, SyntaxError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(SyntaxError(0));
    }
    let (name, sel) = split_sel(s);
    if name.is_empty() {
        return Err(SyntaxError(0));
    }
    Ok(Target::Name(name.to_string(), sel))
}

fn split_sel(s: &str) -> (&str, IdxSel) {
    if let Some(body) = s.strip_suffix(']')
        && let Some(open) = body.rfind('[')
    {
        let inner = body[open + 1..].trim();
        if inner == "*" {
            return (&body[..open], IdxSel::Same);
        }
        if !inner.is_empty()
            && inner.bytes().all(|b| b.is_ascii_digit())
            && let Ok(i) = inner.parse::<u32>()
            && i > 0
        {
            return (&body[..open], IdxSel::One(i));
        }
    }
    (s, IdxSel::All)
}

/// An unquoted target: digits (with an optional element) are a job id, anything else a name.
fn word_target(w: &str) -> Result<Target, SyntaxError> {
    let (head, sel) = split_sel(w);
    if !head.is_empty() && head.bytes().all(|b| b.is_ascii_digit()) {
        return match head.parse::<u64>() {
            Ok(id) if id > 0 => Ok(Target::Id(id, sel)),
            _ => Err(SyntaxError(0)),
        };
    }
    if w.contains('[') && sel == IdxSel::All {
        // `123[x]` or `name[1-3]` in an expression: not a target LSF accepts.
        if head.bytes().next().is_some_and(|b| b.is_ascii_digit()) {
            return Err(SyntaxError(0));
        }
    }
    name_target(w)
}

/// Parse a `-w` string. `Ok(None)` for an empty condition.
pub fn parse(cond: &str) -> Result<Option<Expr>, SyntaxError> {
    if cond.len() > MAX_LEN {
        return Err(SyntaxError(MAX_LEN));
    }
    let c = cond.trim();
    if c.is_empty() {
        return Ok(None);
    }
    // Literal surrounding quotes around a whole expression (`'"done(5)"'`), but not a
    // quoted job name (`'"210"'`).
    for q in ['"', '\''] {
        if c.len() >= 2 && c.starts_with(q) && c.ends_with(q) {
            let inner = c[1..c.len() - 1].trim();
            if (inner.contains('(') || q == '\'')
                && let Ok(e) = parse_expr(inner)
            {
                return Ok(Some(e));
            }
        }
    }
    parse_expr(c).map(Some)
}

fn parse_expr(c: &str) -> Result<Expr, SyntaxError> {
    let mut p = Parser {
        s: c,
        pos: 0,
        depth: 0,
        conds: 0,
    };
    let e = p.expr()?;
    p.ws();
    if p.pos != c.len() {
        return Err(SyntaxError(p.pos));
    }
    Ok(e)
}

/// Evaluate a condition over the jobs its target names (all of them must pass).
pub fn eval_cond(func: Func, exit: Option<(Cmp, i32)>, members: &[Member]) -> Tri {
    if members.is_empty() {
        return Tri::Never;
    }
    let mut all = true;
    for m in members {
        let finished = m.state.is_finished();
        let ok = match func {
            Func::Done => {
                if finished && m.state != JobState::Done {
                    return Tri::Never;
                }
                m.state == JobState::Done
            }
            Func::Exit => {
                if m.state == JobState::Done {
                    return Tri::Never;
                }
                if finished {
                    match exit {
                        Some((op, code)) if !op.test(m.exit_code, code) => return Tri::Never,
                        _ => true,
                    }
                } else {
                    false
                }
            }
            Func::Ended | Func::PostDone => finished,
            // No post-exec errors can happen: once the job ended this is never true.
            Func::PostErr => {
                if finished {
                    return Tri::Never;
                }
                false
            }
            Func::Started => finished || m.state.is_started(),
        };
        all &= ok;
    }
    if all { Tri::Yes } else { Tri::NotYet }
}

/// Evaluate an expression; `resolve` gives the jobs a target names.
pub fn eval(e: &Expr, resolve: &mut dyn FnMut(&Target) -> Vec<Member>) -> Tri {
    match e {
        Expr::Invalid => Tri::Never,
        Expr::Cond { func, target, exit } => {
            let members = resolve(target);
            eval_cond(*func, *exit, &members)
        }
        Expr::Not(x) => match eval(x, resolve) {
            // The states conditions test are final: once true, its negation never is.
            Tri::Yes => Tri::Never,
            Tri::NotYet | Tri::Never => Tri::Yes,
        },
        Expr::And(all) => {
            let mut acc = Tri::Yes;
            for x in all {
                match eval(x, resolve) {
                    Tri::Never => acc = Tri::Never,
                    Tri::NotYet if acc == Tri::Yes => acc = Tri::NotYet,
                    _ => {}
                }
            }
            acc
        }
        Expr::Or(all) => {
            let mut acc = Tri::Never;
            for x in all {
                match eval(x, resolve) {
                    Tri::Yes => acc = Tri::Yes,
                    Tri::NotYet if acc == Tri::Never => acc = Tri::NotYet,
                    _ => {}
                }
            }
            acc
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Expr {
        match parse(s) {
            Ok(Some(e)) => e,
            other => panic!("{s}: {other:?}"),
        }
    }

    fn c(func: Func, target: Target) -> Expr {
        Expr::Cond {
            func,
            target,
            exit: None,
        }
    }

    #[test]
    fn parses_lsf_forms() {
        use IdxSel::*;
        assert_eq!(p("done(12)"), c(Func::Done, Target::Id(12, All)));
        assert_eq!(p("\"done(12)\""), c(Func::Done, Target::Id(12, All)));
        assert_eq!(p("  ended( 7[3] ) "), c(Func::Ended, Target::Id(7, One(3))));
        assert_eq!(p("12"), c(Func::Done, Target::Id(12, All)));
        assert_eq!(p("\"210\""), c(Func::Done, Target::Name("210".into(), All)));
        assert_eq!(
            p("done(\"my job\")"),
            c(Func::Done, Target::Name("my job".into(), All))
        );
        assert_eq!(
            p("done(arr*)"),
            c(Func::Done, Target::Name("arr*".into(), All))
        );
        assert_eq!(
            p("done(arr[*])"),
            c(Func::Done, Target::Name("arr".into(), Same))
        );
        assert_eq!(
            p("exit(678, != 0)"),
            Expr::Cond {
                func: Func::Exit,
                target: Target::Id(678, All),
                exit: Some((Cmp::Ne, 0))
            }
        );
        assert_eq!(
            p("exit(\"99Job\",3)"),
            Expr::Cond {
                func: Func::Exit,
                target: Target::Name("99Job".into(), All),
                exit: Some((Cmp::Eq, 3))
            }
        );
        let e = p("done(312) && (started(Job2)||exit(\"99Job\"))");
        assert!(matches!(&e, Expr::And(v) if v.len() == 2 && matches!(v[1], Expr::Or(_))));
        let e = p("done(1) || done(2) && done(3)");
        let Expr::Or(all) = e else {
            panic!("|| binds looser")
        };
        assert!(matches!(&all[..], [Expr::Cond { .. }, Expr::And(v)] if v.len() == 2));
        assert!(matches!(p("!done(1)"), Expr::Not(_)));
        assert!(matches!(p("post_done(1) && post_err(2)"), Expr::And(_)));
        // Chains stay flat.
        assert!(matches!(p("1 && 2 && 3 && 4"), Expr::And(v) if v.len() == 4));
        assert_eq!(parse("   "), Ok(None));
    }

    #[test]
    fn refuses_bad_syntax() {
        for s in [
            "done(",
            "done(1",
            "done()",
            "bogus(1)",
            "done(1) &&",
            "done(1) done(2)",
            "(done(1)",
            "done(1))",
            "done(1,2)",
            "exit(1, >x)",
            "done(\"unterminated)",
            "&& done(1)",
            "done(0)",
            "done(12[x])",
        ] {
            assert!(parse(s).is_err(), "{s} should be refused");
        }
    }

    /// Issue 31: "A deeply nested dependency expression crashes mbatchd (stack overflow)":
    /// nesting, length and the number of conditions are bounded, and what is accepted
    /// evaluates and drops without deep recursion.
    #[test]
    fn deeply_nested_dependency_is_refused_not_a_stack_overflow() {
        for depth in [65, 2_000, 5_000, 10_000, 100_000] {
            let s = format!("{}done(1){}", "(".repeat(depth), ")".repeat(depth));
            assert!(parse(&s).is_err(), "depth {depth} accepted");
            let s = format!("{}done(1)", "!".repeat(depth));
            assert!(parse(&s).is_err(), "{depth} '!' accepted");
        }
        let s = format!(
            "{}done(1){}",
            "(".repeat(MAX_NESTING),
            ")".repeat(MAX_NESTING)
        );
        assert!(parse(&s).is_ok(), "nesting {MAX_NESTING} is allowed");
        // Unbalanced openers are refused as soon as they go too deep.
        assert!(parse(&"(".repeat(1_000_000)).is_err());
        // A flat chain: up to MAX_CONDS conditions.
        let chain = |n: usize, op: &str| {
            (1..=n)
                .map(|i| format!("done({i})"))
                .collect::<Vec<_>>()
                .join(op)
        };
        let e = p(&chain(MAX_CONDS, " && "));
        assert!(matches!(&e, Expr::And(v) if v.len() == MAX_CONDS));
        let mut all_done = |_: &Target| vec![m(JobState::Done, 0)];
        assert_eq!(eval(&e, &mut all_done), Tri::Yes);
        assert!(parse(&chain(MAX_CONDS + 1, "&&")).is_err());
        assert!(parse(&chain(MAX_CONDS + 1, "||")).is_err());
        // Over-long text is refused before it is parsed.
        let long = format!("done(\"{}\")", "x".repeat(MAX_LEN));
        assert_eq!(parse(&long), Err(SyntaxError(MAX_LEN)));
    }

    fn m(state: JobState, exit_code: i32) -> Member {
        Member { state, exit_code }
    }

    #[test]
    fn three_valued() {
        use JobState::*;
        let done_ = |ms: &[Member]| eval_cond(Func::Done, None, ms);
        assert_eq!(done_(&[]), Tri::Never);
        assert_eq!(done_(&[m(Done, 0), m(Done, 0)]), Tri::Yes);
        assert_eq!(done_(&[m(Done, 0), m(Run, 0)]), Tri::NotYet);
        assert_eq!(done_(&[m(Done, 0), m(Exit, 1)]), Tri::Never);
        assert_eq!(
            eval_cond(Func::Ended, None, &[m(Exit, 1), m(Done, 0)]),
            Tri::Yes
        );
        assert_eq!(eval_cond(Func::Exit, None, &[m(Exit, 3)]), Tri::Yes);
        assert_eq!(
            eval_cond(Func::Exit, Some((Cmp::Gt, 5)), &[m(Exit, 3)]),
            Tri::Never
        );
        assert_eq!(eval_cond(Func::Exit, None, &[m(Done, 0)]), Tri::Never);
        assert_eq!(eval_cond(Func::Started, None, &[m(Pend, 0)]), Tri::NotYet);
        assert_eq!(eval_cond(Func::Started, None, &[m(Ssusp, 0)]), Tri::Yes);
        assert_eq!(eval_cond(Func::PostErr, None, &[m(Done, 0)]), Tri::Never);
        let mut states = |t: &Target| match t {
            Target::Id(1, _) => vec![m(Done, 0)],
            Target::Id(2, _) => vec![m(Run, 0)],
            _ => vec![],
        };
        assert_eq!(eval(&p("done(1) && done(2)"), &mut states), Tri::NotYet);
        assert_eq!(eval(&p("done(1) || done(9)"), &mut states), Tri::Yes);
        assert_eq!(eval(&p("done(2) && done(9)"), &mut states), Tri::Never);
        assert_eq!(eval(&p("!done(2)"), &mut states), Tri::Yes);
        assert_eq!(eval(&p("!done(1)"), &mut states), Tri::Never);
        assert_eq!(eval(&p("done(9) || exit(9)"), &mut states), Tri::Never);
    }
}
