//! Lattices that read each other's moments: the double-distribution models of thermal flow, a
//! flow lattice whose body force depends on the temperature carried by a second lattice, which
//! the flow's velocity advects (the Boussinesq system of Krüger et al. 2017, *The Lattice
//! Boltzmann Method*, §8.4; Guo, Shi & Zheng 2002, Int. J. Numer. Meth. Fluids 39, 325).
//!
//! [`Coupled`] holds two solvers on the same grid and a list of *links*: a field of one
//! lattice's model (a parameter declared `field`, [`Model::FIELDS`]) takes the values of a
//! moment of the other lattice, site by site. One coupled step, from the states at time `t`:
//!
//! ```text
//! fields of A ← moments of B at t
//! fields of B ← moments of A at t      (A's moments with A's fields at t: with a body force
//!                                       of those fields, u = Σ f c / ρ + a(t)/2)
//! one step of A, one step of B         (each collision sees the other's moments at t)
//! ```
//!
//! so both collisions of a step see the same instant; a moment of B that depends on B's own
//! fields is read with the fields of the step before. Each lattice keeps its own scheme,
//! layout and precision; both are checkpointed as one set ([`Coupled::write_checkpoint_about`],
//! atomic as a whole: a run killed while writing it resumes from the previous set).

use std::collections::BTreeMap;
use std::path::Path;

use crate::checkpoint::{self, part_path, publish_set, read_set, CheckpointError};
use crate::{read_checkpoint, Error, LbmError, Model, Solver};

/// The names of the two lattices' parts in a checkpoint set.
const PARTS: [&str; 2] = ["first", "second"];

/// One link: field `field` (index in [`Model::FIELDS`]) takes moment `moment` (index in
/// [`Model::MOMENT_NAMES`]) of the other lattice.
#[derive(Debug, Clone)]
struct Link {
    field: &'static str,
    moment: usize,
}

/// Two lattices of the same extent, stepped together, each reading moments of the other as
/// its fields (see the module documentation).
pub struct Coupled<A: Solver, B: Solver> {
    a: A,
    b: B,
    a_reads: Vec<Link>,
    b_reads: Vec<Link>,
    /// The fields may not hold the current states' moments (new links, lattices changed).
    stale: bool,
}

impl<A: Solver, B: Solver> Coupled<A, B> {
    /// Couples `a` and `b`, which must cover the same grid and hold the same planes, and have
    /// done the same number of steps; no link yet.
    pub fn new(a: A, b: B) -> Result<Self, Error> {
        let (ea, eb) = (a.extent(), b.extent());
        if ea != eb || a.local_box() != b.local_box() {
            return Err(shape(format!(
                "coupled lattices must cover the same grid: {} ({ea}, sites {:?}) and {} ({eb}, sites {:?})",
                A::Model::NAME,
                a.local_box(),
                B::Model::NAME,
                b.local_box()
            )));
        }
        if a.steps_done() != b.steps_done() {
            return Err(shape(format!(
                "coupled lattices must start at the same step: {} is at step {}, {} at step {}",
                A::Model::NAME,
                a.steps_done(),
                B::Model::NAME,
                b.steps_done()
            )));
        }
        Ok(Self {
            a,
            b,
            a_reads: Vec::new(),
            b_reads: Vec::new(),
            stale: true,
        })
    }

    /// Field `field` of the first lattice's model takes the moment `moment` of the second.
    pub fn first_reads(mut self, field: &str, moment: &str) -> Result<Self, Error> {
        let link = link::<A::Model, B::Model>(&self.a_reads, field, moment)?;
        self.a_reads.push(link);
        self.stale = true;
        Ok(self)
    }

    /// Field `field` of the second lattice's model takes the moment `moment` of the first.
    pub fn second_reads(mut self, field: &str, moment: &str) -> Result<Self, Error> {
        let link = link::<B::Model, A::Model>(&self.b_reads, field, moment)?;
        self.b_reads.push(link);
        self.stale = true;
        Ok(self)
    }

    /// The first lattice.
    pub fn first(&self) -> &A {
        &self.a
    }

    /// The second lattice.
    pub fn second(&self) -> &B {
        &self.b
    }

    /// The output moments of both lattices ([`Solver::output_moments`], collective): the
    /// state does not change.
    pub fn output_moments(&mut self) -> Result<[Vec<Vec<f64>>; 2], Error> {
        Ok([self.a.output_moments()?, self.b.output_moments()?])
    }

    /// Both lattices, to change or inspect them (their links stay).
    pub fn lattices_mut(&mut self) -> (&mut A, &mut B) {
        self.stale = true;
        (&mut self.a, &mut self.b)
    }

