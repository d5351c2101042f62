//! What both policies hand SlateDB: a builder fed the SST's keys through sstfilter's [`TableFilterBuilder`], and
//! a filter that is a [`TableFilter`] of one block. Every answer, count and fail-open rule is the table filter's;
//! this module only translates SlateDB's questions into it.

use std::sync::Arc;

use ::slatedb::bytes::BufMut;
use ::slatedb::{Filter, FilterBuilder, FilterQuery, FilterTarget, RowEntry};

use sstfilter::{
    AlignedBlock, Answer, FilterStats, KeyProbe, NoPartitions, Reason, TableFilter,
    TableFilterBuilder, TableFilterOptions, UsageError,
};

/// Which block of a table filter a policy stores in SlateDB's filter slot.
#[derive(Clone, Copy)]
pub(crate) enum Part {
    /// The point filter (with the prefixes, if any).
    Point,
    /// The range filter.
    Range,
}

/// What a policy's filters hold, and how to ask them: everything the builder and the filters need.
#[derive(Clone)]
pub(crate) struct Layout {
    pub(crate) options: TableFilterOptions,
    pub(crate) part: Part,
    pub(crate) stats: FilterStats,
}

impl Layout {
    /// A builder of this layout's filters. SlateDB makes one per SST, so nothing is reused across SSTs here.
    pub(crate) fn builder(&self) -> SlateDbFilterBuilder {
        SlateDbFilterBuilder {
            builder: Ok(TableFilterBuilder::new(&self.options)),
            layout: self.clone(),
        }
    }

    /// The filter of `data`, a block of this layout as SlateDB stored it. One copy, into a buffer whose
    /// BlockedBloom blocks are each one cache line (SlateDB's bytes come at any alignment); the filter then lives
    /// in SlateDB's filter cache. Bytes that do not open make a filter that answers "may match" and keeps them.
    pub(crate) fn decode(&self, data: &[u8]) -> SlateDbFilter {
        let block = || Some(AlignedBlock::copy_from(data));
        let opened = match self.part {
            Part::Point => TableFilter::open(&self.options, block(), None),
            Part::Range => TableFilter::open(&self.options, None, block()),
        };
        // A valid block of the other part in this slot is not one this policy wrote: unusable, like bytes that do
        // not open.
        let filter = opened
            .ok()
            .filter(|filter| filter.point_error().is_none() && filter.range_error().is_none());
        SlateDbFilter {
            unusable: if filter.is_some() {
                Vec::new()
            } else {
                data.to_vec()
            },
            filter: filter.map(|filter| Arc::new(filter.with_stats(self.stats.clone()))),
            stats: self.stats.clone(),
        }
    }
}

/// Builds one SST's filter.
pub(crate) struct SlateDbFilterBuilder {
    /// The error that stopped the build (a key SlateDB gave out of order, one more key than a range policy keeps
    /// its rate for, options refused): the SST then gets a filter that answers "may match".
    builder: Result<TableFilterBuilder, UsageError>,
    layout: Layout,
}

impl FilterBuilder for SlateDbFilterBuilder {
    fn add_entry(&mut self, entry: &RowEntry) {
        if let Ok(builder) = &mut self.builder
            && let Err(e) = builder.add_key(&entry.key)
        {
            self.builder = Err(e);
        }
    }

    fn build(&mut self) -> Arc<dyn Filter> {
        let blocks = match &mut self.builder {
            Ok(builder) => builder.finish_and_reset().ok(),
            Err(_) => {
                self.builder = Ok(TableFilterBuilder::new(&self.layout.options));
                None
            }
        };
        let bytes = blocks.as_ref().and_then(|blocks| match self.layout.part {
            Part::Point => blocks.point_block(),
            Part::Range => blocks.range_block(),
        });
        // No bytes (the build failed) decode as an unusable filter: it answers "may match", never hides a key.
        Arc::new(self.layout.decode(bytes.unwrap_or_default()))
    }
}

/// One SST's filter in SlateDB.
#[derive(Clone)]
pub(crate) struct SlateDbFilter {
    /// The filter, when its bytes opened and verified.
    filter: Option<Arc<TableFilter<AlignedBlock>>>,
    /// The bytes of a filter that could not be used, kept so that re-encoding loses nothing (empty otherwise).
    unusable: Vec<u8>,
    /// Where an unusable filter's answers are counted (a usable one counts its own).
    stats: FilterStats,
}

impl SlateDbFilter {
    fn bytes(&self) -> &[u8] {
        let block = self
            .filter
            .as_ref()
            .and_then(|filter| filter.point_filter().or(filter.range_filter()));
        match block {
            Some(block) => block.as_bytes(),
            None => &self.unusable,
        }
    }
}

impl Filter for SlateDbFilter {
    /// The table filter's answer ("may match" unless it is certain, and counted in the policy's statistics).
    /// SlateDB asks every filter of an SST every question, so a point filter is asked about range scans and a
    /// range filter about point lookups: each answers what it can and counts the rest as unfiltered.
    fn might_match(&self, query: &FilterQuery) -> bool {
        let Some(filter) = &self.filter else {
            self.stats.record(Answer::MayContain(Reason::Unusable));
            return true;
        };
        let answer = match &query.target {
            FilterTarget::Point(key) => filter.may_contain(&KeyProbe::new(key), &NoPartitions),
            FilterTarget::Prefix(scan) => filter.may_contain_prefix(scan, &NoPartitions),
            FilterTarget::Range { lower, upper } => filter.may_contain_range(
                lower.as_ref().map(|b| &b[..]),
                upper.as_ref().map(|b| &b[..]),
                &NoPartitions,
            ),
        };
        answer.must_read()
    }

    fn encode(&self, writer: &mut dyn BufMut) {
        writer.put_slice(self.bytes());
    }

    fn size(&self) -> usize {
        self.bytes().len()
    }

    fn clamp_allocated_size(&self) -> Arc<dyn Filter> {
        // The block's buffer is allocated once at its size (plus alignment); nothing to trim.
        Arc::new(self.clone())
    }
}
