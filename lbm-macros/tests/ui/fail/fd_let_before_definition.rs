// Rule: a `let` reads only the lets before it.
// Mistake: `a` reads `b`, defined after it.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { alpha: real }
        operators {
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        let a = 2 * b;
        let b = alpha;
        rates {
            T = a * lap(T);
        }
    }
}

fn main() {}
