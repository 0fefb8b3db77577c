"""Basalt's C API from Python's ctypes, as sites' scripts use libbat: load libbat.so
and liblsf.so from the directory given, submit a job with lsb_submit, read it back
with lsb_openjobinfo/lsb_readjobinfo, kill it, and read lsberrno for a bad job id.

Usage: ctypes_test.py <libdir> <workdir>   (LSF_ENVDIR names the cluster)
"""
import ctypes
import os
import signal
import sys
import time

libdir, workdir = sys.argv[1], sys.argv[2]
bat = ctypes.CDLL(os.path.join(libdir, "libbat.so"))
lsf = ctypes.CDLL(os.path.join(libdir, "liblsf.so"))

LSF_RLIM_NLIMITS = 12
SUB_JOB_NAME, SUB_OUT_FILE = 0x01, 0x10
ALL_JOB = 0x0001
JOB_STAT_RUN, JOB_STAT_EXIT = 0x04, 0x20
LSBE_NO_JOB = 1  # lsbatch.h


class Submit(ctypes.Structure):
    """The leading fields of struct submit; the rest stays zero (padding below)."""

    _fields_ = [
        ("options", ctypes.c_int),
        ("options2", ctypes.c_int),
        ("jobName", ctypes.c_char_p),
        ("queue", ctypes.c_char_p),
        ("numAskedHosts", ctypes.c_int),
        ("askedHosts", ctypes.POINTER(ctypes.c_char_p)),
        ("resReq", ctypes.c_char_p),
        ("rLimits", ctypes.c_int * LSF_RLIM_NLIMITS),
        ("hostSpec", ctypes.c_char_p),
        ("numProcessors", ctypes.c_int),
        ("dependCond", ctypes.c_char_p),
        ("timeEvent", ctypes.c_char_p),
        ("beginTime", ctypes.c_long),
        ("termTime", ctypes.c_long),
        ("sigValue", ctypes.c_int),
        ("inFile", ctypes.c_char_p),
        ("outFile", ctypes.c_char_p),
        ("errFile", ctypes.c_char_p),
        ("command", ctypes.c_char_p),
        ("rest", ctypes.c_char * 1024),
    ]


class SubmitReply(ctypes.Structure):
    _fields_ = [
        ("queue", ctypes.c_char_p),
        ("badJobId", ctypes.c_longlong),
        ("badJobName", ctypes.c_char_p),
        ("badReqIndx", ctypes.c_int),
    ]


class JobInfoHead(ctypes.Structure):
    _fields_ = [("numJobs", ctypes.c_int), ("jobIds", ctypes.POINTER(ctypes.c_longlong))]


class JobInfoEnt(ctypes.Structure):
    """The leading fields of struct jobInfoEnt."""

    _fields_ = [
        ("jobId", ctypes.c_longlong),
        ("user", ctypes.c_char_p),
        ("status", ctypes.c_int),
    ]


bat.lsb_init.argtypes = [ctypes.c_char_p]
bat.lsb_submit.argtypes = [ctypes.POINTER(Submit), ctypes.POINTER(SubmitReply)]
bat.lsb_submit.restype = ctypes.c_longlong
bat.lsb_openjobinfo_a.argtypes = [ctypes.c_longlong] + [ctypes.c_char_p] * 4 + [ctypes.c_int]
bat.lsb_openjobinfo_a.restype = ctypes.POINTER(JobInfoHead)
bat.lsb_readjobinfo.argtypes = [ctypes.POINTER(ctypes.c_int)]
bat.lsb_readjobinfo.restype = ctypes.POINTER(JobInfoEnt)
bat.lsb_signaljob.argtypes = [ctypes.c_longlong, ctypes.c_int]
bat.lsb_sysmsg.restype = ctypes.c_char_p
lsf.ls_getclustername.restype = ctypes.c_char_p


def fail(what):
    print("FAIL", what, bat.lsb_sysmsg().decode())
    sys.exit(1)


if bat.lsb_init(b"ctypes_test") != 0:
    fail("lsb_init")
cluster = lsf.ls_getclustername()
if not cluster:
    fail("ls_getclustername")

req = Submit()
for i in range(LSF_RLIM_NLIMITS):
    req.rLimits[i] = -1
req.options = SUB_JOB_NAME | SUB_OUT_FILE
req.jobName = b"from-ctypes"
req.outFile = os.path.join(workdir, "ctypes.%J.out").encode()
req.command = b"sleep 300"
reply = SubmitReply()
job = bat.lsb_submit(ctypes.byref(req), ctypes.byref(reply))
if job <= 0:
    fail("lsb_submit")


def status_of(job_id):
    head = bat.lsb_openjobinfo_a(job_id, None, None, None, None, ALL_JOB)
    if not head:
        return None
    more = ctypes.c_int(0)
    ent = bat.lsb_readjobinfo(ctypes.byref(more))
    status = ent.contents.status if ent else None
    user = ent.contents.user if ent else None
    bat.lsb_closejobinfo()
    return status, user


deadline = time.time() + 60
while True:
    got = status_of(job)
    if got and got[0] & JOB_STAT_RUN:
        break
    if time.time() > deadline:
        fail("job %d never ran: %r" % (job, got))
    time.sleep(0.1)
if bat.lsb_signaljob(job, signal.SIGKILL) != 0:
    fail("lsb_signaljob")
while True:
    got = status_of(job)
    if got and got[0] & JOB_STAT_EXIT:
        break
    if time.time() > deadline:
        fail("job %d not killed: %r" % (job, got))
    time.sleep(0.1)

if bat.lsb_signaljob(987654, signal.SIGKILL) != -1:
    fail("a bad job id was accepted")
code = ctypes.c_int.in_dll(bat, "lsberrno").value
if code != LSBE_NO_JOB:
    fail("lsberrno %d for a bad job id" % code)
if bat.lsb_sysmsg() != b"No matching job found":
    fail("lsb_sysmsg")
print("ctypes ok: cluster %s, job %d (queue %s) submitted, ran, killed" % (
    cluster.decode(), job, reply.queue.decode()))
