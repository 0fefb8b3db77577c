/*
 * Basalt's C API test program: calls libbat/liblsf the way lsf-drmaa, Open MPI and
 * site tools do. Run by crates/basalt-capi's tests against a running cluster
 * (LSF_ENVDIR set). Each mode prints "ok <what>" lines and exits 0, or prints
 * "FAIL <what>: ..." and exits 1.
 *
 *   api_test init                  lsb_init, ls_* names, ls_readconfenv, errors
 *   api_test cycle <workdir>       submit / query / kill / wait, bad ids
 *   api_test denied <jobid>        signal another user's job: LSBE_PERMISSION
 *   api_test alloc                 (inside a parallel job) lsb_getalloc + lsb_launch
 *   api_test nodaemon              a configuration whose daemons are not running
 *   api_test pages <n>             a listing of n jobs (several of mbatchd's pages)
 */
#include <lsf/lsbatch.h>
#include <lsf/lsf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failed = 0;

#define CHECK(cond, what, ...)                                                   \
    do {                                                                         \
        if (cond) {                                                              \
            printf("ok %s\n", what);                                             \
        } else {                                                                 \
            printf("FAIL %s: ", what);                                           \
            printf(__VA_ARGS__);                                                 \
            printf(" (lsberrno %d: %s)\n", lsberrno, lsb_sysmsg());             \
            failed = 1;                                                          \
        }                                                                        \
        fflush(stdout);                                                          \
    } while (0)

/* The strings of the last entry job_status read (the entry's own are the library's,
 * gone once the listing is closed). */
static char last_jname[256], last_queue[256];

/* One job's status (-1: not found); the listing is closed again. `copy` gets the
 * entry's numbers; its strings are copied to last_jname and last_queue. */
static int job_status(LS_LONG_INT id, int *exit_status, struct jobInfoEnt *copy) {
    int more = 0, n, status = -1;
    struct jobInfoEnt *e;
    n = lsb_openjobinfo(id, NULL, NULL, NULL, NULL, ALL_JOB);
    if (n < 0)
        return -1;
    e = lsb_readjobinfo(&more);
    if (e != NULL) {
        status = e->status;
        if (exit_status)
            *exit_status = e->exitStatus;
        if (copy)
            *copy = *e;
        snprintf(last_jname, sizeof last_jname, "%s", e->jName ? e->jName : "");
        snprintf(last_queue, sizeof last_queue, "%s", e->submit.queue ? e->submit.queue : "");
    }
    lsb_closejobinfo();
    return status;
}

static int wait_status(LS_LONG_INT id, int mask, int seconds, int *exit_status) {
    time_t end = time(NULL) + seconds;
    int s;
    do {
        s = job_status(id, exit_status, NULL);
        if (s > 0 && (s & mask))
            return s;
        usleep(100000);
    } while (time(NULL) < end);
    return s;
}

