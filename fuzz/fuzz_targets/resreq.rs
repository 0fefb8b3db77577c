//! Resource requirements: `-R` merging, `span[]` and select expressions on arbitrary text
//! (see `basalt_fuzz::resreq`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    basalt_fuzz::resreq::check_resreq(data);
});
