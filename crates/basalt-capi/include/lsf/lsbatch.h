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

/* LSBE codes: begin */
/* LSBE codes: end */

#endif /* LSBATCH_H */
