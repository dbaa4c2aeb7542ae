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

/// Legacy, for `src/index/` only (until it decodes with row types): column
/// accessors that turn a missing or mistyped value into a default rather
/// than a panic, so a column added or moved reads as zero or empty instead
/// of failing. Every other reader decodes with the row types of
/// [`super::rows`] (`query_rows!`, `decode_rows`), which never default;
/// new code must too. The same holds for the other `get_*` functions and
/// [`first_int`] below.
pub fn get_str(row: &[DataValue], i: usize) -> &str {
    row.get(i).and_then(|v| v.get_str()).unwrap_or("")
}

pub fn get_opt_str(row: &[DataValue], i: usize) -> Option<&str> {
    row.get(i).and_then(|v| v.get_str())
}

pub fn get_int(row: &[DataValue], i: usize) -> i64 {
    row.get(i).and_then(|v| v.get_int()).unwrap_or(0)
}

/// Legacy, for `src/index/` only (see [`get_str`]): the first column of the
/// first row as an integer (0 when there is none).
pub fn first_int(rows: &cozo::NamedRows) -> i64 {
    rows.rows.first().map(|r| get_int(r, 0)).unwrap_or(0)
}

pub fn get_float(row: &[DataValue], i: usize) -> f64 {
    row.get(i).and_then(|v| v.get_float()).unwrap_or(0.0)
}

pub fn get_bool(row: &[DataValue], i: usize) -> bool {
    row.get(i).and_then(|v| v.get_bool()).unwrap_or(false)
}

pub fn get_bytes(row: &[DataValue], i: usize) -> &[u8] {
    row.get(i).and_then(|v| v.get_bytes()).unwrap_or(&[])
}

pub fn get_str_list(row: &[DataValue], i: usize) -> Vec<String> {
    row.get(i)
        .and_then(|v| v.get_slice())
        .map(|s| {
            s.iter()
                .filter_map(|v| v.get_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn get_json(row: &[DataValue], i: usize) -> serde_json::Value {
    match row.get(i) {
        Some(DataValue::Json(JsonData(v))) => v.clone(),
        _ => serde_json::Value::Null,
    }
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
