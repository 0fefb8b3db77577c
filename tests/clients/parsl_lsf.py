"""parsl's LSFProvider (HighThroughputExecutor, SingleNodeLauncher) against a running Basalt
cluster.

Run with Basalt's commands first on PATH and LSF_ENVDIR set. One block runs the worker pool:
with `--request-by nodes` (parsl's default) it is `bsub <script file>` with `#BSUB -nnodes 1`;
with `--request-by cores` it is `bsub < <script file>` with `#BSUB -n 2` and
`#BSUB -R "span[ptile=2]"`. Python and bash apps run in it; parsl's own status poll
(`bjobs -noheader -o 'jobid stat' <id>`) must see the block RUNNING; cleanup bkills the block.
Exits 0 and prints "parsl OK" only when everything held.
"""

import argparse
import os
import sys
import time

from lsf_check import describe, wait_finished


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--request-by", choices=["nodes", "cores"], default="nodes")
    p.add_argument("--workdir", required=True)
    args = p.parse_args()
    work = args.workdir

    import parsl
    from parsl import bash_app, python_app
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.jobs.states import JobState
    from parsl.launchers import SingleNodeLauncher
    from parsl.providers import LSFProvider

    print(f"python {sys.version.split()[0]} parsl {parsl.__version__}", flush=True)

    @python_app
    def square(x):
        return x * x

    @python_app
    def where():
        import os

        env = os.environ
        return env.get("LSB_JOBID"), env.get("LSB_QUEUE"), env.get("LSB_MCPU_HOSTS", "")

    @bash_app
    def shout(word, stdout=None):
        return f"echo {word} | tr a-z A-Z"

    by_nodes = args.request_by == "nodes"
    if by_nodes:
        shape = {"nodes_per_block": 1}
    else:
        shape = {
            "request_by_nodes": False,
            "cores_per_block": 2,
            "cores_per_node": 2,
            "bsub_redirection": True,
        }
    venv_bin = os.path.dirname(sys.executable)
    provider = LSFProvider(
        queue="normal",
        **shape,
        init_blocks=1,
        min_blocks=0,
        max_blocks=1,
        walltime="00:10:00",
        launcher=SingleNodeLauncher(),
        worker_init=f"export PATH={venv_bin}:$PATH",
        cmd_timeout=60,
    )
    htex = HighThroughputExecutor(
        label="basalt_htex",
        address="127.0.0.1",
        max_workers_per_node=2,
        cores_per_worker=1,
        worker_logdir_root=os.path.join(work, "worker-logs"),
        provider=provider,
    )
    config = Config(executors=[htex], run_dir=os.path.join(work, "runinfo"))

    start = time.monotonic()
    parsl.load(config)
    try:
        squares = [square(i) for i in range(20)]
        results = [f.result(timeout=120) for f in squares]
        assert results == [i * i for i in range(20)], results
        print(f"20 squares after {time.monotonic() - start:.1f}s", flush=True)

        out = os.path.join(work, "shout.out")
        r = shout("basalt", stdout=out).result(timeout=60)
        assert r == 0, f"bash app returned {r}"
        with open(out) as f:
            text = f.read()
        assert text.strip() == "BASALT", repr(text)

        job_ids = list(provider.resources)
        assert len(job_ids) == 1 and job_ids[0].isdigit(), job_ids
        print("jobs " + " ".join(job_ids), flush=True)
        jobid, queue, mcpu = where().result(timeout=60)
        assert jobid == job_ids[0] and queue == "normal", (jobid, queue, job_ids)
        # -nnodes 1: one whole host (one slot, exclusive); -n 2 span[ptile=2]: 2 slots on one host.
        hosts = mcpu.split()
        assert len(hosts) == 2 and hosts[1] == ("1" if by_nodes else "2"), mcpu
        print(f"block {jobid} on LSB_MCPU_HOSTS={mcpu!r}", flush=True)

        # parsl's own poll: bjobs -noheader -o 'jobid stat' <ids>.
        status = provider.status(job_ids)
        assert [s.state for s in status] == [JobState.RUNNING], status
        print(f"provider status: {status}", flush=True)
    finally:
        parsl.dfk().cleanup()
    final = wait_finished(job_ids, 30)
    print(f"after cleanup: {final}", flush=True)
    print(describe(job_ids), flush=True)
    # Killed by the client's bkill, not ended on their own.
    assert all(final[j] == "EXIT" for j in job_ids), final

    scripts = os.path.join(work, "runinfo")
    submitted = [
        os.path.join(d, f)
        for d, _, fs in os.walk(scripts)
        for f in fs
        if f.endswith(".submit")
    ]
    assert submitted, f"no submit script under {scripts}"
    with open(submitted[0]) as f:
        script = f.read()
    if by_nodes:
        wanted = ["#BSUB -nnodes 1"]
    else:
        wanted = ["#BSUB -n 2", '#BSUB -R "span[ptile=2]"']
    for directive in wanted + ["#BSUB -W 10", "#BSUB -q normal"]:
        assert directive in script, f"{directive!r} not in\n{script}"
    print("parsl OK", flush=True)


if __name__ == "__main__":
    main()
