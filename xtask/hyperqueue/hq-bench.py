"""HyperQueue side of `cargo xtask bench --vs hyperqueue`.

Runs with the Python of the venv that hq-setup.sh made. The PyPI wheel has no `hq`
command: the server and the worker are embedded in its extension module, started with
`hyperqueue.LocalCluster`, and jobs go through `hyperqueue.Client`.

    python hq-bench.py run DIR N LATENCY_JOBS

starts `python hq-bench.py serve DIR/server 2` (one HyperQueue server and one worker
with 2 CPUs, in a process of their own, as `hq server start` and `hq worker start
--cpus 2` would be), waits until the worker has run a first job, measures, and always
stops that process at the end: its standard input is a pipe from this process, and
the server and worker stop when it closes (also when this process dies).

Measures, each printed as `RESULT <time>\\t<peer>\\t<version>\\t<metric>\\t<value>\\t<unit>`
(the format of the Slurm scripts; a metric with several samples is printed once per
sample):

* `xargs_true_N_s`: `seq N | xargs -P2 -I{} true`, just before the drains.
* `drain_array_N_s`: one job of N `true` tasks (one `Client.submit`, the API's
  counterpart of `hq submit --array 1-N true`), from just before the submission until
  the server reports the job finished.
* `drain_separate_N_s`: N jobs of one `true` task each, submitted one after the other
  by one client while the first ones already run, until the server reports all of
  them finished; `drain_separate_submitpart_N_s` is the submission loop alone.
* `latency_submit_to_start_ms`: one job at a time on the idle cluster, from just before
  `Client.submit` until the job's `date +%s%N` ran (3 warm-up jobs first, not counted);
  `submit_call_ms`: the `Client.submit` call itself.

The API's own `wait_for_jobs` asks the server once a second, which would round every
drain up to a whole second; the finish is found instead by asking the server for the
jobs' counters every 10 ms (the same request, `wait_for_jobs` stopped after its first
answer by its progress callback), the finish time of `hq job wait` without its sleep.
With many jobs, the last one submitted is polled alone until it has finished, then all
of those still unfinished.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone

POLL_S = 0.010


def result(version, metric, value, unit):
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"RESULT {stamp}\thyperqueue\t{version}\t{metric}\t{value:.6f}\t{unit}", flush=True)


def serve(server_dir, cores):
    """One server and one worker with `cores` CPUs until standard input closes."""
    from hyperqueue import LocalCluster
    from hyperqueue.cluster import WorkerConfig

    def stop_on_signal(_sig, _frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop_on_signal)
    os.makedirs(server_dir, exist_ok=True)
    cluster = LocalCluster(server_dir=server_dir, worker_config=WorkerConfig(cores=cores))
    try:
        with open(os.path.join(server_dir, "ready"), "w") as f:
            f.write(f"{os.getpid()}\n")
        sys.stdin.buffer.read()
    finally:
        cluster.stop()


class _Answered(Exception):
    """Raised by the progress callback to stop `wait_for_jobs` after one answer."""


class Bench:
    def __init__(self, server_dir, work):
        from hyperqueue import Client

        self.client = Client(server_dir)
        self.work = work

    def status(self, ids):
        """The server's counters of the jobs `ids` (one JobInfo request)."""
        seen = {}

        def answered(st):
            seen.update(st)
            raise _Answered

        try:
            self.client.connection.wait_for_jobs(list(ids), answered)
        except _Answered:
            pass
        return seen

    def wait(self, ids, timeout=1800.0):
        """Poll until every job of `ids` is finished; the failed tasks' count.

        The last job is polled alone until it is finished (a request about thousands of
        jobs every 10 ms would load the server), then every job still unfinished."""
        left = set(ids)
        failed = 0
        end = time.monotonic() + timeout
        last = max(ids)
        while not self.status([last])[last]["completed"]:
            if time.monotonic() > end:
                raise RuntimeError(f"job {last} unfinished after {timeout:.0f} s")
            time.sleep(POLL_S)
        while left:
            for job, st in self.status(left).items():
                if st["completed"]:
                    left.discard(job)
                    failed += st["failed"]
            if not left:
                break
            if time.monotonic() > end:
                raise RuntimeError(f"{len(left)} of {len(ids)} jobs unfinished after {timeout:.0f} s")
            time.sleep(POLL_S)
        return failed

    def job(self, args, n=1):
        from hyperqueue import Job

        j = Job(default_workdir=self.work)
        for _ in range(n):
            j.program(args, stdout=None, stderr=None)
        return j

    def submit(self, job):
        return self.client.submit(job).id


