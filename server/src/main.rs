/// mimalloc instead of the system allocator: parsing and building the model of a
/// large dump allocates millions of small nodes from every rayon thread, where
/// glibc's malloc (arena locks, consolidation) cost about a quarter of the time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    hlo_lsp::cli::run()
}
