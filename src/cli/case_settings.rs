//! The physics settings of each case, checked by key with their defaults.

use lbm::cases::{
    AdvectionDiffusion, Capillaries, Cavity3d, Cylinder, CylinderModel, Duct, FlowPast, Outflow,
    Poiseuille, RayleighBenard, RayleighTaylor, Setup, TaylorGreen, TaylorGreen3d,
};
use lbm::geometry::TriMesh;
use lbm::models::{D2Q5AdvectionDiffusion, D2Q9Bgk, D2Q37, D3Q19Bgk};
use lbm::{Interpolation, LayoutKind, Model};

use super::CliError;
use super::settings::{Checks, Collision, Settings, bad, require};

/// The largest amplitude of a Taylor–Green vortex: its fastest site starts at Mach
/// `u₀/cs = 0.25 √3 ≈ 0.43`, inside the second-order equilibrium's range (Mach 0.5, where the
/// divergence check stops a run).
const MAX_VORTEX_VELOCITY: f64 = 0.25;

/// Refuses a lattice of `size` sites that model `M` cannot run at all (sides below its halo),
/// before the settings that depend on the size are checked: the lattice's own problem first.
fn lattice<M: Model>(size: [usize; 3]) -> Result<(), CliError> {
    lbm::check_size::<M>(size, LayoutKind::Soa).map_err(|e| bad("lx", e.to_string()))
}

/// The relaxation time (τ > ½ is checked by the model, which names it), at most 100: the
/// viscosity cs²(τ − ½) is then 33 lattice units, so that a lattice of 128 sites loses its
/// flow to viscosity in a few dozen steps, and the BGK error, of order (τ − ½)², has grown
/// past any use (larger τ gave infinite errors and exit 0).
fn tau(s: &Settings, default: f64) -> Result<f64, CliError> {
    require(
        "tau",
        s.tau.unwrap_or(default),
        |t| t.is_finite() && t <= 100.0,
        "a number in (1/2, 100]: lower the viscosity, or raise the resolution",
    )
}

/// The Rayleigh–Taylor case of `s` on an `lx × ly` box.
pub fn rayleigh_taylor(s: &Settings, (lx, ly): (usize, usize)) -> Result<RayleighTaylor, CliError> {
    lattice::<D2Q37>([lx, ly, 1])?;
    let mut c = Checks::default();
    let case = RayleighTaylor {
        lx,
        ly,
        atwood: c.take(require(
            "atwood",
            s.atwood.unwrap_or(0.2),
            |v| v > 0.0 && v < 1.0,
            "the Atwood number lies in (0, 1)",
        )),
        gravity: c.take(require(
            "gravity",
            s.gravity.unwrap_or(2e-4),
            |v| v > 0.0 && v < 0.01,
            "gravity in (0, 0.01) lattice units",
        )),
        tau: c.take(tau(s, 0.55)),
        amplitude: c.take(require(
            "amplitude",
            s.amplitude.unwrap_or(4.0),
            |v| v.abs() < ly as f64 / 4.0,
            "|amplitude| below a quarter of the height",
        )),
        width: c.take(require(
            "width",
            s.width.unwrap_or(2.0),
            |v| v > 0.0 && v < ly as f64 / 4.0,
            "a width in (0, LY/4) sites",
        )),
    };
    c.done()?;
    Ok(case)
}

/// The Reynolds number (`default` when unset).
fn reynolds(s: &Settings, default: f64) -> Result<f64, CliError> {
    require(
        "re",
        s.re.unwrap_or(default),
        |v| v > 0.0 && v.is_finite(),
        "a positive Reynolds number",
    )
}

