//! The server: the router and how it reads requests and builds answers, the connections served
//! within their limits, the fault layer, the request log and the admin API (docs/sandbox.md).

pub(crate) mod admin;
pub(crate) mod body;
pub(crate) mod connection;
pub(crate) mod faults;
pub(crate) mod inject;
pub(crate) mod path_case;
pub(crate) mod recorded;
pub(crate) mod reply;
pub(crate) mod routes;
pub(crate) mod slots;
pub(crate) mod upload;
