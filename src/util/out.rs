//! Lines on stdout and stderr that never panic. `println!` panics when its stream cannot be
//! written (a launchd log on a full disk, a closed pipe), which turned a finished run whose report
//! was already on disk into exit 101; these drop the line instead.

/// `println!` that ignores a stdout it cannot write.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that ignores a stderr it cannot write.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}
