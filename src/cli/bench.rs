//! `leaselab bench`.
use crate::exit::CommandResult;
use clap::Args as ClapArgs;
/// Args.
#[derive(Debug, ClapArgs)]
pub struct Args {}
/// Runs it.
pub fn execute(_args: Args) -> CommandResult {
    todo!()
}
