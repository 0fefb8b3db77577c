/*
 * lsf/lsbatch.h -- Basalt's LSF batch API (libbat): jobs, queues, hosts, events and
 * LSF's batch error codes (lsberrno, LSBE_*).
 *
 * Written for Basalt from LSF 10.1's documented API so that programs written for LSF
 * compile unchanged; see docs/user-guide.md, "C API".
 */
#ifndef LSBATCH_H
#define LSBATCH_H

#include <lsf/lsf.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Job ids: an array element's index lives in the upper 32 bits of its 64-bit id. */
#define LSB_JOBID(id, idx) ((LS_LONG_INT)(((LS_UNS_LONG_INT)(idx) << 32) | (LS_UNS_LONG_INT)(unsigned int)(id)))
#define LSB_ARRAY_IDX(jobId) (((jobId) == -1) ? 0 : (int)(((LS_UNS_LONG_INT)(jobId) >> 32) & 0xFFFF))
#define LSB_ARRAY_JOBID(jobId) (((jobId) == -1) ? -1 : (int)((jobId) & 0xFFFFFFFF))
#define MAX_LEN_JOBID 128

/* Job states (jobInfoEnt.status). */
#define JOB_STAT_NULL 0x00
#define JOB_STAT_PEND 0x01
#define JOB_STAT_PSUSP 0x02
#define JOB_STAT_RUN 0x04
#define JOB_STAT_SSUSP 0x08
#define JOB_STAT_USUSP 0x10
#define JOB_STAT_EXIT 0x20
#define JOB_STAT_DONE 0x40
#define JOB_STAT_PDONE 0x80
#define JOB_STAT_PERR 0x100
#define JOB_STAT_WAIT 0x200
#define JOB_STAT_RUNKWN 0x8000
#define JOB_STAT_UNKWN 0x10000
#define JOB_STAT_PROV 0x20000
#define IS_PEND(s) (((s) & JOB_STAT_PEND) || ((s) & JOB_STAT_PSUSP))
#define IS_START(s) (((s) & JOB_STAT_RUN) || ((s) & JOB_STAT_SSUSP) || ((s) & JOB_STAT_USUSP))
#define IS_FINISH(s) (((s) & JOB_STAT_DONE) || ((s) & JOB_STAT_EXIT))
#define IS_SUSP(s) (((s) & JOB_STAT_PSUSP) || ((s) & JOB_STAT_SSUSP) || ((s) & JOB_STAT_USUSP))

/* Resource limits (submit.rLimits[]): CPU and RUN in seconds, sizes in KB. */
#define LSF_RLIMIT_CPU 0
#define LSF_RLIMIT_FSIZE 1
#define LSF_RLIMIT_DATA 2
#define LSF_RLIMIT_STACK 3
#define LSF_RLIMIT_CORE 4
#define LSF_RLIMIT_RSS 5
#define LSF_RLIMIT_NOFILE 6
#define LSF_RLIMIT_OPEN_MAX 7
#define LSF_RLIMIT_VMEM 8
#define LSF_RLIMIT_SWAP LSF_RLIMIT_VMEM
#define LSF_RLIMIT_RUN 9
#define LSF_RLIMIT_PROCESS 10
#define LSF_RLIMIT_THREAD 11
#define LSF_RLIM_NLIMITS 12
#define DEFAULT_RLIMIT -1
/* lsb_modify: reset a limit, begin or termination time to its default (bmod -Xn). */
#define DELETE_NUMBER -2
/* lsb_modify: reset numProcessors (bmod -nn). */
#define DEL_NUMPRO INFINIT_INT
#define DEFAULT_NUMPRO (INFINIT_INT - 1)

/* submit.options. */
#define SUB_JOB_NAME 0x01
#define SUB_QUEUE 0x02
#define SUB_HOST 0x04
#define SUB_IN_FILE 0x08
#define SUB_OUT_FILE 0x10
#define SUB_ERR_FILE 0x20
#define SUB_EXCLUSIVE 0x40
#define SUB_NOTIFY_END 0x80
#define SUB_NOTIFY_BEGIN 0x100
#define SUB_USER_GROUP 0x200
#define SUB_CHKPNT_PERIOD 0x400
#define SUB_CHKPNT_DIR 0x800
#define SUB_CHKPNTABLE SUB_CHKPNT_DIR
#define SUB_RESTART_FORCE 0x1000
#define SUB_RESTART 0x2000
#define SUB_RERUNNABLE 0x4000
#define SUB_WINDOW_SIG 0x8000
#define SUB_HOST_SPEC 0x10000
#define SUB_DEPEND_COND 0x20000
#define SUB_RES_REQ 0x40000
#define SUB_OTHER_FILES 0x80000
#define SUB_PRE_EXEC 0x100000
#define SUB_LOGIN_SHELL 0x200000
#define SUB_MAIL_USER 0x400000
#define SUB_MODIFY 0x800000
#define SUB_MODIFY_ONCE 0x1000000
#define SUB_PROJECT_NAME 0x2000000
#define SUB_INTERACTIVE 0x4000000
#define SUB_PTY 0x8000000
#define SUB_PTY_SHELL 0x10000000
#define SUB_EXCEPT 0x20000000
#define SUB_TIME_EVENT 0x40000000

/* submit.options2. */
#define SUB2_HOLD 0x01
#define SUB2_MODIFY_CMD 0x02
#define SUB2_BSUB_BLOCK 0x04
#define SUB2_HOST_NT 0x08
#define SUB2_HOST_UX 0x10
#define SUB2_QUEUE_CHKPNT 0x20
#define SUB2_QUEUE_RERUNNABLE 0x40
#define SUB2_IN_FILE_SPOOL 0x80
#define SUB2_JOB_CMD_SPOOL 0x100
#define SUB2_JOB_PRIORITY 0x200
#define SUB2_USE_DEF_PROCLIMIT 0x400
#define SUB2_MODIFY_RUN_JOB 0x800
#define SUB2_MODIFY_PEND_JOB 0x1000
#define SUB2_WARNING_TIME_PERIOD 0x2000
#define SUB2_WARNING_ACTION 0x4000
#define SUB2_USE_RSV 0x8000
#define SUB2_TSJOB 0x10000
#define SUB2_LSF2TP 0x20000
#define SUB2_JOB_GROUP 0x40000
#define SUB2_SLA 0x80000
#define SUB2_EXTSCHED 0x100000
#define SUB2_LICENSE_PROJECT 0x200000
#define SUB2_OVERWRITE_OUT_FILE 0x400000
#define SUB2_OVERWRITE_ERR_FILE 0x800000

/* submit.options3. */
#define SUB3_APP 0x01
#define SUB3_APP_RERUNNABLE 0x02
#define SUB3_ABSOLUTE_PRIORITY 0x04
#define SUB3_DEFAULT_JOBGROUP 0x08
#define SUB3_POST_EXEC 0x10
#define SUB3_USER_SHELL_LIMITS 0x20
#define SUB3_CWD 0x40
#define SUB3_RUNTIME_ESTIMATION 0x80
#define SUB3_NOT_RERUNNABLE 0x100
#define SUB3_JOB_REQUEUE 0x200
#define SUB3_INIT_CHKPNT_PERIOD 0x400
#define SUB3_MIG_THRESHOLD 0x800
#define SUB3_APP_CHKPNT_DIR 0x1000

/* File transfer (submit.xf[], bsub -f). */
#define XF_OP_SUB2EXEC 0x1
#define XF_OP_EXEC2SUB 0x2
#define XF_OP_SUB2EXEC_APPEND 0x4
#define XF_OP_EXEC2SUB_APPEND 0x8
#define XF_OP_URL_SOURCE 0x10
#define XF_OP_URL_TARGET 0x20

struct xFile {
    char *subFn;
    char *execFn;
    int options;
};

/* A job to submit (lsb_submit) or a change (lsb_modify). Unset strings are NULL (or
 * ""), unset numbers 0, unset limits DEFAULT_RLIMIT; options* say which fields count. */
struct submit {
    int options;
    int options2;
    char *jobName;
    char *queue;
    int numAskedHosts;
    char **askedHosts;
    char *resReq;
    int rLimits[LSF_RLIM_NLIMITS];
    char *hostSpec;
    int numProcessors;
    char *dependCond;
    char *timeEvent;
    time_t beginTime;
    time_t termTime;
    int sigValue;
    char *inFile;
    char *outFile;
    char *errFile;
    char *command;
    char *newCommand;
    time_t chkpntPeriod;
    char *chkpntDir;
    int nxf;
    struct xFile *xf;
    char *preExecCmd;
    char *mailUser;
    int delOptions;
    int delOptions2;
    char *projectName;
    int maxNumProcessors;
    char *loginShell;
    char *userGroup;
    char *exceptList;
    int userPriority;
    char *rsvId;
    char *jobGroup;
    char *sla;
    char *extsched;
    int warningTimePeriod;
    char *warningAction;
    char *licenseProject;
    int options3;
    int delOptions3;
    char *app;
    int jsdlFlag;
    char *jsdlDoc;
    void *correlator;
    char *apsString;
    char *postExecCmd;
    char *cwd;
    int runtimeEstimation;
    char *requeueEValues;
    int initChkpntPeriod;
    int migThreshold;
    char *notifyCmd;
    char *jobDescription;
    void *submitExt;
};

/* lsb_submit's answer beyond the job id: the queue it went to, or on failure what
 * was wrong (badReqIndx: the option; badJobId: the dependency's job). */
struct submitReply {
    char *queue;
    LS_LONG_INT badJobId;
    char *badJobName;
    int badReqIndx;
};

/* A process of a job. */
struct pidInfo {
    int pid;
    int ppid;
    int pgid;
    int jobid;
};

/* A running job's resource usage: mem and swap in KB, times in seconds. */
struct jRusage {
    int mem;
    int swap;
    int utime;
    int stime;
    int npids;
    struct pidInfo *pidInfo;
    int npgids;
    int *pgid;
    int nthreads;
};

#define NUM_JGRP_COUNTERS 11

/* A message posted to a job (bpost); Basalt's jobs have none. */
struct jobExternalMsgReply {
    LS_LONG_INT jobId;
    int msgId;
    int msgIdx;
    char *desc;
    int userId;
    long dataSize;
    time_t postTime;
    int dataStatus;
    char *userName;
};

/* A job as lsb_readjobinfo returns it. Times in seconds since the epoch; duration in
 * minutes; exitStatus a wait status (exit code << 8); runRusage.mem/swap in KB. */
struct jobInfoEnt {
    LS_LONG_INT jobId;
    char *user;
    int status;
    int *reasonTb;
    int numReasons;
    int reasons;
    int subreasons;
    int jobPid;
    time_t submitTime;
    time_t reserveTime;
    time_t startTime;
    time_t predictedStartTime;
    time_t endTime;
    time_t lastEvent;
    time_t nextEvent;
    int duration;
    float cpuTime;
    int umask;
    char *cwd;
    char *subHomeDir;
    char *fromHost;
    char **exHosts;
    int numExHosts;
    float cpuFactor;
    int nIdx;
    float *loadSched;
    float *loadStop;
    struct submit submit;
    int exitStatus;
    int execUid;
    char *execHome;
    char *execCwd;
    char *execUsername;
    time_t jRusageUpdateTime;
    struct jRusage runRusage;
    int jType;
    char *parentGroup;
    char *jName;
    int counter[NUM_JGRP_COUNTERS];
    unsigned short port;
    int jobPriority;
    int numExternalMsg;
    struct jobExternalMsgReply **externalMsg;
    int clusterId;
    char *detailReason;
    float idleFactor;
    int exceptMask;
    char *additionalInfo;
    int exitInfo;
    int warningTimePeriod;
    char *warningAction;
    char *chargedSAAP;
    char *execRusage;
    time_t rsvInActive;
    int numLicense;
    char **licenseNames;
    float aps;
    float adminAps;
    int runTime;
    int reserveCnt;
    float adminFactorVal;
    int resizeMin;
    int resizeMax;
    time_t resizeReqTime;
    int jStartNumExHosts;
    char **jStartExHosts;
    time_t lastResizeTime;
    int maxMem;
    int avgMem;
    char *app;
    char *queue;
    char *projectName;
};

/* jobInfoEnt.jType. */
#define JGRP_NODE_JOB 1
#define JGRP_NODE_GROUP 2
#define JGRP_NODE_ARRAY 3

/* lsb_openjobinfo_a's header. */
struct jobInfoHead {
    int numJobs;
    LS_LONG_INT *jobIds;
    int numHosts;
    char **hostNames;
    int numClusters;
    char **clusterNames;
    int *numRemoteHosts;
    char ***remoteHosts;
};

/* lsb_openjobinfo options: which jobs. */
#define ALL_JOB 0x0001
#define DONE_JOB 0x0002
#define PEND_JOB 0x0004
#define SUSP_JOB 0x0008
#define CUR_JOB 0x0010
#define LAST_JOB 0x0020
#define RUN_JOB 0x0040
#define JOBID_ONLY 0x0080
#define HOST_NAME 0x0100
#define NO_PEND_REASONS 0x0200
#define JGRP_INFO 0x0400
#define JGRP_RECURSIVE 0x0800
#define JGRP_ARRAY_INFO 0x1000
#define JOBID_ONLY_ALL 0x02000
#define ZOMBIE_JOB 0x04000
#define TRANSPARENT_MC 0x08000
#define EXCEPT_JOB 0x10000
#define MUREX_JOB 0x20000
#define TO_SYM_UA 0x40000
#define SYM_TOP_LEVEL_ONLY 0x80000
#define JGRP_NAME 0x100000
#define COND_HOSTNAME 0x200000
#define FROM_BJOBSCMD 0x400000
#define WITH_LOG_DIR 0x800000
#define JOBINFO_NOPEND_REASON 0x1000000
#define UNKNOWN_JOB 0x2000000

/* lsb_killbulkjobs and lsb_deletejob options. */
#define KILL_ALL_JOBS 0x1
#define FORCE_KILL_JOB 0x2

/* A set of jobs to kill (lsb_killbulkjobs). */
struct signalBulkJobs {
    int signal;
    int njobs;
    LS_LONG_INT *jobs;
    int flags;
};

/* lsb_requeuejob. */
#define REQUEUE_DONE 0x1
#define REQUEUE_EXIT 0x2
#define REQUEUE_RUN 0x4
struct jobrequeue {
    LS_LONG_INT jobId;
    int status;
    int options;
};

/* lsb_mig. */
struct submig {
    LS_LONG_INT jobId;
    int options;
    int numAskedHosts;
    char **askedHosts;
};

/* lsb_chkpntjob options. */
#define LSB_CHKPNT_KILL 0x1
#define LSB_CHKPNT_FORCE 0x2
#define LSB_CHKPNT_COPY 0x3
#define LSB_CHKPNT_MIG 0x4
#define LSB_CHKPNT_STOP 0x8

