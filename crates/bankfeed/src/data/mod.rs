//! Data operations' payloads, as typed models that tolerate unknown and missing fields, and the
//! options of their requests.

pub mod accounts;
pub(crate) mod answer;
pub mod attributes;
pub mod dates;
pub(crate) mod de;
pub(crate) mod fields;
pub(crate) mod institution;
pub mod investments;
pub(crate) mod json;
pub mod login;
pub mod money;
mod observe;
pub mod requests;
pub mod unknown;

pub use login::{Institution, Login};

use std::sync::Arc;

/// A payload exactly as the server sent it; turned into a value only when asked for.
#[derive(Clone, Debug)]
pub struct Raw(pub Arc<[u8]>);

impl Raw {
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_slice(&self.0)
    }
}

/// A typed payload with the bytes it was read from.
#[derive(Clone, Debug)]
pub struct Payload<T> {
    pub data: T,
    pub raw: Raw,
}
