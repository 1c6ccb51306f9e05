/// mimalloc instead of the system allocator: parsing and building the model of a
/// large dump allocates millions of small nodes from every rayon thread, where
/// glibc's malloc (arena locks, consolidation) cost about a quarter of the time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The CLI and the language server are sibling front ends: the command line
/// decides which one runs.
fn main() -> std::process::ExitCode {
    tree_sitter_allocations::use_mimalloc();
    purge::purge_freed_memory_at_once();
    hlo_lsp::ide::reaper::set_give_back(purge::collect_this_thread);
    let cli = hlo_lsp::cli::Cli::from_args();
    if cli.wants_server() {
        hlo_lsp::lsp::run_stdio()
    } else {
        stop_on_closed_pipe();
        hlo_lsp::cli::run(cli)
    }
}

/// A command piped into `head` stops when `head` has read enough, as Unix tools do:
/// Rust ignores SIGPIPE, so the next `print!` to the closed pipe would panic. Not for
/// the server, which sees its closed output and ends cleanly.
#[cfg(unix)]
fn stop_on_closed_pipe() {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: called before any other thread starts; restores the default action.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

#[cfg(not(unix))]
fn stop_on_closed_pipe() {}

/// Tree-sitter allocates its parse stacks and subtrees in C, through libc's malloc
/// unless told otherwise: about 4% of `check`'s time on a large dump was glibc's
/// malloc and free under tree-sitter, beside the rest of the process on mimalloc.
mod tree_sitter_allocations {
    use std::ffi::c_void;

    use libmimalloc_sys::{mi_free, mi_malloc, mi_realloc, mi_zalloc};

    /// Installs mimalloc's functions as tree-sitter's allocator.
    pub fn use_mimalloc() {
        let allocator = tree_sitter::Allocator {
            malloc,
            calloc,
            realloc,
            free,
        };
        // SAFETY: called first thing in `main`, before any tree-sitter object exists
        // and before other threads start; the four functions are one allocator
        // family, which gives malloc's alignment; none returns null for a non-empty
        // allocation (they abort, as tree-sitter's default allocator does).
        unsafe { tree_sitter::set_allocator(Some(allocator)) }
    }

    /// `p`, from an allocation of `size` bytes; out of memory aborts.
    fn non_null(p: *mut c_void, size: usize) -> *mut c_void {
        if p.is_null() && size != 0 {
            eprintln!("hlo-lsp: out of memory in the parser");
            std::process::abort();
        }
        p
    }

    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        // SAFETY: mimalloc's malloc has no precondition.
        non_null(unsafe { mi_malloc(size) }, size)
    }

    unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
        let Some(total) = count.checked_mul(size) else {
            return non_null(std::ptr::null_mut(), usize::MAX);
        };
        // SAFETY: mimalloc's zalloc has no precondition.
        non_null(unsafe { mi_zalloc(total) }, total)
    }

    unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: tree-sitter passes null or a pointer from these functions.
        non_null(unsafe { mi_realloc(p, size) }, size)
    }

    unsafe extern "C" fn free(p: *mut c_void) {
        // SAFETY: tree-sitter passes null or a pointer from these functions.
        unsafe { mi_free(p) }
    }
}

/// When mimalloc gives freed memory back to the system.
mod purge {
    /// mimalloc's `mi_option_purge_delay` (its place in `mi_option_e` of mimalloc v3's
    /// `mimalloc.h`, which `libmimalloc-sys` builds; the crate names only some options).
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

    /// Returns freed pages to the system when they are freed, not a second later:
    /// mimalloc purges late pages only when the thread that freed them allocates again, and the
    /// threads that build a large dump's model go idle after it, holding what the
    /// build freed (30 MB of the server's 360 MB on a 60 MB dump). `check` on that dump
    /// takes the same time either way. It costs the first hover of a large dump about
    /// 50 ms and an edit of a 600 MB dump about 10% (pages given back are faulted in
    /// again); mimalloc's default second peaked at 383 MB against 294 MB on the 60 MB
    /// dump, and 10 ms at 300 MB with the same first hover (docs/performance.md).
    pub fn purge_freed_memory_at_once() {
        // mimalloc's own setting, when the user gives one, is left as it is.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: sets a plain integer option, before other threads start.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
    }

    /// Returns what other threads freed in this thread's pages (`hlo_lsp::ide::reaper`,
    /// which the server's threads call at the end of each job). mimalloc v3 looks at a
    /// thread's full pages again only in a forced collection (a normal one skips them,
    /// and the one every 10,000 slow-path allocations is normal); a page whose blocks
    /// another thread freed then stays resident until its thread ends. Forced, it frees
    /// the pages that became empty, and the purge delay of 0 gives them back at once.
    pub fn collect_this_thread() {
        // SAFETY: collects the calling thread's own heap; no pointer is passed.
        unsafe { libmimalloc_sys::mi_collect(true) }
    }

    #[cfg(test)]
    mod tests {
        /// Resident memory of this process, in bytes (Linux).
        #[cfg(target_os = "linux")]
        fn resident() -> usize {
            let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
            let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
            pages * 4096
        }

        /// What the server's hover threads meet: a thread fills pages, another frees
        /// the blocks (the reaper dropping a version), and the first one gives back.
        #[cfg(target_os = "linux")]
        #[test]
        fn collecting_returns_what_another_thread_freed() {
            const MIB: usize = 1 << 20;
            // (The purge delay is left at mimalloc's default, which the test below reads:
            // a forced collection purges what it frees at once.)
            let (boxes, freed) = std::sync::mpsc::channel::<Vec<Box<[u8; 200]>>>();
            let (go, gone) = std::sync::mpsc::channel::<()>();
            let owner = std::thread::spawn(move || {
                // 96 MiB in small blocks, touched, handed to another thread.
                let blocks: Vec<_> = (0..96 * MIB / 200).map(|_| Box::new([1u8; 200])).collect();
                boxes.send(blocks).unwrap();
                gone.recv().unwrap();
                let before = resident();
                super::collect_this_thread();
                (before, resident())
            });
            let blocks = freed.recv().unwrap();
            drop(blocks);
            go.send(()).unwrap();
            let (before, after) = owner.join().unwrap();
            assert!(
                before >= after + 48 * MIB,
                "resident {} MiB before the collection, {} MiB after",
                before / MIB,
                after / MIB
            );
        }

        /// The option's place is checked by its default (1000 ms): a mimalloc whose
        /// options moved would fail here instead of setting another option.
        #[test]
        fn the_purge_delay_option_is_the_one_set() {
            // SAFETY: reads an integer option.
            assert_eq!(
                unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) },
                1000
            );
        }
    }
}
