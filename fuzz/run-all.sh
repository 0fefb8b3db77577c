#!/usr/bin/env bash
# Run every cargo-fuzz target of fuzz/ for a fixed number of iterations.
#
#   fuzz/run-all.sh [runs] [target ...]     (default: 100000 runs, every target)
#
# Each target runs over its working corpus (fuzz/corpus/<target>, not committed), its
# seeds (fuzz/seeds/<target>) and its regressions (fuzz/regressions/<target>), one process
# (the machine is shared). Exits non-zero when a target fails to build or finds a failure
# (the input is then in fuzz/artifacts/<target>/; see docs/testing.md). Needs a nightly
# toolchain and cargo-fuzz.
set -u

cd "$(dirname "$0")" || exit 2

runs=${1:-100000}
shift || true
if ! [[ "$runs" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 [runs] [target ...]   (runs: a number, default 100000)" >&2
    exit 2
fi

# target, extra build options, libFuzzer options.
all_targets=(eventlog_line eventlog_file config_files resreq bsub_script mbatchd_requests)
declare -A features=([bsub_script]="--features cli" [mbatchd_requests]="--features daemon")
declare -A maxlen=([eventlog_line]=4096 [eventlog_file]=8192 [config_files]=16384 [resreq]=4096 [bsub_script]=8192 [mbatchd_requests]=8192)

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo is not installed (https://rustup.rs)" >&2
    exit 2
fi
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "error: no nightly toolchain; cargo-fuzz needs one: rustup toolchain install nightly" >&2
    exit 2
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "error: cargo-fuzz is not installed: cargo install cargo-fuzz" >&2
    exit 2
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=("${all_targets[@]}")
fi

failed=()
for t in "${targets[@]}"; do
    if [ -z "${maxlen[$t]+x}" ]; then
        echo "error: unknown target $t (known: ${all_targets[*]})" >&2
        exit 2
    fi
    mkdir -p "corpus/$t" "seeds/$t" "regressions/$t"
    echo "=== $t: $runs runs"
    # shellcheck disable=SC2086 # the feature options are words
    cargo +nightly fuzz run ${features[$t]:-} "$t" "corpus/$t" "seeds/$t" "regressions/$t" -- \
        -runs="$runs" -max_len="${maxlen[$t]}" -print_final_stats=1 2>&1 |
        grep -E '^(Done|==[0-9]+== ERROR|thread .* panicked|SUMMARY|stat::number_of_executed_units|error(\[|:))'
    status=${PIPESTATUS[0]}
    if [ "$status" -ne 0 ]; then
        echo "=== $t: FAILED (see fuzz/artifacts/$t/)"
        failed+=("$t")
    else
        echo "=== $t: ok"
    fi
done

if [ ${#failed[@]} -ne 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
echo "all ${#targets[@]} targets ran $runs iterations clean"
