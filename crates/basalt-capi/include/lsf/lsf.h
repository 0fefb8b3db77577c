/*
 * lsf/lsf.h -- Basalt's LSF base API (liblsf): cluster and host information, load,
 * configuration and LSF's base error codes (lserrno, LSE_*).
 *
 * Written for Basalt from LSF 10.1's documented API so that programs written for LSF
 * compile unchanged; see docs/user-guide.md, "C API".
 */
#ifndef LSF_H
#define LSF_H

/* What LSF's lsf.h brings in, and programs written for LSF rely on (SIGKILL, FILE,
 * struct rlimit, struct sockaddr_in, ...). */
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Versions. */
#define _VERSION_STR_ "Basalt (IBM Spectrum LSF 10.1 compatible)"
#define LSF_PRODUCT_MAJOR_VERSION 10
#define LSF_PRODUCT_MINOR_VERSION 1
#define LSF_PRODUCT_MAINTAIN_VERSION 0

/* 64-bit integers (job ids). */
typedef long long int LS_LONG_INT;
typedef unsigned long long int LS_UNS_LONG_INT;
#define LS_LONG_FORMAT "%lld"

/* Sizes. */
#define MAXLINELEN 512
#define MAXLSFNAMELEN 40
#define MAXSRES 32
#define MAXRESDESLEN 256
#define NBUILTINDEX 11
#define MAXTYPES 128
#define MAXMODELS 128
#define MAXFILENAMELEN 4096
#ifndef MAXHOSTNAMELEN
#define MAXHOSTNAMELEN 64
#endif
#define MAXPATHLEN_LSF 4096

/* The built-in load indices, by position in a load vector. */
#define R15S 0
#define R1M 1
#define R15M 2
#define UT 3
#define PG 4
#define IO 5
#define LS 6
#define IT 7
#define TMP 8
#define SWP 9
#define MEM 10
#define USR1 11
#define USR2 12

/* A host's status word (hostLoad.status[0]). */
#define LIM_UNAVAIL 0x00010000
#define LIM_LOCKEDU 0x00020000
#define LIM_LOCKEDW 0x00040000
#define LIM_BUSY 0x00080000
#define LIM_RESDOWN 0x00100000
#define LIM_UNLICENSED 0x00200000
#define LIM_SBDDOWN 0x00400000
#define LIM_LOCKEDM 0x00800000
#define LIM_OK_MASK 0x02bf0000
#define LS_ISUNAVAIL(s) (((s)[0] & LIM_UNAVAIL) != 0)
#define LS_ISBUSY(s) (((s)[0] & LIM_BUSY) != 0)
#define LS_ISLOCKEDU(s) (((s)[0] & LIM_LOCKEDU) != 0)
#define LS_ISLOCKEDW(s) (((s)[0] & LIM_LOCKEDW) != 0)
#define LS_ISLOCKEDM(s) (((s)[0] & LIM_LOCKEDM) != 0)
#define LS_ISLOCKED(s) (((s)[0] & (LIM_LOCKEDU | LIM_LOCKEDW | LIM_LOCKEDM)) != 0)
#define LS_ISRESDOWN(s) (((s)[0] & LIM_RESDOWN) != 0)
#define LS_ISSBDDOWN(s) (((s)[0] & LIM_SBDDOWN) != 0)
#define LS_ISOK(s) (((s)[0] & LIM_OK_MASK) == 0)
#define LS_ISOKNRES(s) ((((s)[0]) & ~(LIM_RESDOWN | LIM_SBDDOWN)) == 0)

/* Options of ls_load, ls_loadofhosts and ls_gethostinfo. */
#define EXACT 0x01
#define OK_ONLY 0x02
#define NORMALIZE 0x04
#define LOCALITY 0x08
#define IGNORE_RES 0x10
#define LOCAL_ONLY 0x20
#define DFT_FROMTYPE 0x40
#define ALL_CLUSTERS 0x80
#define EFFECTIVE 0x100

/* A value a load index or threshold does not have. */
#define INFINIT_LOAD ((float)(0x7fffffff))
#define INFINIT_FLOAT ((float)(0x7fffffff))
#define INFINIT_INT 0x7fffffff

/* A host (ls_gethostinfo). Sizes in MB. */
struct hostInfo {
    char hostName[MAXHOSTNAMELEN];
    char *hostType;
    char *hostModel;
    float cpuFactor;
    int maxCpus;
    int maxMem;
    int maxSwap;
    int maxTmp;
    int nDisks;
    int nRes;
    char **resources;
    int nDRes;
    char **DResources;
    char *windows;
    int numIndx;
    float *busyThreshold;
    char isServer;
    char licensed;
    int rexPriority;
    int licFeaturesNeeded;
    int licClass;
    int cores;
    char *hostAddr;
    int pprocs;
    int cores_per_proc;
    int threads_per_core;
};

/* A host's load (ls_load, ls_loadofhosts): status[0] is the status word; li[] the
 * load indices in the order of ls_info()'s resTable. */
struct hostLoad {
    char hostName[MAXHOSTNAMELEN];
    int *status;
    float *li;
};

