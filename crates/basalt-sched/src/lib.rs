//! mbatchd core (to be written).
