// Rule: every field has a rate.
// Mistake: the field `c` has none.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T, c }
        params { alpha: real }
        operators {
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        rates {
            T = alpha * lap(T);
        }
    }
}

fn main() {}
