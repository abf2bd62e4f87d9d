// Rule: the force is an acceleration vector with dim components.
// Mistake: gravity given as a scalar.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q37 {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2), (3, 0), (3, 1)];
        weights = [
            0.23315066913235250228650,
            0.10730609154221900241246,
            0.05766785988879488203006,
            0.01420821615845075026469,
            0.00535304900051377523273,
            0.00101193759267357547541,
            0.00024530102775771734547,
            0.00028341425299419821740
        ];
        cs2 = 1 / 1.19697977039307435897239^2;
        params { tau: real, g: real }
        moments {
            rho = sum(f);
            u = sum(f * c) / rho;
            T = sum(f * dot(c - u, c - u)) / (dim * rho * cs2);
        }
        equilibrium = hermite(order = 4);
        collision = bgk(tau = tau);
        force = -g;
    }
}

fn main() {}
