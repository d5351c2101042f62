//! A web crawler's to-visit queue (its "frontier") that never queues a URL twice, deduplicated with a
//! `BloomFilter` and, for comparison, with an exact `HashSet<String>`.
//!
//! The crawl runs over a synthetic web: page `i` links to its two "children" `2i + 1` and `2i + 2` (so every
//! page is reachable from page 0) and to six pseudo-random pages (most of which are already known: the
//! duplicates a frontier exists to drop). The frontier is planned for a capacity smaller than the web, so it
//! warns when its filter's estimated count passes the plan. A false positive makes the crawler skip a page it
//! never saw; the exact run shows how many pages that cost.
//!
//! `cargo run --release -p sstfilter-memory --example crawl_frontier [pages] [planned_capacity] [fpr]`
//! (defaults: 1,250,000 pages, planned for 1,000,000 at 1 %). Memory is compared when the frontier has seen
//! 1,000,000 distinct URLs.

use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use sstfilter_memory::BloomFilter;

/// Distinct URLs at which the two structures' memory is compared.
const MEMORY_SNAPSHOT_AT: usize = 1_000_000;

/// What a frontier uses to remember the URLs it has seen.
trait Seen {
    const NAME: &'static str;
    /// Whether it was sized for a planned number of URLs (an exact set just grows).
    const PLANNED: bool;
    /// Remembers `url`; `true` if it was not seen before (for a Bloom filter: certainly not seen).
    fn insert(&mut self, url: &str) -> bool;
    /// How many distinct URLs it holds (estimated by a Bloom filter, which costs a pass over its bits).
    fn estimated_len(&self) -> f64;
    /// Heap bytes it takes.
    fn memory_bytes(&self) -> usize;
    /// A word on its accuracy now.
    fn accuracy(&self) -> String;
}

impl Seen for BloomFilter {
    const NAME: &'static str = "BloomFilter";
    const PLANNED: bool = true;
    fn insert(&mut self, url: &str) -> bool {
        BloomFilter::insert(self, url.as_bytes())
    }
    fn estimated_len(&self) -> f64 {
        BloomFilter::estimated_len(self)
    }
    fn memory_bytes(&self) -> usize {
        BloomFilter::memory_bytes(self)
    }
    fn accuracy(&self) -> String {
        format!(
            "false-positive rate now {:.2} %",
            self.expected_fpr() * 100.0
        )
    }
}

/// The exact alternative, with its heap use tracked as URLs are added.
struct Exact {
    set: HashSet<String>,
    string_bytes: usize,
}

impl Seen for Exact {
    const NAME: &'static str = "HashSet<String>";
    const PLANNED: bool = false;
    fn insert(&mut self, url: &str) -> bool {
        if self.set.contains(url) {
            return false;
        }
        let owned = url.to_owned();
        self.string_bytes += owned.capacity();
        self.set.insert(owned)
    }
    fn estimated_len(&self) -> f64 {
        self.set.len() as f64
    }
    /// The strings' heap bytes (counted exactly) plus the table, computed from its capacity with hashbrown's
    /// layout: a power-of-two number of buckets, 7/8 of them usable, each a `String` (24 bytes) and one control
    /// byte, plus 16 trailing control bytes. Allocator overhead is not counted, so this is a lower bound.
    fn memory_bytes(&self) -> usize {
        let buckets = (self.set.capacity() * 8 / 7).next_power_of_two();
        self.string_bytes + buckets * (size_of::<String>() + 1) + 16
    }
    fn accuracy(&self) -> String {
        "exact".to_owned()
    }
}

/// The to-visit queue: URLs are queued once, in discovery order.
struct Frontier<S: Seen> {
    queue: VecDeque<String>,
    seen: S,
    planned: usize,
    distinct: usize,
    next_check: usize,
    warned: bool,
}

impl<S: Seen> Frontier<S> {
    fn new(seen: S, planned: usize) -> Self {
        Frontier {
            queue: VecDeque::new(),
            seen,
            planned,
            distinct: 0,
            next_check: check_interval(planned),
            warned: false,
        }
    }

    /// Queues `url` unless it was seen before; returns whether it was queued.
    fn push(&mut self, url: &str) -> bool {
        if !self.seen.insert(url) {
            return false;
        }
        self.queue.push_back(url.to_owned());
        self.distinct += 1;
        if S::PLANNED && self.distinct >= self.next_check {
            self.check_capacity();
        }
        true
    }

    /// The next URL to visit.
    fn pop(&mut self) -> Option<String> {
        self.queue.pop_front()
    }

