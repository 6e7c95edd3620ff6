//! The tools' input schemas as every client reads them. schemars writes an
//! optional field as `type: ["string", "null"]` (or `anyOf` a `null`) and
//! a number's Rust type as `format: "uint"`; the MCP Inspector warns on
//! both, and Gemini CLI prints an "unknown format" line for each on every
//! call. An omitted field already says "not given", so the `null` goes; a
//! format JSON Schema does not define goes too (`minimum: 0` stays).

/// The formats JSON Schema 2020-12 defines (its "Defined Formats").
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `schema` without type arrays, `null` alternatives or formats JSON
/// Schema does not define, at any depth.
pub(crate) fn plain(schema: &mut serde_json::Value) {
    use serde_json::Value;
    match schema {
        Value::Object(object) => {
            if let Some(Value::Array(types)) = object.get("type") {
                let kept: Vec<Value> = types
                    .iter()
                    .filter(|kind| kind.as_str() != Some("null"))
                    .cloned()
                    .collect();
                if let [one] = kept.as_slice() {
                    object.insert("type".to_owned(), one.clone());
                }
            }
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(alternatives)) = object.get(key) else {
                    continue;
                };
                let kept: Vec<Value> = alternatives
                    .iter()
                    .filter(|alternative| alternative.get("type") != Some(&"null".into()))
                    .cloned()
                    .collect();
                if let [Value::Object(one)] = kept.as_slice() {
                    let one = one.clone();
                    object.remove(key);
                    for (name, value) in one {
                        object.entry(name).or_insert(value);
                    }
                }
            }
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
            {
                object.remove("format");
            }
            if object.get("default") == Some(&Value::Null) {
                object.remove("default");
            }
            for (key, value) in object.iter_mut() {
                match (key.as_str(), value) {
                    // Maps of names to schemas: their keys are no keywords.
                    ("properties" | "$defs" | "definitions", Value::Object(schemas)) => {
                        schemas.values_mut().for_each(plain);
                    }
                    (_, value) => plain(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(plain),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn optional_fields_and_rust_formats_become_plain() {
        let mut schema = serde_json::json!({
            "type": "object",
            "properties": {
                "query": {"type": ["string", "null"], "description": "words"},
                "limit": {"type": ["integer", "null"], "format": "uint", "minimum": 0, "default": null},
                "mode": {"anyOf": [{"$ref": "#/$defs/RankMode"}, {"type": "null"}], "description": "how"},
                "when": {"type": "string", "format": "date-time"},
                "type": {"type": ["string", "null"]},
                "format": {"type": "string", "default": null},
            },
        });
        plain(&mut schema);
        assert_eq!(
            schema,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words"},
                    "limit": {"type": "integer", "minimum": 0},
                    "mode": {"$ref": "#/$defs/RankMode", "description": "how"},
                    "when": {"type": "string", "format": "date-time"},
                    "type": {"type": "string"},
                    "format": {"type": "string"},
                },
            })
        );
    }
}
