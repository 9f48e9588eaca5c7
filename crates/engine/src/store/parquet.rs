//! Tables as Parquet (issue 41): the rows a sweep or a search writes as CSV, written instead (or
//! as well) as typed, compressed Parquet columns that pandas, polars, DuckDB and Arrow read one
//! column or row group at a time; and the way back, a Parquet table read as the CSV it stands for.
//!
//! **One source of truth.** A [`ParquetTable`] takes the very CSV bytes the CSV writer writes
//! (`sweep::output`, `search`), row by row, and parses each field into its column's type. So
//! every Parquet value is the CSV's value (numbers are printed in shortest round-trip form, so
//! parsing gives back the same `f64` bit for bit; an empty field is a null), and whatever makes
//! the CSV bytes identical across thread counts, chunkings, shards and resumes makes the Parquet
//! bytes identical too, given the rule below.
//!
//! **Deterministic bytes.** Rows are buffered per column and a row group is written every
//! [`rows_per_group`] rows (131,072 for a seed table; fewer for wide tables), counted from the
//! first row of the file: row group boundaries depend on the row count and the columns alone,
//! never on chunks or threads. Nothing else in the file varies (no
//! timestamps; the key-value metadata is the sweep's definition and cavesweep's version).
//!
//! **Flat memory.** At most one row group of values is held (a few MB per column), then
//! encoded column by column straight into the output.
//!
//! **Compression: zstd, level 1.** It makes files a third to a half smaller than snappy on these
//! columns (fractions of a cell count, mostly dictionary indices) at about the same write speed
//! at level 1, and every reader we target (pyarrow, polars, DuckDB, Spark) decodes it; result
//! lakes are written once and kept.

use std::io::{self, Write};
use std::sync::Arc;

use parquet::basic::{
    Compression, ConvertedType, Encoding, IntType, LogicalType, Repetition, ZstdLevel,
};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::types::{ColumnPath, Type};

/// The most rows in a row group. Why this many: DuckDB and polars read row groups in
/// parallel, so a table of millions of rows must have tens of them, and each holds enough rows
/// for its columns to compress well.
pub const ROWS_PER_GROUP: usize = 1 << 17;
/// Values (rows x columns) in a row group at most: a group's values are held in memory until
/// it is written, ~10 bytes each, so a writer holds ~5 MB whatever the table's width (a
/// summary of nine metrics has ~70 columns, a seed table ~15).
pub const VALUES_PER_GROUP: usize = 1 << 18;

/// Rows per row group of a table of `columns` columns: [`VALUES_PER_GROUP`] values, at most
/// [`ROWS_PER_GROUP`] rows, at least 1,024. It depends on the columns alone, so row groups
/// fall at the same rows in every run.
pub fn rows_per_group(columns: usize) -> usize {
    (VALUES_PER_GROUP / columns.max(1)).clamp(1024, ROWS_PER_GROUP)
}

/// A column's type, as Parquet stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    /// A count or a seed: INT64 annotated unsigned 64-bit.
    U64,
    /// A signed integer parameter (`steps=1..9`): INT64.
    I64,
    /// A metric, statistic, rate or float parameter: DOUBLE, null where the CSV is empty.
    F64,
    /// A gate's verdict (`passed`, `passed[NAME]`): BOOLEAN.
    Bool,
    /// Text (a recipe name, a rule): BYTE_ARRAY annotated UTF-8.
    Str,
}

/// A table's columns: names as in the CSV header, in order, with their types.
pub type Columns = Vec<(String, ColType)>;

/// The type a parameter axis takes: its values all integers (`steps`, `rows`, `connectivity`)
/// make an integer column, all numbers (`fill`) a float one, anything else (`rule`, `post`)
/// text. `fill` is a probability and always a float, even when varied over `0,1`.
pub fn param_type<'a>(key: &str, values: impl Iterator<Item = &'a str> + Clone) -> ColType {
    let num = |v: &str| v.parse::<f64>().is_ok_and(f64::is_finite);
    if key != "fill" && values.clone().all(|v| v.parse::<i64>().is_ok()) {
        ColType::I64
    } else if values.clone().all(num) {
        ColType::F64
    } else {
        ColType::Str
    }
}

