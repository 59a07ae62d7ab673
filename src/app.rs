//! Dispatch a parsed command line to the module that owns the command.

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::exit::{CmdError, CmdResult, to_exit_code};

/// Runs a parsed command line and maps its result to the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    to_exit_code(dispatch(cli))
}

/// Runs a parsed command line; tests call this in-process.
pub fn dispatch(cli: Cli) -> CmdResult {
    match cli.command {
        Some(Command::Run(args)) => crate::rehearsal::command(args),
        None if !cli.run.scenarios.is_empty() => crate::rehearsal::command(cli.run),
        None => Err(CmdError::bad_input(anyhow::anyhow!(
            "nothing to do: give --scenario NAME or a subcommand (see `rehearse --help`)"
        ))),
        Some(Command::List(args)) => crate::scenario::list_command(args),
        Some(Command::Validate(args)) => crate::validate::command(args),
        Some(Command::Upstream(args)) => crate::upstream::command(args),
        Some(Command::Replay(args)) => crate::replay::replay_command(args),
        Some(Command::Record(args)) => crate::replay::record_command(args),
        Some(Command::Schedule(args)) => crate::schedule::command(args),
        Some(Command::Monitoring(args)) => crate::monitoring::command(args),
        Some(Command::Report(args)) => crate::report::command(args),
        Some(Command::History(args)) => crate::history::history_command(args),
        Some(Command::Compare(args)) => crate::history::compare_command(args),
        Some(Command::Matrix(args)) => crate::matrix::command(args),
        Some(Command::Init(args)) => crate::init::command(args),
        Some(Command::Gateway(args)) => crate::setup::command(args),
        Some(Command::Doctor(args)) => crate::setup::doctor::command(args),
        Some(Command::FleetHost(args)) => crate::rehearsal::fleet::host::command(&args.spec),
        Some(Command::Watchdog(args)) => {
            crate::util::watchdog::command(args.pid, args.group);
            Ok(crate::exit::Status::Pass)
        }
    }
}
