"""Helpers shared by the client scripts: ask Basalt's own bjobs about jobs."""

import subprocess
import time


def job_states(ids):
    """{job id: STAT} for `ids`, from `bjobs -a -noheader -o 'jobid stat' <ids>`."""
    out = subprocess.run(
        ["bjobs", "-a", "-noheader", "-o", "jobid stat", *ids],
        capture_output=True,
        text=True,
        check=False,
    )
    states = {}
    for line in out.stdout.splitlines():
        words = line.split()
        if len(words) == 2:
            states[words[0]] = words[1]
    return states


def wait_finished(ids, deadline_s):
    """Wait until every job in `ids` is DONE or EXIT; return the states; raise on timeout."""
    end = time.monotonic() + deadline_s
    while True:
        states = job_states(ids)
        if all(states.get(i) in ("DONE", "EXIT") for i in ids):
            return states
        if time.monotonic() > end:
            raise RuntimeError(f"jobs {ids} not finished after {deadline_s}s: {states}")
        time.sleep(0.5)


def describe(ids):
    """`bjobs -a -o 'jobid stat exit_code exit_reason' <ids>` as printed, for the log."""
    out = subprocess.run(
        ["bjobs", "-a", "-o", "jobid stat exit_code exit_reason", *ids],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout + out.stderr
