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
mod ldb;
mod lookup_demo;
mod lsm;
mod partition_demo;
mod plot;
mod prefix_demo;
mod progress;
mod range_demo;
mod text;

use std::process::ExitCode;

use args::Job;

fn main() -> ExitCode {
    let result = match args::parse() {
        Job::Demo(args) => demo::run(&args),
        Job::Inspect(path) => inspect::run(&path),
        Job::Calc(args) => calc::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
