//! The experiment of AWS's "Exponential Backoff And Jitter" (Marc Brooker, 2015), run with this
//! crate's own backoff code on a virtual clock.
//!
//! N clients each make one optimistic-concurrency write to one shared row: read the version,
//! write it back; the write succeeds only if nobody wrote in between. A failed client sleeps
//! for its backoff, then reads again. Every message takes |Normal(10 ms, sd 2 ms)| on the
//! network. "Work" is the number of writes the row receives; "time" is when the last client is
//! done. The event model follows the blog's published simulator: a read and a write per round,
//! the backoff added to the next read's send time, the failed-attempt counter n starting at 1
//! with the ceiling min(cap, base·2^n).
//!
//! Run: `cargo run --release --example jitter_experiment` (prints a markdown section).
//! Options: `--runs R` (default 100), `--seed S` (default 1).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use tilefetch::timing::backoff::{Backoff, Jitter};

const BASE_MS: f64 = 5.0;
const CAP_MS: f64 = 2000.0;
const NET_MEAN_MS: f64 = 10.0;
const NET_SD_MS: f64 = 2.0;
const CLIENTS: [usize; 7] = [10, 40, 70, 100, 130, 160, 190];
/// Extra seeds run at N = 100 to show how much a mean moves from one seed to the next.
const SPREAD_SEEDS: u64 = 5;

/// The five strategies of the post, each as one of the crate's `Backoff`s.
fn strategies() -> [(&'static str, Backoff); 5] {
    let with = |base_ms, jitter| Backoff { base_ms, cap_ms: CAP_MS, jitter, jitter_ms: 0.0 };
    [
        // No backoff at all: a zero base makes every ceiling, and so every delay, zero.
        ("none (no backoff)", with(0.0, Jitter::None)),
        ("exponential, no jitter", with(BASE_MS, Jitter::None)),
        ("full jitter", with(BASE_MS, Jitter::Full)),
        ("equal jitter", with(BASE_MS, Jitter::Equal)),
        ("decorrelated jitter", with(BASE_MS, Jitter::Decorrelated)),
    ]
}

/// Writes and milliseconds, as a mean or as the standard error of one.
type Pair = (f64, f64);

/// SplitMix64: small, seedable, good enough for a simulation's uniform draws.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// |Normal(mean, sd)| by Box–Muller, as the post's network model.
    fn net_delay(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]: ln(0) must not happen
        let u2 = self.unit();
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        (NET_MEAN_MS + NET_SD_MS * z).abs()
    }
}

#[derive(Clone, Copy)]
enum Message {
    /// A client's read reaches the row.
    Read,
    /// The read's reply (the version) reaches the client.
    ReadReply { version: u64 },
    /// A client's write (of the version it read) reaches the row.
    Write { version: u64 },
    /// The write's outcome reaches the client.
    WriteReply { ok: bool },
}

struct Event {
    at_ms: f64,
    /// Ties in time resolve in send order, so a run is a pure function of its seed.
    seq: u64,
    client: usize,
    message: Message,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    /// Reversed: `BinaryHeap` pops the greatest, the simulation wants the earliest.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at_ms.total_cmp(&self.at_ms).then(other.seq.cmp(&self.seq))
    }
}

struct Outcome {
    writes: u64,
    done_ms: f64,
}

