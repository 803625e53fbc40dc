//! The retry arithmetic: how long to wait before a retry (backoff with jitter), how long a call
//! may take (its deadline), and what a server's `Retry-After` asks (seconds or an HTTP date).

pub mod backoff;
pub mod deadline;
pub(crate) mod http_date;
pub mod retry_after;