/* lsb_launch options. */
#define LSF_DJOB_DISABLE_STDIN 0x01
#define LSF_DJOB_REPLACE_ENV 0x02
#define LSF_DJOB_NOWAIT 0x04
#define LSF_DJOB_STDERR_WITH_HOSTNAME 0x08
#define LSF_DJOB_STDOUT_WITH_HOSTNAME 0x10
#define LSF_DJOB_USE_LOGIN_SHELL 0x20
#define LSF_DJOB_USE_BOURNE_SHELL 0x40
#define LSF_DJOB_STDERR 0x80

/* The names of the load indices, for the reason texts (lsb_pendreason,
 * lsb_suspreason); NULL: the built-in ones. */
struct loadIndexLog {
    int nIdx;
    char **name;
};

/* lsberrno: the calling thread's last batch-library error (one of LSBE_*). */
extern int *lsb_errno(void);
#define lsberrno (*lsb_errno())

/* LSBE codes: begin */
/*
 * lsberrno values. Every number is LSF 10.1's (through Fix Pack 13); none had to be
 * invented. LSF leaves 48, 49, 71 and 438 unassigned, and its obsolete alias
 * LSBE_COMPOUND_RESIZE (same number as LSBE_ADV_RSRCREQ_RESIZE) is not defined here, so
 * every code below is distinct. LSBE_NUM_ERR is one past the highest code. The messages
 * lsb_sysmsg() returns are in crates/basalt-capi/src/errtab.rs.
 */
