//! The physics settings of each case, checked by key with their defaults.

use lbm::cases::{
    AdvectionDiffusion, Cavity3d, Duct, Poiseuille, RayleighBenard, RayleighTaylor, TaylorGreen,
    TaylorGreen3d,
};

use super::CliError;
use super::settings::{Collision, Settings, bad, require};

/// The relaxation time (τ > ½ is checked by the model, which names it).
fn tau(s: &Settings, default: f64) -> Result<f64, CliError> {
    require(
        "tau",
        s.tau.unwrap_or(default),
        f64::is_finite,
        "a finite number > 1/2",
    )
}

/// The Rayleigh–Taylor case of `s` on an `lx × ly` box.
pub fn rayleigh_taylor(s: &Settings, (lx, ly): (usize, usize)) -> Result<RayleighTaylor, CliError> {
    Ok(RayleighTaylor {
        lx,
        ly,
        atwood: require(
            "atwood",
            s.atwood.unwrap_or(0.2),
            |v| v > 0.0 && v < 1.0,
            "the Atwood number lies in (0, 1)",
        )?,
        gravity: require(
            "gravity",
            s.gravity.unwrap_or(2e-4),
            |v| v > 0.0 && v < 0.01,
            "gravity in (0, 0.01) lattice units",
        )?,
        tau: tau(s, 0.55)?,
        amplitude: require(
            "amplitude",
            s.amplitude.unwrap_or(4.0),
            |v| v.abs() < ly as f64 / 4.0,
            "|amplitude| below a quarter of the height",
        )?,
        width: require(
            "width",
            s.width.unwrap_or(2.0),
            |v| v > 0.0 && v < ly as f64 / 4.0,
            "a width in (0, LY/4) sites",
        )?,
    })
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
pub fn cavity(s: &Settings) -> Result<(f64, f64), CliError> {
    let re = reynolds(s, 100.0)?;
    let lid = require(
        "lid",
        s.lid.unwrap_or(0.1),
        |v| v > 0.0 && v <= 0.3,
        "a lid speed in (0, 0.3] (the Mach number U/cs stays below about 0.5)",
    )?;
    Ok((re, lid))
}

/// The lid-driven cube of `s` with side `n`.
pub fn cavity_3d(s: &Settings, (n, _): (usize, usize)) -> Result<Cavity3d, CliError> {
    let (re, lid) = cavity(s)?;
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
    Ok(Poiseuille {
        lx,
        ly,
        tau: tau(s, 0.8)?,
        acceleration: acceleration(s)?,
    })
}

/// The duct of `s`: `lx` long, a square section of `n × n` sites.
pub fn duct(s: &Settings, (lx, n): (usize, usize)) -> Result<Duct, CliError> {
    Ok(Duct {
        lx,
        n,
        tau: tau(s, 1.0)?,
        acceleration: acceleration(s)?,
    })
}

/// The advection–diffusion case of `s` on an `n × n` box.
pub fn advection_diffusion(
    s: &Settings,
    (n, _): (usize, usize),
) -> Result<AdvectionDiffusion, CliError> {
    Ok(AdvectionDiffusion {
        n: require("lx", n, |v| v >= 16, "a side of at least 16 sites")?,
        tau: tau(s, 0.8)?,
        velocity: require(
            "velocity",
            s.velocity.unwrap_or(0.05),
            |v| v.abs() <= 0.2,
            "a flow speed in [−0.2, 0.2] (the scalar's Courant number)",
        )?,
        isotropic: false,
    })
}

/// The Taylor–Green case of `s` on an `n × n` box.
pub fn taylor_green(s: &Settings, (n, _): (usize, usize)) -> Result<TaylorGreen, CliError> {
    Ok(TaylorGreen {
        n,
        tau: tau(s, 0.8)?,
        u0: require(
            "velocity",
            s.velocity.unwrap_or(0.05),
            |v| (0.0..=0.3).contains(&v),
            "an amplitude in [0, 0.3]",
        )?,
    })
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
    let re = reynolds(s, 1600.0)?;
    let u0 = require(
        "velocity",
        s.velocity.unwrap_or(0.05),
        |v| v > 0.0 && v <= 0.3,
        "an amplitude in (0, 0.3]",
    )?;
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
    // Both relaxation times must exceed ½ by a margin the BGK/TRT collisions stay stable with.
    for (what, tau) in [
        ("flow", case.flow_params().tau),
        ("temperature", case.heat_params().tau),
    ] {
        if tau < 0.505 {
            return Err(super::settings::bad(
                "velocity",
                format!(
                    "the {what}'s relaxation time would be {tau:.4} (ν = U H √(Pr/Ra) too small): \
                     raise the velocity or the layer's height, or lower the Rayleigh number"
                ),
            ));
        }
    }
    Ok(case)
}
