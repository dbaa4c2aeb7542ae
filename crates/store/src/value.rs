//! Small conversions between Rust values and Cozo's `DataValue`.

use std::collections::BTreeMap;

use cozo::{DataValue, JsonData};

pub type Row = Vec<DataValue>;

/// Named `$parameters` for a script.
#[derive(Default, Clone)]
pub struct Params(BTreeMap<String, DataValue>);

impl Params {
    pub fn new() -> Params {
        Params::default()
    }

    pub fn with(mut self, name: &str, value: impl Into<DataValue>) -> Params {
        self.0.insert(name.to_string(), value.into());
        self
    }

    pub fn set(&mut self, name: &str, value: impl Into<DataValue>) {
        self.0.insert(name.to_string(), value.into());
    }

    pub fn into_map(self) -> BTreeMap<String, DataValue> {
        self.0
    }
}

pub fn str_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> DataValue {
    DataValue::List(
        items
            .into_iter()
            .map(|s| DataValue::from(s.as_ref()))
            .collect(),
    )
}

pub fn json(v: serde_json::Value) -> DataValue {
    DataValue::Json(JsonData(v))
}

pub fn opt_str(s: Option<&str>) -> DataValue {
    s.map(DataValue::from).unwrap_or(DataValue::Null)
}

/// Render a value for table output.
pub fn display(v: &DataValue) -> String {
    match v {
        DataValue::Null => "null".into(),
        DataValue::Str(s) => s.to_string(),
        DataValue::Bool(b) => b.to_string(),
        DataValue::Num(_) => match (v.get_int(), v.get_float()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => f.to_string(),
            _ => String::new(),
        },
        DataValue::Json(JsonData(j)) => j.to_string(),
        DataValue::List(l) => format!("[{}]", l.iter().map(display).collect::<Vec<_>>().join(", ")),
        other => format!("{other:?}"),
    }
}

/// A value as JSON for `--json` output.
pub fn to_json(v: &DataValue) -> serde_json::Value {
    match v {
        DataValue::Null => serde_json::Value::Null,
        DataValue::Str(s) => serde_json::Value::String(s.to_string()),
        DataValue::Bool(b) => serde_json::Value::Bool(*b),
        DataValue::Num(_) => match (v.get_int(), v.get_float()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) => serde_json::Number::from_f64(f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            _ => serde_json::Value::Null,
        },
        DataValue::Json(JsonData(j)) => j.clone(),
        DataValue::List(l) => serde_json::Value::Array(l.iter().map(to_json).collect()),
        other => serde_json::Value::String(format!("{other:?}")),
    }
}
