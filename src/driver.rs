//! One loop for every run: a lattice, two coupled lattices or a finite-difference grid, in
//! one process or over many, on any backend.
//!
//! [`drive`] steps a [`Run`] in chunks of about a quarter of a second of wall time (so that a
//! progress bar moves and a signal is answered promptly), each ending at the latest at the next
//! step where something of the [`Schedule`] is due. After each chunk it
//! 1. checks the state for divergence where anything is to be written of it (nothing is
//!    written of a diverged state), and at the check interval;
//! 2. tests for a steady state at the check interval and at the last step;
//! 3. reads the [`Signals`]: SIGINT (Ctrl-C), SIGTERM (what batch schedulers such as Slurm and
//!    PBS send before SIGKILL), SIGHUP and SIGPIPE (the reader of a pipe the run prints into
//!    has gone, as in `lbm run … | head`) stop the run after the step under way;
//! 4. agrees with every process on the next chunk and on stopping, so that all stop after the
//!    same step;
//! 5. has the run write what is due ([`Run::record`]: diagnostics, images, VTK), and its
//!    checkpoint at the checkpoint interval and at the end, however the run ends.
//!
//! A second signal ends the process at once, as the first would without the loop (but for
//! SIGPIPE, which every later write to the closed pipe raises again).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::group::Group;

/// Wall time a chunk of steps aims at.
const CHUNK: Duration = Duration::from_millis(250);

/// When a run does what, in steps counted from step 0 (so that a resumed run writes where an
/// uninterrupted one does). An interval of 0 means never (outputs: at the end only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Schedule {
    /// The last step.
    pub steps: u64,
    /// Steps between outputs with files (images, VTK, tables).
    pub output_every: u64,
    /// Steps between rows of diagnostics without files.
    pub diagnostics_every: u64,
    /// Steps between checkpoints (0: none, not even at the end).
    pub checkpoint_every: u64,
    /// Steps between divergence checks and steady-state tests.
    pub check_every: u64,
}

impl Schedule {
    /// The first step after `now` where something is due.
    fn next_stop(&self, now: u64) -> u64 {
        [
            self.output_every,
            self.diagnostics_every,
            self.checkpoint_every,
            self.check_every,
        ]
        .into_iter()
        .map(|every| next_multiple(now, every))
        .fold(self.steps, u64::min)
    }
}

/// The smallest multiple of `every` above `now` (`u64::MAX` when `every` is 0).
pub fn next_multiple(now: u64, every: u64) -> u64 {
    now.checked_div(every)
        .map_or(u64::MAX, |k| (k + 1).saturating_mul(every))
}

/// Whether step `now` is a multiple of a non-zero interval `every`.
pub fn due(now: u64, every: u64) -> bool {
    every > 0 && now.is_multiple_of(every)
}

/// What is due after a chunk of steps, given to [`Run::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The step reached.
    pub step: u64,
    /// The run ends at this step: its last, a steady state, or a stop.
    pub end: bool,
    /// Outputs with files: at the output interval and at the end.
    pub output: bool,
    /// A row of diagnostics: at the diagnostics interval.
    pub diagnostics: bool,
}

/// What [`drive`] steps and what it asks to write. Every method but [`Run::pause_after`] is
/// collective: each process of the run calls it after the same step.
pub trait Run {
    /// The error of the run's steps and outputs.
    type Error;

    /// Node updates of one step (all processes together), for the rate shown.
    fn nodes(&self) -> usize;

    /// Steps done since step 0.
    fn steps_done(&self) -> u64;

    /// Advances `n` steps.
    fn advance(&mut self, n: u64) -> Result<(), Self::Error>;

    /// Refuses a state that has diverged.
    fn check(&mut self) -> Result<(), Self::Error>;

    /// The processes of the run, which agree on the next chunk's length and whether to stop
    /// ([`Group::agree_chunk`]: the shortest chunk, the largest of the requests,
    /// [`Ended::request`]: 0 to go on).
    fn group(&self) -> &dyn Group;

    /// Whether the state is steady (tested at the check interval and at the last step).
    fn steady(&mut self) -> Result<bool, Self::Error> {
        Ok(false)
    }

    /// A step after `now` where the run must pause though nothing of `schedule` is due there
    /// (the step before each row, for a two-step mean), if any.
    fn pause_after(&self, now: u64, schedule: &Schedule) -> Option<u64> {
        let _ = (now, schedule);
        None
    }

    /// Writes what is `due`; called after every chunk.
    fn record(&mut self, due: Due) -> Result<(), Self::Error>;