/// The cavity's Reynolds number and lid speed.
pub fn cavity(s: &Settings, n: usize) -> Result<(f64, f64), CliError> {
    lattice::<D2Q9Bgk>([n, n, 1])?;
    let mut c = Checks::default();
    let re = c.take(reynolds(s, 100.0));
    let lid = c.take(require(
        "lid",
        s.lid.unwrap_or(0.1),
        |v| v > 0.0 && v <= 0.3,
        "a lid speed in (0, 0.3] (the Mach number U/cs stays below about 0.5)",
    ));
    c.done()?;
    // τ = 3 U n / Re + ½ (cs² = 1/3 in D2Q9 and D3Q19).
    let tau = 3.0 * lid * n as f64 / re + 0.5;
    relaxation(
        "re",
        tau,
        "lower --re, or give the cavity more sites (--lx)",
        "raise --re",
    )?;
    Ok((re, lid))
}

/// Refuses a relaxation time `tau` that follows from other settings (`key` the one to blame)
/// outside (½ + 10⁻⁶, 100]: a viscosity that vanishes in floating point (the collision
/// would not relax) or one past any use (see [`tau`]). `lower` says how to raise τ, `higher`
/// how to lower it.
fn relaxation(key: &str, tau: f64, lower: &str, higher: &str) -> Result<(), CliError> {
    if tau.is_nan() || tau - 0.5 < 1e-6 {
        return Err(bad(
            key,
            format!("the relaxation time would be {tau}, too close to 1/2: {lower}"),
        ));
    }
    if tau > 100.0 {
        return Err(bad(
            key,
            format!("the relaxation time would be {tau:.4e}, above 100: {higher}"),
        ));
    }
    Ok(())
}

/// The lid-driven cube of `s` with side `n`.
pub fn cavity_3d(s: &Settings, (n, _): (usize, usize)) -> Result<Cavity3d, CliError> {
    lattice::<D3Q19Bgk>([n, n, n])?;
    let (re, lid) = cavity(s, n)?;
    Ok(Cavity3d { n, re, lid })
}

/// The body acceleration of a force-driven flow.
fn acceleration(s: &Settings) -> Result<f64, CliError> {
    require(
        "acceleration",
        s.acceleration.unwrap_or(1e-6),
        |v| v.abs() < 1e-3,
        "|acceleration| below 1e-3",
    )
}

/// The Poiseuille case of `s` in an `lx × ly` channel.
pub fn poiseuille(s: &Settings, (lx, ly): (usize, usize)) -> Result<Poiseuille, CliError> {
    lattice::<D2Q9Bgk>([lx, ly, 1])?;
    let mut c = Checks::default();
    let case = Poiseuille {
        lx,
        ly,
        tau: c.take(tau(s, 0.8)),
        acceleration: c.take(acceleration(s)),
    };
    c.done()?;
    Ok(case)
}

/// The duct of `s`: `lx` long, a square section of `n × n` sites.
pub fn duct(s: &Settings, (lx, n): (usize, usize)) -> Result<Duct, CliError> {
    lattice::<D3Q19Bgk>([lx, n, n])?;
    let mut c = Checks::default();
    let case = Duct {
        lx,
        n,
        tau: c.take(tau(s, 1.0)),
        acceleration: c.take(acceleration(s)),
    };
    c.done()?;
    Ok(case)
}

/// The capillaries of `s` in a box `lx` long, `side × side` across: the side a multiple of the
/// pitch, the diameter at least 4 sites (two a radius) and at most the pitch less 2 (a wall
/// between neighbours).
pub fn capillaries(s: &Settings, (lx, side): (usize, usize)) -> Result<Capillaries, CliError> {
    lattice::<D3Q19Bgk>([lx, side, side])?;
    let mut c = Checks::default();
    let pitch = c.take(require(
        "pitch",
        s.pitch.unwrap_or(32),
        |p| p >= 6 && side.is_multiple_of(p),
        &format!("at least 6 sites, a divisor of the box's side ly = {side}"),
    ));
    let case = Capillaries {
        lx,
        side,
        pitch,
        diameter: c.take(require(
            "diameter",
            s.diameter.unwrap_or(12),
            |d| d >= 4 && d + 2 <= pitch,
            &format!(
                "at least 4 sites and at most the pitch less 2, {}",
                pitch.saturating_sub(2)
            ),
        )),
        tau: c.take(tau(s, 0.8)),
        acceleration: c.take(acceleration(s)),
    };
    c.done()?;
    Ok(case)
}