/// Values of one row group for one column: the present values and, per row, whether it is
/// present (Parquet's definition level: every column is OPTIONAL).
enum Buf {
    Int(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<ByteArray>),
}

struct ColumnBuf {
    name: String,
    ty: ColType,
    values: Buf,
    defs: Vec<i16>,
}

impl ColumnBuf {
    fn new(name: &str, ty: ColType) -> ColumnBuf {
        ColumnBuf {
            name: name.to_string(),
            ty,
            values: match ty {
                ColType::U64 | ColType::I64 => Buf::Int(Vec::new()),
                ColType::F64 => Buf::F64(Vec::new()),
                ColType::Bool => Buf::Bool(Vec::new()),
                ColType::Str => Buf::Str(Vec::new()),
            },
            defs: Vec::new(),
        }
    }

    /// Append `other`'s values (same type).
    fn extend(&mut self, other: &ColumnBuf) {
        match (&mut self.values, &other.values) {
            (Buf::Int(a), Buf::Int(b)) => a.extend_from_slice(b),
            (Buf::F64(a), Buf::F64(b)) => a.extend_from_slice(b),
            (Buf::Bool(a), Buf::Bool(b)) => a.extend_from_slice(b),
            (Buf::Str(a), Buf::Str(b)) => a.extend_from_slice(b),
            _ => unreachable!("batches are built for their table's columns"),
        }
        self.defs.extend_from_slice(&other.defs);
    }
}

/// A value of a typed row ([`Batch`]): what a CSV field holds, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    /// Null (an empty CSV field).
    Null,
    /// An integer (a `U64` or `I64` column).
    Int(i64),
    /// A float (NaN is null, as the CSV prints it empty).
    F64(f64),
    /// A boolean.
    Bool(bool),
    /// Text.
    Str(String),
}

impl Typed {
    /// `text` as a value of type `ty`, as [`ParquetTable::write_csv`] parses it.
    pub fn parse(text: &str, ty: ColType) -> Option<Typed> {
        if text.is_empty() {
            return Some(Typed::Null);
        }
        Some(match ty {
            ColType::U64 => Typed::Int(parse_u64(text.as_bytes())? as i64),
            ColType::I64 => Typed::Int(text.parse().ok()?),
            ColType::F64 => Typed::F64(text.parse().ok()?),
            ColType::Bool => Typed::Bool(match text {
                "1" => true,
                "0" => false,
                _ => return None,
            }),
            ColType::Str => Typed::Str(text.to_string()),
        })
    }
}

/// Rows built from typed values rather than CSV text, by the worker that computed them, so the
/// collector appends them to a table ([`ParquetTable::write_batch`]) without parsing. A value
/// pushed is the one the CSV row prints (the CSV's numbers are shortest round-trip forms, so
/// parsing the text gives back these very bits): a table gets the same bytes from a batch as
/// from the CSV rows.
pub struct Batch {
    cols: Vec<ColumnBuf>,
    rows: usize,
}

impl Batch {
    /// An empty batch for a table of `cols`.
    pub fn new(cols: &Columns) -> Batch {
        Batch::with_capacity(cols, 0)
    }

    /// An empty batch with room for `rows` rows without growing (what a chunk holds at most:
    /// growing by doubling leaves garbage of every size behind, on the worker's heap, for each
    /// chunk of a sweep).
    pub fn with_capacity(cols: &Columns, rows: usize) -> Batch {
        let mut b = Batch {
            cols: cols.iter().map(|(n, t)| ColumnBuf::new(n, *t)).collect(),
            rows: 0,
        };
        for c in &mut b.cols {
            match &mut c.values {
                Buf::Int(v) => v.reserve_exact(rows),
                Buf::F64(v) => v.reserve_exact(rows),
                Buf::Bool(v) => v.reserve_exact(rows),
                Buf::Str(v) => v.reserve_exact(rows),
            }
            c.defs.reserve_exact(rows);
        }
        b
    }

