// Rule: a k-th derivative's stencil annihilates the polynomials of degree below k.
// Mistake: the second difference's last coefficient is 2 instead of 1: the stencil does not sum to zero.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { alpha: real }
        operators {
            lap = laplacian(order = 2, stencil = [1, -2, 2]);
        }
        rates {
            T = alpha * lap(T);
        }
    }
}

fn main() {}
