//! A valid block with arbitrary edits (bit flips, truncation, splices, overwrites, trailer fields, even a
//! recomputed checksum): `open`/`verify` reject it, or it answers every query without panicking; and a block
//! whose bytes end up unchanged still finds every key.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sstfilter::{FilterBlock, TRAILER_LEN};
use sstfilter_recipes::{Prefixes, Recipe};

#[derive(Arbitrary, Debug)]
enum Edit {
    FlipBit(u32),
    Truncate(u32),
    Splice {
        at: u32,
        bytes: Vec<u8>,
    },
    Overwrite {
        at: u32,
        bytes: Vec<u8>,
    },
    /// Overwrite a trailer field (index into magic, version, kind, flags, params, key count, CRC) with a value.
    TrailerField {
        field: u8,
        value: u64,
    },
    /// Recompute the CRC so that only the structure checks stand between the edits and the probes.
    FixChecksum,
}

#[derive(Arbitrary, Debug)]
struct Input {
    recipe: Recipe,
    prefixes: Option<Prefixes>,
    keys: Vec<Vec<u8>>,
    edits: Vec<Edit>,
}

/// (offset from the trailer's start, width) of each trailer field, as in FORMAT.md. (The prefix section before
/// the trailer is reached by the other edits.)
const FIELDS: [(usize, usize); 7] = [(0, 4), (4, 1), (5, 1), (6, 2), (8, 16), (24, 8), (32, 4)];

fn apply(block: &mut Vec<u8>, edit: &Edit) {
    let len = block.len();
    let at = |x: u32| if len == 0 { 0 } else { x as usize % len };
    match edit {
        Edit::FlipBit(bit) if len > 0 => {
            let bit = *bit as usize % (len * 8);
            block[bit / 8] ^= 1 << (bit % 8);
        }
        Edit::Truncate(to) => block.truncate(*to as usize % (len + 1)),
        Edit::Splice { at: x, bytes } => {
            let x = at(*x);
            block.splice(x..x, bytes.iter().copied());
        }
        Edit::Overwrite { at: x, bytes } => {
            let x = at(*x);
            for (dst, src) in block[x..].iter_mut().zip(bytes) {
                *dst = *src;
            }
        }
        Edit::TrailerField { field, value } if len >= TRAILER_LEN => {
            let (offset, width) = FIELDS[usize::from(*field) % FIELDS.len()];
            let start = len - TRAILER_LEN + offset;
            let bytes = value.to_le_bytes();
            for (i, dst) in block[start..start + width].iter_mut().enumerate() {
                *dst = bytes[i % 8];
            }
        }
        Edit::FixChecksum if len >= 4 => {
            let crc = crc32fast::hash(&block[..len - 4]);
            block[len - 4..].copy_from_slice(&crc.to_le_bytes());
        }
        _ => {}
    }
}

fuzz_target!(|input: Input| {
    // The first block the recipe builds (the only one but for a scalable filter, whose first stage it is; none
    // for a refused recipe or LevelDB's layout).
    let Some(blocks) = input.recipe.build(&input.keys, input.prefixes) else {
        return;
    };
    let Some(original) = blocks.first().cloned() else {
        return;
    };
    let mut block = original.clone();
    for edit in input.edits.iter().take(16) {
        apply(&mut block, edit);
    }
    // Structure only: the queries of a damaged block must stay in bounds even when it is opened without its CRC.
    let verified = FilterBlock::open(&block[..]);
    let Ok(filter) = FilterBlock::open_unverified(&block[..]) else {
        assert!(verified.is_err());
        return;
    };
    assert_eq!(verified.is_ok(), filter.verify().is_ok());
    sstfilter_fuzz::exercise(&filter, &block);
    if block == original {
        assert!(verified.is_ok());
        // A key is in one of a scalable filter's stages: all are in the block when it is the only one.
        let single_block = blocks.len() == 1;
        for key in input.keys.iter().filter(|_| single_block) {
            assert!(
                filter.may_contain(key),
                "lost key {key:?} from an unchanged block"
            );
        }
    }
});
