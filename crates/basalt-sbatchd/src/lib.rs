//! sbatchd (to be written).
