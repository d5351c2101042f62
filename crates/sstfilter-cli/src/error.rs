//! How the subcommands fail.

/// Errors are reported as one line on stderr and exit code 1.
pub(crate) type CliResult<T> = Result<T, Box<dyn std::error::Error>>;
