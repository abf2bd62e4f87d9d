// Rule: an operator's declared order of accuracy is the one its Taylor expansion proves.
// Mistake: the two-point forward difference is declared second order; it is first order.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { alpha: real }
        operators {
            d = derivative(1, order = 2, stencil = [-1, 1], from = 0);
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        rates {
            T = alpha * lap(T) - d(T, x);
        }
    }
}

fn main() {}
