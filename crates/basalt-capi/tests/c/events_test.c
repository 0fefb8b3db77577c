/*
 * Basalt's C API test of lsb_geteventrec: reads lsb.events / lsb.acct the way
 * accounting tools and IBM's lsf-python-api examples do, and prints what it saw for
 * tests/tests/c_api_events.rs to check against what the test did.
 *
 *   events_test read <file>...    every record of each file: per record type a count,
 *                                 and one line per job record of interest
 *   events_test errors <file>     each call's result until LSBE_EOF: "rec <type> line
 *                                 <n>" or "err <lsberrno> line <n> <lsb_sysmsg()>"
 *   events_test byline <line>     lsb_geteventrecbyline on one line of text
 *
 * Prints "FAIL ..." and exits 1 when something the library returned is inconsistent.
 */
#include <lsf/lsbatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed = 0;

static void fail(const char *what) {
    printf("FAIL %s (lsberrno %d: %s)\n", what, lsberrno, lsb_sysmsg());
    failed = 1;
}

static const struct {
    int type;
    const char *name;
} NAMES[] = {
    {EVENT_JOB_NEW, "JOB_NEW"},
    {EVENT_JOB_START, "JOB_START"},
    {EVENT_JOB_STATUS, "JOB_STATUS"},
    {EVENT_JOB_SWITCH, "JOB_SWITCH"},
    {EVENT_JOB_MOVE, "JOB_MOVE"},
    {EVENT_QUEUE_CTRL, "QUEUE_CTRL"},
    {EVENT_HOST_CTRL, "HOST_CTRL"},
    {EVENT_MBD_DIE, "MBD_DIE"},
    {EVENT_JOB_FINISH, "JOB_FINISH"},
    {EVENT_LOAD_INDEX, "LOAD_INDEX"},
    {EVENT_CHKPNT, "CHKPNT"},
    {EVENT_MIG, "MIG"},
    {EVENT_PRE_EXEC_START, "PRE_EXEC_START"},
    {EVENT_MBD_START, "MBD_START"},
    {EVENT_JOB_MODIFY, "JOB_MODIFY"},
    {EVENT_JOB_SIGNAL, "JOB_SIGNAL"},
    {EVENT_JOB_FORWARD, "JOB_FORWARD"},
    {EVENT_JOB_ACCEPT, "JOB_ACCEPT"},
    {EVENT_JOB_EXECUTE, "JOB_EXECUTE"},
    {EVENT_JOB_REQUEUE, "JOB_REQUEUE"},
    {EVENT_JOB_SIGACT, "JOB_SIGACT"},
    {EVENT_JOB_START_ACCEPT, "JOB_START_ACCEPT"},
    {EVENT_JOB_CLEAN, "JOB_CLEAN"},
    {EVENT_JOB_FORCE, "JOB_FORCE"},
    {EVENT_LOG_SWITCH, "LOG_SWITCH"},
    {EVENT_JOB_MODIFY2, "JOB_MODIFY2"},
};
#define NTYPES ((int)(sizeof NAMES / sizeof NAMES[0]))

/* The last JOB_STATUS of each job. */
#define MAXJOBS 256
static struct {
    int jobId;
    int jStatus;
    int exitStatus;
    int exitInfo;
} last[MAXJOBS];
static int nlast = 0;

static void note_status(const struct jobStatusLog *s) {
    int i;
    for (i = 0; i < nlast; i++)
        if (last[i].jobId == s->jobId)
            break;
    if (i == nlast) {
        if (nlast == MAXJOBS)
            return;
        nlast++;
    }
    last[i].jobId = s->jobId;
    last[i].jStatus = s->jStatus;
    last[i].exitStatus = s->exitStatus;
    last[i].exitInfo = s->exitInfo;
}

static const char *first(char **v, int n) {
    return (n > 0 && v != NULL && v[0] != NULL) ? v[0] : "-";
}

