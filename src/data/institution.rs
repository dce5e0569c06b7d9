//! The institution a login or a challenge names. A leaf of the core: errors carry challenges,
//! which name it.

use serde::Deserialize;

/// `Institution`: a name in banking answers, an object in investment answers
/// (docs/protocol.md#authorize).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Institution {
    Name(String),
    Object {
        /// A number in the interface, text in the public reference: kept as text.
        #[serde(rename = "Id", default, deserialize_with = "super::de::text")]
        id: Option<String>,
        #[serde(rename = "Name", default)]
        name: Option<String>,
    },
}
