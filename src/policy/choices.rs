//! What each built-in policy chooses, pinned: kind, probe count and size for BlockedBloom and StandardBloom, the
//! whole plan (columns, upper blocks, blocks, shards, slots) for Ribbon. These are the writer's tuning, not the
//! format (`tests/golden.rs` pins the format from explicit parameters): a deliberate retuning updates this table
//! in the same commit and says why, and any other change here is a bug.

use crate::{BlockedBloomPolicy, FilterPlan, FilterPolicy, RibbonPolicy, StandardBloomPolicy};

/// A plan in one line.
fn describe(plan: &FilterPlan) -> String {
    match plan {
        FilterPlan::BlockedBloom(p) => {
            format!("BlockedBloom k{} blocks{}", p.num_probes(), p.num_blocks())
        }
        FilterPlan::StandardBloom(p) => {
            format!("StandardBloom k{} bits{}", p.num_probes(), p.num_bits())
        }
        FilterPlan::Ribbon { plan: p, .. } => format!(
            "Ribbon r{} upper{} blocks{} shards{} slots{}",
            p.lower_columns(),
            p.upper_start_block(),
            p.num_blocks(),
            p.num_shards(),
            p.total_slots()
        ),
    }
}

fn choices() -> Vec<String> {
    let mut out = Vec::new();
    let counts = [0usize, 1, 100, 1000, 100_000, 1_000_000];
    for bits in [1.0, 4.5, 10.0, 16.0, 32.0, 100.0] {
        for n in counts {
            out.push(format!(
                "BlockedBloomPolicy({bits}) n{n}: {}",
                describe(&BlockedBloomPolicy::new(bits).unwrap().plan(n))
            ));
            out.push(format!(
                "StandardBloomPolicy({bits}) n{n}: {}",
                describe(&StandardBloomPolicy::new(bits).unwrap().plan(n))
            ));
            out.push(format!(
                "RibbonPolicy::new({bits}) n{n}: {}",
                RibbonPolicy::new(bits).map_or("refused".to_owned(), |p| describe(&p.plan(n)))
            ));
        }
    }
    for exponent in [1.0f64, 6.7, 9.75, 16.0, 24.5, 27.0, 32.0, 40.0] {
        for n in counts {
            let policy = RibbonPolicy::with_fpr((-exponent).exp2());
            out.push(format!(
                "RibbonPolicy::with_fpr(2^-{exponent}) n{n}: {}",
                policy.map_or("refused".to_owned(), |p| describe(&p.plan(n)))
            ));
        }
    }
    out
}

