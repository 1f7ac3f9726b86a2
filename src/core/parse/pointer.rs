//! JSON navigation helpers (placeholder).
