//! Thin binary: parse the command line, hand it to the library, map the result to an exit code.
use clap::Parser;

fn main() -> std::process::ExitCode {
    rehearse::app::run(rehearse::cli::Cli::parse())
}
