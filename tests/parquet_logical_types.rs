//! Parquet logical types (and the legacy ConvertedTypes) read through our Parquet format, per
//! `LogicalTypes.md`: each test writes a small file from explicit Parquet schema text with the
//! parquet crate's low-level writer (typed column writers, definition and repetition levels),
//! reads it back with `SELECT * FROM '<file>'` in `session_context()`, and checks the Arrow type,
//! the extension metadata where there is one, and the values (expected values computed by hand
//! from the spec's encodings).
//!
//! DataFusion's default `schema_force_view_types = true` reads strings and binaries as
//! `Utf8View` / `BinaryView`; the expectations follow it.
mod common;

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use common::TempPath;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, Field, Fields, IntervalUnit, Schema, TimeUnit};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::session_context;
use parquet::basic::{
    ConvertedType, EdgeInterpolationAlgorithm, LogicalType, Repetition, Type as PhysicalType,
};
use parquet::data_type::{
    ByteArray, ByteArrayType, FixedLenByteArray, FixedLenByteArrayType, Int32Type, Int64Type,
    Int96, Int96Type,
};
use parquet::file::metadata::{
    FileMetaData, ParquetMetaData, ParquetMetaDataReader, ParquetMetaDataWriter, RowGroupMetaData,
};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::{SchemaDescriptor, Type};

// ---------------------------------------------------------------------------------------------
// Helpers: write a file from schema text + leaf columns, read it back through SQL
// ---------------------------------------------------------------------------------------------

/// The values of one leaf column, in the writer's physical type.
enum Data {
    I32(Vec<i32>),
    I64(Vec<i64>),
    I96(Vec<Int96>),
    Bytes(Vec<Vec<u8>>),
    Fixed(Vec<Vec<u8>>),
}

/// One leaf column: its non-null values and its definition / repetition levels (`None` where the
/// column's maximum level is 0).
struct Leaf {
    data: Data,
    def: Option<Vec<i16>>,
    rep: Option<Vec<i16>>,
}

impl Leaf {
    fn new(data: Data) -> Self {
        Self {
            data,
            def: None,
            rep: None,
        }
    }
    fn def(mut self, levels: &[i16]) -> Self {
        self.def = Some(levels.to_vec());
        self
    }
    fn rep(mut self, levels: &[i16]) -> Self {
        self.rep = Some(levels.to_vec());
        self
    }
}

fn i32s(values: &[i32]) -> Leaf {
    Leaf::new(Data::I32(values.to_vec()))
}
fn i64s(values: &[i64]) -> Leaf {
    Leaf::new(Data::I64(values.to_vec()))
}
fn strs(values: &[&str]) -> Leaf {
    Leaf::new(Data::Bytes(
        values.iter().map(|s| s.as_bytes().to_vec()).collect(),
    ))
}
fn bytes(values: &[&[u8]]) -> Leaf {
    Leaf::new(Data::Bytes(values.iter().map(|b| b.to_vec()).collect()))
}
fn fixed(values: &[&[u8]]) -> Leaf {
    Leaf::new(Data::Fixed(values.iter().map(|b| b.to_vec()).collect()))
}

/// Writes one row group with `leaves` (in schema leaf order) under the schema `schema`.
fn write_file(name: &str, schema: Type, leaves: Vec<Leaf>) -> TempPath {
    write_row_groups(
        name,
        schema,
        vec![leaves],
        WriterProperties::builder().build(),
    )
}

/// Writes a row group for each list of leaves of `row_groups` under the schema `schema`, with
/// the writer properties `props`.
fn write_row_groups(
    name: &str,
    schema: Type,
    row_groups: Vec<Vec<Leaf>>,
    props: WriterProperties,
) -> TempPath {
    let path = TempPath::parquet_file(&format!("parquet-logical-types-{name}"));
    let mut writer = SerializedFileWriter::new(
        File::create(&path).unwrap(),
        Arc::new(schema),
        Arc::new(props),
    )
    .unwrap();
    for leaves in row_groups {
        write_row_group(&mut writer, leaves);
    }
    writer.close().unwrap();
    path
}

fn write_row_group(writer: &mut SerializedFileWriter<File>, leaves: Vec<Leaf>) {
    let mut row_group = writer.next_row_group().unwrap();
    for leaf in leaves {
        let mut column = row_group
            .next_column()
            .unwrap()
            .expect("more leaves than columns");
        let (def, rep) = (leaf.def.as_deref(), leaf.rep.as_deref());
        match leaf.data {
            Data::I32(v) => column.typed::<Int32Type>().write_batch(&v, def, rep),
            Data::I64(v) => column.typed::<Int64Type>().write_batch(&v, def, rep),
            Data::I96(v) => column.typed::<Int96Type>().write_batch(&v, def, rep),
            Data::Bytes(v) => {
                let v: Vec<ByteArray> = v.into_iter().map(ByteArray::from).collect();
                column.typed::<ByteArrayType>().write_batch(&v, def, rep)
            }
            Data::Fixed(v) => {
                let v: Vec<FixedLenByteArray> = v
                    .into_iter()
                    .map(|b| FixedLenByteArray::from(ByteArray::from(b)))
                    .collect();
                column
                    .typed::<FixedLenByteArrayType>()
                    .write_batch(&v, def, rep)
            }
        }
        .unwrap();
        column.close().unwrap();
    }
    assert!(
        row_group.next_column().unwrap().is_none(),
        "fewer leaves than columns"
    );
    row_group.close().unwrap();
}

/// `write_file` from schema text.
fn write(name: &str, schema: &str, leaves: Vec<Leaf>) -> TempPath {
    write_file(name, parse_message_type(schema).unwrap(), leaves)
}

/// What a query read: the planned schema, and each column's cells as text (`NULL` for nulls).
struct Read {
    schema: Schema,
    batch_schema: Schema,
    columns: HashMap<String, Vec<String>>,
}

impl Read {
    fn field(&self, name: &str) -> &Field {
        self.schema.field_with_name(name).unwrap()
    }

    /// Asserts column `name`'s data type (in the plan and in the scan's batches) and values.
    fn check(&self, name: &str, data_type: &DataType, values: &[&str]) {
        assert_eq!(self.field(name).data_type(), data_type, "type of {name}");
        assert_eq!(
            self.batch_schema.field_with_name(name).unwrap().data_type(),
            data_type,
            "batch type of {name}"
        );
        assert_eq!(self.columns[name], values, "values of {name}");
    }

    /// Asserts the `ARROW:extension:name` / `ARROW:extension:metadata` of column `name`, in the
    /// plan and in the output batches.
    fn check_extension(&self, name: &str, ext: Option<&str>, metadata: Option<&str>) {
        for schema in [&self.schema, &self.batch_schema] {
            let md = schema.field_with_name(name).unwrap().metadata();
            assert_eq!(
                md.get("ARROW:extension:name").map(String::as_str),
                ext,
                "extension of {name}: {md:?}"
            );
            assert_eq!(
                md.get("ARROW:extension:metadata").map(String::as_str),
                metadata,
                "extension metadata of {name}: {md:?}"
            );
        }
    }
}

fn ctx() -> SessionContext {
    session_context().enable_url_table()
}

async fn collect(ctx: &SessionContext, sql: &str) -> (Schema, Vec<RecordBatch>) {
    let df = ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let schema = df.schema().as_arrow().clone();
    let batches = df.collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    (schema, batches)
}

