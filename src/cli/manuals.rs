//! `qgates completions SHELL` and `qgates man`: generated from the same clap definitions as the
//! parser, so they never disagree with what the command accepts.

use clap::CommandFactory;

use super::args::{Cli, CompletionsArgs, ManArgs};
use super::output;
use crate::core::report::exit;

pub fn completions(a: CompletionsArgs) -> i32 {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "qgates", &mut script);
    output::print_stdout(&String::from_utf8_lossy(&script));
    exit::GREEN
}

pub fn man(a: ManArgs) -> i32 {
    let command = Cli::command();
    let Some(dir) = a.out_dir else {
        let mut page = Vec::new();
        return match clap_mangen::Man::new(command).render(&mut page) {
            Ok(()) => {
                output::print_stdout(&String::from_utf8_lossy(&page));
                exit::GREEN
            }
            Err(e) => output::fail(
                exit::GATE_ERROR,
                &format!("the manual page could not be made: {e}"),
            ),
        };
    };
    let written =
        std::fs::create_dir_all(&dir).and_then(|()| clap_mangen::generate_to(command, &dir));
    match written {
        Ok(()) => {
            output::print_stderr(&format!(
                "qgates: manual pages written to {}\n",
                dir.display()
            ));
            exit::GREEN
        }
        Err(e) => output::usage(&format!(
            "the manual pages could not be written to {}: {e}. Give --out-dir a folder you can write to.",
            dir.display()
        )),
    }
}