enum valueType { LS_BOOLEAN, LS_NUMERIC, LS_STRING, LS_EXTERNAL };
enum orderType { INCR, DECR, NA };

#define RESF_BUILTIN 0x01
#define RESF_DYNAMIC 0x02
#define RESF_GLOBAL 0x04
#define RESF_SHARED 0x08
#define RESF_RELEASE 0x10

/* A resource of lsf.shared (ls_info). */
struct resItem {
    char name[MAXLSFNAMELEN];
    char des[MAXRESDESLEN];
    enum valueType valueType;
    enum orderType orderType;
    int flags;
    int interval;
};

/* The cluster's resources, host types and models (ls_info). */
struct lsInfo {
    int nRes;
    struct resItem *resTable;
    int nTypes;
    char hostTypes[MAXTYPES][MAXLSFNAMELEN];
    int nModels;
    char hostModels[MAXMODELS][MAXLSFNAMELEN];
    char hostArchs[MAXMODELS][MAXLSFNAMELEN];
    int modelRefs[MAXMODELS];
    float cpuFactor[MAXMODELS];
    int numIndx;
    int numUsrIndx;
};

/* A parameter of ls_readconfenv: the caller names it and gives its default (or NULL);
 * the library sets paramValue to a malloc'ed copy of the value found. */
struct config_param {
    char *paramName;
    char *paramValue;
};

/* lserrno: the calling thread's last base-library error (one of LSE_*). */
extern int *ls_errno(void);
#define lserrno (*ls_errno())

/* LSE codes: begin */
/*
 * lserrno values. Every number is LSF 10.1's (through Fix Pack 13); none had to be
 * invented. LSE_NERR is one past the highest code. The messages ls_sysmsg() returns are
 * in crates/basalt-capi/src/errtab.rs.
 */
