//! `lbm bench --split`: the host/device split swept over `M` (Calore et al. 2019, Fig. 8) — the measured
//! MLUPS beside the model's prediction (eq. 4–8, calibrated at start-up), with the tuned `M*`
//! and the best measured `M` marked.

use std::sync::Arc;
use std::time::Instant;

use lbm::domain::GlobalSpec;
use lbm::gpu::GpuContext;
use lbm::gpu::workgroup::TUNING_STEPS;
use lbm::hetero::{
    CALIBRATION_STEPS, HostLayout, SplitChoice, SplitModel, calibrate, nearest_admissible,
    split_lattice,
};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams, D2Q37, D2Q37Params, D3Q19Bgk};
use lbm::{BoundarySpec, Layout, Model, Real, Scheme, Wall};

use super::bench_args::{BenchArgs, Which, d3q19_duct, lattice_fits, open_context, require_one_of};
use super::{CliError, Generic, dispatch};

/// Default sweep lattices: a few milliseconds per step on two cores.
const D2Q9_SIZE: (usize, usize) = (512, 512);
const D2Q37_SIZE: (usize, usize) = (192, 128);

/// Runs the sweep for the chosen models, in the first chosen layout and precision.
pub fn run(a: &BenchArgs) -> Result<(), CliError> {
    require_one_of(a, &[Which::D2q9, Which::D2q37, Which::D3q19], "split")?;
    // The lattices of the sweep fit, in the layout and precision it runs, before the device
    // is opened.
    let layout = [a.first_layout()];
    let first = |key, size| (key, size, &layout[..], &a.precision[..1]);
    if a.model.includes(Which::D2q9) {
        let (lx, ly) = a.split_size.unwrap_or(D2Q9_SIZE);
        lattice_fits::<D2Q9Bgk>(first("split-size", [lx, ly, 1]))?;
    }
    if a.model.includes(Which::D2q37) {
        let (lx, ly) = a.split_size.unwrap_or(D2Q37_SIZE);
        lattice_fits::<D2Q37>(first("split-size", [lx, ly, 1]))?;
    }
    if a.model.includes(Which::D3q19) {
        lattice_fits::<D3Q19Bgk>(first("split-d3q19-size", a.split_d3q19_size))?;
    }
    let ctx = open_context(a)?;
    say!(
        "Host/device split (Calore et al. 2019 §6.1, Fig. 8) on {}",
        ctx.describe()
    );
    if ctx.is_cpu() {
        say!(
            "device is a CPU (lavapipe): it shares the host's cores, so the balance found is a \
             real one, but not a GPU one"
        );
    }
    let (layout, precision) = (layout[0], a.precision[0]);
    if a.model.includes(Which::D2q9) {
        let spec = GlobalSpec::<D2Q9Bgk> {
            lx: a.split_size.unwrap_or(D2Q9_SIZE).0,
            ly: a.split_size.unwrap_or(D2Q9_SIZE).1,
            lz: 1,
            params: D2Q9BgkParams {
                tau: 0.8,
                ax: 1e-6,
                ay: 0.0,
            },
            boundaries: BoundarySpec::channel(),
        };
        let what = "channel, body force";
        dispatch(
            layout,
            precision,
            Sweep {
                a,
                ctx: &ctx,
                spec,
                what,
            },
        )?;
    }
    if a.model.includes(Which::D2q37) {
        let spec = GlobalSpec::<D2Q37> {
            lx: a.split_size.unwrap_or(D2Q37_SIZE).0,
            ly: a.split_size.unwrap_or(D2Q37_SIZE).1,
            lz: 1,
            params: D2Q37Params { tau: 0.8, g: 1e-5 },
            boundaries: BoundarySpec {
                bottom: Some(Wall::Thermal { temperature: 1.0 }),
                top: Some(Wall::Thermal { temperature: 1.0 }),
                ..BoundarySpec::default()
            },
        };
        let what = "thermal walls, gravity";
        dispatch(
            layout,
            precision,
            Sweep {
                a,
                ctx: &ctx,
                spec,
                what,
            },
        )?;
    }
    if a.model.includes(Which::D3q19) {
        let spec = d3q19_duct(a.split_d3q19_size);
        let what = "duct, body force";
        dispatch(
            layout,
            precision,
            Sweep {
                a,
                ctx: &ctx,
                spec,
                what,
            },
        )?;
    }
    Ok(())
}