fn cells(schema: &Schema, batches: &[RecordBatch]) -> HashMap<String, Vec<String>> {
    let options = FormatOptions::new().with_null("NULL");
    let mut out: HashMap<String, Vec<String>> = schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), vec![]))
        .collect();
    for batch in batches {
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            let formatter = ArrayFormatter::try_new(column.as_ref(), &options).unwrap();
            let cells = out.get_mut(field.name()).unwrap();
            for i in 0..column.len() {
                cells.push(formatter.value(i).to_string());
            }
        }
    }
    out
}

/// `SELECT * FROM '<path>'` through our session.
async fn read(path: &Path) -> Read {
    let sql = format!("SELECT * FROM '{}'", path.display());
    let (schema, batches) = collect(&ctx(), &sql).await;
    assert!(!batches.is_empty());
    let batch_schema = batches[0].schema().as_ref().clone();
    let columns = cells(&schema, &batches);
    Read {
        schema,
        batch_schema,
        columns,
    }
}

/// Top-level strings as DataFusion reads them by default (`schema_force_view_types` turns
/// top-level `Utf8` into `Utf8View`; nested strings stay `Utf8`).
fn string_type() -> DataType {
    DataType::Utf8View
}

/// Top-level binaries as DataFusion reads them by default.
fn binary_type() -> DataType {
    DataType::BinaryView
}

fn list(element: Field) -> DataType {
    DataType::List(Arc::new(element))
}

fn map(entries: &str, key: Field, value: Field) -> DataType {
    DataType::Map(
        Arc::new(Field::new(
            entries,
            DataType::Struct(Fields::from(vec![key, value])),
            false,
        )),
        false,
    )
}

/// Replaces the logical type of top-level primitive column `name` of `schema` (the schema parser
/// has no syntax for a GEOMETRY CRS or a GEOGRAPHY algorithm).
fn with_logical_type(schema: Type, name: &str, logical: LogicalType) -> Type {
    let fields = schema
        .get_fields()
        .iter()
        .map(|f| {
            if f.name() != name {
                return Arc::clone(f);
            }
            let info = f.get_basic_info();
            Arc::new(
                Type::primitive_type_builder(name, f.get_physical_type())
                    .with_repetition(info.repetition())
                    .with_logical_type(Some(logical.clone()))
                    .build()
                    .unwrap(),
            )
        })
        .collect();
    Type::group_type_builder(schema.name())
        .with_fields(fields)
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// String types
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn string_utf8_and_enum_are_strings() {
    let path = write(
        "strings",
        "message m {
            optional binary s (STRING);
            optional binary u (UTF8);
            required binary e (ENUM);
        }",
        vec![
            strs(&["héllo", ""]).def(&[1, 0, 1]),
            strs(&["a", "b"]).def(&[1, 1, 0]),
            strs(&["RED", "GREEN", "RED"]),
        ],
    );
    let r = read(&path).await;
    r.check("s", &string_type(), &["héllo", "NULL", ""]);
    r.check("u", &string_type(), &["a", "b", "NULL"]);
    // ENUM: "should interpret ENUM annotated field as a UTF-8 encoded string"
    r.check("e", &string_type(), &["RED", "GREEN", "RED"]);
    r.check_extension("e", None, None);
}

#[tokio::test]
async fn uuid_is_fixed_16_with_arrow_uuid() {
    let uuid: &[u8] = &[
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
        0xff,
    ];
    let path = write(
        "uuid",
        "message m { optional fixed_len_byte_array(16) id (UUID); }",
        vec![fixed(&[uuid]).def(&[1, 0])],
    );
    let r = read(&path).await;
    r.check(
        "id",
        &DataType::FixedSizeBinary(16),
        &["00112233445566778899aabbccddeeff", "NULL"],
    );
    r.check_extension("id", Some("arrow.uuid"), None);
}

// ---------------------------------------------------------------------------------------------
// Numeric types
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn signed_integers_and_legacy_int_types() {
    let path = write(
        "signed",
        "message m {
            required int32 i8 (INTEGER(8,true));
            required int32 i16 (INTEGER(16,true));
            required int32 i32 (INTEGER(32,true));
            required int64 i64 (INTEGER(64,true));
            required int32 l8 (INT_8);
            required int32 l16 (INT_16);
            required int32 l32 (INT_32);
            required int64 l64 (INT_64);
            required int32 p32;
            required int64 p64;
        }",
        vec![
            i32s(&[-128, 127]),
            i32s(&[-32768, 32767]),
            i32s(&[i32::MIN, i32::MAX]),
            i64s(&[i64::MIN, i64::MAX]),
            i32s(&[-128, 127]),
            i32s(&[-32768, 32767]),
            i32s(&[i32::MIN, i32::MAX]),
            i64s(&[i64::MIN, i64::MAX]),
            i32s(&[-1, 1]),
            i64s(&[-1, 1]),
        ],
    );
    let r = read(&path).await;
    for prefix in ["i", "l"] {
        r.check(&format!("{prefix}8"), &DataType::Int8, &["-128", "127"]);
        r.check(
            &format!("{prefix}16"),
            &DataType::Int16,
            &["-32768", "32767"],
        );
        r.check(
            &format!("{prefix}32"),
            &DataType::Int32,
            &["-2147483648", "2147483647"],
        );
        r.check(
            &format!("{prefix}64"),
            &DataType::Int64,
            &["-9223372036854775808", "9223372036854775807"],
        );
    }
    r.check("p32", &DataType::Int32, &["-1", "1"]);
    r.check("p64", &DataType::Int64, &["-1", "1"]);
}

#[tokio::test]
async fn unsigned_integers_and_legacy_uint_types() {
    // unsigned values are stored in the signed physical type's bits: u32::MAX is the int32 -1
    let path = write(
        "unsigned",
        "message m {
            required int32 u8 (INTEGER(8,false));
            required int32 u16 (INTEGER(16,false));
            required int32 u32 (INTEGER(32,false));
            required int64 u64 (INTEGER(64,false));
            required int32 l8 (UINT_8);
            required int32 l16 (UINT_16);
            required int32 l32 (UINT_32);
            required int64 l64 (UINT_64);
        }",
        vec![
            i32s(&[0, 255]),
            i32s(&[0, 65535]),
            i32s(&[0, -1]),
            i64s(&[0, -1]),
            i32s(&[0, 255]),
            i32s(&[0, 65535]),
            i32s(&[0, -1]),
            i64s(&[0, -1]),
        ],
    );
    let r = read(&path).await;
    for prefix in ["u", "l"] {
        r.check(&format!("{prefix}8"), &DataType::UInt8, &["0", "255"]);
        r.check(&format!("{prefix}16"), &DataType::UInt16, &["0", "65535"]);
        r.check(
            &format!("{prefix}32"),
            &DataType::UInt32,
            &["0", "4294967295"],
        );
        r.check(
            &format!("{prefix}64"),
            &DataType::UInt64,
            &["0", "18446744073709551615"],
        );
    }
}

