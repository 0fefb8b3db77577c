/*
 * Basalt's C API test program for the batch information and administration calls:
 * calls them the way pythonlsf's helpers and site tools do (a count of 0 for all, a
 * NULL list with a count of 1 for "mine", named lists, lsberrno after a failure). Run
 * by tests/tests/c_api_info.rs against a running cluster (LSF_ENVDIR set). Each mode
 * prints "ok <what>" lines and exits 0, or prints "FAIL <what>: ..." and exits 1.
 *
 *   info_test query <nhosts> <user>  queues, hosts, users, parameters, bad names and
 *                                    arguments; no group or application profile yet
 *   info_test local <host>           lsb_hostinfo(NULL, 1): this host (BASALT_HOST)
 *   info_test groups <user>          host and user groups, users, application profiles
 *   info_test ckconfig               lsb_reconfig(MBD_CKCONFIG)
 *   info_test reconfig               lsb_reconfig(MBD_RECONFIG)
 *   info_test qctl <queue> close|open|inact|act
 *   info_test hctl <host> close|open
 *   info_test denied <queue> <host>  a non-administrator: LSBE_PERMISSION
 */
#include <lsf/lsbatch.h>
#include <lsf/lsf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static float absf(float x) { return x < 0 ? -x : x; }

static int same(const char *a, const char *b) { return a != NULL && b != NULL && strcmp(a, b) == 0; }

static struct queueInfoEnt *find_queue(struct queueInfoEnt *q, int n, const char *name) {
    for (int i = 0; q != NULL && i < n; i++)
        if (same(q[i].queue, name))
            return &q[i];
    return NULL;
}

/* One queue by name (NULL on failure). */
static struct queueInfoEnt *one_queue(char *name) {
    char *names[] = {name};
    int n = 1;
    struct queueInfoEnt *q = lsb_queueinfo(names, &n, NULL, NULL, 0);
    return (q != NULL && n == 1) ? q : NULL;
}

/* One host by name (NULL on failure). */
static struct hostInfoEnt *one_host(char *name) {
    char *names[] = {name};
    int n = 1;
    struct hostInfoEnt *h = lsb_hostinfo(names, &n);
    return (h != NULL && n == 1) ? h : NULL;
}

static void mode_queues(void) {
    int n = 0;
    struct queueInfoEnt *q = lsb_queueinfo(NULL, &n, NULL, NULL, 0);
    CHECK(q != NULL && n == 3, "lsb_queueinfo all", "%p, %d queues", (void *)q, n);
    struct queueInfoEnt *normal = find_queue(q, n, "normal");
    struct queueInfoEnt *idle = find_queue(q, n, "idle");
    CHECK(normal && idle && find_queue(q, n, "priority"), "lsb_queueinfo names",
          "normal %p idle %p", (void *)normal, (void *)idle);
    if (normal) {
        CHECK(normal->priority == 30 && strstr(normal->description, "normal low priority") != NULL,
              "queueInfoEnt priority, description", "%d <%s>", normal->priority, normal->description);
        CHECK((normal->qAttrib & Q_ATTRIB_DEFAULT) && (normal->qAttrib & Q_ATTRIB_EXCLUSIVE),
              "queueInfoEnt qAttrib", "%#x", normal->qAttrib);
        CHECK((normal->qStatus & (QUEUE_STAT_OPEN | QUEUE_STAT_ACTIVE | QUEUE_STAT_RUN)) ==
                  (QUEUE_STAT_OPEN | QUEUE_STAT_ACTIVE | QUEUE_STAT_RUN),
              "queueInfoEnt qStatus", "%#x", normal->qStatus);
        CHECK(normal->userJobLimit == INFINIT_INT && normal->maxJobs == INFINIT_INT &&
                  normal->procJobLimit >= INFINIT_FLOAT && normal->rLimits[LSF_RLIMIT_RUN] == DEFAULT_RLIMIT,
              "queueInfoEnt no limits", "JL/U %d MAX %d RUN %d", normal->userJobLimit, normal->maxJobs,
              normal->rLimits[LSF_RLIMIT_RUN]);
        CHECK(normal->userList && normal->hostList && normal->windows && normal->windowsD &&
                  normal->preCmd && normal->postCmd && normal->admins && normal->qCtrlMsg,
              "queueInfoEnt strings are not NULL", "a NULL string");
    }
    if (idle) {
        CHECK(idle->nIdx >= 11 && absf(idle->loadSched[R15S] - 0.3f) < 1e-6 &&
                  absf(idle->loadStop[R15S] - 1.0f) < 1e-6 && absf(idle->loadSched[R1M] - 0.3f) < 1e-6 &&
                  idle->loadSched[UT] >= INFINIT_LOAD && idle->loadSched[MEM] <= -INFINIT_LOAD,
              "queueInfoEnt loadSched/loadStop", "nIdx %d r15s %g/%g", idle->nIdx,
              idle->nIdx > 0 ? idle->loadSched[R15S] : -1.0, idle->nIdx > 0 ? idle->loadStop[R15S] : -1.0);
    }

    char *two[] = {"idle", "normal"};
    n = 2;
    q = lsb_queueinfo(two, &n, NULL, NULL, 0);
    CHECK(q != NULL && n == 2 && same(q[0].queue, "idle") && same(q[1].queue, "normal"),
          "lsb_queueinfo named, in order", "%d", n);
    n = 1;
    q = lsb_queueinfo(NULL, &n, NULL, NULL, 0);
    CHECK(q != NULL && n == 1 && same(q[0].queue, "normal"), "lsb_queueinfo default queue",
          "%d %s", n, q ? q[0].queue : "-");
    char *bad[] = {"normal", "no_such_queue"};
    n = 2;
    q = lsb_queueinfo(bad, &n, NULL, NULL, 0);
    CHECK(q == NULL && lsberrno == LSBE_BAD_QUEUE && n == 1, "lsb_queueinfo bad queue",
          "%p, numQueues %d", (void *)q, n);
    n = 0;
    q = lsb_queueinfo(NULL, &n, "hostA", NULL, 0);
    CHECK(q != NULL && n == 3, "lsb_queueinfo for a host", "%d", n);
    n = 0;
    q = lsb_queueinfo(NULL, &n, "no_such_host", NULL, 0);
    CHECK(q == NULL && lsberrno == LSBE_BAD_HOST, "lsb_queueinfo bad host", "%p", (void *)q);
    n = 0;
    q = lsb_queueinfo(NULL, &n, NULL, "no_such_user_x", 0);
    CHECK(q == NULL && lsberrno == LSBE_BAD_USER, "lsb_queueinfo bad user", "%p", (void *)q);
}

