//! Performance figures: timing of kernels, the bytes and flops they move, and the machine's
//! limits measured in the same run (DESIGN.md: "measure the relevant pattern in the same run as
//! the kernel, and report against it").
//!
//! A kernel that reads and writes every population once moves `2 Q · size_of::<T>()` bytes per
//! site (144 B for D2Q9 in f64). Its limit is the bandwidth of the matching access pattern:
//! an in-place read-modify-write sweep for in-place kernels (collide, AA streaming), a copy
//! between two arrays for two-copy kernels (propagate, fused A-B step). Both are counted as
//! bytes read plus bytes written, without the write-allocate reads that ordinary stores add
//! to a copy; the kernels pay the same hidden cost, so the shares are like for like.
//! Compute-bound kernels are compared with the peak flop rate, [`PEAK_DP_GFLOPS`] by default.

use std::time::Instant;

use rayon::prelude::*;

use crate::{Kernel, Lattice, Layout, LbmError, Model, Real, Scheme};

/// Peak double-precision rate of the reference machine (2 cores × 2 AVX-512 FMA pipes × 8
/// lanes × 2 flops × ≈2.6 GHz ≈ 170 GFLOP/s; DESIGN.md).
pub const PEAK_DP_GFLOPS: f64 = 170.0;

/// Measured memory bandwidths, GB/s (10⁹ bytes per second, reads plus writes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bandwidth {
    /// In-place read-modify-write sweep `a[i] = s·a[i] + t`.
    pub rmw: f64,
    /// Copy `b[i] = a[i]` between two arrays (ordinary stores).
    pub copy: f64,
}

impl Bandwidth {
    /// The bandwidth of the pattern a kernel of this scheme follows.
    pub fn for_pattern(&self, p: Pattern) -> f64 {
        match p {
            Pattern::InPlace => self.rmw,
            Pattern::Copy => self.copy,
        }
    }
}

/// The size of the largest cache of CPU 0 (its last level), bytes, from
/// `/sys/devices/system/cpu/cpu0/cache/index*/size`; `None` where it cannot be read.
pub fn last_level_cache() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| {
        let size = std::fs::read_to_string(e.ok()?.path().join("size")).ok()?;
        let size = size.trim();
        let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit())?);
        let n: usize = digits.parse().ok()?;
        Some(match unit {
            "K" => n << 10,
            "M" => n << 20,
            _ => n,
        })
    })
    .max()
}

/// The memory access pattern of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Reads and writes the same array.
    InPlace,
    /// Reads one array and writes another.
    Copy,
}

/// Measures both bandwidths on arrays of `bytes` bytes each (use well above the last-level
/// cache), best of `reps` sweeps after one warm-up.
pub fn measure_bandwidth(bytes: usize, reps: usize) -> Bandwidth {
    let n = bytes / std::mem::size_of::<f64>();
    let mut a = vec![1.0f64; n];
    let mut b = vec![0.0f64; n];
    let chunk = (n / (4 * rayon::current_num_threads())).max(4096);
    let moved = 2.0 * (n * 8) as f64;
    let rmw = best_rate(reps, moved, || {
        a.par_chunks_mut(chunk).for_each(|c| {
            for x in c {
                *x = *x * 0.999_999 + 1e-7;
            }
        })
    });
    let copy = best_rate(reps, moved, || {
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
    std::hint::black_box((&a, &b));
    Bandwidth {
        rmw: rmw / 1e9,
        copy: copy / 1e9,
    }
}

/// Best rate (units per second) of `reps` runs of `f` that each move `units`, after a warm-up.
fn best_rate(reps: usize, units: f64, mut f: impl FnMut()) -> f64 {
    f();
    (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            units / t.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

/// The timing of one kernel on one lattice.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTiming {
    /// Which kernel.
    pub kernel: Kernel,
    /// The lattice's streaming scheme.
    pub scheme: Scheme,
    /// Median seconds per iteration.
    pub seconds: f64,
    /// Lattice sites updated per iteration.
    pub sites: usize,
    /// Bytes read plus written per site.
    pub bytes_per_site: usize,
    /// Floating-point operations per site.
    pub flops_per_site: u64,
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

    /// The access pattern: collide and the AA scheme work in place, the two-copy propagate and
    /// fused step copy.
    pub fn pattern(&self) -> Pattern {
        match (self.kernel, self.scheme) {
            (Kernel::Collide, _) | (_, Scheme::InPlace) => Pattern::InPlace,
            _ => Pattern::Copy,
        }
    }

    /// The bandwidth-limited rate in MLUPS for this kernel's pattern.
    pub fn mlups_limit(&self, bw: &Bandwidth) -> f64 {
        bw.for_pattern(self.pattern()) * 1e9 / self.bytes_per_site as f64 / 1e6
    }
}

/// Times `iters` iterations of kernel `k` (after one warm-up) and returns the median.
pub fn time_kernel<M: Model, L: Layout, T: Real>(
    lat: &mut Lattice<M, L, T>,
    k: Kernel,
    iters: usize,
) -> Result<KernelTiming, LbmError> {
    lat.run_kernel(k)?;
    let mut times = Vec::with_capacity(iters.max(1));
    for _ in 0..iters.max(1) {
        let t = Instant::now();
        lat.run_kernel(k)?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let d = lat.dims();
    let flops = match k {
        Kernel::Collide | Kernel::Fused => M::collide_flops(lat.params()),
        Kernel::Propagate | Kernel::Bc => 0,
    };
    Ok(KernelTiming {
        kernel: k,
        scheme: lat.scheme(),
        seconds: times[times.len() / 2],
        sites: d.sites(),
        bytes_per_site: 2 * M::Q * T::BYTES,
        flops_per_site: flops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestD2Q9, TestParams};
    use crate::{BoundarySpec, CAoSoa};

    #[test]
    fn bandwidth_probe_reports_positive_rates() {
        let bw = measure_bandwidth(1 << 22, 2);
        assert!(
            bw.rmw > 0.0 && bw.copy > 0.0 && bw.rmw.is_finite(),
            "{bw:?}"
        );
    }

    #[test]
    fn kernel_timing_counts_bytes_sites_and_flops() {
        let p = TestParams {
            tau: 0.8,
            ax: 0.0,
            ay: 0.0,
        };
        let spec = BoundarySpec::periodic();
        let mut lat =
            Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(8, 64, p, Scheme::InPlace, &spec).unwrap();
        let t = time_kernel(&mut lat, Kernel::Fused, 3).unwrap();
        assert_eq!(
            (t.sites, t.bytes_per_site, t.flops_per_site),
            (512, 144, 150)
        );
        assert_eq!(t.pattern(), Pattern::InPlace);
        let bw = Bandwidth {
            rmw: 72.0,
            copy: 36.0,
        };
        assert!((t.mlups_limit(&bw) - 500.0).abs() < 1e-9);
        assert!((t.gbs() / t.mlups() - 0.144).abs() < 1e-12);
    }
}
