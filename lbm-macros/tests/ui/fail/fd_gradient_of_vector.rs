// Rule: a first derivative without an axis is the gradient of a scalar.
// Mistake: the gradient of the vector `u` (a tensor) is asked for.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { u: vector }
        params { nu: real }
        operators {
            d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]);
        }
        rates {
            u = nu * d(u);
        }
    }
}

fn main() {}