/* The LIM's information: ls_info, ls_gethostinfo, ls_load, ls_loadofhosts. */
static void mode_lim(char *master) {
    struct lsInfo *info;
    struct hostInfo *hi;
    struct hostLoad *hl;
    char *one[2];
    int n = 0, i, found = 0;
    char mastercopy[MAXHOSTNAMELEN];
    snprintf(mastercopy, sizeof mastercopy, "%s", master ? master : "");
    info = ls_info();
    CHECK(info != NULL && info->numIndx >= NBUILTINDEX && info->nRes > info->numIndx, "ls_info",
          "%p", (void *)info);
    if (info) {
        CHECK(strcmp(info->resTable[R15S].name, "r15s") == 0 && strcmp(info->resTable[MEM].name, "mem") == 0
                  && info->resTable[R15S].valueType == LS_NUMERIC && (info->resTable[R15S].flags & RESF_BUILTIN),
              "ls_info load indices first", "%s", info->resTable[0].name);
        CHECK(info->nTypes >= 1 && info->nModels >= 1, "ls_info types and models", "%d %d", info->nTypes,
              info->nModels);
    }
    n = 0;
    hi = ls_gethostinfo(NULL, &n, NULL, 0, 0);
    CHECK(hi != NULL && n == 3, "ls_gethostinfo", "n %d: %s", n, ls_sysmsg());
    for (i = 0; hi && i < n; i++) {
        if (strcmp(hi[i].hostName, mastercopy) == 0)
            found = 1;
        CHECK(hi[i].maxCpus > 0 && hi[i].hostType && hi[i].hostModel && hi[i].cpuFactor > 0
                  && hi[i].numIndx >= NBUILTINDEX && hi[i].isServer,
              "hostInfo fields", "%s", hi[i].hostName);
    }
    CHECK(found, "ls_gethostinfo lists the master", "%s", mastercopy);
    n = 0;
    hl = ls_load(NULL, &n, 0, NULL);
    CHECK(hl != NULL && n == 3, "ls_load", "n %d: %s", n, ls_sysmsg());
    for (i = 0; hl && i < n; i++)
        CHECK(LS_ISOK(hl[i].status) && hl[i].li[R15S] >= 0 && hl[i].li[R15S] < INFINIT_LOAD
                  && hl[i].li[MEM] > 0,
              "hostLoad values", "%s status 0x%x r15s %f", hl[i].hostName, hl[i].status[0],
              hl[i].li[R15S]);
    n = 1;
    hl = ls_load(NULL, &n, OK_ONLY | NORMALIZE, NULL);
    CHECK(hl != NULL && n == 1, "ls_load one host", "n %d", n);
    one[0] = mastercopy;
    one[1] = NULL;
    n = 0;
    hl = ls_loadofhosts(NULL, &n, 0, NULL, one, 1);
    CHECK(hl != NULL && n == 1 && strcmp(hl[0].hostName, mastercopy) == 0, "ls_loadofhosts", "n %d", n);
    n = 0;
    CHECK(ls_load("select[(", &n, 0, NULL) == NULL && lserrno == LSE_BAD_EXP, "ls_load bad resreq",
          "lserrno %d", lserrno);
    n = 0;
    CHECK(ls_load("select[maxmem>999999999]", &n, 0, NULL) == NULL && lserrno == LSE_NO_HOST,
          "ls_load nothing eligible", "lserrno %d", lserrno);
    one[0] = "no-such-host";
    n = 0;
    CHECK(ls_loadofhosts(NULL, &n, 0, NULL, one, 1) == NULL && lserrno == LSE_BAD_HOST,
          "ls_loadofhosts unknown host", "lserrno %d", lserrno);
}

static void mode_init(void) {
    char *name, *master, *me;
    struct config_param params[] = {{"LSF_ENVDIR", NULL}, {"LSB_NO_SUCH_PARAM", "dflt"}, {NULL, NULL}};
    CHECK(lsb_init("api_test") == 0, "lsb_init", "returned -1");
    name = ls_getclustername();
    CHECK(name != NULL && *name, "ls_getclustername", "NULL");
    if (name)
        printf("cluster %s\n", name);
    CHECK(ls_isclustername(name) == 1, "ls_isclustername", "own name not recognised");
    CHECK(ls_isclustername("no-such-cluster") == 0, "ls_isclustername other", "matched");
    master = ls_getmastername();
    CHECK(master != NULL && *master, "ls_getmastername", "NULL: %s", ls_sysmsg());
    if (master)
        printf("master %s\n", master);
    me = ls_getmyhostname();
    CHECK(me != NULL && *me, "ls_getmyhostname", "NULL");
    {
        char mine[MAXHOSTNAMELEN];
        snprintf(mine, sizeof mine, "%s", me ? me : "");
        CHECK(ls_gethostname() != NULL && strcmp(ls_gethostname(), mine) == 0, "ls_gethostname", "%s",
              ls_gethostname());
    }
    CHECK(ls_gethosttype(NULL) != NULL, "ls_gethosttype", "NULL");
    CHECK(ls_gethostmodel(NULL) != NULL, "ls_gethostmodel", "NULL");
    CHECK(ls_gethostfactor(NULL) != NULL && *ls_gethostfactor(NULL) > 0, "ls_gethostfactor", "NULL");
    CHECK(ls_gethosttype("no-such-host") == NULL && lserrno == LSE_BAD_HOST,
          "ls_gethosttype unknown host", "lserrno %d", lserrno);
    CHECK(ls_readconfenv(params, getenv("LSF_ENVDIR")) == 0, "ls_readconfenv", "-1: %s", ls_sysmsg());
    CHECK(params[0].paramValue != NULL, "ls_readconfenv value", "LSF_ENVDIR not read");
    CHECK(strcmp(params[1].paramValue, "dflt") == 0, "ls_readconfenv default kept", "%s",
          params[1].paramValue);
    free(params[0].paramValue);
    CHECK(ls_readconfenv(params, "/nonexistent") == -1 && lserrno == LSE_LSFCONF,
          "ls_readconfenv missing file", "lserrno %d", lserrno);
    ls_perror("api_test-ls");
    mode_lim(master);
    lsberrno = LSBE_NO_JOB;
    CHECK(strcmp(lsb_sysmsg(), "No matching job found") == 0, "lsb_sysmsg text", "%s", lsb_sysmsg());
    lsb_perror("api_test");
}

