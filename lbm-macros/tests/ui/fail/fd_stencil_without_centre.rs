// Rule: a stencil of an even number of coefficients says where it starts.
// Mistake: a four-point stencil without `from`.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { a: real }
        operators {
            d = derivative(1, order = 2, stencil = [1/6, -1, 1/2, 1/3]);
        }
        rates {
            T = -a * d(T, x);
        }
    }
}

fn main() {}
