//! The numbers recipes are made of. Each is drawn mostly inside the range its constructors document, and
//! sometimes past it: at the limits and one step beyond, at values a user may mistype (negative, NaN, a unit
//! mistake), or as any bits at all. `Exactly` spells out one value, for the enumerating tests.

use arbitrary::{Arbitrary, Unstructured};
use sstfilter::{RangePolicy, RibbonPolicy};

/// A false-positive rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// `2^-(1 + 39 · x / 65535)`: log-uniform over the rates every rate-taking constructor accepts.
    LogUniform(u16),
    /// `2^-(32 + 256 · x / 65535)`: past the smallest rate Ribbon keeps (2^-32) and Range keeps (2^-40), and past
    /// the 255 probes of a Bloom filter (about 2^-255).
    Tiny(u16),
    /// One of [`EDGE_RATES`] (index modulo their count).
    Edge(u8),
    /// Exactly this rate.
    Exactly(f64),
}

/// Rates at and just past the documented limits, and values a user may mistype.
pub const EDGE_RATES: [f64; 17] = [
    0.0,
    -0.0,
    1.0,
    1.0 - f64::EPSILON / 2.0,
    0.5,
    -0.01,
    1.5,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    RibbonPolicy::MIN_FPR,
    f64::from_bits(RibbonPolicy::MIN_FPR.to_bits() - 1),
    RangePolicy::MIN_FPR,
    f64::from_bits(RangePolicy::MIN_FPR.to_bits() - 1),
    1e-300,
    f64::MIN_POSITIVE,
    5e-324,
];

impl Rate {
    /// The rate this value stands for.
    #[must_use]
    pub fn get(self) -> f64 {
        match self {
            Rate::LogUniform(x) => (-(1.0 + 39.0 * f64::from(x) / f64::from(u16::MAX))).exp2(),
            Rate::Tiny(x) => (-(32.0 + 256.0 * f64::from(x) / f64::from(u16::MAX))).exp2(),
            Rate::Edge(i) => EDGE_RATES[usize::from(i) % EDGE_RATES.len()],
            Rate::Exactly(rate) => rate,
        }
    }
}

impl<'a> Arbitrary<'a> for Rate {
    /// Three in four log-uniform, one in eight tiny, one in sixteen an edge, one in sixteen any bits.
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.int_in_range(0u8..=15)? {
            0..=11 => Rate::LogUniform(u.arbitrary()?),
            12 | 13 => Rate::Tiny(u.arbitrary()?),
            14 => Rate::Edge(u.arbitrary()?),
            _ => Rate::Exactly(u.arbitrary()?),
        })
    }
}

/// Bits per key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BitsPerKey {
    /// `1 + 99 · x / 65535`: the range the Bloom policies document, 1 to 100.
    Documented(u16),
    /// `x / 16`: 0 to 4096 in sixteenths, past the documented range at both ends (below 1, and above 100 as a unit
    /// mistake would be).
    Sixteenths(u16),
    /// One of [`EDGE_BITS_PER_KEY`] (index modulo their count).
    Edge(u8),
    /// Exactly these bits per key.
    Exactly(f64),
}

/// Bits per key at and just past the documented limits, and values a user may mistype.
pub const EDGE_BITS_PER_KEY: [f64; 12] = [
    0.0,
    -0.0,
    1.0,
    1.0 - f64::EPSILON / 2.0,
    sstfilter::MAX_BITS_PER_KEY,
    sstfilter::MAX_BITS_PER_KEY + 1e-9,
    -3.0,
    1e9,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    5e-324,
];

impl BitsPerKey {
    /// The bits per key this value stands for.
    #[must_use]
    pub fn get(self) -> f64 {
        match self {
            BitsPerKey::Documented(x) => 1.0 + 99.0 * f64::from(x) / f64::from(u16::MAX),
            BitsPerKey::Sixteenths(x) => f64::from(x) / 16.0,
            BitsPerKey::Edge(i) => EDGE_BITS_PER_KEY[usize::from(i) % EDGE_BITS_PER_KEY.len()],
            BitsPerKey::Exactly(bits) => bits,
        }
    }
}

impl<'a> Arbitrary<'a> for BitsPerKey {
    /// Three in four documented, one in eight in sixteenths, one in sixteen an edge, one in sixteen any bits.
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.int_in_range(0u8..=15)? {
            0..=11 => BitsPerKey::Documented(u.arbitrary()?),
            12 | 13 => BitsPerKey::Sixteenths(u.arbitrary()?),
            14 => BitsPerKey::Edge(u.arbitrary()?),
            _ => BitsPerKey::Exactly(u.arbitrary()?),
        })
    }
}

/// A length or a size (a range length, a memory cap in bytes), over every magnitude of a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// `x >> (63 - log2 % 64)`: uniform below `2^(log2 % 64 + 1)`, so log-uniform over 0 to `u64::MAX`.
    LogUniform { log2: u8, x: u64 },
    /// Exactly this length.
    Exactly(u64),
}

impl Length {
    /// The length this value stands for.
    #[must_use]
    pub fn get(self) -> u64 {
        match self {
            Length::LogUniform { log2, x } => x >> (63 - u32::from(log2 % 64)),
            Length::Exactly(len) => len,
        }
    }
}

impl<'a> Arbitrary<'a> for Length {
    /// Fifteen in sixteen log-uniform, one in sixteen any bits.
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.int_in_range(0u8..=15)? {
            0..=14 => Length::LogUniform {
                log2: u.arbitrary()?,
                x: u.arbitrary()?,
            },
            _ => Length::Exactly(u.arbitrary()?),
        })
    }
}

/// Ribbon's slot overhead (documented from 0 to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Overhead {
    /// `x / 25000`: -1.31 to 1.31, about two in five inside the documented range.
    Scaled(i16),
    /// Exactly this overhead.
    Exactly(f64),
}

impl Overhead {
    /// The overhead this value stands for.
    #[must_use]
    pub fn get(self) -> f64 {
        match self {
            Overhead::Scaled(x) => f64::from(x) / 25_000.0,
            Overhead::Exactly(overhead) => overhead,
        }
    }
}

impl<'a> Arbitrary<'a> for Overhead {
    /// Seven in eight scaled, one in eight any bits.
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.int_in_range(0u8..=7)? {
            0..=6 => Overhead::Scaled(u.arbitrary()?),
            _ => Overhead::Exactly(u.arbitrary()?),
        })
    }
}