/* One record: count it and print what the test checks. */
static void show(const struct eventRec *r, int *counts) {
    int i;
    const union eventLog *l = &r->eventLog;
    for (i = 0; i < NTYPES; i++)
        if (NAMES[i].type == r->type)
            counts[i]++;
    if (r->eventTime <= 0 || r->version[0] == '\0')
        fail("record header");
    switch (r->type) {
    case EVENT_JOB_NEW:
        printf("new %d user %s queue %s cmd %s\n", l->jobNewLog.jobId, l->jobNewLog.userName,
               l->jobNewLog.queue, l->jobNewLog.command ? l->jobNewLog.command : "(null)");
        break;
    case EVENT_JOB_START:
        printf("start %d host %s\n", l->jobStartLog.jobId,
               first(l->jobStartLog.execHosts, l->jobStartLog.numExHosts));
        break;
    case EVENT_JOB_STATUS:
        note_status(&l->jobStatusLog);
        break;
    case EVENT_JOB_SIGNAL:
        printf("signal %d %s by %s\n", l->signalLog.jobId, l->signalLog.signalSymbol,
               l->signalLog.userName);
        break;
    case EVENT_JOB_SWITCH:
        printf("switch %d %s\n", l->jobSwitchLog.jobId, l->jobSwitchLog.queue);
        break;
    case EVENT_QUEUE_CTRL:
        printf("qctrl %d %s by %s\n", l->queueCtrlLog.opCode, l->queueCtrlLog.queue,
               l->queueCtrlLog.userName);
        break;
    case EVENT_HOST_CTRL:
        printf("hctrl %d %s by %s\n", l->hostCtrlLog.opCode, l->hostCtrlLog.host,
               l->hostCtrlLog.userName);
        break;
    case EVENT_MBD_START:
        printf("mbdstart %s %s\n", l->mbdStartLog.cluster, l->mbdStartLog.master);
        break;
    case EVENT_JOB_FINISH:
        printf("finish %d user %s status %d exit %d hosts %d first %s queue %s\n",
               l->jobFinishLog.jobId, l->jobFinishLog.userName, l->jobFinishLog.jStatus,
               l->jobFinishLog.exitStatus, l->jobFinishLog.numExHosts,
               first(l->jobFinishLog.execHosts, l->jobFinishLog.numExHosts),
               l->jobFinishLog.queue);
        if (l->jobFinishLog.endTime != r->eventTime)
            fail("jobFinishLog.endTime");
        break;
    default:
        break;
    }
}

static void mode_read(int argc, char **argv) {
    int counts[NTYPES] = {0};
    int i, errors = 0;
    for (i = 0; i < argc; i++) {
        int lineNum = 0;
        FILE *fp = fopen(argv[i], "r");
        struct eventRec *r;
        if (fp == NULL) {
            printf("FAIL cannot open %s\n", argv[i]);
            failed = 1;
            continue;
        }
        for (;;) {
            r = lsb_geteventrec(fp, &lineNum);
            if (r != NULL) {
                show(r, counts);
                continue;
            }
            if (lsberrno == LSBE_EOF)
                break;
            printf("error %s line %d: %s\n", argv[i], lineNum, lsb_sysmsg());
            errors++;
        }
        printf("lines %s %d\n", argv[i], lineNum);
        fclose(fp);
    }
    for (i = 0; i < NTYPES; i++)
        if (counts[i] > 0)
            printf("count %s %d\n", NAMES[i].name, counts[i]);
    for (i = 0; i < nlast; i++)
        printf("final %d status %d exit %d exitInfo %d\n", last[i].jobId, last[i].jStatus,
               last[i].exitStatus, last[i].exitInfo);
    printf("errors %d\n", errors);
}

static void mode_errors(const char *path) {
    int lineNum = 0, calls = 0;
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        printf("FAIL cannot open %s\n", path);
        failed = 1;
        return;
    }
    for (calls = 0; calls < 100; calls++) {
        struct eventRec *r = lsb_geteventrec(fp, &lineNum);
        if (r != NULL) {
            printf("rec %d line %d\n", r->type, lineNum);
            continue;
        }
        if (lsberrno == LSBE_EOF) {
            printf("eof line %d\n", lineNum);
            break;
        }
        printf("err %d line %d %s\n", lsberrno, lineNum, lsb_sysmsg());
    }
    fclose(fp);
    if (lsb_geteventrec(NULL, &lineNum) != NULL || lsberrno != LSBE_BAD_ARG)
        fail("lsb_geteventrec(NULL)");
}

static void mode_byline(char *line) {
    struct eventRec rec;
    memset(&rec, 0, sizeof rec);
    if (lsb_geteventrecbyline(line, &rec) != 0) {
        printf("byline err %d\n", lsberrno);
        return;
    }
    printf("byline type %d version %s time %ld\n", rec.type, rec.version, (long)rec.eventTime);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: events_test read <file>... | errors <file> | byline <line>\n");
        return 2;
    }
    if (lsb_init("events_test") != 0)
        fail("lsb_init");
    if (strcmp(argv[1], "read") == 0)
        mode_read(argc - 2, argv + 2);
    else if (strcmp(argv[1], "errors") == 0)
        mode_errors(argv[2]);
    else if (strcmp(argv[1], "byline") == 0)
        mode_byline(argv[2]);
    else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    fflush(stdout);
    return failed;
}