#define LSE_NO_ERR                     0
#define LSE_BAD_XDR                    1
#define LSE_MSG_SYS                    2
#define LSE_BAD_ARGS                   3
#define LSE_MASTR_UNKNW                4
#define LSE_LIM_DOWN                   5
#define LSE_PROTOC_LIM                 6
#define LSE_SOCK_SYS                   7
#define LSE_ACCEPT_SYS                 8
#define LSE_BAD_TASKF                  9
#define LSE_NO_HOST                    10
#define LSE_NO_ELHOST                  11
#define LSE_TIME_OUT                   12
#define LSE_NIOS_DOWN                  13
#define LSE_LIM_DENIED                 14
#define LSE_LIM_IGNORE                 15
#define LSE_LIM_BADHOST                16
#define LSE_LIM_ALOCKED                17
#define LSE_LIM_NLOCKED                18
#define LSE_LIM_BADMOD                 19
#define LSE_SIG_SYS                    20
#define LSE_BAD_EXP                    21
#define LSE_NORCHILD                   22
#define LSE_MALLOC                     23
#define LSE_LSFCONF                    24
#define LSE_BAD_ENV                    25
#define LSE_LIM_NREG                   26
#define LSE_RES_NREG                   27
#define LSE_RES_NOMORECONN             28
#define LSE_BADUSER                    29
#define LSE_RES_ROOTSECURE             30
#define LSE_RES_DENIED                 31
#define LSE_BAD_OPCODE                 32
#define LSE_PROTOC_RES                 33
#define LSE_RES_CALLBACK               34
#define LSE_RES_NOMEM                  35
#define LSE_RES_FATAL                  36
#define LSE_RES_PTY                    37
#define LSE_RES_SOCK                   38
#define LSE_RES_FORK                   39
#define LSE_NOMORE_SOCK                40
#define LSE_WDIR                       41
#define LSE_LOSTCON                    42
#define LSE_RES_INVCHILD               43
#define LSE_RES_KILL                   44
#define LSE_PTYMODE                    45
#define LSE_BAD_HOST                   46
#define LSE_PROTOC_NIOS                47
#define LSE_WAIT_SYS                   48
#define LSE_SETPARAM                   49
#define LSE_RPIDLISTLEN                50
#define LSE_BAD_CLUSTER                51
#define LSE_RES_VERSION                52
#define LSE_EXECV_SYS                  53
#define LSE_RES_DIR                    54
#define LSE_RES_DIRW                   55
#define LSE_BAD_SERVID                 56
#define LSE_NLSF_HOST                  57
#define LSE_UNKWN_RESNAME              58
#define LSE_UNKWN_RESVALUE             59
#define LSE_TASKEXIST                  60
#define LSE_BAD_TID                    61
#define LSE_TOOMANYTASK                62
#define LSE_LIMIT_SYS                  63
#define LSE_BAD_NAMELIST               64
#define LSE_NO_LICENSE                 65
#define LSE_LIM_NOMEM                  66
#define LSE_NIO_INIT                   67
#define LSE_CONF_SYNTAX                68
#define LSE_FILE_SYS                   69
#define LSE_CONN_SYS                   70
#define LSE_SELECT_SYS                 71
#define LSE_EOF                        72
#define LSE_ACCT_FORMAT                73
#define LSE_BAD_TIME                   74
#define LSE_FORK                       75
#define LSE_PIPE                       76
#define LSE_ESUB                       77
#define LSE_DCE_EXEC                   78
#define LSE_EAUTH                      79
#define LSE_NO_FILE                    80
#define LSE_NO_CHAN                    81
#define LSE_BAD_CHAN                   82
#define LSE_INTERNAL                   83
#define LSE_PROTOCOL                   84
#define LSE_THRD_SYS                   85
#define LSE_MISC_SYS                   86
#define LSE_LOGON_FAIL                 87
#define LSE_RES_RUSAGE                 88
#define LSE_NO_RESOURCE                89
#define LSE_BAD_RESOURCE               90
#define LSE_RES_PARENT                 91
#define LSE_NO_PASSWD                  92
#define LSE_SUDOERS_CONF               93
#define LSE_SUDOERS_ROOT               94
#define LSE_I18N_SETLC                 95
#define LSE_I18N_CATOPEN               96
#define LSE_I18N_NOMEM                 97
#define LSE_NO_MEM                     98
#define LSE_REGISTRY_SYS               99
#define LSE_FILE_CLOSE                 100
#define LSE_LIMCONF_NOTREADY           101
#define LSE_MASTER_LIM_DOWN            102
#define LSE_MLS_INVALID                103
#define LSE_MLS_CLEARANCE              104
#define LSE_MLS_RHOST                  105
#define LSE_MLS_DOMINATE               106
#define LSE_NO_CAL                     107
#define LSE_NO_NETWORK                 108
#define LSE_GETCONF_FAILED             109
#define LSE_TSSINIT                    110
#define LSE_DYNM_DENIED                111
#define LSE_LIC_OVERUSE                112
#define LSE_EGOCONF                    113
#define LSE_BAD_EGO_ENV                114
#define LSE_EGO_CONF_SYNTAX            115
#define LSE_EGO_GETCONF_FAILED         116
#define LSE_NS_LOOKUP                  117
#define LSE_BAD_PASSWD                 118
#define LSE_UNKWN_USER                 119
#define LSE_NOT_WINHOST                120
#define LSE_NOT_MASTERCAND             121
#define LSE_HOST_UNAUTH                122
#define LSE_UNRESOLVALBE_HOST          123
#define LSE_RESOURCE_NOT_CONSUMABLE    124
#define LSE_SHUTDOWN                   125
#define LSE_BAD_SYNTAX                 126
#define LSE_LIVE_PERSIST               127
#define LSE_LIVE_FAIL                  128
#define LSE_BAD_HOST_TYPE              129
#define LSE_INVALID_LICENSE            130
#define LSE_NO_ENTITLEMENT             131
#define LSE_SLOTS_IN_RUSAGE            132
#define LSE_INVALID_EXCLAMATION_MARK   133
#define LSE_INVALID_MASTERHOSTS_NUMBER 134
#define LSE_REMOVE_JOBVM               135
#define LSE_INVALID_AFFINITY_RESREQ    136
#define LSE_IP_RESOLVABLE_HOST         137
#define LSE_FAILED_UPD_REGHOST_DATA    138
#define LSE_HS_BAD_AFTER_BRACKT        139
#define LSE_HS_NO_END_INDEX            140
#define LSE_HS_BAD_COMMA               141
#define LSE_HS_BAD_FORMAT              142
#define LSE_HS_BAD_ORDER               143
#define LSE_HS_BAD_MANY_DIGITS         144
#define LSE_HS_BAD_NUM_DIGITS          145
#define LSE_HS_BAD_END_INDEX           146
#define LSE_HS_BAD_INDEX               147
#define LSE_ASKED_HOSTS_NUMBER         148
#define LSE_NO_SPACE                   149
#define LSE_NO_GPUINFO                 150
#define LSE_NO_CPUBIND_INFO            151
#define LSE_GPU_COMPACT_USAGE_ENABLED  152
#define LSE_CTNER_NOT_EXIST            153
#define LSE_NERR                       154
/* LSE codes: end */

/* Errors. */
extern char *ls_sysmsg(void);
extern void ls_perror(char *usrMsg);

/* The cluster. */
extern char *ls_getclustername(void);
extern char *ls_getmastername(void);
extern char *ls_getmyhostname(void);
extern char *ls_gethostname(void);
extern char *ls_gethosttype(char *hostname);
extern char *ls_gethostmodel(char *hostname);
extern float *ls_gethostfactor(char *hostname);
extern int ls_isclustername(char *name);

/* Configuration. */
extern int ls_readconfenv(struct config_param *paramList, char *confPath);

/* LIM information: begin */
extern struct lsInfo *ls_info(void);
extern struct hostInfo *ls_gethostinfo(char *resReq, int *numhosts, char **hostlist,
                                       int listsize, int options);
extern struct hostLoad *ls_load(char *resreq, int *numhosts, int options, char *fromhost);
extern struct hostLoad *ls_loadofhosts(char *resreq, int *numhosts, int options,
                                       char *fromhost, char **hostlist, int listsize);
/* LIM information: end */

#ifdef __cplusplus
}
#endif

#endif /* LSF_H */