/// The choices as of the last deliberate tuning.
const PINNED: &[&str] = &[
    "BlockedBloomPolicy(1) n0: BlockedBloom k1 blocks0",
    "StandardBloomPolicy(1) n0: StandardBloom k1 bits64",
    "RibbonPolicy::new(1) n0: BlockedBloom k1 blocks0",
    "BlockedBloomPolicy(1) n1: BlockedBloom k1 blocks1",
    "StandardBloomPolicy(1) n1: StandardBloom k1 bits64",
    "RibbonPolicy::new(1) n1: Ribbon r1 upper2 blocks2 shards1 slots128",
    "BlockedBloomPolicy(1) n100: BlockedBloom k1 blocks1",
    "StandardBloomPolicy(1) n100: StandardBloom k1 bits128",
    "RibbonPolicy::new(1) n100: Ribbon r1 upper2 blocks2 shards1 slots128",
    "BlockedBloomPolicy(1) n1000: BlockedBloom k1 blocks2",
    "StandardBloomPolicy(1) n1000: StandardBloom k1 bits1024",
    "RibbonPolicy::new(1) n1000: BlockedBloom k1 blocks2",
    "BlockedBloomPolicy(1) n100000: BlockedBloom k1 blocks196",
    "StandardBloomPolicy(1) n100000: StandardBloom k1 bits100032",
    "RibbonPolicy::new(1) n100000: BlockedBloom k1 blocks196",
    "BlockedBloomPolicy(1) n1000000: BlockedBloom k1 blocks1954",
    "StandardBloomPolicy(1) n1000000: StandardBloom k1 bits1000000",
    "RibbonPolicy::new(1) n1000000: BlockedBloom k1 blocks1954",
    "BlockedBloomPolicy(4.5) n0: BlockedBloom k3 blocks0",
    "StandardBloomPolicy(4.5) n0: StandardBloom k3 bits64",
    "RibbonPolicy::new(4.5) n0: BlockedBloom k3 blocks0",
    "BlockedBloomPolicy(4.5) n1: BlockedBloom k3 blocks1",
    "StandardBloomPolicy(4.5) n1: StandardBloom k3 bits64",
    "RibbonPolicy::new(4.5) n1: Ribbon r3 upper2 blocks2 shards1 slots128",
    "BlockedBloomPolicy(4.5) n100: BlockedBloom k3 blocks1",
    "StandardBloomPolicy(4.5) n100: StandardBloom k3 bits512",
    "RibbonPolicy::new(4.5) n100: Ribbon r3 upper2 blocks2 shards1 slots128",
    "BlockedBloomPolicy(4.5) n1000: BlockedBloom k3 blocks9",
    "StandardBloomPolicy(4.5) n1000: StandardBloom k3 bits4544",
    "RibbonPolicy::new(4.5) n1000: Ribbon r3 upper14 blocks16 shards1 slots1006",
    "BlockedBloomPolicy(4.5) n100000: BlockedBloom k3 blocks879",
    "StandardBloomPolicy(4.5) n100000: StandardBloom k3 bits450048",
    "RibbonPolicy::new(4.5) n100000: Ribbon r3 upper1363 blocks1586 shards13 slots101455",
    "BlockedBloomPolicy(4.5) n1000000: BlockedBloom k3 blocks8790",
    "StandardBloomPolicy(4.5) n1000000: StandardBloom k3 bits4500032",
    "RibbonPolicy::new(4.5) n1000000: Ribbon r3 upper13634 blocks15859 shards123 slots1014946",
    "BlockedBloomPolicy(10) n0: BlockedBloom k6 blocks0",
    "StandardBloomPolicy(10) n0: StandardBloom k7 bits64",
    "RibbonPolicy::new(10) n0: BlockedBloom k6 blocks0",
    "BlockedBloomPolicy(10) n1: BlockedBloom k6 blocks1",
    "StandardBloomPolicy(10) n1: StandardBloom k7 bits64",
    "RibbonPolicy::new(10) n1: BlockedBloom k6 blocks1",
    "BlockedBloomPolicy(10) n100: BlockedBloom k6 blocks2",
    "StandardBloomPolicy(10) n100: StandardBloom k7 bits1024",
    "RibbonPolicy::new(10) n100: Ribbon r6 upper0 blocks2 shards1 slots128",
    "BlockedBloomPolicy(10) n1000: BlockedBloom k6 blocks20",
    "StandardBloomPolicy(10) n1000: StandardBloom k7 bits10048",
    "RibbonPolicy::new(10) n1000: Ribbon r6 upper4 blocks16 shards1 slots1006",
    "BlockedBloomPolicy(10) n100000: BlockedBloom k6 blocks1954",
    "StandardBloomPolicy(10) n100000: StandardBloom k7 bits1000000",
    "RibbonPolicy::new(10) n100000: Ribbon r6 upper358 blocks1586 shards13 slots101455",
    "BlockedBloomPolicy(10) n1000000: BlockedBloom k6 blocks19532",
    "StandardBloomPolicy(10) n1000000: StandardBloom k7 bits10000000",
    "RibbonPolicy::new(10) n1000000: Ribbon r6 upper3579 blocks15859 shards123 slots1014946",
    "BlockedBloomPolicy(16) n0: BlockedBloom k9 blocks0",
    "StandardBloomPolicy(16) n0: StandardBloom k11 bits64",
    "RibbonPolicy::new(16) n0: BlockedBloom k9 blocks0",
    "BlockedBloomPolicy(16) n1: BlockedBloom k9 blocks1",
    "StandardBloomPolicy(16) n1: StandardBloom k11 bits64",
    "RibbonPolicy::new(16) n1: BlockedBloom k9 blocks1",
    "BlockedBloomPolicy(16) n100: BlockedBloom k9 blocks4",
    "StandardBloomPolicy(16) n100: StandardBloom k11 bits1600",
    "RibbonPolicy::new(16) n100: Ribbon r10 upper1 blocks2 shards1 slots128",
    "BlockedBloomPolicy(16) n1000: BlockedBloom k9 blocks32",
    "StandardBloomPolicy(16) n1000: StandardBloom k11 bits16000",
    "RibbonPolicy::new(16) n1000: Ribbon r10 upper11 blocks16 shards1 slots1006",
    "BlockedBloomPolicy(16) n100000: BlockedBloom k9 blocks3125",
    "StandardBloomPolicy(16) n100000: StandardBloom k11 bits1600000",
    "RibbonPolicy::new(16) n100000: Ribbon r10 upper1096 blocks1586 shards13 slots101455",
    "BlockedBloomPolicy(16) n1000000: BlockedBloom k9 blocks31250",
    "StandardBloomPolicy(16) n1000000: StandardBloom k11 bits16000000",
    "RibbonPolicy::new(16) n1000000: Ribbon r10 upper10957 blocks15859 shards123 slots1014946",
    "BlockedBloomPolicy(32) n0: BlockedBloom k15 blocks0",
    "StandardBloomPolicy(32) n0: StandardBloom k22 bits64",
    "RibbonPolicy::new(32) n0: BlockedBloom k15 blocks0",
    "BlockedBloomPolicy(32) n1: BlockedBloom k15 blocks1",
    "StandardBloomPolicy(32) n1: StandardBloom k22 bits64",
    "RibbonPolicy::new(32) n1: BlockedBloom k15 blocks1",
    "BlockedBloomPolicy(32) n100: BlockedBloom k15 blocks7",
    "StandardBloomPolicy(32) n100: StandardBloom k22 bits3200",
    "RibbonPolicy::new(32) n100: Ribbon r17 upper1 blocks2 shards1 slots128",
    "BlockedBloomPolicy(32) n1000: BlockedBloom k15 blocks63",
    "StandardBloomPolicy(32) n1000: StandardBloom k22 bits32000",
    "RibbonPolicy::new(32) n1000: Ribbon r17 upper5 blocks16 shards1 slots1006",
    "BlockedBloomPolicy(32) n100000: BlockedBloom k15 blocks6250",
    "StandardBloomPolicy(32) n100000: StandardBloom k22 bits3200000",
    "RibbonPolicy::new(32) n100000: Ribbon r17 upper504 blocks1586 shards13 slots101455",
    "BlockedBloomPolicy(32) n1000000: BlockedBloom k15 blocks62500",
    "StandardBloomPolicy(32) n1000000: StandardBloom k22 bits32000000",
    "RibbonPolicy::new(32) n1000000: Ribbon r17 upper5035 blocks15859 shards123 slots1014946",
    "BlockedBloomPolicy(100) n0: BlockedBloom k24 blocks0",
    "StandardBloomPolicy(100) n0: StandardBloom k69 bits64",
    "RibbonPolicy::new(100) n0: refused",
    "BlockedBloomPolicy(100) n1: BlockedBloom k24 blocks1",
    "StandardBloomPolicy(100) n1: StandardBloom k69 bits128",
    "RibbonPolicy::new(100) n1: refused",
    "BlockedBloomPolicy(100) n100: BlockedBloom k24 blocks20",
    "StandardBloomPolicy(100) n100: StandardBloom k69 bits10048",
    "RibbonPolicy::new(100) n100: refused",
    "BlockedBloomPolicy(100) n1000: BlockedBloom k24 blocks196",
    "StandardBloomPolicy(100) n1000: StandardBloom k69 bits100032",
    "RibbonPolicy::new(100) n1000: refused",
    "BlockedBloomPolicy(100) n100000: BlockedBloom k24 blocks19532",
    "StandardBloomPolicy(100) n100000: StandardBloom k69 bits10000000",
    "RibbonPolicy::new(100) n100000: refused",
    "BlockedBloomPolicy(100) n1000000: BlockedBloom k24 blocks195313",
    "StandardBloomPolicy(100) n1000000: StandardBloom k69 bits100000000",
    "RibbonPolicy::new(100) n1000000: refused",
    "RibbonPolicy::with_fpr(2^-1) n0: BlockedBloom k1 blocks0",
    "RibbonPolicy::with_fpr(2^-1) n1: Ribbon r1 upper2 blocks2 shards1 slots128",
    "RibbonPolicy::with_fpr(2^-1) n100: Ribbon r1 upper2 blocks2 shards1 slots128",
    "RibbonPolicy::with_fpr(2^-1) n1000: Ribbon r1 upper16 blocks16 shards1 slots1006",
    "RibbonPolicy::with_fpr(2^-1) n100000: Ribbon r1 upper1586 blocks1586 shards13 slots101455",
    "RibbonPolicy::with_fpr(2^-1) n1000000: Ribbon r1 upper15859 blocks15859 shards123 slots1014946",
    "RibbonPolicy::with_fpr(2^-6.7) n0: BlockedBloom k6 blocks0",
    "RibbonPolicy::with_fpr(2^-6.7) n1: BlockedBloom k6 blocks1",
    "RibbonPolicy::with_fpr(2^-6.7) n100: Ribbon r6 upper0 blocks2 shards1 slots128",
    "RibbonPolicy::with_fpr(2^-6.7) n1000: Ribbon r6 upper4 blocks16 shards1 slots1006",
    "RibbonPolicy::with_fpr(2^-6.7) n100000: Ribbon r6 upper367 blocks1586 shards13 slots101455",
    "RibbonPolicy::with_fpr(2^-6.7) n1000000: Ribbon r6 upper3666 blocks15859 shards123 slots1014946",
    "RibbonPolicy::with_fpr(2^-9.75) n0: BlockedBloom k9 blocks0",
    "RibbonPolicy::with_fpr(2^-9.75) n1: BlockedBloom k9 blocks1",
    "RibbonPolicy::with_fpr(2^-9.75) n100: Ribbon r9 upper0 blocks2 shards1 slots128",
    "RibbonPolicy::with_fpr(2^-9.75) n1000: Ribbon r9 upper3 blocks16 shards1 slots1006",
    "RibbonPolicy::with_fpr(2^-9.75) n100000: Ribbon r9 upper300 blocks1586 shards13 slots101455",
    "RibbonPolicy::with_fpr(2^-9.75) n1000000: Ribbon r9 upper3001 blocks15859 shards123 slots1014946",
    "RibbonPolicy::with_fpr(2^-16) n0: BlockedBloom k14 blocks0",
    "RibbonPolicy::with_fpr(2^-16) n1: BlockedBloom k14 blocks1",
    "RibbonPolicy::with_fpr(2^-16) n100: Ribbon r16 upper2 blocks2 shards1 slots128",
    "RibbonPolicy::with_fpr(2^-16) n1000: Ribbon r16 upper16 blocks16 shards1 slots1006",
    "RibbonPolicy::with_fpr(2^-16) n100000: Ribbon r16 upper1586 blocks1586 shards13 slots101455",
    "RibbonPolicy::with_fpr(2^-16) n1000000: Ribbon r16 upper15859 blocks15859 shards123 slots1014946",
    "RibbonPolicy::with_fpr(2^-24.5) n0: BlockedBloom k19 blocks0",
    "RibbonPolicy::with_fpr(2^-24.5) n1: BlockedBloom k19 blocks1",
    "RibbonPolicy::with_fpr(2^-24.5) n100: Ribbon r24 upper1 blocks2 shards1 slots128",
    "RibbonPolicy::with_fpr(2^-24.5) n1000: Ribbon r24 upper7 blocks16 shards1 slots1006",
    "RibbonPolicy::with_fpr(2^-24.5) n100000: Ribbon r24 upper657 blocks1586 shards13 slots101455",
    "RibbonPolicy::with_fpr(2^-24.5) n1000000: Ribbon r24 upper6569 blocks15859 shards123 slots1014946",
    "RibbonPolicy::with_fpr(2^-27) n0: BlockedBloom k21 blocks0",
    "RibbonPolicy::with_fpr(2^-27) n1: BlockedBloom k21 blocks1",
    "RibbonPolicy::with_fpr(2^-27) n100: Ribbon r27 upper2 blocks2 shards1 slots128",
    "RibbonPolicy::with_fpr(2^-27) n1000: Ribbon r27 upper16 blocks16 shards1 slots1006",
    "RibbonPolicy::with_fpr(2^-27) n100000: Ribbon r27 upper1586 blocks1586 shards13 slots101455",
    "RibbonPolicy::with_fpr(2^-27) n1000000: Ribbon r27 upper15859 blocks15859 shards123 slots1014946",
    "RibbonPolicy::with_fpr(2^-32) n0: BlockedBloom k24 blocks0",
    "RibbonPolicy::with_fpr(2^-32) n1: BlockedBloom k24 blocks1",
    "RibbonPolicy::with_fpr(2^-32) n100: Ribbon r32 upper2 blocks2 shards1 slots128",
    "RibbonPolicy::with_fpr(2^-32) n1000: Ribbon r32 upper16 blocks16 shards1 slots1006",
    "RibbonPolicy::with_fpr(2^-32) n100000: Ribbon r32 upper1586 blocks1586 shards13 slots101455",
    "RibbonPolicy::with_fpr(2^-32) n1000000: Ribbon r32 upper15859 blocks15859 shards123 slots1014946",
    "RibbonPolicy::with_fpr(2^-40) n0: refused",
    "RibbonPolicy::with_fpr(2^-40) n1: refused",
    "RibbonPolicy::with_fpr(2^-40) n100: refused",
    "RibbonPolicy::with_fpr(2^-40) n1000: refused",
    "RibbonPolicy::with_fpr(2^-40) n100000: refused",
    "RibbonPolicy::with_fpr(2^-40) n1000000: refused",
];

#[test]
fn every_policy_still_chooses_what_it_was_tuned_to() {
    let now = choices();
    for (now, pinned) in now.iter().zip(PINNED) {
        assert_eq!(
            now, pinned,
            "a policy's choice changed: retune on purpose and update PINNED, or fix it"
        );
    }
    assert_eq!(now.len(), PINNED.len());
}