    /// Empty the batch, keeping its room for the next rows (batches are reused: see
    /// [`BatchPool`]).
    pub fn clear(&mut self) {
        for c in &mut self.cols {
            match &mut c.values {
                Buf::Int(v) => v.clear(),
                Buf::F64(v) => v.clear(),
                Buf::Bool(v) => v.clear(),
                Buf::Str(v) => v.clear(),
            }
            c.defs.clear();
        }
        self.rows = 0;
    }

    /// Rows in the batch.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Column `c`'s next value: an integer (`U64`, `I64` columns).
    #[inline]
    pub fn int(&mut self, c: usize, v: i64) {
        let col = &mut self.cols[c];
        if let Buf::Int(x) = &mut col.values {
            x.push(v);
            col.defs.push(1);
        }
    }

    /// Column `c`'s next value: a float, null when NaN (`F64` columns).
    #[inline]
    pub fn f64(&mut self, c: usize, v: f64) {
        let col = &mut self.cols[c];
        if let Buf::F64(x) = &mut col.values {
            if v.is_nan() {
                col.defs.push(0);
            } else {
                // The CSV prints -0 as `0`, which parses to +0.
                x.push(if v == 0.0 { 0.0 } else { v });
                col.defs.push(1);
            }
        }
    }

    /// Column `c`'s next value: a boolean (`Bool` columns).
    #[inline]
    pub fn bool(&mut self, c: usize, v: bool) {
        let col = &mut self.cols[c];
        if let Buf::Bool(x) = &mut col.values {
            x.push(v);
            col.defs.push(1);
        }
    }

    /// Column `c`'s next value, any type.
    pub fn value(&mut self, c: usize, v: &Typed) {
        let col = &mut self.cols[c];
        match (&mut col.values, v) {
            (_, Typed::Null) => {
                col.defs.push(0);
                return;
            }
            (Buf::Int(x), Typed::Int(v)) => x.push(*v),
            (Buf::F64(_), Typed::F64(v)) => return self.f64(c, *v),
            (Buf::Bool(x), Typed::Bool(v)) => x.push(*v),
            (Buf::Str(x), Typed::Str(v)) => x.push(ByteArray::from(v.as_bytes().to_vec())),
            _ => unreachable!("values are typed for their column"),
        }
        col.defs.push(1);
    }

    /// A row is complete.
    #[inline]
    pub fn end_row(&mut self) {
        self.rows += 1;
    }
}

/// Emptied batches handed back by the writer for workers to fill again. Why: a batch is ~1 MB
/// per chunk, made on a worker thread and dropped on the collector's, and the allocator keeps
/// freed memory for a while before giving it back to the system; reused, a few batches serve
/// the whole sweep instead of one allocation per chunk.
#[derive(Clone, Default)]
pub struct BatchPool(Arc<std::sync::Mutex<Vec<Batch>>>);

impl BatchPool {
    /// Batches kept at most (more are dropped): the chunks in flight.
    const KEEP: usize = 32;

    /// An emptied batch, if one is waiting.
    pub fn take(&self) -> Option<Batch> {
        self.0.lock().ok()?.pop()
    }

    /// Hand `b` back, emptied.
    pub fn give(&self, mut b: Batch) {
        b.clear();
        if let Ok(mut v) = self.0.lock()
            && v.len() < Self::KEEP
        {
            v.push(b);
        }
    }
}

/// A Parquet table being written from CSV rows. See the module docs.
pub struct ParquetTable<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    cols: Vec<ColumnBuf>,
    rows: usize,
    /// Rows per row group ([`rows_per_group`]).
    group: usize,
    /// A row's fields, reused.
    fields: Vec<(usize, usize)>,
}

fn perr(e: parquet::errors::ParquetError) -> io::Error {
    io::Error::other(format!("parquet: {e}"))
}

