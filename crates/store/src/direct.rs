//! Landing the rows of a database being built straight into CozoDB's table.
//!
//! CozoDB keeps every relation in one SQLite table of key/value blobs, and
//! its import puts one row at a time: it clones and converts each value to
//! its column's type, encodes the key and the value, looks the key up when
//! the relation has indexes (to move their entries), and runs an upsert.
//! In a first index the lander spends about a third of its time in that
//! bookkeeping rather than in SQLite's B-tree, and the lander is the
//! critical path of a first index once the files are parsed.
//!
//! A database being built ([`super::Store::create_building`]) is written
//! by one thread, and no reader sees it before it is complete. Its chunks
//! land here instead: each row is encoded once, as CozoDB encodes it, and
//! inserted by a plain statement on a connection of our own.
//!
//! Invariants:
//!
//! - **The bytes are CozoDB's.** A key is the relation's id (8 bytes, big
//!   endian) and the key columns in CozoDB's order-preserving encoding; a
//!   value is the id and the other columns as MessagePack, as CozoDB's
//!   import writes them. A test builds a real tree both ways and compares
//!   the whole table, byte for byte.
//! - **Only what is known exactly.** Relation ids, column order and index
//!   layouts are read from CozoDB's own catalogue. A chunk that deletes, a
//!   relation with a column type or index kind this encoder does not know,
//!   or a value that is not already of its column's type (which CozoDB
//!   would convert) lands through CozoDB's import, whole.
//! - **Index entries stay right.** A row whose key is already stored (a
//!   later chunk putting it again) is replaced as CozoDB replaces it: the
//!   old row's index entries are removed before the new ones are put.
//! - Rows land in the order CozoDB's import would land them: relation by
//!   relation, each row followed by its index entries, one transaction per
//!   chunk.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

use cozo::{DataValue, DbInstance, NamedRows, Num, ScriptMutability};

use super::lander::Chunk;
use super::{Result, StoreError};

/// The connection a building store lands its chunks with.
pub(super) struct DirectLanding {
    conn: sqlite::Connection,
    layouts: Layouts,
    /// Rows landed here rather than through CozoDB's import.
    pub(super) rows_direct: usize,
}

/// What is known of each relation landed so far (`None`: it lands
/// through CozoDB), shared by the lander, which reads it from CozoDB's
/// catalogue, and the thread staging the chunks, which encodes the rows
/// of relations already known before handing a chunk over: the lander is
/// a first index's critical path once the files are parsed, and the
/// stager would otherwise wait for it.
#[derive(Clone, Default)]
pub(super) struct Layouts(Arc<Mutex<HashMap<String, Option<Arc<Layout>>>>>);

/// A chunk as handed to the lander: its rows, and the encoded rows of
/// the relations whose layouts were known when it was staged.
pub(super) struct Prepared {
    pub(super) rows: Chunk,
    encoded: HashMap<String, Vec<EncodedRow>>,
}

/// One row as stored: its key, its value, and its index entries' keys.
struct EncodedRow {
    key: Vec<u8>,
    value: Vec<u8>,
    index_keys: Vec<Vec<u8>>,
}

