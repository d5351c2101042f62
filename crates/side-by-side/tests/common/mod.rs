//! What the tests against RocksDB 7.8.3 share: the oracle program (`rocksdb_oracle.cc`, built once per test binary
//! with g++ against Debian's `librocksdb-dev`), its input format, and deterministic keys.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub use sstfilter_side_by_side::checks::Checks;
pub use sstfilter_side_by_side::{put_keys, splitmix64 as mix};

/// The oracle binary, built once per test binary, or why it cannot be built (for [`Checks::need`]).
pub fn oracle() -> Result<&'static Path, String> {
    static ORACLE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = ORACLE.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("rocksdb_oracle.cc");
        // One binary per test binary: the test binaries of this crate may build it at the same time.
        let exe = std::env::current_exe().ok();
        let name = exe.as_deref().and_then(Path::file_name).unwrap_or_default();
        let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("rocksdb_oracle-{}", name.display()));
        let status = Command::new("g++")
            .args(["-O2", "-std=c++17", "-o"])
            .arg(&out)
            .arg(source)
            .args(["-lrocksdb", "-lpthread"])
            .stderr(Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => Ok(out),
            Ok(_) => Err("no RocksDB 7.8.3: rocksdb_oracle.cc did not build \
                 (apt-get install g++ librocksdb-dev)"
                .into()),
            Err(e) => Err(format!(
                "no RocksDB 7.8.3: no g++ ({e}; apt-get install g++ librocksdb-dev)"
            )),
        }
    });
    built.as_deref().map_err(Clone::clone)
}

/// The oracle's output for `args` with `input` on its standard input (the oracle must have built).
pub fn run(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(oracle().expect("the oracle built"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success(), "rocksdb_oracle {args:?} failed");
    output.stdout
}