    /// Writes the checkpoint (whole or not at all).
    fn checkpoint(&mut self) -> Result<(), Self::Error>;
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// At the last step of its schedule.
    Finished,
    /// Steady, at a check.
    Steady,
    /// Stopped by a signal this process caught.
    Signal(Signal),
    /// Stopped because another process was: by the signal it caught, or by a steady state it
    /// found (`None`).
    ByAnother(Option<Signal>),
}

impl Ended {
    /// What a process that ends so asks of the others, as one number whose largest over the
    /// processes is what they agree on: 0 to go on, 1 to stop steady, 2 + n to stop for signal
    /// n (a signal outranks a steady state).
    pub fn request(reason: Option<Ended>) -> u64 {
        match reason {
            Some(Ended::Signal(s) | Ended::ByAnother(Some(s))) => 2 + s.number() as u64,
            Some(Ended::Steady | Ended::ByAnother(None)) => 1,
            Some(Ended::Finished) | None => 0,
        }
    }

    /// How this process ends when its own `reason` (if any) met the processes' agreed
    /// `request` (non-zero): its own signal stays its own; otherwise the agreed reason, as
    /// another's when this process did not find it.
    fn agreed(reason: Option<Ended>, request: u64) -> Ended {
        match reason {
            Some(Ended::Signal(s)) => Ended::Signal(s),
            Some(r) if Ended::request(Some(r)) == request => r,
            _ => Ended::ByAnother(
                Signal::ALL
                    .iter()
                    .find(|(_, n)| 2 + *n as u64 == request)
                    .map(|(s, _)| *s),
            ),
        }
    }

    /// The signal that stopped this process, its own or another's.
    pub fn signal(self) -> Option<Signal> {
        match self {
            Ended::Signal(s) | Ended::ByAnother(Some(s)) => Some(s),
            _ => None,
        }
    }
}

/// The end of a run and its times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// How it ended.
    pub ended: Ended,
    /// The step it ended at.
    pub step: u64,
    /// Time spent stepping.
    pub stepping: Duration,
    /// Time spent in [`Run::record`] and [`Run::checkpoint`].
    pub writing: Duration,
}

impl Outcome {
    /// What stopped the run before its last step, in words ("SIGTERM at step 1200"), if
    /// anything did.
    pub fn reason(&self) -> Option<String> {
        let step = self.step;
        match self.ended {
            Ended::Finished => None,
            Ended::Steady => Some(format!("steady at step {step}")),
            Ended::Signal(s) => Some(format!("stopped by {} at step {step}", s.name())),
            Ended::ByAnother(None) => Some(format!("stopped at step {step} by another rank")),
            Ended::ByAnother(Some(s)) => Some(format!(
                "stopped at step {step}: another rank caught {}",
                s.name()
            )),
        }
    }
}

