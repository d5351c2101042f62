//! How the subcommands fail: one error type, and the one failure that is no error (the reader of stdout went
//! away).

use std::io;

/// Errors are reported as one line on stderr and exit code 1.
pub(crate) type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Whether `error` is a write to stdout that failed because its reader closed the pipe (`sstfilter calc | head`):
/// the normal end of a run whose reader has seen enough, as for any Unix tool.
pub(crate) fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    error
        .downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