/* Submit `cmd` named `name` to `queue`, with `options2` added; the job id or -1. */
static LS_LONG_INT submit_cmd(const char *workdir, const char *name, const char *cmd, int options2) {
    struct submit req;
    struct submitReply reply;
    static char out[4096];
    int i;
    memset(&req, 0, sizeof req);
    memset(&reply, 0, sizeof reply);
    for (i = 0; i < LSF_RLIM_NLIMITS; i++)
        req.rLimits[i] = DEFAULT_RLIMIT;
    snprintf(out, sizeof out, "%s/%s.%%J.out", workdir, name);
    req.options = SUB_JOB_NAME | SUB_OUT_FILE;
    req.options2 = options2;
    req.jobName = (char *)name;
    req.outFile = out;
    req.command = (char *)cmd;
    return lsb_submit(&req, &reply);
}

/* Job control and the texts: lsb_modify, lsb_switchjob, lsb_movejob, lsb_pendreason,
 * lsb_suspreason, lsb_jobid2str, lsb_deletejob, lsb_killbulkjobs, lsb_forcekilljob,
 * lsb_requeuejob, lsb_chkpntjob, lsb_mig. */
static void mode_control(const char *workdir, LS_LONG_INT exited) {
    struct submit req;
    struct submitReply reply;
    struct jobInfoEnt e;
    struct signalBulkJobs bulk;
    struct jobrequeue rq;
    struct submig mig;
    LS_LONG_INT held, a, b, c, ids[2];
    char *text, idtext[64];
    int s, i, pos, bad = -1;

    held = submit_cmd(workdir, "capi-held", "sleep 300", SUB2_HOLD);
    CHECK(held > 0, "submit on hold", "%lld", held);
    s = wait_status(held, JOB_STAT_PSUSP, 30, NULL);
    CHECK(s > 0 && (s & JOB_STAT_PSUSP), "held job is PSUSP", "status 0x%x", s);
    snprintf(idtext, sizeof idtext, "%lld", held);
    CHECK(strcmp(lsb_jobid2str(held), idtext) == 0, "lsb_jobid2str", "%s", lsb_jobid2str(held));
    CHECK(strcmp(lsb_jobid2str(LSB_JOBID(held, 3)), strcat(idtext, "[3]")) == 0, "lsb_jobid2str element",
          "%s", lsb_jobid2str(LSB_JOBID(held, 3)));
    {
        int more = 0;
        struct jobInfoEnt *p;
        CHECK(lsb_openjobinfo(held, NULL, NULL, NULL, NULL, 0) == 1, "open the held job", "-1");
        p = lsb_readjobinfo(&more);
        text = p ? lsb_pendreason(p->numReasons, p->reasonTb, NULL, NULL, 0) : NULL;
        CHECK(p && p->numReasons >= 1 && text != NULL && strstr(text, ";") != NULL, "lsb_pendreason",
              "%d reasons: %s", p ? p->numReasons : -1, text ? text : "(null)");
        lsb_closejobinfo();
    }
    if (text)
        printf("pending reason:%s", text);

    memset(&req, 0, sizeof req);
    memset(&reply, 0, sizeof reply);
    for (i = 0; i < LSF_RLIM_NLIMITS; i++)
        req.rLimits[i] = DEFAULT_RLIMIT;
    req.options = SUB_JOB_NAME;
    req.jobName = "capi-renamed";
    req.rLimits[LSF_RLIMIT_RUN] = 600;
    CHECK(lsb_modify(&req, &reply, held) == held, "lsb_modify", "-1");
    s = job_status(held, NULL, &e);
    CHECK(s > 0 && strcmp(last_jname, "capi-renamed") == 0, "lsb_modify took the name", "%s", last_jname);
    CHECK(e.submit.rLimits[LSF_RLIMIT_RUN] == 600, "lsb_modify took the run limit", "%d",
          e.submit.rLimits[LSF_RLIMIT_RUN]);
    req.options = 0;
    req.rLimits[LSF_RLIMIT_RUN] = DELETE_NUMBER;
    CHECK(lsb_modify(&req, &reply, held) == held, "lsb_modify reset", "-1");
    s = job_status(held, NULL, &e);
    CHECK(e.submit.rLimits[LSF_RLIMIT_RUN] == DEFAULT_RLIMIT, "lsb_modify reset the run limit", "%d",
          e.submit.rLimits[LSF_RLIMIT_RUN]);
    req.rLimits[LSF_RLIMIT_RUN] = DEFAULT_RLIMIT;
    CHECK(lsb_modify(&req, &reply, held) == -1 && lsberrno == LSBE_BAD_ARG, "lsb_modify nothing",
          "lsberrno %d", lsberrno);
    req.options = SUB_JOB_NAME;
    CHECK(lsb_modify(&req, &reply, 987654) == -1 && lsberrno == LSBE_NO_JOB, "lsb_modify bad job",
          "lsberrno %d", lsberrno);

    CHECK(lsb_switchjob(held, "priority") == 0, "lsb_switchjob", "-1");
    s = job_status(held, NULL, &e);
    CHECK(strcmp(last_queue, "priority") == 0, "switched queue", "%s", last_queue);
    CHECK(lsb_switchjob(held, "no-such-queue") == -1 && lsberrno == LSBE_BAD_QUEUE, "lsb_switchjob bad queue",
          "lsberrno %d", lsberrno);
    pos = 1;
    CHECK(lsb_movejob(held, &pos, TO_TOP) == 0 && pos >= 1, "lsb_movejob", "pos %d", pos);
    CHECK(lsb_movejob(held, &pos, 7) == -1 && lsberrno == LSBE_BAD_ARG, "lsb_movejob bad opCode",
          "lsberrno %d", lsberrno);
    CHECK(lsb_deletejob(held, 0, 0) == 0, "lsb_deletejob", "-1");
    s = wait_status(held, JOB_STAT_EXIT, 30, NULL);
    CHECK(s > 0 && (s & JOB_STAT_EXIT), "deleted job exits", "status 0x%x", s);

    a = submit_cmd(workdir, "capi-bulk-a", "sleep 300", 0);
    b = submit_cmd(workdir, "capi-bulk-b", "sleep 300", 0);
    CHECK(a > 0 && b > 0, "submit two", "%lld %lld", a, b);
    s = wait_status(a, JOB_STAT_RUN, 30, NULL);
    CHECK(lsb_signaljob(a, SIGSTOP) == 0, "stop for a reason", "-1");
    s = wait_status(a, JOB_STAT_USUSP, 30, NULL);
    s = job_status(a, NULL, &e);
    text = lsb_suspreason(e.reasons, e.subreasons, NULL);
    CHECK(text && strstr(text, "suspended by user") != NULL, "lsb_suspreason", "%s", text ? text : "(null)");
    CHECK(lsb_chkpntjob(a, 0, 0) == -1 && lsberrno != LSBE_NO_ERROR, "lsb_chkpntjob not checkpointable",
          "lsberrno %d", lsberrno);
    memset(&mig, 0, sizeof mig);
    mig.jobId = a;
    CHECK(lsb_mig(&mig, &bad) == -1 && lsberrno != LSBE_NO_ERROR, "lsb_mig not migratable", "lsberrno %d",
          lsberrno);
    ids[0] = a;
    ids[1] = b;
    memset(&bulk, 0, sizeof bulk);
    bulk.signal = SIGKILL;
    bulk.njobs = 2;
    bulk.jobs = ids;
    CHECK(lsb_killbulkjobs(&bulk) == 0, "lsb_killbulkjobs", "-1");
    s = wait_status(a, JOB_STAT_EXIT, 30, NULL);
    CHECK(s > 0 && (s & JOB_STAT_EXIT), "bulk-killed a exits", "status 0x%x", s);
    s = wait_status(b, JOB_STAT_EXIT, 30, NULL);
    CHECK(s > 0 && (s & JOB_STAT_EXIT), "bulk-killed b exits", "status 0x%x", s);

    c = submit_cmd(workdir, "capi-force", "sleep 300", 0);
    s = wait_status(c, JOB_STAT_RUN, 30, NULL);
    CHECK(lsb_forcekilljob(c) == 0, "lsb_forcekilljob", "-1");
    s = wait_status(c, JOB_STAT_EXIT, 30, NULL);
    CHECK(s > 0 && (s & JOB_STAT_EXIT), "force-killed job exits", "status 0x%x", s);

    memset(&rq, 0, sizeof rq);
    rq.jobId = exited;
    rq.status = JOB_STAT_PEND;
    rq.options = REQUEUE_EXIT;
    CHECK(lsb_requeuejob(&rq) == 0, "lsb_requeuejob", "-1");
    s = wait_status(exited, JOB_STAT_EXIT, 60, NULL);
    CHECK(s > 0 && (s & JOB_STAT_EXIT), "requeued job ran and exited again", "status 0x%x", s);
}

