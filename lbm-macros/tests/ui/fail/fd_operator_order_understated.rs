// Rule: an operator's declared order is exact, not a lower bound.
// Mistake: the five-point Laplacian is fourth order but declared second.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { alpha: real }
        operators {
            lap = laplacian(order = 2, stencil = [-1/12, 4/3, -5/2, 4/3, -1/12]);
        }
        rates {
            T = alpha * lap(T);
        }
    }
}

fn main() {}
