//! What the tests against RocksDB share: the oracle program (`rocksdb_oracle.cc`, built once per test binary with
//! g++ against Debian's `librocksdb-dev`), its input format, and deterministic keys.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The oracle binary, built once per test binary; `None` (with the reason printed) where it cannot be built.
pub fn oracle() -> Option<&'static Path> {
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
            Ok(_) => Err(
                "rocksdb_oracle.cc did not build (needs RocksDB 7.8.3's headers and library)"
                    .into(),
            ),
            Err(e) => Err(format!("no g++ ({e})")),
        }
    });
    match built {
        Ok(path) => Some(path),
        Err(why) => {
            eprintln!(
                "skipped, RocksDB not available: {why}; apt-get install g++ librocksdb-dev (RocksDB 7.8.3)"
            );
            None
        }
    }
}

/// Appends `keys` in the oracle's input format: u32 count, then u32 length and bytes per key (little-endian).
pub fn put_keys(input: &mut Vec<u8>, keys: &[Vec<u8>]) {
    input.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for k in keys {
        input.extend_from_slice(&(k.len() as u32).to_le_bytes());
        input.extend_from_slice(k);
    }
}

/// The oracle's output for `args` with `input` on its standard input (the oracle must have built).
pub fn run(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(oracle().unwrap())
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

/// splitmix64: deterministic keys, the same in every run.
pub fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