impl Layouts {
    /// `rows` with the rows of every relation already known encoded.
    /// When every relation of the chunk is encoded (it will land here,
    /// not through CozoDB), its rows are freed: the encoded rows are all
    /// the lander reads.
    pub(super) fn prepare(&self, mut rows: Chunk) -> Prepared {
        let known = self.lock().clone();
        let mut encoded = HashMap::new();
        for (name, named) in &rows {
            let Some(Some(layout)) = known.get(name) else {
                continue;
            };
            if let Some(stored) = encode_relation(layout, named) {
                encoded.insert(name.clone(), stored);
            }
        }
        if encoded.len() == rows.len() {
            for named in rows.values_mut() {
                named.rows = Vec::new();
            }
        }
        Prepared { rows, encoded }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Option<Arc<Layout>>>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How one relation's rows are stored.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    id: u64,
    /// Position in a row (as CozoDB stores it: keys, then values) → type.
    columns: Vec<(String, ColumnType)>,
    key_len: usize,
    /// Each index's id and the row positions its key is made of.
    indices: Vec<(u64, Vec<usize>)>,
}

/// A column type this encoder stores exactly as CozoDB does.
#[derive(Debug, Clone, PartialEq)]
enum ColumnType {
    String,
    Int,
    Float,
    Bool,
    Bytes,
    Json,
    List(Box<ColumnType>),
    Nullable(Box<ColumnType>),
}

impl ColumnType {
    /// Parse CozoDB's display of a column type (`::columns`); `None` for
    /// types this encoder does not handle.
    fn parse(text: &str) -> Option<ColumnType> {
        if let Some(inner) = text.strip_suffix('?') {
            return Some(ColumnType::Nullable(Box::new(ColumnType::parse(inner)?)));
        }
        if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            // A fixed length (`[Int;3]`) is checked by CozoDB: not here.
            if inner.contains(';') {
                return None;
            }
            return Some(ColumnType::List(Box::new(ColumnType::parse(inner)?)));
        }
        Some(match text {
            "String" => ColumnType::String,
            "Int" => ColumnType::Int,
            "Float" => ColumnType::Float,
            "Bool" => ColumnType::Bool,
            "Bytes" => ColumnType::Bytes,
            "Json" => ColumnType::Json,
            _ => return None,
        })
    }

    /// Whether CozoDB would store `value` in this column unchanged (its
    /// import converts other values, or refuses them).
    fn holds(&self, value: &DataValue) -> bool {
        match (self, value) {
            (ColumnType::Nullable(_), DataValue::Null) => true,
            (ColumnType::Nullable(inner), v) => inner.holds(v),
            (ColumnType::String, DataValue::Str(_))
            | (ColumnType::Int, DataValue::Num(Num::Int(_)))
            | (ColumnType::Float, DataValue::Num(Num::Float(_)))
            | (ColumnType::Bool, DataValue::Bool(_))
            | (ColumnType::Bytes, DataValue::Bytes(_))
            | (ColumnType::Json, DataValue::Json(_)) => true,
            (ColumnType::List(el), DataValue::List(items)) => items.iter().all(|v| el.holds(v)),
            _ => false,
        }
    }
}

/// CozoDB's catalogue entry of a relation, as much of it as is read here.
/// CozoDB writes it as a MessagePack map when it creates the relation and
/// as an array (its fields in this order) when an index is added or
/// dropped: the fields are declared in CozoDB's order so that both read.
#[derive(serde::Deserialize)]
struct CatalogueEntry {
    #[serde(rename = "name")]
    _name: serde::de::IgnoredAny,
    id: u64,
    #[serde(rename = "metadata")]
    _metadata: serde::de::IgnoredAny,
    #[serde(rename = "put_triggers")]
    _put_triggers: serde::de::IgnoredAny,
    #[serde(rename = "rm_triggers")]
    _rm_triggers: serde::de::IgnoredAny,
    #[serde(rename = "replace_triggers")]
    _replace_triggers: serde::de::IgnoredAny,
    #[serde(rename = "access_level")]
    _access_level: serde::de::IgnoredAny,
    is_temp: bool,
    indices: BTreeMap<String, (CatalogueEntry, Vec<usize>)>,
    hnsw_indices: BTreeMap<String, serde::de::IgnoredAny>,
    fts_indices: BTreeMap<String, serde::de::IgnoredAny>,
    lsh_indices: BTreeMap<String, serde::de::IgnoredAny>,
    #[serde(rename = "description", default)]
    _description: serde::de::IgnoredAny,
}

/// The id CozoDB files its catalogue under.
const CATALOGUE_ID: u64 = 0;

/// CozoDB's upsert, for rows of relations without indexes and index
/// entries (as its `put`).
const UPSERT: &str =
    "INSERT INTO cozo(k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v=excluded.v";
/// A row of a relation with indexes: fails when the key is stored.
const INSERT_NEW: &str = "INSERT INTO cozo(k, v) VALUES (?, ?)";
const READ: &str = "SELECT v FROM cozo WHERE k = ?";
const DELETE: &str = "DELETE FROM cozo WHERE k = ?";