/// Runs `run` to the end of `schedule`, or until it is steady or stopped (collective). With
/// `bar` a progress bar is drawn on stderr when it is a terminal.
pub fn drive<R: Run + ?Sized>(
    run: &mut R,
    schedule: &Schedule,
    signals: &Signals,
    bar: bool,
) -> Result<Outcome, R::Error> {
    let s = schedule;
    let bar = progress(bar, s.steps, run.steps_done());
    let (mut stepping, mut writing) = (Duration::ZERO, Duration::ZERO);
    let mut chunk = 1;
    let mut ended = Ended::Finished;
    while run.steps_done() < s.steps {
        let now = run.steps_done();
        let next = s
            .next_stop(now)
            .min(run.pause_after(now, s).unwrap_or(u64::MAX));
        let n = chunk.min(next - now);
        let t = Instant::now();
        run.advance(n)?;
        let dt = t.elapsed();
        stepping += dt;
        chunk = ((n as f64 * CHUNK.as_secs_f64() / dt.as_secs_f64().max(1e-6)) as u64).max(1);
        let now = run.steps_done();
        bar.set_position(now);
        bar.set_message(format!(
            "{:.0} steps/s, {:.1} M node updates/s",
            n as f64 / dt.as_secs_f64(),
            run.nodes() as f64 * n as f64 / dt.as_secs_f64() / 1e6
        ));
        let last = now >= s.steps;
        let writes = due(now, s.output_every)
            || due(now, s.diagnostics_every)
            || due(now, s.checkpoint_every);
        let test = due(now, s.check_every) || last;
        if test || writes {
            run.check()?;
        }
        let mut reason = None;
        if test && run.steady()? {
            reason = Some(Ended::Steady);
        }
        if let Some(signal) = signals.received() {
            reason = Some(Ended::Signal(signal));
        }
        let (agreed, request) = run.group().agree_chunk(chunk, Ended::request(reason));
        chunk = agreed;
        let stop = request > 0;
        if stop {
            ended = Ended::agreed(reason, request);
        }
        let end = last || stop;
        if end && !(test || writes) {
            run.check()?;
        }
        let t = Instant::now();
        let due_now = Due {
            step: now,
            end,
            output: end || due(now, s.output_every),
            diagnostics: due(now, s.diagnostics_every),
        };
        bar.suspend(|| run.record(due_now))?;
        if s.checkpoint_every > 0 && (end || due(now, s.checkpoint_every)) {
            bar.suspend(|| run.checkpoint())?;
        }
        writing += t.elapsed();
        if stop {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(Outcome {
        ended,
        step: run.steps_done(),
        stepping,
        writing,
    })
}

/// The progress bar (hidden when stderr is not a terminal, and without `shown`).
fn progress(shown: bool, steps: u64, start: u64) -> ProgressBar {
    let bar = if shown {
        ProgressBar::new(steps)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:36}] {pos}/{len} steps, eta {eta}, {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_position(start);
    bar
}

/// A signal that stops a run cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM: `kill`, and batch schedulers before SIGKILL.
    Terminate,
    /// SIGHUP: the terminal closed.
    Hangup,
    /// SIGPIPE: a write to a pipe whose reader has gone.
    Pipe,
}

impl Signal {
    /// Every signal caught, with its number.
    const ALL: [(Signal, i32); 4] = [
        (Signal::Interrupt, signal_hook::consts::SIGINT),
        (Signal::Terminate, signal_hook::consts::SIGTERM),
        (Signal::Hangup, signal_hook::consts::SIGHUP),
        (Signal::Pipe, signal_hook::consts::SIGPIPE),
    ];

    /// Its name, as `kill -l` writes it.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::Hangup => "SIGHUP",
            Signal::Pipe => "SIGPIPE",
        }
    }

    /// Its number.
    pub fn number(self) -> i32 {
        Self::ALL
            .iter()
            .find(|(s, _)| *s == self)
            .map_or(0, |a| a.1)
    }

    /// The exit status of a process it stopped, by the shells' convention: 128 + its number
    /// (130 for SIGINT, 143 for SIGTERM).
    pub fn exit_status(self) -> u8 {
        (128 + self.number()) as u8
    }
}

/// The signals a run catches (SIGINT, SIGTERM, SIGHUP, SIGPIPE): each, once, asks the loop to
/// stop after the step under way; the same signal again ends the process at once (but for
/// SIGPIPE, raised by every write to the closed pipe).
#[derive(Debug, Clone, Default)]
pub struct Signals {
    /// The number of the first signal caught (0: none yet).
    caught: Arc<AtomicUsize>,
    /// Whether one was caught, for the second signal's immediate exit.
    any: Arc<AtomicBool>,
}

impl Signals {
    /// Catches the signals from now on, for the rest of the process.
    pub fn catch() -> std::io::Result<Self> {
        let s = Self::default();
        for (signal, number) in Signal::ALL {
            if signal != Signal::Pipe {
                // Registered before the flag, so that the first signal only sets the flag.
                signal_hook::flag::register_conditional_shutdown(
                    number,
                    i32::from(signal.exit_status()),
                    s.any.clone(),
                )?;
                signal_hook::flag::register(number, s.any.clone())?;
            }
            signal_hook::flag::register_usize(number, s.caught.clone(), number as usize)?;
        }
        Ok(s)
    }

    /// Signals that are never raised: a run that cannot be stopped but by killing it.
    pub fn none() -> Self {
        Self::default()
    }

