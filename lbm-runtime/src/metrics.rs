//! Performance figures: timing of kernels, the bytes and flops they move, and the machine's
//! limits measured in the same run: each kernel is reported against the pattern it actually
//! streams, measured in the same run as the kernel, never against a data sheet or a constant of
//! another machine.
//!
//! A kernel that reads and writes every population once moves `2 Q · T::BYTES` bytes per
//! site (144 B for D2Q9 in f64). Its limit is the bandwidth of the matching access pattern
//! ([`Pattern`]): an in-place read-modify-write sweep for in-place kernels (collide, AA
//! streaming); a copy between two arrays with ordinary stores for propagate; and for the fused
//! two-copy step, the copy it makes: with non-temporal stores where its second array is larger
//! than the last-level cache ([`step_pattern`]), else with ordinary stores. All are counted as
//! bytes read plus bytes written. An ordinary store also reads its line first (the
//! write-allocate read, a third of a copy's traffic), uncounted on both sides, so each share
//! is like for like: a two-copy step that streams, set against the ordinary copy, read as
//! 130–230 % of it.
//! Compute-bound kernels are compared with the peak flop rate, measured too
//! ([`measure_peak_flops`]): fused multiply-adds at the vector width the kernels are compiled
//! for, on every thread. Every probe is repeated; its best repetition is the figure and the
//! spread of the others says whether the machine was quiet ([`Probe::is_unstable`]).

use std::time::Instant;

use rayon::prelude::*;

use crate::kernels::Pattern;
use crate::storage::{store_fence, AlignedBuf};
use crate::{Kernel, Lattice, Layout, LbmError, Model, Real, Scheme};

/// A rate measured by repeating a probe: its best repetition, and how far the others fell
/// below it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    /// The best rate of the repetitions (GB/s or GFLOP/s).
    pub best: f64,
    /// `(best − worst) / best` over the repetitions.
    pub spread: f64,
    /// How many repetitions were timed.
    pub reps: usize,
}

impl Probe {
    /// The spread above which a probe is unstable: the machine was busy with other work, and
    /// shares of its figure are uncertain by as much.
    pub const UNSTABLE: f64 = 0.10;

    /// The probe of repetitions that reached these rates: the best, and the spread of the
    /// others below it (a probe of no rates is zero).
    pub fn of(rates: &[f64]) -> Probe {
        let best = rates.iter().copied().fold(0.0, f64::max);
        let worst = rates.iter().copied().fold(f64::INFINITY, f64::min);
        Probe {
            best,
            spread: if best > 0.0 {
                (best - worst) / best
            } else {
                0.0
            },
            reps: rates.len(),
        }
    }

    /// The same repetitions counted in other units: `units` per unit of the rate (bytes per
    /// copy, flops per dispatch); the spread, a ratio, is unchanged.
    pub fn scaled(self, units: f64) -> Probe {
        Probe {
            best: self.best * units,
            ..self
        }
    }

    /// Whether the repetitions spread by more than [`Probe::UNSTABLE`].
    pub fn is_unstable(&self) -> bool {
        self.spread > Self::UNSTABLE
    }

    /// How the figure was measured, for reports: `best of 5, spread 3%`, with a warning when
    /// the probe is unstable.
    pub fn how(&self) -> String {
        let s = format!("best of {}, spread {:.0}%", self.reps, 100.0 * self.spread);
        if self.is_unstable() {
            format!(
                "{s}: UNSTABLE (above {:.0}%, the machine is busy; shares of it are uncertain)",
                100.0 * Self::UNSTABLE
            )
        } else {
            s
        }
    }
}

/// Measured memory bandwidths, GB/s (10⁹ bytes per second, reads plus writes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bandwidth {
    /// In-place read-modify-write sweep `a[i] = s·a[i] + t`.
    pub rmw: Probe,
    /// Copy `b[i] = a[i]` between two arrays (ordinary stores).
    pub copy: Probe,
    /// The same copy with non-temporal stores, as the fused two-copy step makes on arrays
    /// larger than the last-level cache.
    pub streamed_copy: Probe,
}

impl Bandwidth {
    /// The bandwidth of the pattern a kernel of this scheme follows.
    pub fn for_pattern(&self, p: Pattern) -> Probe {
        match p {
            Pattern::InPlace => self.rmw,
            Pattern::Copy => self.copy,
            Pattern::StreamedCopy => self.streamed_copy,
        }
    }
}