#define LSBE_NO_ERROR                                       0
#define LSBE_NO_JOB                                         1
#define LSBE_NOT_STARTED                                    2
#define LSBE_JOB_STARTED                                    3
#define LSBE_JOB_FINISH                                     4
#define LSBE_STOP_JOB                                       5
#define LSBE_DEPEND_SYNTAX                                  6
#define LSBE_EXCLUSIVE                                      7
#define LSBE_ROOT                                           8
#define LSBE_MIGRATION                                      9
#define LSBE_J_UNCHKPNTABLE                                 10
#define LSBE_NO_OUTPUT                                      11
#define LSBE_NO_JOBID                                       12
#define LSBE_ONLY_INTERACTIVE                               13
#define LSBE_NO_INTERACTIVE                                 14
#define LSBE_NO_USER                                        15
#define LSBE_BAD_USER                                       16
#define LSBE_PERMISSION                                     17
#define LSBE_BAD_QUEUE                                      18
#define LSBE_QUEUE_NAME                                     19
#define LSBE_QUEUE_CLOSED                                   20
#define LSBE_QUEUE_WINDOW                                   21
#define LSBE_QUEUE_USE                                      22
#define LSBE_BAD_HOST                                       23
#define LSBE_PROC_NUM                                       24
#define LSBE_NO_HPART                                       25
#define LSBE_BAD_HPART                                      26
#define LSBE_NO_GROUP                                       27
#define LSBE_BAD_GROUP                                      28
#define LSBE_QUEUE_HOST                                     29
#define LSBE_UJOB_LIMIT                                     30
#define LSBE_NO_HOST                                        31
#define LSBE_BAD_CHKLOG                                     32
#define LSBE_PJOB_LIMIT                                     33
#define LSBE_NOLSF_HOST                                     34
#define LSBE_BAD_ARG                                        35
#define LSBE_BAD_TIME                                       36
#define LSBE_START_TIME                                     37
#define LSBE_BAD_LIMIT                                      38
#define LSBE_OVER_LIMIT                                     39
#define LSBE_BAD_CMD                                        40
#define LSBE_BAD_SIGNAL                                     41
#define LSBE_BAD_JOB                                        42
#define LSBE_QJOB_LIMIT                                     43
#define LSBE_BAD_TERM                                       44
#define LSBE_UNKNOWN_EVENT                                  45
#define LSBE_EVENT_FORMAT                                   46
#define LSBE_EOF                                            47
#define LSBE_MBATCHD                                        50
#define LSBE_SBATCHD                                        51
#define LSBE_LSBLIB                                         52
#define LSBE_LSLIB                                          53
#define LSBE_SYS_CALL                                       54
#define LSBE_NO_MEM                                         55
#define LSBE_SERVICE                                        56
#define LSBE_NO_ENV                                         57
#define LSBE_CHKPNT_CALL                                    58
#define LSBE_NO_FORK                                        59
#define LSBE_PROTOCOL                                       60
#define LSBE_XDR                                            61
#define LSBE_PORT                                           62
#define LSBE_TIME_OUT                                       63
#define LSBE_CONN_TIMEOUT                                   64
#define LSBE_CONN_REFUSED                                   65
#define LSBE_CONN_EXIST                                     66
#define LSBE_CONN_NONEXIST                                  67
#define LSBE_SBD_UNREACH                                    68
#define LSBE_OP_RETRY                                       69
#define LSBE_USER_JLIMIT                                    70
#define LSBE_NQS_BAD_PAR                                    72
#define LSBE_NO_LICENSE                                     73
#define LSBE_BAD_CALENDAR                                   74
#define LSBE_NOMATCH_CALENDAR                               75
#define LSBE_NO_CALENDAR                                    76
#define LSBE_BAD_TIMEEVENT                                  77
#define LSBE_CAL_EXIST                                      78
#define LSBE_CAL_DISABLED                                   79
#define LSBE_JOB_MODIFY                                     80
#define LSBE_JOB_MODIFY_ONCE                                81
#define LSBE_J_UNREPETITIVE                                 82
#define LSBE_BAD_CLUSTER                                    83
#define LSBE_PEND_CAL_JOB                                   84
#define LSBE_RUN_CAL_JOB                                    85
#define LSBE_JOB_MODIFY_USED                                86
#define LSBE_AFS_TOKENS                                     87
#define LSBE_BAD_EVENT                                      88
#define LSBE_NOMATCH_EVENT                                  89
#define LSBE_NO_EVENT                                       90
#define LSBE_HJOB_LIMIT                                     91
#define LSBE_MSG_DELIVERED                                  92
#define LSBE_NO_JOBMSG                                      93
#define LSBE_MSG_RETRY                                      94
#define LSBE_BAD_RESREQ                                     95
#define LSBE_NO_ENOUGH_HOST                                 96
#define LSBE_CONF_FATAL                                     97
#define LSBE_CONF_WARNING                                   98
#define LSBE_CAL_MODIFY                                     99
#define LSBE_JOB_CAL_MODIFY                                 100
#define LSBE_HP_FAIRSHARE_DEF                               101
#define LSBE_NO_RESOURCE                                    102
#define LSBE_BAD_RESOURCE                                   103
#define LSBE_INTERACTIVE_CAL                                104
#define LSBE_INTERACTIVE_RERUN                              105
#define LSBE_PTY_INFILE                                     106
#define LSBE_JS_DISABLED                                    107
#define LSBE_BAD_SUBMISSION_HOST                            108
#define LSBE_LOCK_JOB                                       109
#define LSBE_UGROUP_MEMBER                                  110
#define LSBE_UNSUPPORTED_MC                                 111
#define LSBE_PERMISSION_MC                                  112
#define LSBE_SYSCAL_EXIST                                   113
#define LSBE_OVER_RUSAGE                                    114
#define LSBE_BAD_HOST_SPEC                                  115
#define LSBE_SYNTAX_CALENDAR                                116
#define LSBE_CAL_USED                                       117
#define LSBE_CAL_CYC                                        118
#define LSBE_BAD_UGROUP                                     119
#define LSBE_ESUB_ABORT                                     120
#define LSBE_EXCEPT_SYNTAX                                  121
#define LSBE_EXCEPT_COND                                    122
#define LSBE_EXCEPT_ACTION                                  123
#define LSBE_JOB_DEP                                        124
#define LSBE_JGRP_EXIST                                     125
#define LSBE_JGRP_NULL                                      126
#define LSBE_JGRP_HASJOB                                    127
#define LSBE_JGRP_CTRL_UNKWN                                128
#define LSBE_JGRP_BAD                                       129
#define LSBE_JOB_ARRAY                                      130
#define LSBE_JOB_SUSP                                       131
#define LSBE_JOB_FORW                                       132
#define LSBE_JGRP_HOLD                                      133
#define LSBE_BAD_IDX                                        134
#define LSBE_BIG_IDX                                        135
#define LSBE_ARRAY_NULL                                     136
#define LSBE_CAL_VOID                                       137
#define LSBE_JOB_EXIST                                      138
#define LSBE_JOB_ELEMENT                                    139
#define LSBE_BAD_JOBID                                      140
#define LSBE_MOD_JOB_NAME                                   141
#define LSBE_BAD_FRAME                                      142
#define LSBE_FRAME_BIG_IDX                                  143
#define LSBE_FRAME_BAD_IDX                                  144
#define LSBE_PREMATURE                                      145
#define LSBE_BAD_PROJECT_GROUP                              146
#define LSBE_NO_HOST_GROUP                                  147
#define LSBE_NO_USER_GROUP                                  148
#define LSBE_INDEX_FORMAT                                   149
#define LSBE_SP_SRC_NOT_SEEN                                150
#define LSBE_SP_FAILED_HOSTS_LIM                            151
#define LSBE_SP_COPY_FAILED                                 152
#define LSBE_SP_FORK_FAILED                                 153
#define LSBE_SP_CHILD_DIES                                  154
#define LSBE_SP_CHILD_FAILED                                155
#define LSBE_SP_FIND_HOST_FAILED                            156
#define LSBE_SP_SPOOLDIR_FAILED                             157
#define LSBE_SP_DELETE_FAILED                               158
#define LSBE_BAD_USER_PRIORITY                              159
#define LSBE_NO_JOB_PRIORITY                                160
#define LSBE_JOB_REQUEUED                                   161
#define LSBE_JOB_REQUEUE_REMOTE                             162
#define LSBE_NQS_NO_ARRJOB                                  163
#define LSBE_BAD_EXT_MSGID                                  164
#define LSBE_NO_IFREG                                       165
#define LSBE_BAD_ATTA_DIR                                   166
#define LSBE_COPY_DATA                                      167
#define LSBE_JOB_ATTA_LIMIT                                 168
#define LSBE_CHUNK_JOB                                      169
#define LSBE_DLOGD_ISCONN                                   170
#define LSBE_MULTI_FIRST_HOST                               171
#define LSBE_HG_FIRST_HOST                                  172
#define LSBE_HP_FIRST_HOST                                  173
#define LSBE_OTHERS_FIRST_HOST                              174
#define LSBE_MC_HOST                                        175
#define LSBE_MC_REPETITIVE                                  176
#define LSBE_MC_CHKPNT                                      177
#define LSBE_MC_EXCEPTION                                   178
#define LSBE_MC_TIMEEVENT                                   179
#define LSBE_PROC_LESS                                      180
#define LSBE_MOD_MIX_OPTS                                   181
#define LSBE_MOD_REMOTE                                     182
#define LSBE_MOD_CPULIMIT                                   183
#define LSBE_MOD_MEMLIMIT                                   184
#define LSBE_MOD_ERRFILE                                    185
#define LSBE_LOCKED_MASTER                                  186
#define LSBE_WARNING_INVALID_TIME_PERIOD                    187
#define LSBE_WARNING_MISSING                                188
#define LSBE_DEP_ARRAY_SIZE                                 189
#define LSBE_FEWER_PROCS                                    190
#define LSBE_BAD_RSVID                                      191
#define LSBE_NO_RSVID                                       192
#define LSBE_NO_EXPORT_HOST                                 193
#define LSBE_REMOTE_HOST_CONTROL                            194
#define LSBE_REMOTE_CLOSED                                  195
#define LSBE_USER_SUSPENDED                                 196
#define LSBE_ADMIN_SUSPENDED                                197
#define LSBE_NOT_LOCAL_HOST                                 198
#define LSBE_LEASE_INACTIVE                                 199
#define LSBE_QUEUE_ADRSV                                    200
#define LSBE_HOST_NOT_EXPORTED                              201
#define LSBE_HOST_ADRSV                                     202
#define LSBE_MC_CONN_NONEXIST                               203
#define LSBE_RL_BREAK                                       204
#define LSBE_LSF2TP_PREEMPT                                 205
#define LSBE_LSF2TP_RESERVE                                 206
#define LSBE_LSF2TP_BACKFILL                                207
#define LSBE_RSV_POLICY_NAME_BAD                            208
#define LSBE_RSV_POLICY_PERMISSION_DENIED                   209
#define LSBE_RSV_POLICY_USER                                210
#define LSBE_RSV_POLICY_HOST                                211
#define LSBE_RSV_POLICY_TIMEWINDOW                          212
#define LSBE_RSV_POLICY_DISABLED                            213
#define LSBE_LIM_NO_GENERAL_LIMIT                           214
#define LSBE_LIM_NO_RSRC_USAGE                              215
#define LSBE_LIM_CONVERT_ERROR                              216
#define LSBE_RSV_NO_HOST                                    217
#define LSBE_MOD_JGRP_ARRAY                                 218
#define LSBE_MOD_MIX                                        219
#define LSBE_SLA_NULL                                       220
#define LSBE_MOD_JGRP_SLA                                   221
#define LSBE_SLA_MEMBER                                     222
#define LSBE_NO_EXCEPTIONAL_HOST                            223
#define LSBE_WARNING_INVALID_ACTION                         224
#define LSBE_EXTSCHED_SYNTAX                                225
#define LSBE_SLA_RMT_ONLY_QUEUE                             226
#define LSBE_MOD_SLA_ARRAY                                  227
#define LSBE_MOD_SLA_JGRP                                   228
#define LSBE_MAX_PEND                                       229
#define LSBE_CONCURRENT                                     230
#define LSBE_FEATURE_NULL                                   231
#define LSBE_DYNGRP_MEMBER                                  232
#define LSBE_BAD_DYN_HOST                                   233
#define LSBE_NO_GRP_MEMBER                                  234
#define LSBE_JOB_INFO_FILE                                  235
#define LSBE_MOD_OR_RUSAGE                                  236
#define LSBE_BAD_GROUP_NAME                                 237
#define LSBE_BAD_HOST_NAME                                  238
#define LSBE_DT_BSUB                                        239
#define LSBE_PARENT_SYM_JOB                                 240
#define LSBE_PARTITION_NO_CPU                               241
#define LSBE_PARTITION_BATCH                                242
#define LSBE_PARTITION_ONLINE                               243
#define LSBE_NOLICENSE_BATCH                                244
#define LSBE_NOLICENSE_ONLINE                               245
#define LSBE_SIGNAL_SRVJOB                                  246
#define LSBE_BEGIN_TIME_INVALID                             247
#define LSBE_END_TIME_INVALID                               248
#define LSBE_BAD_REG_EXPR                                   249
#define LSBE_GRP_REG_EXPR                                   250
#define LSBE_GRP_HAVE_NO_MEMB                               251
#define LSBE_APP_NULL                                       252
#define LSBE_PROC_JOB_APP                                   253
#define LSBE_PROC_APP_QUE                                   254
#define LSBE_BAD_APPNAME                                    255
#define LSBE_APP_OVER_LIMIT                                 256
#define LSBE_REMOVE_DEF_APP                                 257
#define LSBE_EGO_DISABLED                                   258
#define LSBE_REMOTE_HOST                                    259
#define LSBE_SLA_EXCLUSIVE                                  260
#define LSBE_SLA_NONEXCLUSIVE                               261
#define LSBE_PERFMON_STARTED                                262
#define LSBE_PERFMON_STOPED                                 263
#define LSBE_PERFMON_PERIOD_SET                             264
#define LSBE_DEFAULT_SPOOL_DIR_DISABLED                     265
#define LSBE_APS_QUEUE_JOB                                  266
#define LSBE_BAD_APS_JOB                                    267
#define LSBE_BAD_APS_VAL                                    268
#define LSBE_APS_STRING_UNDEF                               269
#define LSBE_SLA_JOB_APS_QUEUE                              270
#define LSBE_MOD_MIX_APS                                    271
#define LSBE_APS_RANGE                                      272
#define LSBE_APS_ZERO                                       273
#define LSBE_DJOB_RES_PORT_UNKNOWN                          274
#define LSBE_DJOB_RES_TIMEOUT                               275
#define LSBE_DJOB_RES_IOERR                                 276
#define LSBE_DJOB_RES_INTERNAL_FAILURE                      277
#define LSBE_DJOB_CAN_NOT_RUN                               278
#define LSBE_DJOB_VALIDATION_BAD_JOBID                      279
#define LSBE_DJOB_VALIDATION_BAD_HOST                       280
#define LSBE_DJOB_VALIDATION_BAD_USER                       281
#define LSBE_DJOB_EXECUTE_TASK                              282
#define LSBE_DJOB_WAIT_TASK                                 283
#define LSBE_APS_HPC                                        284
#define LSBE_DIGEST_CHECK_BSUB                              285
#define LSBE_DJOB_DISABLED                                  286
#define LSBE_BAD_RUNTIME                                    287
#define LSBE_BAD_RUNLIMIT                                   288
#define LSBE_OVER_QUEUE_LIMIT                               289
#define LSBE_SET_BY_RATIO                                   290
#define LSBE_BAD_CWD                                        291
#define LSBE_JGRP_LIMIT_GRTR_THAN_PARENT                    292
#define LSBE_JGRP_LIMIT_LESS_THAN_CHILDREN                  293
#define LSBE_NO_ARRAY_END_INDEX                             294
#define LSBE_MOD_RUNTIME                                    295
#define LSBE_BAD_SUCCESS_EXIT_VALUES                        296
#define LSBE_DUP_SUCCESS_EXIT_VALUES                        297
#define LSBE_NO_SUCCESS_EXIT_VALUES                         298
#define LSBE_JOB_REQUEUE_BADARG                             299
#define LSBE_JOB_REQUEUE_DUPLICATED                         300
#define LSBE_JOB_REQUEUE_INVALID_DIGIT                      301
#define LSBE_JOB_REQUEUE_INVALID_TILDE                      302
#define LSBE_JOB_REQUEUE_NOVALID                            303
#define LSBE_NO_JGRP                                        304
#define LSBE_NOT_CONSUMABLE                                 305
#define LSBE_RSV_BAD_EXEC                                   306
#define LSBE_RSV_EVENTTYPE                                  307
#define LSBE_RSV_SHIFT                                      308
#define LSBE_RSV_USHIFT                                     309
#define LSBE_RSV_NUMEVENTS                                  310
#define LSBE_ADRSV_ID_VALID                                 311
#define LSBE_ADRSV_DISABLE_NONRECUR                         312
#define LSBE_ADRSV_MOD_ACTINSTANCE                          313
#define LSBE_ADRSV_HOST_NOTAVAIL                            314
#define LSBE_ADRSV_TIME_MOD_FAIL                            315
#define LSBE_ADRSV_R_AND_N                                  316
#define LSBE_ADRSV_EMPTY                                    317
#define LSBE_ADRSV_SWITCHTYPE                               318
#define LSBE_ADRSV_SYS_N                                    319
#define LSBE_ADRSV_DISABLE                                  320
#define LSBE_ADRSV_ID_UNIQUE                                321
#define LSBE_BAD_RSVNAME                                    322
#define LSBE_ADVRSV_ACTIVESTART                             323
#define LSBE_ADRSV_ID_USED                                  324
#define LSBE_ADRSV_PREVDISABLED                             325
#define LSBE_ADRSV_DISABLECURR                              326
#define LSBE_ADRSV_NOT_RSV_HOST                             327
#define LSBE_RESREQ_OK                                      328
#define LSBE_RESREQ_ERR                                     329
#define LSBE_ADRSV_HOST_USED                                330
#define LSBE_BAD_CHKPNTDIR                                  331
#define LSBE_ADRSV_MOD_REMOTE                               332
#define LSBE_JOB_REQUEUE_BADEXCLUDE                         333
#define LSBE_ADRSV_DISABLE_DATE                             334
#define LSBE_ADRSV_DETACH_MIX                               335
#define LSBE_ADRSV_DETACH_ACTIVE                            336
#define LSBE_MISSING_START_END_TIME                         337
#define LSBE_JOB_RUSAGE_EXCEED_LIMIT                        338
#define LSBE_APP_RUSAGE_EXCEED_LIMIT                        339
#define LSBE_CANDIDATE_HOST_EMPTY                           340
#define LSBE_HS_BAD_AFTER_BRACKT                            341
#define LSBE_HS_NO_END_INDEX                                342
#define LSBE_HS_BAD_COMMA                                   343
#define LSBE_HS_BAD_FORMAT                                  344
#define LSBE_HS_BAD_ORDER                                   345
#define LSBE_HS_BAD_MANY_DIGITS                             346
#define LSBE_HS_BAD_NUM_DIGITS                              347
#define LSBE_HS_BAD_END_INDEX                               348
#define LSBE_HS_BAD_INDEX                                   349
#define LSBE_COMMENTS                                       350
#define LSBE_FIRST_HOSTS_NOT_IN_QUEUE                       351
#define LSBE_JOB_NOTSTART                                   352
#define LSBE_RUNTIME_INVAL                                  353
#define LSBE_SSH_NOT_INTERACTIVE                            354
#define LSBE_LESS_RUNTIME                                   355
#define LSBE_RESIZE_NOTIFY_CMD_LEN                          356
#define LSBE_JOB_RESIZABLE                                  357
#define LSBE_RESIZE_RELEASE_HOSTSPEC                        358
#define LSBE_NO_RESIZE_NOTIFY                               359
#define LSBE_RESIZE_RELEASE_FRISTHOST                       360
#define LSBE_RESIZE_EVENT_INPROGRESS                        361
#define LSBE_RESIZE_BAD_SLOTS                               362
#define LSBE_RESIZE_NO_ACTIVE_REQUEST                       363
#define LSBE_HOST_NOT_IN_ALLOC                              364
#define LSBE_RESIZE_RELEASE_NOOP                            365
#define LSBE_RESIZE_URGENT_JOB                              366
#define LSBE_RESIZE_EGO_SLA_COEXIST                         367
#define LSBE_HOST_NOT_SUPPORT_RESIZE                        368
#define LSBE_APP_RESIZABLE                                  369
#define LSBE_RESIZE_LOST_AND_FOUND                          370
#define LSBE_RESIZE_FIRSTHOST_LOST_AND_FOUND                371
#define LSBE_RESIZE_BAD_HOST                                372
#define LSBE_AUTORESIZE_APP                                 373
#define LSBE_RESIZE_PENDING_REQUEST                         374
#define LSBE_ASKED_HOSTS_NUMBER                             375
#define LSBE_AR_HOST_EMPTY                                  376
#define LSBE_AR_FIRST_HOST_EMPTY                            377
#define LSBE_JB                                             378
#define LSBE_JB_DBLIB                                       379
#define LSBE_JB_DB_UNREACH                                  380
#define LSBE_JB_MBD_UNREACH                                 381
#define LSBE_JB_BES                                         382
#define LSBE_JB_BES_UNSUPPORTED_OP                          383
#define LSBE_LS_PROJECT_NAME                                384
#define LSBE_END_TIME_INVALID_COMPARE_START                 385
#define LSBE_HP_REDUNDANT_HOST                              386
#define LSBE_COMPOUND_APP_SLOTS                             387
#define LSBE_COMPOUND_QUEUE_SLOTS                           388
#define LSBE_ADV_RSRCREQ_RESIZE                             389
#define LSBE_CU_OVERLAPPING_HOST                            390
#define LSBE_CU_BAD_HOST                                    391
#define LSBE_CU_HOST_NOT_ALLOWED                            392
#define LSBE_CU_NOT_LOWEST_LEVEL                            393
#define LSBE_CU_MOD_RESREQ                                  394
#define LSBE_CU_AUTORESIZE                                  395
#define LSBE_NO_COMPUTE_UNIT_TYPES                          396
#define LSBE_NO_COMPUTE_UNIT                                397
#define LSBE_BAD_COMPUTE_UNIT                               398
#define LSBE_CU_EXCLUSIVE                                   399
#define LSBE_CU_EXCLUSIVE_LEVEL                             400
#define LSBE_CU_SWITCH                                      401
#define LSBE_COMPOUND_JOB_SLOTS                             402
#define LSBE_COMPOUND_QUEUE_RUSAGE_OR                       403
#define LSBE_CU_BALANCE_USABLECUSLOTS                       404
#define LSBE_COMPOUND_TSJOB_APP                             405
#define LSBE_COMPOUND_TSJOB_QUEUE                           406
#define LSBE_EXCEED_MAX_JOB_NAME_DEP                        407
#define LSBE_WAIT_FOR_MC_SYNC                               408
#define LSBE_RUSAGE_EXCEED_RESRSV_LIMIT                     409
#define LSBE_JOB_DESCRIPTION_LEN                            410
#define LSBE_NOT_IN_SIMMODE                                 411
#define LSBE_SIM_OPT_RUNTIME                                412
#define LSBE_SIM_OPT_CPUTIME                                413
#define LSBE_SIM_OPT_MAXMEM                                 414
#define LSBE_SIM_OPT_EXITSTATUS                             415
#define LSBE_SIM_OPT_SYNTAX                                 416
#define LSBE_SIM_BSUB                                       417
#define LSBE_MAX_SLOTS_IN_POOL                              418
#define LSBE_BAD_GUAR_RESOURCE_NAME                         419
#define LSBE_GUAR_SLA_USER_NOT_ALLOWED                      420
#define LSBE_GUAR_SLA_QUEUE_NOT_ALLOWED                     421
#define LSBE_GUAR_SLA_APP_NOT_ALLOWED                       422
#define LSBE_GUAR_SLA_PROJECT_NOT_ALLOWED                   423
#define LSBE_GUAR_SLA_GROUP_NOT_ALLOWED                     424
#define LSBE_GUAR_SLA_GROUP_QUEUE_MISMATCH                  425
#define LSBE_SLA_NOT_GUAR_SLA                               426
#define LSBE_SLA_ACCESS_CONTROL                             427
#define LSBE_GUAR_SLA_JOB_STARTED                           428
#define LSBE_GUAR_SLA_INVALID_OP                            429
#define LSBE_LIVECONF_MBD_RETERR                            430
#define LSBE_LIVECONF_MBD_REJECT                            431
#define LSBE_LIVECONF_MBD_INFO                              432
#define LSBE_EXCEED_JOBSPERPACK_LIMITATION                  433
#define LSBE_PACK_SUBMISSION_DISABLED                       434
#define LSBE_GUAR_SLA_LP_NOT_ALLOWED                        435
#define LSBE_GLB_MIX_MODE                                   436
#define LSBE_PERFLOG_ENABLED_ALREADY                        437
#define LSBE_GE_UNSUPPORT_CMD                               439
#define LSBE_WRONG_DEST_QUEUE                               440
#define LSBE_MULTI_HOST                                     441
#define LSBE_MULTI_HOST_SPEC                                442
#define LSBE_RUN_JOB_PROCESSING                             443
#define LSBE_GBRUNJOB_LEASEHOST                             444
#define LSBE_GBRUNJOB_BAD_HOST                              445
#define LSBE_LOCAL_CLUSTER                                  446
#define LSBE_OTHER_HOST                                     447
#define LSBE_GBRUNJOB_CLUSTER_NOTSUPPORT                    448
#define LSBE_MOD_BAD_CLUSTER_HOST                           449
#define LSBE_NO_LSFXL_ENTITLEMENT                           450
#define LSBE_CLUSTER_FIRST_HOST                             451
#define LSBE_HOST_FORMAT                                    452
#define LSBE_MBD_IN_RESTART                                 453
#define LSBE_MBD_PRESTART_DUPLOG                            454
#define LSBE_EOB                                            455
#define LSBE_WIN_PRESTART_NOT_SUPPORT                       456
#define LSBE_QUEUE_HOST2                                    457
#define LSBE_MOD_PROCESSOR                                  458
#define LSBE_HOST_HOSTGROUP_INVALID                         459
#define LSBE_BQUEUES_HOST_NOT_SUPPORT                       460
#define LSBE_XL_SAME_CLUSTER                                461
#define LSBE_RUN_FORWARD_MIX                                462
#define LSBE_JOBSPECIFY_ERROR                               463
#define LSBE_SND_RCV_QUEUE                                  464
#define LSBE_BRUN_DEST_CLUSTER                              465
#define LSBE_JOB_FORWARD_CANCELLING                         466
#define LSBE_BRUN_COMPOUND_RESREQ                           467
#define LSBE_JOB_REQUEUING                                  468
#define LSBE_BRUN_ONE_CLUSTER                               469
#define LSBE_QUERY_DIAGNOSE_DIR_ERROR                       470
#define LSBE_QUERY_DIAGNOSE_DURATION_ERROR                  471
#define LSBE_JOB_BEING_KILL                                 472
#define LSBE_EMB_BSUB                                       473
#define LSBE_QUERY_UPD_JOBCREATE                            474
#define LSBE_QUERY_UPD_NOTENABLE                            475
#define LSBE_REMOTE_HOST_UNSUPPORT                          476
#define LSBE_AC_RESREQ_COMPOUND                             477
#define LSBE_AC_RESREQ_MULTIPHASE                           478
#define LSBE_AC_RESREQ_DURATION                             479
#define LSBE_AC_BAD_HOST                                    480
#define LSBE_AC_NO_HOST                                     481
#define LSBE_AC_BAD_PROVISION_ID                            482
#define LSBE_AC_BAD_PROVISION_JOBID                         483
#define LSBE_AC_NO_PROVISION                                484
#define LSBE_AC_NO_VM                                       485
#define LSBE_AC_BAD_VM                                      486
#define LSBE_AC_NO_TEMPLATE                                 487
#define LSBE_AC_NO_SUIT_TEMPLATE                            488
#define LSBE_AC_TEMPLATE_NOT_FOUND                          489
#define LSBE_AC_NO_PARAMETERS                               490
#define LSBE_AC_HOST_IN_PROVISIONING                        491
#define LSBE_AC_HOST_IN_SAVED                               492
#define LSBE_AC_HOST_SBD_STARTING_UP                        493
#define LSBE_AC_RESIZABLE                                   494
#define LSBE_AC_VIRTUAL_MACHINE                             495
#define LSBE_AC_CHUNK_JOB                                   496
#define LSBE_AC_VMACTION                                    497
#define LSBE_AC_MODIFY_RUNNING_VMJOB                        498
#define LSBE_AC_MODIFY_VMJOB_IN_SAVED                       499
#define LSBE_AC_MODIFY_TO_NON_ACJOB                         500
#define LSBE_AC_JOB_RUSAGE_EXCEED_LIMIT                     501
#define LSBE_AC_APP_RUSAGE_EXCEED_LIMIT                     502
#define LSBE_AC_DEFAULT_RUSAGE_EXCEED_RESRSV_LIMIT          503
#define LSBE_AC_JOB_RUSAGE_EXCEED_LARGEST_MEMSIZE           504
#define LSBE_AC_APP_RUSAGE_EXCEED_LARGEST_MEMSIZE           505
#define LSBE_AC_QUE_RUSAGE_EXCEED_LARGEST_MEMSIZE           506
#define LSBE_AC_NOT_AN_AC_JOB                               507
#define LSBE_AC_NO_TEMPLATE_SPECIFIED                       508
#define LSBE_AC_MODIFY_RUNNING_JOB_TO_ACJOB                 509
#define LSBE_AC_MODIFY_OPTIONS_RUNNING_ACJOB                510
#define LSBE_AC_MODIFY_OPTIONS_WITHOUT_AC_TMPL              511
#define LSBE_AC_NOT_AN_AC_VMJOB                             512
#define LSBE_AC_FEATURE_NOT_ENABLE                          513
#define LSBE_AC_ONE_VM_ONLY_ALLOWED                         514
#define LSBE_AC_ONE_HV_ONLY_ALLOWED                         515
#define LSBE_AC_JOB_IS_SAVED                                516
#define LSBE_AC_NON_ACHOST                                  517
#define LSBE_AC_RESOTRE_ON_NON_HV                           518
#define LSBE_AC_RESOTRE_ON_RESGROUP                         519
#define LSBE_AC_INSUFFICIENT_HOST                           520
#define LSBE_AC_RESTORE_VM_NOT_FOUND                        521
#define LSBE_AC_UNABLE_TO_RESTORE_VM                        522
#define LSBE_AC_VM_HAS_WORKINFO                             523
#define LSBE_AC_PURE_HYPERVISOR                             524
#define LSBE_AC_UNABLE_PROVISION                            525
#define LSBE_AC_HOSTS_MIXED                                 526
#define LSBE_QUERY_INVALID_EAUTH                            527
#define LSBE_NOT_REQUEUE_LPJ                                528
#define LSBE_UNSUPPORTED_MC_CHKPNTABLE                      529
#define LSBE_AC_BAD_VMACTION                                530
#define LSBE_AC_SWITCH_MIGRATING_JOB                        531
#define LSBE_MOD_COMPOUND_RESREQ                            532
#define LSBE_ALTERNATIVE_JOB_SLOTS                          533
#define LSBE_ALTERNATIVE_APP_SLOTS                          534
#define LSBE_ALTERNATIVE_QUEUE_SLOTS                        535
#define LSBE_ALTERNATIVE_TSJOB_APP                          536
#define LSBE_ALTERNATIVE_TSJOB_QUEUE                        537
#define LSBE_ALTERNATIVE_QUEUE_RUSAGE_OR                    538
#define LSBE_BRUN_ALTERNATIVE_RESREQ                        539
#define LSBE_RESIZE_QUEUE_ADV_RSRCREQ                       540
#define LSBE_JOB_BEING_MODIFIED                             541
#define LSBE_MC_BMOD_NOT_SUPPORT                            542
#define LSBE_MC_BMOD_PARAMETER_DISALLOW                     543
#define LSBE_MC_REMOTE_HOST_SPEC                            544
#define LSBE_EXCLUDED_PRIO                                  545
#define LSBE_ALL_OTHERS                                     546
#define LSBE_EXCLUDED_NO_ALL                                547
#define LSBE_ASKED_CLUSTER_NULL                             548
#define LSBE_M_CLUSTER                                      549
#define LSBE_DUPLICATE_CLUSTER                              550
#define LSBE_CLUSTER_ADRSV                                  551
#define LSBE_BAD_ASKED_CLUSTER                              552
#define LSBE_QUEUE_ASKED_CLUSTER                            553
#define LSBE_OTHERS_ALONE                                   554
#define LSBE_GB_ASKED_CLUSTER                               555
#define LSBE_BMOD_ASKED_CLUSTER_DISALLOW                    556
#define LSBE_LOCAL_CLUSTER_NONE                             557
#define LSBE_EFFECTIVE_MODIFY_COMPOUND                      558
#define LSBE_EFFECTIVE_MODIFY_ALTERNATIVE                   559
#define LSBE_EFFECTIVE_MODIFY_COMPOUND_TO_SIMPLE            560
#define LSBE_MC_MOD_ASKED_HOST                              561
#define LSBE_MC_MOD_QUEUE                                   562
#define LSBE_MC_MOD_DEPEND_COND                             563
#define LSBE_MC_MOD_SLA                                     564
#define LSBE_LS_NO_RESREQ                                   565
#define LSBE_GBRUNJOB_MASTERCANDIDATE                       566
#define LSBE_GB_BRUN_REMOTE_QUEUE                           567
#define LSBE_GLB_MIX_PROJECT_MODE                           568
#define LSBE_MC_REMOTE_CLUSTER                              569
#define LSBE_EXCEED_QUEUE_RUSAGE                            570
#define LSBE_EXCEED_RESRSV_LIMIT                            571
#define LSBE_AC_SPAN_MANY_VMS                               572
#define LSBE_AC_NONE_COEXIST                                573
#define LSBE_AC_NO_TEMPLATE_VM                              574
#define LSBE_AC_NO_TEMPLATE_PM                              575
#define LSBE_AC_ANY_TMPL_COEXIST                            576
#define LSBE_AC_NONE_TMPL_WITH_OTHERS                       577
#define LSBE_AC_TMPL_BEING_REMOVED                          578
#define LSBE_AC_JOB_NO_TEMPLATE_VM                          579
#define LSBE_AC_JOB_NO_TEMPLATE_PM                          580
#define LSBE_AC_JOB_NO_VMACTION                             581
#define LSBE_AC_MODIFY_MEM_RUSAGE                           582
#define LSBE_NETWORK_PE_DISABLED                            583
#define LSBE_NETWORK_SYNTAX                                 584
#define LSBE_NETWORK_INVALID_TYPE                           585
#define LSBE_NETWORK_INVALID_PROTOCOL                       586
#define LSBE_NETWORK_IP_INSTANCE                            587
#define LSBE_NETWORK_INVALID_USAGE                          588
#define LSBE_NETWORK_INSTANCE                               589
#define LSBE_NETWORK_BAD_KEYWORD                            590
#define LSBE_EXCEED_MAX_PROTOCOL_CNT                        591
#define LSBE_NETWORK_INVALID_MODE                           592
#define LSBE_NETWORK_IP_DEDICATED                           593
#define LSBE_BRUN_NETWORK_JOB                               594
#define LSBE_NETWORK_CHANGE_RUNNING_JOB                     595
#define LSBE_NETWORK_JOB_RESIZE                             596
#define LSBE_NETWORK_EXCEED_QUEUE_MAX_PROTOCOL_INSTANCE     597
#define LSBE_EXCLUSIVE_AFFINITY                             598
#define LSBE_RESIZE_AFFINITY_JOB_BAD_HOST                   599
#define LSBE_NETWORK_CHKPNT                                 600
#define LSBE_NETWORK_EXCEED_CLUSTER_MAX_PROTOCOL_INSTANCE   601
#define LSBE_BAD_GLOBAL_FAIRSHARE_NAME                      602
#define LSBE_UNKNOWN_CLUSTER_NAME                           603
#define LSBE_NO_GLOBAL_FAIRSHARE                            604
#define LSBE_NOT_GPD_CLUSTER                                605
#define LSBE_NOT_MASTER_CANDIDATE                           606
#define LSBE_BAD_GPD_CLUSTER                                607
#define LSBE_ZOMBIE_JOB                                     608
#define LSBE_AC_CHKPNT_NOT_RERUNNABLE                       609
#define LSBE_AC_CHKPNT_LSFCHKPNT                            610
#define LSBE_AC_CHKPNT_NOT_VMJOB                            611
#define LSBE_AC_CHKPNT_BAD_ARGUMENT                         612
#define LSBE_PE_INVALID_PROTOCOL_COUNT                      613
#define LSBE_POWER_NOT_SERVER_HOST                          614
#define LSBE_POWER_NO_COMMAND                               615
#define LSBE_POWER_PENDING_OPERTION                         616
#define LSBE_POWER_TATUS_NOT_OK                             617
#define LSBE_POWER_NOT_IDLE_HOST                            618
#define LSBE_POWER_MASTER_HOST_REJECT                       619
#define LSBE_MANAGE_FREQUENCY_DISABLED                      620
#define LSBE_FREQUENCY_EXECLUSIVE                           621
#define LSBE_FREQUENCY_BY_CORE                              622
#define LSBE_RESIZE_RELEASE_EAS_JOB                         623
#define LSBE_UNPENG_FREQUENCY                               624
#define LSBE_POWER_CLOSED_HOST                              625
#define LSBE_AUTORESIZE_EAS_JOB                             626
#define LSBE_HOST_LIMIT                                     627
#define LSBE_CONCURRENT_QUERY                               628
#define LSBE_REPEATED_HOST_SKIP                             629
#define LSBE_EAS_SWITCH_PROV_JOB                            630
#define LSBE_JOB_SIZE_LIST                                  631
#define LSBE_TAG_NAME                                       632
#define LSBE_RESIZE_RELEASE_EAS_PREDICTION_JOB              633
#define LSBE_AC_PERMISSION_LIVEMIG                          634
#define LSBE_AC_BAD_VMACTION_LIVEMIG                        635
#define LSBE_AC_VM_WAITING_PREEMPTION_ACTION                636
#define LSBE_AC_VM_WAITING_MANUAL_LIVEMIG_ACTION            637
#define LSBE_NOTMATCH_NBLOCK                                638
#define LSBE_GLB_GRIDBROKER                                 639
#define LSBE_NLIST_NPROC                                    640
#define LSBE_EAS_DB_INITIALIZE                              641
#define LSBE_EAS_QUERY_ENERGY_DATA_FROM_DB                  642
#define LSBE_UNSUPPORT_EAS_PREDICTION_AUTO_FREQUENCY        643
#define LSBE_EAS_REMOVE_ENERGY_DATA_FROM_DB                 644
#define LSBE_EAS_INITIALIZE                                 645
#define LSBE_JOB_MODIFY_RUNNING_EAS_JOB                     646
#define LSBE_EAS_TAG_JOB_UNCHKPNTABLE                       647
#define LSBE_EAS_GENERATE_OR_AUTOMATIC_FREQUENCY_EXECLUSIVE 648
#define LSBE_ACL_CONTROL                                    649
#define LSBE_JOB_PROV                                       650
#define LSBE_EAS_GENERATE_TAG_AUTH                          651
#define LSBE_NOT_DEPENDENT_JOB                              652
#define LSBE_USER_HOST_FILE_ACCESS                          653
#define LSBE_USER_HOST_FILE_FORMAT                          654
#define LSBE_RESIZE_HOST_FILE_JOB_BAD_HOST                  655
#define LSBE_COMPOUND_RESREQ_HOST_FILE                      656
#define LSBE_CAND_HOST_NPROC_HOST_FILE                      657
#define LSBE_ADVRSV_BAD_UNIT                                658
#define LSBE_ADRSV_RM_ALL_USER                              659
#define LSBE_FEWER_HOSTS                                    660
#define LSBE_ADRSV_HOST_CANNOT_FULL_RESERVE                 661
#define LSBE_ADRSV_MOD_USER_FROM_GROUP                      662
#define LSBE_ADRSV_NOT_RSV_USER                             663
#define LSBE_ADRSV_RM_ALL_HOSTS                             664
#define LSBE_ADRSV_M_R_EMPTY                                665
#define LSBE_RESIZE_RELEASE_FRISTHOST_4SLOTS                666
#define LSBE_RESIZE_BAD_SLOTS_4SLOTS                        667
#define LSBE_RESIZE_RELEASE_NOOP_4SLOTS                     668
#define LSBE_CU_BALANCE_USABLECUSLOTS_4SLOTS                669
#define LSBE_ALTERNATIVE_JOB_SLOTS_4SLOTS                   670
#define LSBE_ALTERNATIVE_APP_SLOTS_4SLOTS                   671
#define LSBE_ALTERNATIVE_QUEUE_SLOTS_4SLOTS                 672
#define LSBE_NOTMATCH_NBLOCK_4SLOTS                         673
#define LSBE_PROC_NUM_4SLOTS                                674
#define LSBE_PROC_LESS_4SLOTS                               675
#define LSBE_MOD_PROCESSOR_4SLOTS                           676
#define LSBE_JOB_SIZE_LIST_APP                              677
#define LSBE_NLIST_NPROC_4SLOTS                             678
#define LSBE_BAD_ARG_FOR_ENV                                679
#define LSBE_PROC_JOB_APP_4SLOTS                            680
#define LSBE_COMPOUND_APP_SLOTS_4SLOTS                      681
#define LSBE_COMPOUND_QUEUE_SLOTS_4SLOTS                    682
#define LSBE_COMPOUND_JOB_SLOTS_4SLOTS                      683
#define LSBE_PROC_APP_QUE_4SLOTS                            684
#define LSBE_CAND_HOST_NPROC_HOST_FILE_4SLOTS               685
#define LSBE_AC_LIVEMIGVM                                   686
#define LSBE_AC_SWITCH_DEFRAG_JOB                           687
#define LSBE_AC_MOD_QUEUE_DEFRAG_JOB                        688
#define LSBE_DATA_SPEC_FILE_NOT_SPECIFIED                   689
#define LSBE_DATA_MIXED                                     690
#define LSBE_DATA_SPEC_FILE_EMPTY                           691
#define LSBE_DATA_READING_FILE                              692
#define LSBE_DATA_CANT_OPEN_FILE                            693
#define LSBE_DATA_SIGNATURE_FAIL                            694
#define LSBE_DATA_PATH_FAIL                                 695
#define LSBE_DATA_FEATURE_NOT_ENABLE                        696
#define LSBE_DATA_FORMAT                                    697
#define LSBE_DATA_SPEC_BAD_HOST_NAME                        698
#define LSBE_DATA_CHECKPOINT_MIXED                          699
#define LSBE_DATA_NOT_TRANSFER_JOB                          700
#define LSBE_DATA_NOT_TRANSFER_QUEUE                        701
#define LSBE_DATA_CANT_BRUN                                 702
#define LSBE_DATA_PATH_CANT_ACCESS                          703
#define LSBE_DATA_TRANSFER_JOB_UNSUPPORTED                  704
#define LSBE_DATA_SPACE_IN_PATH                             705
#define LSBE_DATA_SIZE_NOT_NUMERIC                          706
#define LSBE_FILE_NOT_EXIST                                 707
#define LSBE_DATA_RELATIVE_IN_PATH                          708
#define LSBE_DATA_NONE_PROCESSED                            709
#define LSBE_DATA_INCORRECT_WILDCARD                        710
#define LSBE_DATA_INCORRECT_FORMAT                          711
#define LSBE_DATA_INCORRECT_JOBARRAYINDEX                   712
#define LSBE_DATA_TAG_DATA_COMBINE                          713
#define LSBE_SYMLINK_AS_DATA                                714
#define LSBE_PATH_DIR_FOR_REMOTE                            715
#define LSBE_WILD_CARD_FOR_REMOTE                           716
#define LSBE_UNSUPPORTED_FILE_TYPE                          717
#define LSBE_DAS_PLATFORM_NOT_SUPPORTTED                    718
#define LSBE_UNSUPPORTED_SIGNATURE_SYNTAX                   719
#define LSBE_DATA_GRP_NEEDS_REQ                             720
#define LSBE_DATA_NOT_DIR                                   721
#define LSBE_AC_USER_HOST_FILE                              722
#define LSBE_AC_HOST_IN_USER_HOST_FILE                      723
#define LSBE_J_UNCHKPNTABLE_UNRERUN                         724
#define LSBE_TI_NO_DEPENDENCY                               725
#define LSBE_EXTSCHED_HOST_FILE                             726
#define LSBE_DATA_BAD_HOST_NAME                             727
#define LSBE_DATA_EMPTY_HOST_NAME                           728
#define LSBE_DATA_NO_TRANSFER_QUEUE                         729
#define LSBE_CANNOT_ACCESS_FILE                             730
#define LSBE_FILE_NAME_TOO_LONG                             731
#define LSBE_MBSCHD_NOT_READY                               732
#define LSBE_PREVIOUS_JOBREQ_IN_PROGRESS                    733
#define LSBE_DATA_GRP_MIXED                                 734
#define LSBE_DATA_USER_GROUP_NOT_EXIST                      735
#define LSBE_DATA_USER_NOT_IN_USER_GROUP                    736
#define LSBE_DATA_USER_GROUP_TAG_COMBINE                    737
#define LSBE_RESIZE_RELEASE_HOST_MIDDLE_ALLOC               738
#define LSBE_ALTERNATIVE_RSRCREQ_RESIZE                     739
#define LSBE_EPTL_NO_TRACKELIGIBLEPENDINFO                  740
#define LSBE_PEND_TIME_LIMIT_FOR_REMOTE                     741
#define LSBE_MC_RESREQ_REJECT                               742
#define LSBE_DELETE_OLD_STREAM_FILE                         743
#define LSBE_BMODZ_EAGAIN                                   744
#define LSBE_OVERLAPPED_IDX                                 745
#define LSBE_MAX_ACTIVE_JOBS                                746
#define LSBE_CU_EXCL_BALANCE                                747
#define LSBE_RC_CLOSED                                      748
#define LSBE_BWAIT_TIMEOUT                                  749
#define LSBE_BWAIT_SYNTAX                                   750
#define LSBE_BWAIT_INVALID                                  751
#define LSBE_EXCEED_MAX_JOB_NAME_BWAIT                      752
#define LSBE_UNKOWN_ERR                                     753
#define LSBE_RESIZE_REQUEST                                 754
#define LSBE_GPU_SYNTAX                                     755
#define LSBE_GPU_NUM                                        756
#define LSBE_GPU_INVALID_MODE                               757
#define LSBE_GPU_INVALID_MPS                                758
#define LSBE_GPU_COMPACT_USAGE_ENABLED                      759
#define LSBE_GPU_COMPACT_USAGE_DISABLED                     760
#define LSBE_MC_GPU_COMPACT_USAGE_ENABLED                   761
#define LSBE_MC_GPU_COMPACT_USAGE_DISABLED                  762
#define LSBE_GPU_INVALID_JOB_EXCLUSIVE                      763
#define LSBE_MAX_PEND_SLOTS                                 764
#define LSBE_RESIZE_REQUEST_COMPOUND                        765
#define LSBE_BY_PROXY_ONLY                                  766
#define LSBE_PROXY_UNREACHABLE                              767
#define LSBE_PROXY_INTERNAL                                 768
#define LSBE_BAD_SYMBOLIC_LINK                              769
#define LSBE_DATA_NOT_FILE                                  770
#define LSBE_DIR_NOT_EXIST                                  771
#define LSBE_DATA_FOLDER_NO_ACCESS                          772
#define LSBE_ADRSV_SUSPFLAG_USERONLY                        773
#define LSBE_ADRSV_MOD_PRETIME_ACTIVE                       774
#define LSBE_ADRSV_MOD_NO_POSTSCRIPT                        775
#define LSBE_CSM_INVALID_SYNTAX                             776
#define LSBE_CSM_INVALID_JSM                                777
#define LSBE_CSM_INVALID_STEP_CGROUP                        778
#define LSBE_CSM_INVALID_CORE_ISOLATION                     779
#define LSBE_CSM_INVALID_CN_MEM                             780
#define LSBE_CSM_INVALID_ALLOC_FLAGS                        781
#define LSBE_CSM_INVALID_KEYWORD                            782
#define LSBE_MOD_NON_CSM_JOB                                783
#define LSBE_NO_JOB_EXECHOME                                784
#define LSBE_ESWITCH_ABORT                                  785
#define LSBE_RC_NOT_ENABLE                                  786
#define LSBE_MQTT_CONN                                      787
#define LSBE_QUEUE_FWD_USER                                 788
#define LSBE_STAGE_FORMAT                                   789
#define LSBE_STAGE_CANT_BRUN                                790
#define LSBE_STAGE_MIXED                                    791
#define LSBE_STAGE_ALLOCATION_PLANNER                       792
#define LSBE_STAGE_STORAGE                                  793
#define LSBE_RESIZE_STAGING_TRANSFER_JOB                    794
#define LSBE_RESIZE_STAGING_JOB                             795
#define LSBE_STAGE_DATA_MIXED                               796
#define LSBE_STAGE_AR_MIXED                                 797
#define LSBE_GPU_INVALID_GMODEL                             798
#define LSBE_GPU_INVALID_GMEM                               799
#define LSBE_GPU_INVALID_GTILE                              800
#define LSBE_GPU_INVALID_NVLINK                             801
#define LSBE_GPU_NUM_CONFLICT                               802
#define LSBE_GPU_RESOURCE_NOT_EXIST                         803
#define LSBE_BRUN_GPU_JOB                                   804
#define LSBE_BSUB_SECURE_PATH                               805
#define LSBE_NO_MSG                                         806
#define LSBE_ADRSV_FORCE_CLOSED                             807
#define LSBE_CU_BALANCE_BESTFIT                             808
#define LSBE_CU_BALANCE_BESTFIT_4SLOTS                      809
#define LSBE_MOD_NGPUS                                      810
#define LSBE_HOST_IMAGE                                     811
#define LSBE_IMAGE                                          812
#define LSBE_CSM_INVALID_SMT                                813
#define LSBE_GPU_INVALID_AFFBIND                            814
#define LSBE_LIC_SLA_EXIST                                  815
#define LSBE_LIC_SLA_NAME_INVALID                           816
#define LSBE_LIC_SLA_ACCCTRL_INVALID                        817
#define LSBE_LIC_SLA_AUTOATT_INVALID                        818
#define LSBE_LIC_SLA_AUTOATT_EMPTY_ACCCTRL                  819
#define LSBE_LIC_SLA_EMPTY_GPOOL_CONSUMER                   820
#define LSBE_LIC_SLA_ACCUSER_INVALID                        821
#define LSBE_LIC_SLA_ACCQUEUE_INVALID                       822
#define LSBE_LIC_SLA_ACCAPP_INVALID                         823
#define LSBE_LIC_SLA_ACCFG_INVALID                          824
#define LSBE_LIC_SLA_ACCPROJ_INVALID                        825
#define LSBE_LIC_SLA_ACCLICPROJ_INVALID                     826
#define LSBE_LIC_SLA_NOT_GUARANTEE                          827
#define LSBE_LIC_SLA_CONF_INVALID                           828
#define LSBE_EXCLUDE_DEFAULT_UG                             829
#define LSBE_EXCLUDE_ENFORCE_UG                             830
#define LSBE_DUP_NOTIFYAC                                   831
#define LSBE_LIC_SLA_UNSUP_AUTOATT                          832
#define LSBE_RESIZE_GPU_MPS_SHARED_JOB                      833
#define LSBE_MOD_NOTIFY_ARRAY                               834
#define LSBE_USER_IMPERSONATE                               835
#define LSBE_KUBE_JOB_UNSUPPORTED                           836
#define LSBE_KUBE_MOD_RUNJOB                                837
#define LSBE_KUBE_SWITCH_RUNJOB                             838
#define LSBE_KUBE_STOP_RUNJOB                               839
#define LSBE_KUBE_PODJOB_UNSUPPORTED                        840
#define LSBE_KUBE_JOB_OPTION                                841
#define LSBE_KUBE_RSRCREQ                                   842
#define LSBE_KUBE_CONNECTOR                                 843
#define LSBE_RUSAGE_TYPE_RESRSV_LIMIT                       844
#define LSBE_LOCK_ID_NOT_VALID                              845
#define LSBE_LOCK_ID_EXIST                                  846
#define LSBE_LOCK_ID_NOT_FOUND                              847
#define LSBE_LOCK_ID_CLOSED                                 848
#define LSBE_ATTR_REQ                                       849
#define LSBE_ATTR_NAME                                      850
#define LSBE_ATTR_MAX_NUM                                   851
#define LSBE_ATTR_INVALID_SERVER                            852
#define LSBE_ATTR_CREATED_BY_OTHER                          853
#define LSBE_ATTR_NO_ATTR                                   854
#define LSBE_ATTR_NO_SPECIFIED_ATTR                         855
#define LSBE_ATTR_NO_ATTR_ON_HOST                           856
#define LSBE_NO_SAMEAFF_REMOTE_ONLY                         857
#define LSBE_NO_JOBAFF_LEASE                                858
#define LSBE_ATTR_TOO_MANY_ATTRS                            859
#define LSBE_ATTR_AFFINITY_DISABLED                         860
#define LSBE_SAME_JOB_AFFINITY_DISABLED                     861
#define LSBE_GPU_INVALID_BLOCK                              862
#define LSBE_GPU_INVALID_GPACK                              863
#define LSBE_IMAGE_AFFINITY_DISABLED                        864
#define LSBE_LOAD_EXT_LIBRARY                               865
#define LSBE_GPU_INVALID_GLINK                              866
#define LSBE_GPU_INVALID_GVENDOR                            867
#define LSBE_GPU_VENDOR_CONFLICT                            868
#define LSBE_GPU_GLINK_NVLINK                               869
#define LSBE_GPU_INVALID_MIG_SPEC                           870
#define LSBE_GPU_MIG_MPS_SHARED_UNSUPPORT                   871
#define LSBE_BWAIT_IN_JOB_DISABLED                          872
#define LSBE_NUM_ERR                                        873
/* LSBE codes: end */

