//! Compiles the generated parser and the external scanner into the crate.
fn main() {
    let src_dir = std::path::Path::new("src");

    let mut c_config = cc::Build::new();
    c_config.std("c11").include(src_dir);
    #[cfg(target_env = "msvc")]
    c_config.flag("-utf-8");
    // Generated code: its warnings are not ours to fix.
    c_config.warnings(false).opt_level(3);

    for file in ["parser.c", "scanner.c"] {
        let path = src_dir.join(file);
        c_config.file(&path);
        println!("cargo:rerun-if-changed={}", path.to_str().unwrap());
    }
    c_config.compile("tree-sitter-hlo");
}
