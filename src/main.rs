//! The `tracer` binary: parse the command line, call the library, map errors to exit codes
//! (0 ok, 1 a failed run or check, 2 a usage error — clap's own).

fn main() -> std::process::ExitCode {
    match tracer::cli::main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            let e = anyhow::Error::from(e);
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}