static void mode_hosts(int nhosts) {
    int n = 0;
    struct hostInfoEnt *h = lsb_hostinfo(NULL, &n);
    CHECK(h != NULL && n == nhosts, "lsb_hostinfo all", "%d hosts, want %d", n, nhosts);
    for (int i = 0; h != NULL && i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "hostInfoEnt %s", h[i].host);
        CHECK(h[i].host[0] == 'h' && LSB_HOST_OK(h[i].hStatus) && h[i].nIdx >= 11 && h[i].load != NULL &&
                  h[i].loadSched != NULL && h[i].busySched != NULL && h[i].hCtrlMsg != NULL &&
                  h[i].windows != NULL && h[i].maxJobs > 0 && h[i].cpuFactor > 0,
              what, "status %#x nIdx %d max %d", h[i].hStatus, h[i].nIdx, h[i].maxJobs);
    }
    h = one_host("hostB");
    CHECK(h != NULL && same(h->host, "hostB"), "lsb_hostinfo named", "%p", (void *)h);
    char *bad[] = {"hostA", "no_such_host"};
    n = 2;
    h = lsb_hostinfo(bad, &n);
    CHECK(h == NULL && lsberrno == LSBE_BAD_HOST && n == 1, "lsb_hostinfo bad host",
          "%p numHosts %d", (void *)h, n);

    n = 0;
    h = lsb_hostinfo_ex(NULL, &n, "select[type==any]", 0);
    CHECK(h != NULL && n == nhosts, "lsb_hostinfo_ex all", "%d", n);
    n = 0;
    h = lsb_hostinfo_ex(NULL, &n, "hname==hostB", 0);
    CHECK(h != NULL && n == 1 && same(h[0].host, "hostB"), "lsb_hostinfo_ex select", "%d", n);
    n = 0;
    h = lsb_hostinfo_ex(NULL, &n, "select[", 0);
    CHECK(h == NULL && lsberrno == LSBE_BAD_RESREQ, "lsb_hostinfo_ex bad resReq", "%p", (void *)h);
    n = 0;
    h = lsb_hostinfo_ex(NULL, &n, "hname==no_such_host", 0);
    CHECK(h == NULL && lsberrno == LSBE_NO_ENOUGH_HOST, "lsb_hostinfo_ex no host", "%p", (void *)h);
}

