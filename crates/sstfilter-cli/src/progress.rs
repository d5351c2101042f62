//! Progress bars for the long phases. indicatif draws them on stderr only when it is a terminal, so piped or
//! captured output stays clean.

use std::borrow::Cow;

use indicatif::{ProgressBar, ProgressStyle};

/// Items between two progress updates: frequent enough to look live, rare enough to cost nothing in the timed
/// loops.
const UPDATE_EVERY: u64 = 4096;

/// A bar for a phase of `len` items, labelled `message`; cleared when the phase ends.
pub(crate) fn bar(len: u64, message: impl Into<Cow<'static, str>>) -> ProgressBar {
    let style = ProgressStyle::with_template(
        "{msg:32} [{bar:30}] {human_pos}/{human_len} ({per_sec}, {eta} left)",
    )
    .map_or_else(
        |_| ProgressStyle::default_bar(),
        |s| s.progress_chars("=> "),
    );
    let bar = ProgressBar::new(len).with_style(style);
    bar.set_message(message);
    bar
}

/// Reports `done` items to the bar, every [`UPDATE_EVERY`] items.
pub(crate) fn tick(bar: &ProgressBar, done: u64) {
    if done.is_multiple_of(UPDATE_EVERY) {
        bar.set_position(done);
    }
}
