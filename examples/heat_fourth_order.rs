//! A finite-difference scheme of the user's: the heat equation `∂T/∂t = α ∇²T` with the
//! fourth-order five-point Laplacian, declared with `fd_scheme!` (the macro proves the
//! stencil's order from its Taylor expansion) and advanced by Williamson's low-storage
//! third-order Runge–Kutta scheme on a periodic square of side 1.
//!
//! The exact solution from `T = sin(2πx) sin(2πy)` decays as `exp(−8π²α t)`. The example runs
//! it on 16², 32² and 64² nodes with `Δt ∝ h²` (so the time error, O(Δt³) = O(h⁶), is far
//! below the space error) and exits with failure unless the error falls at fourth order.
//!
//! ```text
//! cargo run --release --example heat_fourth_order
//! ```

use std::f64::consts::PI;

use lbm::fd::{FdGrid, FdScheme, Side};
use lbm::fd_scheme;

fd_scheme! {
    /// The heat equation with the fourth-order Laplacian.
    pub scheme Heat4 {
        dim = 2;
        fields { T }
        params { alpha: real }
        operators {
            lap = laplacian(order = 4, stencil = [-1/12, 4/3, -5/2, 4/3, -1/12]);
        }
        rates { T = alpha * lap(T); }
        integrator = rk3;
    }
}

/// The largest error against the exact solution at `t_end` on `n × n` nodes.
fn error(n: usize, alpha: f64, t_end: f64) -> Result<f64, lbm::fd::FdError> {
    let h = 1.0 / n as f64;
    let sides = vec![Side::Periodic; 4];
    let mut g: FdGrid<Heat4, f64> = FdGrid::new([n, n, 1], h, Heat4Params { alpha }, sides)?;
    let mode = |x: [f64; 3]| (2.0 * PI * x[0]).sin() * (2.0 * PI * x[1]).sin();
    g.set(0, mode);
    // Δt = 0.1 h²/α, an integer number of steps to t_end.
    let steps = (t_end / (0.1 * h * h / alpha)).ceil() as u64;
    g.advance(steps, t_end / steps as f64)?;
    let decay = (-8.0 * PI * PI * alpha * t_end).exp();
    let mut worst: f64 = 0.0;
    for j in 0..n {
        for i in 0..n {
            let x = [i as f64 * h, j as f64 * h, 0.0];
            worst = worst.max((g.value(0, [i, j, 0]) - decay * mode(x)).abs());
        }
    }
    Ok(worst)
}

fn main() {
    let (alpha, t_end) = (0.01, 1.0);
    println!(
        "{}: reach {}, {} flops per node",
        Heat4::NAME,
        Heat4::REACH,
        Heat4::FLOPS
    );
    for op in Heat4::OPERATORS {
        println!("  {op}");
    }
    let mut previous: Option<f64> = None;
    let mut orders = Vec::new();
    for n in [16, 32, 64] {
        let e = match error(n, alpha, t_end) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        let order = previous.map(|p| (p / e).log2());
        match order {
            Some(o) => println!("{n:>3}² nodes: max error {e:.3e}, observed order {o:.2}"),
            None => println!("{n:>3}² nodes: max error {e:.3e}"),
        }
        orders.extend(order);
        previous = Some(e);
    }
    if orders.iter().any(|o| (o - 4.0).abs() > 0.3) {
        eprintln!("the error does not fall at fourth order: {orders:?}");
        std::process::exit(1);
    }
    println!("fourth order, as the macro proved for the stencil");
}
