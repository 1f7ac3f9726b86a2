fn main() {
    // A write past the file-size limit (`ulimit -f`) then fails with EFBIG, which qgates
    // reports, instead of killing it silently; tools get the default back when they start.
    // SAFETY: sets a signal's disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    std::process::exit(qgates::cli::main());
}