#[tokio::test]
async fn decimal_on_int32_int64_fixed_and_binary() {
    // fixed and binary: big-endian two's complement unscaled values; binary uses the fewest bytes
    let path = write(
        "decimal",
        "message m {
            required int32 d32 (DECIMAL(9,2));
            required int64 d64 (DECIMAL(18,3));
            required fixed_len_byte_array(5) dfix (DECIMAL(11,2));
            required binary dbin (DECIMAL(20,4));
            required binary dbig (DECIMAL(40,0));
        }",
        vec![
            i32s(&[12345, -1]),
            i64s(&[-9876543, 0]),
            fixed(&[&[0xff; 5], &[0x02, 0xdf, 0xdc, 0x1c, 0x35]]),
            bytes(&[&[0x01], &[0xff, 0x7f]]),
            bytes(&[&[0x01, 0x00], &[0xff]]),
        ],
    );
    let r = read(&path).await;
    r.check("d32", &DataType::Decimal128(9, 2), &["123.45", "-0.01"]);
    r.check("d64", &DataType::Decimal128(18, 3), &["-9876.543", "0.000"]);
    // 0x02dfdc1c35 = 12345678901
    r.check(
        "dfix",
        &DataType::Decimal128(11, 2),
        &["-0.01", "123456789.01"],
    );
    // 0xff7f = -129
    r.check("dbin", &DataType::Decimal128(20, 4), &["0.0001", "-0.0129"]);
    r.check("dbig", &DataType::Decimal256(40, 0), &["256", "-1"]);
}

#[tokio::test]
async fn float16_is_half_float() {
    // IEEE half, little-endian: 1.5 = 0x3e00, -2 = 0xc000, 65504 (max) = 0x7bff
    let path = write(
        "float16",
        "message m { optional fixed_len_byte_array(2) h (FLOAT16); }",
        vec![fixed(&[&[0x00, 0x3e], &[0x00, 0xc0], &[0xff, 0x7b]]).def(&[1, 1, 0, 1])],
    );
    let r = read(&path).await;
    r.check("h", &DataType::Float16, &["1.5", "-2", "NULL", "65504"]);
}

// ---------------------------------------------------------------------------------------------
// Temporal types
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn date_is_days_since_epoch() {
    // 2021-01-01: 51 years after 1970 with 13 leap days = 18628 days
    let path = write(
        "date",
        "message m { optional int32 d (DATE); }",
        vec![i32s(&[0, 18628, -1]).def(&[1, 1, 1, 0])],
    );
    let r = read(&path).await;
    r.check(
        "d",
        &DataType::Date32,
        &["1970-01-01", "2021-01-01", "1969-12-31", "NULL"],
    );
}

#[tokio::test]
async fn time_all_units_both_utc_flags_and_legacy() {
    // 01:02:03.004005006
    let ms = 3_723_004;
    let us = 3_723_004_005;
    let ns = 3_723_004_005_006;
    let path = write(
        "time",
        "message m {
            required int32 ms_utc (TIME(MILLIS,true));
            required int32 ms_local (TIME(MILLIS,false));
            required int64 us_utc (TIME(MICROS,true));
            required int64 us_local (TIME(MICROS,false));
            required int64 ns_utc (TIME(NANOS,true));
            required int64 ns_local (TIME(NANOS,false));
            required int32 legacy_ms (TIME_MILLIS);
            required int64 legacy_us (TIME_MICROS);
        }",
        vec![
            i32s(&[ms]),
            i32s(&[ms]),
            i64s(&[us]),
            i64s(&[us]),
            i64s(&[ns]),
            i64s(&[ns]),
            i32s(&[ms]),
            i64s(&[us]),
        ],
    );
    let r = read(&path).await;
    // Arrow times have no time zone: the UTC flag does not change the type
    for col in ["ms_utc", "ms_local", "legacy_ms"] {
        r.check(
            col,
            &DataType::Time32(TimeUnit::Millisecond),
            &["01:02:03.004"],
        );
    }
    for col in ["us_utc", "us_local", "legacy_us"] {
        r.check(
            col,
            &DataType::Time64(TimeUnit::Microsecond),
            &["01:02:03.004005"],
        );
    }
    for col in ["ns_utc", "ns_local"] {
        r.check(
            col,
            &DataType::Time64(TimeUnit::Nanosecond),
            &["01:02:03.004005006"],
        );
    }
}

#[tokio::test]
async fn timestamp_all_units_both_utc_flags_and_legacy() {
    // 2021-01-01T00:00:00.123456789 = 1609459200 s after the epoch
    let ms = 1_609_459_200_123;
    let us = 1_609_459_200_123_456;
    let ns = 1_609_459_200_123_456_789;
    let path = write(
        "timestamp",
        "message m {
            required int64 ms_utc (TIMESTAMP(MILLIS,true));
            required int64 ms_local (TIMESTAMP(MILLIS,false));
            required int64 us_utc (TIMESTAMP(MICROS,true));
            required int64 us_local (TIMESTAMP(MICROS,false));
            required int64 ns_utc (TIMESTAMP(NANOS,true));
            required int64 ns_local (TIMESTAMP(NANOS,false));
            required int64 legacy_ms (TIMESTAMP_MILLIS);
            required int64 legacy_us (TIMESTAMP_MICROS);
        }",
        vec![
            i64s(&[ms]),
            i64s(&[ms]),
            i64s(&[us]),
            i64s(&[us]),
            i64s(&[ns]),
            i64s(&[ns]),
            i64s(&[ms]),
            i64s(&[us]),
        ],
    );
    let r = read(&path).await;
    let utc = Some(Arc::from("UTC"));
    let ts = |unit, tz: &Option<Arc<str>>| DataType::Timestamp(unit, tz.clone());
    // isAdjustedToUTC = true: an instant (UTC time zone); false: local (no time zone)
    r.check(
        "ms_utc",
        &ts(TimeUnit::Millisecond, &utc),
        &["2021-01-01T00:00:00.123Z"],
    );
    r.check(
        "ms_local",
        &ts(TimeUnit::Millisecond, &None),
        &["2021-01-01T00:00:00.123"],
    );
    r.check(
        "us_utc",
        &ts(TimeUnit::Microsecond, &utc),
        &["2021-01-01T00:00:00.123456Z"],
    );
    r.check(
        "us_local",
        &ts(TimeUnit::Microsecond, &None),
        &["2021-01-01T00:00:00.123456"],
    );
    r.check(
        "ns_utc",
        &ts(TimeUnit::Nanosecond, &utc),
        &["2021-01-01T00:00:00.123456789Z"],
    );
    r.check(
        "ns_local",
        &ts(TimeUnit::Nanosecond, &None),
        &["2021-01-01T00:00:00.123456789"],
    );
    // TIMESTAMP_MILLIS / TIMESTAMP_MICROS: isAdjustedToUTC = true
    r.check(
        "legacy_ms",
        &ts(TimeUnit::Millisecond, &utc),
        &["2021-01-01T00:00:00.123Z"],
    );
    r.check(
        "legacy_us",
        &ts(TimeUnit::Microsecond, &utc),
        &["2021-01-01T00:00:00.123456Z"],
    );
}

#[tokio::test]
async fn int96_is_a_nanosecond_timestamp() {
    // INT96: nanoseconds of the day (8 bytes LE) then the Julian day (4 bytes LE);
    // Julian day 2440588 = 1970-01-01
    let mut a = Int96::new();
    a.set_data(1_500_000_000, 0, 2_440_588);
    let mut b = Int96::new();
    b.set_data(0, 0, 2_440_588 + 18_628);
    let path = write(
        "int96",
        "message m { optional int96 t; }",
        vec![Leaf::new(Data::I96(vec![a, b])).def(&[1, 0, 1])],
    );
    let r = read(&path).await;
    r.check(
        "t",
        &DataType::Timestamp(TimeUnit::Nanosecond, None),
        &["1970-01-01T00:00:01.500", "NULL", "2021-01-01T00:00:00"],
    );
}

