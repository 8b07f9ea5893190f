//! A damaged file must not take the run down: every redb call runs under [`guarded`] (a
//! panic becomes an error, kept off stderr), and damage becomes one [`corrupted`] error
//! that names the file and says how to move it aside.

use crate::llm::error::LlmError;
use std::path::Path;

thread_local! {
    /// Set while this thread runs a guarded redb call: its panic is reported, not printed.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PANIC_MESSAGE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Run a redb call; a panic inside it comes back as `Err(message)` instead of unwinding
/// through the caller (and is not printed). Other threads' panics print as before.
pub(super) fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(|g| g.get()) {
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".to_string());
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(format!("{message}{at}")));
            } else {
                previous(info);
            }
        }));
    });
    GUARDED.with(|g| g.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    result.map_err(|_| {
        let message = PANIC_MESSAGE
            .with(|m| m.borrow_mut().take())
            .unwrap_or_else(|| "panic".to_string());
        // Assertion messages span lines; errors are one line.
        message.split_whitespace().collect::<Vec<_>>().join(" ")
    })
}

/// The one-line error for a damaged cache file, with the way out.
pub(super) fn corrupted(path: &Path, detail: &str) -> LlmError {
    let shown = path.display();
    LlmError::Cache {
        path: shown.to_string(),
        message: format!(
            "the file is damaged ({detail}); move it aside (`mv {shown} {shown}.damaged`) and rerun: finished work is kept, answers not yet in another cache are asked again"
        ),
    }
}

pub(super) fn is_corruption(e: &impl std::fmt::Display) -> bool {
    let text = e.to_string().to_lowercase();
    text.contains("corrupt") || text.contains("invalid data")
}
