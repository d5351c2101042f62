//! [`TableRecipe`]: a table filter in any combination of its options, built and checked through
//! `TableFilterBuilder` and `TableFilter`.

use arbitrary::Arbitrary;
use sstfilter::{
    Answer, KeyProbe, MAX_PREFIX_NAME_LEN, TableFilter, TableFilterBuilder, TableFilterOptions,
    UsageError, key_hash,
};

use crate::check::bounds_around;
use crate::options::{ByOffset, PARTITION_BYTES_SETTING, Partitioning, Prefixes};
use crate::recipe::{Constructed, RangeRecipe, Recipe};

/// A table filter's options, every one of them: a point filter (a [`Recipe`] that builds through a
/// `FilterPolicy`; the other recipes stand for none), prefixes, a range filter, partitions, and keys in any order.
/// Combinations the builder refuses are checked to be exactly the documented ones.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
pub struct TableRecipe {
    /// `TableFilterOptions::point`.
    pub point: Option<Recipe>,
    /// `TableFilterOptions::prefixes`.
    pub prefixes: Option<Prefixes>,
    /// `TableFilterOptions::range`.
    pub range: Option<RangeRecipe>,
    /// `TableFilterOptions::partitioned`, with `end_data_block` where the partitioning says.
    pub partitioning: Option<Partitioning>,
    /// `TableFilterOptions::any_key_order` (then the keys are added as given, not sorted).
    pub any_key_order: bool,
}

impl TableRecipe {
    /// The options (made for keys in any order, then set in the order of the fields), or `None` when a policy's
    /// constructor refused (checked
    /// against its documentation) or a setting was refused: each refusal is checked to be the one its setter
    /// documents, given the settings made before it.
    #[must_use]
    pub fn options(&self) -> Option<TableFilterOptions> {
        let what = format!("{self:?}");
        let refused = |setting: &str,
                       documented: &[(&str, bool)],
                       result: Result<_, UsageError>| {
            let reasons: Vec<&str> = documented
                .iter()
                .filter_map(|&(reason, applies)| applies.then_some(reason))
                .collect();
            match result {
                Ok(options) => {
                    assert!(
                        reasons.is_empty(),
                        "{what}: {setting} accepted, but {reasons:?}"
                    );
                    Some(options)
                }
                Err(e) => {
                    // A setting breaking several rules is refused for any one of them.
                    assert!(
                        matches!(&e, UsageError::InvalidSetting { setting, .. } if reasons.contains(setting)),
                        "{what}: {setting} refused with {e:?}, documented: {reasons:?}"
                    );
                    None
                }
            }
        };
        let mut options = if self.any_key_order {
            TableFilterOptions::any_key_order()
        } else {
            TableFilterOptions::new()
        };
        if let Some(point) = self.point
            && let Constructed::Policy(policy) = point.construct()?
        {
            options = options.point(policy);
        }
        let point = options_have_point(self);
        if let Some(prefixes) = self.prefixes {
            let extractor = prefixes.extractor.get();
            let long_name = extractor.name().len() > MAX_PREFIX_NAME_LEN;
            let documented = [
                ("TableFilterOptions::prefixes", !point),
                ("prefix extractor name", point && long_name),
            ];
            let result = options.prefixes(extractor, prefixes.whole_keys);
            options = refused("prefixes", &documented, result)?;
        }
        if let Some(range) = self.range {
            let documented = [("TableFilterOptions::range", self.any_key_order)];
            options = refused("range", &documented, options.range(range.policy()?))?;
        }
        if let Some(partitioning) = self.partitioning {
            let documented = [
                (
                    "TableFilterOptions::partitioned",
                    !point || self.any_key_order,
                ),
                (
                    PARTITION_BYTES_SETTING,
                    point && !self.any_key_order && partitioning.partition_bytes == 0,
                ),
            ];
            let result = options.partitioned(
                usize::from(partitioning.partition_bytes),
                partitioning.cuts(),
            );
            options = refused("partitioned", &documented, result)?;
        }
        Some(options)
    }

