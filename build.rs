//! Link options for the `quire` binary.
//!
//! On GNU/Linux the binary's relative relocations are packed (`DT_RELR`,
//! glibc 2.36 and binutils 2.38 or later): about 105,000 of them took a
//! 2.5 MB table that the dynamic loader read at every start, and that
//! stayed resident; packed, the table is a few kilobytes.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