/* Initialisation and errors. */
extern int lsb_init(char *appName);
extern char *lsb_sysmsg(void);
extern void lsb_perror(char *usrMsg);

/* Jobs. */
extern LS_LONG_INT lsb_submit(struct submit *jobSubReq, struct submitReply *jobSubReply);
extern LS_LONG_INT lsb_modify(struct submit *jobSubReq, struct submitReply *jobSubReply,
                              LS_LONG_INT jobId);
extern int lsb_openjobinfo(LS_LONG_INT jobId, char *jobName, char *userName, char *queueName,
                           char *hostName, int options);
extern struct jobInfoHead *lsb_openjobinfo_a(LS_LONG_INT jobId, char *jobName, char *userName,
                                             char *queueName, char *hostName, int options);
extern struct jobInfoEnt *lsb_readjobinfo(int *more);
extern void lsb_closejobinfo(void);
extern int lsb_signaljob(LS_LONG_INT jobId, int sigValue);
extern int lsb_forcekilljob(LS_LONG_INT jobId);
extern int lsb_deletejob(LS_LONG_INT jobId, int times, int options);
extern int lsb_killbulkjobs(struct signalBulkJobs *s);
extern int lsb_requeuejob(struct jobrequeue *reqPtr);
extern int lsb_mig(struct submig *mig, int *badHostIdx);
extern int lsb_chkpntjob(LS_LONG_INT jobId, time_t period, int options);
extern int lsb_switchjob(LS_LONG_INT jobId, char *queue);
extern int lsb_movejob(LS_LONG_INT jobId, int *position, int opCode);

