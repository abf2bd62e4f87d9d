// Rule: a Laplacian sums over every axis and takes no axis.
// Mistake: the Laplacian is given an axis.

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
            T = alpha * lap(T, x);
        }
    }
}

fn main() {}