fn interval_bytes(months: u32, days: u32, millis: u32) -> Vec<u8> {
    [months, days, millis]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

#[tokio::test]
async fn interval_keeps_months_days_and_millis() {
    let path = write(
        "interval",
        "message m { optional fixed_len_byte_array(12) iv (INTERVAL); }",
        vec![fixed(&[&interval_bytes(14, 3, 4500), &interval_bytes(1, 0, 0)]).def(&[1, 0, 1])],
    );
    let r = read(&path).await;
    r.check(
        "iv",
        &DataType::Interval(IntervalUnit::MonthDayNano),
        &["14 mons 3 days 4.500000000 secs", "NULL", "1 mons"],
    );
}

/// INTERVAL inside a struct, a list and a map is read exactly too: months, days and
/// milliseconds, also where the parquet crate would drop the months (DayTime) or the days.
#[tokio::test]
async fn nested_intervals_keep_months_days_and_millis() {
    // rows: s = {iv: 14 months 3 days 4.5 s}, l = [1 month, NULL], m = {k: 2 days};
    // s = NULL, l = [], m = {k: NULL}
    let path = write(
        "nested-interval",
        "message m {
            optional group s { optional fixed_len_byte_array(12) iv (INTERVAL); }
            optional group l (LIST) { repeated group list {
                optional fixed_len_byte_array(12) element (INTERVAL); } }
            optional group m (MAP) { repeated group key_value {
                required binary key (STRING); optional fixed_len_byte_array(12) value (INTERVAL); } }
        }",
        vec![
            fixed(&[&interval_bytes(14, 3, 4500)]).def(&[2, 0]),
            fixed(&[&interval_bytes(1, 0, 0)]).def(&[3, 2, 1]).rep(&[0, 1, 0]),
            strs(&["k", "k"]).def(&[2, 2]).rep(&[0, 0]),
            fixed(&[&interval_bytes(0, 2, 0)]).def(&[3, 2]).rep(&[0, 0]),
        ],
    );
    let r = read(&path).await;
    assert_eq!(
        r.columns["s"],
        ["{iv: 14 mons 3 days 4.500000000 secs}", "NULL"]
    );
    assert_eq!(r.columns["l"], ["[1 mons, NULL]", "[]"]);
    assert_eq!(r.columns["m"], ["{k: 2 days}", "{k: NULL}"]);
    let DataType::Struct(s) = r.field("s").data_type() else {
        panic!("{:?}", r.field("s"));
    };
    assert_eq!(
        s[0].data_type(),
        &DataType::Interval(IntervalUnit::MonthDayNano)
    );
}

/// `COPY` writes intervals inside a struct, a list and a map as `INTERVAL` leaves (what Spark,
/// DuckDB and pyarrow read as intervals), not as the parquet crate's refusal or plain bytes.
#[tokio::test]
async fn nested_intervals_are_written_as_interval_leaves() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let path = TempPath::parquet_file("nested-interval-write");
    let sql = format!(
        "COPY (SELECT named_struct('iv', INTERVAL '1 month') AS s, make_array(INTERVAL '2 days') AS l, \
         map(['k'], [INTERVAL '3 seconds']) AS m) TO '{}' STORED AS PARQUET",
        path.display()
    );
    collect(&ctx(), &sql).await;
    let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let leaves: Vec<(String, ConvertedType)> = (0..schema.num_columns())
        .map(|i| {
            (
                schema.column(i).path().string(),
                schema.column(i).converted_type(),
            )
        })
        .collect();
    assert_eq!(
        leaves,
        [
            ("s.iv".to_string(), ConvertedType::INTERVAL),
            ("l.list.item".to_string(), ConvertedType::INTERVAL),
            ("m.entries.key".to_string(), ConvertedType::UTF8),
            ("m.entries.value".to_string(), ConvertedType::INTERVAL),
        ]
    );
    let r = read(&path).await;
    assert_eq!(r.columns["s"], ["{iv: 1 mons}"]);
    assert_eq!(r.columns["l"], ["[2 days]"]);
    assert_eq!(r.columns["m"], ["{k: 3.000000000 secs}"]);
}

/// The rows of one row group: `(months, days, milliseconds)` or NULL.
type IntervalRows<'a> = &'a [Option<(u32, u32, u32)>];

/// A file of one INTERVAL column `iv` (optional) and an INT32 `id`, a row group per list of
/// rows, dictionary-encoded or plain.
fn interval_file(row_groups: &[IntervalRows], dictionary: bool) -> TempPath {
    interval_file_as(row_groups, dictionary, "(INTERVAL)")
}

/// [`interval_file`] with `iv` annotated `annotation`.
fn interval_file_as(row_groups: &[IntervalRows], dictionary: bool, annotation: &str) -> TempPath {
    let schema = parse_message_type(&format!(
        "message m {{ required int32 id; optional fixed_len_byte_array(12) iv {annotation}; }}"
    ))
    .unwrap();
    let mut id = 0;
    let groups = row_groups
        .iter()
        .map(|rows| {
            let ids: Vec<i32> = rows
                .iter()
                .map(|_| {
                    id += 1;
                    id
                })
                .collect();
            let values: Vec<Vec<u8>> = rows
                .iter()
                .flatten()
                .map(|&(m, d, ms)| interval_bytes(m, d, ms))
                .collect();
            let values: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
            let def: Vec<i16> = rows.iter().map(|r| r.is_some() as i16).collect();
            vec![i32s(&ids), fixed(&values).def(&def)]
        })
        .collect();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(dictionary)
        .build();
    write_row_groups("interval", schema, groups, props)
}

#[tokio::test]
async fn interval_parts_are_unsigned_32_bit_numbers() {
    for dictionary in [false, true] {
        let path = interval_file(
            &[&[
                Some((0, 0, u32::MAX)),
                Some((i32::MAX as u32, i32::MAX as u32, 0)),
                None,
                Some((0, 0, u32::MAX)),
            ]],
            dictionary,
        );
        let r = read(&path).await;
        r.check(
            "iv",
            &DataType::Interval(IntervalUnit::MonthDayNano),
            &[
                // 4294967295 ms = 4294967.295 s = 1193 h (4294800 s) + 2 min + 47.295 s
                "1193 hours 2 mins 47.295000000 secs",
                "2147483647 mons 2147483647 days",
                "NULL",
                "1193 hours 2 mins 47.295000000 secs",
            ],
        );
    }
}

#[tokio::test]
async fn interval_months_or_days_past_i32_are_an_error() {
    for row in [(1 << 31, 0, 0), (0, u32::MAX, 0)] {
        let path = interval_file(&[&[Some((1, 2, 3)), Some(row)]], true);
        let sql = format!("SELECT iv FROM '{}'", path.display());
        let err = ctx().sql(&sql).await.unwrap().collect().await.unwrap_err();
        let (months, days, _) = row;
        assert!(
            err.to_string().contains(&format!(
                "INTERVAL column iv: {months} months and {days} days do not fit an interval"
            )),
            "{err}"
        );
    }
}

#[tokio::test]
async fn declared_interval_columns_read_only_interval_bytes() {
    let ctx = ctx();
    let interval = interval_file(&[&[Some((14, 3, 4500)), None]], true);
    // a plain FIXED_LEN_BYTE_ARRAY(12), not an INTERVAL
    let plain = interval_file_as(&[&[Some((14, 3, 4500)), None]], true, "");
    for (name, path) in [("interval", &interval), ("plain", &plain)] {
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE {name} (id INT, iv INTERVAL) STORED AS PARQUET \
             LOCATION '{}'",
            path.display()
        ))
        .await
        .unwrap();
    }
    let (schema, batches) = collect(&ctx, "SELECT iv FROM interval ORDER BY id").await;
    assert_eq!(
        cells(&schema, &batches)["iv"],
        ["14 mons 3 days 4.500000000 secs", "NULL"]
    );
    let err = match ctx.sql("SELECT iv FROM plain").await {
        Ok(df) => df.collect().await.unwrap_err(),
        Err(e) => e,
    };
    assert!(err.to_string().contains("FixedSizeBinary(12)"), "{err}");
}

