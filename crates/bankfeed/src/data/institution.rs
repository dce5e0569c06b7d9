//! The institution a login or a challenge names. A leaf of the core: errors carry challenges,
//! which name it.

use serde::Deserialize;
use serde_json::Value;

use super::fields::field;

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

impl Institution {
    /// The name it gives: the name itself, or the object's `Name`.
    pub fn name(&self) -> Option<&str> {
        match self {
            Institution::Name(name) => Some(name),
            Institution::Object { name, .. } => name.as_deref(),
        }
    }

    /// The id it gives: the object's `Id`; a name alone has none.
    pub fn id(&self) -> Option<&str> {
        match self {
            Institution::Name(_) => None,
            Institution::Object { id, .. } => id.as_deref(),
        }
    }
}

/// The name and id of the institution an Authorize answer (a 200 or a 203) is of
/// (docs/protocol.md#authorize): `InstitutionName` and `InstitutionId` where the answer sends
/// them, as the real service does beside `Institution`; else what `Institution` gives (a name, or
/// an object's `Name` and `Id`). The id is text: the service sends a number, the public
/// reference text, and `Institution.Id` is kept as text too.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NamedInstitution {
    pub name: Option<String>,
    pub id: Option<String>,
}

impl NamedInstitution {
    /// Read from the answer's `body` (keys in any case) and its `Institution`, already read.
    pub(crate) fn of(body: &Value, institution: Option<&Institution>) -> Self {
        let name = text(field(body, "InstitutionName")).or_else(|| institution?.name().map(str::to_owned));
        let id = text(field(body, "InstitutionId")).or_else(|| institution?.id().map(str::to_owned));
        NamedInstitution { name, id }
    }
}

/// A string as it is, a number as the JSON wrote it (`14`); anything else (null, an object) is
/// no value.
fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn named(body: Value) -> NamedInstitution {
        let institution =
            field(&body, "Institution").cloned().and_then(|value| serde_json::from_value::<Institution>(value).ok());
        NamedInstitution::of(&body, institution.as_ref())
    }

    #[test]
    fn the_recorded_name_and_number_id_are_read_beside_institution() {
        let body = json!({"InstitutionName": "Bank of Made Up", "InstitutionId": 31, "Institution": "MadeUp"});
        assert_eq!(named(body), NamedInstitution { name: Some("Bank of Made Up".into()), id: Some("31".into()) });
        let text_id = json!({"institutionname": "X", "INSTITUTIONID": "a7"});
        assert_eq!(named(text_id), NamedInstitution { name: Some("X".into()), id: Some("a7".into()) });
    }

    #[test]
    fn without_them_institution_gives_what_it_has() {
        assert_eq!(
            named(json!({"Institution": "FlinksCapital"})),
            NamedInstitution { name: Some("FlinksCapital".into()), id: None }
        );
        assert_eq!(
            named(json!({"Institution": {"Id": 14, "Name": "FlinksCapital"}})),
            NamedInstitution { name: Some("FlinksCapital".into()), id: Some("14".into()) }
        );
        assert_eq!(named(json!({"InstitutionName": null, "InstitutionId": {}})), NamedInstitution::default());
        assert_eq!(named(json!([])), NamedInstitution::default());
    }
}
