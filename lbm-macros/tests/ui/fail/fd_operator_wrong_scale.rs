// Rule: a k-th derivative's stencil has Σ c_j j^k / k! = 1.
// Mistake: the central difference without its factor 1/2 approximates twice the derivative.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { T }
        params { a: real }
        operators {
            d = derivative(1, order = 2, stencil = [-1, 0, 1]);
        }
        rates {
            T = -a * d(T, x);
        }
    }
}

fn main() {}