    /// Builds `keys` (sorted first, unless in any order) into a table filter, stores its blocks, opens it and
    /// checks that nothing is lost: every key by key, by hash and by its prefix; every scan over a prefix of a key,
    /// with the extractor and without; every range that holds a key, with every kind of bound from its
    /// neighbours; through a loader of raw bytes; and again with each block damaged. A builder that refuses the
    /// options, or a key, must do so exactly where the documentation says. `None` when something was refused.
    #[must_use]
    pub fn check(&self, keys: &[Vec<u8>]) -> Option<()> {
        let what = format!("{self:?}, {} keys", keys.len());
        let options = self.options()?;
        let mut builder = TableFilterBuilder::new(&options);
        let mut keys = keys.to_vec();
        if !self.any_key_order {
            keys.sort();
        }
        let per_block = self
            .partitioning
            .map_or(usize::MAX, |p| usize::from(p.keys_per_data_block) + 1);
        for (i, key) in keys.iter().enumerate() {
            if let Err(e) = builder.add_key(key) {
                // Only a range policy's key limit refuses a key given in order.
                let limit = options_range_limit(self)?;
                assert_eq!(
                    e,
                    UsageError::TooManyKeys {
                        expected: limit,
                        found: limit + 1
                    },
                    "{what}"
                );
                assert_eq!(builder.len(), limit, "{what}: refused before the limit");
                return None;
            }
            if (i + 1) % per_block == 0 {
                builder.end_data_block();
            }
        }
        builder.end_data_block(); // a table ends its last data block
        let blocks = builder
            .finish_and_reset()
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(builder.is_empty(), "{what}: the builder is reset");
        let mut store: Vec<Vec<u8>> = Vec::new();
        let locations = blocks
            .write(|_, bytes| {
                store.push(bytes.to_vec());
                Ok(store.len() as u64 - 1)
            })
            .unwrap_or_else(|e| panic!("{what}: an in-memory store failed: {e}"));
        let at = |location: Option<sstfilter::BlockLocation>| location.map(|l| l.offset as usize);
        let (point, range) = (at(locations.point), at(locations.range));
        self.assert_answers(&what, &store, point, range, &keys, &options);
        // Damaged: each block in turn with one byte changed (the CRC or the checks catch it, and the filter answers
        // "may contain"; a change they cannot see would still have to keep every key).
        for i in 0..store.len() {
            let mut damaged = store.clone();
            if let Some(byte) = damaged[i].get_mut(i * 7 % store[i].len().max(1)) {
                *byte ^= 0x10;
            }
            self.assert_answers(&what, &damaged, point, range, &keys, &options);
        }
        Some(())
    }

    fn assert_answers(
        &self,
        what: &str,
        store: &[Vec<u8>],
        point: Option<usize>,
        range: Option<usize>,
        keys: &[Vec<u8>],
        options: &TableFilterOptions,
    ) {
        let blocks: Vec<&[u8]> = store.iter().map(Vec::as_slice).collect();
        let loader = ByOffset(&blocks);
        let filter = TableFilter::open(options, point.map(|p| blocks[p]), range.map(|r| blocks[r]))
            .unwrap_or_else(|e| panic!("{what}: the blocks written are refused: {e}"));
        // The same blocks read by a store that gives no extractor: prefix questions go to the range filter alone.
        let plain = TableFilter::open(
            &TableFilterOptions::new(),
            point.map(|p| blocks[p]),
            range.map(|r| blocks[r]),
        )
        .unwrap_or_else(|e| panic!("{what}: the blocks written are refused: {e}"));
        let lost = |question: &str, answer: Answer| {
            assert_ne!(answer, Answer::Absent, "{what}: {question} lost a key");
        };
        let mut sorted = keys.to_vec();
        sorted.sort();
        sorted.dedup();
        for (i, key) in sorted.iter().enumerate() {
            lost(
                &format!("{key:?}"),
                filter.may_contain(&KeyProbe::new(key), &loader),
            );
            lost(
                &format!("{key:?} by hash"),
                filter.may_contain(&KeyProbe::with_hash(key, key_hash(key)), &loader),
            );
            lost(
                &format!("{key:?} without extractor"),
                plain.may_contain(&KeyProbe::new(key), &loader),
            );
            for end in 0..=key.len().min(12) {
                let scan = &key[..end];
                lost(
                    &format!("scan {scan:?}"),
                    filter.may_contain_prefix(scan, &loader),
                );
                lost(
                    &format!("scan {scan:?} without extractor"),
                    plain.may_contain_prefix(scan, &loader),
                );
            }
            let (lowers, uppers) = bounds_around(&sorted, i);
            let ranges: Vec<_> = lowers
                .iter()
                .flat_map(|&lower| uppers.iter().map(move |&upper| (lower, upper)))
                .collect();
            let mut batch = vec![Answer::Absent; ranges.len()];
            filter.may_contain_range_batch(&ranges, &loader, &mut batch);
            for (&(lower, upper), batched) in ranges.iter().zip(batch) {
                let single = filter.may_contain_range(lower, upper, &loader);
                assert_eq!(
                    batched, single,
                    "{what}: the batch answers {lower:?}..{upper:?} otherwise"
                );
                lost(&format!("{lower:?}..{upper:?}"), single);
            }
        }
    }
}

/// Whether the recipe's point filter is one (a recipe that builds through a `FilterPolicy`).
fn options_have_point(recipe: &TableRecipe) -> bool {
    recipe
        .point
        .and_then(|p| p.construct())
        .is_some_and(|c| matches!(c, Constructed::Policy(_)))
}

/// The key limit of the recipe's range policy, if it has one.
fn options_range_limit(recipe: &TableRecipe) -> Option<u64> {
    Some(recipe.range?.policy()?.max_keys())
}