def xargs(n):
    t = time.perf_counter()
    subprocess.run(["sh", "-c", f"seq {n} | xargs -P2 -I{{}} true"], check=True)
    return time.perf_counter() - t


def started(path, timeout=60.0):
    """The time (ns since the epoch) the job wrote into `path`."""
    end = time.monotonic() + timeout
    while True:
        try:
            with open(path) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            pass
        if time.monotonic() > end:
            raise RuntimeError(f"{path} did not appear within {timeout:.0f} s")
        time.sleep(0.0002)


def measure(b, version, n, lat_n):
    # The worker is registered once a first job has run on it.
    if b.wait([b.submit(b.job(["true"]))], timeout=60):
        raise RuntimeError("the warm-up job failed")

    result(version, f"xargs_true_{n}_s", xargs(n), "s")

    array = b.job(["true"], n)
    t = time.perf_counter()
    failed = b.wait([b.submit(array)])
    result(version, f"drain_array_{n}_s", time.perf_counter() - t, "s")
    if failed:
        raise RuntimeError(f"{failed} tasks of the array failed")

    t = time.perf_counter()
    ids = [b.submit(b.job(["true"])) for _ in range(n)]
    submitted = time.perf_counter() - t
    failed = b.wait(ids)
    result(version, f"drain_separate_{n}_s", time.perf_counter() - t, "s")
    result(version, f"drain_separate_submitpart_{n}_s", submitted, "s")
    if failed:
        raise RuntimeError(f"{failed} of the separate jobs failed")

    lat = os.path.join(b.work, "lat")
    os.makedirs(lat, exist_ok=True)
    time.sleep(1)
    for i in range(lat_n + 3):
        f = os.path.join(lat, str(i))
        cmd = f"date +%s%N > {f}.tmp && mv {f}.tmp {f}"
        job = b.job(["sh", "-c", cmd])
        t0 = time.time_ns()
        jid = b.submit(job)
        t1 = time.time_ns()
        start = started(f)
        if b.wait([jid], timeout=60):
            raise RuntimeError(f"latency job {i} failed")
        if i >= 3:
            result(version, "latency_submit_to_start_ms", (start - t0) / 1e6, "ms")
            result(version, "submit_call_ms", (t1 - t0) / 1e6, "ms")


def run(top, n, lat_n):
    from hyperqueue.ffi import get_version

    version = get_version()
    server_dir = os.path.join(top, "server")
    # A server directory left by an earlier run would name a server that is gone.
    shutil.rmtree(server_dir, ignore_errors=True)
    work = os.path.join(top, "work")
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(top, "serve.log"), "ab")
    # The server and worker: stopped when their standard input closes.
    srv = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "serve", server_dir, "2"],
        stdin=subprocess.PIPE,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=top,
    )

    def stop_on_signal(_sig, _frame):
        raise SystemExit(1)

    signal.signal(signal.SIGTERM, stop_on_signal)
    try:
        end = time.monotonic() + 60
        while not os.path.exists(os.path.join(server_dir, "ready")):
            if srv.poll() is not None:
                raise RuntimeError(f"the HyperQueue server exited ({srv.returncode}); see {log.name}")
            if time.monotonic() > end:
                raise RuntimeError(f"the HyperQueue server did not start in 60 s; see {log.name}")
            time.sleep(0.05)
        print(f"HyperQueue {version}: server and a 2-CPU worker in {server_dir} (pid {srv.pid})", file=sys.stderr)
        measure(Bench(server_dir, work), version, n, lat_n)
    finally:
        srv.stdin.close()
        try:
            srv.wait(timeout=20)
        except subprocess.TimeoutExpired:
            srv.terminate()
            try:
                srv.wait(timeout=5)
            except subprocess.TimeoutExpired:
                srv.kill()
                srv.wait()


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "serve":
        serve(args[1], int(args[2]))
    elif len(args) == 4 and args[0] == "run":
        run(os.path.abspath(args[1]), int(args[2]), int(args[3]))
    else:
        sys.exit("usage: hq-bench.py run DIR N LATENCY_JOBS | hq-bench.py serve SERVER_DIR CPUS")


if __name__ == "__main__":
    main()
