//! Data operations' payloads.

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
