//! The `cache:` section: the shared store's URL (checked here, so a URL qgates cannot use is a
//! configuration error at its place), read-only mode and the time one run may spend with it.

use std::time::Duration;

use super::error::Problems;
use super::model::RawCache;
use super::spec::CacheSettings;
use crate::core::cache::remote::StoreUrl;

/// The longest `timeout_ms`: a shared cache that needs more than ten minutes costs more than it
/// saves.
const MAX_TIMEOUT_MS: u64 = 600_000;

pub(super) fn compile_cache(raw: Option<&RawCache>, p: &mut Problems) -> CacheSettings {
    let mut settings = CacheSettings::default();
    let Some(raw) = raw else {
        return settings;
    };
    if let Some(url) = &raw.remote {
        match StoreUrl::parse(&url.value) {
            Ok(parsed) => settings.remote = Some(parsed),
            Err(e) => p.at(url.referenced, format!("cache.remote: {e}")),
        }
    }
    settings.read_only = raw.read_only.unwrap_or(false);
    if let Some(t) = &raw.timeout_ms {
        if (1..=MAX_TIMEOUT_MS).contains(&t.value) {
            settings.timeout = Duration::from_millis(t.value);
        } else {
            p.at(
                t.referenced,
                format!("cache.timeout_ms must be between 1 and {MAX_TIMEOUT_MS} milliseconds, e.g. 2000 (the default)."),
            );
        }
    }
    settings
}
