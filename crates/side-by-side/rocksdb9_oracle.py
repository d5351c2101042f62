#!/usr/bin/env python3
"""RocksDB 9's own tables and answers, for tests/rocksdb9.rs: writes SST files with RocksDB's SstFileWriter and asks
RocksDB about keys on a DB that ingested each file, through the `rocksdict` package (pip install rocksdict: RocksDB
9.8.4 inside Python), so that the tests can check ours against what RocksDB wrote and answered.

Usage: rocksdb9_oracle.py version > output
       rocksdb9_oracle.py tables < input > output

version: prints the RocksDB version rocksdict runs (from the OPTIONS file RocksDB writes for a new DB).

tables: for each job of the input, writes the job's SST file from its keys (each key its own value, in the order
given, which must be RocksDB's), ingests a copy into a new DB and asks RocksDB about each probe key. Settings are
RocksDB's own option names, `cf:NAME=VALUE` for a column family option and `table:NAME=VALUE` for a block-based table
option (`table:filter_policy=ribbonfilter:10`, `cf:prefix_extractor=rocksdb.FixedPrefix.5`); the rest are RocksDB's
defaults but for compression, which is off. rocksdict's Python API lacks most table options (Ribbon filters,
whole_key_filtering, optimize_filters_for_memory, prefix extractors other than fixed ones), so they are set the way
RocksDB itself loads options: an OPTIONS file, read with `Options.load_latest`.

  input:  u32 job count, then per job: the SST path (u32 length, UTF-8 bytes), the settings (u32 count, each u32
          length and bytes), the keys (u32 count, each u32 length and bytes), the probe keys (the same).
  output: per job, three bytes per probe key: RocksDB's `key_may_exist` (0 or 1, asked before any other question:
          where the table's filter was asked, it answers as the filter did, but for keys of the table's first and last
          data blocks, which ingestion left in the block cache, where it looks for the key); then what the table's
          filter answered for a Get, and for a prefix seek (an iterator with `prefix_same_as_start`) to the key: 0 no
          match, 1 may match, 2 not asked (the key outside the table's range, outside the prefix extractor's domain,
          or no prefix extractor for a seek). The filter's answers are read from RocksDB's statistics, one dump
          before and after each question.
  Every integer is little-endian.
"""

import os
import re
import shutil
import struct
import sys
import tempfile

import rocksdict
from rocksdict import IngestExternalFileOptions, Options, Rdict, ReadOptions, SstFileWriter

# The statistics that count a table filter's answers: for a Get of a whole key, of a prefix, and for a seek.
STATS = re.compile(
    rb"^rocksdb\.(bloom\.filter\.(?:useful|full\.positive|prefix\.checked|prefix\.useful)"
    rb"|(?:non\.)?last\.level\.seek\.(?:filtered|filter\.match)) COUNT : (\d+)",
    re.M,
)


def read_exact(n):
    data = sys.stdin.buffer.read(n)
    if len(data) != n:
        raise SystemExit("rocksdb9_oracle: truncated input")
    return data


def read_u32():
    return struct.unpack("<I", read_exact(4))[0]


def read_list():
    return [read_exact(read_u32()) for _ in range(read_u32())]


def options_file(settings):
    """An OPTIONS file of RocksDB's format setting `settings` (bytes `section:name=value`)."""
    sections = {b"cf": [b"compression=kNoCompression"], b"table": []}
    for setting in settings:
        section, _, assignment = setting.partition(b":")
        if section not in sections or b"=" not in assignment:
            raise SystemExit("rocksdb9_oracle: bad setting %r" % setting)
        sections[section].append(assignment)
    lines = [b"[Version]", b"  options_file_version=1.1", b"[DBOptions]", b"  create_if_missing=true"]
    lines.append(b'[CFOptions "default"]')
    lines += [b"  " + s for s in sections[b"cf"]]
    lines.append(b'[TableOptions/BlockBasedTable "default"]')
    lines += [b"  " + s for s in sections[b"table"]]
    return b"\n".join(lines) + b"\n"


def load_options(settings, scratch):
    """The column family options `settings` give, as RocksDB loads them from an OPTIONS file."""
    directory = tempfile.mkdtemp(dir=scratch)
    with open(os.path.join(directory, "OPTIONS-000001"), "wb") as f:
        f.write(options_file(settings))
    _, families = Options.load_latest(directory)
    return families["default"]


def filter_answer(before, after, no, may):
    """0 where the statistic `no` grew, 1 where only `may` did, 2 where neither (the filter was not asked)."""
    if any(after.get(k, 0) > before.get(k, 0) for k in no):
        return 0
    if any(after.get(k, 0) > before.get(k, 0) for k in may):
        return 1
    return 2


def run_job(path, settings, keys, probes, scratch):
    options = load_options(settings, scratch)
    writer = SstFileWriter(options)
    writer.open(path)
    for key in keys:
        writer[key] = key
    writer.finish()

    options.create_if_missing(True)
    options.enable_statistics()
    db_dir = tempfile.mkdtemp(dir=scratch)
    db = Rdict(os.path.join(db_dir, "db"), options)
    ingest = IngestExternalFileOptions()
    ingest.set_move_files(False)
    db.ingest_external_file([path], ingest)

    def stats():
        return {m.group(1): int(m.group(2)) for m in STATS.finditer(options.get_statistics().encode())}

    # key_may_exist first: it reads no block, and answers "may exist" where the filter does, unless the key's data
    # block is in the block cache (only the table's first and last are, which ingestion read): there it looks.
    out = bytearray()
    may_exist = [db.key_may_exist(probe) for probe in probes]
    seek_options = ReadOptions()
    seek_options.set_prefix_same_as_start(True)

    def seek(probe):
        iterator = db.iter(seek_options)
        iterator.seek(probe)

    # Each question, and the statistics that grow where the filter answers no match, and may match.
    questions = [
        (db.get, [b"bloom.filter.useful", b"bloom.filter.prefix.useful"],
         [b"bloom.filter.full.positive", b"bloom.filter.prefix.checked"]),
        (seek, [b"last.level.seek.filtered", b"non.last.level.seek.filtered"],
         [b"last.level.seek.filter.match", b"non.last.level.seek.filter.match"]),
    ]
    before = stats()
    for probe, exists in zip(probes, may_exist):
        out.append(1 if exists else 0)
        for ask, no, may in questions:
            ask(probe)
            after = stats()
            out.append(filter_answer(before, after, no, may))
            before = after
    db.close()
    shutil.rmtree(db_dir)
    return bytes(out)


def version(scratch):
    directory = os.path.join(scratch, "version")
    Rdict(directory).close()
    for name in sorted(os.listdir(directory)):
        if name.startswith("OPTIONS-"):
            with open(os.path.join(directory, name)) as f:
                for line in f:
                    if line.strip().startswith("rocksdb_version="):
                        return line.strip().split("=", 1)[1]
    raise SystemExit("rocksdb9_oracle: no rocksdb_version in the OPTIONS file")


def main():
    scratch = tempfile.mkdtemp(prefix="rocksdb9_oracle")
    try:
        if sys.argv[1:] == ["version"]:
            print(version(scratch))
        elif sys.argv[1:] == ["tables"]:
            for _ in range(read_u32()):
                path = read_exact(read_u32()).decode()
                settings, keys, probes = read_list(), read_list(), read_list()
                sys.stdout.buffer.write(run_job(path, settings, keys, probes, scratch))
                sys.stdout.buffer.flush()
        else:
            raise SystemExit("usage: rocksdb9_oracle.py version | tables < input")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
