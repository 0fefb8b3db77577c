"""dask-jobqueue's LSFCluster against a running Basalt cluster.

Run with Basalt's commands first on PATH and LSF_ENVDIR set. Scales an LSFCluster to two
worker jobs (one slot each), checks that each worker runs inside its own Basalt job, computes
with them, closes the cluster (which bkills the jobs) and checks with bjobs that the jobs
ended. Exits 0 and prints "dask-jobqueue OK" only when everything held.
"""

import argparse
import os
import sys
import time

from lsf_check import describe, job_states, wait_finished


def square(x):
    return x * x


def where():
    return os.environ.get("LSB_JOBID"), os.environ.get("LSB_QUEUE"), os.getcwd()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--use-stdin", choices=["yes", "no"], required=True)
    p.add_argument("--workdir", required=True)
    args = p.parse_args()
    use_stdin = args.use_stdin == "yes"

    import dask
    import dask.bag as db
    import dask_jobqueue
    import distributed
    from dask_jobqueue import LSFCluster
    from dask_jobqueue.lsf import lsf_detect_units
    from distributed import Client

    print(
        f"python {sys.version.split()[0]} dask {dask.__version__} "
        f"distributed {distributed.__version__} dask-jobqueue {dask_jobqueue.__version__}",
        flush=True,
    )
    # dask-jobqueue reads LSF_UNIT_FOR_LIMITS from $LSF_ENVDIR/lsf.conf.
    units = lsf_detect_units()
    assert units == "m", f"LSF_UNIT_FOR_LIMITS read as {units!r}, expected MB"

    logs = os.path.join(args.workdir, "logs")
    os.makedirs(logs, exist_ok=True)
    cluster = LSFCluster(
        queue="normal",
        cores=1,
        processes=1,
        memory="1GB",
        walltime="00:10",
        use_stdin=use_stdin,
        interface="lo",
        scheduler_options={"port": 0, "dashboard_address": ":0"},
        local_directory=os.path.join(args.workdir, "worker-space"),
        log_directory=logs,
        death_timeout=60,
    )
    script = cluster.job_script()
    print("job script:\n" + script, flush=True)
    for directive in ("#BSUB -q normal", "#BSUB -n 1", "#BSUB -M 1000", "#BSUB -W 00:10"):
        assert directive in script, f"{directive!r} not in the job script"

    start = time.monotonic()
    cluster.scale(jobs=2)
    client = Client(cluster, timeout=60)
    client.wait_for_workers(2, timeout=120)
    print(f"2 workers up after {time.monotonic() - start:.1f}s", flush=True)

    job_ids = sorted(j.job_id for j in cluster.workers.values())
    assert len(job_ids) == 2 and all(j and j.isdigit() for j in job_ids), job_ids
    print("jobs " + " ".join(job_ids), flush=True)
    states = job_states(job_ids)
    assert all(states.get(j) == "RUN" for j in job_ids), f"bjobs says {states}"

    # Each worker lives in its own Basalt job, in the submission directory.
    seen = client.run(where)
    print(f"workers: {seen}", flush=True)
    assert sorted(v[0] for v in seen.values()) == job_ids, (seen, job_ids)
    assert all(v[1] == "normal" for v in seen.values()), seen
    assert all(v[2] == os.getcwd() for v in seen.values()), seen

    futures = client.map(square, range(200))
    total = client.submit(sum, futures).result(timeout=60)
    assert total == sum(x * x for x in range(200)), total
    used = {ws for ws_set in client.who_has(futures).values() for ws in ws_set}
    print(f"squares summed to {total} on {len(used)} worker(s)", flush=True)
    bag = db.from_sequence(range(10_000), npartitions=20)
    s = bag.map(lambda x: 2 * x).filter(lambda x: x % 3 == 0).sum().compute()
    assert s == sum(2 * x for x in range(10_000) if (2 * x) % 3 == 0), s
    print(f"dask.bag sum {s}", flush=True)

    client.close()
    cluster.close()
    # close() bkills the worker jobs: they must end.
    final = wait_finished(job_ids, 30)
    print(f"after close: {final}", flush=True)
    print(describe(job_ids), flush=True)
    # Killed by the client's bkill, not ended on their own.
    assert all(final[j] == "EXIT" for j in job_ids), final

    # -e <log_directory>/<name>-%J.err: the worker's log, with the job id substituted.
    errs = [f for f in os.listdir(logs) if f.endswith(".err")]
    for j in job_ids:
        mine = [f for f in errs if f.endswith(f"-{j}.err")]
        assert mine, f"no -e file for job {j} in {os.listdir(logs)}"
        with open(os.path.join(logs, mine[0])) as f:
            text = f.read()
        assert "Registered to" in text, f"{mine[0]}:\n{text}"
    print("dask-jobqueue OK", flush=True)


if __name__ == "__main__":
    main()
