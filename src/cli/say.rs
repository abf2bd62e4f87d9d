//! What the program prints on its standard output, which may be a pipe that closes
//! (`lbm run … | head -1`) or a full disk (`> /dev/full`): written without panicking, as
//! `println!` does on a failed write. The first failure is kept and reported when the
//! program ends ([`failure`]); nothing more is printed after it. A closed pipe ends a command
//! quietly: a run, which catches SIGPIPE as it catches SIGTERM, stops after the step under
//! way with its outputs and checkpoint; any other command ends at once with status 141, as a
//! program killed by SIGPIPE does.

use std::io::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The first failed write to standard output.
static FAILED: OnceLock<io::Error> = OnceLock::new();

/// The first line printed with a number that is not finite in it (`NaN`, `inf`, `-inf`).
static NOT_FINITE: OnceLock<String> = OnceLock::new();

/// Whether a run catches SIGPIPE (it then stops cleanly on a closed pipe).
static RUN_STOPS_ON_PIPE: AtomicBool = AtomicBool::new(false);

/// Prints a line on standard output, like `println!` without its panic.
macro_rules! say {
    ($($t:tt)*) => {
        $crate::cli::say::line(format_args!($($t)*))
    };
}

/// Writes `args` and a newline to standard output, unless a write has failed before; notes
/// a number in it that is not finite ([`not_finite`]).
pub fn line(args: std::fmt::Arguments) {
    let text = args.to_string();
    if names_a_non_finite(&text) {
        let _ = NOT_FINITE.set(text.clone());
    }
    if FAILED.get().is_some() {
        return;
    }
    let mut out = io::stdout().lock();
    let written = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Err(e) = written {
        let pipe = e.kind() == io::ErrorKind::BrokenPipe;
        let _ = FAILED.set(e);
        if pipe && !RUN_STOPS_ON_PIPE.load(Ordering::SeqCst) {
            std::process::exit(i32::from(PIPE_STATUS));
        }
    }
}

/// Writes `message` on standard error, ignoring a failure (there is nowhere left to say it).
pub fn note(message: &str) {
    let _ = io::stderr().write_all(message.as_bytes());
}

/// The exit status of a program ended by a closed pipe: 128 + SIGPIPE.
pub const PIPE_STATUS: u8 = 141;

/// Says that a run now catches SIGPIPE, and stops cleanly on a closed pipe.
pub fn run_stops_on_pipe() {
    RUN_STOPS_ON_PIPE.store(true, Ordering::SeqCst);
}

/// Whether `text` holds a number that is not finite, as Rust writes one (`NaN`, `inf`, `-inf`,
/// whatever the format): a word of its own, not part of one ("info", "inflow").
fn names_a_non_finite(text: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_'))
        .any(|w| w == "NaN" || w == "inf")
}

/// The first line printed with a number that is not finite in it (a NaN or an infinity that a
/// result came to), if any: a run that prints one fails rather than report it as a result.
pub fn not_finite() -> Option<&'static str> {
    NOT_FINITE.get().map(String::as_str)
}

/// The first failed write to standard output, if any: `Some(None)` for a closed pipe (which
/// ends the program quietly), `Some(Some(error))` for any other failure.
pub fn failure() -> Option<Option<&'static io::Error>> {
    FAILED
        .get()
        .map(|e| (e.kind() != io::ErrorKind::BrokenPipe).then_some(e))
}

#[cfg(test)]
mod tests {
    use super::names_a_non_finite;

    #[test]
    fn non_finite_numbers_are_told_from_words() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for text in [
                format!("error {v}"),
                format!("{v:.3e} (theory 1e-3)"),
                format!("({v:+.2}%)"),
                format!("u = [{v}, 0]"),
            ] {
                assert!(names_a_non_finite(&text), "{text}");
            }
        }
        for text in [
            "inflow at x = 0",
            "info: 1.5e-3",
            "infinite",
            "NaNs: none",
            "1e308",
        ] {
            assert!(!names_a_non_finite(text), "{text}");
        }
    }
}