/// Rewrites the footer of the file at `path` so that its column `iv`, written as a plain
/// `FIXED_LEN_BYTE_ARRAY(12)` with statistics, is annotated `INTERVAL`: a file with `INTERVAL`
/// statistics, which the parquet crate's writer leaves out (the format defines no order on
/// `INTERVAL`) but other writers may not. The data pages stay where they are.
fn annotate_interval(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let footer = u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
    let data = &bytes[..bytes.len() - 8 - footer as usize];
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(bytes.clone()))
        .unwrap();
    let file = metadata.file_metadata();
    let root = file.schema_descr().root_schema();
    let interval = Type::primitive_type_builder("iv", PhysicalType::FIXED_LEN_BYTE_ARRAY)
        .with_repetition(Repetition::OPTIONAL)
        .with_length(12)
        .with_converted_type(ConvertedType::INTERVAL)
        .build()
        .unwrap();
    let fields = root
        .get_fields()
        .iter()
        .map(|f| match f.name() {
            "iv" => Arc::new(interval.clone()),
            _ => Arc::clone(f),
        })
        .collect();
    let root = Type::group_type_builder(root.name())
        .with_fields(fields)
        .build()
        .unwrap();
    let schema = Arc::new(SchemaDescriptor::new(Arc::new(root)));
    let row_groups = metadata
        .row_groups()
        .iter()
        .map(|rg| {
            RowGroupMetaData::builder(Arc::clone(&schema))
                .set_num_rows(rg.num_rows())
                .set_total_byte_size(rg.total_byte_size())
                .set_column_metadata(rg.columns().to_vec())
                .build()
                .unwrap()
        })
        .collect();
    let file = FileMetaData::new(
        file.version(),
        file.num_rows(),
        file.created_by().map(str::to_string),
        file.key_value_metadata().cloned(),
        schema,
        None,
    );
    let mut out = data.to_vec();
    ParquetMetaDataWriter::new(&mut out, &ParquetMetaData::new(file, row_groups))
        .finish()
        .unwrap();
    std::fs::write(path, out).unwrap();
}

#[tokio::test]
async fn interval_statistics_neither_answer_nor_prune() {
    // The statistics compare the 12 bytes (months first); read as Interval(DayTime) (months
    // dropped) the first row group's maximum (14 months) would be 0 days and the overall
    // maximum 2 days. In month-day-nano order 14 months is the largest value, 1 day the
    // smallest.
    let path = interval_file_as(
        &[
            &[Some((14, 0, 0)), Some((0, 3, 0)), None],
            &[Some((0, 1, 0)), Some((0, 2, 0))],
        ],
        false,
        "",
    );
    annotate_interval(&path);
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(std::fs::read(&path).unwrap()))
        .unwrap();
    let iv = metadata.row_group(0).column(1);
    assert_eq!(iv.column_descr().converted_type(), ConvertedType::INTERVAL);
    assert_eq!(
        iv.statistics().and_then(|s| s.max_bytes_opt()),
        Some(&interval_bytes(14, 0, 0)[..]),
        "the file has the statistics"
    );
    let ctx = ctx();
    let table = format!("'{}'", path.display());
    let (schema, batches) = collect(
        &ctx,
        &format!("SELECT min(iv) AS lo, max(iv) AS hi, count(iv) AS n FROM {table}"),
    )
    .await;
    let c = cells(&schema, &batches);
    assert_eq!(c["lo"], ["1 days"]);
    assert_eq!(c["hi"], ["14 mons"]);
    assert_eq!(c["n"], ["4"]);
    // the table's statistics have no range for iv (DataFusion would make one up from the
    // statistics read as Interval(DayTime))
    for set in ["show_statistics = true", "format = 'indent'"] {
        ctx.sql(&format!("SET datafusion.explain.{set}"))
            .await
            .unwrap();
    }
    let (schema, batches) = collect(&ctx, &format!("EXPLAIN SELECT iv FROM {table}")).await;
    let plan = cells(&schema, &batches)["plan"].join("\n");
    assert!(plan.contains("statistics=[Rows=Exact(5)"), "{plan}");
    assert!(!plan.contains("Min=") && !plan.contains("Max="), "{plan}");
    for pushdown in [false, true] {
        ctx.sql(&format!(
            "SET datafusion.execution.parquet.pushdown_filters = {pushdown}"
        ))
        .await
        .unwrap();
        let sql = format!("SELECT id FROM {table} WHERE iv > INTERVAL '12 months' ORDER BY id");
        let (schema, batches) = collect(&ctx, &sql).await;
        assert_eq!(
            cells(&schema, &batches)["id"],
            ["1"],
            "pushdown_filters {pushdown}"
        );
    }
}

