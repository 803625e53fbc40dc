//! What a response means: a tile to deliver, a failure to retry or one to give up on, whatever its
//! status says (an OGC exception report served with 200 is no tile).

pub mod byte_range;
pub mod classify;
pub mod fields;
pub mod freshness;
pub mod ogc_exception;
pub mod rate_limit;
