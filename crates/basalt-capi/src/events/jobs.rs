//! The large job records as LSF's structures: JOB_NEW and JOB_MODIFY (`jobNewLog`),
//! JOB_MODIFY2 (`jobModLog`) and lsb.acct's JOB_FINISH (`jobFinishLog`). Conventions
//! as in [`super::convert`].

use super::convert::{ci, names, rlimits, rusage, sub2_bits, xfiles};
use super::structs::*;
use crate::consts::*;
use crate::mem::{Arena, fill, zeroed};
use basalt_eventlog::{self as el, Dialect, Record};
use libc::c_int;

/// What Basalt's JOB_NEW keeps after its mark (`-Ep`, `-Q`, `-app`, the initial
/// checkpoint period), decoded by the same code mbatchd replays it with.
struct NewExtras {
    post_exec: String,
    requeue_exit_values: String,
    app: String,
    chkpnt_init: i64,
}

fn new_extras(n: &el::JobNew) -> Option<NewExtras> {
    let ev = basalt_records::from_record(&Record::JobNew(Box::new(n.clone())))?;
    let basalt_sched::Event::JobNew { sub, .. } = ev else {
        return None;
    };
    let x = sub.extras?;
    Some(NewExtras {
        post_exec: x.post_exec,
        requeue_exit_values: x.requeue_exit_values,
        app: x.app,
        chkpnt_init: x.chkpnt_init,
    })
}

pub(super) fn job_new(a: &mut Arena, n: &el::JobNew) -> jobNewLog {
    let mut l = *zeroed::<jobNewLog>();
    l.jobId = ci(n.job_id);
    l.userId = ci(n.user_id);
    fill(&mut l.userName, &n.user_name);
    let mut options = n.options as c_int;
    let mut options3 = 0;
    l.options2 = sub2_bits(n.options2);
    l.numProcessors = ci(n.num_processors);
    l.submitTime = n.submit_time;
    l.beginTime = n.begin_time;
    l.termTime = n.term_time;
    l.sigValue = ci(n.sig_value);
    l.chkpntPeriod = ci(n.chkpnt_period);
    l.restartPid = ci(n.restart_pid);
    l.rLimits = rlimits(&n.rlimits);
    fill(&mut l.hostSpec, &n.host_spec);
    l.hostFactor = n.host_factor as f32;
    l.umask = ci(n.umask);
    fill(&mut l.queue, &n.queue);
    l.resReq = a.s(&n.res_req);
    fill(&mut l.fromHost, &n.from_host);
    l.cwd = a.s(&n.cwd);
    l.chkpntDir = a.s(&n.chkpnt_dir);
    l.inFile = a.s(&n.in_file);
    l.outFile = a.s(&n.out_file);
    l.errFile = a.s(&n.err_file);
    l.inFileSpool = a.s(&n.in_file_spool);
    l.commandSpool = a.s(&n.command_spool);
    l.jobSpoolDir = a.s(&n.job_spool_dir);
    l.subHomeDir = a.s(&n.sub_home_dir);
    l.jobFile = a.s(&n.job_file);
    (l.numAskedHosts, l.askedHosts) = names(a, &n.asked_hosts);
    l.dependCond = a.s(&n.depend_cond);
    l.jobName = a.s(&n.job_name);
    l.command = a.s(&n.command);
    (l.nxf, l.xf) = xfiles(a, &n.xf);
    l.preExecCmd = a.s(&n.pre_exec_cmd);
    l.mailUser = a.s(&n.mail_user);
    l.projectName = a.s(&n.project_name);
    l.niosPort = ci(n.nios_port);
    l.maxNumProcessors = ci(n.max_num_processors);
    l.schedHostType = a.s(&n.sched_host_type);
    l.loginShell = a.s(&n.login_shell);
    l.userGroup = a.s(&n.user_group);
    l.idx = ci(n.idx);
    l.userPriority = ci(n.user_priority);
    l.jobGroup = a.s(&n.job_group);
    l.warningTimePeriod = -1;
    l.SLArunLimit = ci(n.abs_run_limit);
    l.jobDescription = a.s(&n.job_description);
    if n.header.dialect() == Dialect::Volclava && n.options & el::VOLCLAVA_SUB_POST_EXEC != 0 {
        // volclava's post-execution bit is LSF's SUB_TIME_EVENT: move it to SUB3.
        options &= !(el::VOLCLAVA_SUB_POST_EXEC as c_int);
        options3 |= SUB3_POST_EXEC;
        l.postExecCmd = a.s(&n.post_exec_cmd);
    }
    if let Some(x) = new_extras(n) {
        if !x.post_exec.is_empty() {
            options3 |= SUB3_POST_EXEC;
            l.postExecCmd = a.s(&x.post_exec);
        }
        if !x.requeue_exit_values.is_empty() {
            options3 |= SUB3_JOB_REQUEUE;
            l.requeueEValues = a.s(&x.requeue_exit_values);
        }
        if !x.app.is_empty() {
            options3 |= SUB3_APP;
            l.app = a.s(&x.app);
        }
        if x.chkpnt_init != 0 {
            options3 |= SUB3_INIT_CHKPNT_PERIOD;
            l.initChkpntPeriod = ci(x.chkpnt_init);
        }
    }
    l.options = options;
    l.options3 = options3;
    l
}