#[tokio::test]
async fn logical_types_inside_structs_lists_and_maps() {
    let uuid: &[u8] = &[
        0xf8, 0x1d, 0x4f, 0xae, 0x7d, 0xec, 0x11, 0xd0, 0xa7, 0x65, 0x00, 0xa0, 0xc9, 0x1e, 0x6b,
        0xf6,
    ];
    // row 1: s = {e: red, u: uuid}, l = ['{"a":1}', NULL], mp = {k: blue}
    // row 2: s, mp NULL; l = []
    let path = write(
        "nested",
        "message m {
            optional group s { optional binary e (ENUM); optional fixed_len_byte_array(16) u (UUID); }
            optional group l (LIST) { repeated group list { optional binary element (JSON); } }
            optional group mp (MAP) {
                repeated group key_value { required binary key (UTF8); optional binary value (ENUM); }
            }
        }",
        vec![
            strs(&["red"]).def(&[2, 0]),
            fixed(&[uuid]).def(&[2, 0]),
            strs(&[r#"{"a":1}"#]).def(&[3, 2, 1]).rep(&[0, 1, 0]),
            strs(&["k"]).def(&[2, 0]).rep(&[0, 0]),
            strs(&["blue"]).def(&[3, 0]).rep(&[0, 0]),
        ],
    );
    let r = read(&path).await;
    let child = |column: &str, path: &[&str]| -> Field {
        let mut field = r.field(column).clone();
        for name in path {
            field = match field.data_type() {
                DataType::Struct(fields) => fields.find(name).unwrap().1.as_ref().clone(),
                DataType::List(item) | DataType::Map(item, _) => item.as_ref().clone(),
                other => panic!("{other} has no {name}"),
            };
        }
        field
    };
    let extension = |f: &Field| f.metadata().get("ARROW:extension:name").cloned();
    // ENUM is text, UUID and JSON carry their extensions, wherever they are
    assert!(
        child("s", &["e"]).data_type().is_string(),
        "{:?}",
        r.field("s")
    );
    assert_eq!(
        extension(&child("s", &["u"])).as_deref(),
        Some("arrow.uuid")
    );
    assert_eq!(
        extension(&child("l", &["element"])).as_deref(),
        Some("arrow.json")
    );
    assert!(
        child("mp", &["key_value", "value"]).data_type().is_string(),
        "{:?}",
        r.field("mp")
    );
    let sql = format!(
        "SELECT s['e'] AS e, l[1] AS j, to_json(parse_json(l[1])) AS parsed, mp['k'] AS v, \
                cardinality(l) AS n FROM '{}'",
        path.display()
    );
    let (schema, batches) = collect(&ctx(), &sql).await;
    let c = cells(&schema, &batches);
    assert_eq!(c["e"], ["red", "NULL"]);
    assert_eq!(c["j"], [r#"{"a":1}"#, "NULL"]);
    assert_eq!(c["parsed"], [r#"{"a":1}"#, "NULL"]);
    assert_eq!(c["v"], ["blue", "NULL"]);
    assert_eq!(c["n"], ["2", "0"]);
}

#[tokio::test]
async fn legacy_json_geometry_and_interval_inside_groups() {
    // the parquet crate adds `arrow.json` for the JSON logical type, not for the legacy
    // ConvertedType alone; it adds nothing for GEOMETRY
    fn leaf(
        name: &str,
        physical: PhysicalType,
    ) -> parquet::schema::types::PrimitiveTypeBuilder<'_> {
        Type::primitive_type_builder(name, physical).with_repetition(Repetition::OPTIONAL)
    }
    let element = leaf("element", PhysicalType::BYTE_ARRAY)
        .with_converted_type(ConvertedType::JSON)
        .build()
        .unwrap();
    let list = Type::group_type_builder("list")
        .with_repetition(Repetition::REPEATED)
        .with_fields(vec![Arc::new(element)])
        .build()
        .unwrap();
    let l = Type::group_type_builder("l")
        .with_repetition(Repetition::OPTIONAL)
        .with_converted_type(ConvertedType::LIST)
        .with_fields(vec![Arc::new(list)])
        .build()
        .unwrap();
    let g = leaf("g", PhysicalType::BYTE_ARRAY)
        .with_logical_type(Some(LogicalType::geometry(None)))
        .build()
        .unwrap();
    let iv = leaf("iv", PhysicalType::FIXED_LEN_BYTE_ARRAY)
        .with_length(12)
        .with_converted_type(ConvertedType::INTERVAL)
        .build()
        .unwrap();
    let s = Type::group_type_builder("s")
        .with_repetition(Repetition::OPTIONAL)
        .with_fields(vec![Arc::new(g), Arc::new(iv)])
        .build()
        .unwrap();
    let schema = Type::group_type_builder("m")
        .with_fields(vec![Arc::new(l), Arc::new(s)])
        .build()
        .unwrap();
    // WKB POINT (1 2)
    let point: &[u8] = &[
        0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40,
    ];
    let path = write_file(
        "nested-legacy",
        schema,
        vec![
            strs(&[r#"{"a":1}"#]).def(&[3]).rep(&[0]),
            bytes(&[point]).def(&[2]),
            fixed(&[&interval_bytes(1, 2, 3)]).def(&[2]),
        ],
    );
    let r = read(&path).await;
    let DataType::List(element) = r.field("l").data_type() else {
        panic!("{:?}", r.field("l"));
    };
    let extension = |f: &Field| f.metadata().get("ARROW:extension:name").cloned();
    assert_eq!(extension(element).as_deref(), Some("arrow.json"));
    let DataType::Struct(s) = r.field("s").data_type() else {
        panic!("{:?}", r.field("s"));
    };
    let g = s.find("g").unwrap().1;
    assert_eq!(extension(g).as_deref(), Some("geoarrow.wkb"));
    assert_eq!(
        g.metadata()
            .get("ARROW:extension:metadata")
            .map(String::as_str),
        Some(r#"{"crs":"OGC:CRS84"}"#)
    );
    // nested, INTERVAL is read exactly too: 1 month, 2 days, 3 ms
    assert_eq!(
        s.find("iv").unwrap().1.data_type(),
        &DataType::Interval(IntervalUnit::MonthDayNano)
    );
    assert_eq!(
        r.columns["s"],
        [r#"{g: 0101000000000000000000f03f0000000000000040, iv: 1 mons 2 days 0.003000000 secs}"#]
    );
}

#[tokio::test]
async fn logical_types_in_legacy_lists() {
    // a two-level list (the repeated field is the element) and a bare repeated field, per the
    // backward-compatibility rules of LogicalTypes.md; one row: l2 = [a, b], r = [c]
    let path = write(
        "legacy-lists",
        "message m {
            optional group l2 (LIST) { repeated binary el (ENUM); }
            repeated binary r (ENUM);
        }",
        vec![
            strs(&["a", "b"]).def(&[2, 2]).rep(&[0, 1]),
            strs(&["c"]).def(&[1]).rep(&[0]),
        ],
    );
    let r = read(&path).await;
    for column in ["l2", "r"] {
        let DataType::List(item) = r.field(column).data_type() else {
            panic!("{:?}", r.field(column));
        };
        assert!(item.data_type().is_string(), "{:?}", r.field(column));
    }
    let sql = format!("SELECT l2[2] AS b, r[1] AS c FROM '{}'", path.display());
    let (schema, batches) = collect(&ctx(), &sql).await;
    let c = cells(&schema, &batches);
    assert_eq!(
        (c["b"].as_slice(), c["c"].as_slice()),
        (&["b".to_string()][..], &["c".to_string()][..])
    );
}

// ---------------------------------------------------------------------------------------------
// Embedded types
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn json_is_a_string_with_arrow_json_accepted_by_parse_json() {
    let path = write(
        "json",
        "message m { optional binary j (JSON); }",
        vec![strs(&[r#"{"a":1}"#, "[1,2]"]).def(&[1, 0, 1])],
    );
    let r = read(&path).await;
    r.check("j", &string_type(), &[r#"{"a":1}"#, "NULL", "[1,2]"]);
    r.check_extension("j", Some("arrow.json"), Some(""));
    let sql = format!(
        "SELECT to_json(parse_json(j)) AS t, variant_get(parse_json(j), '$.a', 'int') AS a \
         FROM '{}'",
        path.display()
    );
    let (schema, batches) = collect(&ctx(), &sql).await;
    let cells = cells(&schema, &batches);
    assert_eq!(cells["t"], [r#"{"a":1}"#, "NULL", "[1,2]"]);
    assert_eq!(cells["a"], ["1", "NULL", "NULL"]);
}

#[tokio::test]
async fn bson_is_binary() {
    // {"a": 1}: length 12, type 0x10 (int32), "a\0", 1, terminator
    let doc: &[u8] = &[0x0c, 0, 0, 0, 0x10, b'a', 0, 1, 0, 0, 0, 0];
    let path = write(
        "bson",
        "message m { optional binary b (BSON); }",
        vec![bytes(&[doc]).def(&[0, 1])],
    );
    let r = read(&path).await;
    r.check("b", &binary_type(), &["NULL", "0c0000001061000100000000"]);
    r.check_extension("b", None, None);
}

#[tokio::test]
async fn geometry_and_geography_are_wkb_with_crs_and_edges() {
    // WKB POINT (1 2): little-endian, type 1, x = 1.0, y = 2.0
    let point: &[u8] = &[
        0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40,
    ];
    let hex = "0101000000000000000000f03f0000000000000040";
    let schema = parse_message_type(
        "message m {
            optional binary g (GEOMETRY);
            optional binary g_crs (GEOMETRY);
            optional binary geo (GEOGRAPHY);
            optional binary geo_alg (GEOGRAPHY);
        }",
    )
    .unwrap();
    let schema = with_logical_type(schema, "g", LogicalType::geometry(None));
    let schema = with_logical_type(
        schema,
        "g_crs",
        LogicalType::geometry(Some("EPSG:3857".into())),
    );
    let schema = with_logical_type(schema, "geo", LogicalType::geography(None, None));
    let schema = with_logical_type(
        schema,
        "geo_alg",
        LogicalType::geography(
            Some("srid:4269".into()),
            Some(EdgeInterpolationAlgorithm::VINCENTY),
        ),
    );
    let leaves = (0..4).map(|_| bytes(&[point]).def(&[1, 0])).collect();
    let path = write_file("geo", schema, leaves);
    let r = read(&path).await;
    for col in ["g", "g_crs", "geo", "geo_alg"] {
        r.check(col, &binary_type(), &[hex, "NULL"]);
    }
    // GeoArrow `geoarrow.wkb`: an unset CRS is OGC:CRS84; GEOMETRY edges are planar (no
    // `edges`); GEOGRAPHY's unset algorithm is SPHERICAL
    let wkb = Some("geoarrow.wkb");
    r.check_extension("g", wkb, Some(r#"{"crs":"OGC:CRS84"}"#));
    r.check_extension("g_crs", wkb, Some(r#"{"crs":"EPSG:3857"}"#));
    r.check_extension(
        "geo",
        wkb,
        Some(r#"{"crs":"OGC:CRS84","edges":"spherical"}"#),
    );
    r.check_extension(
        "geo_alg",
        wkb,
        Some(r#"{"crs":"srid:4269","edges":"vincenty"}"#),
    );
}

#[tokio::test]
async fn unknown_is_null() {
    let path = write(
        "unknown",
        "message m { optional int32 n (UNKNOWN); required int32 id; }",
        vec![i32s(&[]).def(&[0, 0]), i32s(&[1, 2])],
    );
    let r = read(&path).await;
    r.check("n", &DataType::Null, &["NULL", "NULL"]);
    r.check("id", &DataType::Int32, &["1", "2"]);
}

// ---------------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn list_three_level_non_null_list_nullable_elements() {
    // rows: ["a", null], [], ["b"]
    let path = write(
        "list3-required",
        "message m {
            required group my_list (LIST) {
                repeated group list { optional binary element (STRING); }
            }
        }",
        vec![strs(&["a", "b"]).def(&[2, 1, 0, 2]).rep(&[0, 1, 0, 0])],
    );
    let r = read(&path).await;
    r.check(
        "my_list",
        &list(Field::new("element", DataType::Utf8, true)),
        &["[a, NULL]", "[]", "[b]"],
    );
    assert!(!r.field("my_list").is_nullable());
}

#[tokio::test]
async fn list_three_level_nullable_list_non_null_elements() {
    // rows: ["a", "b"], null, []
    let path = write(
        "list3-optional",
        "message m {
            optional group my_list (LIST) {
                repeated group list { required binary element (STRING); }
            }
        }",
        vec![strs(&["a", "b"]).def(&[2, 2, 0, 1]).rep(&[0, 1, 0, 0])],
    );
    let r = read(&path).await;
    r.check(
        "my_list",
        &list(Field::new("element", DataType::Utf8, false)),
        &["[a, b]", "NULL", "[]"],
    );
    assert!(r.field("my_list").is_nullable());
}

#[tokio::test]
async fn list_of_lists() {
    // rows: [[1, 2], []], null, [[3]]
    let path = write(
        "list-of-lists",
        "message m {
            optional group array_of_arrays (LIST) {
                repeated group list {
                    required group element (LIST) {
                        repeated group list { required int32 element; }
                    }
                }
            }
        }",
        vec![i32s(&[1, 2, 3]).def(&[3, 3, 2, 0, 3]).rep(&[0, 2, 1, 0, 0])],
    );
    let r = read(&path).await;
    let inner = list(Field::new("element", DataType::Int32, false));
    r.check(
        "array_of_arrays",
        &list(Field::new("element", inner, false)),
        &["[[1, 2], []]", "NULL", "[[3]]"],
    );
}

#[tokio::test]
async fn list_repeated_group_named_element_with_one_required_field() {
    // "should produce a nullable list of non-null strings"; rows: ["x", "y"], null
    let path = write(
        "list-element-name",
        "message m {
            optional group my_list (LIST) {
                repeated group element { required binary str (STRING); }
            }
        }",
        vec![strs(&["x", "y"]).def(&[2, 2, 0]).rep(&[0, 1, 0])],
    );
    let r = read(&path).await;
    r.check(
        "my_list",
        &list(Field::new("str", DataType::Utf8, false)),
        &["[x, y]", "NULL"],
    );
    assert!(r.field("my_list").is_nullable());
}

#[tokio::test]
async fn list_rule_1_repeated_primitive_two_level() {
    // rows: [1, 2], null, [], [3]
    let path = write(
        "list-rule1",
        "message m {
            optional group my_list (LIST) { repeated int32 element; }
            required group req_list (LIST) { repeated int32 element; }
        }",
        vec![
            i32s(&[1, 2, 3]).def(&[2, 2, 0, 1, 2]).rep(&[0, 1, 0, 0, 0]),
            i32s(&[4, 5]).def(&[1, 0, 0, 1]).rep(&[0, 0, 0, 0]),
        ],
    );
    let r = read(&path).await;
    let int_list = list(Field::new("element", DataType::Int32, false));
    r.check("my_list", &int_list, &["[1, 2]", "NULL", "[]", "[3]"]);
    assert!(r.field("my_list").is_nullable());
    r.check("req_list", &int_list, &["[4]", "[]", "[]", "[5]"]);
    assert!(!r.field("req_list").is_nullable());
}

#[tokio::test]
async fn list_rule_2_repeated_group_with_several_fields_is_the_element() {
    // rows: [{a, 1}, {b, 2}], null
    let path = write(
        "list-rule2",
        "message m {
            optional group my_list (LIST) {
                repeated group element {
                    required binary str (STRING);
                    required int32 num;
                }
            }
        }",
        vec![
            strs(&["a", "b"]).def(&[2, 2, 0]).rep(&[0, 1, 0]),
            i32s(&[1, 2]).def(&[2, 2, 0]).rep(&[0, 1, 0]),
        ],
    );
    let r = read(&path).await;
    let element = DataType::Struct(Fields::from(vec![
        Field::new("str", DataType::Utf8, false),
        Field::new("num", DataType::Int32, false),
    ]));
    r.check(
        "my_list",
        &list(Field::new("element", element, false)),
        &["[{str: a, num: 1}, {str: b, num: 2}]", "NULL"],
    );
}

#[tokio::test]
async fn list_rule_3_repeated_list_inside_two_level_list() {
    // rows: [[1, 2], [3]], null, [[]]
    let path = write(
        "list-rule3",
        "message m {
            optional group my_list (LIST) {
                repeated group array (LIST) { repeated int32 array; }
            }
        }",
        vec![i32s(&[1, 2, 3]).def(&[3, 3, 3, 0, 2]).rep(&[0, 2, 1, 0, 0])],
    );
    let r = read(&path).await;
    let inner = list(Field::new("array", DataType::Int32, false));
    r.check(
        "my_list",
        &list(Field::new("array", inner, false)),
        &["[[1, 2], [3]]", "NULL", "[[]]"],
    );
}

#[tokio::test]
async fn list_rule_4_one_field_group_named_array_or_tuple_is_the_element() {
    // rows: [{x}, {y}], null
    let path = write(
        "list-rule4",
        "message m {
            optional group my_list (LIST) {
                repeated group array { required binary str (STRING); }
            }
            optional group my_list2 (LIST) {
                repeated group my_list2_tuple { required binary str (STRING); }
            }
        }",
        vec![
            strs(&["x", "y"]).def(&[2, 2, 0]).rep(&[0, 1, 0]),
            strs(&["x", "y"]).def(&[2, 2, 0]).rep(&[0, 1, 0]),
        ],
    );
    let r = read(&path).await;
    let one_tuple = DataType::Struct(Fields::from(vec![Field::new("str", DataType::Utf8, false)]));
    r.check(
        "my_list",
        &list(Field::new("array", one_tuple.clone(), false)),
        &["[{str: x}, {str: y}]", "NULL"],
    );
    r.check(
        "my_list2",
        &list(Field::new("my_list2_tuple", one_tuple, false)),
        &["[{str: x}, {str: y}]", "NULL"],
    );
}

#[tokio::test]
async fn list_rule_5_one_optional_field_is_the_element_with_its_repetition() {
    // rows: ["a", null], null, []
    let path = write(
        "list-rule5",
        "message m {
            optional group my_list (LIST) {
                repeated group element { optional binary str (STRING); }
            }
        }",
        vec![strs(&["a"]).def(&[3, 2, 0, 1]).rep(&[0, 1, 0, 0])],
    );
    let r = read(&path).await;
    r.check(
        "my_list",
        &list(Field::new("str", DataType::Utf8, true)),
        &["[a, NULL]", "NULL", "[]"],
    );
}

#[tokio::test]
async fn unannotated_repeated_fields_are_required_lists_of_required_elements() {
    // rows: num [1, 2] / [] ; my_list [{1, "a"}, {2, null}] / []
    let path = write(
        "unannotated-repeated",
        "message m {
            repeated int32 num;
            repeated group my_list {
                required int32 num;
                optional binary str (STRING);
            }
        }",
        vec![
            i32s(&[1, 2]).def(&[1, 1, 0]).rep(&[0, 1, 0]),
            i32s(&[1, 2]).def(&[1, 1, 0]).rep(&[0, 1, 0]),
            strs(&["a"]).def(&[2, 1, 0]).rep(&[0, 1, 0]),
        ],
    );
    let r = read(&path).await;
    r.check(
        "num",
        &list(Field::new("num", DataType::Int32, false)),
        &["[1, 2]", "[]"],
    );
    assert!(!r.field("num").is_nullable());
    let element = DataType::Struct(Fields::from(vec![
        Field::new("num", DataType::Int32, false),
        Field::new("str", DataType::Utf8, true),
    ]));
    r.check(
        "my_list",
        &list(Field::new("my_list", element, false)),
        &["[{num: 1, str: a}, {num: 2, str: NULL}]", "[]"],
    );
    assert!(!r.field("my_list").is_nullable());
}

// ---------------------------------------------------------------------------------------------
// Maps
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn map_standard_three_level() {
    // rows: {a: 1, b: null}, {}
    let path = write(
        "map-standard",
        "message m {
            required group my_map (MAP) {
                repeated group key_value {
                    required binary key (STRING);
                    optional int32 value;
                }
            }
        }",
        vec![
            strs(&["a", "b"]).def(&[1, 1, 0]).rep(&[0, 1, 0]),
            i32s(&[1]).def(&[2, 1, 0]).rep(&[0, 1, 0]),
        ],
    );
    let r = read(&path).await;
    r.check(
        "my_map",
        &map(
            "key_value",
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Int32, true),
        ),
        &["{a: 1, b: NULL}", "{}"],
    );
    assert!(!r.field("my_map").is_nullable());
}

#[tokio::test]
async fn map_misnamed_key_value_fields_are_found_by_position() {
    // rows: {a: 1}, null
    let path = write(
        "map-misnamed",
        "message m {
            optional group my_map (MAP) {
                repeated group map {
                    required binary str (STRING);
                    required int32 num;
                }
            }
        }",
        vec![
            strs(&["a"]).def(&[2, 0]).rep(&[0, 0]),
            i32s(&[1]).def(&[2, 0]).rep(&[0, 0]),
        ],
    );
    let r = read(&path).await;
    r.check(
        "my_map",
        &map(
            "map",
            Field::new("str", DataType::Utf8, false),
            Field::new("num", DataType::Int32, false),
        ),
        &["{a: 1}", "NULL"],
    );
}

#[tokio::test]
async fn map_key_value_legacy_annotation_is_a_map() {
    // rows: {a: null, b: 2}, null, {}
    let path = write(
        "map-key-value",
        "message m {
            optional group my_map (MAP_KEY_VALUE) {
                repeated group map {
                    required binary key (STRING);
                    optional int32 value;
                }
            }
        }",
        vec![
            strs(&["a", "b"]).def(&[2, 2, 0, 1]).rep(&[0, 1, 0, 0]),
            i32s(&[2]).def(&[2, 3, 0, 1]).rep(&[0, 1, 0, 0]),
        ],
    );
    let r = read(&path).await;
    r.check(
        "my_map",
        &map(
            "map",
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Int32, true),
        ),
        &["{a: NULL, b: 2}", "NULL", "{}"],
    );
}

#[tokio::test]
async fn map_without_value_field_is_a_set_of_keys() {
    // "If not present, it can be represented as a map with all null values or as a set of keys":
    // the parquet crate picks the set, a non-null list of the non-null keys. rows: {a, b}, {}
    let path = write(
        "map-keys-only",
        "message m {
            required group my_set (MAP) {
                repeated group key_value { required binary key (STRING); }
            }
        }",
        vec![strs(&["a", "b"]).def(&[1, 1, 0]).rep(&[0, 1, 0])],
    );
    let r = read(&path).await;
    r.check(
        "my_set",
        &list(Field::new("key", DataType::Utf8, false)),
        &["[a, b]", "[]"],
    );
    assert!(!r.field("my_set").is_nullable());
}

#[tokio::test]
async fn arrow_typeof_reports_the_logical_mapping() {
    let path = write(
        "typeof",
        "message m {
            required int32 u (INTEGER(16,false));
            required int64 t (TIMESTAMP(MICROS,true));
            required group l (LIST) { repeated int32 element; }
        }",
        vec![i32s(&[7]), i64s(&[0]), i32s(&[1]).def(&[1]).rep(&[0])],
    );
    let sql = format!(
        "SELECT arrow_typeof(u) AS u, arrow_typeof(t) AS t, arrow_typeof(l) AS l FROM '{}'",
        path.display()
    );
    let (schema, batches) = collect(&ctx(), &sql).await;
    let cells = cells(&schema, &batches);
    assert_eq!(cells["u"], ["UInt16"]);
    assert_eq!(cells["t"], [r#"Timestamp(µs, "UTC")"#]);
    assert_eq!(cells["l"], ["List(non-null Int32, field: 'element')"]);
}

/// A nested INTERVAL needs a fix-up (it is read exactly, as `Interval(MonthDayNano)`), as a
/// top-level one does: a column holding one is collected.
#[test]
fn a_nested_interval_needs_a_fixup() {
    use datafusion_parquet_variant::parquet::logical_types::{
        ParquetColumnTypes, collect_logical_type_fixups,
    };
    let descriptor =
        |text: &str| SchemaDescriptor::new(Arc::new(parse_message_type(text).unwrap()));
    let nested = descriptor(
        "message m { optional group s { optional fixed_len_byte_array(12) iv (INTERVAL); }
            optional group p { optional fixed_len_byte_array(12) plain; } }",
    );
    let mut types = ParquetColumnTypes::new();
    collect_logical_type_fixups(&nested, &mut types);
    assert_eq!(types.keys().collect::<Vec<_>>(), ["s"], "{types:?}");
    let top = descriptor("message m { optional fixed_len_byte_array(12) iv (INTERVAL); }");
    collect_logical_type_fixups(&top, &mut types);
    assert!(types.contains_key("iv"), "{types:?}");
}