/// Measures the peak rate of fused multiply-adds in precision `T`, GFLOP/s (an FMA counts
/// two): every thread of the pool runs independent chains `a ← a·x + y` over enough registers
/// to hide the FMA latency, written as the kernels' arithmetic is ([`Real::mul_add`] over
/// arrays of lanes) so that the compiler gives it the same vector width (`target-cpu`); best
/// of `reps` repetitions of at least 20 ms after a warm-up.
pub fn measure_peak_flops<T: Real>(reps: usize) -> Probe {
    // 24 chains of 64 bytes (512-bit registers), or 48 of 32 bytes: two FMA pipes of
    // latency 4 need 8 independent registers, so the loop is bound by throughput.
    const BYTES: usize = 24 * 64;
    let lanes = BYTES / std::mem::size_of::<T>();
    let threads = rayon::current_num_threads();
    let burst = |iters: usize| {
        rayon::broadcast(|_| match std::mem::size_of::<T>() {
            8 => fma_chains::<T, { BYTES / 8 }>(iters),
            _ => fma_chains::<T, { BYTES / 4 }>(iters),
        })
    };
    // A burst long enough that handing it to the threads is small against it (5 ms), timed
    // once the pool's threads are awake: a cold pool's start would end the doubling early,
    // and bursts of microseconds measure the broadcast, not the FMAs.
    let mut iters = 1 << 10;
    std::hint::black_box(burst(iters));
    loop {
        let t = Instant::now();
        std::hint::black_box(burst(iters));
        if t.elapsed().as_secs_f64() > 5e-3 || iters > 1 << 30 {
            break;
        }
        iters *= 2;
    }
    let gflop = 2.0 * (threads * iters * lanes) as f64 / 1e9;
    best_rate(reps, gflop, &mut || {
        std::hint::black_box(burst(iters));
    })
}

/// `iters` rounds of `a ← a·x + y` on the `N` lanes of `a` (a fixed point at 0.1: no
/// overflow, no subnormals); their sum.
fn fma_chains<T: Real, const N: usize>(iters: usize) -> T {
    let (x, y) = (
        std::hint::black_box(T::from_f64(0.999_999)),
        std::hint::black_box(T::from_f64(1e-7)),
    );
    let mut a = [T::from_f64(1.0); N];
    for _ in 0..iters {
        for v in a.iter_mut() {
            *v = v.mul_add(x, y);
        }
    }
    a.into_iter().fold(T::from_f64(0.0), |s, v| s + v)
}

/// The pattern whose bandwidth bounds the fused step of `scheme` on a lattice whose
/// population arrays hold `array_bytes` bytes each, before the lattice has run: in place, or a
/// copy whose stores may be non-temporal where the array is larger than the last-level cache.
/// There the lattice may still choose ordinary stores ([`crate::kernels::Stores`];
/// [`Lattice::step_pattern`] says which it follows), whose write-allocate reads are uncounted:
/// a share of the non-temporal copy's bandwidth is then a lower bound.
pub fn step_pattern(scheme: Scheme, array_bytes: usize) -> Pattern {
    match scheme {
        Scheme::InPlace => Pattern::InPlace,
        Scheme::TwoCopy if crate::kernels::streams_pay(array_bytes) => Pattern::StreamedCopy,
        Scheme::TwoCopy => Pattern::Copy,
    }
}

/// Measures the three bandwidths on arrays of `bytes` bytes each (use well above the last-level
/// cache), best of `reps` repetitions of at least 20 ms (as many
/// sweeps as that takes) after a warm-up sweep.
pub fn measure_bandwidth(bytes: usize, reps: usize) -> Bandwidth {
    let n = bytes / std::mem::size_of::<f64>();
    // Allocated as the lattices are (huge pages, first touched by the workers), so the probe
    // measures the memory the kernels stream: over a `Vec`'s 4 KiB pages the read-modify-write
    // sweep moved markedly less (the hardware prefetchers stop at page boundaries), and the
    // in-place D2Q9 step then showed well over 100 % of the probe (docs/performance.md).
    let mut a = AlignedBuf::<f64>::zeroed(n);
    let mut b = AlignedBuf::<f64>::zeroed(n);
    let chunk = (n / (4 * rayon::current_num_threads())).max(4096);
    // GB read plus written per sweep.
    let moved = 2.0 * (n * 8) as f64 / 1e9;
    let rmw = best_rate(reps, moved, &mut || {
        a.par_chunks_mut(chunk).for_each(|c| {
            for x in c {
                *x = *x * 0.999_999 + 1e-7;
            }
        })
    });
    let copy = best_rate(reps, moved, &mut || {
        b.par_chunks_mut(chunk)
            .zip(a.par_chunks(chunk))
            .for_each(|(d, s)| {
                // `+ 0.0` keeps this an ordinary load/store loop: a `memcpy` may switch to
                // non-temporal stores, which no kernel here uses.
                for (x, y) in d.iter_mut().zip(s) {
                    *x = *y + 0.0;
                }
            })
    });
    // Through the kernels' own non-temporal store, a 64-byte line at a time.
    let lines = n / 8;
    let streamed_copy = best_rate(reps, 2.0 * (lines * 64) as f64 / 1e9, &mut || {
        let (src, dst) = (a.raw(), b.raw());
        let tasks = lines.div_ceil(STREAM_LINES);
        (0..tasks).into_par_iter().for_each(|t| {
            for l in t * STREAM_LINES..((t + 1) * STREAM_LINES).min(lines) {
                dst.stream::<8>(8 * l, src.load::<8>(8 * l));
            }
            store_fence();
        })
    });
    std::hint::black_box((&a, &b));
    Bandwidth {
        rmw,
        copy,
        streamed_copy,
    }
}