extern char *lsb_jobid2str(LS_LONG_INT jobId);
extern char *lsb_pendreason(int numReasons, int *rsTb, struct jobInfoHead *jInfoH,
                            struct loadIndexLog *ld, int clusterId);
extern char *lsb_suspreason(int reasons, int subreasons, struct loadIndexLog *ld);

/* lsb_movejob opCode. */
#define TO_TOP 1
#define TO_BOTTOM 2

/* Parallel jobs. */
extern int lsb_getalloc(char ***hostlist);
extern int lsb_launch(char **where, char **argv, int options, char **envp);

/* Batch information and administration: begin */
/* Batch information and administration: lsb_queueinfo, lsb_hostinfo, lsb_hostinfo_ex,
 * lsb_hostgrpinfo, lsb_usergrpinfo, lsb_userinfo, lsb_appInfo, lsb_parameterinfo,
 * lsb_queuecontrol, lsb_hostcontrol, lsb_reconfig. What a query returns is the
 * library's: valid until the next call of the same function. */

#define LSB_SIG_NUM 30

/* Host status (hostInfoEnt.hStatus): HOST_STAT_OK, or the bitwise OR of these. */
#define HOST_STAT_OK 0x0
#define HOST_STAT_BUSY 0x01
#define HOST_STAT_WIND 0x02
#define HOST_STAT_DISABLED 0x04
#define HOST_STAT_LOCKED 0x08
#define HOST_STAT_FULL 0x10
#define HOST_STAT_UNREACH 0x20
#define HOST_STAT_UNAVAIL 0x40
#define HOST_STAT_UNLICENSED 0x80
#define HOST_STAT_NO_LIM 0x100
#define HOST_STAT_EXCLUSIVE 0x200
#define HOST_STAT_LOCKED_MASTER 0x400
#define HOST_STAT_REMOTE_DISABLED 0x800
#define HOST_STAT_LEASE_INACTIVE 0x1000
#define HOST_STAT_DISABLED_RES 0x4000
#define HOST_STAT_DISABLED_RMS 0x8000
#define HOST_STAT_LOCKED_EGO 0x10000
#define HOST_CLOSED_BY_ADMIN 0x20000
#define HOST_STAT_CU_EXCLUSIVE 0x40000
#define LSB_HOST_OK(status) ((status) == HOST_STAT_OK)
#define LSB_HOST_BUSY(status) (((status) & HOST_STAT_BUSY) != 0)
#define LSB_HOST_CLOSED(status) (((status) & (HOST_STAT_WIND | HOST_STAT_DISABLED | HOST_STAT_LOCKED | HOST_STAT_LOCKED_MASTER | HOST_STAT_FULL | HOST_STAT_CU_EXCLUSIVE | HOST_STAT_EXCLUSIVE | HOST_STAT_LEASE_INACTIVE | HOST_STAT_NO_LIM)) != 0)
#define LSB_HOST_FULL(status) (((status) & HOST_STAT_FULL) != 0)
#define LSB_HOST_UNLICENSED(status) (((status) & HOST_STAT_UNLICENSED) != 0)
#define LSB_HOST_UNREACH(status) (((status) & HOST_STAT_UNREACH) != 0)
#define LSB_HOST_UNAVAIL(status) (((status) & HOST_STAT_UNAVAIL) != 0)

