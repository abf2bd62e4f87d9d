// Rule: a derivative's axis exists in the scheme's dimension.
// Mistake: a derivative along z in a 2-D scheme.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { a: real }
        operators {
            d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]);
        }
        rates {
            T = -a * d(T, z);
        }
    }
}

fn main() {}
