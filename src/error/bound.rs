//! The data of an invalid value: the value itself ([`Value`]) and the rule it broke ([`Bound`]).

use std::fmt;

/// A value as the user or the host gave it: a number where it is one, text otherwise.
///
/// Its `Display` is the value as the messages print it (`{}` of the number; `[x, y, z]` for a vector).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// A real number.
    Float(f64),
    /// A signed whole number.
    Int(i64),
    /// An unsigned whole number (a count, an index, a length).
    UInt(u64),
    /// A 3-vector (a position, a direction).
    Vec3([f64; 3]),
    /// Anything else, as written (a name, a path, a quaternion).
    Text(String),
}

impl Value {
    /// The value as a real number, where it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(v) => Some(v),
            Value::Int(v) => Some(v as f64),
            Value::UInt(v) => Some(v as f64),
            Value::Vec3(_) | Value::Text(_) => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(v) => write!(f, "{v}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::UInt(v) => write!(f, "{v}"),
            Value::Vec3(v) => write!(f, "{v:?}"),
            Value::Text(s) => f.write_str(s),
        }
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<[f64; 3]> for Value {
    fn from(v: [f64; 3]) -> Self {
        Value::Vec3(v)
    }
}

macro_rules! value_from {
    ($variant:ident as $wide:ty: $($t:ty),*) => {
        $(impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::$variant(v as $wide)
            }
        })*
    };
}
value_from!(Int as i64: i32, i64);
value_from!(UInt as u64: u32, u64, usize);

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

/// The rule a value broke, as data. Its `Display` is the rule's wording in the one-line messages
/// (`must be finite and > 0`, `must be in 1..=64`, `must be one of f32, f64`).
///
/// The variants with a number and a `rule` keep the number as data and the sentence that words it:
/// `rule` is that sentence with `{}` where the number goes (`"must be at least {}"`). A host matches
/// the kind and reads the number (`Bound::AtLeast { min, .. }`); the constructors
/// ([`Bound::at_least`], [`Bound::at_most`], ...) give the usual wording.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Bound {
    /// Finite and > 0: `must be finite and > 0`.
    Positive,
    /// Finite and ≥ 0: `must be finite and >= 0`.
    NonNegative,
    /// Finite (every component of a vector): `must be finite`.
    Finite,
    /// Not all zero (a normal, an axis): `must be non-zero`.
    NonZero,
    /// Strictly above `min` (`must be > {}`).
    Above {
        /// The value it must exceed.
        min: f64,
        /// The wording, `{}` standing for `min`.
        rule: &'static str,
    },
    /// At least `min` (`must be >= {}`, `must be at least {}`).
    AtLeast {
        /// The least value allowed.
        min: f64,
        /// The wording, `{}` standing for `min`.
        rule: &'static str,
    },
    /// At most `max` (`must be at most {}`).
    AtMost {
        /// The largest value allowed.
        max: f64,
        /// The wording, `{}` standing for `max`.
        rule: &'static str,
    },
    /// In an interval of real numbers: `must be in (0, 2)`, `must be in [1, 2)`.
    Interval {
        /// The lower end.
        min: f64,
        /// The upper end.
        max: f64,
        /// Whether `min` itself is excluded.
        min_open: bool,
        /// Whether `max` itself is excluded.
        max_open: bool,
    },
    /// A whole number in `min..=max`: `must be in 1..=64`.
    IntRange {
        /// The least value allowed.
        min: i64,
        /// The largest value allowed.
        max: i64,
    },
    /// An index into a list of `len` entries (particles, colliders): it must be below `len`.
    Index {
        /// The list's length.
        len: u64,
        /// The wording, `{}` standing for `len` (`must be < {}`).
        rule: &'static str,
    },
    /// A length that must equal `expected` (the number of particles, a matrix dimension).
    Length {
        /// The length required.
        expected: u64,
        /// The wording, `{}` standing for `expected`.
        rule: &'static str,
    },
    /// One of a list of names: `must be one of a, b, c`.
    OneOf(Vec<String>),
    /// A value valid in itself that the method, the backend, the engine or the model does not take
    /// here; the text says what does (`runs on the CPU only (use --backend cpu)`).
    Unsupported(String),
    /// A rule no other variant states (a quaternion that must be non-zero, key times that must
    /// increase, an I/O failure writing a file); the text is its wording.
    Other(String),
}

impl Bound {
    /// `must be > {min}`.
    pub fn above(min: f64) -> Self {
        Bound::Above { min, rule: "must be > {}" }
    }

    /// `must be >= {min}`.
    pub fn at_least(min: f64) -> Self {
        Bound::AtLeast { min, rule: "must be >= {}" }
    }

    /// `must be at least {min}` (a size or count).
    pub fn min_count(min: u64) -> Self {
        Bound::AtLeast { min: min as f64, rule: "must be at least {}" }
    }

    /// `must be at most {max}`.
    pub fn at_most(max: u64) -> Self {
        Bound::AtMost { max: max as f64, rule: "must be at most {}" }
    }

    /// `must be in {min}..={max}`.
    pub fn int_range(min: i64, max: i64) -> Self {
        Bound::IntRange { min, max }
    }

    /// `must be < {len}`: an index into `len` entries.
    pub fn index(len: usize) -> Self {
        Bound::Index { len: len as u64, rule: "must be < {}" }
    }

    /// A length that must equal `expected`, worded by `rule` (`{}` standing for `expected`).
    pub fn length(expected: usize, rule: &'static str) -> Self {
        Bound::Length { expected: expected as u64, rule }
    }

    /// `must be one of ...` from a comma-separated list (`"f32, f64"`).
    pub fn one_of(names: &str) -> Self {
        Bound::OneOf(names.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
    }

    /// The same bound worded by `rule` (`{}` standing for its number); bounds without a number keep
    /// theirs.
    pub fn worded(self, rule: &'static str) -> Self {
        match self {
            Bound::Above { min, .. } => Bound::Above { min, rule },
            Bound::AtLeast { min, .. } => Bound::AtLeast { min, rule },
            Bound::AtMost { max, .. } => Bound::AtMost { max, rule },
            Bound::Index { len, .. } => Bound::Index { len, rule },
            Bound::Length { expected, .. } => Bound::Length { expected, rule },
            other => other,
        }
    }
}

/// `rule` with its `{}` replaced by `n`.
fn fill(f: &mut fmt::Formatter<'_>, rule: &str, n: impl fmt::Display) -> fmt::Result {
    match rule.split_once("{}") {
        Some((a, b)) => write!(f, "{a}{n}{b}"),
        None => f.write_str(rule),
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Positive => f.write_str("must be finite and > 0"),
            Bound::NonNegative => f.write_str("must be finite and >= 0"),
            Bound::Finite => f.write_str("must be finite"),
            Bound::NonZero => f.write_str("must be non-zero"),
            Bound::Above { min, rule } | Bound::AtLeast { min, rule } => fill(f, rule, min),
            Bound::AtMost { max, rule } => fill(f, rule, max),
            Bound::Interval { min, max, min_open, max_open } => {
                let (l, r) = (if *min_open { '(' } else { '[' }, if *max_open { ')' } else { ']' });
                write!(f, "must be in {l}{min}, {max}{r}")
            }
            Bound::IntRange { min, max } => write!(f, "must be in {min}..={max}"),
            Bound::Index { len, rule } => fill(f, rule, len),
            Bound::Length { expected, rule } => fill(f, rule, expected),
            Bound::OneOf(names) => write!(f, "must be one of {}", names.join(", ")),
            Bound::Unsupported(s) | Bound::Other(s) => f.write_str(s),
        }
    }
}