pub(super) fn job_mod(a: &mut Arena, m: &el::JobModify2) -> jobModLog {
    use el::modify as mb;
    let mut l = *zeroed::<jobModLog>();
    let mut options = m.options as c_int;
    let mut del = m.del_options as c_int;
    let (mut o3, mut del3) = (0, 0);
    l.jobIdStr = a.s(&m.job_id_str);
    l.options2 = sub2_bits(m.options2);
    l.delOptions2 = sub2_bits(m.del_options2);
    l.userId = ci(m.user_id);
    l.userName = a.s(&m.user_name);
    l.submitTime = ci(m.submit_time);
    l.umask = ci(m.umask);
    l.numProcessors = ci(m.num_processors);
    l.beginTime = ci(m.begin_time);
    l.termTime = ci(m.term_time);
    l.sigValue = ci(m.sig_value);
    l.restartPid = ci(m.restart_pid);
    l.jobName = a.s(&m.job_name);
    l.queue = a.s(&m.queue);
    (l.numAskedHosts, l.askedHosts) = names(a, &m.asked_hosts);
    l.resReq = a.s(&m.res_req);
    l.rLimits = rlimits(&m.rlimits);
    l.hostSpec = a.s(&m.host_spec);
    l.dependCond = a.s(&m.depend_cond);
    l.subHomeDir = a.s(&m.sub_home_dir);
    l.inFile = a.s(&m.in_file);
    l.outFile = a.s(&m.out_file);
    l.errFile = a.s(&m.err_file);
    l.command = a.s(&m.command);
    l.inFileSpool = a.s(&m.in_file_spool);
    l.commandSpool = a.s(&m.command_spool);
    l.chkpntPeriod = ci(m.chkpnt_period);
    l.chkpntDir = a.s(&m.chkpnt_dir);
    (l.nxf, l.xf) = xfiles(a, &m.xf);
    l.jobFile = a.s(&m.job_file);
    l.fromHost = a.s(&m.from_host);
    l.cwd = a.s(&m.cwd);
    l.preExecCmd = a.s(&m.pre_exec_cmd);
    l.mailUser = a.s(&m.mail_user);
    l.projectName = a.s(&m.project_name);
    l.niosPort = ci(m.nios_port);
    l.maxNumProcessors = ci(m.max_num_processors);
    l.loginShell = a.s(&m.login_shell);
    l.schedHostType = a.s(&m.sched_host_type);
    l.userPriority = ci(m.user_priority);
    l.warningTimePeriod = -1;
    if m.header.dialect() == Dialect::Volclava && m.options & el::VOLCLAVA_SUB_POST_EXEC != 0 {
        options &= !(el::VOLCLAVA_SUB_POST_EXEC as c_int);
        o3 |= SUB3_POST_EXEC;
        l.postExecCmd = a.s(&m.post_exec_cmd);
    }
    // Basalt's own changes (after its mark), in LSF's bits.
    let b = m.basalt_options;
    let basalt = |set: u32, del_bit: u32, lsf: c_int, opts: &mut c_int, dels: &mut c_int| {
        if b & set != 0 {
            *opts |= lsf;
            true
        } else {
            if b & del_bit != 0 {
                *dels |= lsf;
            }
            false
        }
    };
    if basalt(
        mb::POST_EXEC,
        mb::POST_EXEC_DEL,
        SUB3_POST_EXEC,
        &mut o3,
        &mut del3,
    ) {
        l.postExecCmd = a.s(&m.post_exec_cmd);
    }
    if basalt(
        mb::REQUEUE,
        mb::REQUEUE_DEL,
        SUB3_JOB_REQUEUE,
        &mut o3,
        &mut del3,
    ) {
        l.requeueEValues = a.s(&m.requeue_exit_values);
    }
    if basalt(mb::APP, mb::APP_DEL, SUB3_APP, &mut o3, &mut del3) {
        l.app = a.s(&m.app);
    }
    if basalt(
        mb::USER_GROUP,
        mb::USER_GROUP_DEL,
        SUB_USER_GROUP,
        &mut options,
        &mut del,
    ) {
        l.userGroup = a.s(&m.user_group);
    }
    l.options = options;
    l.delOptions = del;
    l.options3 = o3;
    l.delOptions3 = del3;
    l
}