static void mode_cycle(const char *workdir) {
    struct submit req;
    struct submitReply reply;
    struct jobInfoEnt e;
    struct jobInfoHead *head;
    char out[4096];
    LS_LONG_INT id, id2;
    int i, s, more = 0, exit_status = 0, found = 0, n;
    CHECK(lsb_init("api_test") == 0, "lsb_init", "-1");

    /* A job that ends by itself with exit code 3. */
    memset(&req, 0, sizeof req);
    memset(&reply, 0, sizeof reply);
    for (i = 0; i < LSF_RLIM_NLIMITS; i++)
        req.rLimits[i] = DEFAULT_RLIMIT;
    snprintf(out, sizeof out, "%s/capi.%%J.out", workdir);
    req.options = SUB_JOB_NAME | SUB_OUT_FILE | SUB_QUEUE;
    req.options2 = SUB2_OVERWRITE_OUT_FILE;
    req.jobName = "capi-exit3";
    req.outFile = out;
    req.queue = "normal";
    req.command = "echo hello from capi; exit 3";
    id = lsb_submit(&req, &reply);
    CHECK(id > 0, "lsb_submit", "returned %lld", id);
    CHECK(reply.queue != NULL && strcmp(reply.queue, "normal") == 0, "submitReply.queue", "%s",
          reply.queue ? reply.queue : "(null)");
    printf("job %lld\n", id);
    s = wait_status(id, JOB_STAT_EXIT | JOB_STAT_DONE, 60, &exit_status);
    CHECK(s > 0 && (s & JOB_STAT_EXIT), "job exits", "status 0x%x", s);
    CHECK((exit_status >> 8) == 3, "exitStatus is a wait status", "exitStatus %d", exit_status);
    s = job_status(id, NULL, &e);
    CHECK(e.submitTime > 0 && e.startTime >= e.submitTime && e.endTime >= e.startTime, "times",
          "%ld %ld %ld", (long)e.submitTime, (long)e.startTime, (long)e.endTime);

    /* A job to kill, and the listing calls. */
    req.jobName = "capi-sleeper";
    req.command = "sleep 300";
    id2 = lsb_submit(&req, &reply);
    CHECK(id2 > 0, "lsb_submit second", "returned %lld", id2);
    s = wait_status(id2, JOB_STAT_RUN, 60, NULL);
    CHECK(s > 0 && (s & JOB_STAT_RUN), "second job runs", "status 0x%x", s);
    n = lsb_openjobinfo(0, NULL, "all", NULL, NULL, ALL_JOB);
    CHECK(n >= 2, "lsb_openjobinfo all", "%d", n);
    for (i = 0; i < n; i++) {
        struct jobInfoEnt *p = lsb_readjobinfo(&more);
        if (p == NULL)
            break;
        if (p->jobId == id2) {
            found = 1;
            CHECK(strcmp(p->jName, "capi-sleeper") == 0, "jName", "%s", p->jName);
            CHECK(p->numExHosts >= 1 && p->exHosts[0] != NULL, "exHosts", "%d", p->numExHosts);
            CHECK(strcmp(p->submit.command, "sleep 300") == 0, "submit.command", "%s",
                  p->submit.command);
            CHECK(p->submit.queue && strcmp(p->submit.queue, "normal") == 0, "submit.queue", "%s",
                  p->submit.queue);
        }
    }
    CHECK(found, "the job is listed", "job %lld not among %d", id2, n);
    CHECK(lsb_readjobinfo(&more) == NULL && lsberrno == LSBE_EOF, "lsb_readjobinfo at the end",
          "lsberrno %d", lsberrno);
    lsb_closejobinfo();
    head = lsb_openjobinfo_a(id2, NULL, NULL, NULL, NULL, 0);
    CHECK(head != NULL && head->numJobs == 1 && head->jobIds[0] == id2, "lsb_openjobinfo_a",
          "%p", (void *)head);
    lsb_closejobinfo();
    CHECK(lsb_openjobinfo(0, "no-such-name-*x", NULL, NULL, NULL, 0) == -1 && lsberrno == LSBE_NO_JOB,
          "lsb_openjobinfo no match", "lsberrno %d", lsberrno);
    CHECK(LSB_ARRAY_JOBID(id2) == id2 && LSB_ARRAY_IDX(id2) == 0, "LSB_ARRAY macros", "%lld", id2);

    CHECK(lsb_signaljob(id2, SIGSTOP) == 0, "lsb_signaljob SIGSTOP", "-1");
    s = wait_status(id2, JOB_STAT_USUSP, 30, NULL);
    CHECK(s > 0 && (s & JOB_STAT_USUSP), "job suspended", "status 0x%x", s);
    CHECK(lsb_signaljob(id2, SIGCONT) == 0, "lsb_signaljob SIGCONT", "-1");
    s = wait_status(id2, JOB_STAT_RUN, 30, NULL);
    CHECK(s > 0 && (s & JOB_STAT_RUN), "job resumed", "status 0x%x", s);
    CHECK(lsb_signaljob(id2, SIGKILL) == 0, "lsb_signaljob SIGKILL", "-1");
    s = wait_status(id2, JOB_STAT_EXIT, 60, NULL);
    CHECK(s > 0 && (s & JOB_STAT_EXIT), "killed job exits", "status 0x%x", s);
    CHECK(lsb_signaljob(id2, SIGKILL) == -1 && lsberrno == LSBE_JOB_FINISH,
          "signal a finished job", "lsberrno %d", lsberrno);

    /* Errors. */
    CHECK(lsb_signaljob(987654, SIGKILL) == -1 && lsberrno == LSBE_NO_JOB, "bad job id",
          "lsberrno %d", lsberrno);
    CHECK(strstr(lsb_sysmsg(), "No matching job found") != NULL, "bad job id message", "%s",
          lsb_sysmsg());
    CHECK(lsb_signaljob(-5, SIGKILL) == -1 && lsberrno == LSBE_BAD_JOBID, "negative job id",
          "lsberrno %d", lsberrno);
    req.queue = "no-such-queue";
    CHECK(lsb_submit(&req, &reply) == -1 && lsberrno == LSBE_BAD_QUEUE, "bad queue",
          "lsberrno %d", lsberrno);
    req.queue = "normal";
    req.command = NULL;
    CHECK(lsb_submit(&req, &reply) == -1 && lsberrno == LSBE_BAD_ARG, "no command",
          "lsberrno %d", lsberrno);
    req.command = "true";
    req.options2 |= SUB2_WARNING_ACTION;
    CHECK(lsb_submit(&req, &reply) == -1 && lsberrno == LSBE_BAD_ARG
              && strstr(lsb_sysmsg(), "SUB2_WARNING_ACTION") != NULL,
          "unsupported option named", "%s", lsb_sysmsg());
    mode_control(workdir, id);
}

