fn main() {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == qgates::core::runner::reaper::ARG)
    {
        std::process::exit(qgates::core::runner::reaper::serve());
    }
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == qgates::core::warm::KEEPER_ARG)
    {
        let args: Vec<String> = std::env::args().skip(2).collect();
        std::process::exit(qgates::core::warm::keeper::serve(&args));
    }
    // A write past the file-size limit (`ulimit -f`) then fails with EFBIG, which qgates
    // reports, instead of killing it silently. The tools inherit the setting: they see the same
    // error on their own writes, and a log cut that way is a gate error (`runner::log_cut`).
    // Before any thread starts.
    qgates::core::platform::ignore_file_size_signal();
    std::process::exit(qgates::cli::main());
}