static void mode_users(const char *me) {
    int n = 1;
    struct userInfoEnt *u = lsb_userinfo(NULL, &n);
    CHECK(u != NULL && n == 1 && same(u->user, me), "lsb_userinfo caller", "%d %s", n, u ? u->user : "-");
    if (u)
        CHECK(u->maxJobs == INFINIT_INT && u->procJobLimit >= INFINIT_FLOAT && u->numJobs == 0,
              "userInfoEnt no limits", "MAX %d JL/P %g NJOBS %d", u->maxJobs, u->procJobLimit, u->numJobs);
    char *bad[] = {"no_such_user_x"};
    n = 1;
    u = lsb_userinfo(bad, &n);
    CHECK(u == NULL && lsberrno == LSBE_BAD_USER && n == 0, "lsb_userinfo bad user", "%p %d", (void *)u, n);
}

static void mode_params(void) {
    struct parameterInfo *p = lsb_parameterinfo(NULL, NULL, 0);
    CHECK(p != NULL, "lsb_parameterinfo", "NULL");
    if (p)
        CHECK(same(p->defaultQueues, "normal") && p->cleanPeriod == 3600 && p->mbatchdInterval > 0 &&
                  p->sbatchdInterval > 0 && p->defaultHostSpec != NULL && p->defaultApp != NULL,
              "parameterInfo", "DEFAULT_QUEUE <%s> CLEAN_PERIOD %d MBD_SLEEP_TIME %d", p->defaultQueues,
              p->cleanPeriod, p->mbatchdInterval);
}

/* Refusals that change nothing. */
static void mode_bad_requests(void) {
    struct queueCtrlReq qr = {"no_such_queue", QUEUE_CLOSED, ""};
    CHECK(lsb_queuecontrol(&qr) == -1 && lsberrno == LSBE_BAD_QUEUE, "lsb_queuecontrol bad queue", "failed");
    struct queueCtrlReq clean = {"normal", QUEUE_CLEAN, ""};
    CHECK(lsb_queuecontrol(&clean) == -1 && lsberrno == LSBE_BAD_ARG, "lsb_queuecontrol QUEUE_CLEAN", "failed");
    struct hostCtrlReq hr = {"no_such_host", HOST_CLOSE, ""};
    CHECK(lsb_hostcontrol(&hr) == -1 && lsberrno == LSBE_BAD_HOST, "lsb_hostcontrol bad host", "failed");
    struct hostCtrlReq remote = {"hostA", HOST_CLOSE_REMOTE, ""};
    CHECK(lsb_hostcontrol(&remote) == -1 && lsberrno == LSBE_BAD_ARG, "lsb_hostcontrol HOST_CLOSE_REMOTE", "failed");
    struct mbdCtrlReq m = {99, NULL, NULL};
    CHECK(lsb_reconfig(&m) == -1 && lsberrno == LSBE_BAD_ARG, "lsb_reconfig bad opCode", "failed");
    struct mbdCtrlReq said = {MBD_RECONFIG, "mbd", "a comment"};
    CHECK(lsb_reconfig(&said) == -1 && lsberrno == LSBE_BAD_ARG, "lsb_reconfig message", "failed");
    CHECK(lsb_queuecontrol(NULL) == -1 && lsberrno == LSBE_BAD_ARG, "lsb_queuecontrol NULL", "failed");
}

/* Before any group or profile is configured. */
static void mode_nothing_configured(void) {
    int n = 0;
    CHECK(lsb_hostgrpinfo(NULL, &n, GRP_ALL) == NULL && lsberrno == LSBE_NO_HOST_GROUP,
          "lsb_hostgrpinfo none configured", "failed");
    n = 0;
    CHECK(lsb_usergrpinfo(NULL, &n, GRP_ALL) == NULL && lsberrno == LSBE_NO_USER_GROUP,
          "lsb_usergrpinfo none configured", "failed");
    n = 5;
    CHECK(lsb_appInfo(&n) == NULL && lsberrno == LSBE_APP_NULL && n == 0, "lsb_appInfo none configured",
          "%d", n);
}

