//! The rule for a test that checks us against a program outside the workspace (RocksDB 7.8.3 through `g++` and
//! Debian's `librocksdb-dev`, RocksDB 9 through the `rocksdict` Python package): under CI (`CI=true`, which
//! `.ci/run` exports) a missing program fails the test; elsewhere the check is skipped, counted, and the test's last
//! line of output says so, on the terminal even when the test passes and its output is captured.

use std::io::Write as _;

/// The checks of one test: each asks for what it needs with [`need`](Self::need); when the test ends, its last line
/// says how many ran and how many were skipped, and why.
///
/// ```
/// use sstfilter_side_by_side::checks::Checks;
///
/// let mut checks = Checks::new("example");
/// let found: Result<&str, String> = Ok("the oracle");
/// if let Some(oracle) = checks.need(found) {
///     // ... the check, against `oracle`
///     assert_eq!(oracle, "the oracle");
/// }
/// assert_eq!(checks.summary(), "example: 1 of 1 checks ran");
/// ```
#[derive(Debug)]
pub struct Checks {
    test: &'static str,
    /// A check that cannot run fails the test (under CI).
    strict: bool,
    ran: usize,
    /// Why each skipped check was skipped, in order.
    skipped: Vec<String>,
}

impl Checks {
    /// The checks of the test named `test`.
    #[must_use]
    pub fn new(test: &'static str) -> Self {
        Checks {
            test,
            strict: std::env::var("CI").is_ok_and(|v| v == "true"),
            ran: 0,
            skipped: Vec::new(),
        }
    }

    /// Counts a check that needs `found` (what it checks against, or why that is missing): `Some` to run it;
    /// `None` to skip it, outside CI.
    ///
    /// # Panics
    ///
    /// Under CI (`CI=true`), where `found` is an error: a check that cannot run fails there.
    #[track_caller]
    pub fn need<T>(&mut self, found: Result<T, String>) -> Option<T> {
        match found {
            Ok(found) => {
                self.ran += 1;
                Some(found)
            }
            Err(why) if self.strict => {
                panic!("{}: {why}; under CI=true every check must run", self.test)
            }
            Err(why) => {
                self.skipped.push(why);
                None
            }
        }
    }

    /// The test's last line: how many checks ran, or how many of them were skipped and why.
    #[must_use]
    pub fn summary(&self) -> String {
        let total = self.ran + self.skipped.len();
        if self.skipped.is_empty() {
            return format!("{}: {total} of {total} checks ran", self.test);
        }
        let mut reasons: Vec<&str> = self.skipped.iter().map(String::as_str).collect();
        reasons.dedup();
        format!(
            "{}: {} of {total} checks skipped: {}",
            self.test,
            self.skipped.len(),
            reasons.join("; ")
        )
    }
}

impl Drop for Checks {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        if self.skipped.is_empty() {
            eprintln!("{}", self.summary());
        } else {
            // Past the test harness's capture: a skip shows even where the test passes.
            let _ = writeln!(std::io::stderr(), "{}", self.summary());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(strict: bool) -> Checks {
        let mut checks = Checks::new("t");
        checks.strict = strict;
        checks
    }

    #[test]
    fn outside_ci_skipped_checks_are_counted_with_their_reasons() {
        let mut checks = checks(false);
        assert_eq!(checks.need::<u8>(Ok(1)), Some(1));
        assert_eq!(checks.summary(), "t: 1 of 1 checks ran");
        assert_eq!(checks.need::<u8>(Err("no a".into())), None);
        assert_eq!(checks.need::<u8>(Err("no a".into())), None);
        assert_eq!(checks.need::<u8>(Err("no b".into())), None);
        assert_eq!(checks.summary(), "t: 3 of 4 checks skipped: no a; no b");
        // Dropped, it would say so on the terminal, past the harness's capture: this test skipped nothing.
        std::mem::forget(checks);
    }

    #[test]
    fn under_ci_a_check_that_cannot_run_fails() {
        let mut strict = checks(true);
        assert_eq!(strict.need::<u8>(Ok(1)), Some(1));
        let missing = std::panic::catch_unwind(move || strict.need::<u8>(Err("no a".into())));
        assert!(missing.is_err());
    }
}
