//! One line of `lsb.events` / `lsb.acct`: `split_fields`, `parse_line` and the writer's
//! round trip on arbitrary bytes (see `basalt_fuzz::check_line`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    basalt_fuzz::check_line(data);
});
