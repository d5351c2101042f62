//! The table filter: every filter a table needs, from one options value, one builder and one reader.
//!
//! A store describes what a table's filter holds in [`TableFilterOptions`] (a point policy; optionally a prefix
//! extractor, with or without whole keys; optionally a range policy; one block or partitions), feeds each key once,
//! in table order, to a [`TableFilterBuilder`], and stores the blocks it gives back ([`TableFilterBlocks::write`]),
//! keeping where the two entry points went. A reader opens them as a [`TableFilter`], which answers a key, a prefix
//! scan or a range scan with one [`Answer`](crate::Answer), loads partitions through the store's
//! [`PartitionLoader`](crate::PartitionLoader) (verified), and keeps the fail-open rule and the counting in one
//! place.
//!
//! Underneath are the low-level builders and readers ([`FilterBlockBuilder`](crate::FilterBlockBuilder) and
//! [`FilterBlock`](crate::FilterBlock), [`PartitionedFilterBuilder`](crate::PartitionedFilterBuilder) and
//! [`PartitionedFilter`](crate::PartitionedFilter), [`RangeFilterBuilder`](crate::RangeFilterBuilder)), for
//! engines that assemble their own. FORMAT.md section 9 says how a table filter's blocks relate.

mod builder;
mod options;
mod reader;

pub use builder::{
    BlockLocation, TableFilterBlocks, TableFilterBuilder, TableFilterLocations, TableFilterPart,
};
pub use options::TableFilterOptions;
pub use reader::{KeyProbe, NoPartitions, PointFilter, TableFilter};
