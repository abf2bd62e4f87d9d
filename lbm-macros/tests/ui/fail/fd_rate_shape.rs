// Rule: a vector field's rate is a vector of dim components.
// Mistake: the rate of the vector `u` is a scalar.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { u: vector }
        params { nu: real }
        operators {
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        rates {
            u = nu * lap(ux);
        }
    }
}

fn main() {}