static void mode_denied(const char *jobid) {
    LS_LONG_INT id = atoll(jobid);
    CHECK(lsb_init("api_test") == 0, "lsb_init", "-1");
    CHECK(lsb_signaljob(id, SIGKILL) == -1 && lsberrno == LSBE_PERMISSION, "permission denied",
          "lsberrno %d", lsberrno);
    CHECK(strstr(lsb_sysmsg(), "User permission denied") != NULL, "permission message", "%s",
          lsb_sysmsg());
}

static void mode_alloc(void) {
    char **hosts = NULL;
    char *argv[] = {"sh", "-c", "echo task $LSF_PM_TASKID of $LSB_JOBID on $(hostname) with $CAPI_EXTRA", NULL};
    char *envp[] = {"CAPI_EXTRA=extra-value", NULL};
    int n, i;
    n = lsb_getalloc(&hosts);
    CHECK(n >= 2, "lsb_getalloc", "%d", n);
    for (i = 0; i < n; i++) {
        printf("slot %d %s\n", i, hosts[i]);
        free(hosts[i]);
    }
    free(hosts);
    CHECK(lsb_launch(NULL, argv, LSF_DJOB_DISABLE_STDIN, envp) == n, "lsb_launch", "-1");
    {
        char *bad[] = {"no-such-host-x", NULL};
        CHECK(lsb_launch(bad, argv, 0, NULL) == -1 && lsberrno == LSBE_DJOB_VALIDATION_BAD_HOST,
              "lsb_launch on a host not allocated", "lsberrno %d", lsberrno);
    }
}

