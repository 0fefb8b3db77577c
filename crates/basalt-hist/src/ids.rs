//! Job id arguments: `123` or `123[4]` ([`IdSel`]).

/// A job id argument: `123` (the job, or every element of array 123) or `123[4]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSel {
    pub job_id: u64,
    pub idx: Option<u32>,
}

impl IdSel {
    /// Does the job or element `(job_id, idx)` match?
    pub fn matches(&self, job_id: u64, idx: u32) -> bool {
        self.job_id == job_id && self.idx.is_none_or(|i| i == idx)
    }
}

/// Parse job id arguments (`123`, `123[4]`, `123[1-3,7]`); the first bad one is returned.
pub fn parse_ids(args: &[String]) -> Result<Vec<IdSel>, String> {
    let refs = basalt_cli::batch::parse_job_ids(args)?;
    Ok(refs
        .into_iter()
        .map(|r| IdSel {
            job_id: r.job_id,
            idx: r.has_idx.then_some(r.idx),
        })
        .collect())
}