/* Why a host is busy (hostInfoEnt.busySched, busyStop: bit i for load index i). */
#define HOST_BUSY_NOT 0x000
#define HOST_BUSY_R15S 0x001
#define HOST_BUSY_R1M 0x002
#define HOST_BUSY_R15M 0x004
#define HOST_BUSY_UT 0x008
#define HOST_BUSY_PG 0x010
#define HOST_BUSY_IO 0x020
#define HOST_BUSY_LS 0x040
#define HOST_BUSY_IT 0x080
#define HOST_BUSY_TMP 0x100
#define HOST_BUSY_SWP 0x200
#define HOST_BUSY_MEM 0x400
#define LSB_ISBUSYON(status, index) ((((status)[(index) / (int)(8 * sizeof(int))]) & (1 << ((index) % (int)(8 * sizeof(int))))) != 0)

/* Host attributes (hostInfoEnt.attr). */
#define H_ATTR_CHKPNTABLE 0x1
#define H_ATTR_CHKPNT_COPY 0x2

/* Queue status (queueInfoEnt.qStatus). */
#define QUEUE_STAT_OPEN 0x01
#define QUEUE_STAT_ACTIVE 0x02
#define QUEUE_STAT_RUN 0x04
#define QUEUE_STAT_NOPERM 0x08
#define QUEUE_STAT_DISC 0x10
#define QUEUE_STAT_RUNWIN_CLOSE 0x20

/* Queue attributes (queueInfoEnt.qAttrib). */
#define Q_ATTRIB_EXCLUSIVE 0x01
#define Q_ATTRIB_DEFAULT 0x02
#define Q_ATTRIB_FAIRSHARE 0x04
#define Q_ATTRIB_PREEMPTIVE 0x08
#define Q_ATTRIB_NQS 0x10
#define Q_ATTRIB_RECEIVE 0x20
#define Q_ATTRIB_PREEMPTABLE 0x40
#define Q_ATTRIB_BACKFILL 0x80
#define Q_ATTRIB_HOST_PREFER 0x100
#define Q_ATTRIB_NONPREEMPTIVE 0x200
#define Q_ATTRIB_NONPREEMPTABLE 0x400
#define Q_ATTRIB_NO_INTERACTIVE 0x800
#define Q_ATTRIB_ONLY_INTERACTIVE 0x1000
#define Q_ATTRIB_NO_HOST_TYPE 0x2000
#define Q_ATTRIB_IGNORE_DEADLINE 0x4000
#define Q_ATTRIB_CHKPNT 0x8000
#define Q_ATTRIB_RERUNNABLE 0x10000
#define Q_ATTRIB_EXCL_RMTJOB 0x20000
#define Q_ATTRIB_MC_FAST_SCHEDULE 0x40000
#define Q_ATTRIB_ENQUE_INTERACTIVE_AHEAD 0x80000
#define Q_MC_FLAG 0xf00000
#define Q_ATTRIB_LEASE_LOCAL 0x100000
#define Q_ATTRIB_LEASE_ONLY 0x200000
#define Q_ATTRIB_RMT_BATCH_LOCAL 0x300000
#define Q_ATTRIB_RMT_BATCH_ONLY 0x400000
#define Q_ATTRIB_RESOURCE_RESERVE 0x1000000
#define Q_ATTRIB_FS_DISPATCH_ORDER_QUEUE 0x2000000
#define Q_ATTRIB_BATCH 0x4000000
#define Q_ATTRIB_ONLINE 0x8000000
#define Q_ATTRIB_INTERRUPTIBLE_BACKFILL 0x10000000
#define Q_ATTRIB_APS 0x20000000
#define Q_ATTRIB_NO_HIGHER_RESERVE 0x40000000
#define Q_ATTRIB_NO_HOST_VALID 0x80000000

/* lsb_queueinfo options. */
#define ALL_QUEUE 0x01
#define DFT_QUEUE 0x02
#define CHECK_HOST 0x80
#define CHECK_USER 0x100
#define SORT_HOST 0x200
#define QUEUE_SHORT_FORMAT 0x400
#define EXPAND_HOSTNAME 0x800
#define RETRIEVE_BATCH 0x1000

/* lsb_hostgrpinfo and lsb_usergrpinfo options. */
#define USER_GRP 0x1
#define HOST_GRP 0x2
#define HPART_HGRP 0x4
#define GRP_RECURSIVE 0x8
#define GRP_ALL 0x10
#define NQSQ_GRP 0x20
#define GRP_SHARES 0x40
#define DYNAMIC_GRP 0x800
#define GRP_CU 0x1000

/* groupInfoEnt.options. */
#define GRP_NO_CONDENSE_OUTPUT 0x01
#define GRP_CONDENSE_OUTPUT 0x02
#define GRP_HAVE_REG_EXP 0x04
#define GRP_SERVICE_CLASS 0x08
#define GRP_IS_CU 0x10

/* Application profile attributes (appInfoEnt.aAttrib). */
#define A_ATTRIB_RERUNNABLE 0x01
#define A_ATTRIB_NONRERUNNABLE 0x02
#define A_ATTRIB_DEFAULT 0x04
#define A_ATTRIB_ABS_RUNLIMIT 0x08
#define A_ATTRIB_JOBBINDING 0x10
#define A_ATTRIB_NONJOBBINDING 0x20
#define A_ATTRIB_CHKPNT 0x40
#define A_ATTRIB_RESIZABLE 0x80
#define A_ATTRIB_AUTO_RESIZABLE 0x100

/* lsb_queuecontrol operations (queueCtrlReq.opCode). */
#define QUEUE_OPEN 1
#define QUEUE_CLOSED 2
#define QUEUE_ACTIVATE 3
#define QUEUE_INACTIVATE 4
#define QUEUE_CLEAN 5

/* lsb_hostcontrol operations (hostCtrlReq.opCode). */
#define HOST_OPEN 1
#define HOST_CLOSE 2
#define HOST_REBOOT 3
#define HOST_SHUTDOWN 4
#define HOST_CLOSE_REMOTE 5

/* lsb_reconfig operations (mbdCtrlReq.opCode). */
#define MBD_RESTART 0
#define MBD_RECONFIG 1
#define MBD_CKCONFIG 2

/* A fairshare account of a queue (queueInfoEnt.shareAccts). */
struct shareAcctInfoEnt {
    char *shareAcctPath;
    int shares;
    float priority;
    int numStartJobs;
    float histCpuTime;
    int numReserveJobs;
    int runTime;
    float shareAdjustment;
};

/* An absolute priority scheduling factor (queueInfoEnt.apsFactorInfoList). */
struct apsFactorInfo {
    char *name;
    float weight;
    float limit;
    int gracePeriod;
};

/* An APS factor and its subfactors. */
struct apsFactorMap {
    char *factorName;
    char *subFactorNames;
};

/* An APS factor's long name. */
struct apsLongNameMap {
    char *shortName;
    char *longName;
};

/* A queue's fairshare factors (queueInfoEnt.fairFactors). */
struct fsFactors {
    float runTimeFactor;
    float cpuTimeFactor;
    float runJobFactor;
    float histHours;
    float committedRunTimeFactor;
    float fairAdjustFactor;
    int enableHistRunTime;
    int enableRunTimeDecay;
};

/* A queue (lsb_queueinfo). Limits: INFINIT_INT / INFINIT_FLOAT when none; rLimits and
 * defLimits -1 (DEFAULT_RLIMIT) when none, CPU and RUN in seconds, sizes in KB. */
struct queueInfoEnt {
    char *queue;
    char *description;
    int priority;
    short nice;
    char *userList;
    char *hostList;
    char *hostStr;
    int nIdx;
    float *loadSched;
    float *loadStop;
    int userJobLimit;
    float procJobLimit;
    char *windows;
    int rLimits[LSF_RLIM_NLIMITS];
    char *hostSpec;
    int qAttrib;
    int qStatus;
    int maxJobs;
    int numJobs;
    int numPEND;
    int numRUN;
    int numSSUSP;
    int numUSUSP;
    int mig;
    int schedDelay;
    int acceptIntvl;
    char *windowsD;
    char *nqsQueues;
    char *userShares;
    char *defaultHostSpec;
    int procLimit;
    char *admins;
    char *preCmd;
    char *postCmd;
    char *requeueEValues;
    int hostJobLimit;
    char *resReq;
    int numRESERVE;
    int slotHoldTime;
    char *sndJobsTo;
    char *rcvJobsFrom;
    char *resumeCond;
    char *stopCond;
    char *jobStarter;
    char *suspendActCmd;
    char *resumeActCmd;
    char *terminateActCmd;
    int sigMap[LSB_SIG_NUM];
    char *preemption;
    int maxRschedTime;
    int numOfSAccts;
    struct shareAcctInfoEnt *shareAccts;
    char *chkpntDir;
    int chkpntPeriod;
    int imptJobBklg;
    int defLimits[LSF_RLIM_NLIMITS];
    int chunkJobSize;
    int minProcLimit;
    int defProcLimit;
    char *fairshareQueues;
    char *defExtSched;
    char *mandExtSched;
    int slotShare;
    char *slotPool;
    int underRCond;
    int overRCond;
    float idleCond;
    int underRJobs;
    int overRJobs;
    int idleJobs;
    int warningTimePeriod;
    char *warningAction;
    char *qCtrlMsg;
    char *acResReq;
    int symJobLimit;
    char *cpuReq;
    int proAttr;
    int lendLimit;
    int hostReallocInterval;
    int numCPURequired;
    int numCPUAllocated;
    int numCPUBorrowed;
    int numCPULent;
    int schGranularity;
    int symTaskGracePeriod;
    int minOfSsm;
    int maxOfSsm;
    int numOfAllocSlots;
    char *servicePreemption;
    int provisionStatus;
    int minTimeSlice;
    char *queueGroup;
    int numApsFactors;
    struct apsFactorInfo *apsFactorInfoList;
    struct apsFactorMap *apsFactorMaps;
    struct apsLongNameMap *apsLongNames;
    int maxJobPreempt;
    int maxPreExecRetry;
    int localMaxPreExecRetry;
    int maxJobRequeue;
    int usePam;
    int cu_type_exclusive;
    char *cu_str_exclusive;
    char *resRsvLimit;
    struct fsFactors *fairFactors;
    int maxSlotsInPool;
    int usePriorityInPool;
    int noPreemptInterval;
    int maxTotalTimePreempt;
    int qAttrib2;
    int mockParamA;
    char *mockParamB;
    float mockParamC;
    int preemptDelayTime;
};

/* A batch server host (lsb_hostinfo, lsb_hostinfo_ex). load, loadSched, loadStop and
 * realLoad have nIdx entries (the built-in indices R15S..MEM, then the external ones);
 * a threshold that is not set is INFINIT_LOAD (-INFINIT_LOAD for it, tmp, swp, mem). */
struct hostInfoEnt {
    char *host;
    int hStatus;
    int *busySched;
    int *busyStop;
    float cpuFactor;
    int nIdx;
    float *load;
    float *loadSched;
    float *loadStop;
    char *windows;
    int userJobLimit;
    int maxJobs;
    int numJobs;
    int numRUN;
    int numSSUSP;
    int numUSUSP;
    int mig;
    int attr;
    float *realLoad;
    int numRESERVE;
    int chkSig;
    float cnsmrUsage;
    float prvdrUsage;
    float cnsmrAvail;
    float prvdrAvail;
    float maxAvail;
    float maxExitRate;
    float numExitRate;
    char *hCtrlMsg;
};

/* A user's or group's shares (groupInfoEnt.userShares). */
struct userShares {
    char *user;
    int shares;
};

/* A host group (lsb_hostgrpinfo) or user group (lsb_usergrpinfo). memberList: the
 * members separated by spaces, a subgroup as name/ (GRP_RECURSIVE: expanded). */
struct groupInfoEnt {
    char *group;
    char *memberList;
    char *adminMemberList;
    int numUserShares;
    struct userShares *userShares;
    char *hostStr;
    int options;
    char *pattern;
    char *neg_pattern;
    int cu_type;
};

/* A user or user group (lsb_userinfo): its job slots by state and limits
 * (INFINIT_INT / INFINIT_FLOAT when none). */
struct userInfoEnt {
    char *user;
    float procJobLimit;
    int maxJobs;
    int numStartJobs;
    int numJobs;
    int numPEND;
    int numRUN;
    int numSSUSP;
    int numUSUSP;
    int numRESERVE;
    int maxPendJobs;
};