static void mode_groups(const char *me) {
    int n = 0;
    struct groupInfoEnt *g = lsb_hostgrpinfo(NULL, &n, GRP_ALL);
    CHECK(g != NULL && n == 1 && same(g[0].group, "hg_ab") && same(g[0].memberList, "hostA hostB"),
          "lsb_hostgrpinfo all", "%d <%s>", n, g ? g[0].memberList : "-");
    char *names[] = {"hg_ab"};
    n = 1;
    g = lsb_hostgrpinfo(names, &n, 0);
    CHECK(g != NULL && n == 1 && same(g[0].group, "hg_ab"), "lsb_hostgrpinfo named", "%d", n);
    char *bad[] = {"no_such_group"};
    n = 1;
    g = lsb_hostgrpinfo(bad, &n, 0);
    CHECK(g == NULL && lsberrno == LSBE_BAD_GROUP && n == 0, "lsb_hostgrpinfo bad group", "%d", n);
    char *then_bad[] = {"hg_ab", "no_such_group"};
    n = 2;
    g = lsb_hostgrpinfo(then_bad, &n, 0);
    CHECK(g != NULL && n == 1 && lsberrno == LSBE_BAD_GROUP && same(g[0].group, "hg_ab"),
          "lsb_hostgrpinfo the groups before a bad one", "%p %d", (void *)g, n);

    n = 0;
    g = lsb_usergrpinfo(NULL, &n, GRP_ALL);
    CHECK(g != NULL && n == 2, "lsb_usergrpinfo all", "%d", n);
    if (g != NULL && n == 2) {
        struct groupInfoEnt *ug = same(g[0].group, "ug1") ? &g[0] : &g[1];
        struct groupInfoEnt *top = same(g[0].group, "ug1") ? &g[1] : &g[0];
        CHECK(same(ug->memberList, me) && ug->numUserShares == 2 && same(ug->userShares[0].user, me) &&
                  ug->userShares[0].shares == 3 && same(ug->userShares[1].user, "default") &&
                  ug->userShares[1].shares == 1 && same(ug->adminMemberList, me),
              "groupInfoEnt ug1", "<%s> shares %d admins <%s>", ug->memberList, ug->numUserShares,
              ug->adminMemberList);
        CHECK(same(top->group, "ug_top") && same(top->memberList, "ug1/"), "groupInfoEnt subgroup",
              "%s <%s>", top->group, top->memberList);
    }
    char *top[] = {"ug_top"};
    n = 1;
    g = lsb_usergrpinfo(top, &n, GRP_RECURSIVE);
    CHECK(g != NULL && n == 1 && same(g[0].memberList, me), "lsb_usergrpinfo GRP_RECURSIVE", "<%s>",
          g ? g[0].memberList : "-");

    n = 0;
    struct userInfoEnt *u = lsb_userinfo(NULL, &n);
    int found = 0;
    for (int i = 0; u != NULL && i < n; i++)
        if (same(u[i].user, me) && u[i].maxJobs == 10)
            found = 1;
    CHECK(found, "lsb_userinfo all", "%d users, %s with MAX_JOBS 10 not among them", n, me);
    char *grp[] = {"ug1"};
    n = 1;
    u = lsb_userinfo(grp, &n);
    CHECK(u != NULL && n == 1 && same(u->user, "ug1"), "lsb_userinfo a user group", "%d", n);

    n = 0;
    struct appInfoEnt *a = lsb_appInfo(&n);
    CHECK(a != NULL && n == 2, "lsb_appInfo", "%d", n);
    struct appInfoEnt *fluent = NULL;
    for (int i = 0; a != NULL && i < n; i++)
        if (same(a[i].name, "fluent"))
            fluent = &a[i];
    CHECK(fluent != NULL && same(fluent->description, "CFD runs") &&
              fluent->defLimits[LSF_RLIMIT_RUN] == 30 * 60 && (fluent->aAttrib & A_ATTRIB_RERUNNABLE) &&
              same(fluent->preCmd, "/bin/true") && fluent->numJobs == 0,
          "appInfoEnt fluent", "%s", fluent ? fluent->description : "missing");
    lsb_freeAppInfoEnts(n, a);
    n = 0;
    a = lsb_appInfo(&n);
    CHECK(a != NULL && n == 2, "lsb_appInfo after lsb_freeAppInfoEnts", "%d", n);
}

