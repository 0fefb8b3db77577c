/*
 * lsf/lsf.h -- Basalt's LSF base API (liblsf): cluster and host information, load,
 * configuration and LSF's base error codes (lserrno, LSE_*).
 *
 * Written for Basalt from LSF 10.1's documented API so that programs written for LSF
 * compile unchanged; see docs/user-guide.md, "C API".
 */
#ifndef LSF_H
#define LSF_H

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

#endif /* LSF_H */