/// The advection–diffusion case of `s` on an `n × n` box.
pub fn advection_diffusion(
    s: &Settings,
    (n, _): (usize, usize),
) -> Result<AdvectionDiffusion, CliError> {
    lattice::<D2Q5AdvectionDiffusion>([n, n, 1])?;
    let mut c = Checks::default();
    let case = AdvectionDiffusion {
        n: c.take(require("lx", n, |v| v >= 16, "a side of at least 16 sites")),
        tau: c.take(tau(s, 0.8)),
        velocity: c.take(require(
            "velocity",
            s.velocity.unwrap_or(0.05),
            |v| v.abs() <= 0.2,
            "a flow speed in [−0.2, 0.2] (the scalar's Courant number)",
        )),
        isotropic: false,
    };
    c.done()?;
    Ok(case)
}

/// The Taylor–Green case of `s` on an `n × n` box.
pub fn taylor_green(s: &Settings, (n, _): (usize, usize)) -> Result<TaylorGreen, CliError> {
    lattice::<D2Q9Bgk>([n, n, 1])?;
    let mut c = Checks::default();
    let case = TaylorGreen {
        n,
        tau: c.take(tau(s, 0.8)),
        u0: c.take(vortex_velocity(s, true)),
    };
    c.done()?;
    Ok(case)
}

/// The amplitude `u₀` of a Taylor–Green vortex, up to [`MAX_VORTEX_VELOCITY`]; 0 (a fluid
/// at rest) is allowed where `rest`.
fn vortex_velocity(s: &Settings, rest: bool) -> Result<f64, CliError> {
    require(
        "velocity",
        s.velocity.unwrap_or(0.05),
        move |v: f64| (if rest { v >= 0.0 } else { v > 0.0 }) && v <= MAX_VORTEX_VELOCITY,
        &format!(
            "an amplitude in {}0, {MAX_VORTEX_VELOCITY}] (the vortex starts at Mach \
             u₀/cs = u₀ √3, and the second-order equilibrium holds below Mach 0.5)",
            if rest { "[" } else { "(" }
        ),
    )
}

/// The Smagorinsky constant of `s` when its collision is Smagorinsky's (0.1 by default);
/// `--smagorinsky` with another collision is refused.
pub fn smagorinsky(s: &Settings, collision: Collision) -> Result<f64, CliError> {
    match (collision, s.smagorinsky) {
        (Collision::Smagorinsky, c) => require(
            "smagorinsky",
            c.unwrap_or(0.1),
            |c| (0.0..=1.0).contains(&c),
            "a Smagorinsky constant in [0, 1] (0.1–0.2 for LES)",
        ),
        (_, Some(_)) => Err(bad(
            "smagorinsky",
            "sets the constant of --collision smagorinsky: add that option, or drop this one",
        )),
        (_, None) => Ok(0.0),
    }
}

/// The 3-D Taylor–Green case of `s` on an `n³` cube (Re = 1600 by default, the DNS's).
pub fn taylor_green_3d(s: &Settings, (n, _): (usize, usize)) -> Result<TaylorGreen3d, CliError> {
    lattice::<D3Q19Bgk>([n, n, n])?;
    let mut c = Checks::default();
    let re = c.take(reynolds(s, 1600.0));
    let u0 = c.take(vortex_velocity(s, false));
    c.done()?;
    Ok(TaylorGreen3d::new(n, re, u0))
}

