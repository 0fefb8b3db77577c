//! `#BSUB` directives of a job script: parsing, option values and the submission built
//! from them (see `basalt_fuzz::bsub`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    basalt_fuzz::bsub::check_script(data);
});