/// The Parquet schema of `cols`.
fn schema(cols: &Columns) -> io::Result<Type> {
    use parquet::basic::Type as Physical;
    let fields = cols
        .iter()
        .map(|(name, ty)| {
            let b = match ty {
                ColType::U64 => Type::primitive_type_builder(name, Physical::INT64)
                    .with_logical_type(Some(LogicalType::Integer(IntType {
                        bit_width: 64,
                        is_signed: false,
                    })))
                    .with_converted_type(ConvertedType::UINT_64),
                ColType::I64 => Type::primitive_type_builder(name, Physical::INT64)
                    .with_logical_type(Some(LogicalType::Integer(IntType {
                        bit_width: 64,
                        is_signed: true,
                    })))
                    .with_converted_type(ConvertedType::INT_64),
                ColType::F64 => Type::primitive_type_builder(name, Physical::DOUBLE),
                ColType::Bool => Type::primitive_type_builder(name, Physical::BOOLEAN),
                ColType::Str => Type::primitive_type_builder(name, Physical::BYTE_ARRAY)
                    .with_logical_type(Some(LogicalType::String))
                    .with_converted_type(ConvertedType::UTF8),
            };
            b.with_repetition(Repetition::OPTIONAL)
                .build()
                .map(Arc::new)
                .map_err(perr)
        })
        .collect::<io::Result<Vec<_>>>()?;
    Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
        .map_err(perr)
}

impl<W: Write + Send> ParquetTable<W> {
    /// Start a table of `cols` in `out`, with `meta` (key, value) pairs in the file's key-value
    /// metadata.
    pub fn new(out: W, cols: &Columns, meta: &[(&str, String)]) -> io::Result<ParquetTable<W>> {
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).map_err(perr)?))
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_key_value_metadata(Some(
                meta.iter()
                    .map(|(k, v)| KeyValue::new(k.to_string(), v.clone()))
                    .collect(),
            ));
        // Seeds ascend (by one, mostly): deltas pack them into a few bits each, where a
        // dictionary (all distinct) or plain values would take 8 bytes.
        if let Some((name, _)) = cols.iter().find(|(n, _)| n == "seed") {
            let path = ColumnPath::from(name.as_str());
            props = props
                .set_column_dictionary_enabled(path.clone(), false)
                .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
        }
        let writer =
            SerializedFileWriter::new(out, Arc::new(schema(cols)?), Arc::new(props.build()))
                .map_err(perr)?;
        let cols: Vec<ColumnBuf> = cols.iter().map(|(n, t)| ColumnBuf::new(n, *t)).collect();
        Ok(ParquetTable {
            writer,
            group: rows_per_group(cols.len()),
            cols,
            rows: 0,
            fields: Vec::new(),
        })
    }

    /// Take CSV rows (whole lines, each ending in `\n`, no header) as the CSV writer writes them.
    pub fn write_csv(&mut self, rows: &[u8]) -> io::Result<()> {
        let mut at = 0;
        while at < rows.len() {
            let end = memchr_nl(&rows[at..]).map_or(rows.len(), |i| at + i);
            self.row(&rows[at..end])?;
            at = end + 1;
        }
        Ok(())
    }

    /// Take the rows of `batch` (built for this table's columns).
    pub fn write_batch(&mut self, batch: &Batch) -> io::Result<()> {
        if batch.cols.len() != self.cols.len() {
            return Err(io::Error::other(
                "internal error: a batch of other columns than the table's",
            ));
        }
        for (a, b) in self.cols.iter_mut().zip(&batch.cols) {
            a.extend(b);
        }
        self.rows += batch.rows;
        while self.rows >= self.group {
            self.flush_group()?;
        }
        Ok(())
    }

    fn row(&mut self, line: &[u8]) -> io::Result<()> {
        split_fields(line, &mut self.fields);
        if self.fields.len() != self.cols.len() {
            return Err(io::Error::other(format!(
                "internal error: a row of {} fields for a table of {} columns: {:?}",
                self.fields.len(),
                self.cols.len(),
                String::from_utf8_lossy(line)
            )));
        }
        for (col, &(a, b)) in self.cols.iter_mut().zip(&self.fields) {
            let raw = &line[a..b];
            if raw.is_empty() {
                col.defs.push(0);
                continue;
            }
            let bad = || {
                io::Error::other(format!(
                    "internal error: column {:?}: {:?} is not a {:?}",
                    col.name,
                    String::from_utf8_lossy(raw),
                    col.ty
                ))
            };
            match (&mut col.values, col.ty) {
                (Buf::Int(v), ColType::U64) => v.push(parse_u64(raw).ok_or_else(bad)? as i64),
                (Buf::Int(v), _) => v.push(
                    std::str::from_utf8(raw)
                        .ok()
                        .and_then(|s| s.parse::<i64>().ok())
                        .ok_or_else(bad)?,
                ),
                (Buf::F64(v), _) => v.push(
                    std::str::from_utf8(raw)
                        .ok()
                        .and_then(|s| s.parse::<f64>().ok())
                        .ok_or_else(bad)?,
                ),
                (Buf::Bool(v), _) => v.push(match raw {
                    b"1" => true,
                    b"0" => false,
                    _ => return Err(bad()),
                }),
                (Buf::Str(v), _) => v.push(ByteArray::from(unquote(raw))),
            }
            col.defs.push(1);
        }
        self.rows += 1;
        if self.rows == self.group {
            self.flush_group()?;
        }
        Ok(())
    }

    /// Write the first row group's worth of buffered rows (all of them, if fewer) as one row
    /// group; the rest stay buffered.
    fn flush_group(&mut self) -> io::Result<()> {
        let n = self.rows.min(self.group);
        let mut group = self.writer.next_row_group().map_err(perr)?;
        for col in &mut self.cols {
            let mut w = group
                .next_column()
                .map_err(perr)?
                .ok_or_else(|| io::Error::other("internal error: fewer Parquet columns"))?;
            let defs = &col.defs[..n];
            // The values of those rows: one per non-null row.
            let k = if col.defs.len() == n {
                usize::MAX
            } else {
                defs.iter().filter(|&&d| d == 1).count()
            };
            fn write<T: parquet::data_type::DataType>(
                w: &mut parquet::file::writer::SerializedColumnWriter<'_>,
                v: &mut Vec<T::T>,
                k: usize,
                defs: &[i16],
            ) -> io::Result<()> {
                let k = k.min(v.len());
                w.typed::<T>()
                    .write_batch(&v[..k], Some(defs), None)
                    .map_err(perr)?;
                v.drain(..k);
                Ok(())
            }
            match &mut col.values {
                Buf::Int(v) => write::<Int64Type>(&mut w, v, k, defs)?,
                Buf::F64(v) => write::<DoubleType>(&mut w, v, k, defs)?,
                Buf::Bool(v) => write::<BoolType>(&mut w, v, k, defs)?,
                Buf::Str(v) => write::<ByteArrayType>(&mut w, v, k, defs)?,
            }
            w.close().map_err(perr)?;
            col.defs.drain(..n);
        }
        group.close().map_err(perr)?;
        self.rows -= n;
        Ok(())
    }

    /// Write the last row group and the footer; the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        while self.rows > 0 {
            self.flush_group()?;
        }
        self.writer.into_inner().map_err(perr)
    }
}