/* An application profile (lsb_appInfo). */
struct appInfoEnt {
    char *name;
    char *description;
    int numJobs;
    int numPEND;
    int numRUN;
    int numSSUSP;
    int numUSUSP;
    int numRESERVE;
    int aAttrib;
    int chunkJobSize;
    char *requeueEValues;
    char *successEValues;
    char *preCmd;
    char *postCmd;
    char *jobStarter;
    char *suspendActCmd;
    char *resumeActCmd;
    char *terminateActCmd;
    int memLimitType;
    int defLimits[LSF_RLIM_NLIMITS];
    char *hostSpec;
    char *resReq;
    int maxProcLimit;
    int defProcLimit;
    int minProcLimit;
    int runTime;
    int jobIncludePostProc;
    int jobPostProcTimeOut;
    char *rTaskGoneAction;
    char *djobEnvScript;
    int djobRuInterval;
    int djobHbInterval;
    char *djobCommfailAction;
    int djobDisabled;
    int djobResizeGracePeriod;
    char *chkpntDir;
    char *chkpntMethod;
    int chkpntPeriod;
    int initChkpntPeriod;
    int migThreshold;
    int maxJobPreempt;
    int maxPreExecRetry;
    int localMaxPreExecRetry;
    int maxJobRequeue;
    int noPreemptRunTime;
    int noPreemptFinishTime;
    int noPreemptRunTimePercent;
    int noPreemptFinishTimePercent;
    int usePam;
    int bindingOption;
    int persistHostOrder;
    char *resizeNotifyCmd;
};

/* The cluster's batch parameters, lsb.params (lsb_parameterinfo). */
struct parameterInfo {
    char *defaultQueues;
    char *defaultHostSpec;
    int mbatchdInterval;
    int sbatchdInterval;
    int jobAcceptInterval;
    int maxDispRetries;
    int maxSbdRetries;
    int preemptPeriod;
    int cleanPeriod;
    int maxNumJobs;
    float historyHours;
    int pgSuspendIt;
    char *defaultProject;
    int retryIntvl;
    int nqsQueuesFlags;
    int nqsRequestsFlags;
    int maxPreExecRetry;
    int localMaxPreExecRetry;
    int eventWatchTime;
    float runTimeFactor;
    float waitTimeFactor;
    float runJobFactor;
    int eEventCheckIntvl;
    int rusageUpdateRate;
    int rusageUpdatePercent;
    int condCheckTime;
    int maxSbdConnections;
    int rschedInterval;
    int maxSchedStay;
    int freshPeriod;
    int preemptFor;
    int adminSuspend;
    int userReservation;
    float cpuTimeFactor;
    int fyStart;
    int maxJobArraySize;
    time_t exceptReplayPeriod;
    int jobTerminateInterval;
    int disableUAcctMap;
    int enforceFSProj;
    int enforceProjCheck;
    int jobRunTimes;
    int dbDefaultIntval;
    int dbHjobCountIntval;
    int dbQjobCountIntval;
    int dbUjobCountIntval;
    int dbJobResUsageIntval;
    int dbLoadIntval;
    int dbJobInfoIntval;
    int jobDepLastSub;
    int maxJobNameDep;
    char *dbSelectLoad;
    int jobSynJgrp;
    char *pjobSpoolDir;
    int maxUserPriority;
    int jobPriorityValue;
    int jobPriorityTime;
    int enableAutoAdjust;
    int autoAdjustAtNumPend;
    float autoAdjustAtPercent;
    int sharedResourceUpdFactor;
    int scheRawLoad;
    char *jobAttaDir;
    int maxJobMsgNum;
    int maxJobAttaSize;
    int mbdRefreshTime;
    int updJobRusageInterval;
    char *sysMapAcct;
    int preExecDelay;
    int updEventUpdateInterval;
    int resourceReservePerSlot;
    int maxJobId;
    char *preemptResourceList;
    int preemptionWaitTime;
    int maxAcctArchiveNum;
    int acctArchiveInDays;
    int acctArchiveInSize;
    float committedRunTimeFactor;
    int enableHistRunTime;
    int nqsUpdateInterval;
    int mcbOlmReclaimTimeDelay;
    int chunkJobDuration;
    int sessionInterval;
    int publishReasonJobNum;
    int publishReasonInterval;
    int publishReason4AllJobInterval;
    int mcUpdPendingReasonInterval;
    int mcUpdPendingReasonPkgSize;
    int noPreemptRunTime;
    int noPreemptFinishTime;
    char *acctArchiveAt;
    int absoluteRunLimit;
    int lsbExitRateDuration;
    int lsbTriggerDuration;
    int maxJobinfoQueryPeriod;
    int jobSubRetryInterval;
    int pendingJobThreshold;
    int maxConcurrentJobQuery;
    int minSwitchPeriod;
    int condensePendingReasons;
    int slotBasedParallelSched;
    int disableUserJobMovement;
    int detectIdleJobAfter;
    int useSymbolPriority;
    int JobPriorityRound;
    char *priorityMapping;
    int maxInfoDirs;
    int minMbdRefreshTime;
    int enableStopAskingLicenses2LS;
    int expiredTime;
    char *mbdQueryCPUs;
    char *defaultApp;
    int enableStream;
    char *streamFile;
    int streamSize;
    int syncUpHostStatusWithLIM;
    char *defaultSLA;
    int slaTimer;
    int mbdEgoTtl;
    int mbdEgoConnTimeout;
    int mbdEgoReadTimeout;
    int mbdUseEgoMXJ;
    int mbdEgoReclaimByQueue;
    int defaultSLAvelocity;
    char *exitRateTypes;
    float globalJobExitRate;
    int enableJobExitRatePerSlot;
    int enableMetric;
    int schMetricsSample;
    float maxApsValue;
    int newjobRefresh;
    int preemptJobType;
    char *defaultJgrp;
    int jobRunlimitRatio;
    int jobIncludePostproc;
    int jobPostprocTimeout;
    int sschedUpdateSummaryInterval;
    int sschedUpdateSummaryByTask;
    int sschedRequeueLimit;
    int sschedRetryLimit;
    int sschedMaxTasks;
    int sschedMaxRuntime;
    char *sschedAcctDir;
    int jgrpAutoDel;
    int maxJobPreempt;
    int maxJobRequeue;
    int noPreemptRunTimePercent;
    int noPreemptFinishTimePercent;
    int slotReserveQueueLimit;
    int maxJobPercentagePerSession;
    int useSuspSlots;
    int maxStreamFileNum;
    int privilegedUserForceBkill;
    int mcSchedulingEnhance;
    int mcUpdateInterval;
    int intersectCandidateHosts;
    int enforceOneUGLimit;
    int logRuntimeESTExceeded;
    char *computeUnitTypes;
    float fairAdjustFactor;
    int simEnableCpuFactor;
    int extendJobException;
    char *preExecExitValues;
    int enableRunTimeDecay;
    int advResUserLimit;
    int noPreemptInterval;
    int maxTotalTimePreempt;
    int strictUGCtrl;
    char *defaultUserGroup;
    int enforceUGTree;
    int mockParamA;
    char *mockParamB;
    float mockParamC;
    int preemptDelayTime;
    int jobPreprocTimeout;
    char *allowEventType;
    int runtimeLogInterval;
    char *groupPendJobsBy;
    char *pendingReasonsExclude;
    char *pendingTimeRanking;
    int includeDetailReasons;
    char *pendingReasonDir;
};

/* lsb_queuecontrol's request: opCode QUEUE_OPEN, QUEUE_CLOSED, QUEUE_ACTIVATE or
 * QUEUE_INACTIVATE; message is the administrator's comment (badmin -C). */
struct queueCtrlReq {
    char *queue;
    int opCode;
    char *message;
};

/* lsb_hostcontrol's request: opCode HOST_OPEN, HOST_CLOSE, HOST_REBOOT (restart
 * sbatchd) or HOST_SHUTDOWN (stop sbatchd); host NULL is this host. */
struct hostCtrlReq {
    char *host;
    int opCode;
    char *message;
};

/* lsb_reconfig's request: opCode MBD_RESTART, MBD_RECONFIG or MBD_CKCONFIG. */
struct mbdCtrlReq {
    int opCode;
    char *name;
    char *message;
};

extern struct queueInfoEnt *lsb_queueinfo(char **queues, int *numQueues, char *hostName,
                                          char *userName, int options);
extern struct hostInfoEnt *lsb_hostinfo(char **hosts, int *numHosts);
extern struct hostInfoEnt *lsb_hostinfo_ex(char **hosts, int *numHosts, char *resReq,
                                           int options);
extern struct groupInfoEnt *lsb_hostgrpinfo(char **groups, int *numGroups, int options);
extern struct groupInfoEnt *lsb_usergrpinfo(char **groups, int *numGroups, int options);
extern struct userInfoEnt *lsb_userinfo(char **users, int *numUsers);
extern struct appInfoEnt *lsb_appInfo(int *numEnt);
extern void lsb_freeAppInfoEnts(int numEnt, struct appInfoEnt *appInfoEnts);
extern struct parameterInfo *lsb_parameterinfo(char **names, int *numUsers, int options);
extern int lsb_queuecontrol(struct queueCtrlReq *req);
extern int lsb_hostcontrol(struct hostCtrlReq *req);
extern int lsb_reconfig(struct mbdCtrlReq *req);
/* Batch information and administration: end */

/* Events: begin */
/*
 * lsb_geteventrec: the records of lsb.events and lsb.acct as LSF's struct eventRec.
 * Structure, field and constant names and field order are LSF's (the documented
 * lsbatch.h API); LSF has struct lsfRusage in lsf.h. Fields Basalt's log has no value
 * for are 0, NULL or "" (LSF's "not available"), resource usage -1. Pointers to LSF
 * structures Basalt never fills (submitExt, hostRusage, networkAlloc, affinity,
 * rmtCtrlResult) are always NULL and their structures are left incomplete here.
 */
#define MAX_VERSION_LEN 12
#define MAX_LSB_NAME_LEN 60

/* eventRec.type. */
#define EVENT_JOB_NEW 1
#define EVENT_JOB_START 2
#define EVENT_JOB_STATUS 3
#define EVENT_JOB_SWITCH 4
#define EVENT_JOB_MOVE 5
#define EVENT_QUEUE_CTRL 6
#define EVENT_HOST_CTRL 7
#define EVENT_MBD_DIE 8
#define EVENT_MBD_UNFULFILL 9
#define EVENT_JOB_FINISH 10
#define EVENT_LOAD_INDEX 11
#define EVENT_CHKPNT 12
#define EVENT_MIG 13
#define EVENT_PRE_EXEC_START 14
#define EVENT_MBD_START 15
#define EVENT_JOB_ROUTE 16
#define EVENT_JOB_MODIFY 17
#define EVENT_JOB_SIGNAL 18
#define EVENT_CAL_NEW 19
#define EVENT_CAL_MODIFY 20
#define EVENT_CAL_DELETE 21
#define EVENT_JOB_FORWARD 22
#define EVENT_JOB_ACCEPT 23
#define EVENT_STATUS_ACK 24
#define EVENT_JOB_EXECUTE 25
#define EVENT_JOB_MSG 26
#define EVENT_JOB_MSG_ACK 27
#define EVENT_JOB_REQUEUE 28
#define EVENT_JOB_OCCUPY_REQ 29
#define EVENT_JOB_VACATED 30
#define EVENT_JOB_SIGACT 32
#define EVENT_SBD_JOB_STATUS 34
#define EVENT_JOB_START_ACCEPT 35
#define EVENT_CAL_UNDELETE 36
#define EVENT_JOB_CLEAN 37
#define EVENT_JOB_EXCEPTION 38
#define EVENT_JGRP_ADD 39
#define EVENT_JGRP_MOD 40
#define EVENT_JGRP_CTRL 41
#define EVENT_JOB_FORCE 42
#define EVENT_LOG_SWITCH 43
#define EVENT_JOB_MODIFY2 44
#define EVENT_JGRP_STATUS 45
#define EVENT_JOB_ATTR_SET 46
#define EVENT_JOB_EXT_MSG 47
#define EVENT_JOB_ATTA_DATA 48
#define EVENT_JOB_CHUNK 49
#define EVENT_SBD_UNREPORTED_STATUS 50
#define EVENT_ADRSV_FINISH 51
#define EVENT_HGHOST_CTRL 52
#define EVENT_CPUPROFILE_STATUS 53
#define EVENT_DATA_LOGGING 54
#define EVENT_JOB_RUN_RUSAGE 55
#define EVENT_END_OF_STREAM 56
#define EVENT_SLA_RECOMPUTE 57
#define EVENT_METRIC_LOG 58
#define EVENT_TASK_FINISH 59
#define EVENT_JOB_RESIZE_NOTIFY_START 60
#define EVENT_JOB_RESIZE_NOTIFY_ACCEPT 61
#define EVENT_JOB_RESIZE_NOTIFY_DONE 62
#define EVENT_JOB_RESIZE_RELEASE 63
#define EVENT_JOB_RESIZE_CANCEL 64
#define EVENT_JOB_RESIZE 65
#define EVENT_JOB_ARRAY_ELEMENT 66
#define EVENT_MBD_SIM_STATUS 67
#define EVENT_JOB_FINISH2 68
#define EVENT_JOB_STARTLIMIT 69
#define EVENT_JOB_STATUS2 70
#define EVENT_JOB_PENDING_REASONS 71
#define EVENT_JOB_SWITCH2 72
#define EVENT_JOB_ACCEPTACK 73
#define EVENT_JOB_PROVISION_START 74
#define EVENT_JOB_PROVISION_END 75
#define EVENT_JOB_FANOUT_INFO 76

/* mbdDieLog.exitCode: why mbatchd stopped. */
#define MASTER_RESIGN 201
#define MASTER_RECONFIG 202
#define MASTER_FATAL 203
#define MASTER_MEM 204
#define MASTER_CONF 205
#define MASTER_EVENT 206
#define MASTER_DISABLE 207

/* exitInfo of jobStatusLog and jobFinishLog (and jobInfoEnt): why LSF ended a job. */
#define TERM_UNKNOWN 0
#define TERM_PREEMPT 1
#define TERM_WINDOW 2
#define TERM_LOAD 3
#define TERM_OTHER 4
#define TERM_RUNLIMIT 5
#define TERM_DEADLINE 6
#define TERM_PROCESSLIMIT 7
#define TERM_FORCE_OWNER 8
#define TERM_FORCE_ADMIN 9
#define TERM_REQUEUE_OWNER 10
#define TERM_REQUEUE_ADMIN 11
#define TERM_CPULIMIT 12
#define TERM_CHKPNT 13
#define TERM_OWNER 14
#define TERM_ADMIN 15
#define TERM_MEMLIMIT 16
#define TERM_EXTERNAL_SIGNAL 17
#define TERM_RMS 18
#define TERM_ZOMBIE 19
#define TERM_SWAP 20
#define TERM_THREADLIMIT 21
#define TERM_SLURM 22
#define TERM_BUCKET_KILL 23
#define TERM_CTRL_PID 24
#define TERM_CWD_NOTEXIST 25
#define TERM_REMOVE_HUNG_JOB 26
#define TERM_ORPHAN_SYSTEM 27
#define TERM_PRE_EXEC_FAIL 28
#define TERM_DATA 29
#define TERM_MC_RECALL 30
#define TERM_REQUEUE_RC 31
#define TERM_CSM_ALLOC 32
#define TERM_KUBE 33
#define TERM_RC 34

