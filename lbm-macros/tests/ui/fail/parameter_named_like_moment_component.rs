// Rule: a parameter may not take the name of a moment's component, so that formulas and
// messages can tell them apart. Mistake: an advecting velocity given as parameters `ux`, `uy`
// in a model whose own velocity moment `u` has the components `ux`, `uy`.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q5Mixed {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real, ux: real, uy: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + (cx * ux + cy * uy) / cs2);
        collision = bgk(tau = tau);
    }
}

fn main() {}
