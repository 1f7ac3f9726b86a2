//! Logs go to stderr (stdout is the protocol). The level comes from `QGATES_LOG`, and the client
//! can change it with `initializationOptions.logLevel`.

use std::sync::OnceLock;

use tracing_subscriber::{
    EnvFilter, Registry, layer::SubscriberExt, reload, util::SubscriberInitExt,
};

static HANDLE: OnceLock<reload::Handle<EnvFilter, Registry>> = OnceLock::new();

pub fn init() {
    let filter = EnvFilter::try_from_env("QGATES_LOG")
        .unwrap_or_else(|_| EnvFilter::new(crate::core::api::DEFAULT_LOG_FILTER));
    let (filter, handle) = reload::Layer::new(filter);
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false);
    if tracing_subscriber::registry()
        .with(filter)
        .with(fmt)
        .try_init()
        .is_ok()
    {
        let _ = HANDLE.set(handle);
    }
}

/// Applies a level asked for by the client; a bad one is reported and ignored.
pub fn set_level(level: &str) -> Result<(), String> {
    let filter = EnvFilter::try_new(level)
        .map_err(|e| format!("logLevel `{level}` is not a level or filter: {e}"))?;
    match HANDLE.get() {
        Some(h) => h.reload(filter).map_err(|e| e.to_string()),
        None => Ok(()),
    }
}