/// 64-byte lines per task of the non-temporal copy probe (256 KiB).
const STREAM_LINES: usize = 1 << 12;

/// The shortest repetition of a probe: timer resolution and a scheduler's tick are small
/// against it.
const REPETITION_SECONDS: f64 = 0.02;

/// The rate (units per second) of `reps` repetitions of `f`, which moves `units` per call,
/// after a warm-up call: each repetition calls `f` as many times as a first timed call says
/// last at least [`REPETITION_SECONDS`] ([`repeated_rate`]); the best, and the spread of the
/// others below it.
fn best_rate(reps: usize, units: f64, f: &mut dyn FnMut()) -> Probe {
    f();
    let calls = |k: u64| {
        let t = Instant::now();
        (0..k).for_each(|_| f());
        Ok::<f64, std::convert::Infallible>(t.elapsed().as_secs_f64())
    };
    let Ok((rate, _)) = repeated_rate(1, u64::MAX, REPETITION_SECONDS, reps.max(1), calls);
    rate.scaled(units)
}

/// The rate of `run(k)`, which does `k` units of work and returns the seconds they took, as a
/// [`Probe`] of `reps` repetitions, and the units per repetition: a first run of `least`
/// units times the work, then each repetition runs as many units as that rate fills
/// `seconds` with (at least `least`, at most `most` unless `least` is more). The CPU probes
/// (`best_rate`) and the GPU's batches ([`crate::gpu::bench`]) both measure so.
pub fn repeated_rate<E>(
    least: u64,
    most: u64,
    seconds: f64,
    reps: usize,
    mut run: impl FnMut(u64) -> Result<f64, E>,
) -> Result<(Probe, u64), E> {
    let least = least.max(1);
    let first = run(least)?;
    let fill = (least as f64 * seconds / first.max(1e-9)).ceil() as u64;
    let units = fill.min(most).max(least);
    let rates = (0..reps)
        .map(|_| Ok(units as f64 / run(units)?.max(1e-9)))
        .collect::<Result<Vec<f64>, E>>()?;
    Ok((Probe::of(&rates), units))
}

/// The timing of one kernel on one lattice.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTiming {
    /// Which kernel.
    pub kernel: Kernel,
    /// The lattice's streaming scheme.
    pub scheme: Scheme,
    /// Median seconds per iteration (per time step for the fused step, whose iterations are
    /// timed two steps at a time).
    pub seconds: f64,
    /// Lattice sites updated per iteration.
    pub sites: usize,
    /// Bytes read plus written per site.
    pub bytes_per_site: usize,
    /// Floating-point operations per site.
    pub flops_per_site: u64,
    /// The kernel's memory access pattern, whose bandwidth limits it.
    pub pattern: Pattern,
    /// What the lattice's tuning kept for the kernel's passes, the prefetch distance and kind
    /// of store its timed iterations used ([`Lattice::tuned`]; empty for propagate and bc).
    pub tuned: Vec<crate::Choice>,
    /// Whether the fused step swept two steps together ([`Lattice::paired`]; in place a local
    /// half-step and the next pull); `None` for the other kernels.
    pub paired: Option<bool>,
}

impl KernelTiming {
    /// Milliseconds per iteration.
    pub fn ms(&self) -> f64 {
        self.seconds * 1e3
    }

    /// Million lattice-site updates per second.
    pub fn mlups(&self) -> f64 {
        self.sites as f64 / self.seconds / 1e6
    }

    /// Memory traffic in GB/s (`bytes_per_site · sites / seconds`).
    pub fn gbs(&self) -> f64 {
        (self.bytes_per_site * self.sites) as f64 / self.seconds / 1e9
    }

