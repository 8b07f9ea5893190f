//! The `tracer` binary: parse the command line, call the library, map errors to exit codes
//! (0 ok, 1 a failed run or check, 2 a usage error — clap's own).

fn main() -> std::process::ExitCode {
    // The sentence encoder spreads texts over the cores itself (`emotion::encoder`); candle
    // would also split every small matrix product over a thread pool of its own, and the two
    // levels fight: 68 ms of wall time per feeling on 2 cores, 44 ms with one (same vectors,
    // byte for byte: the products' blocks are split, not their sums). Set before any thread
    // exists; a user's own setting wins.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        // SAFETY: the process has one thread here; nothing reads the environment meanwhile.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", "1") };
    }
    match tracer::cli::main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            let e = anyhow::Error::from(e);
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}