/// One model's sweep.
struct Sweep<'a, M: Model> {
    a: &'a BenchArgs,
    ctx: &'a Arc<GpuContext>,
    spec: GlobalSpec<M>,
    /// The boundaries, in words.
    what: &'static str,
}

impl<M: Model> Generic for Sweep<'_, M> {
    type Output = Result<(), CliError>;
    fn run<L: Layout, T: Real>(self) -> Self::Output {
        let (spec, a) = (&self.spec, self.a);
        let lx = spec.lx;
        let size = match spec.lz {
            1 => format!("{lx}×{}", spec.ly),
            lz => format!("{lx}×{}×{lz}", spec.ly),
        };
        say!(
            "\n{} {} {}, {size} ({}), {} timed steps per point",
            M::NAME,
            L::NAME,
            T::NAME,
            self.what,
            a.split_steps
        );
        let host = HostLayout::<M, T>::of::<L>();
        let model = calibrate(self.ctx, (spec, host), CALIBRATION_STEPS)?;
        print_model(&model);
        let tuned = model.optimal_m();
        let n = a.split_points.max(2);
        let mut ms: Vec<usize> = (0..n)
            .map(|k| nearest_admissible(lx, M::HALO, (k * lx) as f64 / (2 * (n - 1)) as f64))
            .chain([tuned])
            .collect();
        ms.sort_unstable();
        ms.dedup();
        let measured = ms
            .iter()
            .map(|&m| measure(self.ctx, (spec, host), m, a.split_steps))
            .collect::<Result<Vec<f64>, CliError>>()?;
        let best = (0..ms.len())
            .max_by(|&i, &j| measured[i].total_cmp(&measured[j]))
            .unwrap_or(0);
        say!(
            "{:>6} {:>7} {:>15} {:>12}",
            "M",
            "2M/LX",
            "measured MLUPS",
            "model MLUPS"
        );
        for (k, &m) in ms.iter().enumerate() {
            let mut marks = Vec::new();
            if m == 0 {
                marks.push("device only");
            }
            if 2 * m == lx {
                marks.push("host only");
            }
            if m == tuned {
                marks.push("<- M* (tuned)");
            }
            if k == best {
                marks.push("<- best measured");
            }
            say!(
                "{m:>6} {:>7.3} {:>15.2} {:>12.2}   {}",
                (2 * m) as f64 / lx as f64,
                measured[k],
                model.mlups(m),
                marks.join(", ")
            );
        }
        let at = |m: usize| ms.iter().position(|&k| k == m).map_or(0.0, |k| measured[k]);
        say!(
            "tuned M* = {tuned} (2M/LX = {:.3}): {:.2} MLUPS; best measured M = {} \
             (2M/LX = {:.3}): {:.2} MLUPS; the tuned split reaches {:.0}% of the best; \
             device only {:.2}, host only {:.2} MLUPS",
            (2 * tuned) as f64 / lx as f64,
            at(tuned),
            ms[best],
            (2 * ms[best]) as f64 / lx as f64,
            measured[best],
            100.0 * at(tuned) / measured[best],
            at(0),
            at(lx / 2)
        );
        Ok(())
    }
}

fn print_model(m: &SplitModel) {
    say!(
        "calibration: t_d = {:.2} ns/site, t_h = {:.2} ns/site (each beside the other); alone \
         t_d = {:.2}, t_h = {:.2} ns/site; swap {:.1} ns/row; eq. 8 balance point M* = {:.1}",
        1e9 * m.t_d,
        1e9 * m.t_h,
        1e9 * m.t_d_alone,
        1e9 * m.t_h_alone,
        1e9 * m.t_swap,
        m.balance_point()
    );
}

/// Measured MLUPS of `steps` steps with split `m`, after two warm-up steps and, on the device
/// alone, the tuning of its workgroup size (which a run does in its first steps; timed within
/// the point, its rounds and the building of their pipelines would count as stepping).
fn measure<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    (spec, host): (&GlobalSpec<M>, HostLayout<M, T>),
    m: usize,
    steps: u64,
) -> Result<f64, CliError> {
    let columns = SplitChoice::Columns(m);
    let mut lat = split_lattice(ctx, (spec.clone(), host), Scheme::TwoCopy, columns)?;
    let tuning = if m == 0 { TUNING_STEPS } else { 0 };
    lat.advance(tuning + 2)?;
    let t0 = Instant::now();
    lat.advance(steps)?;
    Ok((spec.lx * spec.plane()) as f64 * steps as f64 / t0.elapsed().as_secs_f64() / 1e6)
}
