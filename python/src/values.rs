//! Variant values as Python objects: null `None`, booleans, integers `int`, floats and doubles
//! `float`, decimals `decimal.Decimal`, strings `str`, binary `bytes`, dates `datetime.date`,
//! times `datetime.time`, timestamps `datetime.datetime` (UTC-aware for TIMESTAMP, naive for
//! TIMESTAMP_NTZ; nanoseconds truncated to Python's microseconds), uuids `uuid.UUID`, objects
//! `dict` (keys in stored order), arrays `list`.
use datafusion_parquet_variant::codec::{Value, Variant, format, validate};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// The Python classes values become, looked up once per call.
struct Classes<'py> {
    date: Bound<'py, PyAny>,
    datetime: Bound<'py, PyAny>,
    time: Bound<'py, PyAny>,
    timedelta: Bound<'py, PyAny>,
    utc: Bound<'py, PyAny>,
    decimal: Bound<'py, PyAny>,
    uuid: Bound<'py, PyAny>,
}

impl<'py> Classes<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        let datetime = py.import("datetime")?;
        Ok(Classes {
            date: datetime.getattr("date")?,
            datetime: datetime.getattr("datetime")?,
            time: datetime.getattr("time")?,
            timedelta: datetime.getattr("timedelta")?,
            utc: datetime.getattr("timezone")?.getattr("utc")?,
            decimal: py.import("decimal")?.getattr("Decimal")?,
            uuid: py.import("uuid")?.getattr("UUID")?,
        })
    }

    /// 1970-01-01 00:00 plus `micros`, in UTC when `utc`, else naive.
    fn timestamp(&self, micros: i64, utc: bool) -> PyResult<Bound<'py, PyAny>> {
        let epoch = if utc {
            self.datetime.call1((1970, 1, 1, 0, 0, 0, 0, &self.utc))?
        } else {
            self.datetime.call1((1970, 1, 1))?
        };
        let kwargs = PyDict::new(self.date.py());
        kwargs.set_item("microseconds", micros)?;
        epoch.add(self.timedelta.call((), Some(&kwargs))?)
    }
}

/// The variant `metadata` + `value` as a Python value (see the module documentation); a
/// `ValueError` for bytes that are not a valid variant.
#[pyfunction]
pub(crate) fn variant_to_python<'py>(
    py: Python<'py>,
    metadata: &[u8],
    value: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    let invalid = |e: datafusion_parquet_variant::codec::VariantError| {
        PyValueError::new_err(format!("not a valid variant: {e}"))
    };
    // validation bounds the nesting, which the conversion below follows
    validate(metadata, value).map_err(invalid)?;
    let variant = Variant::try_new(metadata, value).map_err(invalid)?;
    convert(&Classes::new(py)?, variant).map_err(|e| match e {
        Convert::Python(e) => e,
        Convert::Variant(e) => invalid(e),
    })
}

enum Convert {
    Python(PyErr),
    Variant(datafusion_parquet_variant::codec::VariantError),
}

impl From<PyErr> for Convert {
    fn from(e: PyErr) -> Self {
        Convert::Python(e)
    }
}

impl From<datafusion_parquet_variant::codec::VariantError> for Convert {
    fn from(e: datafusion_parquet_variant::codec::VariantError) -> Self {
        Convert::Variant(e)
    }
}

/// A decimal's text (`BigDecimal.toPlainString` without trailing zeros), for `Decimal`.
fn decimal_text(unscaled: i128, scale: u8) -> String {
    let mut text = Vec::new();
    format::write_decimal(&mut text, unscaled, scale);
    String::from_utf8(text).expect("digits")
}

fn convert<'py>(classes: &Classes<'py>, v: Variant<'_>) -> Result<Bound<'py, PyAny>, Convert> {
    let py = classes.date.py();
    Ok(match v.get()? {
        Value::Null => py.None().into_bound(py),
        Value::Boolean(b) => b.into_bound_py_any(py)?,
        Value::Int8(i) => i.into_bound_py_any(py)?,
        Value::Int16(i) => i.into_bound_py_any(py)?,
        Value::Int32(i) => i.into_bound_py_any(py)?,
        Value::Int64(i) => i.into_bound_py_any(py)?,
        Value::Double(d) => d.into_bound_py_any(py)?,
        Value::Float(f) => f64::from(f).into_bound_py_any(py)?,
        Value::Decimal4(u, s) => classes.decimal.call1((decimal_text(u.into(), s),))?,
        Value::Decimal8(u, s) => classes.decimal.call1((decimal_text(u.into(), s),))?,
        Value::Decimal16(u, s) => classes.decimal.call1((decimal_text(u, s),))?,
        Value::String(s) => s.into_bound_py_any(py)?,
        Value::Binary(b) => PyBytes::new(py, b).into_any(),
        Value::Date(days) => {
            let kwargs = PyDict::new(py);
            kwargs.set_item("days", days)?;
            classes
                .date
                .call1((1970, 1, 1))?
                .add(classes.timedelta.call((), Some(&kwargs))?)?
        }
        Value::Time(micros) => {
            let micros = micros.rem_euclid(86_400_000_000);
            classes.time.call1((
                micros / 3_600_000_000,
                micros / 60_000_000 % 60,
                micros / 1_000_000 % 60,
                micros % 1_000_000,
            ))?
        }
        Value::Timestamp(micros) => classes.timestamp(micros, true)?,
        Value::TimestampNtz(micros) => classes.timestamp(micros, false)?,
        Value::TimestampNanos(nanos) => classes.timestamp(nanos.div_euclid(1000), true)?,
        Value::TimestampNtzNanos(nanos) => classes.timestamp(nanos.div_euclid(1000), false)?,
        Value::Uuid(bytes) => {
            let kwargs = PyDict::new(py);
            kwargs.set_item("bytes", PyBytes::new(py, &bytes))?;
            classes.uuid.call((), Some(&kwargs))?
        }
        Value::Object(object) => {
            let dict = PyDict::new(py);
            for field in object.iter() {
                let (key, value) = field?;
                dict.set_item(key, convert(classes, value)?)?;
            }
            dict.into_any()
        }
        Value::Array(array) => {
            let list = PyList::empty(py);
            for element in array.iter() {
                list.append(convert(classes, element?)?)?;
            }
            list.into_any()
        }
    })
}
