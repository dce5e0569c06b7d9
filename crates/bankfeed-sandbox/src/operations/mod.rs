//! The service's operations as the sandbox answers them: Authorize and its challenges, the data
//! operations and what they share, the calls on saved logins, the refusals (docs/sandbox.md).

pub(crate) mod accounts;
pub(crate) mod attributes;
pub(crate) mod authorize;
pub(crate) mod catalogue;
pub(crate) mod challenge;
pub(crate) mod delete;
pub(crate) mod institutions;
pub(crate) mod investments;
pub(crate) mod language;
pub(crate) mod linking;
pub(crate) mod not_enabled;
pub(crate) mod operation;
pub(crate) mod pdf;
pub(crate) mod statements;
