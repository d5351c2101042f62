//! Prefix extractors and prefix probes. What prefix filters are and how a store uses them: the crate docs,
//! "Prefix filters"; the byte layout: FORMAT.md section 2.1.

use crate::error::UsageError;
use crate::format::PrefixName;
use crate::hash::{KeyHash, key_hash};

/// Decides which prefix of a key a filter stores, and which prefix a scan can be answered by.
///
/// The contract that keeps prefix filters free of false negatives, for every `key` and `scan`:
///
/// * [`prefix_len`](Self::prefix_len)`(key)` is `None` (the key is outside the domain: no prefix of it is
///   stored) or `Some(n)` with `n <= key.len()`, and it depends only on `key`.
/// * [`scan_prefix_len`](Self::scan_prefix_len)`(scan)` is `None` (a scan over `scan` cannot be answered) or
///   `Some(n)` with `n <= scan.len()`, and then **every** key that starts with `scan` is in the domain and has
///   `prefix_len(key) == Some(n)`: so all of them share the prefix `scan[..n]`, and a filter that does not hold it
///   holds none of them.
///
/// [`name`](Self::name) is recorded in every block built with the extractor and compared when a scan asks: it must
/// change whenever the prefixes extracted would (so include the parameters: `"myapp.tenant:4"`). The built-in
/// extractors are [`FixedPrefix`], [`DelimitedPrefix`] and [`CappedPrefix`].
pub trait PrefixExtractor: Send + Sync {
    /// The name recorded in the block: at most [`MAX_PREFIX_NAME_LEN`](crate::MAX_PREFIX_NAME_LEN) (255) bytes of
    /// UTF-8 (a builder refuses a longer one), and different for every different extraction.
    fn name(&self) -> &str;

    /// The length of the prefix stored for `key`, or `None` if `key` is outside the extractor's domain.
    fn prefix_len(&self, key: &[u8]) -> Option<usize>;

    /// The length of the prefix that every key starting with `scan` has (see the trait's contract), or `None`
    /// when those keys do not all share one stored prefix (the scan then reads the table).
    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize>;

    /// The prefix stored for `key`, or `None` outside the domain.
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        key.get(..self.prefix_len(key)?)
    }
}

impl<E: PrefixExtractor + ?Sized> PrefixExtractor for &E {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn prefix_len(&self, key: &[u8]) -> Option<usize> {
        (**self).prefix_len(key)
    }
    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
        (**self).scan_prefix_len(scan)
    }
}

impl<E: PrefixExtractor + ?Sized> PrefixExtractor for std::sync::Arc<E> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn prefix_len(&self, key: &[u8]) -> Option<usize> {
        (**self).prefix_len(key)
    }
    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
        (**self).scan_prefix_len(scan)
    }
}

/// Checks that a filter block can record `extractor`'s name whole (at most
/// [`MAX_PREFIX_NAME_LEN`](crate::MAX_PREFIX_NAME_LEN) bytes), as
/// [`FilterBlockBuilder::with_prefixes`](crate::FilterBlockBuilder::with_prefixes) does: for an integration that
/// configures an extractor before it makes builders, so that the configuration is refused where it is made.
pub fn check_prefix_extractor(extractor: &dyn PrefixExtractor) -> Result<(), UsageError> {
    PrefixName::new(extractor.name()).map(drop)
}

/// Defines a built-in extractor: a struct holding its parameter and the name that records the parameter in
/// every block, and its constructor.
macro_rules! builtin_extractor {
    ($(#[$doc:meta])* $ty:ident($param:ident: $param_ty:ty), $new_doc:literal, $name:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $ty {
            $param: $param_ty,
            name: String,
        }

        impl $ty {
            #[doc = $new_doc]
            #[must_use]
            pub fn new($param: $param_ty) -> Self {
                $ty {
                    $param,
                    name: format!($name, $param),
                }
            }
        }
    };
}

builtin_extractor!(
    /// The first `len` bytes of every key; keys shorter than `len` are outside the domain (RocksDB's
    /// `NewFixedPrefixTransform`). Name: `sstfilter.fixed:<len>`.
    FixedPrefix(len: usize),
    "Prefixes of `len` bytes.",
    "sstfilter.fixed:{}"
);

impl PrefixExtractor for FixedPrefix {
    fn name(&self) -> &str {
        &self.name
    }
    fn prefix_len(&self, key: &[u8]) -> Option<usize> {
        (key.len() >= self.len).then_some(self.len)
    }
    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
        // Every extension of a scan at least `len` long starts with the same `len` bytes.
        (scan.len() >= self.len).then_some(self.len)
    }
}

builtin_extractor!(
    /// Everything up to and including the first occurrence of a delimiter byte (`/` for paths, `:` for
    /// `user:123`); keys without it are outside the domain. Name: `sstfilter.delimited:<byte as two hex digits>`.
    DelimitedPrefix(delimiter: u8),
    "Prefixes ending at the first `delimiter`.",
    "sstfilter.delimited:{:02x}"
);

impl PrefixExtractor for DelimitedPrefix {
    fn name(&self) -> &str {
        &self.name
    }
    fn prefix_len(&self, key: &[u8]) -> Option<usize> {
        key.iter()
            .position(|&b| b == self.delimiter)
            .map(|at| at + 1)
    }
    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
        // A scan holding the delimiter fixes the first one for every extension; one without it does not.
        self.prefix_len(scan)
    }
}

builtin_extractor!(
    /// The first `len` bytes of a key, or the whole key if it is shorter: every key is in the domain (RocksDB's
    /// `NewCappedPrefixTransform`). Name: `sstfilter.capped:<len>`.
    CappedPrefix(len: usize),
    "Prefixes of at most `len` bytes.",
    "sstfilter.capped:{}"
);