/// One run: `clients` clients all start at t = 0.
fn simulate(clients: usize, backoff: &Backoff, rng: &mut Rng) -> Outcome {
    let mut queue = BinaryHeap::new();
    let mut seq = 0u64;
    let mut send = |queue: &mut BinaryHeap<Event>, at_ms: f64, client: usize, message: Message| {
        seq += 1;
        queue.push(Event { at_ms, seq, client, message });
    };
    for client in 0..clients {
        let at = rng.net_delay();
        send(&mut queue, at, client, Message::Read);
    }
    let mut failures = vec![0u32; clients];
    let mut previous_sleep = vec![backoff.base_ms; clients];
    let mut version = 0u64;
    let mut writes = 0u64;
    let mut now = 0.0;
    while let Some(Event { at_ms, client, message, .. }) = queue.pop() {
        now = at_ms;
        match message {
            Message::Read => {
                let at = now + rng.net_delay();
                send(&mut queue, at, client, Message::ReadReply { version });
            }
            Message::ReadReply { version: read } => {
                let at = now + rng.net_delay();
                send(&mut queue, at, client, Message::Write { version: read });
            }
            Message::Write { version: read } => {
                writes += 1;
                let ok = read == version;
                if ok {
                    version += 1;
                }
                let at = now + rng.net_delay();
                send(&mut queue, at, client, Message::WriteReply { ok });
            }
            Message::WriteReply { ok: true } => {}
            Message::WriteReply { ok: false } => {
                failures[client] += 1;
                // The crate's retry n has the ceiling base·2^(n−1); the post's n-th failure
                // sleeps under base·2^n, so the post's n is the crate's retry n + 1.
                let sleep = backoff.delay(failures[client] + 1, previous_sleep[client], rng.unit());
                previous_sleep[client] = sleep;
                let at = now + rng.net_delay() + sleep;
                send(&mut queue, at, client, Message::Read);
            }
        }
    }
    Outcome { writes, done_ms: now }
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} takes a whole number, got {v:?}")))
        .unwrap_or(default)
}

