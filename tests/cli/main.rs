//! The command line: its commands, where it finds the configuration, manuals and completions,
//! `init`, `check --fix`, `--shard` and `merge`, `--clean-room`. One test binary: each file
//! below is a module.

#[path = "../common/mod.rs"]
mod common;

mod check_fix;
mod clean_room;
mod cli_commands;
mod cli_config_root;
mod cli_manuals;
mod hook;
mod init_agent;
mod init_detect;
mod new_findings;
mod own_presets;
mod preset_test_command;
mod shard;
mod warm;
