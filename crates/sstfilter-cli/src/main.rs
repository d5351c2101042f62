//! `sstfilter`: see what SST filter blocks save on real table files (`demo`), explain a block or table file
//! (`inspect`), and size filters from the formulas (`calc`).
//!
//! A thin layer over the library: argument parsing, progress bars and printing live here; tables, filters and
//! sizing formulas live in `sstfilter`.

// Like the library: no panics on any input, exceptions only with a reason.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

mod args;
mod calc;
mod configs;
mod demo;
mod error;
mod inspect;
mod keys;
mod lookup_demo;
mod lsm;
mod partition_demo;
mod plot;
mod prefix_demo;
mod progress;
mod range_demo;
mod text;

use std::io::{self, Write};
use std::process::ExitCode;

use args::Job;

fn main() -> ExitCode {
    let job = args::parse();
    // Every report goes through this handle, whose write errors are returned rather than panicking as
    // `println!` does, so that a closed pipe ends the run like any other error.
    let mut out = io::stdout().lock();
    let result = match job {
        Job::Demo(args) => demo::run(&mut out, &args),
        Job::Inspect(path) => inspect::run(&mut out, &path),
        Job::Calc(args) => calc::run(&mut out, &args),
    }
    .and_then(|()| Ok(out.flush()?));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output has gone (`sstfilter calc | head -1`): it has what it wanted, so this is the
        // normal end of the run, quiet and successful, as for other Unix tools.
        Err(e) if error::is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not `eprintln!`, which panics when stderr is closed too.
            let _ = writeln!(io::stderr(), "error: {e}");
            ExitCode::FAILURE
        }
    }
}
