//! The `quire` binary: everything happens in [`quire::app::run`].

use std::process::ExitCode;

fn main() -> ExitCode {
    quire::app::run(std::env::args_os())
}