/* No daemon runs: lsb_init still succeeds (lsf-drmaa's configure calls it), the
 * configuration's answers come, and the calls that need a daemon fail with LSF's
 * codes within their time bounds. */
static void mode_nodaemon(void) {
    struct submit req;
    struct submitReply reply;
    int i;
    CHECK(lsb_init("api_test") == 0, "lsb_init without daemons", "-1");
    CHECK(ls_getclustername() != NULL, "ls_getclustername without daemons", "NULL");
    CHECK(ls_getmastername() == NULL && lserrno == LSE_MASTR_UNKNW, "ls_getmastername without LIM",
          "lserrno %d", lserrno);
    CHECK(lsb_openjobinfo(0, NULL, NULL, NULL, NULL, 0) == -1 && lsberrno == LSBE_LSLIB
              && lserrno == LSE_MASTR_UNKNW,
          "lsb_openjobinfo without daemons", "lsberrno %d lserrno %d", lsberrno, lserrno);
    memset(&req, 0, sizeof req);
    memset(&reply, 0, sizeof reply);
    for (i = 0; i < LSF_RLIM_NLIMITS; i++)
        req.rLimits[i] = DEFAULT_RLIMIT;
    req.command = "true";
    CHECK(lsb_submit(&req, &reply) == -1 && lsberrno == LSBE_CONN_REFUSED, "lsb_submit without daemons",
          "lsberrno %d", lsberrno);
}