fn main() {
    let runs = arg("--runs", 100).max(1);
    let seed = arg("--seed", 1);
    let strategies = strategies();
    let mut rng = Rng(seed);
    // stats[n][s]: mean writes and mean completion time, each with its standard error.
    let mut means = Vec::new();
    let mut errors = Vec::new();
    for &n in &CLIENTS {
        let (row, err): (Vec<Pair>, Vec<Pair>) = strategies
            .iter()
            .map(|(_, backoff)| {
                let outcomes: Vec<Outcome> = (0..runs).map(|_| simulate(n, backoff, &mut rng)).collect();
                let writes = mean_and_error(outcomes.iter().map(|o| o.writes as f64));
                let time = mean_and_error(outcomes.iter().map(|o| o.done_ms));
                ((writes.0, time.0), (writes.1, time.1))
            })
            .unzip();
        means.push(row);
        errors.push(err);
    }

    println!("## Jitter experiment (AWS, \"Exponential Backoff And Jitter\", 2015)\n");
    println!(
        "`cargo run --release --example jitter_experiment -- --runs {runs} --seed {seed}`: N clients \
         each make one optimistic-concurrency write to one row; network |Normal({NET_MEAN_MS} ms, sd \
         {NET_SD_MS} ms)| per message on a virtual clock; base {BASE_MS} ms, cap {CAP_MS} ms; \
         {runs} runs per point; the delays come from the crate's `Backoff::delay`.\n"
    );
    for (title, pick) in [("Work: mean writes per run", 0), ("Time: mean completion time per run (ms)", 1)] {
        println!("### {title}\n");
        print!("| N |");
        for (name, _) in &strategies {
            print!(" {name} |");
        }
        println!();
        println!("|---:|{}", "---:|".repeat(strategies.len()));
        for (row, n) in means.iter().zip(CLIENTS) {
            print!("| {n} |");
            for &(writes, time) in row {
                let value = if pick == 0 { writes } else { time };
                print!(" {value:.0} |");
            }
            println!();
        }
        println!();
    }

    let index = |name: &str| strategies.iter().position(|(s, _)| s.starts_with(name)).expect("a strategy");
    let (full, decorrelated, equal, exponential) =
        (index("full"), index("decorrelated"), index("equal"), index("exponential"));
    let i100 = CLIENTS.iter().position(|&n| n == 100).expect("N = 100 is simulated");
    let (at100, se100) = (&means[i100], &errors[i100]);
    println!("### Beside the published figures (N = 100)\n");
    println!(
        "| strategy | writes here (± s.e.) | writes, a port of the post's simulator | difference / s.e. \
         | time here, ms (± s.e.) | time, port (ms) | difference / s.e. |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, i, calls, ms) in
        [("full jitter", full, 795.0, 4960.0), ("decorrelated jitter", decorrelated, 1001.0, 4571.0)]
    {
        let (w, t) = at100[i];
        let (we, te) = se100[i];
        println!(
            "| {name} | {w:.0} ± {we:.0} | {calls} | {:+.1} | {t:.0} ± {te:.0} | {ms} | {:+.1} |",
            (w - calls) / (we * std::f64::consts::SQRT_2),
            (t - ms) / (te * std::f64::consts::SQRT_2)
        );
    }
    println!();
    // A 100-run mean of completion time is itself noisy (the time is the last client's, a
    // maximum): the spread of that mean over other seeds says how far apart two honest runs of
    // one simulator land.
    let spread = |backoff: &Backoff| {
        let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
        for seed in seed + 1..=seed + SPREAD_SEEDS {
            let mut rng = Rng(seed);
            let mean = (0..runs).map(|_| simulate(100, backoff, &mut rng).done_ms).sum::<f64>() / runs as f64;
            (low, high) = (low.min(mean), high.max(mean));
        }
        (low, high)
    };
    let (full_low, full_high) = spread(&strategies[full].1);
    let (dec_low, dec_high) = spread(&strategies[decorrelated].1);
    println!(
        "Both sides are means of {runs}-run samples, so each difference is divided by the standard error \
         of a difference of two such means (s.e. × √2, taking the port's spread to equal ours). The \
         model and the backoff formulas are the post's, and the work (writes) agrees within about one \
         s.e.; completion time is the last client's, a maximum, and its {runs}-run mean moves with the \
         seed: over seeds {} to {} it ranged {full_low:.0}–{full_high:.0} ms for full jitter (the \
         port's 4960 ms is {}) and {dec_low:.0}–{dec_high:.0} ms for decorrelated (the port's 4571 ms \
         is {}).\n",
        seed + 1,
        seed + SPREAD_SEEDS,
        inside(4960.0, full_low, full_high),
        inside(4571.0, dec_low, dec_high),
    );

    // The post's ranking, checked on every N (computed here, not asserted by hand).
    let slowest_jittered =
        |row: &[(f64, f64)]| [full, equal, decorrelated].into_iter().all(|i| row[exponential].1 > row[i].1);
    let least_work = |row: &[(f64, f64)]| (0..row.len()).all(|i| row[full].0 <= row[i].0);
    let decorrelated_faster = |row: &[(f64, f64)]| row[decorrelated].1 < row[full].1;
    let equal_slower = |row: &[(f64, f64)]| row[equal].1 > row[full].1;
    println!("### The post's ranking, checked on each N\n");
    println!("| claim | holds at N | fails at N |");
    println!("|---|---|---|");
    for (claim, test) in [
        (
            "exponential without jitter is slower than every jittered strategy",
            &slowest_jittered as &dyn Fn(&[(f64, f64)]) -> bool,
        ),
        ("full jitter does the least work", &least_work),
        ("decorrelated finishes sooner than full jitter", &decorrelated_faster),
        ("equal jitter finishes later than full jitter", &equal_slower),
    ] {
        let (holds, fails): (Vec<usize>, Vec<usize>) = CLIENTS.iter().partition(|&&n| {
            let i = CLIENTS.iter().position(|&c| c == n).expect("simulated");
            test(&means[i])
        });
        let list = |ns: &[usize]| {
            if ns.is_empty() {
                "—".to_string()
            } else {
                ns.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
            }
        };
        println!("| {claim} | {} | {} |", list(&holds), list(&fails));
    }
    println!();
}

/// Where `x` falls against the range `low..=high`, in words.
fn inside(x: f64, low: f64, high: f64) -> String {
    if x < low {
        format!("{:.0} ms below that range", low - x)
    } else if x > high {
        format!("{:.0} ms above that range", x - high)
    } else {
        "inside it".to_string()
    }
}

/// The mean of a sample and the standard error of that mean.
fn mean_and_error(sample: impl Iterator<Item = f64>) -> (f64, f64) {
    let values: Vec<f64> = sample.collect();
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (variance / n).sqrt())
}
