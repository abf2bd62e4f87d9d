// Rule: the built-in names (h, the axes, the functions) are not redeclared.
// Mistake: a parameter is named `h`, the grid spacing's name.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { h: real }
        operators {
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        rates {
            T = h * lap(T);
        }
    }
}

fn main() {}
