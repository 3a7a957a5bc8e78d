//! Errors of the codec: corrupt bytes, malformed JSON, limits.
use std::fmt;

/// Everything that can go wrong while reading, validating or building a variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantError {
    /// The bytes do not follow the encoding (bounds, offsets, UTF-8, header bits).
    Malformed(String),
    /// The metadata version is not 1.
    UnsupportedVersion(u8),
    /// A primitive type id this implementation does not know.
    UnknownPrimitiveType(u8),
    /// Containers nested deeper than the limit.
    DepthLimitExceeded(usize),
    /// An object has the same key twice.
    DuplicateKey(String),
    /// A value being built would exceed the encoding's 4 GiB (a limit, not bad bytes).
    TooLarge,
    /// The JSON text is not valid JSON (or uses something Spark rejects); `offset` is a byte offset.
    MalformedJson {
        /// Byte offset in the input where the problem was found.
        offset: usize,
        /// What was wrong.
        message: &'static str,
    },
}

impl fmt::Display for VariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VariantError::Malformed(m) => write!(f, "malformed variant: {m}"),
            VariantError::UnsupportedVersion(v) => {
                write!(
                    f,
                    "malformed variant: metadata version {v} is not supported (expected 1)"
                )
            }
            VariantError::UnknownPrimitiveType(t) => {
                write!(f, "unknown primitive type id {t} in variant")
            }
            VariantError::DepthLimitExceeded(limit) => {
                write!(f, "nesting depth exceeds the limit of {limit}")
            }
            VariantError::DuplicateKey(k) => write!(f, "duplicate object key \"{k}\""),
            VariantError::TooLarge => write!(f, "a variant value cannot exceed 4 GiB"),
            VariantError::MalformedJson { offset, message } => {
                write!(f, "malformed JSON at byte {offset}: {message}")
            }
        }
    }
}

impl std::error::Error for VariantError {}

impl VariantError {
    /// Whether the error says the bytes read are not a variant (the data is at fault, not the
    /// query): bad bounds, offsets, UTF-8 or header bits, an unknown version or type id. JSON
    /// text errors, duplicate keys (which building also reports) and the limits (depth, size)
    /// are not.
    pub fn is_invalid_bytes(&self) -> bool {
        matches!(
            self,
            VariantError::Malformed(_)
                | VariantError::UnsupportedVersion(_)
                | VariantError::UnknownPrimitiveType(_)
        )
    }
}

/// Result with [`VariantError`].
pub type Result<T, E = VariantError> = std::result::Result<T, E>;

/// Shortens `s` (a value's text quoted in an error message) to its first 64 bytes, with `...`.
pub fn excerpt(s: &str) -> String {
    const MAX: usize = 64;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// Shorthand for a [`VariantError::Malformed`] error.
pub(crate) fn malformed<T>(message: impl Into<String>) -> Result<T> {
    Err(VariantError::Malformed(message.into()))
}