    /// Flop rate in GFLOP/s.
    pub fn gflops(&self) -> f64 {
        self.flops_per_site as f64 * self.sites as f64 / self.seconds / 1e9
    }

    /// The bandwidth-limited rate in MLUPS for this kernel's pattern.
    pub fn mlups_limit(&self, bw: &Bandwidth) -> f64 {
        bw.for_pattern(self.pattern).best * 1e9 / self.bytes_per_site as f64 / 1e6
    }
}

/// The most warm-up runs of a kernel before its timing (the prefetch tuning takes
/// `ROUNDS × CANDIDATES` sweeps of each pass, see [`crate::prefetch`]).
const WARM_UP_LIMIT: usize = 64;

/// Times `iters` iterations of kernel `k` (after the warm-up: one run, and more until the
/// lattice's prefetch distances are tuned) and returns the median. An iteration of the fused
/// step is two time steps ([`Lattice::steps`], which may sweep the in-place scheme's two
/// half-steps together), timed as one and reported per step.
pub fn time_kernel<M: Model, L: Layout, T: Real>(
    lat: &mut Lattice<M, L, T>,
    k: Kernel,
    iters: usize,
) -> Result<KernelTiming, LbmError> {
    let [t] = time_in_turn([lat], k, iters)?;
    Ok(t)
}

/// Times kernel `k` of each of `lats` as [`time_kernel`] times one, but in turn: every timed
/// iteration runs `k` once on each lattice, one after the other, and each lattice gets the
/// median of its own times. On a shared machine whose memory speed drifts from one second to
/// the next, lattices timed in turn see the same machine, so the ratio of their rates means
/// something that the ratio of two separate timings does not: timed one after the other, the
/// ratio of D2Q37's two fused steps spread over a much wider range from run to run than timed
/// in turn (see docs/performance.md).
pub fn time_in_turn<M: Model, L: Layout, T: Real, const N: usize>(
    mut lats: [&mut Lattice<M, L, T>; N],
    k: Kernel,
    iters: usize,
) -> Result<[KernelTiming; N], LbmError> {
    // The fused step runs as a simulation runs it, two steps at a time (a pair).
    let steps = if k == Kernel::Fused { 2 } else { 1 };
    let run = |lat: &mut Lattice<M, L, T>| match k {
        Kernel::Fused => {
            lat.steps(steps);
            Ok(())
        }
        _ => lat.run_kernel(k),
    };
    // Warm up until the prefetch distances (and the pairing) are tuned (a few dozen
    // sweeps at most): the timed iterations then run as each lattice keeps. An in-place
    // lattice starts them in its odd state, where two steps can be a pair.
    for lat in lats.iter_mut() {
        if k == Kernel::Fused && lat.scheme() == Scheme::InPlace && !lat.is_odd() {
            lat.step();
        }
        run(lat)?;
        for _ in 0..WARM_UP_LIMIT {
            if lat.tuning_settled() {
                break;
            }
            run(lat)?;
        }
    }
    let mut times: [Vec<f64>; N] = std::array::from_fn(|_| Vec::with_capacity(iters.max(1)));
    for _ in 0..iters.max(1) {
        for (lat, times) in lats.iter_mut().zip(&mut times) {
            let t = Instant::now();
            run(lat)?;
            times.push(t.elapsed().as_secs_f64() / steps as f64);
        }
    }
    Ok(std::array::from_fn(|i| {
        let times = &mut times[i];
        times.sort_by(f64::total_cmp);
        timing(lats[i], k, times[times.len() / 2])
    }))
}

/// What kernel `k` of `lat` moved and computed in `seconds`.
fn timing<M: Model, L: Layout, T: Real>(
    lat: &Lattice<M, L, T>,
    k: Kernel,
    seconds: f64,
) -> KernelTiming {
    // Collide works in place, propagate copies; the fused step follows its scheme.
    let pattern = match k {
        Kernel::Fused => lat.step_pattern(),
        Kernel::Collide => Pattern::InPlace,
        Kernel::Propagate | Kernel::Bc => Pattern::Copy,
    };
    let flops = match k {
        Kernel::Collide | Kernel::Fused => M::collide_flops(lat.params()),
        Kernel::Propagate | Kernel::Bc => 0,
    };
    KernelTiming {
        kernel: k,
        scheme: lat.scheme(),
        seconds,
        sites: lat.dims().sites(),
        bytes_per_site: 2 * M::Q * T::BYTES,
        flops_per_site: flops,
        pattern,
        tuned: lat.tuned(k),
        paired: lat.paired().filter(|_| k == Kernel::Fused),
    }
}

/// The median of `v` (0 when empty).
pub(crate) fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
