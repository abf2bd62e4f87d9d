//! The loads on a case's bodies over a run: measured by momentum exchange at every step the
//! driver stops at, and averaged over a step and the one before it when both were measured
//! (the exchange alternates from one step to the next about its mean, see
//! [`lbm::geometry::MomentumExchange`]). The driver stops one step before every row of
//! diagnostics for that ([`Loads::stop_before`]).

use lbm::cases::Case;
use lbm::geometry::MomentumExchange;
use lbm::{Model, Real, Solver};

use super::CliError;

/// The bodies' links on this process's planes, and the last loads measured.
pub(super) struct Loads {
    exchanges: Vec<MomentumExchange>,
    /// The step of the last measurement and its loads: six values a body.
    last: Option<(u64, Vec<f64>)>,
    /// The loads the next row of diagnostics takes.
    now: Vec<f64>,
}

impl Loads {
    /// The links of `case`'s bodies from the sites `solver` holds.
    pub fn new<C: Case>(case: &C, solver: &dyn Solver<Model = C::Model, Real = impl Real>) -> Self {
        let (lx, ly) = case.size();
        let spec = case.boundaries();
        let exchanges: Vec<MomentumExchange> = case
            .bodies()
            .iter()
            .map(|(body, centre)| {
                MomentumExchange::on_box::<C::Model>(
                    body,
                    &spec,
                    [lx, ly, case.depth()],
                    *centre,
                    &solver.local_box(),
                )
            })
            .collect();
        let now = vec![0.0; 6 * exchanges.len()];
        Self {
            exchanges,
            last: None,
            now,
        }
    }

    /// Whether the case has bodies.
    pub fn any(&self) -> bool {
        !self.exchanges.is_empty()
    }

    /// The step before the next multiple of `every` after `now` (none when `every` is 0),
    /// where the driver stops so that the row's loads are averaged over two steps.
    pub fn stop_before(&self, now: u64, every: u64) -> Option<u64> {
        (self.any() && every > 0).then(|| lbm::driver::next_multiple(now + 1, every) - 1)
    }

    /// Measures the loads in the state of `solver` (collective), averaged with the last
    /// measurement when it was of the step before.
    pub fn measure<M: Model, T: Real>(
        &mut self,
        solver: &mut dyn Solver<Model = M, Real = T>,
    ) -> Result<(), CliError> {
        if !self.any() {
            return Ok(());
        }
        let step = solver.steps_done();
        let mut values = Vec::with_capacity(self.now.len());
        for e in &self.exchanges {
            let load = e.of(solver)?;
            values.extend(load.force.into_iter().chain(load.torque));
        }
        self.now = match &self.last {
            Some((s, before)) if s + 1 == step => values
                .iter()
                .zip(before)
                .map(|(a, b)| 0.5 * (a + b))
                .collect(),
            _ => values.clone(),
        };
        self.last = Some((step, values));
        Ok(())
    }

    /// This process's share of the loads of the last measurement, to add to the case's sums.
    pub fn values(&self) -> &[f64] {
        &self.now
    }
}
