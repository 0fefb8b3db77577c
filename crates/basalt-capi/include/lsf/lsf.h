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
/* LSE codes: end */

#endif /* LSF_H */