/* A listing longer than one of mbatchd's pages: the count, every job once, `more`
 * counting down, array elements' indices; lsb_openjobinfo_a's ids. */
static void mode_pages(int expected) {
    int n, i, more = -1, last_more = -1, read = 0, ordered = 1, with_idx = 0;
    struct jobInfoEnt *e;
    struct jobInfoHead *head;
    CHECK(lsb_init("api_test") == 0, "lsb_init", "-1");
    n = lsb_openjobinfo(0, NULL, "all", NULL, NULL, ALL_JOB);
    CHECK(n == expected, "lsb_openjobinfo count", "%d, not %d", n, expected);
    for (i = 0; i < n; i++) {
        e = lsb_readjobinfo(&more);
        if (e == NULL)
            break;
        read++;
        if (last_more >= 0 && more != last_more - 1)
            ordered = 0;
        last_more = more;
        if (LSB_ARRAY_IDX(e->jobId) > 0)
            with_idx++;
    }
    CHECK(read == expected && more == 0 && ordered, "every job read, more counting down", "%d read, more %d",
          read, more);
    CHECK(with_idx == expected, "array elements carry their index", "%d", with_idx);
    CHECK(lsb_readjobinfo(&more) == NULL && lsberrno == LSBE_EOF, "then LSBE_EOF", "lsberrno %d", lsberrno);
    lsb_closejobinfo();
    head = lsb_openjobinfo_a(0, NULL, "all", NULL, NULL, ALL_JOB);
    CHECK(head != NULL && head->numJobs == expected && LSB_ARRAY_IDX(head->jobIds[expected - 1]) > 0,
          "lsb_openjobinfo_a ids", "%d", head ? head->numJobs : -1);
    e = lsb_readjobinfo(&more);
    CHECK(e != NULL && e->jobId == head->jobIds[0] && more == expected - 1, "read after lsb_openjobinfo_a",
          "more %d", more);
    lsb_closejobinfo();
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "init") == 0)
        mode_init();
    else if (argc >= 3 && strcmp(argv[1], "cycle") == 0)
        mode_cycle(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "denied") == 0)
        mode_denied(argv[2]);
    else if (argc >= 2 && strcmp(argv[1], "alloc") == 0)
        mode_alloc();
    else if (argc >= 2 && strcmp(argv[1], "nodaemon") == 0)
        mode_nodaemon();
    else if (argc >= 3 && strcmp(argv[1], "pages") == 0)
        mode_pages(atoi(argv[2]));
    else {
        fprintf(stderr, "usage: api_test init | cycle <dir> | denied <jobid> | alloc | nodaemon\n");
        return 2;
    }
    return failed;
}
