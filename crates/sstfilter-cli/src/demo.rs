//! `sstfilter demo`: picks the directory the tables go in and runs the demo the mode names.

use std::io::Write;
use std::path::Path;

use crate::error::{CliResult, Context};
use crate::lsm::{DemoArgs, Mode, create_dir};
use crate::{lookup_demo, partition_demo, prefix_demo, range_demo};

pub(crate) fn run(out: &mut dyn Write, args: &DemoArgs) -> CliResult<()> {
    let temp;
    let root: &Path = match &args.dir {
        Some(dir) => {
            create_dir(dir)?;
            dir
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("sstfilter-demo-")
                .tempdir()
                .context(|| {
                    let parent = std::env::temp_dir();
                    format!(
                        "cannot create a temporary directory in {}",
                        parent.display()
                    )
                })?;
            temp.path()
        }
    };
    match args.mode {
        Mode::Lookups => lookup_demo::run(out, root, args),
        Mode::Prefix => prefix_demo::run(out, root, args.tables, args.bits_per_key),
        Mode::Partitioned => partition_demo::run(out, root, args),
        Mode::Range => range_demo::run(out, root, args.tables, args.keys, args.bits_per_key),
    }
}
