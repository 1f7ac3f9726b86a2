//! `quality.yaml`: the file model, discovery, validation and the compiled configuration.

mod choices;
mod compile;
mod error;
mod explain;
mod gate_checks;
mod json_paths;
pub mod limits;
mod load;
pub mod local_presets;
pub mod model;
mod parsing;
pub mod presets;
pub mod report_dir;
pub mod schema;
pub mod spec;
mod suggest;
mod tree;
mod warm;
mod yaml_syntax;

pub use error::{ConfigError, ConfigProblem};
pub use json_paths::{parse_condition, parse_field_path, parse_pointer};
pub use limits::{
    MAX_CONFIG_BYTES, MAX_GATES, MAX_GLOBS_PER_LIST, MAX_PATTERN_CHARS, MAX_REGEX_BYTES,
    MAX_REGEX_DFA_BYTES, MAX_REPORTED_PROBLEMS,
};
pub use load::{
    CONFIG_CANDIDATES, DEFAULT_CONFIG, discover, embedded_label, load_file, load_for_workspace,
    parse_config,
};
pub use parsing::VIOLATION_FIELDS;
pub use spec::*;
pub use suggest::closest;