impl DirectLanding {
    /// A connection to the database being built at `path` (its pragmas:
    /// no journal, no syncs, are set for every connection to such a file).
    pub(super) fn open(path: &Path, layouts: Layouts) -> Result<DirectLanding> {
        let conn = sqlite::Connection::open(path).map_err(|e| StoreError::Open {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(DirectLanding {
            conn,
            layouts,
            rows_direct: 0,
        })
    }

    /// Land `chunk` in one transaction: here when every row can be, else
    /// through CozoDB's import on `db`.
    pub(super) fn land(&mut self, db: &DbInstance, mut chunk: Prepared) -> Result<()> {
        if !self.can_land(db, &mut chunk)? {
            return super::import_in_order(db, chunk.rows);
        }
        let mut rows = 0;
        self.exec("BEGIN IMMEDIATE")?;
        let layouts = self.layouts.lock().clone();
        let landed = chunk.rows.keys().try_for_each(|name| {
            let layout = layouts[name].as_ref().expect("checked by can_land");
            let encoded = &chunk.encoded[name];
            rows += encoded.len();
            self.land_relation(layout, encoded)
        });
        match landed {
            Ok(()) => {
                self.exec("COMMIT")?;
                self.rows_direct += rows;
                // Freeing a chunk's rows is work the lander need not do.
                rayon::spawn(move || drop(chunk));
                Ok(())
            }
            Err(e) => {
                let _ = self.exec("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Whether every row of `chunk` lands here (see the module docs); the
    /// rows of relations the stager did not know are encoded here.
    fn can_land(&mut self, db: &DbInstance, chunk: &mut Prepared) -> Result<bool> {
        for (name, named) in &chunk.rows {
            if name.starts_with('-') {
                return Ok(false);
            }
            if chunk.encoded.contains_key(name) {
                continue;
            }
            let known = self.layouts.lock().get(name).cloned();
            let layout = match known {
                Some(layout) => layout,
                None => {
                    let layout = self.read_layout(db, name)?.map(Arc::new);
                    self.layouts.lock().insert(name.clone(), layout.clone());
                    layout
                }
            };
            let Some(encoded) = layout.and_then(|l| encode_relation(&l, named)) else {
                return Ok(false);
            };
            chunk.encoded.insert(name.clone(), encoded);
        }
        Ok(true)
    }

    /// Land one relation's rows in order, each with its index entries.
    fn land_relation(&self, layout: &Layout, encoded: &[EncodedRow]) -> Result<()> {
        let mut upsert = self.conn.prepare(UPSERT).map_err(query_error)?;
        let mut insert_new = self.conn.prepare(INSERT_NEW).map_err(query_error)?;
        for stored in encoded {
            if layout.indices.is_empty() {
                put(&mut upsert, &stored.key, &stored.value)?;
                continue;
            }
            if !put(&mut insert_new, &stored.key, &stored.value)? {
                // Stored already: replaced as CozoDB replaces it.
                self.replace(layout, stored)?;
                put(&mut upsert, &stored.key, &stored.value)?;
            }
            for index_key in &stored.index_keys {
                put(&mut upsert, index_key, &[])?;
            }
        }
        Ok(())
    }

    /// Remove the index entries of the row stored under `row`'s key when
    /// it differs from `row` (CozoDB's import does the same before a put).
    fn replace(&self, layout: &Layout, row: &EncodedRow) -> Result<()> {
        let mut read = self.conn.prepare(READ).map_err(query_error)?;
        read.bind((1, &row.key[..])).map_err(query_error)?;
        let stored: Option<Vec<u8>> = match read.next().map_err(query_error)? {
            sqlite::State::Row => Some(read.read::<Vec<u8>, _>(0).map_err(query_error)?),
            sqlite::State::Done => None,
        };
        drop(read);
        let Some(stored) = stored else {
            return Err(StoreError::Query(
                "a row of the database being built could not be inserted".into(),
            ));
        };
        let old = cozo::decode_tuple_from_kv(&row.key, &stored, None);
        if old == cozo::decode_tuple_from_kv(&row.key, &row.value, None) {
            return Ok(());
        }
        let mut delete = self.conn.prepare(DELETE).map_err(query_error)?;
        for (index_id, columns) in &layout.indices {
            let entry: Option<Vec<&DataValue>> = columns.iter().map(|&c| old.get(c)).collect();
            let Some(entry) = entry else { continue };
            let mut index_key = Vec::new();
            encode_key(&mut index_key, *index_id, &entry);
            delete.reset().map_err(query_error)?;
            delete.bind((1, &index_key[..])).map_err(query_error)?;
            while delete.next().map_err(query_error)? == sqlite::State::Row {}
        }
        Ok(())
    }

    /// What CozoDB's catalogue says of `name`, when this encoder can land
    /// its rows exactly.
    fn read_layout(&mut self, db: &DbInstance, name: &str) -> Result<Option<Layout>> {
        let mut catalogue_key = Vec::new();
        encode_key(&mut catalogue_key, CATALOGUE_ID, &[&DataValue::from(name)]);
        let mut read = self.conn.prepare(READ).map_err(query_error)?;
        read.bind((1, &catalogue_key[..])).map_err(query_error)?;
        let entry: Vec<u8> = match read.next().map_err(query_error)? {
            sqlite::State::Row => read.read::<Vec<u8>, _>(0).map_err(query_error)?,
            sqlite::State::Done => return Ok(None),
        };
        drop(read);
        let Ok(entry) = rmp_serde::from_slice::<CatalogueEntry>(&entry) else {
            return Ok(None);
        };
        if entry.is_temp
            || !entry.hnsw_indices.is_empty()
            || !entry.fts_indices.is_empty()
            || !entry.lsh_indices.is_empty()
        {
            return Ok(None);
        }
        // `::columns` takes a relation name, not a parameter: only the
        // batch's own relation names (identifiers) reach here.
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        {
            return Ok(None);
        }
        let columns = db
            .run_script(
                &format!("::columns {name}"),
                BTreeMap::new(),
                ScriptMutability::Immutable,
            )
            .map_err(|e| StoreError::Query(e.to_string()))?;
        let at = |header: &str| columns.headers.iter().position(|h| h == header);
        let (Some(c_name), Some(c_key), Some(c_index), Some(c_type)) =
            (at("column"), at("is_key"), at("index"), at("type"))
        else {
            return Ok(None);
        };
        let mut described: Vec<(i64, String, bool, Option<ColumnType>)> = columns
            .rows
            .iter()
            .map(|r| {
                (
                    r[c_index].get_int().unwrap_or(i64::MAX),
                    r[c_name].get_str().unwrap_or_default().to_string(),
                    r[c_key].get_bool().unwrap_or(false),
                    r[c_type].get_str().and_then(ColumnType::parse),
                )
            })
            .collect();
        described.sort_by_key(|c| c.0);
        let key_len = described.iter().filter(|c| c.2).count();
        // Keys come first in CozoDB's rows.
        if described.iter().take(key_len).any(|c| !c.2) {
            return Ok(None);
        }
        let mut columns = Vec::with_capacity(described.len());
        for (_, name, _, ty) in described {
            let Some(ty) = ty else { return Ok(None) };
            columns.push((name, ty));
        }
        let indices = entry
            .indices
            .into_values()
            .map(|(index, positions)| (index.id, positions))
            .collect::<Vec<_>>();
        if indices
            .iter()
            .any(|(_, p)| p.iter().any(|&i| i >= columns.len()))
        {
            return Ok(None);
        }
        Ok(Some(Layout {
            id: entry.id,
            columns,
            key_len,
            indices,
        }))
    }

    fn exec(&self, sql: &str) -> Result<()> {
        self.conn.execute(sql).map_err(query_error)
    }
}

/// For each column of `layout`, the position of its value in `named`'s
/// rows (`None` if a column is missing or the rows are short).
fn header_order(layout: &Layout, named: &NamedRows) -> Option<Vec<usize>> {
    let order: Option<Vec<usize>> = layout
        .columns
        .iter()
        .map(|(name, _)| named.headers.iter().position(|h| h == name))
        .collect();
    let order = order?;
    let width = order.iter().max().map_or(0, |m| m + 1);
    named.rows.iter().all(|r| r.len() >= width).then_some(order)
}

/// The rows of `named` as `layout` stores them; `None` when a column is
/// missing or a value is not of its column's type.
fn encode_relation(layout: &Layout, named: &NamedRows) -> Option<Vec<EncodedRow>> {
    let order = header_order(layout, named)?;
    let mut tuple: Vec<&DataValue> = Vec::with_capacity(order.len());
    let mut encoded = Vec::with_capacity(named.rows.len());
    for row in &named.rows {
        tuple.clear();
        tuple.extend(order.iter().map(|&i| &row[i]));
        if !tuple
            .iter()
            .zip(&layout.columns)
            .all(|(v, (_, ty))| ty.holds(v))
        {
            return None;
        }
        let mut key = Vec::new();
        encode_key(&mut key, layout.id, &tuple[..layout.key_len]);
        let mut value = Vec::new();
        encode_value(&mut value, layout.id, &tuple[layout.key_len..]).ok()?;
        let index_keys = layout
            .indices
            .iter()
            .map(|(index_id, columns)| {
                let entry: Vec<&DataValue> = columns.iter().map(|&c| tuple[c]).collect();
                let mut index_key = Vec::new();
                encode_key(&mut index_key, *index_id, &entry);
                index_key
            })
            .collect();
        encoded.push(EncodedRow {
            key,
            value,
            index_keys,
        });
    }
    Some(encoded)
}

/// Bind and run one insert; `Ok(false)` when the key was stored already
/// (a constraint failure of [`INSERT_NEW`]).
fn put(statement: &mut sqlite::Statement<'_>, key: &[u8], value: &[u8]) -> Result<bool> {
    statement.reset().map_err(query_error)?;
    statement.bind((1, key)).map_err(query_error)?;
    statement.bind((2, value)).map_err(query_error)?;
    match statement.next() {
        Ok(_) => Ok(true),
        Err(e) if e.code.map(|c| c & 0xff) == Some(SQLITE_CONSTRAINT) => {
            // Reset now: a reset reports the step's failure again, which
            // the next row's put would take for its own.
            let _ = statement.reset();
            Ok(false)
        }
        Err(e) => Err(query_error(e)),
    }
}

/// SQLite's primary result code of a constraint failure (its extended
/// codes keep it in the low byte).
const SQLITE_CONSTRAINT: isize = 19;

fn query_error(e: sqlite::Error) -> StoreError {
    StoreError::Query(format!("landing rows of the database being built: {e}"))
}

/// CozoDB's key of `values` in the relation `id`.
fn encode_key(out: &mut Vec<u8>, id: u64, values: &[&DataValue]) {
    out.extend_from_slice(&id.to_be_bytes());
    for v in values {
        encode_ordered(out, v);
    }
}

/// CozoDB's stored value of `values` in the relation `id`.
fn encode_value(out: &mut Vec<u8>, id: u64, values: &[&DataValue]) -> Result<()> {
    out.extend_from_slice(&id.to_be_bytes());
    rmp_serde::encode::write(out, values)
        .map_err(|e| StoreError::Query(format!("a row could not be encoded: {e}")))
}

// CozoDB's order-preserving encoding of values in keys (its `memcmp`
// module): a tag byte, then the value.
const NULL_TAG: u8 = 0x01;
const FALSE_TAG: u8 = 0x02;
const TRUE_TAG: u8 = 0x03;
const NUM_TAG: u8 = 0x05;
const STR_TAG: u8 = 0x06;
const BYTES_TAG: u8 = 0x07;
const LIST_TAG: u8 = 0x0A;
const JSON_TAG: u8 = 0x0D;
const LIST_END: u8 = 0x00;
const IS_FLOAT: u8 = 0b0001_0000;
const IS_APPROX_INT: u8 = 0b0000_0100;
const IS_EXACT_INT: u8 = 0b0000_0000;
const EXACT_INT_BOUND: i64 = 0x20_0000_0000_0000;
const SIGN_MARK: u64 = 0x8000_0000_0000_0000;
const GROUP: usize = 8;

/// Encode one value as CozoDB does in keys. Only the types
/// [`ColumnType::holds`] admits reach here.
fn encode_ordered(out: &mut Vec<u8>, v: &DataValue) {
    match v {
        DataValue::Null => out.push(NULL_TAG),
        DataValue::Bool(false) => out.push(FALSE_TAG),
        DataValue::Bool(true) => out.push(TRUE_TAG),
        DataValue::Num(n) => {
            out.push(NUM_TAG);
            let f = match n {
                Num::Int(i) => *i as f64,
                Num::Float(f) => *f,
            };
            out.extend_from_slice(&order_f64(f).to_be_bytes());
            match n {
                Num::Int(i) if *i > -EXACT_INT_BOUND && *i < EXACT_INT_BOUND => {
                    out.push(IS_EXACT_INT)
                }
                Num::Int(i) => {
                    out.push(IS_APPROX_INT);
                    out.extend_from_slice(&((*i as u64) ^ SIGN_MARK).to_be_bytes());
                }
                Num::Float(_) => out.push(IS_FLOAT),
            }
        }
        DataValue::Str(s) => {
            out.push(STR_TAG);
            encode_bytes(out, s.as_bytes());
        }
        DataValue::Bytes(b) => {
            out.push(BYTES_TAG);
            encode_bytes(out, b);
        }
        DataValue::Json(j) => {
            out.push(JSON_TAG);
            encode_bytes(out, j.0.to_string().as_bytes());
        }
        DataValue::List(items) => {
            out.push(LIST_TAG);
            for item in items {
                encode_ordered(out, item);
            }
            out.push(LIST_END);
        }
        other => unreachable!("no column type admits {other:?}"),
    }
}

fn order_f64(f: f64) -> u64 {
    let u = f.to_bits();
    if f.is_sign_positive() {
        u | SIGN_MARK
    } else {
        !u
    }
}

/// Bytes in groups of eight, each followed by a marker: 0xff for a full
/// group, 0xff minus the padding for the last (always present) one.
fn encode_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut at = 0;
    while at <= bytes.len() {
        let remain = bytes.len() - at;
        if remain > GROUP {
            out.extend_from_slice(&bytes[at..at + GROUP]);
            out.push(0xff);
        } else {
            let pad = GROUP - remain;
            out.extend_from_slice(&bytes[at..]);
            out.extend(std::iter::repeat_n(0u8, pad));
            out.push(0xff - pad as u8);
        }
        at += GROUP;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_types_parse_as_cozodb_displays_them() {
        assert_eq!(ColumnType::parse("String"), Some(ColumnType::String));
        assert_eq!(
            ColumnType::parse("[String]"),
            Some(ColumnType::List(Box::new(ColumnType::String)))
        );
        assert_eq!(
            ColumnType::parse("String?"),
            Some(ColumnType::Nullable(Box::new(ColumnType::String)))
        );
        assert_eq!(ColumnType::parse("[Int;3]"), None);
        assert_eq!(ColumnType::parse("Uuid"), None);
        assert_eq!(ColumnType::parse("Any"), None);
    }

    #[test]
    fn values_cozodb_would_convert_are_not_held() {
        assert!(ColumnType::Float.holds(&DataValue::from(1.5)));
        assert!(!ColumnType::Float.holds(&DataValue::from(1)));
        assert!(!ColumnType::String.holds(&DataValue::Null));
        assert!(ColumnType::parse("String?")
            .unwrap()
            .holds(&DataValue::Null));
    }

    #[test]
    fn bytes_are_grouped_by_eight_with_a_marker() {
        let mut out = Vec::new();
        encode_bytes(&mut out, b"");
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 0, 0, 0xff - 8]);
        out.clear();
        encode_bytes(&mut out, b"abcdefgh");
        assert_eq!(&out[..9], b"abcdefgh\xff");
        assert_eq!(&out[9..], [0, 0, 0, 0, 0, 0, 0, 0, 0xff - 8]);
    }
}