/* Resource usage as logged: times in seconds, sizes in KB, -1 when not known. */
struct lsfRusage {
    double ru_utime;
    double ru_stime;
    double ru_maxrss;
    double ru_ixrss;
    double ru_ismrss;
    double ru_idrss;
    double ru_isrss;
    double ru_minflt;
    double ru_majflt;
    double ru_nswap;
    double ru_inblock;
    double ru_oublock;
    double ru_ioch;
    double ru_msgsnd;
    double ru_msgrcv;
    double ru_nsignals;
    double ru_nvcsw;
    double ru_nivcsw;
    double ru_exutime;
};

/* JOB_NEW and JOB_MODIFY: a submitted job. */
struct jobNewLog {
    int jobId;
    int userId;
    char userName[MAX_LSB_NAME_LEN];
    int options;
    int options2;
    int numProcessors;
    time_t submitTime;
    time_t beginTime;
    time_t termTime;
    int sigValue;
    int chkpntPeriod;
    int restartPid;
    int rLimits[LSF_RLIM_NLIMITS];
    char hostSpec[MAXHOSTNAMELEN];
    float hostFactor;
    int umask;
    char queue[MAX_LSB_NAME_LEN];
    char *resReq;
    char fromHost[MAXHOSTNAMELEN];
    char *cwd;
    char *chkpntDir;
    char *inFile;
    char *outFile;
    char *errFile;
    char *inFileSpool;
    char *commandSpool;
    char *jobSpoolDir;
    char *subHomeDir;
    char *jobFile;
    int numAskedHosts;
    char **askedHosts;
    char *dependCond;
    char *timeEvent;
    char *jobName;
    char *command;
    int nxf;
    struct xFile *xf;
    char *preExecCmd;
    char *mailUser;
    char *projectName;
    int niosPort;
    int maxNumProcessors;
    char *schedHostType;
    char *loginShell;
    char *userGroup;
    char *exceptList;
    int idx;
    int userPriority;
    char *rsvId;
    char *jobGroup;
    char *extsched;
    int warningTimePeriod;
    char *warningAction;
    char *sla;
    int SLArunLimit;
    char *licenseProject;
    int options3;
    char *app;
    char *postExecCmd;
    int runtimeEstimation;
    char *requeueEValues;
    int initChkpntPeriod;
    int migThreshold;
    char *notifyCmd;
    char *jobDescription;
    struct submit_ext *submitExt;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    int options4;
    int numAskedClusters;
    char **askedClusters;
    char *flow_id;
    char *subcwd;
    char *outdir;
    char *dcTmpls;
    char *dcVmActions;
};

/* JOB_MODIFY2: what bmod changed (the fields its option bits name). */
struct jobModLog {
    char *jobIdStr;
    int options;
    int options2;
    int delOptions;
    int delOptions2;
    int userId;
    char *userName;
    int submitTime;
    int umask;
    int numProcessors;
    int beginTime;
    int termTime;
    int sigValue;
    int restartPid;
    char *jobName;
    char *queue;
    int numAskedHosts;
    char **askedHosts;
    char *resReq;
    int rLimits[LSF_RLIM_NLIMITS];
    char *hostSpec;
    char *dependCond;
    char *timeEvent;
    char *subHomeDir;
    char *inFile;
    char *outFile;
    char *errFile;
    char *command;
    char *inFileSpool;
    char *commandSpool;
    int chkpntPeriod;
    char *chkpntDir;
    int nxf;
    struct xFile *xf;
    char *jobFile;
    char *fromHost;
    char *cwd;
    char *preExecCmd;
    char *mailUser;
    char *projectName;
    int niosPort;
    int maxNumProcessors;
    char *loginShell;
    char *schedHostType;
    char *userGroup;
    char *exceptList;
    int userPriority;
    char *rsvId;
    char *extsched;
    int warningTimePeriod;
    char *warningAction;
    char *jobGroup;
    char *sla;
    char *licenseProject;
    int options3;
    int delOptions3;
    char *app;
    char *apsString;
    char *postExecCmd;
    int runtimeEstimation;
    char *requeueEValues;
    int initChkpntPeriod;
    int migThreshold;
    char *notifyCmd;
    char *jobDescription;
    struct submit_ext *submitExt;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    int options4;
    int delOptions4;
    int numAskedClusters;
    char **askedClusters;
    int rmtJobCtrlStage;
    int numRmtCtrlResult;
    struct rmtJobCtrlRecord *rmtCtrlResult;
    char *outdir;
    char *dcTmpls;
    char *dcVmActions;
};

/* JOB_START and PRE_EXEC_START: the job dispatched to its hosts (one entry a slot). */
struct jobStartLog {
    int jobId;
    int jStatus;
    int jobPid;
    int jobPGid;
    float hostFactor;
    int numExHosts;
    char **execHosts;
    char *queuePreCmd;
    char *queuePostCmd;
    int jFlags;
    char *userGroup;
    int idx;
    char *additionalInfo;
    int duration4PreemptBackfill;
    int jFlags2;
    char *effectiveResReq;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    int num_network;
    struct networkAlloc *networkAlloc;
    struct affinityJobData *affinity;
    int nextStatusNo;
};

/* JOB_START_ACCEPT: sbatchd started the job (its process ids). */
struct jobStartAcceptLog {
    int jobId;
    int jobPid;
    int jobPGid;
    int idx;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    int nextStatusNo;
};

/* JOB_EXECUTE: the job runs as its user. */
struct jobExecuteLog {
    int jobId;
    int execUid;
    char *execHome;
    char *execCwd;
    int jobPGid;
    char *execUsername;
    int jobPid;
    int idx;
    char *additionalInfo;
    int SLAscaledRunLimit;
    int position;
    char *execRusage;
    int duration4PreemptBackfill;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    char *outdir;
    int nextStatusNo;
};

/* JOB_STATUS: a new state; ru says whether lsfRusage holds the job's usage. */
struct jobStatusLog {
    int jobId;
    int jStatus;
    int reason;
    int subreasons;
    float cpuTime;
    time_t endTime;
    int ru;
    struct lsfRusage lsfRusage;
    int jFlags;
    int exitStatus;
    int idx;
    int exitInfo;
    int numhRusages;
    struct hRusage *hostRusage;
    int maxMem;
    int avgMem;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    int maskedJStatus;
    int nextStatusNo;
};

/* JOB_SWITCH: bswitch. */
struct jobSwitchLog {
    int userId;
    int jobId;
    char queue[MAX_LSB_NAME_LEN];
    int idx;
    char userName[MAX_LSB_NAME_LEN];
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    int rmtJobCtrlStage;
    int numRmtCtrlResult;
    struct rmtJobCtrlRecord *rmtCtrlResult;
};

/* JOB_MOVE: btop (base TO_TOP) and bbot (TO_BOTTOM). */
struct jobMoveLog {
    int userId;
    int jobId;
    int position;
    int base;
    int idx;
    char userName[MAX_LSB_NAME_LEN];
    int rmtJobCtrlStage;
    int numRmtCtrlResult;
    struct rmtJobCtrlRecord *rmtCtrlResult;
};

/* CHKPNT: a checkpoint ended (ok 1) or failed (ok 0). */
struct chkpntLog {
    int jobId;
    time_t period;
    int pid;
    int ok;
    int flags;
    int idx;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
};

/* JOB_REQUEUE. */
struct jobRequeueLog {
    int jobId;
    int idx;
};

/* JOB_CLEAN: a finished job left mbatchd's memory. */
struct jobCleanLog {
    int jobId;
    int idx;
};

/* JOB_SIGACT: a signal action (suspend, resume, checkpoint, ...) on the job's host. */
struct sigactLog {
    int jobId;
    time_t period;
    int pid;
    int jStatus;
    int reasons;
    int flags;
    char *signalSymbol;
    int actStatus;
    int idx;
    int rmtJobCtrlStage;
    int numRmtCtrlResult;
    struct rmtJobCtrlRecord *rmtCtrlResult;
};

/* MIG: bmig, to these candidate hosts (none: any). */
struct migLog {
    int jobId;
    int numAskedHosts;
    char **askedHosts;
    int userId;
    int idx;
    char userName[MAX_LSB_NAME_LEN];
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    int sigFlag;
    int acAction;
};

/* JOB_SIGNAL: bkill and friends; signalSymbol is "KILL", "REQUEUE_PEND", ... */
struct signalLog {
    int userId;
    int jobId;
    char *signalSymbol;
    int runCount;
    int idx;
    char userName[MAX_LSB_NAME_LEN];
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
};

/* QUEUE_CTRL: opCode is lsb_queuecontrol's (open 1, close 2, activate 3, inactivate 4). */
struct queueCtrlLog {
    int opCode;
    char queue[MAX_LSB_NAME_LEN];
    int userId;
    char userName[MAX_LSB_NAME_LEN];
    char message[MAXLINELEN];
};

/* HOST_CTRL: opCode is lsb_hostcontrol's (open 1, close 2, reboot 3, shutdown 4). */
struct hostCtrlLog {
    int opCode;
    char host[MAXHOSTNAMELEN];
    int userId;
    char userName[MAX_LSB_NAME_LEN];
    char message[MAXLINELEN];
};

/* MBD_START. */
struct mbdStartLog {
    char master[MAXHOSTNAMELEN];
    char cluster[MAXLSFNAMELEN];
    int numHosts;
    int numQueues;
};

/* MBD_DIE: exitCode is one of MASTER_*. */
struct mbdDieLog {
    char master[MAXHOSTNAMELEN];
    int numRemoveJobs;
    int exitCode;
    char message[MAXLINELEN];
};

/* JOB_FINISH (lsb.acct): a finished job's accounting; endTime is the event time. */
struct jobFinishLog {
    int jobId;
    int userId;
    char userName[MAX_LSB_NAME_LEN];
    int options;
    int numProcessors;
    int jStatus;
    time_t submitTime;
    time_t beginTime;
    time_t termTime;
    time_t startTime;
    time_t endTime;
    char queue[MAX_LSB_NAME_LEN];
    char *resReq;
    char fromHost[MAXHOSTNAMELEN];
    char *cwd;
    char *inFile;
    char *outFile;
    char *errFile;
    char *inFileSpool;
    char *commandSpool;
    char *jobFile;
    int numAskedHosts;
    char **askedHosts;
    float hostFactor;
    int numExHosts;
    char **execHosts;
    float cpuTime;
    char *jobName;
    char *command;
    struct lsfRusage lsfRusage;
    char *dependCond;
    char *timeEvent;
    char *preExecCmd;
    char *mailUser;
    char *projectName;
    int exitStatus;
    int maxNumProcessors;
    char *loginShell;
    int idx;
    int maxRMem;
    int maxRSwap;
    char *rsvId;
    char *sla;
    int exceptMask;
    char *additionalInfo;
    int exitInfo;
    int warningTimePeriod;
    char *warningAction;
    char *chargedSAAP;
    char *licenseProject;
    char *app;
    char *postExecCmd;
    int runtimeEstimation;
    char *jgroup;
    int options2;
    char *requeueEValues;
    char *notifyCmd;
    time_t lastResizeTime;
    char *jobDescription;
    struct submit_ext *submitExt;
    int numhRusages;
    struct hRusage *hostRusage;
    int avgMem;
    char *effectiveResReq;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    char *dstCluster;
    LS_LONG_INT dstJobId;
    time_t forwardTime;
    int runLimit;
    int options3;
    char *flow_id;
    int acJobWaitTime;
    int totalProvisionTime;
    char *outdir;
    int runTime;
    char *subcwd;
    int num_network;
    struct networkAlloc *networkAlloc;
    struct affinityJobData *affinity;
};

/* JOB_FORWARD (MultiCluster, submission side): sent to cluster. */
struct jobForwardLog {
    int jobId;
    char *cluster;
    int numReserHosts;
    char **reserHosts;
    int idx;
    int jobRmtAttr;
    char *srcCluster;
    LS_LONG_INT srcJobId;
    LS_LONG_INT dstJobId;
    char *effectiveResReq;
};

/* JOB_ACCEPT (MultiCluster, execution side): accepted from cluster, where it is
 * remoteJid. */
struct jobAcceptLog {
    int jobId;
    LS_LONG_INT remoteJid;
    char *cluster;
    int idx;
    int jobRmtAttr;
    char *dstCluster;
    LS_LONG_INT dstJobId;
};

/* JOB_FORCE: brun. */
struct jobForceRequestLog {
    int userId;
    int numExecHosts;
    char **execHosts;
    int jobId;
    int idx;
    int options;
    char userName[MAX_LSB_NAME_LEN];
    char *queue;
    int rmtJobCtrlStage;
    int numRmtCtrlResult;
    struct rmtJobCtrlRecord *rmtCtrlResult;
};

/* LOG_SWITCH: lsb.events was switched; the last job id given so far. */
struct logSwitchLog {
    int lastJobId;
};

/* The record of each type (LSF's members, those Basalt's logs can hold). */
union eventLog {
    struct jobNewLog jobNewLog;
    struct jobStartLog jobStartLog;
    struct jobStatusLog jobStatusLog;
    struct jobSwitchLog jobSwitchLog;
    struct jobMoveLog jobMoveLog;
    struct queueCtrlLog queueCtrlLog;
    struct hostCtrlLog hostCtrlLog;
    struct mbdStartLog mbdStartLog;
    struct mbdDieLog mbdDieLog;
    struct jobFinishLog jobFinishLog;
    struct loadIndexLog loadIndexLog;
    struct migLog migLog;
    struct jobForwardLog jobForwardLog;
    struct jobAcceptLog jobAcceptLog;
    struct signalLog signalLog;
    struct jobExecuteLog jobExecuteLog;
    struct jobRequeueLog jobRequeueLog;
    struct chkpntLog chkpntLog;
    struct sigactLog sigactLog;
    struct jobStartAcceptLog jobStartAcceptLog;
    struct jobCleanLog jobCleanLog;
    struct jobForceRequestLog jobForceRequestLog;
    struct logSwitchLog logSwitchLog;
    struct jobModLog jobModLog;
};

/* One record: its log version ("10.1" for Basalt's), EVENT_* type and time. */
struct eventRec {
    char version[MAX_VERSION_LEN];
    int type;
    time_t eventTime;
    union eventLog eventLog;
};

/* The next record of an open lsb.events or lsb.acct; *lineNum counts the lines read.
 * The record is the library's, valid until the next call. NULL at the end
 * (LSBE_EOF), on a malformed line (LSBE_EVENT_FORMAT) or a record type it cannot
 * represent (LSBE_UNKNOWN_EVENT); *lineNum is then that line and the next call reads
 * on after it. */
extern struct eventRec *lsb_geteventrec(FILE *log_fp, int *lineNum);
/* One line's record into *logRec (its strings valid until the next call); 0, or -1. */
extern int lsb_geteventrecbyline(char *line, struct eventRec *logRec);
/* Events: end */

#ifdef __cplusplus
}
#endif

#endif /* LSBATCH_H */
