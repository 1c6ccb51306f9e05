fn main() -> std::process::ExitCode {
    hlo_lsp::cli::run()
}
