//! lsb.events / lsb.acct (to be written).
