//! How the subcommands fail: one error type, a way to say what was being done and on which path, and the one
//! failure that is no error (the reader of stdout went away).

use std::fmt::Display;
use std::io;

/// Errors are reported as one line on stderr and exit code 1.
pub(crate) type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Puts what was being done, and on which path, in front of an error: "cannot create table 000001.sst: ...".
pub(crate) trait Context<T> {
    fn context(self, doing: impl FnOnce() -> String) -> CliResult<T>;
}

impl<T, E: Display> Context<T> for Result<T, E> {
    fn context(self, doing: impl FnOnce() -> String) -> CliResult<T> {
        self.map_err(|e| format!("{}: {e}", doing()).into())
    }
}

/// Whether `error` is a write to stdout that failed because its reader closed the pipe (`sstfilter calc | head`):
/// the normal end of a run whose reader has seen enough, as for any Unix tool. Only writes to stdout return a
/// bare `io::Error`: every file operation goes through [`Context`], which turns its error into text.
pub(crate) fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    error
        .downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
