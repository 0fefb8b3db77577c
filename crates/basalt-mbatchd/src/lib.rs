//! mbatchd (to be written).