    /// Warns once when the estimated number of URLs passes the planned capacity. The estimate is a pass over
    /// the filter, so it is taken every 1/1000 of the plan, not on every push.
    fn check_capacity(&mut self) {
        self.next_check += check_interval(self.planned);
        let estimate = self.seen.estimated_len();
        if !self.warned && estimate > self.planned as f64 {
            self.warned = true;
            println!(
                "  warning: {} holds an estimated {estimate:.0} URLs, past the planned {} ({}); plan a larger \
                 filter or a ScalableBloomFilter",
                S::NAME,
                self.planned,
                self.seen.accuracy()
            );
        }
    }
}

fn check_interval(planned: usize) -> usize {
    (planned / 1000).max(1)
}

/// The URL of page `id`: host, section and page number, 44–60 bytes.
fn url(id: u64) -> String {
    const SECTIONS: [&str; 8] = [
        "news", "sport", "science", "culture", "travel", "opinion", "archive", "video",
    ];
    let section = SECTIONS[(id / 7 % 8) as usize];
    format!(
        "https://site{}.example.com/{section}/{}/page-{id}.html",
        id % 20_000,
        id / 1000
    )
}

/// The pages page `id` links to, in a web of `pages` pages.
fn links(id: u64, pages: u64) -> impl Iterator<Item = u64> {
    let children = [2 * id + 1, 2 * id + 2]
        .into_iter()
        .filter(move |&c| c < pages);
    let random = (0..6u64).map(move |j| {
        // splitmix64 of (id, j): a fixed pseudo-random link.
        let mut z = (id * 8 + j).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % pages
    });
    children.chain(random)
}

/// Page ids are recovered from URLs only to generate links; a real crawler would fetch and parse the page.
fn page_id(url: &str) -> u64 {
    let start = url.rfind("page-").map_or(0, |i| i + 5);
    let end = url.len() - ".html".len();
    url[start..end].parse().expect("a URL this example made")
}

struct Report {
    crawled: u64,
    links: u64,
    dropped: u64,
    memory_at_snapshot: Option<usize>,
    seconds: f64,
    accuracy: String,
}

fn crawl<S: Seen>(seen: S, pages: u64, planned: usize) -> Report {
    println!("crawling with {}:", S::NAME);
    let started = Instant::now();
    let mut frontier = Frontier::new(seen, planned);
    let (mut crawled, mut links_seen, mut dropped) = (0, 0, 0);
    let mut memory_at_snapshot = None;
    frontier.push(&url(0));
    while let Some(next) = frontier.pop() {
        crawled += 1;
        for target in links(page_id(&next), pages) {
            links_seen += 1;
            if !frontier.push(&url(target)) {
                dropped += 1;
            }
            if memory_at_snapshot.is_none() && frontier.distinct == MEMORY_SNAPSHOT_AT {
                memory_at_snapshot = Some(frontier.seen.memory_bytes());
            }
        }
    }
    Report {
        crawled,
        links: links_seen,
        dropped,
        memory_at_snapshot,
        seconds: started.elapsed().as_secs_f64(),
        accuracy: frontier.seen.accuracy(),
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let pages: u64 = args
        .next()
        .map_or(1_250_000, |a| a.parse().expect("number of pages"));
    let planned: usize = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("planned capacity"));
    let fpr: f64 = args
        .next()
        .map_or(0.01, |a| a.parse().expect("false-positive rate"));

    println!("synthetic web of {pages} pages; frontier planned for {planned} URLs at {fpr}");
    let bloom = crawl(BloomFilter::with_rate(planned, fpr), pages, planned);
    let exact = crawl(
        Exact {
            set: HashSet::new(),
            string_bytes: 0,
        },
        pages,
        planned,
    );

    println!();
    println!(
        "| dedup by | pages crawled | links seen | links dropped | memory at 10^6 URLs | time | accuracy |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|");
    for (name, r) in [(BloomFilter::NAME, &bloom), (Exact::NAME, &exact)] {
        let memory = r
            .memory_at_snapshot
            .map_or("(fewer URLs)".to_owned(), |b| format!("{:.2} MiB", mib(b)));
        println!(
            "| {name} | {} | {} | {} | {memory} | {:.2} s | {} |",
            r.crawled, r.links, r.dropped, r.seconds, r.accuracy
        );
    }
    let missed = exact.crawled - bloom.crawled;
    println!();
    println!(
        "the Bloom frontier skipped {missed} of {} pages ({:.3} %) as already seen: its false positives",
        exact.crawled,
        missed as f64 / exact.crawled as f64 * 100.0
    );
    if let (Some(b), Some(e)) = (bloom.memory_at_snapshot, exact.memory_at_snapshot) {
        println!(
            "at {MEMORY_SNAPSHOT_AT} URLs the filter took {:.1}x less memory than the HashSet<String>",
            e as f64 / b as f64
        );
    }
}