pub(super) fn job_finish(a: &mut Arena, f: &el::JobFinish) -> jobFinishLog {
    let mut l = *zeroed::<jobFinishLog>();
    l.jobId = ci(f.job_id);
    l.userId = ci(f.user_id);
    fill(&mut l.userName, &f.user_name);
    let mut options = f.options as c_int;
    l.numProcessors = ci(f.num_processors);
    l.jStatus = f.j_status as c_int;
    l.submitTime = f.submit_time;
    l.beginTime = f.begin_time;
    l.termTime = f.term_time;
    l.startTime = f.start_time;
    l.endTime = f.header.time;
    fill(&mut l.queue, &f.queue);
    l.resReq = a.s(&f.res_req);
    fill(&mut l.fromHost, &f.from_host);
    l.cwd = a.s(&f.cwd);
    l.inFile = a.s(&f.in_file);
    l.outFile = a.s(&f.out_file);
    l.errFile = a.s(&f.err_file);
    l.inFileSpool = a.s(&f.in_file_spool);
    l.commandSpool = a.s(&f.command_spool);
    l.jobFile = a.s(&f.job_file);
    (l.numAskedHosts, l.askedHosts) = names(a, &f.asked_hosts);
    l.hostFactor = f.host_factor as f32;
    (l.numExHosts, l.execHosts) = names(a, &f.exec_hosts);
    l.cpuTime = f.rusage.cpu_time() as f32;
    l.jobName = a.s(&f.job_name);
    l.command = a.s(&f.command);
    l.lsfRusage = rusage(&f.rusage);
    l.dependCond = a.s(&f.depend_cond);
    l.preExecCmd = a.s(&f.pre_exec_cmd);
    l.mailUser = a.s(&f.mail_user);
    l.projectName = a.s(&f.project_name);
    l.exitStatus = f.exit_status;
    l.maxNumProcessors = ci(f.max_num_processors);
    l.loginShell = a.s(&f.login_shell);
    l.idx = ci(f.idx);
    l.maxRMem = ci(f.max_rmem);
    l.maxRSwap = ci(f.max_rswap);
    l.warningTimePeriod = -1;
    if f.header.dialect() == Dialect::Volclava && f.options & el::VOLCLAVA_SUB_POST_EXEC != 0 {
        options &= !(el::VOLCLAVA_SUB_POST_EXEC as c_int);
        l.options3 |= SUB3_POST_EXEC;
        l.postExecCmd = a.s(&f.post_exec_cmd);
    }
    l.options = options;
    l.runLimit = DEFAULT_RLIMIT;
    if f.start_time > 0 && f.header.time >= f.start_time {
        l.runTime = ci(f.header.time - f.start_time);
    }
    l
}
