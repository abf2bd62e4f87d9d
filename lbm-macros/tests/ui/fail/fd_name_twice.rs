// Rule: fields, their components, parameters, operators and lets share one namespace.
// Mistake: the parameter `ux` has the name of the vector field `u`'s x component.

use lbm_macros::fd_scheme;

fd_scheme! {
    pub scheme Heat {
        dim = 2;
        fields { u: vector }
        params { ux: real }
        operators {
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        rates {
            u = ux * lap(u);
        }
    }
}

fn main() {}
