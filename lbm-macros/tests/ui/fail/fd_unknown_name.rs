// Rule: a formula reads the fields, the parameters, h and earlier lets.
// Mistake: `kappa` is not declared (the parameter is `alpha`).

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { alpha: real }
        operators {
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        rates {
            T = kappa * lap(T);
        }
    }
}

fn main() {}
