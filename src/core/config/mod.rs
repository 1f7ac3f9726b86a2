//! `quality.yaml`: the file model, discovery, validation and the compiled configuration.

mod compile;
mod error;
mod explain;
mod load;
pub mod model;
mod parsing;
pub mod schema;
pub mod spec;
mod suggest;
mod tree;

pub use error::{ConfigError, ConfigProblem};
pub use load::{
    CONFIG_CANDIDATES, DEFAULT_CONFIG, discover, load_file, load_for_workspace, parse_config,
};
pub use parsing::{VIOLATION_FIELDS, parse_condition, parse_field_path, parse_pointer};
pub use spec::*;
