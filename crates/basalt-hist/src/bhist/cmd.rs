//! `bhist`'s `main`.

use super::*;

/// `bhist`.
pub fn main(args: Vec<String>) -> ExitCode {
    let items = match basalt_cli::batch::parse_args("bhist", &args, &SPEC, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let a = args_from(items);
    let ids = match super::super::parse_ids(&a.ids) {
        Ok(ids) => ids,
        Err(bad) => {
            eprintln!("{bad}: Illegal job ID.");
            return basalt_cli::fail();
        }
    };
    let src = match source(&a, !ids.is_empty()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bhist: {e}");
            return basalt_cli::fail();
        }
    };
    let (logdir, short_hosts) = match super::super::logdir("bhist") {
        Ok(l) => l,
        Err(code) => return code,
    };
    let filter = Filter::new(&a, ids, &super::super::caller_name());
    let want = want_of(&filter);
    let loaded = match super::super::read_history(&logdir, &src, &want) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bhist: {e}");
            return basalt_cli::fail();
        }
    };
    for w in &loaded.warnings {
        eprintln!("{w}");
    }
    let fx = Fx {
        tm: basalt_cli::batch::timefmt::local,
        now: basalt_cli::batch::timefmt::now(),
        short_hosts,
    };
    match report(history::build(loaded.records), &a, &filter, &fx) {
        Some(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("{NO_MATCH}");
            basalt_cli::fail()
        }
    }
}