fn memchr_nl(s: &[u8]) -> Option<usize> {
    s.iter().position(|&b| b == b'\n')
}

/// A field without its CSV quotes (`"a,b"` -> `a,b`, `""` inside -> `"`).
fn unquote(raw: &[u8]) -> Vec<u8> {
    match raw {
        [b'"', inner @ .., b'"'] => {
            let mut out = Vec::with_capacity(inner.len());
            let mut i = 0;
            while i < inner.len() {
                out.push(inner[i]);
                i += if inner[i] == b'"' { 2 } else { 1 };
            }
            out
        }
        _ => raw.to_vec(),
    }
}

/// The byte ranges of a CSV line's fields (quotes kept; commas inside quotes are not splits).
fn split_fields(line: &[u8], out: &mut Vec<(usize, usize)>) {
    out.clear();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut start = 0;
    let mut quoted = false;
    for (i, &b) in line.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => {
                out.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((start, line.len()));
}

/// A count as the CSV prints it: digits, or (from 9e15 on) the shortest float form.
fn parse_u64(raw: &[u8]) -> Option<u64> {
    if raw.len() <= 19 && raw.iter().all(u8::is_ascii_digit) {
        return Some(raw.iter().fold(0u64, |n, &d| n * 10 + (d - b'0') as u64));
    }
    let s = std::str::from_utf8(raw).ok()?;
    if let Ok(n) = s.parse::<u64>() {
        return Some(n);
    }
    let f = s.parse::<f64>().ok()?;
    ((0.0..1.8446744073709552e19).contains(&f) && f == f.trunc()).then_some(f as u64)
}

/// The columns of a CSV header (`seed,fill,floor_fraction,...`), typed by `ty`.
pub fn columns_of(header: &[u8], ty: impl Fn(usize, &str) -> ColType) -> Columns {
    let line = header.strip_suffix(b"\n").unwrap_or(header);
    let mut fields = Vec::new();
    split_fields(line, &mut fields);
    fields
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| {
            let name = String::from_utf8_lossy(&unquote(&line[a..b])).into_owned();
            let t = ty(i, &name);
            (name, t)
        })
        .collect()
}