    /// The signal caught, if any.
    pub fn received(&self) -> Option<Signal> {
        let n = self.caught.load(Ordering::SeqCst);
        Signal::ALL
            .into_iter()
            .find(|&(_, number)| number as usize == n && n != 0)
            .map(|(s, _)| s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::OneProcess;

    /// A counter that diverges at a given step and stops itself when told.
    struct Counter {
        step: u64,
        calls: Vec<(char, u64)>,
        steady_at: Option<u64>,
    }

    impl Run for Counter {
        type Error = String;
        fn nodes(&self) -> usize {
            1
        }
        fn steps_done(&self) -> u64 {
            self.step
        }
        fn advance(&mut self, n: u64) -> Result<(), String> {
            self.step += n;
            Ok(())
        }
        fn check(&mut self) -> Result<(), String> {
            self.calls.push(('c', self.step));
            Ok(())
        }
        fn group(&self) -> &dyn Group {
            &OneProcess
        }
        fn steady(&mut self) -> Result<bool, String> {
            Ok(self.steady_at.is_some_and(|s| self.step >= s))
        }
        fn record(&mut self, due: Due) -> Result<(), String> {
            if due.output {
                self.calls.push(('o', due.step));
            }
            if due.diagnostics {
                self.calls.push(('d', due.step));
            }
            Ok(())
        }
        fn checkpoint(&mut self) -> Result<(), String> {
            self.calls.push(('k', self.step));
            Ok(())
        }
    }

    fn run(schedule: Schedule, start: u64, steady_at: Option<u64>) -> (Counter, Outcome) {
        let mut c = Counter {
            step: start,
            calls: Vec::new(),
            steady_at,
        };
        let o = drive(&mut c, &schedule, &Signals::none(), false).unwrap();
        (c, o)
    }

    #[test]
    fn every_output_falls_on_its_interval_and_a_resumed_run_on_the_same_steps() {
        let s = Schedule {
            steps: 100,
            output_every: 30,
            diagnostics_every: 20,
            checkpoint_every: 25,
            check_every: 40,
        };
        let (c, o) = run(s, 0, None);
        assert_eq!(o.ended, Ended::Finished);
        assert_eq!(o.step, 100);
        let of =
            |k: char| -> Vec<u64> { c.calls.iter().filter(|a| a.0 == k).map(|a| a.1).collect() };
        assert_eq!(of('o'), [30, 60, 90, 100]);
        assert_eq!(of('d'), [20, 40, 60, 80, 100]);
        assert_eq!(of('k'), [25, 50, 75, 100]);
        // Checked before every write and at the check interval, once a step.
        assert_eq!(of('c'), [20, 25, 30, 40, 50, 60, 75, 80, 90, 100]);
        let (r, _) = run(s, 50, None);
        let later: Vec<_> = c.calls.iter().filter(|a| a.1 > 50).collect();
        assert_eq!(r.calls.iter().collect::<Vec<_>>(), later);
        // Nothing to do: no step, no output.
        let (done, o) = run(s, 100, None);
        assert!(done.calls.is_empty());
        assert_eq!(o.reason(), None);
    }

    #[test]
    fn a_steady_state_ends_the_run_with_its_outputs_and_checkpoint() {
        let s = Schedule {
            steps: 1000,
            output_every: 0,
            diagnostics_every: 0,
            checkpoint_every: 300,
            check_every: 50,
        };
        let (c, o) = run(s, 0, Some(120));
        assert_eq!(o.ended, Ended::Steady);
        assert_eq!(o.step, 150);
        assert_eq!(o.reason().as_deref(), Some("steady at step 150"));
        assert_eq!(c.calls.last(), Some(&('k', 150)));
        assert!(c.calls.contains(&('o', 150)));
    }

    #[test]
    fn signals_are_named_with_their_exit_status() {
        assert_eq!(Signal::Interrupt.exit_status(), 130);
        assert_eq!(Signal::Terminate.exit_status(), 143);
        assert_eq!(Signal::Hangup.exit_status(), 129);
        assert_eq!(Signals::none().received(), None);
        let o = Outcome {
            ended: Ended::Signal(Signal::Terminate),
            step: 7,
            stepping: Duration::ZERO,
            writing: Duration::ZERO,
        };
        assert_eq!(o.reason().as_deref(), Some("stopped by SIGTERM at step 7"));
    }

    /// Processes agree on why they stop: another's signal outranks a steady state found here,
    /// and a process stopped by another's signal ends as stopped by it (the same exit status
    /// on every rank), while a process keeps its own signal.
    #[test]
    fn every_process_ends_with_the_signal_that_stopped_any() {
        let term = Ended::request(Some(Ended::Signal(Signal::Terminate)));
        let steady = Ended::request(Some(Ended::Steady));
        assert!(term > steady && steady > Ended::request(None));
        let by_term = Ended::ByAnother(Some(Signal::Terminate));
        assert_eq!(Ended::agreed(None, term), by_term);
        assert_eq!(Ended::agreed(Some(Ended::Steady), term), by_term);
        assert_eq!(by_term.signal(), Some(Signal::Terminate));
        assert_eq!(Ended::agreed(None, steady), Ended::ByAnother(None));
        assert_eq!(Ended::agreed(Some(Ended::Steady), steady), Ended::Steady);
        let int = Some(Ended::Signal(Signal::Interrupt));
        assert_eq!(Ended::agreed(int, term), Ended::Signal(Signal::Interrupt));
        let o = Outcome {
            ended: by_term,
            step: 9,
            stepping: Duration::ZERO,
            writing: Duration::ZERO,
        };
        assert_eq!(
            o.reason().as_deref(),
            Some("stopped at step 9: another rank caught SIGTERM")
        );
    }
}
