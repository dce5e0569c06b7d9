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
        #[serde(rename = "Id", default)]
        id: Option<i64>,
        #[serde(rename = "Name", default)]
        name: Option<String>,
    },
}