/// A Parquet table read back, column by column.
pub struct ReadTable {
    /// Column names, in order.
    pub names: Vec<String>,
    /// The columns, in order, each as long as the table.
    pub cols: Vec<Col>,
    /// Rows in the table.
    pub rows: usize,
    /// The file's key-value metadata.
    pub meta: Vec<(String, String)>,
}

/// One column of a [`ReadTable`]; `None` for null.
#[derive(Debug, Clone, PartialEq)]
pub enum Col {
    /// Unsigned integers (INT64 annotated unsigned).
    U64(Vec<Option<u64>>),
    /// Signed integers (INT32, INT64).
    I64(Vec<Option<i64>>),
    /// Floats (DOUBLE, FLOAT).
    F64(Vec<Option<f64>>),
    /// Booleans.
    Bool(Vec<Option<bool>>),
    /// Text (BYTE_ARRAY).
    Str(Vec<Option<String>>),
}

/// One value of a [`Col`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer (unsigned or signed).
    Int(i128),
    /// A float.
    F64(f64),
    /// A boolean.
    Bool(bool),
    /// Text.
    Str(String),
}

impl Col {
    /// Row `i`'s value (`None` for null).
    pub fn get(&self, i: usize) -> Option<Value> {
        match self {
            Col::U64(v) => v[i].map(|x| Value::Int(x as i128)),
            Col::I64(v) => v[i].map(|x| Value::Int(x as i128)),
            Col::F64(v) => v[i].map(Value::F64),
            Col::Bool(v) => v[i].map(Value::Bool),
            Col::Str(v) => v[i].clone().map(Value::Str),
        }
    }
}

/// The largest footer (file metadata) [`read`] accepts: a file's footer states its own length,
/// and the reader allocates what it states. cavesweep's footers are a few KiB.
const MAX_FOOTER: u64 = 16 << 20;
/// The most uncompressed column data [`read`] accepts, as the file's metadata states it.
const MAX_DATA: i64 = 1 << 30;

