fn main() {
    std::process::exit(qgates::cli::main());
}