impl PrefixExtractor for CappedPrefix {
    fn name(&self) -> &str {
        &self.name
    }
    fn prefix_len(&self, key: &[u8]) -> Option<usize> {
        Some(key.len().min(self.len))
    }
    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
        // A shorter scan covers the key equal to it (prefix: all of it) and longer keys (prefix: `len` bytes).
        (scan.len() >= self.len).then_some(self.len)
    }
}

/// A prefix question, hashed once: which extractor it was extracted with, and the hash of the prefix. Made for a
/// prefix scan ([`for_scan`](Self::for_scan)) or for the point lookup of a key in a filter that holds prefixes
/// only ([`for_key`](Self::for_key)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PrefixProbe<'e> {
    extractor: &'e str,
    hash: KeyHash,
}

impl<'e> PrefixProbe<'e> {
    /// The probe for a scan over every key that starts with `scan`, or `None` when those keys do not share one
    /// stored prefix (the scan is shorter than the extracted prefix, or outside the domain): then no filter can
    /// rule a table out.
    pub(crate) fn for_scan(extractor: &'e dyn PrefixExtractor, scan: &[u8]) -> Option<Self> {
        let prefix = scan.get(..extractor.scan_prefix_len(scan)?)?;
        Some(PrefixProbe {
            extractor: extractor.name(),
            hash: key_hash(prefix),
        })
    }

    /// The probe for the point lookup of `key` through its prefix, or `None` outside the domain.
    pub(crate) fn for_key(extractor: &'e dyn PrefixExtractor, key: &[u8]) -> Option<Self> {
        Some(PrefixProbe {
            extractor: extractor.name(),
            hash: key_hash(extractor.prefix(key)?),
        })
    }

    /// The name of the extractor the prefix was extracted with.
    pub(crate) fn extractor_name(&self) -> &'e str {
        self.extractor
    }

    /// The hash of the prefix.
    pub(crate) fn hash(&self) -> KeyHash {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the trait's contract for `extractor` on every key and scan over a small alphabet (all strings of up
    /// to 5 bytes from `alphabet`): a scan that determines a prefix length must give it to every extension.
    fn check_contract(extractor: &dyn PrefixExtractor, alphabet: &[u8]) {
        let mut strings: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=5 {
            let longer: Vec<Vec<u8>> = strings
                .iter()
                .filter(|s| s.len() == len - 1)
                .flat_map(|s| {
                    alphabet.iter().map(move |&b| {
                        let mut t = s.clone();
                        t.push(b);
                        t
                    })
                })
                .collect();
            strings.extend(longer);
        }
        for key in &strings {
            if let Some(n) = extractor.prefix_len(key) {
                assert!(n <= key.len(), "{}: {key:?}", extractor.name());
            }
        }
        for scan in &strings {
            let Some(n) = extractor.scan_prefix_len(scan) else {
                continue;
            };
            assert!(n <= scan.len());
            for key in strings.iter().filter(|k| k.starts_with(scan)) {
                assert_eq!(
                    extractor.prefix_len(key),
                    Some(n),
                    "{}: scan {scan:?}, key {key:?}",
                    extractor.name()
                );
            }
        }
    }

    #[test]
    fn built_in_extractors_keep_the_contract_on_every_short_string() {
        for len in 0..=4 {
            check_contract(&FixedPrefix::new(len), b"ab:");
            check_contract(&CappedPrefix::new(len), b"ab:");
        }
        check_contract(&DelimitedPrefix::new(b':'), b"ab:");
        check_contract(&DelimitedPrefix::new(0), &[0, 1, 255]);
    }

    #[test]
    fn names_carry_the_parameters_and_prefixes_are_what_they_say() {
        assert_eq!(FixedPrefix::new(4).name(), "sstfilter.fixed:4");
        assert_eq!(DelimitedPrefix::new(b'/').name(), "sstfilter.delimited:2f");
        assert_eq!(CappedPrefix::new(16).name(), "sstfilter.capped:16");
        let fixed = FixedPrefix::new(4);
        assert_eq!(fixed.prefix(b"usr:1"), Some(&b"usr:"[..]));
        assert_eq!(fixed.prefix(b"usr"), None);
        assert!(fixed.prefix_len(b"").is_none());
        let delimited = DelimitedPrefix::new(b'/');
        assert_eq!(delimited.prefix(b"a/b/c"), Some(&b"a/"[..]));
        assert_eq!(delimited.prefix(b"abc"), None);
        let capped = CappedPrefix::new(3);
        assert_eq!(capped.prefix(b"ab"), Some(&b"ab"[..]));
        assert_eq!(capped.prefix(b""), Some(&b""[..]));
        assert_eq!(capped.scan_prefix_len(b"ab"), None);
    }

    #[test]
    fn probes_are_made_only_where_the_scan_determines_the_prefix() {
        let fixed = FixedPrefix::new(4);
        assert!(PrefixProbe::for_scan(&fixed, b"usr").is_none());
        let probe = PrefixProbe::for_scan(&fixed, b"usr:12").unwrap();
        assert_eq!(probe.hash(), key_hash(b"usr:"));
        assert_eq!(probe.extractor_name(), "sstfilter.fixed:4");
        assert_eq!(
            PrefixProbe::for_key(&fixed, b"usr:99").unwrap().hash(),
            key_hash(b"usr:")
        );
        assert!(PrefixProbe::for_key(&fixed, b"us").is_none());
    }
}