/// Read a whole Parquet file (as written by [`ParquetTable`], or any flat file whose columns
/// are integers, floats, booleans or text). At most `max_rows` rows: more is an error, so a
/// reader's memory stays bounded; so are the footer (at most 16 MiB, checked against the file's
/// size before it is read) and the column data the metadata declares (at most 1 GiB).
pub fn read(mut file: std::fs::File, max_rows: u64) -> io::Result<ReadTable> {
    use parquet::basic::Type as Physical;
    use std::io::{Read, Seek, SeekFrom};
    let size = file.metadata()?.len();
    let mut tail = [0u8; 8];
    if size < 12 {
        return Err(io::Error::other(format!(
            "{size} bytes, too short for Parquet"
        )));
    }
    file.seek(SeekFrom::Start(size - 8))?;
    file.read_exact(&mut tail)?;
    file.seek(SeekFrom::Start(0))?;
    let footer = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
    if &tail[4..] != b"PAR1" {
        return Err(io::Error::other("no Parquet footer (PAR1) at its end"));
    }
    if footer > MAX_FOOTER || footer + 12 > size {
        return Err(io::Error::other(format!(
            "its footer states {footer} bytes of metadata, more than {} (the limit of this \
             reader) or than the file holds",
            if footer > MAX_FOOTER {
                crate::io::human_bytes(MAX_FOOTER)
            } else {
                format!("{size} bytes")
            }
        )));
    }
    let reader = SerializedFileReader::new(file).map_err(perr)?;
    let md = reader.metadata();
    let data: i64 = md
        .row_groups()
        .iter()
        .flat_map(|g| g.columns())
        .map(|c| c.uncompressed_size().max(0))
        .fold(0i64, i64::saturating_add);
    if data > MAX_DATA {
        return Err(io::Error::other(format!(
            "its metadata states {data} bytes of column data, more than the {} this reader \
             holds in memory",
            crate::io::human_bytes(MAX_DATA as u64)
        )));
    }
    let total = md.file_metadata().num_rows().max(0) as u64;
    if total > max_rows {
        return Err(io::Error::other(format!(
            "{total} rows, more than the {max_rows} this reader holds in memory"
        )));
    }
    let descr = md.file_metadata().schema_descr();
    let mut names = Vec::new();
    let mut cols = Vec::new();
    for c in descr.columns() {
        if c.max_rep_level() > 0 || c.path().parts().len() != 1 {
            return Err(io::Error::other(format!(
                "column {} is nested; only flat tables are read",
                c.path()
            )));
        }
        names.push(c.name().to_string());
        let n = total as usize;
        cols.push(match c.physical_type() {
            Physical::INT64 if c.converted_type() == ConvertedType::UINT_64 => {
                Col::U64(Vec::with_capacity(n))
            }
            Physical::INT32 | Physical::INT64 => Col::I64(Vec::with_capacity(n)),
            Physical::FLOAT | Physical::DOUBLE => Col::F64(Vec::with_capacity(n)),
            Physical::BOOLEAN => Col::Bool(Vec::with_capacity(n)),
            Physical::BYTE_ARRAY => Col::Str(Vec::with_capacity(n)),
            t => {
                return Err(io::Error::other(format!(
                    "column {}: Parquet type {t} is not read",
                    c.name()
                )));
            }
        });
    }
    let meta = md
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|k| (k.key.clone(), k.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let mut rows = 0usize;
    for row in reader.get_row_iter(None).map_err(perr)? {
        let row = row.map_err(perr)?;
        for ((name, f), col) in row.get_column_iter().zip(&mut cols) {
            let bad = || io::Error::other(format!("column {name}: unexpected value {f:?}"));
            match (col, f) {
                (Col::U64(v), Field::Null) => v.push(None),
                (Col::I64(v), Field::Null) => v.push(None),
                (Col::F64(v), Field::Null) => v.push(None),
                (Col::Bool(v), Field::Null) => v.push(None),
                (Col::Str(v), Field::Null) => v.push(None),
                (Col::U64(v), Field::ULong(x)) => v.push(Some(*x)),
                (Col::U64(v), Field::Long(x)) => v.push(Some(*x as u64)),
                (Col::I64(v), Field::Long(x)) => v.push(Some(*x)),
                (Col::I64(v), Field::Int(x)) => v.push(Some(*x as i64)),
                (Col::I64(v), Field::Short(x)) => v.push(Some(*x as i64)),
                (Col::I64(v), Field::Byte(x)) => v.push(Some(*x as i64)),
                (Col::I64(v), Field::UInt(x)) => v.push(Some(*x as i64)),
                (Col::I64(v), Field::UShort(x)) => v.push(Some(*x as i64)),
                (Col::I64(v), Field::UByte(x)) => v.push(Some(*x as i64)),
                (Col::F64(v), Field::Double(x)) => v.push(Some(*x)),
                (Col::F64(v), Field::Float(x)) => v.push(Some(*x as f64)),
                (Col::Bool(v), Field::Bool(x)) => v.push(Some(*x)),
                (Col::Str(v), Field::Str(x)) => v.push(Some(x.clone())),
                (Col::Str(v), Field::Bytes(x)) => {
                    v.push(Some(String::from_utf8_lossy(x.data()).into_owned()))
                }
                _ => return Err(bad()),
            }
        }
        rows += 1;
    }
    Ok(ReadTable {
        names,
        cols,
        rows,
        meta,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_and_unquote() {
        let mut f = Vec::new();
        let line = b"1,\"R5,C0\",,0.5";
        split_fields(line, &mut f);
        assert_eq!(f, [(0, 1), (2, 9), (10, 10), (11, 14)]);
        assert_eq!(unquote(b"\"a\"\"b\""), b"a\"b");
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"9.1e15"), Some(9_100_000_000_000_000));
        assert_eq!(parse_u64(b"x"), None);
        assert_eq!(param_type("fill", ["0", "1"].into_iter()), ColType::F64);
        assert_eq!(param_type("steps", ["1", "2"].into_iter()), ColType::I64);
        assert_eq!(
            param_type("rule", ["B5678/S45678"].into_iter()),
            ColType::Str
        );
    }

    /// A table written from CSV rows reads back value for value, nulls where the CSV is empty,
    /// in several row groups; the bytes depend on the rows only, not on how they were handed in.
    #[test]
    fn rows_round_trip_whatever_the_batches() {
        let cols: Columns = vec![
            ("seed".into(), ColType::U64),
            ("rule".into(), ColType::Str),
            ("x".into(), ColType::F64),
            ("passed".into(), ColType::Bool),
        ];
        let n = rows_per_group(cols.len()) + 1000;
        let mut csv = Vec::new();
        for i in 0..n {
            let x = if i % 7 == 0 {
                String::new()
            } else {
                (i as f64 / 3.0).to_string()
            };
            csv.extend_from_slice(
                format!("{i},\"R5,C{}\",{x},{}\n", i % 3, u8::from(i % 2 == 0)).as_bytes(),
            );
        }
        let write = |cut: usize| {
            let mut t = ParquetTable::new(Vec::new(), &cols, &[("k", "v".into())]).unwrap();
            let mut at = 0;
            while at < csv.len() {
                let mut end = (at + cut).min(csv.len());
                while end < csv.len() && csv[end - 1] != b'\n' {
                    end += 1;
                }
                t.write_csv(&csv[at..end]).unwrap();
                at = end;
            }
            t.finish().unwrap()
        };
        let a = write(100);
        assert_eq!(a, write(1 << 20));
        // Typed batches of any size give the same bytes as the CSV rows.
        let text = String::from_utf8(csv.clone()).unwrap();
        for per in [1usize, 777, 50_000] {
            let mut t = ParquetTable::new(Vec::new(), &cols, &[("k", "v".into())]).unwrap();
            let mut b = Batch::new(&cols);
            for line in text.lines() {
                let mut fields = Vec::new();
                split_fields(line.as_bytes(), &mut fields);
                for (c, &(x, y)) in fields.iter().enumerate() {
                    let raw = String::from_utf8(unquote(&line.as_bytes()[x..y])).unwrap();
                    b.value(c, &Typed::parse(&raw, cols[c].1).unwrap());
                }
                b.end_row();
                if b.rows() == per {
                    t.write_batch(&b).unwrap();
                    b = Batch::new(&cols);
                }
            }
            t.write_batch(&b).unwrap();
            assert!(t.finish().unwrap() == a, "batches of {per}");
        }
        let dir = std::env::temp_dir().join(format!("cavesweep-pq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.parquet");
        std::fs::write(&path, &a).unwrap();
        let t = read(std::fs::File::open(&path).unwrap(), u64::MAX).unwrap();
        assert_eq!(t.names, ["seed", "rule", "x", "passed"]);
        assert_eq!(t.rows, n);
        assert!(t.meta.contains(&("k".into(), "v".into())));
        assert!(matches!(t.cols[0], Col::U64(_)) && matches!(t.cols[3], Col::Bool(_)));
        for i in 0..n {
            let r: Vec<Option<Value>> = t.cols.iter().map(|c| c.get(i)).collect();
            assert_eq!(r[0], Some(Value::Int(i as i128)));
            assert_eq!(r[1], Some(Value::Str(format!("R5,C{}", i % 3))));
            let x = (i % 7 != 0).then(|| Value::F64(i as f64 / 3.0));
            assert_eq!(r[2], x);
            assert_eq!(r[3], Some(Value::Bool(i % 2 == 0)));
        }
        assert!(read(std::fs::File::open(&path).unwrap(), 10).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