static void mode_qctl(char *queue, const char *what) {
    struct queueCtrlReq r = {queue, 0, "info_test says so"};
    int want_bit, want_set;
    if (same(what, "close")) {
        r.opCode = QUEUE_CLOSED, want_bit = QUEUE_STAT_OPEN, want_set = 0;
    } else if (same(what, "open")) {
        r.opCode = QUEUE_OPEN, want_bit = QUEUE_STAT_OPEN, want_set = 1;
    } else if (same(what, "inact")) {
        r.opCode = QUEUE_INACTIVATE, want_bit = QUEUE_STAT_ACTIVE, want_set = 0;
    } else {
        r.opCode = QUEUE_ACTIVATE, want_bit = QUEUE_STAT_ACTIVE, want_set = 1;
    }
    CHECK(lsb_queuecontrol(&r) == 0, "lsb_queuecontrol", "%s %s", queue, what);
    struct queueInfoEnt *q = one_queue(queue);
    CHECK(q != NULL && ((q->qStatus & want_bit) != 0) == want_set && same(q->qCtrlMsg, "info_test says so"),
          "lsb_queuecontrol seen in qStatus", "%#x <%s>", q ? q->qStatus : -1, q ? q->qCtrlMsg : "-");
}

static void mode_hctl(char *host, const char *what) {
    int closing = same(what, "close");
    struct hostCtrlReq r = {host, closing ? HOST_CLOSE : HOST_OPEN, closing ? "info_test closed it" : ""};
    CHECK(lsb_hostcontrol(&r) == 0, "lsb_hostcontrol", "%s %s", host, what);
    struct hostInfoEnt *h = one_host(host);
    CHECK(h != NULL && (closing ? (h->hStatus & HOST_STAT_DISABLED) != 0 : LSB_HOST_OK(h->hStatus)),
          "lsb_hostcontrol seen in hStatus", "%#x", h ? h->hStatus : -1);
    if (closing && h)
        CHECK(same(h->hCtrlMsg, "info_test closed it") && LSB_HOST_CLOSED(h->hStatus), "hostInfoEnt hCtrlMsg",
              "<%s>", h->hCtrlMsg);
}

static void mode_denied(char *queue, char *host) {
    int n = 0;
    CHECK(lsb_queueinfo(NULL, &n, NULL, NULL, 0) != NULL && n == 3, "a non-administrator may query", "%d", n);
    struct queueCtrlReq qr = {queue, QUEUE_CLOSED, ""};
    CHECK(lsb_queuecontrol(&qr) == -1 && lsberrno == LSBE_PERMISSION, "lsb_queuecontrol denied", "failed");
    struct hostCtrlReq hr = {host, HOST_CLOSE, ""};
    CHECK(lsb_hostcontrol(&hr) == -1 && lsberrno == LSBE_PERMISSION, "lsb_hostcontrol denied", "failed");
    struct mbdCtrlReq m = {MBD_RECONFIG, NULL, NULL};
    CHECK(lsb_reconfig(&m) == -1 && lsberrno == LSBE_PERMISSION, "lsb_reconfig denied", "failed");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: info_test mode ...\n");
        return 2;
    }
    CHECK(lsb_init("info_test") == 0, "lsb_init", "returned -1");
    const char *mode = argv[1];
    if (same(mode, "query") && argc == 4) {
        mode_queues();
        mode_hosts(atoi(argv[2]));
        mode_users(argv[3]);
        mode_params();
        mode_bad_requests();
        mode_nothing_configured();
    } else if (same(mode, "local") && argc == 3) {
        int n = 1;
        struct hostInfoEnt *h = lsb_hostinfo(NULL, &n);
        CHECK(h != NULL && n == 1 && same(h->host, argv[2]), "lsb_hostinfo this host", "%d %s", n,
              h ? h->host : "-");
    } else if (same(mode, "groups") && argc == 3) {
        mode_groups(argv[2]);
    } else if (same(mode, "ckconfig")) {
        struct mbdCtrlReq m = {MBD_CKCONFIG, NULL, NULL};
        CHECK(lsb_reconfig(&m) == 0, "lsb_reconfig MBD_CKCONFIG", "failed");
    } else if (same(mode, "reconfig")) {
        struct mbdCtrlReq m = {MBD_RECONFIG, "mbd", ""};
        CHECK(lsb_reconfig(&m) == 0, "lsb_reconfig MBD_RECONFIG", "failed");
    } else if (same(mode, "qctl") && argc == 4) {
        mode_qctl(argv[2], argv[3]);
    } else if (same(mode, "hctl") && argc == 4) {
        mode_hctl(argv[2], argv[3]);
    } else if (same(mode, "denied") && argc == 4) {
        mode_denied(argv[2], argv[3]);
    } else {
        fprintf(stderr, "info_test: bad mode or arguments\n");
        return 2;
    }
    return failed;
}