/// The Rayleigh–Bénard case of `s` on a layer of `height` sites (its width follows: two rolls
/// of the critical wavelength).
pub fn rayleigh_benard(s: &Settings, height: usize) -> Result<RayleighBenard, CliError> {
    let positive =
        |key: &str, v: f64| require(key, v, |v| v > 0.0 && v.is_finite(), "a positive number");
    let case = RayleighBenard {
        height: require("ly", height, |h| h >= 8, "a layer of at least 8 sites")?,
        rayleigh: positive("rayleigh", s.rayleigh.unwrap_or(1e4))?,
        prandtl: positive("prandtl", s.prandtl.unwrap_or(0.71))?,
        velocity: require(
            "velocity",
            s.velocity.unwrap_or(0.1),
            |v| v > 0.0 && v <= 0.2,
            "a free-fall velocity in (0, 0.2] (its square is the Mach number's budget)",
        )?,
        ..RayleighBenard::new(height, 1e4)
    };
    let (lx, ly) = case.size();
    lattice::<D2Q9Bgk>([lx, ly, 1]).map_err(|_| {
        bad(
            "ly",
            format!("a layer of {height} sites is {lx} wide: too large a lattice to address"),
        )
    })?;
    // Both relaxation times must exceed ½ by a margin the BGK/TRT collisions stay stable with,
    // and stay below 100. The setting blamed is the one given.
    let key = match (s.prandtl, s.rayleigh) {
        (Some(_), _) => "prandtl",
        (None, Some(_)) => "rayleigh",
        (None, None) => "velocity",
    };
    for (what, formula, tau, raise, lower) in [
        (
            "flow",
            "ν = U H √(Pr/Ra)",
            case.flow_params().tau,
            "raise --velocity, --ly or --prandtl, or lower --rayleigh",
            "lower --velocity, --ly or --prandtl, or raise --rayleigh",
        ),
        (
            "temperature",
            "κ = U H / √(Pr Ra)",
            case.heat_params().tau,
            "raise --velocity or --ly, or lower --prandtl or --rayleigh",
            "lower --velocity or --ly, or raise --prandtl or --rayleigh",
        ),
    ] {
        let would = format!("the {what}'s relaxation time would be {tau:.4e} ({formula})");
        if tau < 0.505 {
            return Err(bad(key, format!("{would}, below 0.505: {raise}")));
        }
        if tau.is_nan() || tau > 100.0 {
            return Err(bad(key, format!("{would}, above 100: {lower}")));
        }
    }
    Ok(case)
}

/// The cylinder case of `s`: the diameter in sites, the Reynolds number and the inflow's peak,
/// checked together; `lx` and `ly` follow from the diameter.
pub fn cylinder<M: CylinderModel>(s: &Settings) -> Result<Cylinder<M>, CliError> {
    let mut c = Checks::default();
    for (key, given) in [("lx", s.lx), ("ly", s.ly)] {
        if given.is_some() {
            c.keep(bad(
                key,
                "the cylinder's channel follows from its diameter (22 D + 1 by 4.1 D sites): \
                 give --diameter instead",
            ));
        }
    }
    let diameter = c.take(require(
        "diameter",
        s.diameter.unwrap_or(M::DEFAULTS.0),
        |d| d >= 10 && d % 10 == 0 && d <= 2000,
        "a multiple of 10 from 10 to 2000 sites (the channel, 4.1 D high, is then a whole \
         number of sites)",
    ));
    let re = c.take(reynolds(s, 20.0));
    let peak = c.take(require(
        "velocity",
        s.velocity.unwrap_or(M::DEFAULTS.1),
        |v| v > 0.0 && v <= 0.2,
        "an inflow peak in (0, 0.2] (lattice units: the Mach number stays below 0.35)",
    ));
    let spin = c.take(require(
        "spin",
        s.spin.unwrap_or(0.0),
        |a| a.is_finite() && (a * M::MEAN * s.velocity.unwrap_or(M::DEFAULTS.1)).abs() <= 0.2,
        "a finite turn whose surface speed, α times the mean inflow (lattice units), is at most \
         0.2: lower --spin or --velocity",
    ));
    c.done()?;
    let walls = s.walls.map_or(Interpolation::Linear, Into::into);
    let case = Cylinder::<M>::new(diameter, re, peak)
        .with_walls(walls)
        .with_spin(spin)
        .with_outflow(s.outflow.map_or(Outflow::Pressure, Into::into));
    if case.tau() <= 0.505 {
        return Err(bad(
            "re",
            format!(
                "{re} gives τ = {:.4} with D = {diameter} sites and an inflow peak {peak}: below \
                 0.505 the collision is unstable; raise --diameter or --velocity, or lower --re",
                case.tau()
            ),
        ));
    }
    Ok(case)
}

