//! The 19 resource-usage values shared by `JOB_STATUS` and `JOB_FINISH`.

use crate::error::ParseError;
use crate::field::{Cursor, LineWriter};

/// The 19 resource-usage values of `JOB_STATUS` and `JOB_FINISH` (event-log.md §4.4):
/// times in seconds, sizes in KB, `-1` when unknown (the default).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rusage {
    pub utime: f64,
    pub stime: f64,
    pub maxrss: f64,
    pub ixrss: f64,
    pub ismrss: f64,
    pub idrss: f64,
    pub isrss: f64,
    pub minflt: f64,
    pub majflt: f64,
    pub nswap: f64,
    pub inblock: f64,
    pub oublock: f64,
    pub ioch: f64,
    pub msgsnd: f64,
    pub msgrcv: f64,
    pub nsignals: f64,
    pub nvcsw: f64,
    pub nivcsw: f64,
    pub exutime: f64,
}

impl Default for Rusage {
    fn default() -> Self {
        Rusage::from_array([-1.0; 19])
    }
}

impl Rusage {
    /// The field names, in record order.
    pub const NAMES: [&'static str; 19] = [
        "ru_utime",
        "ru_stime",
        "ru_maxrss",
        "ru_ixrss",
        "ru_ismrss",
        "ru_idrss",
        "ru_isrss",
        "ru_minflt",
        "ru_majflt",
        "ru_nswap",
        "ru_inblock",
        "ru_oublock",
        "ru_ioch",
        "ru_msgsnd",
        "ru_msgrcv",
        "ru_nsignals",
        "ru_nvcsw",
        "ru_nivcsw",
        "ru_exutime",
    ];

    /// The values in record order.
    pub fn to_array(&self) -> [f64; 19] {
        [
            self.utime,
            self.stime,
            self.maxrss,
            self.ixrss,
            self.ismrss,
            self.idrss,
            self.isrss,
            self.minflt,
            self.majflt,
            self.nswap,
            self.inblock,
            self.oublock,
            self.ioch,
            self.msgsnd,
            self.msgrcv,
            self.nsignals,
            self.nvcsw,
            self.nivcsw,
            self.exutime,
        ]
    }

    /// From values in record order.
    pub fn from_array(a: [f64; 19]) -> Rusage {
        Rusage {
            utime: a[0],
            stime: a[1],
            maxrss: a[2],
            ixrss: a[3],
            ismrss: a[4],
            idrss: a[5],
            isrss: a[6],
            minflt: a[7],
            majflt: a[8],
            nswap: a[9],
            inblock: a[10],
            oublock: a[11],
            ioch: a[12],
            msgsnd: a[13],
            msgrcv: a[14],
            nsignals: a[15],
            nvcsw: a[16],
            nivcsw: a[17],
            exutime: a[18],
        }
    }

    /// CPU time (user + system), 0 when unknown.
    pub fn cpu_time(&self) -> f64 {
        (self.utime.max(0.0)) + (self.stime.max(0.0))
    }

    pub(crate) fn parse(c: &mut Cursor<'_>) -> Result<Rusage, ParseError> {
        let mut a = [0.0; 19];
        for (v, name) in a.iter_mut().zip(Rusage::NAMES) {
            *v = c.float(name)?;
        }
        Ok(Rusage::from_array(a))
    }

    pub(crate) fn write(&self, w: &mut LineWriter<'_>) {
        for (i, v) in self.to_array().into_iter().enumerate() {
            w.ru(v, i < 2);
        }
    }
}
