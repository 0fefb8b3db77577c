//! MultiCluster job forwarding (seed 004, "Job scheduling under the job forwarding
//! model"), the core's part.

/// Pending reason (Basalt's number, among LSF's MultiCluster reasons): the job came back
/// from a remote cluster (JOB_STATUS PEND with this reason; the subreason says why:
/// [`RETURN_REJECTED`], [`RETURN_NOT_STARTED`], [`RETURN_START_FAILED`], [`RETURN_LOST`]).
pub const PEND_MC_RETURNED: u32 = 1300;