    /// Gives the links' fields the moments of the current states (the first lattice's fields
    /// first, see the module documentation). [`Coupled::advance`] does it before every step;
    /// call it before reading moments that depend on the fields (a forced velocity).
    pub fn exchange(&mut self) -> Result<(), Error> {
        if !self.a_reads.is_empty() {
            let mb = self.b.local_moments()?;
            for l in &self.a_reads {
                self.a.set_local_field(l.field, &mb[l.moment])?;
            }
        }
        if !self.b_reads.is_empty() {
            let ma = self.a.local_moments()?;
            for l in &self.b_reads {
                self.b.set_local_field(l.field, &ma[l.moment])?;
            }
        }
        self.stale = false;
        Ok(())
    }

    /// Runs `n` coupled steps; afterwards the fields hold the moments of the new states (so
    /// the next call starts without an exchange).
    pub fn advance(&mut self, n: u64) -> Result<(), Error> {
        for _ in 0..n {
            if self.stale {
                self.exchange()?;
            }
            self.a.advance(1)?;
            self.b.advance(1)?;
            self.stale = true;
        }
        if self.stale {
            self.exchange()?;
        }
        Ok(())
    }

    /// Steps done (both lattices have done as many).
    pub fn steps_done(&self) -> u64 {
        self.a.steps_done()
    }

    /// Checks both lattices for divergence ([`Solver::check`]).
    pub fn check(&self) -> Result<(), Error> {
        self.a.check()?;
        self.b.check()
    }

    /// Writes both lattices' states as one checkpoint set at `path` (collective,
    /// [`crate::CheckpointSet`]): each lattice's checkpoint under a name no earlier set
    /// used, then the set's manifest, saying `about` of the run.
    pub fn write_checkpoint_about(
        &self,
        path: &Path,
        about: &BTreeMap<String, String>,
    ) -> Result<(), Error> {
        let run = checkpoint::run_name(self.a.group().each(checkpoint::new_run())[0]);
        self.a
            .write_checkpoint_about(&part_path(path, &run, PARTS[0]), about)?;
        self.b
            .write_checkpoint_about(&part_path(path, &run, PARTS[1]), about)?;
        let models = [(PARTS[0], A::Model::NAME), (PARTS[1], B::Model::NAME)];
        let written = match self.a.group().is_root() {
            true => {
                publish_set(path, (self.steps_done(), &run), &models, about).map_err(Error::from)
            }
            false => Ok(()),
        };
        if self.a.group().root_says(written.is_ok()) {
            written
        } else {
            Err(shape(format!(
                "the root process could not write the checkpoint {}",
                path.display()
            )))
        }
    }

    /// Continues both lattices from the checkpoint set `path` (collective): refuses a set
    /// whose parts are missing, damaged, of other models or of different steps before
    /// changing either lattice's populations.
    pub fn restore(&mut self, path: &Path) -> Result<(), Error> {
        let set = read_set(path)?;
        let [first, second] = PARTS.map(|name| set.part(path, name));
        let (first, second) = (first?, second?);
        let a = read_checkpoint::<A::Model, A::Real>(&first)?;
        let b = read_checkpoint::<B::Model, B::Real>(&second)?;
        for step in [a.header.step, b.header.step] {
            if step != set.step {
                return Err(CheckpointError::Corrupt {
                    path: path.to_path_buf(),
                    reason: format!("a part is at step {step}, the set at step {}", set.step),
                }
                .into());
            }
        }
        self.a.restore(&a, &first)?;
        self.b.restore(&b, &second)?;
        self.stale = true;
        Ok(())
    }

    /// Unlinks the lattices.
    pub fn into_parts(self) -> (A, B) {
        (self.a, self.b)
    }
}

/// The link of field `field` of `R` (the reader) to moment `moment` of `S` (the source), or why
/// there can be none.
fn link<R: Model, S: Model>(taken: &[Link], field: &str, moment: &str) -> Result<Link, Error> {
    let Some(&field) = R::FIELDS.iter().find(|f| **f == field) else {
        return Err(shape(format!(
            "model {} has no field `{field}` to couple (its fields: {}); declare the parameter \
             as `{field}: field`",
            R::NAME,
            if R::FIELDS.is_empty() {
                "none".to_string()
            } else {
                R::FIELDS.join(", ")
            }
        )));
    };
    let Some(m) = S::MOMENT_NAMES.iter().position(|n| *n == moment) else {
        return Err(shape(format!(
            "model {} has no moment `{moment}` (its moments: {})",
            S::NAME,
            S::MOMENT_NAMES.join(", ")
        )));
    };
    if taken.iter().any(|l| l.field == field) {
        return Err(shape(format!(
            "field `{field}` of model {} is coupled twice",
            R::NAME
        )));
    }
    Ok(Link { field, moment: m })
}

fn shape(msg: String) -> Error {
    LbmError::Shape(msg).into()
}
