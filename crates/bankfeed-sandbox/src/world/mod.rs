//! The sandbox's world: its users and their images, its keys and single-use tokens, what the
//! server remembers between requests, and its clock (docs/sandbox.md).

pub(crate) mod calendar;
pub(crate) mod images;
pub(crate) mod keys;
pub(crate) mod state;
pub(crate) mod tokens;
pub(crate) mod users;