/// Three coordinates of `key`, finite.
fn triple(key: &str, value: Option<&Vec<f64>>) -> Result<Option<[f64; 3]>, CliError> {
    match value.map(|v| v.as_slice()) {
        None => Ok(None),
        Some(&[x, y, z]) if [x, y, z].iter().all(|v| v.is_finite()) => Ok(Some([x, y, z])),
        Some(v) => Err(bad(
            key,
            format!("{v:?} is not allowed: three finite numbers x, y, z are expected"),
        )),
    }
}

/// The flow past a body of `s`: the mesh read from `stl` (or the shipped sphere), its
/// placement, the channel, the Reynolds number and the inflow, checked together; then the
/// placement in the channel and the relaxation time.
pub fn flow_past(s: &Settings) -> Result<FlowPast, CliError> {
    let mut c = Checks::default();
    let mesh = match &s.stl {
        Some(path) => c.take(
            lbm::io::read_bounded(path, lbm::geometry::STL_LIMIT)
                .map_err(|e| format!("STL file {}: {e}", path.display()))
                .and_then(|b| {
                    TriMesh::parse_stl(&b, &path.display().to_string()).map_err(|e| e.to_string())
                })
                .map(Some)
                .map_err(|e| bad("stl", e)),
        ),
        None => None,
    };
    let extent = c.take(require(
        "diameter",
        s.diameter.unwrap_or(10),
        |d| (4..=1000).contains(&d),
        "4 to 1000 sites across the body's largest side",
    ));
    let setup = Setup {
        extent,
        rotate: c
            .take(triple("rotate", s.rotate.as_ref()))
            .unwrap_or([0.0; 3]),
        at: c.take(triple("at", s.at.as_ref())),
        lx: s.lx,
        ly: s.ly,
        re: c.take(reynolds(s, 20.0)),
        speed: c.take(require(
            "velocity",
            s.velocity.unwrap_or(0.05),
            |v| v > 0.0 && v <= 0.2,
            "an inflow in (0, 0.2] (lattice units: the Mach number stays below 0.35)",
        )),
    };
    c.done()?;
    let placed = match (mesh, &s.stl) {
        (Some(mesh), Some(path)) => FlowPast::mesh(path.display().to_string(), mesh, setup),
        _ => FlowPast::sphere(setup),
    };
    // The setup's fields by the program's keys.
    let key = |setting: &str| {
        match setting {
            "extent" => "diameter",
            "speed" => "velocity",
            "shape" => "stl",
            other => other,
        }
        .to_string()
    };
    let walls = s.walls.map_or(Interpolation::Linear, Into::into);
    let case = placed
        .map_err(|e| bad(&key(e.setting), e.message))?
        .with_walls(walls)
        .with_outflow(s.outflow.map_or(Outflow::Pressure, Into::into));
    let (lx, ly) = lbm::cases::Case::size(&case);
    lattice::<lbm::models::D3Q19Trt>([lx, ly, ly])?;
    if case.tau() <= 0.505 {
        return Err(bad(
            "re",
            format!(
                "{} gives τ = {:.4} with a body {extent} sites across and an inflow {}: below \
                 0.505 the collision is unstable; raise --diameter or --velocity, or lower \
                 --re",
                case.setup.re,
                case.tau(),
                case.setup.speed
            ),
        ));
    }
    Ok(case)
}
